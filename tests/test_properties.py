"""Degree, diameter and the Moore bounds, against their definitions and networkx on random graphs."""
import networkx as nx
import pytest
from hypothesis import given, settings, strategies as st

from topologies import load, summarize
from topologies.model import Topology
from topologies.properties import (diameter, is_strongly_connected, moore_diameter_directed,
                                   moore_diameter_undirected, moore_size_directed, moore_size_undirected)


def test_ring_and_biring_acceptance_values():
    s = summarize(load("ring(8)"))
    assert (s.nodes, s.degree, s.diameter, s.moore_diameter, s.directed) == (8, 1, 7, 7, True)
    s = summarize(load("biring(8)"))
    assert (s.nodes, s.degree, s.diameter, s.directed) == (8, 2, 4, False)
    # the undirected bound is tight on the cycle; the directed one is smaller
    assert s.moore_diameter == s.moore_diameter_undirected == 4 and s.moore_diameter_directed == 3


def test_moore_sizes_match_their_closed_forms():
    # Def 9: M_{d,k} = (d^{k+1}-1)/(d-1); undirected M'_{d,k} = 1 + d((d-1)^k - 1)/(d-2)
    for d in range(2, 7):
        for k in range(0, 6):
            assert moore_size_directed(d, k) == (d ** (k + 1) - 1) // (d - 1)
            if d > 2:
                assert moore_size_undirected(d, k) == 1 + d * ((d - 1) ** k - 1) // (d - 2)
    assert moore_size_undirected(2, 3) == 7                   # the 7-cycle
    assert [moore_size_directed(4, k) for k in range(6)] == [1, 5, 21, 85, 341, 1365]
    assert [moore_size_undirected(4, k) for k in range(1, 6)] == [5, 17, 53, 161, 485]


def test_moore_diameters_of_paper_examples():
    assert moore_diameter_directed(1024, 4) == 5              # digest section 2.2
    assert all(moore_diameter_directed(n, 4) == 2 for n in range(6, 13))
    assert moore_diameter_directed(8, 1) == 7
    assert moore_diameter_undirected(10, 3) == 2              # the Petersen graph meets it
    assert moore_diameter_undirected(5, 1) is None            # a matching never connects 5 nodes


def test_complete_and_bipartite_properties():
    s = summarize(load("complete(5)"))
    assert (s.degree, s.diameter, s.regular, s.directed) == (4, 1, True, False)
    s = summarize(load("bipartite(4)"))
    assert (s.nodes, s.degree, s.diameter, s.moore_diameter) == (8, 4, 2, 2)


@st.composite
def digraphs(draw):
    n = draw(st.integers(2, 14))
    edges = draw(st.lists(st.tuples(st.integers(0, n - 1), st.integers(0, n - 1)), max_size=4 * n))
    return n, edges


@settings(max_examples=60, deadline=None)
@given(digraphs())
def test_diameter_and_connectivity_agree_with_networkx(graph):
    n, edges = graph
    topo = Topology.from_edges(n, edges)
    g = nx.DiGraph()
    g.add_nodes_from(range(n))
    g.add_edges_from(edges)
    strong = nx.is_strongly_connected(g)
    assert is_strongly_connected(topo) == strong
    assert diameter(topo) == (nx.diameter(g) if strong else None)


@settings(max_examples=40, deadline=None)
@given(st.integers(2, 40), st.integers(1, 5))
def test_moore_diameter_is_the_smallest_k_reaching_n(n, d):
    k = moore_diameter_directed(n, d)
    assert moore_size_directed(d, k) >= n
    assert k == 0 or moore_size_directed(d, k - 1) < n


@pytest.mark.parametrize("m", [3, 4, 7, 10])
def test_moore_bound_never_exceeds_a_real_diameter(m):
    for expr in (f"ring({m})", f"biring({m})", f"complete({m})"):
        s = summarize(load(expr))
        assert s.moore_diameter <= s.diameter
