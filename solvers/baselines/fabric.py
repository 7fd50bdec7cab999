"""Logical edges of the baselines on a physical topology, and the two ways a baseline's plan is turned into
numbers: the IR schedule (``realize``) and its closed-form alpha-beta cost (``evaluate``).

A baseline is written over *logical* edges u -> v between compute nodes, in *rounds* (the textbook's steps): in
each round every logical send moves some pieces (shard, lo, hi) from u to v, copying or reducing. A logical edge
is a *route* on the topology:

* a direct link u -> v (all parallel links u -> v share each piece equally, as in ``solvers.baselines.hamiltonian``), or, where
  there is none,
* the shortest path u -> s_1 -> ... -> v whose inner nodes are all switches (the fewest hops, then link order;
  every hop again uses all parallel links between its two nodes). A switch only stores and forwards
  (``solvers.core.verify``): it sends in a later step what it received, so a path of h hops takes h IR steps.

With H the longest route a schedule uses, every round takes H IR steps (round r owns steps (r-1)H+1 .. rH) and
a route of h hops uses the last h of them, so each round ends with all its data delivered and every round
stays in its own steps: T_L = (rounds * H - idle) * alpha, where idle = H - (the longest route of the first
round) counts the leading steps in which nothing moves yet (the schedule starts at step 1; 0 unless routes
differ in length, as on multi-box clusters). On a direct-connect topology H = 1 and IR steps are the
textbook's steps; through one switch (``tests.helpers.star``, ``dgx_a100(boxes=1)``) H = 2, each logical step
being a send up to the switch and the switch's forward down. A piece is cut into lcm(parallel links of each hop)
equal sub-pieces that keep their bounds on every hop, so a switch forwards exactly what it received and
``switch_paths.network_view`` can replace the chain by one GPU-to-GPU send.

``evaluate`` is the alpha-beta model of ``solvers.core.cost`` applied to the algorithm's analytic per-round loads
(shards per logical edge, formulas in N and the round index) instead of to transfers: in IR step t,
T_B(t) = max over links l of load_l(t) / bw_l * B / N in units of M/B (a load in shards of M/N; B the smallest
egress bandwidth of a compute node), where load_l(t) sums, over the routes whose hop crosses l in step t, the
route's load divided by the number of parallel links of that hop.
"""
from __future__ import annotations

from collections import defaultdict, deque
from fractions import Fraction
from math import lcm
from typing import NamedTuple

from topologies.model import Topology

from ..core.cost import node_bandwidth
from ..core.errors import NotApplicable
from ..core.schedule import Collective, Schedule, Transfer

Route = tuple[tuple[int, ...], ...]       # per hop, the parallel links it uses
Piece = tuple[int, Fraction, Fraction]    # (shard, lo, hi)


class Send(NamedTuple):
    """In one round, compute node ``src`` sends ``pieces`` to compute node ``dst``; ``reduce`` as in Transfer."""

    src: int
    dst: int
    pieces: tuple[Piece, ...]
    reduce: bool = False


Plan = list[list[Send]]                             # rounds of logical sends
Loads = list[dict[tuple[int, int], Fraction]]       # rounds of shards per logical edge


class Fabric:
    """The routes between the compute nodes of ``topo`` (module docstring)."""

    def __init__(self, topo: Topology):
        self.topo = topo
        self._routes: dict[int, dict[int, Route]] = {}

    @property
    def ranks(self) -> tuple[int, ...]:
        """The compute nodes in rank order."""
        return self.topo.compute_nodes

    def name(self, u: int) -> str:
        return self.topo.names[u]

    def _from(self, u: int) -> dict[int, Route]:
        found = self._routes.get(u)
        if found is not None:
            return found
        topo = self.topo
        direct: dict[int, list[int]] = defaultdict(list)
        for i in topo.out_links[u]:
            w = topo.links[i].dst
            if w != u and topo.is_compute(w):
                direct[w].append(i)
        routes: dict[int, Route] = {w: (tuple(links),) for w, links in direct.items()}
        if topo.switch_nodes:
            # BFS through switches only: prev[x] = the node before x on the first shortest path found
            prev: dict[int, int] = {u: -1}
            queue = deque([u])
            while queue:
                x = queue.popleft()
                if x != u and topo.is_compute(x):
                    continue
                for i in topo.out_links[x]:
                    w = topo.links[i].dst
                    if w in prev:
                        continue
                    prev[w] = x
                    if topo.is_compute(w):
                        if w not in routes:
                            routes[w] = self._path(prev, u, w)
                    else:
                        queue.append(w)
        self._routes[u] = routes
        return routes

    def _path(self, prev: dict[int, int], u: int, w: int) -> Route:
        nodes = [w]
        while nodes[-1] != u:
            nodes.append(prev[nodes[-1]])
        nodes.reverse()
        topo = self.topo
        return tuple(tuple(i for i in topo.out_links[a] if topo.links[i].dst == b) for a, b in zip(nodes, nodes[1:]))

    def route(self, u: int, v: int) -> Route | None:
        """The route of the logical edge u -> v, or None when no link or switch-only path joins them."""
        return self._from(u).get(v)

    def linked(self, u: int, v: int) -> bool:
        return self.route(u, v) is not None

    def missing(self, u: int, v: int, both_ways: bool = True) -> str | None:
        """None when u -> v (and v -> u, with ``both_ways``) is routable; else a phrase naming what is missing."""
        there, back = self.linked(u, v), (self.linked(v, u) if both_ways else True)
        if there and back:
            return None
        via = " (directly or through switches only)" if self.topo.switch_nodes else ""
        a, b = self.name(u), self.name(v)
        if not there and not back:
            return f"{a} and {b} are not linked{via}"
        return f"there is no link {a} -> {b}{via}" if not there else f"there is no link {b} -> {a}{via}"

    def logical_topology(self, both_ways: bool = False) -> Topology:
        """The compute-only graph of the logical edges over ranks 0..N-1 (node ids kept), one link per routable
        pair; with ``both_ways`` only pairs routable in both directions. On a switch-free topology with
        ``both_ways`` False this is ``topo`` itself (so searches see the same graph ``solvers.baselines.hamiltonian`` does)."""
        topo = self.topo
        if not topo.switch_nodes and not both_ways:
            return topo
        ranks = self.ranks
        pairs = [(a, b) for a, u in enumerate(ranks) for b, v in enumerate(ranks)
                 if a != b and self.linked(u, v) and (not both_ways or self.linked(v, u))]
        return Topology.from_edges(len(ranks), pairs, node_names=[topo.names[u] for u in ranks],
                                   name=f"logical edges of {topo.name or topo.expr}")

    def hops(self, pairs) -> int:
        """H: the longest route among ``pairs`` (every pair must be routable)."""
        return max((len(self.route(u, v)) for u, v in pairs), default=1)


