"""Graph families of the direct-connect paper (App. F, Table 9), one small pure function each.

Every function returns a unit-link Topology (bandwidth 1, alpha 0) of compute nodes ``0..N-1`` whose ``expr``
rebuilds it and whose ``name`` is the paper's notation.
"""
from __future__ import annotations

from math import gcd

from .expansions import cartesian_product
from .model import Topology, TopologyError, need_int as _need_int


def _with_iso(topo: Topology, iso) -> Topology:
    """Record a known isomorphism G -> G^T (reverse symmetry, Def 6) for the A.6 conversion."""
    topo._meta["transpose_iso"] = tuple(iso)
    return topo


def _symbol_names(words, base: int) -> list[str]:
    """Words over 0..base-1 as names: digits run together when single-digit, else joined by '.'."""
    sep = "" if base <= 10 else "."
    return [sep.join(str(c) for c in w) for w in words]


def uniring(d: int, m: int) -> Topology:
    """UniRing(d,m): the unidirectional ring 0 -> 1 -> ... -> m-1 -> 0 with ``d`` parallel links per hop.

    Table 9: degree d, m nodes, BW- and Moore-optimal with T_L = m - 1; multi-edges when d > 1.
    """
    d, m = _need_int(d, "d", 1), _need_int(m, "m", 2)
    edges = [(i, (i + 1) % m) for i in range(m) for _ in range(d)]
    return _with_iso(Topology.from_edges(m, edges, name=f"UniRing({d},{m})", expr=f"uniring({d},{m})"),
                     [(-x) % m for x in range(m)])


def ring(m: int) -> Topology:
    """The unidirectional ring of m nodes, UniRing(1,m)."""
    base = uniring(1, m)
    return _with_iso(base.with_identity(expr=f"ring({m})"), base._meta["transpose_iso"])


