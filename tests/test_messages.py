"""Errors in the web pages worded for the page, not for the command line (issue 40): ``studio.messages.for_page``
and Compose with a design above the node limit."""
import pytest
from streamlit.testing.v1 import AppTest

from studio.messages import for_page
from topologies import TopologyError, load

from .conftest import ROOT, switch_page


def open_compose(expr):
    at = AppTest.from_file(str(ROOT / "app.py"), default_timeout=120).run()
    at.query_params["expr"] = expr
    return switch_page(at, "compose").run()


def test_an_expression_above_the_limit_speaks_of_the_page_not_the_cli():
    at = open_compose("ring(100000)")
    assert not at.exception
    assert len(at.error) == 1
    text = at.error[0].value
    assert "above the limit" in text and "too large for this page" in text
    assert "--max-nodes" not in text and "STUDIO_MAX_NODES" not in text


@pytest.mark.parametrize("message, expected", [
    ("G is not reverse-symmetric, so its reduce-scatter has no expansion schedule; use --algo bfb",
     "G is not reverse-symmetric, so its reduce-scatter has no expansion schedule; choose the bfb algorithm"),
    ("teccl needs its matrix (use schedule --algo teccl --collective custom)", "teccl needs its matrix"),
    ("first line\nsecond line", "first line"),
])
def test_for_page_rewords_command_line_advice(message, expected):
    assert for_page(message) == expected


def test_for_page_on_the_node_limit_error():
    with pytest.raises(TopologyError) as info:
        load("ring(100000)")
    text = for_page(info.value)
    assert text.startswith("ring(100000) would have 100000 nodes") and text.endswith("too large for this page")
    assert "--" not in text and "STUDIO_" not in text
