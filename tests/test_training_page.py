"""The Training page through AppTest (issue 57): it opens on the session's design with a ring and a torus of the
same N; a run on two small designs draws Fig. 9's stacked bars, whose three segments add up to the iteration time
the table shows and to what ``solvers.training`` computes, and the timeline of one iteration on both streams; a
profile's compute is its layers' times; a bad profile or a design the job cannot use is one error line; "Open in
Schedule" sets the Schedule page's design, synthesizer, collective and size and opens it."""
import json

from streamlit.testing.v1 import AppTest

from .conftest import ROOT, switch_page

DESIGNS = "biring(8)\ntorus(4,4)"


def open_training(designs=None, design_expr=None):
    at = AppTest.from_file(str(ROOT / "app.py"), default_timeout=300).run()
    if design_expr is not None:
        at.session_state["design_expr"] = design_expr
    switch_page(at, "training").run()
    assert not at.exception
    if designs is not None:
        at.text_area(key="tr_designs").set_value(designs).run()
    return at


def run(at):
    assert not at.error, [e.value for e in at.error]
    at.button(key="tr_run").click().run()
    assert not at.exception and not at.error, [e.value for e in at.error]
    return at


def test_opens_on_the_current_design_with_a_ring_and_a_torus_of_its_size():
    at = open_training()
    assert at.text_area(key="tr_designs").value.splitlines() == ["biring(8)", "shifted_ring(8)", "torus(2,4)"]
    assert at.button(key="tr_run").label == "Run (3 designs)"
    at = open_training(design_expr="torus(4,4)")
    assert at.text_area(key="tr_designs").value.splitlines() == ["torus(4,4)", "shifted_ring(16)"]


def test_two_designs_stacked_bars_add_up_to_the_iteration_and_the_timeline_has_both_streams():
    from solvers.runtime import Workload
    from solvers.training import simulate_iteration

    at = run(open_training(DESIGNS))
    charts = [json.loads(c.proto.spec) for c in at.get("plotly_chart")]
    assert len(charts) == 2
    bars, timeline = charts
    assert [t["name"] for t in bars["data"]] == ["compute", "exposed allreduce", "all-to-all"]
    table = at.dataframe[0].value
    assert list(table["design"]) == ["biring(8)", "torus(4,4)"]
    for i, design in enumerate(["biring(8)", "torus(4,4)"]):
        assert all(t["x"][i] == design for t in bars["data"])
        parts = [t["y"][i] for t in bars["data"]]
        shown = float(table["iteration (ms)"][i])
        assert parts[0] + parts[1] + parts[2] == shown          # exact: the simulator keeps whole 2^-20 ms
        assert parts[2] > 0                                     # expert parallel: all-to-all before/after experts
        it = simulate_iteration("switch-base-128", design, "ep", "A100", "best",
                                workload=Workload(1.0, "uniform", 10.0, 12.5), cache=None)
        assert shown == it.iteration_ms and parts == [it.compute_ms, it.allreduce_exposed_ms, it.alltoall_ms]
    ratios = [float(r) for r in table["× fastest"]]
    assert min(ratios) == 1.0 and all(r >= 1.0 for r in ratios)
    marks = [a["text"] for a in bars["layout"]["annotations"]]
    assert sorted(marks)[0].startswith("×1.00") and any("fastest" in m for m in marks)
    streams = {y for t in timeline["data"] for y in t["y"]}
    assert streams == {"compute", "comm"}
    kinds = {t["name"] for t in timeline["data"]}
    assert {"forward", "backward", "all-to-all", "allreduce"} <= kinds
    end = max(b + x for t in timeline["data"] for b, x in zip(t["base"], t["x"]))
    assert abs(end - float(table["iteration (ms)"][0])) <= 1e-9 * end     # the first design's timeline
    colls = at.dataframe[1].value
    assert list(colls.columns) == ["collective", "bytes", "count", "ms each", "priced by", "algo"]
    assert {"allreduce", "alltoall"} <= set(colls["collective"])
    assert at.get("download_button")


