"""The topology side of the direct-connect paper's expansions (section 5, App. D; digest section 4).

Each expansion builds a larger topology from smaller ones with a fixed, documented numbering of nodes and links,
so that the schedule transforms in ``solvers.directconnect.expansion`` can find the expanded link of every base transfer:

- ``line_graph(G)`` (Def 12): node ``i`` is link ``i`` of G; links are listed for ``a`` in link order, then for
  ``b`` in ``G.out_links[dst(a)]``: one link ``a -> b`` per pair of links meeting head to tail, the back-edge
  ``uv -> vu`` included. A self-loop of G becomes a node with a self-loop; parallel links become distinct nodes.
- ``degree_expansion(G, n)`` (Def 13): node ``j * N + v`` is copy ``v_j``; link ``(l * n + i) * n + j`` joins
  ``u_i -> v_j`` for link ``l = u -> v`` of G, for all ``i, j`` (``i = j`` included).
- ``cartesian_product(G_1, ..., G_k)`` (Def 3): node ``x`` is the tuple of its coordinates in mixed radix
  (coordinate 0 most significant); its links are listed per node, then per dimension, then per factor link
  leaving that coordinate (``product_link_table``).
- ``bidirectional(G)`` (App. A.6): the multiset union G u G^T: links ``0..L-1`` are G's, link ``L + i`` is the
  reverse of link ``i``.

Every builder also records, in ``topo._meta["transpose_iso"]``, an isomorphism from the result to its transpose
when one follows from the parts' (used by ``bidirectional``; see ``topologies.symmetry``).
"""
from __future__ import annotations

from math import prod
from typing import Sequence

from .model import Topology, TopologyError
from .symmetry import is_transpose_isomorphism, links_through


def _wrap(name: str) -> str:
    """Parenthesize a display name that is itself an infix expression."""
    return f"({name})" if any(op in name for op in ("□", "∗", "∪")) else name


def _known_iso(topo: Topology) -> tuple[int, ...] | None:
    """A reverse symmetry the construction already gives: recorded, or the identity of a bidirectional graph."""
    iso = topo._meta.get("transpose_iso")
    if iso is not None:
        return iso
    identity = tuple(range(topo.num_nodes))
    return identity if is_transpose_isomorphism(topo, identity) else None


def _need_compute_only(topo: Topology, what: str) -> None:
    if topo.switch_nodes:
        raise TopologyError(f"{what} applies to direct-connect topologies; {topo.name or topo.expr} has switches")


# ------------------------------------------------------------------------------------------------ line graph
def line_graph_links(topo: Topology) -> list[tuple[int, int]]:
    """The links ``(a, b)`` of L(G) in their index order: G-links ``a = u -> v`` and ``b = v -> w``."""
    return [(a, b) for a, link in enumerate(topo.links) for b in topo.out_links[link.dst]]


def _walk_name(first: str, second: str) -> str:
    """Name of the line-graph node for the link ``first -> second``: walks overlap, so ``a.b`` + ``b.c`` is
    ``a.b.c`` (a Kautz-like word); otherwise the two names joined by ``.``."""
    p, q = first.split("."), second.split(".")
    if len(p) > 1 and p[1:] == q[:-1]:
        return first + "." + q[-1]
    return first + "." + second


def line_graph_levels(topo: Topology, n: int = 1) -> list[Topology]:
    """L(G), L^2(G), ..., L^n(G) (Def 12), each built from the one before; the last carries the display name
    and expression of L^n(G). See ``line_graph``."""
    if isinstance(n, bool) or not isinstance(n, int) or n < 1:
        raise TopologyError(f"the line graph power n must be an integer >= 1, got {n!r}")
    _need_compute_only(topo, "the line graph")
    base, levels = topo, []
    for _ in range(n):
        pairs = line_graph_links(topo)
        names = [_walk_name(topo.names[l.src], topo.names[l.dst]) for l in topo.links]
        if len(set(names)) != len(names):  # parallel links: number the copies
            names = [f"{nm}#{i}" for i, nm in enumerate(names)]
        iso = _known_iso(topo)
        nxt = Topology.from_edges(len(topo.links), pairs, node_names=names)
        if iso is not None:
            # g_L(u -> v) = the link g(v) -> g(u): an isomorphism L(G) -> L(G)^T whenever g is one G -> G^T
            nxt._meta["transpose_iso"] = links_through(topo, iso)
        levels.append(nxt)
        topo = nxt
    name = f"L({base.name})" if n == 1 else f"L^{n}({base.name})"
    expr = f"line({base.expr})" if n == 1 else f"line({base.expr},{n})"
    out = Topology(topo.names, topo.kinds, topo.links, name=name, expr=expr)
    out._meta.update({k: v for k, v in topo._meta.items() if k == "transpose_iso"})
    levels[-1] = out
    return levels


def line_graph(topo: Topology, n: int = 1) -> Topology:
    """L^n(G) (Def 12): every link ``u -> v`` of G becomes a node; ``uv -> vw`` whenever the links meet head to
    tail. A d-regular G gives a d-regular L(G) with dN nodes and diameter D(G) + 1; L is defined for directed
    graphs, and L of a bidirectional graph is in general not bidirectional."""
    return line_graph_levels(topo, n)[-1]


