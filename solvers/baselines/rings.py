"""Ring baselines: the unidirectional ring, the bidirectional ring on switched fabrics, and ShiftedRing.

All three are allgathers around directed Hamiltonian cycles c_0 -> c_1 -> ... -> c_{N-1} -> c_0 of logical edges
(``fabric``): in round s = 1..N-1 node c_i forwards the shard of c_{i-s+1} (its part of the shard that cycle
carries) to c_{i+1} (direct-connect paper App. F.1; GenModel's Ring). Reduce-scatter is the reverse of the
allgather on the transpose and allreduce is reduce-scatter then allgather (``solvers.core.transform``), 2(N-1)
rounds.

* ``ring_uni``: one cycle, one direction, the whole shard: a load of 1 shard per cycle edge per round.
* ``ring_bi``: the cycle and its reverse, half a shard each (1/2 per edge per round). On a switch-free topology
  this *is* ``solvers.baselines.hamiltonian.ring_allgather`` (which falls back to one direction where the reverse cycle does not
  exist); this module only adds it on switched fabrics.
* ``shifted_ring``: ShiftedRing (direct-connect paper section 8.2, TopoOpt): two edge-disjoint Hamiltonian
  cycles, each run as a bidirectional ring on half the data: four directed cycles with a quarter of every shard
  each (1/4 per edge per round). Found as a Hamiltonian cycle over the pairs linked both ways, then a second one
  among the pairs the first does not use.

Closed forms (``closed_form``). With B the smallest egress bandwidth of a compute node and x the share of a
shard one directed cycle carries (x = 1 ring_uni, 1/2 ring_bi, 1/4 shifted_ring):

* direct-connect, every ring edge one link of bandwidth b (k parallel links count as one of k*b):
  allgather and reduce-scatter take N-1 steps with tb = (N-1)/N * x * B/b; allreduce 2(N-1) steps with
  tb = 2(N-1)/N * x * B/b. So the ring AR on ring(N) (B = b = 1, x = 1): 2(N-1) steps, tb 2(N-1)/N; ring_bi on
  biring(N) (B = 2, x = 1/2) and ShiftedRing on C(N,{1,p}) (B = 4, x = 1/4): 2(N-1) steps and 2(N-1)/N, the
  BW-optimal numbers of digest 10.2.
* through one switch (links of bandwidth b up and down): each round is 2 IR steps (up to the switch, then
  down), and every variant puts one whole shard per IR step on a node's uplink and downlink (its 1/x cycles
  all leave through it), so allgather and reduce-scatter take 2(N-1) steps with tb = 2(N-1)/N * B/b, allreduce
  4(N-1) steps with tb 4(N-1)/N * B/b (star(N): B = b).

``fabric.evaluate`` gives these exactly on any topology from the per-edge loads (x per cycle edge per round),
reduce-scatter costed on the transpose's cycles with the B of the topology itself.
"""
from __future__ import annotations

from fractions import Fraction

from topologies.model import Topology

from ..core.cost import node_bandwidth
from ..core.errors import NotApplicable
from .hamiltonian import hamiltonian_cycle, ring_allgather
from ..core.schedule import ONE, ZERO, Collective, Schedule, split_interval
from ..core.transform import build_collective
from .fabric import Fabric, Send, add_load, evaluate, need_two, realize, sum_costs


def _cycle(fabric: Fabric, algo: str, both_ways: bool = False) -> list[int]:
    """A directed Hamiltonian cycle of logical edges, as compute node indices (``solvers.baselines.hamiltonian``'s search)."""
    need_two(fabric, algo)
    logical = fabric.logical_topology(both_ways)
    try:
        order = hamiltonian_cycle(logical)
    except NotApplicable as exc:
        over = "logical edges (links, or paths through switches only)" if fabric.topo.switch_nodes else "links"
        raise NotApplicable(f"{algo} needs a Hamiltonian cycle of the compute nodes over {over}"
                            f"{' that run both ways' if both_ways else ''}: {_reason(exc)}") from None
    return [fabric.ranks[r] for r in order] if logical is not fabric.topo else list(order)


def _reason(exc: Exception) -> str:
    text = str(exc)
    return "none exists" if "none exists" in text else ("search budget exhausted" if "budget" in text else text)


def _reversible(fabric: Fabric, cycle: list[int]) -> bool:
    n = len(cycle)
    return all(fabric.linked(cycle[(i + 1) % n], cycle[i]) for i in range(n))


def _ring_plan(cycles: list[list[int]], collective: Collective) -> list[list[Send]]:
    """The allgather rounds of the module docstring: cycle k carries part k of every shard."""
    n = len(cycles[0])
    parts = split_interval(ZERO, ONE, len(cycles))
    plan = []
    for step in range(1, n):
        rnd = []
        for cycle, (lo, hi) in zip(cycles, parts):
            for i in range(n):
                rnd.append(Send(cycle[i], cycle[(i + 1) % n], ((cycle[(i - step + 1) % n], lo, hi),)))
        plan.append(rnd)
    return plan


