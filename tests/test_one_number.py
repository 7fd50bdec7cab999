"""One number per question (issue 40): the time of a schedule for one workload (M and its link prices) is the same
on the Schedule page, in the Compare table (page and ``compare --json``), in ``schedule --json`` and, for the
designs the Finder lists, in ``find --json`` and the Finder's table.

The grid: a direct-connect design (Pi_{2,16}, whose tb bound self-loops put out of reach), a torus and a switched
cluster (two DGX A100 boxes), every synthesizer that applies to the allreduce, at three sizes, with the default
prices (uniform alpha 10 us, B 12.5 GB/s), and the fabric's own link prices at one size. TE-CCL is in the grid
where its MILP solves to optimality within its limit (the torus); on the other two it stops at its time limit,
where the schedule it returns depends on the clock (the same schedule still gets the same number, which the
TACOS/TE-CCL panel test below checks on one schedule)."""
from __future__ import annotations

import contextlib
import io
import json

import pytest
from streamlit.testing.v1 import AppTest

from .conftest import ROOT, open_boxes, shown_metrics, switch_page

SIZES = (1.0e4, 1.0e6, 1.0e8)
COLL = "allreduce"
DESIGNS = {"gkautz(2,16)": "teccl", "torus(3,3)": None, "dgx_a100(boxes=2)": "teccl"}   # design -> left out
REL = 1e-9          # the same computation everywhere: equal up to float printing (the page shows 4 digits)


def cli(*argv: str):
    from studio.cli import main

    out, err = io.StringIO(), io.StringIO()
    with contextlib.redirect_stdout(out), contextlib.redirect_stderr(err):
        code = main(list(argv))
    assert code == 0, err.getvalue()
    return json.loads(out.getvalue())


def _algos(design: str) -> list[str]:
    from solvers.compare import algorithm_order

    return [a for a in algorithm_order() if a != DESIGNS[design]]


@pytest.fixture(scope="module")
def compared() -> dict:
    """compare --json rows: (design, M) -> {algo: time_us} of the verified rows."""
    out = {}
    for design in DESIGNS:
        for m in SIZES:
            doc = cli("compare", design, "--collective", COLL, "--bytes", repr(m), "--algos", ",".join(_algos(design)),
                      "--json")
            assert doc["workload"]["prices"] == "uniform" and doc["workload"]["bytes"] == m
            out[(design, m)] = {r["algo"]: r["time_us"] for r in doc["rows"] if r["status"] == "ok"}
    return out


def test_the_grid_covers_every_kind_of_design(compared):
    for design in DESIGNS:
        assert len(compared[(design, 1e6)]) >= 6, (design, compared[(design, 1e6)])
    assert "teccl" in compared[("torus(3,3)", 1e6)] and "tacos" in compared[("gkautz(2,16)", 1e6)]


@pytest.mark.parametrize("design", list(DESIGNS))
def test_schedule_json_equals_compare(compared, design):
    for m in SIZES:
        for algo, t in compared[(design, m)].items():
            got = cli("schedule", design, "--algo", algo, "--collective", COLL, "--bytes", repr(m), "--json")
            assert got["time_us"] == pytest.approx(t, rel=REL), (design, algo, m)
            assert got["prices"].startswith("uniform alpha 10 µs")


def _app():
    return AppTest.from_file(str(ROOT / "app.py"), default_timeout=180)


def _page_time(at) -> float:
    return float(next(m for m in shown_metrics(at) if m.label == "Runtime (µs)").value)


@pytest.mark.parametrize("design", list(DESIGNS))
def test_schedule_page_equals_compare(compared, design):
    """Every synthesizer at M = 1e6, and the first one and TACOS (whose schedule changes with M) at every size: a
    change of M on the page reprices the schedule on the page's one path (the CLI grid above covers every size of
    every synthesizer)."""
    at = _app().run()
    at.query_params["expr"] = design
    at = open_boxes(switch_page(at, "schedule"), "workload_open").run()      # the workload's inputs too
    at.selectbox(key="coll").set_value(COLL).run()
    algos = list(compared[(design, 1e6)])
    for algo in algos:
        at.selectbox(key="algo").set_value(algo).run()
        for m in (SIZES if algo in (algos[0], "tacos") else [1e6]):
            at.number_input(key="w_bytes").set_value(m).run()
            assert not at.exception, (design, algo, m)
            want = compared[(design, m)][algo]
            assert _page_time(at) == pytest.approx(want, rel=5e-4), (design, algo, m)   # shown with 4 digits


def test_compare_page_table_equals_compare_json(compared):
    at = _app().run()
    at = switch_page(at, "compare").run()
    design = "gkautz(2,16)"
    at.text_area(key="cmp_exprs").set_value(design).run()
    at.multiselect(key="cmp_algos").set_value(_algos(design)).run()
    at.button(key="cmp_run").click().run()
    assert not at.exception
    frame = next(d.value for d in at.dataframe if "status" in d.value.columns)
    table = {r["algo"]: r["time (µs)"] for _, r in frame.iterrows() if str(r["status"]) == "ok"}
    assert table == pytest.approx(compared[(design, 1e6)], rel=REL)
    # the columns read in order: what ran, its time and algbw before the long status and detail texts
    columns = list(frame.columns)
    assert columns.index("time (µs)") < columns.index("status") and columns.index("algbw (GB/s)") < 6


