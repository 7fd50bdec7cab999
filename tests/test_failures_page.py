"""The Failures page through AppTest (issue 42): two small designs with BFB, every single cable failed: one CDF
line per design x synthesizer, one table row per failure set, the worst set drawn, a bad expression as one error
line, and a failure set opened on the Schedule page as its fail(...) expression."""
from streamlit.testing.v1 import AppTest

from .conftest import ROOT, switch_page

DESIGNS = "biring(6)\ncirculant(6,[1,2])"


def open_failures(designs=DESIGNS, algos=("bfb",)):
    at = AppTest.from_file(str(ROOT / "app.py"), default_timeout=180).run()
    switch_page(at, "failures").run()
    assert not at.exception
    at.text_area(key="fl_designs").set_value(designs)
    at.multiselect(key="fl_algos").set_value(list(algos)).run()
    return at


def run_failures(designs=DESIGNS, algos=("bfb",)):
    at = open_failures(designs, algos)
    assert not at.error, [e.value for e in at.error]
    at.button(key="fl_run").click().run()
    assert not at.exception and not at.error, [e.value for e in at.error]
    return at


def test_two_designs_one_line_each_and_one_row_per_set():
    at = run_failures()
    charts = at.get("plotly_chart")
    import json

    cdf = json.loads(charts[0].proto.spec)
    names = [t["name"] for t in cdf["data"]]
    assert names == ["biring(6) · bfb", "circulant(6,[1,2]) · bfb"]
    for trace in cdf["data"]:
        assert trace["y"][0] == 0 and trace["y"][-1] == 1
        assert trace["x"][0] == 0
    table = at.dataframe[1].value
    assert len(table) == 6 + 12                   # every cable of each design
    assert list(table["design"]).count("biring(6)") == 6
    # a ring without one cable is a path: still connected; bfb keeps a fraction of its healthy algbw
    assert all(table["connected"])
    fractions = [float(x) for x in table["bfb fraction"]]
    assert all(0 < x <= 1.0 + 1e-9 for x in fractions)
    assert len(charts) == 2                       # the CDF and the worst set drawn
    assert "(red)" in json.loads(charts[1].proto.spec)["layout"]["title"]["text"]


def test_a_bad_expression_is_one_error_line():
    at = open_failures("biring(6)\nnot_a_design(3)")
    assert not at.exception
    assert len(at.error) == 1 and "not_a_design(3)" in at.error[0].value


def test_k_too_large_is_one_error_line():
    at = open_failures("biring(6)")
    at.number_input(key="fl_k").set_value(7).run()
    assert not at.exception
    assert len(at.error) == 1 and "biring(6)" in at.error[0].value


def test_open_in_schedule_opens_the_degraded_design():
    at = run_failures("biring(6)")
    at.button(key="fl_open").click().run()
    assert not at.exception
    assert at.query_params["expr"] == ["fail(biring(6),links=[0])"] or \
        at.query_params["expr"] == "fail(biring(6),links=[0])"
    assert at.session_state["design_expr"] == "fail(biring(6),links=[0])"
    assert at.session_state["algo"] == "bfb" and at.session_state["coll"] == "allgather"
    assert any("Verified by the simulator" in s.value for s in at.success)
