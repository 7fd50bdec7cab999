"""Distance-regular graphs of degree 4 (direct-connect paper App. F.3, Table 8), each from its definition.

A connected graph is distance-regular when, for two vertices x, y at distance h, the number of vertices at
distance i from x and j from y depends only on (h, i, j) (paper Def 17). Theorem 18 of the paper gives every such
graph a bandwidth-optimal BFB schedule, and Table 8 lists the degree-4 examples built here: all 15 of them, the 4-cube
Q4 in ``families.hypercube`` and the other 14 in this module.

Every function returns a bidirectional unit-link Topology: each undirected edge {u, v} becomes the two links
u -> v and v -> u. Node ids are readable labels (subsets, field elements, homogeneous coordinates, ...), ``name`` is
the paper's notation and ``expr`` the expression that rebuilds the graph. Nothing is built at import time.
"""
from __future__ import annotations

from itertools import combinations, product
from math import comb
from typing import Iterable, Sequence

from .model import Topology, TopologyError, need_int as _need_int

# --------------------------------------------------------------------------------------------------- helpers


def _is_prime(p: int) -> bool:
    return p >= 2 and all(p % k for k in range(2, int(p ** 0.5) + 1))


def _build(names: Sequence[str], edges: Iterable[tuple[int, int]], name: str, expr: str) -> Topology:
    """A bidirectional unit-link topology: both directions of every undirected edge, in sorted order."""
    undirected = sorted({(min(u, v), max(u, v)) for u, v in edges})
    if any(u == v for u, v in undirected):  # pragma: no cover - the constructions never make loops
        raise TopologyError(f"{name}: construction produced a self-loop")
    links = [link for u, v in undirected for link in ((u, v), (v, u))]
    return Topology.from_edges(len(names), links, name=name, expr=expr, node_names=list(names))


def _subset_name(s: Iterable[int]) -> str:
    return "{" + ",".join(str(x) for x in sorted(s)) + "}"


def _line_graph(names: Sequence[str], edges: Iterable[tuple[int, int]]) -> tuple[list[str], list[tuple[int, int]]]:
    """The undirected line graph: one vertex per edge, two joined when the edges share an endpoint."""
    base = sorted({(min(u, v), max(u, v)) for u, v in edges})
    at: dict[int, list[int]] = {}
    for k, (u, v) in enumerate(base):
        at.setdefault(u, []).append(k)
        at.setdefault(v, []).append(k)
    out = {(a, b) for ks in at.values() for a, b in combinations(ks, 2)}
    return [f"{names[u]}-{names[v]}" for u, v in base], sorted(out)


def _distances_from(adj: Sequence[Sequence[int]], src: int) -> list[int]:
    """Breadth-first hop distances from ``src`` in an undirected graph given by adjacency lists."""
    dist = [-1] * len(adj)
    dist[src] = 0
    frontier = [src]
    while frontier:
        nxt = []
        for u in frontier:
            for v in adj[u]:
                if dist[v] < 0:
                    dist[v] = dist[u] + 1
                    nxt.append(v)
        frontier = nxt
    return dist


def _normalised_vectors(dim: int, q: int) -> list[tuple[int, ...]]:
    """The points of PG(dim-1, q), q prime: nonzero vectors of GF(q)^dim whose first nonzero entry is 1."""
    return [v for v in product(range(q), repeat=dim) if any(v) and v[next(i for i, x in enumerate(v) if x)] == 1]


def _normalise(v: Sequence[int], q: int) -> tuple[int, ...]:
    lead = next(x for x in v if x % q)
    inv = pow(lead, -1, q)
    return tuple(x * inv % q for x in v)


def _coords(v: Sequence[int], open_: str = "(", close: str = ")") -> str:
    return open_ + ":".join(str(x) for x in v) + close


def _projective_plane(q: int) -> tuple[list[str], list[tuple[int, int]]]:
    """Incidence graph of PG(2,q), q prime: points (x:y:z) and lines [a:b:c], point on line iff ax+by+cz = 0."""
    vecs = _normalised_vectors(3, q)
    n = len(vecs)
    names = [_coords(v) for v in vecs] + [_coords(v, "[", "]") for v in vecs]
    edges = [(i, n + j) for i, p in enumerate(vecs) for j, l in enumerate(vecs)
             if sum(a * b for a, b in zip(p, l)) % q == 0]
    return names, edges


