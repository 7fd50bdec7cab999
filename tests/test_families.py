"""The defining properties of every family of the catalogue (direct-connect paper App. F, Table 9)."""
from collections import Counter
from fractions import Fraction
from itertools import product
from math import gcd

import networkx as nx
import pytest
from hypothesis import given, settings
from hypothesis import strategies as st

from solvers.directconnect.bfb import bfb_allgather
from solvers.core.cost import tb_factor
from topologies import TopologyError, parse_topology
from topologies import families as fam
from topologies.properties import degree, diameter, in_degrees, is_regular, out_degrees
from topologies.symmetry import is_transpose_isomorphism, transpose_isomorphism


def loops(topo):
    return sum(l.src == l.dst for l in topo.links)


def parallels(topo):
    return sum(c - 1 for c in Counter((l.src, l.dst) for l in topo.links).values())


# expression, N, degree, diameter, self-loops, parallel links, bidirectional
TABLE = [
    ("complete(5)", 5, 4, 1, 0, 0, True),
    ("bipartite(4)", 8, 4, 2, 0, 0, True),
    ("hamming(2,3)", 9, 4, 2, 0, 0, True),
    ("hamming(3,4)", 64, 9, 3, 0, 0, True),
    ("hypercube(6)", 64, 6, 6, 0, 0, True),
    ("kautz(2,3)", 24, 2, 4, 0, 0, False),
    ("kautz(4,2)", 80, 4, 3, 0, 0, False),
    ("gkautz(4,64)", 64, 4, 3, 4, 0, False),
    ("gkautz(4,1024)", 1024, 4, 5, 4, 0, False),
    ("gkautz(3,12)", 12, 3, 2, 0, 0, False),            # = K(3,1)
    ("debruijn(2,3)", 8, 2, 3, 2, 0, False),
    ("debruijn(4,4)", 256, 4, 4, 4, 0, False),
    ("circulant(16,[3,4])", 16, 4, 3, 0, 0, True),
    ("circulant(7,[2,3])", 7, 4, 2, 0, 0, True),
    ("circulant(8,[1,4])", 8, 4, 2, 0, 8, True),            # 4 = m/2: i+4 = i-4, a double link
    ("circulant(16)", 16, 4, 3, 0, 0, True),               # Theorem 22 picks {3,4}
    ("circulant(16,d=8)", 16, 8, 3, 0, 64, True),           # {3,4} twice each
    ("dcirculant(4)", 6, 4, 2, 0, 0, False),
    ("dcirculant(7,[1,3])", 7, 2, 3, 0, 0, False),
    ("uniring(2,5)", 5, 2, 4, 0, 5, False),
    ("biring(4,7)", 7, 4, 3, 0, 14, True),
    ("torus(3,4,5)", 60, 6, 5, 0, 0, True),
    ("torus(2,3)", 6, 4, 2, 0, 6, True),                   # the 2-wide dimension is a double link
    ("twisted_torus(4,8)", 32, 4, 4, 0, 0, True),
]


@pytest.mark.parametrize("expr, n, d, diam, n_loops, n_parallel, bidirectional", TABLE)
def test_family_properties(expr, n, d, diam, n_loops, n_parallel, bidirectional):
    topo = parse_topology(expr)
    assert topo.n == n and degree(topo) == d and is_regular(topo)
    assert diameter(topo) == diam
    assert loops(topo) == n_loops
    assert parallels(topo) == n_parallel
    assert topo.is_bidirectional == bidirectional
    assert parse_topology(topo.expr).links == topo.links   # the canonical expression rebuilds it


def test_display_names():
    names = {e: parse_topology(e).name for e in ["gkautz(4,1024)", "kautz(2,3)", "circulant(16,[3,4])",
                                                 "line(circulant(16,[3,4]),3)", "power(complete(3),2)",
                                                 "degree(complete(3),2)", "hamming(2,3)", "debruijn(4,4)"]}
    assert names == {"gkautz(4,1024)": "Π_{4,1024}", "kautz(2,3)": "K(2,3)", "circulant(16,[3,4])": "C(16,{3,4})",
                     "line(circulant(16,[3,4]),3)": "L^3(C(16,{3,4}))", "power(complete(3),2)": "K_3^{□2}",
                     "degree(complete(3),2)": "K_3∗2", "hamming(2,3)": "H(2,3)", "debruijn(4,4)": "DBJ(4,4)"}


def test_kautz_is_the_iterated_line_graph_of_the_complete_graph():
    for d, n in [(2, 1), (2, 3), (3, 2)]:
        k = nx.DiGraph([(l.src, l.dst) for l in parse_topology(f"kautz({d},{n})").links])
        lg = nx.DiGraph([(l.src, l.dst) for l in parse_topology(f"line(complete({d + 1}),{n})").links])
        assert nx.is_isomorphic(k, lg)


def test_gkautz_is_kautz_at_the_kautz_sizes_and_complete_at_d_plus_1():
    for d, n in [(2, 1), (2, 2), (3, 1)]:
        m = d ** (n + 1) + d ** n
        a = nx.DiGraph([(l.src, l.dst) for l in parse_topology(f"gkautz({d},{m})").links])
        b = nx.DiGraph([(l.src, l.dst) for l in parse_topology(f"kautz({d},{n})").links])
        assert nx.is_isomorphic(a, b)
    assert {(l.src, l.dst) for l in parse_topology("gkautz(4,5)").links} == \
        {(l.src, l.dst) for l in parse_topology("complete(5)").links}


