"""The Streamlit app through AppTest: the Compose page builds, shows properties, and reports bad input."""
import json

import pytest
from streamlit.testing.v1 import AppTest

from .conftest import ROOT


def app():
    return AppTest.from_file(str(ROOT / "app.py"), default_timeout=60)


def metrics(at):
    return {m.label: m.value for m in at.metric}


def test_default_page_shows_a_biring():
    at = app().run()
    assert not at.exception
    assert metrics(at)["Nodes"] == "8" and metrics(at)["Diameter"] == "4"
    spec = json.loads(at.get("plotly_chart")[0].proto.spec)
    assert spec["layout"]["title"]["text"] == "BiRing(2,8): 8 nodes, 16 links"


def test_expression_changes_the_topology():
    at = app().run()
    at.text_input(key="expr").set_value("ring(6)").run()
    assert not at.exception
    m = metrics(at)
    assert (m["Nodes"], m["Degree"], m["Diameter"], m["Moore bound"]) == ("6", "1", "5", "5")
    assert at.query_params["expr"] == ["ring(6)"] or at.query_params["expr"] == "ring(6)"


@pytest.mark.parametrize("expr, words", [("nonsense(", "column 10"), ("ring(100000)", "above the limit")])
def test_bad_expression_is_one_error_line(expr, words):
    at = app().run()
    at.text_input(key="expr").set_value(expr).run()
    assert not at.exception
    assert len(at.error) == 1 and words in at.error[0].value and "\n" not in at.error[0].value


def test_url_expression_is_used():
    at = app()
    at.query_params["expr"] = "complete(5)"
    at.run()
    assert metrics(at)["Degree"] == "4" and metrics(at)["Diameter"] == "1"


def test_catalogue_pick_fills_the_expression():
    at = app().run()
    at.selectbox(key="catalogue").set_value("circulant(16,[3,4])").run()
    assert not at.exception
    assert at.text_input(key="expr").value == "circulant(16,[3,4])"
    m = metrics(at)
    assert (m["Nodes"], m["Degree"], m["Diameter"]) == ("16", "4", "3")


def test_nested_expansion_expression_on_the_page():
    at = app().run()
    at.text_input(key="expr").set_value("line(kautz(2,1),2)").run()
    assert not at.exception
    assert at.subheader[0].value == "L^2(K(2,1))"
    assert metrics(at)["Nodes"] == "24"