def test_a_profile_gives_its_own_compute_and_a_bad_one_is_one_error_line():
    at = open_training("biring(8)")
    at.radio(key="tr_source").set_value("Profile CSV").run()
    at.selectbox(key="tr_parallel").set_value("dp").run()
    assert not at.exception and not at.error
    bad = b"name,forward_ms,backward_ms,param_bytes,activation_bytes\nl1,1.5,-3,1000,10\n"
    at.get("file_uploader")[0].set_value(("bad.csv", bad, "text/csv")).run()
    assert not at.exception
    assert len(at.error) == 1 and "bad.csv" in at.error[0].value and "line 2" in at.error[0].value
    assert "\n" not in at.error[0].value
    good = (b"name,forward_ms,backward_ms,param_bytes,activation_bytes\nl1,1.5,3,4000000,10\n"
            b"l2,2.25,4.5,8000000,10\n")
    at.get("file_uploader")[0].set_value(("good.csv", good, "text/csv")).run()
    run(at)
    table = at.dataframe[0].value
    assert float(table["compute (ms)"][0]) == 1.5 + 3 + 2.25 + 4.5
    assert float(table["iteration (ms)"][0]) > float(table["compute (ms)"][0])     # the last bucket is exposed


def test_a_design_the_job_cannot_use_is_one_error_line():
    at = open_training("biring(8)\nbiring(12)")        # 128 experts on 12 nodes
    assert len(at.error) == 1 and at.error[0].value.startswith("biring(12):")
    assert "multiple" in at.error[0].value
    assert not at.get("plotly_chart")
    at = open_training("biring(8)\nnot_a_design(3)")
    assert len(at.error) == 1 and "not_a_design(3)" in at.error[0].value
    at = open_training("biring(8)")
    at.selectbox(key="tr_model").set_value("gpt2-small").run()          # expert parallel without experts
    assert len(at.error) == 1 and "gpt2-small has no expert layers" in at.error[0].value


def test_open_in_schedule_sets_the_schedule_pages_state():
    at = open_training("biring(8)")
    at.session_state["workload_open"] = True       # the sidebar's M is a widget on this run: set before it is made
    at.selectbox(key="tr_model").set_value("gpt2-small").run()
    at.selectbox(key="tr_parallel").set_value("dp").run()
    run(at)
    colls = at.dataframe[1].value
    row = colls.iloc[0]
    assert row["collective"] == "allreduce"
    at.button(key="tr_open_btn").click().run()
    assert not at.exception, at.exception
    assert at.session_state["design_expr"] == "biring(8)"
    assert at.session_state["algo"] == row["algo"] and at.session_state["coll"] == "allreduce"
    assert at.session_state["w_bytes"] == float(row["bytes"])
    expr = at.query_params["expr"]
    assert expr in ("biring(8)", ["biring(8)"])
    assert any("Verified by the simulator" in s.value for s in at.success)
    assert any(f"M = {float(row['bytes']):.4g} bytes" in c.value for c in at.sidebar.caption)   # what it prices


def test_the_pure_helpers():
    from studio.figures.training import results_json, schedule_bytes, schedule_target

    assert schedule_target({"collective": "alltoall", "algo": None}) == ("teccl", "alltoall")
    assert schedule_target({"collective": "allreduce", "algo": "dbt"}) == ("dbt", "allreduce")
    assert schedule_target({"collective": "pp send", "algo": None}) is None
    # an all-to-all row holds what one node sends; the Schedule page's M is the whole vector (N times that)
    assert schedule_bytes({"collective": "alltoall", "bytes": 3.0}, 16) == 48.0
    assert schedule_bytes({"collective": "allreduce", "bytes": 3.0}, 16) == 3.0
    doc = json.loads(results_json({"model": "m"}, [{"design": "a", "iteration_ms": 2.0},
                                                   {"design": "b", "iteration_ms": 1.0}]))
    assert doc["best"] == "b" and len(doc["results"]) == 2
