"""The expression language: parsing, errors that point at the column, the size limit, no eval."""
import pytest
from hypothesis import given, settings, strategies as st

from topologies import ExpressionError, parse_topology
from topologies.expression import Call, parse, predicted_size


def test_parse_tree():
    c = parse(" line( circulant(16, [3,4]) , 3 ) ")
    assert c.name == "line" and c.column == 2
    inner, n = c.args
    assert isinstance(inner, Call) and inner.args == (16, (3, 4)) and n == 3
    assert parse("dgx_a100(boxes=2)").kwargs == (("boxes", 2),)


@pytest.mark.parametrize("text, column, words", [
    ("nonsense(", 10, "expected"),
    ("ring(8", 7, "close ring("),
    ("ring 8)", 6, "'('"),
    ("ring(8))", 8, "after the expression"),
    ("ring(8) x", 9, "after the expression"),
    ("ring(8;)", 7, "unexpected character ';'"),
    ("ring([1,2)", 10, "close the list"),
    ("ring(m=1, 2)", 11, "positional argument follows"),
    ("8", 1, "topology name"),
    ("warp(3)", 1, "unknown topology 'warp'"),
    ("ring(8, 9)", 1, "usage: ring(m)"),
])
def test_errors_point_at_the_column(text, column, words):
    with pytest.raises(ExpressionError) as e:
        parse_topology(text)
    assert e.value.column == column and words in str(e.value)
    assert "\n" not in str(e.value)


def test_size_limit_refuses_before_building(monkeypatch):
    import topologies.families as families
    calls = []
    monkeypatch.setattr(families, "ring", lambda m: calls.append(m))
    with pytest.raises(ExpressionError, match="above the limit of 100"):
        parse_topology("ring(5000)", max_nodes=100)
    assert calls == []
    assert predicted_size(parse("bipartite(7)")) == 14


def test_bad_values_name_the_family():
    with pytest.raises(ExpressionError, match="ring: m must be at least 2"):
        parse_topology("ring(1)")
    with pytest.raises(ExpressionError, match="even degree"):
        parse_topology("biring(3,6)")


@settings(max_examples=200, deadline=None)
@given(st.text(alphabet="ring()[],=0123456789 _abc-;.'\"", max_size=30))
def test_random_text_never_crashes_the_parser(text):
    try:
        parse_topology(text, max_nodes=64)
    except ExpressionError:
        pass


def test_no_eval_of_python_code():
    with pytest.raises(ExpressionError):
        parse_topology("__import__('os').system('true')")


def test_nested_expansions_parse_and_name_themselves():
    topo = parse_topology("line(circulant(16,[3,4]),3)")
    assert (topo.name, topo.n) == ("L^3(C(16,{3,4}))", 1024)
    assert parse_topology("power(degree(complete(3),2),2)").name == "(K_3∗2)^{□2}"
    assert parse_topology("bidir(uniring(1,5))").name == "UniRing(1,5)∪UniRing(1,5)^T"


@pytest.mark.parametrize("text, column, words", [
    ("line(circulant(16,[3,4]),)", 26, "expected a number"),
    ("power(warp(3),2)", 7, "unknown topology 'warp'"),
    ("product(ring(4), ring(1))", 18, "ring: m must be at least 2"),
    ("degree(complete(3))", 1, "usage: degree(G,n)"),
])
def test_errors_inside_nested_expressions_point_at_the_inner_column(text, column, words):
    with pytest.raises(ExpressionError) as e:
        parse_topology(text)
    assert e.value.column == column and words in str(e.value)


def test_expansion_sizes_are_refused_before_the_expansion_is_built(monkeypatch):
    import topologies.expansions as expansions
    built = []
    monkeypatch.setattr(expansions, "line_graph", lambda g, n=1: built.append(n))
    with pytest.raises(ExpressionError, match="would have 16384 nodes"):
        parse_topology("line(circulant(16,[3,4]),5)")
    assert built == []
    assert predicted_size(parse("line(circulant(16,[3,4]),5)"), 10 ** 6) == 16 * 4 ** 5
    assert predicted_size(parse("power(kautz(2,2),2)")) == 144
    assert predicted_size(parse("product(torus(3,3),complete(4))")) == 36


def test_link_budget_refuses_dense_graphs():
    with pytest.raises(ExpressionError, match="links, above the limit"):
        parse_topology("complete(3000)")