def _symplectic_quadrangle(q: int) -> tuple[list[str], list[tuple[int, int]]]:
    """Incidence graph of W(q) = GQ(q,q), q prime.

    Points: the points of PG(3,q). Lines: the totally isotropic lines of the symplectic form
    B(x,y) = x1*y2 - x2*y1 + x3*y4 - x4*y3, i.e. lines spanned by two points p, r with B(p,r) = 0.
    """
    pts = _normalised_vectors(4, q)
    index = {p: i for i, p in enumerate(pts)}

    def form(x, y):
        return (x[0] * y[1] - x[1] * y[0] + x[2] * y[3] - x[3] * y[2]) % q

    lines: set[frozenset[int]] = set()
    for p, r in combinations(pts, 2):
        if form(p, r) == 0:
            span = {_normalise([a * x + b * y for x, y in zip(p, r)], q)
                    for a in range(q) for b in range(q) if a or b}
            lines.add(frozenset(index[s] for s in span))
    lines_sorted = sorted(tuple(sorted(line)) for line in lines)
    n = len(pts)
    names = [_coords(p) for p in pts] + [f"L{k}" for k in range(len(lines_sorted))]
    edges = [(i, n + k) for k, line in enumerate(lines_sorted) for i in line]
    return names, edges


def _split_cayley_hexagon(q: int) -> tuple[list[str], list[tuple[int, int]]]:
    """Incidence graph of the split Cayley hexagon H(q) = GH(q,q), q an odd prime.

    Points: the points of the parabolic quadric Q(6,q) of PG(6,q), x0*x4 + x1*x5 + x2*x6 = x3^2. Lines: the lines
    of PG(6,q) lying on that quadric whose Grassmann coordinates p_ij = x_i*y_j - x_j*y_i (x, y two points of the
    line) satisfy Tits' six linear equations p12 = p34, p54 = p32, p20 = p35, p65 = p30, p01 = p36, p46 = p31
    (as H. Van Maldeghem, Generalized Polygons, 1998, section 2.4, writes them). Two points x, y of the quadric
    span a line of the quadric iff the polar form B(x, y) vanishes (q odd). Every line has q + 1 points and every
    point lies on q + 1 lines, so there are (q^6 - 1)/(q - 1) of each.
    """
    def quadric(x):
        return (x[0] * x[4] + x[1] * x[5] + x[2] * x[6] - x[3] * x[3]) % q

    def polar(x, y):
        return (x[0] * y[4] + x[4] * y[0] + x[1] * y[5] + x[5] * y[1] + x[2] * y[6] + x[6] * y[2]
                - 2 * x[3] * y[3]) % q

    equations = (((1, 2), (3, 4)), ((5, 4), (3, 2)), ((2, 0), (3, 5)), ((6, 5), (3, 0)), ((0, 1), (3, 6)),
                 ((4, 6), (3, 1)))
    pts = [v for v in _normalised_vectors(7, q) if quadric(v) == 0]
    index = {p: i for i, p in enumerate(pts)}
    lines: set[tuple[int, ...]] = set()
    for i, j in combinations(range(len(pts)), 2):
        x, y = pts[i], pts[j]
        if polar(x, y):
            continue
        if all((x[a] * y[b] - x[b] * y[a] - x[c] * y[e] + x[e] * y[c]) % q == 0 for (a, b), (c, e) in equations):
            lines.add(tuple(sorted({index[_normalise([s * u + t * w for u, w in zip(x, y)], q)]
                                    for s in range(q) for t in range(q) if s or t})))
    lines_sorted = sorted(lines)
    n = len(pts)
    names = [_coords(p) for p in pts] + [f"L{k}" for k in range(len(lines_sorted))]
    edges = [(i, n + k) for k, line in enumerate(lines_sorted) for i in line]
    return names, edges


def _lcf(n: int, jumps: Sequence[int], repeats: int) -> list[tuple[int, int]]:
    """A cubic graph in LCF notation: the Hamiltonian cycle 0..n-1 plus chords i ~ i + jumps[i mod len]."""
    seq = list(jumps) * repeats
    assert len(seq) == n
    edges = {(i, (i + 1) % n) for i in range(n)}
    edges |= {(i, (i + seq[i]) % n) for i in range(n)}
    return sorted((min(u, v), max(u, v)) for u, v in edges)


# ------------------------------------------------------------------------------------------------ the graphs


def octahedron() -> Topology:
    """J(4,2), the octahedron: the 2-subsets of {1,2,3,4}, two joined when they share exactly one element.

    Equivalently K_6 minus a perfect matching. 6 nodes, degree 4, diameter 2 (direct-connect paper App. F.3,
    Table 8).
    """
    subsets = list(combinations(range(1, 5), 2))
    edges = [(i, j) for i, j in combinations(range(len(subsets)), 2) if len(set(subsets[i]) & set(subsets[j])) == 1]
    return _build([_subset_name(s) for s in subsets], edges, "J(4,2)", "octahedron()")


