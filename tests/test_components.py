"""The union-find components shared by the box finders, against networkx on random graphs."""
import networkx as nx
from hypothesis import given, settings, strategies as st

from solvers.core.components import components


@settings(max_examples=100, deadline=None)
@given(st.integers(1, 12).flatmap(lambda n: st.tuples(
    st.just(n), st.lists(st.tuples(st.integers(0, n - 1), st.integers(0, n - 1)), max_size=20))))
def test_components_are_networkx_weak_components_in_order(case):
    n, edges = case
    g = nx.DiGraph()
    g.add_nodes_from(range(n))
    g.add_edges_from(edges)
    expected = sorted((sorted(c) for c in nx.weakly_connected_components(g)), key=lambda c: c[0])
    assert components(range(n), edges) == expected
