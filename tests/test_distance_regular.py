"""Distance-regular graphs of Table 8 (direct-connect paper App. F.3): size, degree, diameter and the
intersection numbers checked from the definition of distance-regularity."""
import numpy as np
import pytest

from topologies import distance_regular as dr, parse_topology
from topologies.model import TopologyError
from topologies.properties import diameter, distance_matrix, in_degrees, out_degrees

# builder, args, N, T_L (= diameter) from Table 8, and the intersection array {b_0..b_{D-1}; c_1..c_D}
# (distanceregular.org) that the built graph must show.
CASES = [
    (dr.octahedron, (), 6, 2, ([4, 1], [1, 4])),
    (dr.paley, (9,), 9, 2, ([4, 2], [1, 2])),
    (dr.crown, (5,), 10, 3, ([4, 3, 1], [1, 3, 4])),
    (dr.heawood_distance3, (), 14, 3, ([4, 3, 2], [1, 2, 4])),
    (dr.petersen_line, (), 15, 3, ([4, 2, 1], [1, 1, 4])),
    (dr.heawood_line, (), 21, 3, ([4, 2, 2], [1, 1, 2])),
    (dr.pg23, (), 26, 3, ([4, 3, 3], [1, 1, 4])),
    (dr.ag24, (), 32, 4, ([4, 3, 3, 1], [1, 1, 3, 4])),
    (dr.odd_graph, (4,), 35, 3, ([4, 3, 3], [1, 1, 2])),
    (dr.tutte8_line, (), 45, 4, ([4, 2, 2, 2], [1, 1, 1, 2])),
    (dr.doubled_odd, (4,), 70, 7, ([4, 3, 3, 2, 2, 1, 1], [1, 1, 2, 2, 3, 3, 4])),
    (dr.gq33, (), 80, 4, ([4, 3, 3, 3], [1, 1, 1, 4])),
    (dr.tutte12_line, (), 189, 6, ([4, 2, 2, 2, 2, 2], [1, 1, 1, 1, 1, 2])),
    (dr.gh33, (), 728, 6, ([4, 3, 3, 3, 3, 3], [1, 1, 1, 1, 1, 4])),
]
IDS = [f"{c[0].__name__}{c[1]}" for c in CASES]


def intersection_numbers(dist: np.ndarray):
    """b_i and c_i, asserting that each is the same for every pair (x, y) at distance i (Def 17)."""
    n = dist.shape[0]
    nbrs = [np.flatnonzero(row == 1) for row in dist]
    assert len({len(x) for x in nbrs}) == 1, "not regular"
    nbr = np.array(nbrs)                                   # (n, k): the neighbours of every vertex
    diam = int(dist.max())
    b, c = [], []
    for i in range(diam + 1):
        at_i = dist == i
        for j, out in ((i + 1, b), (i - 1, c), (i, None)):
            # counts[x, y] = number of neighbours z of x with d(z, y) = j
            counts = (dist[nbr] == j).sum(axis=1)[at_i] if 0 <= j <= diam else np.zeros(int(at_i.sum()), int)
            assert counts.min() == counts.max(), f"pairs at distance {i} disagree on neighbours at distance {j}"
            if out is not None:
                out.append(int(counts[0]))
    return b[:-1], c[1:]


def girth(topo) -> int:
    """The length of a shortest cycle of an undirected simple graph: a breadth-first search from every vertex, a
    non-tree edge between depths a and b closing a cycle of at most a + b + 1."""
    adj = [sorted({topo.links[i].dst for i in topo.out_links[u]}) for u in range(topo.n)]
    best = None
    for s in range(topo.n):
        depth, parent, frontier = {s: 0}, {s: -1}, [s]
        while frontier:
            nxt = []
            for u in frontier:
                for v in adj[u]:
                    if v not in depth:
                        depth[v], parent[v] = depth[u] + 1, u
                        nxt.append(v)
                    elif v != parent[u]:
                        cycle = depth[u] + depth[v] + 1
                        best = cycle if best is None else min(best, cycle)
            frontier = nxt
    return best


@pytest.mark.parametrize("build, args, n, t_l, array", CASES, ids=IDS)
def test_table8_graph(build, args, n, t_l, array):
    topo = build(*args)
    assert topo.num_nodes == n == topo.n
    assert out_degrees(topo) == [4] * n and in_degrees(topo) == [4] * n
    assert all(link.src != link.dst for link in topo.links)
    assert len(topo.simple_edges()) == len(topo.links)  # no parallel links
    assert topo.is_bidirectional
    assert diameter(topo) == t_l
    assert intersection_numbers(distance_matrix(topo)) == array


@pytest.mark.parametrize("build, args, n, t_l, array", CASES, ids=IDS)
def test_expression_rebuilds_and_size_matches(build, args, n, t_l, array):
    topo = build(*args)
    builder, size, usage = dr.EXPRESSIONS[build.__name__]
    assert builder is build and size(*args) == (n, len(topo.links)) and usage.startswith(build.__name__ + "(")
    again = parse_topology(topo.expr)
    assert again.links == topo.links and again.names == topo.names and again.name == topo.name
    assert topo.name and len(set(topo.names)) == n


