"""Weakly connected components by union-find: the boxes of a fabric (nodes joined by its faster links) for
ForestColl's box packing, TE-CCL's cut bounds and NCCL's boxes in the baselines."""
from __future__ import annotations

from typing import Iterable


def components(nodes: Iterable[int], edges: Iterable[tuple[int, int]]) -> list[list[int]]:
    """The weakly connected components of the graph on ``nodes`` with ``edges`` (pairs of those nodes), each in
    ascending order, the components ordered by their least node."""
    parent = {v: v for v in nodes}

    def find(v: int) -> int:
        while parent[v] != v:
            parent[v] = parent[parent[v]]
            v = parent[v]
        return v

    for u, v in edges:
        a, b = find(u), find(v)
        if a != b:
            parent[max(a, b)] = min(a, b)
    groups: dict[int, list[int]] = {}
    for v in sorted(parent):
        groups.setdefault(find(v), []).append(v)
    return sorted(groups.values(), key=lambda group: group[0])