@settings(max_examples=40, deadline=None)
@given(st.integers(1, 6), st.integers(2, 80))
def test_gkautz_self_loops_follow_the_divisibility_rule(d, extra):
    m = d + extra
    topo = fam.gkautz(d, m)
    g = gcd(d + 1, m)
    expected = 0 if m % (d + 1) == 0 else g * (d // g)
    assert loops(topo) == expected
    assert is_regular(topo) and parallels(topo) == 0


@settings(max_examples=30, deadline=None)
@given(st.integers(7, 400))
def test_theorem22_circulant_has_diameter_g(m):
    gens = fam.theorem22_generators(m)
    g = gens[0]
    assert gens == [g, g + 1] and (2 * g + 1) ** 2 >= 2 * m - 1 > (2 * g - 1) ** 2
    assert diameter(fam.circulant(m)) == g


@settings(max_examples=25, deadline=None)
@given(st.lists(st.integers(2, 6), min_size=1, max_size=3))
def test_torus_size_degree_and_diameter(dims):
    topo = fam.torus(*dims)
    size = 1
    for x in dims:
        size *= x
    assert topo.n == size and is_regular(topo) and degree(topo) == 2 * len(dims)
    assert diameter(topo) == sum(x // 2 for x in dims)


@settings(max_examples=25, deadline=None)
@given(st.integers(1, 4), st.integers(2, 4))
def test_hamming_is_words_differing_in_one_place(n, q):
    topo = fam.hamming(n, q)
    words = list(product(range(q), repeat=n))
    edges = {(a, b) for a, b in ((l.src, l.dst) for l in topo.links)}
    expected = {(i, j) for i, a in enumerate(words) for j, b in enumerate(words)
                if sum(x != y for x, y in zip(a, b)) == 1}
    assert edges == expected and diameter(topo) == n


@settings(max_examples=20, deadline=None)
@given(st.integers(2, 4), st.integers(1, 3))
def test_de_bruijn_and_kautz_shapes(d, n):
    db = fam.debruijn(d, n)
    assert db.n == d ** n and is_regular(db) and degree(db) == d and diameter(db) == n and loops(db) == d
    k = fam.kautz(d, n)
    assert k.n == (d + 1) * d ** n and is_regular(k) and diameter(k) == n + 1 and loops(k) == 0


@pytest.mark.parametrize("expr", ["kautz(2,3)", "debruijn(2,4)", "uniring(1,7)", "dcirculant(5)", "bipartite(3)",
                                  "line(kautz(2,1),2)", "power(uniring(1,3),2)", "degree(dcirculant(2),2)"])
def test_recorded_reverse_symmetries_are_isomorphisms(expr):
    topo = parse_topology(expr)
    iso = transpose_isomorphism(topo)
    assert iso is not None and is_transpose_isomorphism(topo, iso)


def test_generalized_kautz_is_not_reverse_symmetric():
    assert transpose_isomorphism(parse_topology("gkautz(2,7)")) is None


@pytest.mark.parametrize("expr, tau", [
    ("gkautz(4,64)", Fraction(21, 16)),          # Table 7: 1.312
    ("kautz(2,2)", Fraction(7, 6)),
    ("debruijn(4,4)", Fraction(85, 64)),         # Table 7: 1.328
    ("circulant(16,[3,4])", Fraction(15, 16)),
    ("torus(3,4,5)", Fraction(59, 60)),
    ("dcirculant(4)", Fraction(5, 6)),
    ("petersen_line()", Fraction(14, 15)),
])
def test_bfb_values_of_the_paper(expr, tau):
    topo = parse_topology(expr)
    assert tb_factor(topo, bfb_allgather(topo)) == tau


@pytest.mark.parametrize("expr, message", [
    ("biring(3,5)", "even degree"),
    ("gkautz(4,4)", "at least 5"),
    ("circulant(12,[2,4])", "not connected"),
    ("circulant(3)", "no degree-4 circulant"),
    ("circulant(9,d=3)", "even degree"),
    ("dcirculant(6,[2,4])", "not strongly connected"),
    ("torus()", "at least one dimension"),
    ("degree(debruijn(2,3),2)", "without self-loops"),
    ("line(complete(3),0)", ">= 1"),
])
def test_bad_family_arguments_give_one_line_errors(expr, message):
    with pytest.raises(TopologyError) as info:
        parse_topology(expr)
    assert message in str(info.value) and "\n" not in str(info.value)


def test_regular_in_and_out_degrees_of_expansions():
    for expr in ["line(circulant(16,[3,4]),2)", "degree(bipartite(2),3)", "power(kautz(2,1),2)",
                 "product(uniring(1,4),uniring(1,8))", "bidir(kautz(2,2))"]:
        topo = parse_topology(expr)
        d = degree(topo)
        assert set(out_degrees(topo)) == {d} and set(in_degrees(topo)) == {d}
