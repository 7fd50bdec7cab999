"""Reverse symmetry (direct-connect paper Def 6, App. B): an isomorphism g from G to its transpose G^T.

g maps every link u -> v of G onto a link g(u) -> g(v) of G^T, that is a link g(v) -> g(u) of G, with the same
number of parallel copies. Families and expansions record one when their structure gives it
(``topo._meta["transpose_iso"]``); a bidirectional graph has the identity; otherwise a VF2 search is tried on
small simple digraphs.
"""
from __future__ import annotations

from collections import Counter
from typing import Sequence

from .model import Topology, TopologyError

VF2_MAX_NODES = 64


def is_transpose_isomorphism(topo: Topology, iso: Sequence[int]) -> bool:
    """Whether ``iso`` maps the multiset of links of G onto that of G^T."""
    if sorted(iso) != list(range(topo.num_nodes)) or any(topo.kinds[i] != topo.kinds[iso[i]] for i in iso):
        return False
    links = Counter((l.src, l.dst) for l in topo.links)
    return all(links.get((iso[d], iso[s]), 0) == c for (s, d), c in links.items())


def links_through(topo: Topology, iso: Sequence[int]) -> tuple[int, ...]:
    """For every link a -> b of G, the link g(b) -> g(a) of G (the k-th parallel copy for the k-th): where a
    reverse symmetry g sends each link, read as a link of G^T (which keeps G's indices)."""
    groups: dict[tuple[int, int], list[int]] = {}
    for i, l in enumerate(topo.links):
        groups.setdefault((l.src, l.dst), []).append(i)
    out = [0] * len(topo.links)
    for (s, d), idx in groups.items():
        target = groups.get((iso[d], iso[s]), [])
        if len(target) != len(idx):
            raise TopologyError("internal: the transpose isomorphism does not map links onto links")
        for a, b in zip(idx, target):
            out[a] = b
    return tuple(out)


def transpose_isomorphism(topo: Topology) -> tuple[int, ...] | None:
    """An isomorphism G -> G^T, or None when none is known or found."""
    known = topo._meta.get("transpose_iso")
    if known is not None and is_transpose_isomorphism(topo, known):
        return tuple(known)
    identity = tuple(range(topo.num_nodes))
    if is_transpose_isomorphism(topo, identity):
        return identity
    if topo.num_nodes > VF2_MAX_NODES:
        return None
    import networkx as nx
    from networkx.algorithms.isomorphism import DiGraphMatcher

    def simple(reverse: bool):
        g = nx.DiGraph()
        g.add_nodes_from(range(topo.num_nodes))
        for (s, d), c in Counter((l.src, l.dst) for l in topo.links).items():
            g.add_edge(d if reverse else s, s if reverse else d, mult=c)
        return g

    matcher = DiGraphMatcher(simple(False), simple(True), edge_match=lambda a, b: a["mult"] == b["mult"])
    for mapping in matcher.isomorphisms_iter():
        iso = tuple(mapping[i] for i in range(topo.num_nodes))
        if is_transpose_isomorphism(topo, iso):
            return iso
    return None