# ------------------------------------------------------------------------------------------ degree expansion
def degree_expansion(topo: Topology, n: int) -> Topology:
    """G∗n (Def 13): n copies v_1..v_n of every node, and a link u_i -> v_j for every link u -> v of G and all
    i, j (i = j included): nN nodes of degree nd. G must have no self-loops (the schedule's last step relays
    a copy's shard through in-neighbours, which a self-loop would not hold)."""
    if isinstance(n, bool) or not isinstance(n, int) or n < 1:
        raise TopologyError(f"the degree expansion factor n must be an integer >= 1, got {n!r}")
    _need_compute_only(topo, "the degree expansion")
    if any(l.src == l.dst for l in topo.links):
        raise TopologyError(f"the degree expansion needs a graph without self-loops; {topo.name} has some")
    size = topo.num_nodes
    edges = [(i * size + l.src, j * size + l.dst) for l in topo.links for i in range(n) for j in range(n)]
    names = [f"{topo.names[v]}_{j + 1}" for j in range(n) for v in range(size)]
    out = Topology.from_edges(n * size, edges, node_names=names, name=f"{_wrap(topo.name)}∗{n}",
                              expr=f"degree({topo.expr},{n})")
    iso = _known_iso(topo)
    if iso is not None:
        out._meta["transpose_iso"] = tuple(j * size + iso[v] for j in range(n) for v in range(size))
    return out


# --------------------------------------------------------------------------------------- Cartesian products
def _digits(x: int, radices: Sequence[int]) -> list[int]:
    out = []
    for r in reversed(radices):
        x, rem = divmod(x, r)
        out.append(rem)
    return out[::-1]


def _number(digits: Sequence[int], radices: Sequence[int]) -> int:
    x = 0
    for dgt, r in zip(digits, radices):
        x = x * r + dgt
    return x


def product_link_table(factors: Sequence[Topology]) -> list[tuple[int, int, int]]:
    """The links of G_1 □ ... □ G_k in index order, each as ``(node, dimension, factor link)``."""
    radices = [f.num_nodes for f in factors]
    table = []
    for x in range(prod(radices)):
        coords = _digits(x, radices)
        for dim, f in enumerate(factors):
            for l in f.out_links[coords[dim]]:
                table.append((x, dim, l))
    return table


def cartesian_product(factors: Sequence[Topology], *, name: str | None = None,
                      expr: str | None = None) -> Topology:
    """G_1 □ ... □ G_k (Def 3): nodes are tuples, and (.., u_j, ..) -> (.., v_j, ..) whenever u_j -> v_j is a
    link of G_j and the other coordinates agree. Size prod N_i, degree sum d_i, diameter sum D(G_i)."""
    if len(factors) < 1:
        raise TopologyError("a Cartesian product needs at least one factor")
    for f in factors:
        _need_compute_only(f, "the Cartesian product")
    radices = [f.num_nodes for f in factors]
    edges = []
    for x, dim, l in product_link_table(factors):
        coords = _digits(x, radices)
        coords[dim] = factors[dim].links[l].dst
        edges.append((x, _number(coords, radices)))
    names = [",".join(f.names[c] for f, c in zip(factors, _digits(x, radices))) for x in range(prod(radices))]
    out = Topology.from_edges(prod(radices), edges, node_names=names,
                              name=name if name is not None else "□".join(_wrap(f.name) for f in factors),
                              expr=expr if expr is not None else f"product({','.join(f.expr for f in factors)})")
    isos = [_known_iso(f) for f in factors]
    if all(g is not None for g in isos):
        out._meta["transpose_iso"] = tuple(
            _number([g[c] for g, c in zip(isos, _digits(x, radices))], radices) for x in range(prod(radices)))
    return out


def cartesian_power(topo: Topology, n: int) -> Topology:
    """G^{□n} (Def 14's topology): the n-fold Cartesian product of G with itself."""
    if isinstance(n, bool) or not isinstance(n, int) or n < 1:
        raise TopologyError(f"the Cartesian power n must be an integer >= 1, got {n!r}")
    return cartesian_product([topo] * n, name=f"{_wrap(topo.name)}^{{□{n}}}", expr=f"power({topo.expr},{n})")


# ------------------------------------------------------------------------------- unidirectional -> bidirectional
def bidirectional(topo: Topology) -> Topology:
    """G u G^T (App. A.6): every link together with its reverse, as a multiset (links G already has in both
    directions become parallel pairs, which keeps the graph 2d-regular)."""
    _need_compute_only(topo, "the bidirectional conversion")
    links = topo.links + tuple(type(l)(l.dst, l.src, l.bandwidth, l.alpha) for l in topo.links)
    out = Topology(topo.names, topo.kinds, links, name=f"{_wrap(topo.name)}∪{_wrap(topo.name)}^T",
                   expr=f"bidir({topo.expr})")
    out._meta["transpose_iso"] = tuple(range(topo.num_nodes))
    return out
