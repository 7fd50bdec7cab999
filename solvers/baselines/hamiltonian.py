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
RESTARTS = 16           # Warnsdorff searches from this many start nodes, sharing one search budget


def _links_between(topo: Topology, u: int, v: int) -> list[int]:
    return [i for i in topo.out_links[u] if topo.links[i].dst == v]


def _is_cycle(topo: Topology, order: list[int]) -> bool:
    n = len(order)
    return all(_links_between(topo, order[i], order[(i + 1) % n]) for i in range(n))


def hamiltonian_cycle(topo: Topology) -> list[int]:
    """A directed Hamiltonian cycle through the compute nodes over direct links: node order if it is one, or on a
    hypercube the Gray code order of its coordinates (``_hypercube_gray_order``), else a depth-first search in
    node order, else (its budget spent) the same search from up to ``RESTARTS`` start nodes taking first the
    successor with the fewest unvisited successors of its own (Warnsdorff's rule; tori and circulants with
    their nodes numbered in any order, mostly)."""
    comp = list(topo.compute_nodes)
    if len(comp) < 2:
        raise NotApplicable("the ring needs at least two compute nodes")
    if _is_cycle(topo, comp):
        return comp
    succ = {u: sorted({topo.links[i].dst for i in topo.out_links[u]} & set(comp) - {u}) for u in comp}
    gray = _hypercube_gray_order(comp, succ)
    if gray is not None and _is_cycle(topo, gray):
        return gray
    start = comp[0]
    path, exhausted = search_path(succ, len(comp), start, lambda u: start in succ[u])
    for first in comp[:RESTARTS] if path is None and exhausted else ():
        path, spent = search_path(succ, len(comp), first, lambda u, first=first: first in succ[u],
                                  budget=SEARCH_BUDGET // RESTARTS, fewest_first=True)
        if path is not None or not spent:      # found, or none exists
            exhausted = spent
            break
    if path is not None:
        return path
    why = "search budget exhausted" if exhausted else "none exists"
    raise NotApplicable(f"the ring needs a directed Hamiltonian cycle of compute nodes over direct links ({why})")


def _hypercube_gray_order(nodes: list[int], succ: dict[int, list[int]]) -> list[int] | None:
    """When the nodes and their successors form a hypercube Q_k (whatever their numbering), the nodes in binary
    reflected Gray code order of their coordinates, a Hamiltonian cycle; else None. Coordinates: the first node
    is 0, its k neighbours the k unit vectors, and every further node (breadth first) the union of its labelled
    neighbours'; the labelling is kept only if it is a bijection onto 0..2^k - 1 under which every link flips
    exactly one bit."""
    n = len(nodes)
    k = n.bit_length() - 1
    if n < 4 or n & (n - 1) or any(len(succ[u]) != k for u in nodes):
        return None
    label = {nodes[0]: 0}
    layer = []
    for j, v in enumerate(succ[nodes[0]]):
        label[v] = 1 << j
        layer.append(v)
    while layer:
        nxt = {}
        for u in layer:
            for w in succ[u]:
                if w not in label:
                    nxt[w] = nxt.get(w, 0) | label[u]
        label.update(nxt)
        layer = list(nxt)
    at = {c: u for u, c in label.items()}
    if len(label) != n or len(at) != n or max(at) != n - 1:
        return None
    if any(bin(label[u] ^ label[v]).count("1") != 1 for u in nodes for v in succ[u]):
        return None
    return [at[i ^ (i >> 1)] for i in range(n)]


def search_path(succ: dict[int, list[int]], count: int, first: int, closes, avoid=frozenset(),
                budget: int = SEARCH_BUDGET, fewest_first: bool = False) -> tuple[list[int] | None, bool]:
    """Depth-first search for a path from ``first`` along ``succ`` through ``count`` distinct nodes, none in
    ``avoid``, whose last node u has ``closes(u)``; (the path or None, whether ``budget`` nodes were tried in
    vain). Successors are tried in ``succ``'s order, or with ``fewest_first`` those with the fewest unvisited
    successors first (ties in ``succ``'s order). Iterative: paths of any length, no recursion limit."""
    path, on_path = [first], {first}
    left = budget - 1

    def options(u: int) -> list[int]:
        free = [v for v in succ[u] if v not in on_path and v not in avoid]
        if fewest_first:
            free.sort(key=lambda v: sum(1 for w in succ[v] if w not in on_path and w not in avoid))
        return free

    if count == 1:
        return (path if closes(first) else None), False
    stack = [iter(options(first))]             # per node on the path: the successors not tried yet
    while stack:
        v = next(stack[-1], None)
        if v is None:                           # every successor tried: back up
            stack.pop()
            on_path.discard(path.pop())
            continue
        if left <= 0:
            return None, True
        left -= 1
        path.append(v)
        on_path.add(v)
        if len(path) == count:
            if closes(v):
                return path, False
            on_path.discard(path.pop())
            continue
        stack.append(iter(options(v)))
    return None, False


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
