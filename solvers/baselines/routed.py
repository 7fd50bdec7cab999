"""Baselines on any strongly connected fabric, their logical edges routed over shortest paths (TACOS section VII:
Ring, Direct and TACCL-like on meshes and on meshes with failed NPUs, Tables I and III).

* ``ring_order``: the compute nodes in depth-first order from node 0, neighbours in index order (on a grid this
  snakes row by row); ``routed_ring_allgather``: the ring allgather over that order, each ring edge routed on a
  shortest path (``rooted.path``), the nodes between forwarding what passes; round r of the ring takes IR steps
  (r-1) H + 1 .. r H, H the longest route; a node on a route that already holds the piece does not take it
  again (``rooted.first_receipts``). It is the ring of a topology that has no Hamiltonian cycle the search finds
  (a mesh with failed NPUs), as TACOS maps its Ring baseline onto a mesh; its ring bandwidth is the least
  bandwidth / (ring edges routed over the link) of a link, as ``multiring`` counts it.
* ``npu_order_ring_allgather``: the same routed ring over the NPUs in index order, TACOS's naive Ring baseline
  (its Tables I and III), which ignores where the links are.
* ``tree_allgather``: every node's shard down its own shortest-path tree (``rooted._tree``, no care for the other
  trees' links): the optimum of TACOS-ILP without its congestion constraint (any shortest-path routing reaches
  every chunk's distance), which ``taccl_like`` returns where its ILP would be too large to solve.
* ``phased``: reduce-scatter and allreduce from such an allgather. A routed allgather delivers some pieces twice (a
  node on another's route receives what it also gets on its own), which run backwards would add a contribution
  twice: the reduce-scatter is the reverse, on the transpose, of the allgather with every repeated receipt left
  out (``rooted.first_receipts``: each node forwards from its first copy, so it stays an allgather), an in-tree
  per shard. The allreduce is that reduce-scatter, then the allgather as built.
"""
from __future__ import annotations

from typing import Callable

from topologies.model import Topology

from ..core.errors import NotApplicable
from ..core.schedule import ONE, ZERO, Collective, Schedule, Transfer
from ..core.transform import compose_allreduce, reverse
from .rooted import _check, _tree, first_receipts, path


def ring_order(topo: Topology) -> list[int]:
    """The compute nodes in depth-first order from the first, neighbours in index order (module docstring)."""
    _check(topo)
    comp = list(topo.compute_nodes)
    seen, order, stack = set(), [], [comp[0]]
    while stack:
        u = stack.pop()
        if u in seen:
            continue
        seen.add(u)
        if topo.is_compute(u):
            order.append(u)
        stack.extend(sorted({topo.links[i].dst for i in topo.out_links[u]} - seen, reverse=True))
    return order


def routed_ring_allgather(topo: Topology, order: list[int] | None = None) -> Schedule:
    """The ring allgather over ``order`` (default ``ring_order``) with every ring edge routed on a shortest path."""
    given = order is not None
    order = ring_order(topo) if order is None else list(order)
    n = len(order)
    if n < 2:
        raise NotApplicable("a ring needs two or more compute nodes")
    routes = [path(topo, _tree(topo, order[i]), order[(i + 1) % n]) for i in range(n)]
    hops = max(len(r) for r in routes)
    transfers = []
    for r in range(1, n):
        for i in range(n):
            shard = order[(i - r + 1) % n]
            transfers.extend(Transfer(shard, ZERO, ONE, link, (r - 1) * hops + j + 1)
                             for j, link in enumerate(routes[i]))
    load: dict[int, int] = {}
    for route in routes:
        for link in route:
            load[link] = load.get(link, 0) + 1
    busbw = min(float(topo.links[link].bandwidth) / count for link, count in load.items())
    schedule = Schedule(Collective.ALLGATHER, transfers, "ring",
                        notes={"ring_search": (f"NPU-index ring order, {hops} hop(s) at most per ring edge" if given
                                               else f"no Hamiltonian cycle found: depth-first ring order, {hops} "
                                                    f"hop(s) at most per ring edge"),
                               "rings": 1, "ring_busbw_gbs": busbw})
    return first_receipts(topo, schedule)


def npu_order_ring_allgather(topo: Topology) -> Schedule:
    """TACOS's Ring baseline as its paper runs it (section VII-C, Tables I and III): one logical ring over the NPUs
    in index order, 0 -> 1 -> ... -> N-1 -> 0, each ring edge routed on a shortest path, whatever the fabric."""
    _check(topo)
    return routed_ring_allgather(topo, list(topo.compute_nodes))


def tree_allgather(topo: Topology, chunks: int = 1) -> Schedule:
    """Every node's shard (in ``chunks`` parts, together) down its own shortest-path tree (module docstring)."""
    _check(topo)
    transfers = []
    width = [(ZERO + j * ONE / chunks, ZERO + (j + 1) * ONE / chunks) for j in range(chunks)]
    for s in topo.compute_nodes:
        tree = _tree(topo, s)
        for v in range(topo.num_nodes):
            if tree[v] is not None and topo.is_compute(v):
                route = path(topo, tree, v)
                for step, link in enumerate(route, start=1):
                    transfers.extend(Transfer(s, lo, hi, link, step) for lo, hi in width)
    return first_receipts(topo, Schedule(Collective.ALLGATHER, transfers, "taccl_like"))


def phased(topo: Topology, collective: Collective, allgather: Callable[[Topology], Schedule]) -> Schedule:
    """``collective`` (allgather, reduce-scatter or allreduce) from a routed ``allgather`` (module docstring)."""
    if collective is Collective.ALLGATHER:
        return allgather(topo)
    if collective not in (Collective.REDUCE_SCATTER, Collective.ALLREDUCE):
        raise NotApplicable(f"a routed allgather gives allgather, reduce-scatter and allreduce, not {collective.value}")
    g = topo.transpose()
    rs = reverse(first_receipts(g, allgather(g)))
    if collective is Collective.REDUCE_SCATTER:
        return rs
    out = compose_allreduce(rs, allgather(topo))
    out.algo = rs.algo
    return out