def _paley_field(q: int):
    """Elements, names, subtraction and squaring of GF(q) for the supported q (see ``paley``)."""
    if _is_prime(q):
        elems = list(range(q))
        return elems, [str(x) for x in elems], (lambda x, y: (x - y) % q), (lambda x: x * x % q)
    p = round(q ** 0.5)
    if p * p == q and _is_prime(p) and p % 4 == 3:
        # GF(p^2) = GF(p)[i] with i^2 = -1 (x^2 + 1 is irreducible over GF(p) when p = 3 mod 4).
        elems = [(a, b) for b in range(p) for a in range(p)]

        def show(e):
            a, b = e
            if b == 0:
                return str(a)
            im = "i" if b == 1 else f"{b}i"
            return im if a == 0 else f"{a}+{im}"

        return (elems, [show(e) for e in elems],
                (lambda x, y: ((x[0] - y[0]) % p, (x[1] - y[1]) % p)),
                (lambda x: ((x[0] * x[0] - x[1] * x[1]) % p, 2 * x[0] * x[1] % p)))
    raise TopologyError(f"paley(q) supports q a prime = 1 mod 4 or the square of a prime = 3 mod 4, got {q}")


def paley(q: int = 9) -> Topology:
    """P_q, the Paley graph on GF(q): x ~ y iff x - y is a nonzero square in GF(q).

    q must be 1 mod 4 (so that -1 is a square and the relation is symmetric); supported are primes q = 1 mod 4 and
    q = p^2 with p a prime = 3 mod 4 (GF(p^2) = GF(p)[i], i^2 = -1). Degree (q-1)/2, diameter 2. P_9 is
    isomorphic to the rook's graph H(2,3) = K_3 x K_3: 9 nodes, degree 4 (direct-connect paper App. F.3, Table 8).
    """
    q = _need_int(q, "q", 5)
    if q % 4 != 1:
        raise TopologyError(f"paley(q) needs q = 1 mod 4, got {q}")
    elems, names, sub, square = _paley_field(q)
    zero = elems[0]
    squares = {square(x) for x in elems if x != zero}
    edges = [(i, j) for i, j in combinations(range(q), 2) if sub(elems[i], elems[j]) in squares]
    return _build(names, edges, f"P_{q}", f"paley({q})")


def crown(n: int = 5) -> Topology:
    """K_{n,n} - I, the crown graph: u_0..u_{n-1} and v_0..v_{n-1}, u_i ~ v_j iff i != j.

    Degree n-1, diameter 3 for n >= 3. crown(5): 10 nodes, degree 4, diameter 3 (direct-connect paper App. F.3,
    Table 8).
    """
    n = _need_int(n, "n", 3)
    names = [f"u{i}" for i in range(n)] + [f"v{j}" for j in range(n)]
    edges = [(i, n + j) for i in range(n) for j in range(n) if i != j]
    return _build(names, edges, f"K_{{{n},{n}}}−I", f"crown({n})")


def heawood_distance3() -> Topology:
    """The distance-3 graph of the Heawood graph: its 14 vertices, joined when they are at distance 3 there.

    The Heawood graph is the point-line incidence graph of the Fano plane PG(2,2); vertices at distance 3 are a
    point and a line not through it. 14 nodes, degree 4, diameter 3 (direct-connect paper App. F.3, Table 8).
    """
    names, base = _projective_plane(2)
    adj: list[list[int]] = [[] for _ in names]
    for u, v in base:
        adj[u].append(v)
        adj[v].append(u)
    edges = []
    for u in range(len(names)):
        dist = _distances_from(adj, u)
        edges += [(u, v) for v in range(u + 1, len(names)) if dist[v] == 3]
    return _build(names, edges, "Dist3(Heawood)", "heawood_distance3()")


def _odd_graph_edges(n: int) -> tuple[list[str], list[tuple[int, int]]]:
    subsets = list(combinations(range(1, 2 * n), n - 1))
    edges = [(i, j) for i, j in combinations(range(len(subsets)), 2) if not set(subsets[i]) & set(subsets[j])]
    return [_subset_name(s) for s in subsets], edges


def petersen_line() -> Topology:
    """L(Petersen): the line graph of the Petersen graph (edges as vertices, joined when they share an endpoint).

    The Petersen graph is the odd graph O_3 = Kneser graph K(5,2). 15 nodes, degree 4, diameter 3
    (direct-connect paper App. F.3, Table 8).
    """
    names, edges = _line_graph(*_odd_graph_edges(3))
    return _build(names, edges, "L(Petersen)", "petersen_line()")


