"""A generic allgather for any strongly connected topology: one shortest-path broadcast tree per node.

For every compute node v, a breadth-first search from v fixes each node's depth; every other node takes as its
parent the in-neighbour one level up whose link has carried the least so far in that step (a greedy balance of
the per-step link loads). Node c at depth t receives v's whole shard from its parent in step t, so the schedule
takes D(G) steps, the minimum (direct-connect paper Theorem 3).

Switches forward but do not copy (``topologies.model``), so a switch in a tree receives one copy of the shard for every
compute node below it that is reached through a distinct out-link, and sends each copy once. A switch with no
compute node below it is left out of the tree.
"""
from __future__ import annotations

from collections import defaultdict, deque

from topologies.model import Topology
from topologies.properties import is_strongly_connected

from ..core.errors import NotApplicable
from ..core.schedule import ONE, ZERO, Collective, Schedule, Transfer


def _depths(topo: Topology, root: int) -> list[int]:
    depth = [-1] * topo.num_nodes
    depth[root] = 0
    queue = deque([root])
    while queue:
        u = queue.popleft()
        for i in topo.out_links[u]:
            w = topo.links[i].dst
            if depth[w] < 0:
                depth[w] = depth[u] + 1
                queue.append(w)
    return depth


def sptree_allgather(topo: Topology) -> Schedule:
    """The allgather of the module docstring."""
    if not is_strongly_connected(topo):
        raise NotApplicable("the topology is not strongly connected: some compute node cannot reach another")
    load: dict[tuple[int, int], int] = defaultdict(int)       # (step, link) -> copies so far
    transfers = []
    for root in topo.compute_nodes:
        depth = _depths(topo, root)
        order = sorted((w for w in range(topo.num_nodes) if depth[w] > 0), key=depth.__getitem__)
        parent_link: dict[int, int] = {}
        for w in order:
            candidates = [i for i in topo.in_links[w] if depth[topo.links[i].src] == depth[w] - 1]
            best = min(candidates, key=lambda i: (load[depth[w], i], i))
            parent_link[w] = best
            load[depth[w], best] += 1
        children: dict[int, list[int]] = defaultdict(list)
        for w, i in parent_link.items():
            children[topo.links[i].src].append(w)
        need = [0] * topo.num_nodes                          # copies node w must receive
        for w in reversed(order):
            need[w] = 1 if topo.is_compute(w) else sum(need[c] for c in children[w])
        for w in order:
            link = parent_link[w]
            for _ in range(need[w]):
                transfers.append(Transfer(root, ZERO, ONE, link, depth[w]))
            if need[w] != 1:
                load[depth[w], link] += need[w] - 1
    return Schedule(Collective.ALLGATHER, transfers, "sptree")