def biring(d: int, m: int | None = None) -> Topology:
    """BiRing(d,m): the bidirectional ring of m nodes with d/2 parallel cables to each neighbour (even d).

    ``biring(m)`` is BiRing(2,m). Table 9: degree d, m >= 3 nodes, BFB T_L = floor(m/2); multi-edges when d > 2.
    """
    if m is None:
        d, m = 2, d
        expr = f"biring({_need_int(m, 'm', 3)})"
    else:
        expr = f"biring({d},{m})"
    d, m = _need_int(d, "d", 2), _need_int(m, "m", 3)
    if d % 2:
        raise TopologyError(f"BiRing needs an even degree d, got {d}")
    edges = []
    for i in range(m):
        for _ in range(d // 2):
            edges.append((i, (i + 1) % m))
            edges.append((i, (i - 1) % m))
    return Topology.from_edges(m, edges, name=f"BiRing({d},{m})", expr=expr)


def complete(m: int) -> Topology:
    """K_m: every ordered pair of distinct nodes is a link; degree m - 1, diameter 1 (Table 9)."""
    m = _need_int(m, "m", 2)
    edges = [(i, j) for i in range(m) for j in range(m) if i != j]
    return Topology.from_edges(m, edges, name=f"K_{m}" if m < 10 else f"K_{{{m}}}", expr=f"complete({m})")


def bipartite(d: int) -> Topology:
    """K_{d,d}: the complete bipartite graph, bidirectional, 2d nodes, degree d, diameter 2 (Fig. 1, Table 9).

    Nodes 0..d-1 form one side and d..2d-1 the other.
    """
    d = _need_int(d, "d", 1)
    edges = [(i, j) for i in range(d) for j in range(d, 2 * d)]
    edges += [(j, i) for i, j in edges]
    return Topology.from_edges(2 * d, edges, name=f"K_{{{d},{d}}}", expr=f"bipartite({d})")


def hamming(n: int, q: int) -> Topology:
    """H(n,q) = K_q^{□n}: words of length n over q symbols, adjacent when they differ in one place
    (Table 9): q^n nodes, degree n(q-1), diameter n; bidirectional."""
    n, q = _need_int(n, "n", 1), _need_int(q, "q", 2)
    return cartesian_product([complete(q)] * n, name=f"H({n},{q})", expr=f"hamming({n},{q})")


def hypercube(n: int) -> Topology:
    """Q_n = H(n,2) = K_2^{□n}: 2^n nodes, degree and diameter n."""
    n = _need_int(n, "n", 1)
    return hamming(n, 2).with_identity(name=f"Q_{n}", expr=f"hypercube({n})")


def kautz(d: int, n: int) -> Topology:
    """K(d,n) = L^n(K_{d+1}) (App. F.2): words s_0..s_n over d+1 symbols with s_i != s_{i+1}, and
    s_0 s_1..s_n -> s_1..s_n x for every x != s_n. (d+1)d^n nodes, degree d, diameter n+1 (Moore optimal);
    reverse-symmetric through word reversal."""
    d, n = _need_int(d, "d", 1), _need_int(n, "n", 0)
    words = [(a,) for a in range(d + 1)]
    for _ in range(n):
        words = [w + (x,) for w in words for x in range(d + 1) if x != w[-1]]
    index = {w: i for i, w in enumerate(words)}
    edges = [(index[w], index[w[1:] + (x,)]) for w in words for x in range(d + 1) if x != w[-1]]
    topo = Topology.from_edges(len(words), edges, name=f"K({d},{n})", expr=f"kautz({d},{n})",
                               node_names=_symbol_names(words, d + 1))
    return _with_iso(topo, [index[w[::-1]] for w in words])


def gkautz(d: int, m: int) -> Topology:
    """Π_{d,m}, the generalized Kautz graph (Def 16, App. F.2): nodes Z_m and x -> -d*x - a (mod m) for
    a = 1..d. Any m >= d+1; Π_{d,d+1} = K_{d+1}, and Π_{d,m} = K(d,n) when m = d^{n+1} + d^n.

    Self-loops are kept exactly as the definition gives them (a loop x -> x where (d+1)x = -a mod m for some
    a): none when (d+1) divides m, otherwise gcd(d+1,m) * floor(d / gcd(d+1,m)) of them. A loop still takes
    one of the d ports, which is the convention that reproduces the paper's Π_{4,64} and Π_{4,1024} numbers.
    """
    d = _need_int(d, "d", 1)
    m = _need_int(m, "m", d + 1)
    edges = [(x, (-d * x - a) % m) for x in range(m) for a in range(1, d + 1)]
    return Topology.from_edges(m, edges, name=f"Π_{{{d},{m}}}", expr=f"gkautz({d},{m})")


def debruijn(d: int, n: int) -> Topology:
    """DBJ(d,n), the de Bruijn digraph: nodes Z_{d^n} (words of n base-d digits) and x -> d*x + a (mod d^n),
    a = 0..d-1 (the paper gives no formula; this rule reproduces its DBJ(4,4) numbers, digest section 6.2).
    Degree d, diameter n, self-loops at the constant words; reverse-symmetric through digit reversal."""
    d, n = _need_int(d, "d", 2), _need_int(n, "n", 1)
    size = d ** n
    edges = [(x, (d * x + a) % size) for x in range(size) for a in range(d)]
    words = [tuple((x // d ** (n - 1 - i)) % d for i in range(n)) for x in range(size)]
    topo = Topology.from_edges(size, edges, name=f"DBJ({d},{n})", expr=f"debruijn({d},{n})",
                               node_names=_symbol_names(words, d))
    return _with_iso(topo, [sum(c * d ** i for i, c in enumerate(w)) for w in words])


def theorem22_generators(m: int, d: int = 4) -> list[int]:
    """The generator multiset for a degree-d circulant on m nodes (App. F.4).

    Theorem 22 (for m > 6): with g = ceil((-1 + sqrt(2m - 1)) / 2), C(m,{g, g+1}) has diameter g, the least of
    any 2-generator circulant. The paper reaches other even degrees with multi-edges; 4 | d repeats g and g+1
    d/4 times each (the same graph with scaled capacity). For d = 2 mod 4 the digest found unequal repeats not
    BW-optimal and the consecutive set {g, ..., g + d/2 - 1} BW-optimal in every case tried, so that is used.
    Small m: m = 5 and 6 use {1, 2} (K_5 and the octahedron; {2, 3} on 6 nodes doubles an edge).
    """
    m, d = _need_int(m, "m", 3), _need_int(d, "d", 2)
    if d % 2:
        raise TopologyError(f"a circulant needs an even degree, got {d}")
    if d == 2:
        return [1]
    if m <= 6:
        g = 1
    else:
        g = 1
        while (2 * g + 1) ** 2 < 2 * m - 1:  # smallest g >= (-1 + sqrt(2m - 1)) / 2
            g += 1
    if d % 4 == 0:
        gens = [g] * (d // 4) + [g + 1] * (d // 4)
    else:
        gens = list(range(g, g + d // 2))
    if 2 * max(gens) > m:
        raise TopologyError(f"no degree-{d} circulant generator set for m = {m}: give the generators explicitly")
    return gens


def circulant(m: int, gens=None, d: int = 4) -> Topology:
    """C(m,{a_1..a_k}) (Def 18, App. F.4): bidirectional, node i joined to i + a_j and i - a_j (mod m).

    Degree 2k, counted with multiplicity: a repeated generator, or a = m/2 (where i + a = i - a), gives
    parallel links so that the graph stays 2k-regular. Connected iff gcd(m, a_1..a_k) = 1. Without ``gens``,
    the Theorem 22 choice for degree ``d`` (``theorem22_generators``).
    """
    m = _need_int(m, "m", 3)
    if gens is None:
        gens = theorem22_generators(m, d)
    if isinstance(gens, int) and not isinstance(gens, bool):
        gens = [gens]
    gens = sorted(_need_int(a % m if isinstance(a, int) else a, "a generator", 1) for a in gens)
    if not gens:
        raise TopologyError("a circulant needs at least one generator")
    if gcd(m, *gens) != 1:
        raise TopologyError(f"C({m},{{{','.join(map(str, gens))}}}) is not connected: gcd(m, generators) > 1")
    edges = [(i, (i + s * a) % m) for i in range(m) for a in gens for s in (1, -1)]
    text = ",".join(map(str, gens))
    return Topology.from_edges(m, edges, name=f"C({m},{{{text}}})", expr=f"circulant({m},[{text}])")


def dcirculant(m: int, offsets=None) -> Topology:
    """The directed circulant: i -> i + a (mod m) for every offset a.

    ``dcirculant(d)`` is Table 9's degree-d directed circulant on d+2 nodes with offsets 1..d (the paper gives
    no formula; with it, every node misses only i - 1, two hops away through any out-neighbour, so D = 2 and
    the graph is Moore optimal; digest section 6.4). Reverse-symmetric through x -> -x.
    """
    if offsets is None:
        d = _need_int(m, "d", 1)
        m, offsets, expr = d + 2, list(range(1, d + 1)), f"dcirculant({d})"
    else:
        m = _need_int(m, "m", 2)
        if isinstance(offsets, int) and not isinstance(offsets, bool):
            offsets = [offsets]
        offsets = sorted(_need_int(a % m if isinstance(a, int) else a, "an offset", 1) for a in offsets)
        if not offsets:
            raise TopologyError("a directed circulant needs at least one offset")
        expr = f"dcirculant({m},[{','.join(map(str, offsets))}])"
    if gcd(m, *offsets) != 1:
        raise TopologyError(f"the directed circulant on {m} nodes with offsets {offsets} is not strongly connected")
    edges = [(i, (i + a) % m) for i in range(m) for a in offsets]
    topo = Topology.from_edges(m, edges, name=f"DC({m},{{{','.join(map(str, offsets))}}})", expr=expr)
    return _with_iso(topo, [(-x) % m for x in range(m)])


def torus(*dims: int) -> Topology:
    """The torus d_1 x ... x d_k = BiRing(2,d_1) □ ... □ BiRing(2,d_k) (section 5.3, Def 3): degree 2k and
    diameter sum floor(d_i / 2). A dimension of size 2 joins its two nodes by a double link (both ring
    neighbours are the same node), which keeps the graph 2k-regular."""
    if not dims:
        raise TopologyError("torus needs at least one dimension, e.g. torus(4,4)")
    dims = tuple(_need_int(x, "a torus dimension", 2) for x in dims)
    rings = []
    for x in dims:
        edges = [(i, (i + s) % x) for i in range(x) for s in (1, -1)]
        rings.append(Topology.from_edges(x, edges, name=f"BiRing(2,{x})", expr=f"biring({x})"))
    text = ",".join(map(str, dims))
    return cartesian_product(rings, name=f"Torus({'×'.join(map(str, dims))})", expr=f"torus({text})")


def twisted_torus(a: int, b: int, twist: int | None = None) -> Topology:
    """A 2D twisted torus (Cámara et al., "Twisted Torus Topologies for Enhanced Interconnection Networks",
    IEEE TPDS 21(12), 2010): the a x b torus of nodes (x, y), x in Z_a, y in Z_b, whose wrap-around links in
    the x dimension are shifted by ``twist`` in y: (a-1, y) <-> (0, y + twist mod b). Every other link is the
    usual torus link. The default twist b // 2 gives their rectangular twisted torus when b = 2a. Degree 4
    (counting parallel links of 2-wide dimensions), bidirectional. The direct-connect paper (section 6.2) cites
    it as TPU v4's topology and reports BFB on it BW-optimal."""
    a, b = _need_int(a, "a", 2), _need_int(b, "b", 2)
    twist = b // 2 if twist is None else _need_int(twist, "twist", 0) % b
    node = lambda x, y: x * b + y  # noqa: E731
    edges = []
    for x in range(a):
        for y in range(b):
            edges += [(node(x, y), node(x, (y + 1) % b)), (node(x, (y + 1) % b), node(x, y))]
            nx_, ny = (x + 1, y) if x + 1 < a else (0, (y + twist) % b)
            edges += [(node(x, y), node(nx_, ny)), (node(nx_, ny), node(x, y))]
    names = [f"{x},{y}" for x in range(a) for y in range(b)]
    return Topology.from_edges(a * b, edges, node_names=names, name=f"TT({a}×{b},{twist})",
                               expr=f"twisted_torus({a},{b},{twist})")
