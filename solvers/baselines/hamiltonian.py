"""The ring allgather, the classic baseline (direct-connect paper App. F.1).

On a directed Hamiltonian cycle p_0 -> p_1 -> ... -> p_{N-1} -> p_0 of the compute nodes, in step s = 1..N-1
node p_i forwards the shard of p_{i-s+1} to p_{i+1}: every shard walks once around the ring, N-1 steps, each
link carrying one shard per step, so T_B = (N-1)/N * M/B on UniRing(1,N). Where the reverse cycle exists too
(a bidirectional ring) each shard is split in halves sent both ways, the traditional bidirectional ring with the
same step count and optimal bandwidth. Parallel links of a hop share that hop's piece equally.
"""
from __future__ import annotations

from topologies.model import Topology

from ..core.errors import NotApplicable
from ..core.schedule import ONE, ZERO, Collective, Schedule, Transfer, split_interval

SEARCH_BUDGET = 200_000


def _links_between(topo: Topology, u: int, v: int) -> list[int]:
    return [i for i in topo.out_links[u] if topo.links[i].dst == v]


def _is_cycle(topo: Topology, order: list[int]) -> bool:
    n = len(order)
    return all(_links_between(topo, order[i], order[(i + 1) % n]) for i in range(n))


def hamiltonian_cycle(topo: Topology) -> list[int]:
    """A directed Hamiltonian cycle through the compute nodes over direct links, trying node order first."""
    comp = list(topo.compute_nodes)
    if len(comp) < 2:
        raise NotApplicable("the ring needs at least two compute nodes")
    if _is_cycle(topo, comp):
        return comp
    succ = {u: sorted({topo.links[i].dst for i in topo.out_links[u]} & set(comp) - {u}) for u in comp}
    start = comp[0]
    path, exhausted = search_path(succ, len(comp), start, lambda u: start in succ[u])
    if path is not None:
        return path
    why = "search budget exhausted" if exhausted else "none exists"
    raise NotApplicable(f"the ring needs a directed Hamiltonian cycle of compute nodes over direct links ({why})")


def search_path(succ: dict[int, list[int]], count: int, first: int, closes, avoid=frozenset(),
                budget: int = SEARCH_BUDGET) -> tuple[list[int] | None, bool]:
    """Depth-first search for a path from ``first`` along ``succ`` through ``count`` distinct nodes, none in
    ``avoid``, whose last node u has ``closes(u)``; (the path or None, whether ``budget`` calls ran out)."""
    path, on_path = [first], {first}
    left = [budget]

    def extend() -> bool:
        left[0] -= 1
        if left[0] < 0:
            return False
        u = path[-1]
        if len(path) == count:
            return closes(u)
        for v in succ[u]:
            if v not in on_path and v not in avoid:
                path.append(v)
                on_path.add(v)
                if extend():
                    return True
                path.pop()
                on_path.discard(v)
        return False

    found = extend()
    return (path if found else None), left[0] < 0


def ring_allgather(topo: Topology) -> Schedule:
    """The (uni- or bidirectional) ring allgather of the module docstring."""
    order = hamiltonian_cycle(topo)
    n = len(order)
    backward = order[::-1]
    directions = [order, backward] if _is_cycle(topo, backward) else [order]
    halves = split_interval(ZERO, ONE, len(directions))
    transfers = []
    for cycle, (lo, hi) in zip(directions, halves):
        hops = [_links_between(topo, cycle[i], cycle[(i + 1) % n]) for i in range(n)]
        for step in range(1, n):
            for i in range(n):
                shard = cycle[(i - step + 1) % n]
                for link, (a, b) in zip(hops[i], split_interval(lo, hi, len(hops[i]))):
                    transfers.append(Transfer(shard, a, b, link, step))
    return Schedule(Collective.ALLGATHER, transfers, "ring",
                    {"cycle": [topo.names[u] for u in order], "directions": len(directions)})
