"""Compose through AppTest: the design's inputs in the main area, the sidebar keeping the workload (issue 40)."""
from streamlit.testing.v1 import AppTest

from .conftest import ROOT, open_boxes, shown_metrics, switch_page


def open_compose(expr=None):
    at = AppTest.from_file(str(ROOT / "app.py"), default_timeout=120).run()
    if expr is not None:
        at.query_params["expr"] = expr
    return switch_page(at, "compose").run()


def test_the_expression_is_in_the_main_area_and_the_sidebar_keeps_the_workload():
    at = open_compose()
    assert not at.exception
    assert at.main.text_input(key="expr").label == "Expression"
    assert not [t for t in at.sidebar.text_input if t.key == "expr"]
    assert not [s for s in at.sidebar.selectbox if s.key == "catalogue"]
    open_boxes(at, "workload_open").run()              # the workload's inputs
    assert at.sidebar.number_input(key="w_alpha").value == 10.0          # the workload stays in the sidebar
    at.main.text_input(key="expr").set_value("torus(4,6)").run()
    assert not at.exception
    assert next(m.value for m in shown_metrics(at) if m.label == "Nodes") == "24"
    assert at.query_params["expr"] in (["torus(4,6)"], "torus(4,6)")
    assert at.session_state["design_expr"] == "torus(4,6)"                # what the Schedule page reads