def test_every_expression_is_tested():
    assert set(dr.EXPRESSIONS) == {c[0].__name__ for c in CASES}


@pytest.mark.parametrize("build, args, n, diam, degree", [
    (dr.paley, (5,), 5, 2, 2),
    (dr.paley, (13,), 13, 2, 6),
    (dr.paley, (49,), 49, 2, 24),
    (dr.crown, (3,), 6, 3, 2),
    (dr.odd_graph, (2,), 3, 1, 2),
    (dr.odd_graph, (3,), 10, 2, 3),  # Petersen
    (dr.doubled_odd, (2,), 6, 3, 2),  # hexagon
    (dr.doubled_odd, (3,), 20, 5, 3),  # desargues graph
])
def test_other_parameters(build, args, n, diam, degree):
    topo = build(*args)
    assert topo.num_nodes == n and out_degrees(topo) == [degree] * n and topo.is_bidirectional
    assert diameter(topo) == diam
    intersection_numbers(distance_matrix(topo))
    assert dr.EXPRESSIONS[build.__name__][1](*args) == (n, len(topo.links))


@pytest.mark.parametrize("build, arg", [
    (dr.paley, 7), (dr.paley, 15), (dr.paley, 25), (dr.paley, 1), (dr.paley, 9.0), (dr.paley, True),
    (dr.paley, "9"), (dr.crown, 2), (dr.crown, 5.5), (dr.odd_graph, 1), (dr.odd_graph, None),
    (dr.doubled_odd, 0), (dr.doubled_odd, "4"),
])
def test_bad_arguments_raise(build, arg):
    with pytest.raises(TopologyError) as info:
        build(arg)
    assert "\n" not in str(info.value)


def test_paley_9_names_gf9_elements():
    assert set(dr.paley(9).names) == {"0", "1", "2", "i", "1+i", "2+i", "2i", "1+2i", "2+2i"}


def test_gh33_is_the_generalized_hexagon_of_order_3():
    """GH(3,3) (Table 8's last row): 364 points of Q(6,3) and 364 lines, 4 points on a line and 4 lines through a
    point, bipartite between them, girth 12 and diameter 6 -- the axioms of a generalized hexagon of order (3,3)
    read on its incidence graph (every two elements at distance <= 6, no cycle shorter than 12)."""
    topo = dr.gh33()
    points = [i for i, name in enumerate(topo.names) if name.startswith("(")]
    lines = [i for i, name in enumerate(topo.names) if name.startswith("L")]
    assert len(points) == len(lines) == 364 and len(points) + len(lines) == topo.n == 728
    side = {i: 0 for i in points} | {i: 1 for i in lines}
    assert all(side[l.src] != side[l.dst] for l in topo.links)
    for p in (topo.names[i] for i in points):   # every point lies on the quadric x0x4 + x1x5 + x2x6 = x3^2
        x = [int(c) for c in p[1:-1].split(":")]
        assert (x[0] * x[4] + x[1] * x[5] + x[2] * x[6] - x[3] ** 2) % 3 == 0
    assert girth(topo) == 12
    assert diameter(topo) == 6
    assert len(topo.links) == 2 * 364 * 4


def test_girth_of_the_other_incidence_graphs():
    """The same girth function on known cages: PG(2,3) (a generalized triangle) 6, GQ(3,3) 8, Tutte's 12-cage's
    line graph 3 (a line graph of a cubic graph has triangles), the octahedron 3, the crown K_{5,5}-I 4."""
    assert [girth(b()) for b in (dr.pg23, dr.gq33, dr.tutte12_line, dr.octahedron, dr.crown)] == [6, 8, 3, 3, 4]


def test_moore_columns_of_table8_for_gh33():
    """Table 8 prints N = 728, T_L = 6, T_L* = 5 (directed Moore bound at degree 4: 341 < 728 <= 1365) and
    T_L** = 6 (undirected: 485 < 728 <= 1457)."""
    from topologies.properties import moore_diameter_directed, moore_diameter_undirected
    assert (moore_diameter_directed(728, 4), moore_diameter_undirected(728, 4)) == (5, 6)


def test_gh33_joins_the_finder_catalogue():
    """The finder seeds every graph of ``EXPRESSIONS``: at N = 728, d = 4 GH(3,3) is the BW-optimal point of the
    frontier, 6 steps (its diameter, Table 8's T_L) at tb 727/728, from its verified BFB schedule (Theorem 18)."""
    from fractions import Fraction

    from solvers.directconnect.finder import Finder, build_candidate

    (c,) = [c for c in Finder().frontier(728, 4) if c.expr == "gh33()"]
    assert (c.steps, c.tb, c.bidirectional) == (6, Fraction(727, 728), True)
    built = build_candidate(c)
    assert built.agrees and built.diameter == 6