def heawood_line() -> Topology:
    """L(Heawood): the line graph of the Heawood graph, the incidence graph of the Fano plane PG(2,2).

    Its vertices are the 21 flags (point, line through it). 21 nodes, degree 4, diameter 3 (direct-connect paper
    App. F.3, Table 8).
    """
    names, edges = _line_graph(*_projective_plane(2))
    return _build(names, edges, "L(Heawood)", "heawood_line()")


def pg23() -> Topology:
    """The incidence graph of the projective plane PG(2,3).

    Points (x:y:z) and lines [a:b:c] are the 13 nonzero vectors of GF(3)^3 up to scaling; a point lies on a line
    iff ax + by + cz = 0 (mod 3). 26 nodes, degree 4, diameter 3 (direct-connect paper App. F.3, Table 8).
    """
    names, edges = _projective_plane(3)
    return _build(names, edges, "PG(2,3)", "pg23()")


_GF4 = ("0", "1", "a", "a+1")  # GF(4) = GF(2)[a]/(a^2 + a + 1); element k has bits (c0, c1) = c0 + c1*a


def _gf4_mul(x: int, y: int) -> int:
    prod = 0
    for bit in range(2):  # carry-less product, then reduce a^2 -> a + 1
        if y >> bit & 1:
            prod ^= x << bit
    if prod & 4:
        prod ^= 0b111
    return prod


def ag24() -> Topology:
    """The incidence graph of the affine plane AG(2,4) minus one parallel class.

    Points: (x,y) in GF(4)^2. Lines: y = m*x + b for m, b in GF(4) (the vertical lines, one parallel class, are
    dropped). GF(4) = {0, 1, a, a+1}, addition is XOR, a^2 = a + 1. 16 + 16 = 32 nodes, degree 4, diameter 4
    (direct-connect paper App. F.3, Table 8).
    """
    points = [(x, y) for x in range(4) for y in range(4)]
    lines = [(m, b) for m in range(4) for b in range(4)]
    names = [f"({_GF4[x]},{_GF4[y]})" for x, y in points] + [f"y={_GF4[m]}x+{_GF4[b]}" for m, b in lines]
    edges = [(i, 16 + k) for i, (x, y) in enumerate(points) for k, (m, b) in enumerate(lines)
             if y == _gf4_mul(m, x) ^ b]
    return _build(names, edges, "AG(2,4)−P", "ag24()")


def odd_graph(n: int = 4) -> Topology:
    """O_n, the odd graph = Kneser graph K(2n-1, n-1): the (n-1)-subsets of {1..2n-1}, joined when disjoint.

    C(2n-1, n-1) nodes, degree n, diameter n-1. O_4: 35 nodes, degree 4, diameter 3 (direct-connect paper
    App. F.3, Table 8).
    """
    n = _need_int(n, "n", 2)
    names, edges = _odd_graph_edges(n)
    return _build(names, edges, f"O_{n}", f"odd_graph({n})")


def doubled_odd(n: int = 4) -> Topology:
    """D(O_n), the doubled odd graph: the (n-1)- and n-subsets of {1..2n-1}, joined when one contains the other.

    2*C(2n-1, n-1) nodes, degree n, diameter 2n-1. D(O_4): 70 nodes, degree 4, diameter 7 (direct-connect paper
    App. F.3, Table 8).
    """
    n = _need_int(n, "n", 2)
    small = list(combinations(range(1, 2 * n), n - 1))
    large = list(combinations(range(1, 2 * n), n))
    names = [_subset_name(s) for s in small] + [_subset_name(s) for s in large]
    edges = [(i, len(small) + j) for i, s in enumerate(small) for j, t in enumerate(large) if set(s) <= set(t)]
    return _build(names, edges, f"D(O_{n})", f"doubled_odd({n})")


def gq33() -> Topology:
    """The incidence graph of the generalized quadrangle GQ(3,3), the symplectic quadrangle W(3).

    Points: the 40 points of PG(3,3). Lines: the 40 lines of PG(3,3) that are totally isotropic for the
    symplectic form x1*y2 - x2*y1 + x3*y4 - x4*y3. 80 nodes, degree 4, diameter 4 (direct-connect paper App. F.3,
    Table 8).
    """
    names, edges = _symplectic_quadrangle(3)
    return _build(names, edges, "GQ(3,3)", "gq33()")