def _ring_loads(cycles: list[list[int]]) -> list[dict]:
    """Per round, 1/len(cycles) of a shard on every edge of every cycle (N-1 rounds)."""
    n = len(cycles[0])
    share = Fraction(1, len(cycles))
    rnd: dict = {}
    for cycle in cycles:
        for i in range(n):
            add_load(rnd, cycle[i], cycle[(i + 1) % n], share)
    return [dict(rnd) for _ in range(n - 1)]


# ------------------------------------------------------------------------------------------------ cycle choice
def _uni_cycles(topo: Topology) -> list[list[int]]:
    return [_cycle(Fabric(topo), "ring_uni")]


def _bi_cycles(topo: Topology) -> list[list[int]]:
    """ring_bi's cycles: solvers.baselines.hamiltonian's choice (its cycle, and the reverse where it exists)."""
    fabric = Fabric(topo)
    cycle = _cycle(fabric, "ring_bi")      # on a switch-free topology the very search solvers.baselines.hamiltonian makes
    return [cycle, cycle[::-1]] if _reversible(fabric, cycle) else [cycle]


def _shifted_cycles(topo: Topology) -> list[list[int]]:
    """Two edge-disjoint Hamiltonian cycles over pairs linked both ways, each in both directions."""
    algo = "shifted_ring"
    fabric = Fabric(topo)
    first = _cycle(fabric, algo, both_ways=True)
    n = len(first)
    used = {frozenset((first[i], first[(i + 1) % n])) for i in range(n)}
    ranks = fabric.ranks
    index = {u: r for r, u in enumerate(ranks)}
    rest = [(index[u], index[v]) for u in ranks for v in ranks
            if u != v and frozenset((u, v)) not in used and fabric.linked(u, v) and fabric.linked(v, u)]
    remaining = Topology.from_edges(len(ranks), rest, node_names=[topo.names[u] for u in ranks])
    try:
        second = [ranks[r] for r in hamiltonian_cycle(remaining)]
    except NotApplicable as exc:
        ring = "-".join(topo.names[u] for u in first[:12]) + ("-..." if n > 12 else "")
        raise NotApplicable(f"{algo} needs two edge-disjoint Hamiltonian cycles over links that run both ways: "
                            f"after the first ring {ring} the remaining links hold no second one "
                            f"({_reason(exc)})") from None
    return [first, first[::-1], second, second[::-1]]


# --------------------------------------------------------------------------------------------- build / costs
def _allgather_builder(cycles_of, algo: str):
    def allgather(topo: Topology) -> Schedule:
        cycles = cycles_of(topo)
        fabric = Fabric(topo)
        notes = {"cycles": [[topo.names[u] for u in c] for c in cycles]}
        return realize(fabric, _ring_plan(cycles, Collective.ALLGATHER), Collective.ALLGATHER, algo, notes)
    return allgather


def _build(cycles_of, algo: str, topo: Topology, collective: Collective) -> Schedule:
    schedule = build_collective(topo, collective, _allgather_builder(cycles_of, algo))
    schedule.algo = algo
    return schedule


def _closed_form(cycles_of, topo: Topology, collective: Collective) -> tuple[Fraction, Fraction]:
    def allgather(on: Topology):
        return evaluate(Fabric(on), _ring_loads(cycles_of(on)), big_b=node_bandwidth(topo))
    if collective is Collective.ALLGATHER:
        return allgather(topo)
    rs = allgather(topo.transpose())
    return rs if collective is Collective.REDUCE_SCATTER else sum_costs(rs, allgather(topo))


def build_ring_uni(topo: Topology, collective: Collective) -> Schedule:
    """The unidirectional ring (module docstring)."""
    return _build(_uni_cycles, "ring_uni", topo, collective)


def closed_form_ring_uni(topo: Topology, collective: Collective) -> tuple[Fraction, Fraction]:
    return _closed_form(_uni_cycles, topo, collective)


def build_ring_bi(topo: Topology, collective: Collective) -> Schedule:
    """The bidirectional ring: ``solvers.baselines.hamiltonian.ring_allgather`` on switch-free topologies, the same ring over
    logical edges on switched ones (module docstring)."""
    if topo.switch_nodes:
        return _build(_bi_cycles, "ring_bi", topo, collective)
    _bi_cycles(topo)                       # NotApplicable with this module's message where no ring exists
    schedule = build_collective(topo, collective, ring_allgather)
    schedule.algo = "ring_bi"
    return schedule


def closed_form_ring_bi(topo: Topology, collective: Collective) -> tuple[Fraction, Fraction]:
    return _closed_form(_bi_cycles, topo, collective)


def build_shifted_ring(topo: Topology, collective: Collective) -> Schedule:
    """ShiftedRing (module docstring)."""
    return _build(_shifted_cycles, "shifted_ring", topo, collective)


def closed_form_shifted_ring(topo: Topology, collective: Collective) -> tuple[Fraction, Fraction]:
    return _closed_form(_shifted_cycles, topo, collective)