def test_tacos_on_gkautz_shows_one_time_everywhere(compared):
    """The issue's example: TACOS allreduce on Pi_{2,16} at 1 MB was 1875 us on the Schedule page (TACOS's own
    clock) and 600 us on Compare. Now the page's runtime figure is Compare's and the CLI's, and TACOS's clock is
    a named second figure."""
    want = compared[("gkautz(2,16)", 1e6)]["tacos"]
    at = _app().run()
    at.query_params.update({"expr": "gkautz(2,16)", "algo": "tacos", "coll": COLL})
    at = switch_page(at, "schedule").run()
    assert not at.exception
    assert _page_time(at) == pytest.approx(want, rel=5e-4)
    # one bound too: it read 230 us beside BFB (the step model's 2 D alpha + tb M/B, no bound in the runtime
    # model), 170 on Compare and 1000 us (TACOS's ingress bound) beside TACOS. 170 = alpha + M over the smallest
    # cut between GPUs: a GPU whose second link is a self-loop has one real link, priced at B/2 = 6.25 GB/s
    bound = cli("compare", "gkautz(2,16)", "--collective", COLL, "--algos", "bfb", "--json")["rows"][0]
    assert bound["algo"] == "lower bound" and bound["time_us"] == pytest.approx(10.0 + 1e6 / (12.5e3 / 2))
    runtime = next(m for m in shown_metrics(at) if m.label == "Runtime (µs)")
    assert runtime.delta == f"bound {bound['time_us']:.4g}"
    labels = [m.label for m in shown_metrics(at)]
    assert "TACOS's own clock (µs)" in labels and "Collective time (µs)" not in labels
    cli_doc = cli("schedule", "gkautz(2,16)", "--algo", "tacos", "--collective", COLL, "--json")
    assert cli_doc["time_us"] == pytest.approx(want, rel=REL) and cli_doc["bytes"] == 1e6
    assert cli_doc["bound_us"] == pytest.approx(bound["time_us"], rel=REL)
    assert cli_doc["bound_name"].startswith("allreduce cut bound")
    at.selectbox(key="algo").set_value("bfb").run()                  # the page's own figures name the bound
    runtime = next(m for m in shown_metrics(at) if m.label == "Runtime (µs)")
    assert runtime.delta == f"bound {bound['time_us']:.4g}" and cli_doc["bound_name"] in runtime.help
    assert bound["detail"].startswith(f"bound: {cli_doc['bound_name']}")


def test_the_fabrics_own_prices_agree_too():
    design, m = "gkautz(2,16)", 1e6
    doc = cli("compare", design, "--collective", COLL, "--prices", "links", "--algos", "bfb,tacos,ring", "--json")
    times = {r["algo"]: r["time_us"] for r in doc["rows"] if r["status"] == "ok"}
    assert doc["workload"]["prices"] == "links"
    at = _app().run()
    at.query_params["expr"] = design
    at = switch_page(at, "schedule").run()
    open_boxes(at, "workload_open").run()              # the workload's inputs
    at.radio(key="w_prices").set_value("links").run()
    at.selectbox(key="coll").set_value(COLL).run()
    for algo, t in times.items():
        got = cli("schedule", design, "--algo", algo, "--collective", COLL, "--prices", "links", "--json")
        assert got["time_us"] == pytest.approx(t, rel=REL) and got["prices"] == "the fabric's own link prices"
        at.selectbox(key="algo").set_value(algo).run()
        assert _page_time(at) == pytest.approx(t, rel=5e-4), algo
    assert times["bfb"] != pytest.approx(cli("schedule", design, "--algo", "bfb", "--collective", COLL,
                                              "--json")["time_us"])      # the prices do change the number


def test_find_json_rows_equal_schedule_json():
    """Every Finder row the runtime model prices: its time is ``schedule --json``'s for the synthesizer it names."""
    rows = cli("find", "--nodes", "16", "--degree", "2", "--json")
    assert rows
    for row in rows:
        got = cli("schedule", row["expr"], "--algo", row["runtime_algo"], "--collective", COLL, "--json")
        assert got["time_us"] == pytest.approx(row["runtime_us"], rel=REL), row["expr"]
    # the Finder page's table: the same designs, the same synthesizer, the same time (shown to 0.01 us)
    at = _app().run()
    at = switch_page(at, "finder").run()
    at.number_input(key="f_n").set_value(16).run()
    at.number_input(key="f_d").set_value(2).run()
    assert not at.exception
    table = next(d.value for d in at.dataframe if "expression" in d.value.columns)
    page = {r["expression"]: (r[f"{COLL} µs"], r["schedule"]) for _, r in table.iterrows()}
    assert page == {r["expr"]: (pytest.approx(r["runtime_us"], abs=0.006), r["runtime_algo"]) for r in rows}
