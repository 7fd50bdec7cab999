"""The multi-ring allgather, NCCL's ring algorithm with several channels (the ``ring`` synthesizer).

K rings c^1 .. c^K run at once, ring k carrying the part [(k-1)/K, k/K) of every shard: in round s = 1..N-1
node c^k_i forwards that part of the shard of c^k_{i-s+1} to c^k_{i+1} (direct-connect paper App. F.1, one ring
per channel). Reduce-scatter is the reverse on the transpose, allreduce the two in turn
(``solvers.core.transform``).

Where the rings come from:

* direct-connect topologies: the link-disjoint directed Hamiltonian rings of ``ringset.ring_set`` (as many as
  its constructions and search find, d at most). On a d-regular graph of unit links with K = d every link then
  carries 1/d of a shard per round, T_B = (N-1)/N * M/B: the bandwidth bound.
* switched fabrics (``nccl_ring_orders``): NCCL's rings across boxes (``boxes``: the compute nodes joined by
  links faster than the slowest link of the fabric, NVSwitch or xGMI inside a DGX or MI250 box, the NICs and
  the IB switch slower). If there is one box, one ring over logical edges (``fabric``): through a switch one ring
  already keeps every uplink busy. Otherwise ring k leaves each box through the k-th node with a slow link (its
  NIC) and enters the next box at a node that link reaches, a different entry per ring: one ring per NIC, K =
  the fewest NIC nodes of a box. Inside a box a ring visits every node over fast routes (any order through a
  box switch, a Hamiltonian path over direct links otherwise).

Analytic time (``ring_bandwidth_gbs``). In every round each ring edge moves M/(K N) bytes over every link of its
route, so with load_l the number of ring edges whose route crosses link l, a round takes at least
tau = max_l load_l * M / (K N bw_l), and pipelined rings approach it: allgather (N-1) tau, allreduce 2(N-1) tau.
Both are busbw = M / (N tau) in nccl-tests terms, the *ring bandwidth* min_l K bw_l / load_l; on 2 x DGX A100 it
is 8 NICs x 25 GB/s = 200 GB/s. The schedule's notes carry it as ``ring_busbw_gbs``; the runtime model is
checked against it in the tests.
"""
from __future__ import annotations

from collections import defaultdict
from fractions import Fraction

import numpy as np

from topologies.model import Topology

from ..core.errors import NotApplicable
from ..core.schedule import Collective, Columns, Schedule
from .boxes import boxes, fast, nic_nodes
from .fabric import Fabric, bottleneck, realize, route_loads
from .hamiltonian import hamiltonian_cycle, search_path
from .rings import _ring_plan
from .ringset import ring_set

PATH_BUDGET = 100_000         # search steps for one in-box Hamiltonian path


def multiring_allgather(topo: Topology) -> Schedule:
    """The multi-ring allgather of the module docstring."""
    if topo.switch_nodes:
        fabric = Fabric(topo)
        cycles = nccl_ring_orders(fabric)
        notes = {"rings": len(cycles), "ring_busbw_gbs": float(ring_bandwidth_gbs(fabric, cycles)),
                 "ring_search": "NCCL rings: one per NIC" if len(cycles) > 1 else "one ring through the switches",
                 "cycles": [[topo.names[u] for u in c] for c in cycles[:4]]}
        return realize(fabric, _ring_plan(cycles, Collective.ALLGATHER), Collective.ALLGATHER, "ring", notes)
    try:
        found = ring_set(topo)
    except NotApplicable:                       # no Hamiltonian cycle found: a ring order routed on shortest paths
        from .routed import routed_ring_allgather

        return routed_ring_allgather(topo)
    n, k = len(found.rings[0]), len(found.rings)
    step = np.repeat(np.arange(1, n, dtype=np.int64), n)            # rounds 1..N-1, positions 0..N-1 within
    pos = np.tile(np.arange(n, dtype=np.int64), n - 1)
    parts = []
    for r, (order, links) in enumerate(zip(found.rings, found.links)):
        order_a, links_a = np.asarray(order, dtype=np.int64), np.asarray(links, dtype=np.int64)
        parts.append((step, links_a[pos], order_a[(pos - step + 1) % n], np.full(len(step), r, dtype=np.int64)))
    lo = np.concatenate([p[3] for p in parts])
    cols = Columns(np.concatenate([p[0] for p in parts]), np.concatenate([p[1] for p in parts]),
                   np.concatenate([p[2] for p in parts]), lo, lo + 1, np.zeros(len(lo), dtype=bool), k)
    rate = ring_bandwidth_gbs(Fabric(topo), [list(o) for o in found.rings], found.links)
    notes = {"rings": k, "max_rings": found.bound, "ring_search": found.describe(), "ring_busbw_gbs": float(rate)}
    if n <= 16:
        notes["cycles"] = [[topo.names[u] for u in order] for order in found.rings]
    return Schedule(Collective.ALLGATHER, algo="ring", notes=notes, cols=cols)