def tutte8_line() -> Topology:
    """L(Tutte8): the line graph of Tutte's 8-cage (the Tutte-Coxeter graph, the unique cubic graph of girth 8 on
    30 vertices).

    The 8-cage is built as the incidence graph of the symplectic quadrangle W(2) = GQ(2,2) (15 points and 15
    totally isotropic lines of PG(3,2)). 45 nodes, degree 4, diameter 4 (direct-connect paper App. F.3, Table 8).
    """
    names, edges = _line_graph(*_symplectic_quadrangle(2))
    return _build(names, edges, "L(Tutte8)", "tutte8_line()")


_TUTTE12_LCF = (17, 27, -13, -59, -35, 35, -11, 13, -53, 53, -27, 21, 57, 11, -21, -57, 59, -17)


def tutte12_line() -> Topology:
    """L(Tutte12): the line graph of Tutte's 12-cage (the unique cubic graph of girth 12 on 126 vertices, the
    incidence graph of the generalized hexagon GH(2,2)).

    The 12-cage is built from its LCF notation [17,27,-13,-59,-35,35,-11,13,-53,53,-27,21,57,11,-21,-57,59,-17]^7.
    189 nodes, degree 4, diameter 6 (direct-connect paper App. F.3, Table 8).
    """
    base = _lcf(126, _TUTTE12_LCF, 7)
    names, edges = _line_graph([str(i) for i in range(126)], base)
    return _build(names, edges, "L(Tutte12)", "tutte12_line()")


def gh33() -> Topology:
    """The incidence graph of the generalized hexagon GH(3,3), the split Cayley hexagon H(3).

    Its 364 points are the points of the parabolic quadric Q(6,3) in PG(6,3) and its 364 lines are the lines of
    that quadric picked out by Tits' Grassmann-coordinate equations (``_split_cayley_hexagon``). 728 nodes,
    degree 4, diameter 6, girth 12, intersection array {4,3,3,3,3,3; 1,1,1,1,1,4} (direct-connect paper App. F.3,
    Table 8: T_L = 6, T_L* = 5, T_L** = 6).
    """
    names, edges = _split_cayley_hexagon(3)
    return _build(names, edges, "GH(3,3)", "gh33()")


def _odd_nodes(n: int) -> int:
    """C(2n-1, n-1), the node count of the odd graph O_n; 10^18 (above every limit) from n = 33 on, without
    computing a binomial of millions of digits for a huge n."""
    return comb(2 * n - 1, n - 1) if n < 33 else 10 ** 18


# expression name -> (builder, (nodes, links) size function taking the same arguments, usage string)
EXPRESSIONS = {
    "octahedron": (octahedron, lambda: (6, 24), "octahedron(): J(4,2), 6 nodes"),
    "paley": (paley, lambda q=9: (q, q * (q - 1) // 2), "paley(q=9): Paley graph P_q, q nodes"),
    "crown": (crown, lambda n=5: (2 * n, 2 * n * (n - 1)), "crown(n=5): K_{n,n} minus a perfect matching, 2n nodes"),
    "heawood_distance3": (heawood_distance3, lambda: (14, 56), "heawood_distance3(): distance-3 graph of Heawood, 14 nodes"),
    "petersen_line": (petersen_line, lambda: (15, 60), "petersen_line(): line graph of Petersen, 15 nodes"),
    "heawood_line": (heawood_line, lambda: (21, 84), "heawood_line(): line graph of Heawood, 21 nodes"),
    "pg23": (pg23, lambda: (26, 104), "pg23(): incidence graph of PG(2,3), 26 nodes"),
    "ag24": (ag24, lambda: (32, 128), "ag24(): incidence graph of AG(2,4) minus a parallel class, 32 nodes"),
    "odd_graph": (odd_graph, lambda n=4: (_odd_nodes(n), n * _odd_nodes(n)),
                  "odd_graph(n=4): odd graph O_n, C(2n-1,n-1) nodes"),
    "doubled_odd": (doubled_odd, lambda n=4: (2 * _odd_nodes(n), 2 * n * _odd_nodes(n)),
                    "doubled_odd(n=4): doubled odd graph D(O_n), 2*C(2n-1,n-1) nodes"),
    "gq33": (gq33, lambda: (80, 320), "gq33(): incidence graph of GQ(3,3), 80 nodes"),
    "tutte8_line": (tutte8_line, lambda: (45, 180), "tutte8_line(): line graph of Tutte's 8-cage, 45 nodes"),
    "tutte12_line": (tutte12_line, lambda: (189, 756), "tutte12_line(): line graph of Tutte's 12-cage, 189 nodes"),
    "gh33": (gh33, lambda: (728, 2912), "gh33(): incidence graph of the generalized hexagon GH(3,3), 728 nodes"),
}
