"""Switch unwinding (TACOS section IV-D, Fig. 10; notes tacos.md 1.5): replace the switches of a fabric by fixed
point-to-point links between the compute nodes they join, so that a synthesizer over a time-expanded network
(one chunk per link per time step) can schedule it.

A *switch domain* is a connected group of switches (a NIC switch and the IB switch behind it form one domain);
its members are the compute nodes with a link into it, in index order p_0 .. p_{m-1}. Degree-d unwinding gives
member p_i the links p_i -> p_{i+1}, ..., p_i -> p_{i+d} (indices mod m), each with bandwidth b/d, where b is the
bottleneck bandwidth of the widest path from p_i through the domain to the target, and with the summed alpha of
that path: the member's egress is shared by its d logical links. d = 1 is a unidirectional ring at full
bandwidth, d = m - 1 ("max") a full mesh at b/(m-1). The paper unwinds scale-up switches to the max degree and
scale-out switches to degree 1 (section VII-B); ``auto`` does that by taking a one-switch domain as scale-up and a
domain of several switches as scale-out. Unwinding is a modelling choice (paper footnote 1): it fixes the
logical links for the whole collective, so different degrees give different answers.

A domain where some member cannot reach every other member through it (one-way switch links) has no ring to
unwind into: there every member links to every member it reaches, sharing its egress among them.
"""
from __future__ import annotations

import heapq
from fractions import Fraction

from .model import COMPUTE, Link, Topology, TopologyError


def switch_domains(topo: Topology) -> list[list[int]]:
    """The connected groups of switches (links between switches taken both ways), each sorted."""
    seen: set[int] = set()
    out = []
    for s in topo.switch_nodes:
        if s in seen:
            continue
        group, stack = [], [s]
        seen.add(s)
        while stack:
            u = stack.pop()
            group.append(u)
            for i in topo.out_links[u] + topo.in_links[u]:
                link = topo.links[i]
                for v in (link.src, link.dst):
                    if not topo.is_compute(v) and v not in seen:
                        seen.add(v)
                        stack.append(v)
        out.append(sorted(group))
    return out


def _widest(topo: Topology, source: int, domain: set[int]) -> dict[int, tuple[Fraction, Fraction]]:
    """From compute node ``source`` into ``domain`` and out to compute nodes: for every reachable compute node,
    (bottleneck bandwidth of the widest path, alpha summed along it)."""
    best: dict[int, tuple[Fraction, Fraction]] = {}
    heap = []
    for i in topo.out_links[source]:
        link = topo.links[i]
        if link.dst in domain:
            heap.append((-link.bandwidth, link.alpha, link.dst))
    heapq.heapify(heap)
    done: set[int] = set()
    while heap:
        neg_bw, alpha, u = heapq.heappop(heap)
        if u in done:
            continue
        done.add(u)
        for i in topo.out_links[u]:
            link = topo.links[i]
            bw, al = min(-neg_bw, link.bandwidth), alpha + link.alpha
            v = link.dst
            if v in domain:
                if v not in done:
                    heapq.heappush(heap, (-bw, al, v))
            elif v != source and (v not in best or (bw, -al) > (best[v][0], -best[v][1])):
                best[v] = (bw, al)
    return best


def unwind(topo: Topology, degree: int | str = "auto") -> Topology:
    """``topo`` with every switch domain replaced by degree-``degree`` logical links (module docstring).

    ``degree`` is a positive integer (capped at members - 1), ``"max"`` or ``"auto"``. Direct links between
    compute nodes are kept. A topology without switches is returned unchanged."""
    domains = switch_domains(topo)
    if not domains:
        return topo
    if not (degree in ("auto", "max") or (isinstance(degree, int) and not isinstance(degree, bool) and degree >= 1)):
        raise TopologyError(f"unwinding degree must be a positive integer, 'max' or 'auto', got {degree!r}")
    compute = topo.compute_nodes
    index = {v: i for i, v in enumerate(compute)}
    links = [Link(index[l.src], index[l.dst], l.bandwidth, l.alpha) for l in topo.links
             if topo.is_compute(l.src) and topo.is_compute(l.dst)]
    for domain in domains:
        members_of = set(domain)
        members = sorted({topo.links[i].src for s in domain for i in topo.in_links[s]
                          if topo.is_compute(topo.links[i].src)}
                         | {topo.links[i].dst for s in domain for i in topo.out_links[s]
                            if topo.is_compute(topo.links[i].dst)})
        m = len(members)
        if m < 2:
            continue
        reach = {u: _widest(topo, u, members_of) for u in members}
        if not all(set(reach[u]) >= set(members) - {u} for u in members):
            # a one-way or split domain: every member that can send links to every member it reaches
            for u in members:
                for v in sorted(reach[u]):
                    bw, alpha = reach[u][v]
                    links.append(Link(index[u], index[v], bw / len(reach[u]), alpha))
            continue
        if degree == "auto":
            d = m - 1 if len(domain) == 1 else 1
        elif degree == "max":
            d = m - 1
        else:
            d = min(degree, m - 1)
        for pos, u in enumerate(members):
            for step in range(1, d + 1):
                v = members[(pos + step) % m]
                bw, alpha = reach[u][v]
                links.append(Link(index[u], index[v], bw / d, alpha))
    names = tuple(topo.names[v] for v in compute)
    label = {"auto": "", "max": ",0"}.get(degree, f",{degree}")
    return Topology(names, (COMPUTE,) * len(compute), tuple(links),
                    name=f"unwound[{degree}]({topo.name or topo.expr})",
                    expr=f"unwind({topo.expr}{label})" if topo.expr else "")


def unwind_expr(topo: Topology, degree: int | None = None) -> Topology:
    """The expression language's form: ``unwind(G)`` is ``auto``, ``unwind(G,0)`` is ``max``, ``unwind(G,d)``
    is degree d."""
    return unwind(topo, "auto" if degree is None else "max" if degree == 0 else degree)