def ring_bandwidth_gbs(fabric: Fabric, cycles: list[list[int]], links=None) -> Fraction:
    """min over links l of K * bw_l / load_l (module docstring); ``links`` names each ring edge's link on a
    direct-connect topology (else every edge takes its route in ``fabric``, parallel links sharing equally)."""
    if links is None:
        edges = [(cycle[i], cycle[(i + 1) % len(cycle)], 1) for cycle in cycles for i in range(len(cycle))]
        load = route_loads(fabric, edges)
    else:
        load = defaultdict(Fraction)
        for hops in links:
            for link in hops:
                load[link] += 1
    return len(cycles) * bottleneck(fabric.topo, load)


# ---------------------------------------------------------------------------------------- switched fabrics
def _box_path(fabric: Fabric, box: list[int], first: int, last: int, slow: Fraction) -> list[int] | None:
    """A path from ``first`` to ``last`` through every node of ``box`` over fast logical edges (DFS)."""
    if len(box) == 1:
        return [first]
    middle = [u for u in box if u not in (first, last)]
    straight = [first] + middle + [last]
    if all(fast(fabric, a, b, slow) for a, b in zip(straight, straight[1:])):
        return straight
    succ = {u: [v for v in box if v != u and fast(fabric, u, v, slow)] for u in box}
    path, _ = search_path(succ, len(box) - 1, first, lambda u: last in succ[u], avoid={last}, budget=PATH_BUDGET)
    return None if path is None else path + [last]


def nccl_ring_orders(fabric: Fabric) -> list[list[int]]:
    """NCCL's rings on a switched fabric (module docstring), as orders of compute nodes; NotApplicable with the
    reason where no ring fits."""
    topo = fabric.topo
    if len(fabric.ranks) < 2:
        raise NotApplicable("the ring needs at least two compute nodes")
    box_list, slow = boxes(fabric)
    if len(box_list) == 1:
        try:
            order = hamiltonian_cycle(fabric.logical_topology())
        except NotApplicable as exc:
            raise NotApplicable(f"the ring needs a cycle of the compute nodes over links or switch paths: "
                                f"{exc}") from None
        return [[fabric.ranks[r] for r in order]]
    nics = []
    for box in box_list:
        out = nic_nodes(fabric, box, slow)
        if not out:
            raise NotApplicable(f"the ring needs a way out of every box; the box of {topo.names[box[0]]} has no "
                                f"link at the fabric's slowest bandwidth ({float(slow):g} GB/s) leaving it")
        nics.append(out)
    k = min(len(out) for out in nics)
    count = len(box_list)
    exits = [out[:k] for out in nics]
    entries: list[list[int]] = [[] for _ in box_list]
    for b in range(count):
        nxt = (b + 1) % count
        taken: set[int] = set()
        for r in range(k):
            y = exits[b][r]
            box = box_list[nxt]
            start = box.index(exits[nxt][r]) if exits[nxt][r] in box else 0
            choice = None
            for step in range(1, len(box) + 1):
                x = box[(start + step) % len(box)]
                if x in taken or (x == exits[nxt][r] and len(box) > 1) or fabric.route(y, x) is None:
                    continue
                choice = x
                break
            if choice is None:
                raise NotApplicable(f"the ring needs a distinct entry into the box of {topo.names[box[0]]} for "
                                    f"each of its {k} rings; from {topo.names[y]} none is left")
            taken.add(choice)
            entries[nxt].append(choice)
    cycles = []
    for r in range(k):
        cycle = []
        for b, box in enumerate(box_list):
            path = _box_path(fabric, box, entries[b][r], exits[b][r], slow)
            if path is None:
                raise NotApplicable(f"the ring needs a path through the box of {topo.names[box[0]]} from "
                                    f"{topo.names[entries[b][r]]} to {topo.names[exits[b][r]]} over its fast links")
            cycle += path
        cycles.append(cycle)
    return cycles
