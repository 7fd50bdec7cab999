"""A baseline all-to-all: every piece travels alone along one shortest path from its source to its destination.

The piece of shard s meant for compute node d is [j(d)/N, (j(d)+1)/N) (``solvers.core.schedule``). It leaves s in step 1
and moves one hop per step along a BFS shortest path (hop count) from s to d, switches and compute nodes alike
forwarding in step t + 1 what they received in step t (store and forward). Nothing is optimized: links are shared
by many pieces in the same step, so the schedule has D(G) steps but a poor bandwidth term. It exists so the
all-to-all verifier and MSCCL export have schedules to run on.
"""
from __future__ import annotations

from collections import deque
from fractions import Fraction

from topologies.model import Topology

from ..core.errors import NotApplicable
from ..core.schedule import Collective, Schedule, Transfer


def _bfs_tree(topo: Topology, source: int) -> list[int | None]:
    """For every node, the link that reaches it on a BFS tree from ``source`` (None: the source, or unreachable).
    Links are tried in index order, so the first of parallel links is used."""
    via: list[int | None] = [None] * topo.num_nodes
    seen = [False] * topo.num_nodes
    seen[source] = True
    queue = deque([source])
    while queue:
        u = queue.popleft()
        for li in topo.out_links[u]:
            w = topo.links[li].dst
            if not seen[w]:
                seen[w] = True
                via[w] = li
                queue.append(w)
    return via


def direct_alltoall(topo: Topology) -> Schedule:
    """The all-to-all of the module docstring; NotApplicable when some compute node cannot reach another."""
    comp = topo.compute_nodes
    n = len(comp)
    transfers: list[Transfer] = []
    for s in comp:
        via = _bfs_tree(topo, s)
        for j, d in enumerate(comp):
            if d == s:
                continue
            if via[d] is None:
                raise NotApplicable(f"all-to-all needs every GPU to reach every other: {topo.names[d]} is not "
                                    f"reachable from {topo.names[s]}")
            path = []
            node = d
            while node != s:
                li = via[node]
                path.append(li)
                node = topo.links[li].src
            lo, hi = Fraction(j, n), Fraction(j + 1, n)
            transfers.extend(Transfer(s, lo, hi, li, step) for step, li in enumerate(reversed(path), start=1))
    return Schedule(Collective.ALLTOALL, transfers, "direct")