def realize(fabric: Fabric, plan: Plan, collective: Collective, algo: str, notes: dict | None = None) -> Schedule:
    """The IR schedule of ``plan`` on ``fabric`` (module docstring). Transfers keep the order of the plan's sends
    and pieces in every step, so pieces that meet in a switch leave it in the order they came."""
    pairs = {(s.src, s.dst) for rnd in plan for s in rnd}
    height = fabric.hops(pairs)
    transfers = []
    for r, rnd in enumerate(plan):
        base = r * height
        for send in rnd:
            route = fabric.route(send.src, send.dst)
            first = base + height - len(route) + 1
            cuts = lcm(*(len(hop) for hop in route))
            for shard, lo, hi in send.pieces:
                width = (hi - lo) / cuts
                for k in range(cuts):
                    a, b = lo + k * width, lo + (k + 1) * width
                    for h, hop in enumerate(route):
                        transfers.append(Transfer(shard, a, b, hop[k % len(hop)], first + h, send.reduce))
    if transfers:                         # a first round of short routes only: start it at step 1
        idle = min(t.step for t in transfers) - 1
        if idle:
            transfers = [t._replace(step=t.step - idle) for t in transfers]
    info = dict(notes or {})
    info["ir_steps_per_round"] = height
    return Schedule(collective, transfers, algo, info)


def evaluate(fabric: Fabric, loads: Loads, big_b: Fraction | None = None) -> tuple[Fraction, Fraction]:
    """(steps, tb_factor) of rounds that put ``loads`` (shards per logical edge) on ``fabric``'s routes, exact
    (module docstring). ``big_b`` overrides B (a reduce-scatter built on the transpose is costed with the B of the
    topology it runs on)."""
    topo = fabric.topo
    n = topo.n
    big_b = node_bandwidth(topo) if big_b is None else big_b
    height = fabric.hops({pair for rnd in loads for pair in rnd})
    tb = Fraction(0)
    for rnd in loads:
        for sub in range(height):
            per_link: dict[int, Fraction] = defaultdict(Fraction)
            for (u, v), amount in rnd.items():
                route = fabric.route(u, v)
                h = sub - (height - len(route))
                if h < 0 or not amount:
                    continue
                hop = route[h]
                for link in hop:
                    per_link[link] += Fraction(amount) / len(hop)
            if per_link:
                tb += max(load / topo.links[l].bandwidth for l, load in per_link.items()) * big_b / n
    first = max((len(fabric.route(u, v)) for (u, v), amount in loads[0].items() if amount), default=height) \
        if loads else height
    return Fraction(len(loads) * height - (height - first)), tb


def route_loads(fabric: Fabric, amounts) -> dict[int, Fraction]:
    """Per link, the sum over (u, v, amount) of amount divided among the parallel links of each hop of the
    route of u -> v: what a pipelined baseline puts on every link in all (its analytic rate's input)."""
    load: dict[int, Fraction] = defaultdict(Fraction)
    for u, v, amount in amounts:
        for hop in fabric.route(u, v):
            for link in hop:
                load[link] += Fraction(amount) / len(hop)
    return load


def bottleneck(topo: Topology, load: dict[int, Fraction]) -> Fraction:
    """min over the loaded links of bandwidth / load: the rate the busiest link allows."""
    return min(Fraction(topo.links[link].bandwidth) / amount for link, amount in load.items() if amount)


def add_load(rnd: dict, u: int, v: int, amount) -> None:
    rnd[(u, v)] = rnd.get((u, v), Fraction(0)) + Fraction(amount)


def need_two(fabric: Fabric, algo: str) -> None:
    if fabric.topo.n < 2:
        raise NotApplicable(f"{algo} needs at least two compute nodes")


def need_all_pairs(fabric: Fabric, algo: str, what: str, hint: str = "") -> list[int]:
    """The ranks, after checking that there are two or more and every ordered pair is a logical edge; else
    NotApplicable "<what>: <the missing pair><hint>"."""
    need_two(fabric, algo)
    ranks = list(fabric.ranks)
    for u in ranks:
        for v in ranks:
            if u != v and not fabric.linked(u, v):
                raise NotApplicable(f"{what}: {fabric.missing(u, v, both_ways=False)}{hint}")
    return ranks


def sum_costs(*parts: tuple[Fraction, Fraction]) -> tuple[Fraction, Fraction]:
    return sum((p[0] for p in parts), Fraction(0)), sum((p[1] for p in parts), Fraction(0))
