"""Measured against modelled, side by side (issue 41, item 4): the sample nccl-tests log beside every applicable
synthesizer's runtime model on prices fitted to it; the figure, the busbw nccl-tests computes, a log of another
machine as one line, the CLI's ``compare --measured`` (PNG through kaleido, JSON rows) and the Schedule page's
sample button."""
from __future__ import annotations

import contextlib
import io
import json
import os

import pytest
from streamlit.testing.v1 import AppTest

from solvers.runtime.measured import read_bench_log
from studio.views.measured import SAMPLE_LOG, MeasuredError, measured_vs_model
from topologies import load

from .conftest import ROOT, open_boxes, switch_page
from .helpers import chromium_present

ALGOS = ["ring", "ring_uni", "dbt", "sptree", "bfb", "forestcoll"]       # dbt does not apply to biring(16)


@pytest.fixture(scope="module")
def sample():
    return read_bench_log(SAMPLE_LOG.read_bytes())


@pytest.fixture(scope="module")
def view(sample):
    return measured_vs_model(load("biring(16)"), sample, ALGOS, "allreduce")


def test_the_figure_has_the_measured_placements_and_one_model_line_per_synthesizer(view):
    fig = view.figure()
    names = [t.name for t in fig.data]
    assert names == ["measured (out-of-place)", "measured (in-place)", "model: ring", "model: ring_uni",
                     "model: sptree", "model: bfb", "model: forestcoll"]
    assert [a for a, _ in view.skipped] == ["dbt"] and view.skipped[0][1].startswith("not applicable: ")
    assert all(c.verified for c in view.curves)
    assert [t.mode for t in fig.data[:2]] == ["markers+lines"] * 2 and {t.mode for t in fig.data[2:]} == {"lines"}
    assert fig.layout.xaxis.type == "log" and fig.layout.yaxis.title.text == "busbw (GB/s)"
    title = fig.layout.title.text
    c = view.calibration
    assert f"alpha {c.alpha_us:.3g} µs" in title and f"B {c.bandwidth_gbs:.3g} GB/s" in title
    assert "ring fit to all_reduce_perf" in title and len(fig.data[2].x) == 28


def test_model_busbw_is_nccl_tests_busbw_and_the_ring_meets_the_measured_at_large_sizes(view):
    ring = next(c for c in view.curves if c.algo == "ring")
    for m, t, b in zip(view.sizes, ring.times_us, ring.busbw_gbs):
        assert b == pytest.approx(m / (t * 1e3) * 2 * 15 / 16, rel=1e-12)      # allreduce: 2(n-1)/n
    measured = {m: b for m, _, b in view.measured["out-of-place"]}
    large = [k for k, m in enumerate(view.sizes) if m >= 2 ** 25]              # 32 MiB .. 1 GiB
    assert len(large) == 6
    for k in large:
        assert ring.busbw_gbs[k] == pytest.approx(measured[view.sizes[k]], rel=0.10)
    assert view.summary.startswith("NCCL measured 39.8 GB/s busbw at the largest size (1 GiB); the studio's best "
                                   "schedule (bfb) would reach 40.2 GB/s on these prices")


def test_a_log_of_another_machine_or_collective_is_one_line(sample):
    with pytest.raises(MeasuredError) as err:
        measured_vs_model(load("biring(8)"), sample, ["ring"])
    assert str(err.value) == ("the log has 16 ranks and biring(8) has 8 compute nodes: set the log beside the "
                              "machine it measured")
    with pytest.raises(MeasuredError, match=r"^the log times allreduce \(all_reduce_perf\), not allgather"):
        measured_vs_model(load("biring(16)"), sample, ["ring"], "allgather")
    with pytest.raises(MeasuredError, match="^unknown synthesizer 'nosuch'"):
        measured_vs_model(load("biring(16)"), sample, ["nosuch"])


def _cli(*argv):
    from studio.cli import main

    out, err = io.StringIO(), io.StringIO()
    with contextlib.redirect_stdout(out), contextlib.redirect_stderr(err):
        code = main([str(a) for a in argv])
    return code, out.getvalue(), err.getvalue()


def test_compare_measured_writes_a_png_and_json_rows(tmp_path):
    if not chromium_present():
        if os.environ.get("CI"):
            raise AssertionError("kaleido needs Debian's chromium (apt-get install -y chromium)")
        pytest.skip("no chromium for kaleido")
    png = tmp_path / "out.png"
    code, out, err = _cli("compare", "biring(16)", "--coll", "allreduce", "--measured", SAMPLE_LOG,
                          "--algos", "ring,bfb", "--plot", png, "--json")
    assert code == 0, err
    assert png.read_bytes()[:8] == b"\x89PNG\r\n\x1a\n" and not list(tmp_path.glob(".partial-*"))
    doc = json.loads(out)
    measured = doc["measured"]
    assert doc["workload"]["prices"] == "calibrated" and measured["prices"]["alpha_us"] == doc["workload"]["alpha_us"]
    assert [s["algo"] for s in measured["schedules"]] == ["ring", "bfb"] and measured["busbw_factor"] == 1.875
    rows = measured["rows"]
    assert len(rows) == 28 and rows[-1]["bytes"] == 2 ** 30
    assert rows[-1]["measured_out_of_place_busbw_GBps"] == 39.76 and rows[-1]["measured_in_place_busbw_GBps"] == 38.97
    assert set(rows[-1]["model_busbw_GBps"]) == {"ring", "bfb"}
    assert rows[-1]["model_busbw_GBps"]["ring"] == pytest.approx(39.76, rel=0.10)


def test_compare_measured_refuses_a_bad_log_and_another_machine_in_one_line(tmp_path):
    bad = tmp_path / "bad.log"
    bad.write_text("# Collective test starting: all_reduce_perf\n 1024 256 float sum -1 1.0 2.0\n")
    code, out, err = _cli("compare", "biring(16)", "--measured", bad, "--algos", "ring")
    assert code == 2 and not out and err.count("\n") == 1 and err.startswith(f"error: {bad}: line 2: ")
    code, out, err = _cli("compare", "biring(8)", "--measured", SAMPLE_LOG, "--algos", "ring")
    assert code == 2 and not out and err == (f"error: {SAMPLE_LOG}: the log has 16 ranks and biring(8) has 8 "
                                             "compute nodes: set the log beside the machine it measured\n")
    code, _, err = _cli("compare", "biring(16)", "--plot", tmp_path / "x.png")
    assert code == 2 and err == "error: --plot goes with --measured LOG\n"


def test_the_schedule_page_draws_the_sample_log_beside_the_model():
    at = AppTest.from_file(str(ROOT / "app.py"), default_timeout=120).run()
    at.query_params.update({"expr": "biring(16)", "algo": "ring", "coll": "allreduce"})
    at = switch_page(at, "schedule").run()
    assert not at.exception and not at.error
    charts = len(at.get("plotly_chart"))
    assert not [b for b in at.button if b.key == "s_measured_sample_button"]     # the closed box is not made
    at = open_boxes(at, "s_measured_open").run()
    at.button(key="s_measured_sample_button").click().run()
    assert not at.exception and not at.error
    assert len(at.get("plotly_chart")) == charts + 1
    (chart,) = [c for c in at.get("plotly_chart") if "measured" in json.loads(c.proto.spec)["layout"]["title"]["text"]]
    names = [t["name"] for t in json.loads(chart.proto.spec)["data"]]
    assert names[:3] == ["measured (out-of-place)", "measured (in-place)", "model: ring"]
    assert any(m.value.startswith("NCCL measured 39.8 GB/s busbw at the largest size") for m in at.markdown)
    at.button(key="s_measured_use").click().run()          # the fitted prices become every page's prices
    assert not at.exception and at.session_state["w_prices"] == "calibrated"
    alpha, bw, source = at.session_state["w_cal"]
    assert alpha == pytest.approx(6.0, rel=0.25) and bw == pytest.approx(40.0, rel=0.10) and "ring fit" in source
    assert any("prices: calibrated (ring fit" in c.value for c in at.sidebar.caption)



def test_an_uploaded_log_outlives_closing_its_box():
    """The measured box is made only while open (issue 44): closing it removes the uploader and its file, and the
    log uploaded stays in the session until "Forget it"."""
    at = AppTest.from_file(str(ROOT / "app.py"), default_timeout=120).run()
    at.query_params.update({"expr": "biring(16)", "algo": "ring", "coll": "allreduce"})
    at = open_boxes(switch_page(at, "schedule").run(), "s_measured_open").run()
    charts = len(at.get("plotly_chart"))
    at.get("file_uploader")[0].set_value(("mine.log", SAMPLE_LOG.read_bytes(), "text/plain")).run()
    assert not at.exception and not at.error and len(at.get("plotly_chart")) == charts + 1
    at.session_state["s_measured_open"] = False
    at.run()
    assert not at.get("file_uploader") and len(at.get("plotly_chart")) == charts
    at = open_boxes(at, "s_measured_open").run()
    assert len(at.get("plotly_chart")) == charts + 1 and not at.exception
    assert any(c.value.startswith("mine.log: the log uploaded before") for c in at.caption)
    at.button(key="s_measured_forget").click().run()
    assert len(at.get("plotly_chart")) == charts and "s_measured_kept" not in at.session_state
    assert any(c.value.startswith("Upload a log, or use the sample log") for c in at.caption)

def _bad_upload_page():
    """The panel with an upload that is not a benchmark log (AppTest cannot upload a file: the uploader is
    replaced for this run), then a line that must still be drawn."""
    import streamlit as st
    from streamlit.delta_generator import DeltaGenerator

    from studio.views import measured as measured_view
    from topologies import load

    class Upload:
        name = "bad.log"

        def read(self, n):
            return b"not a benchmark log\n"

        def seek(self, n):
            pass

    st.session_state["t_measured_open"] = True           # the box, made only while open
    real = DeltaGenerator.file_uploader
    DeltaGenerator.file_uploader = lambda self, *a, **k: Upload()
    try:
        measured_view.panel("t_", [("biring(16)", lambda: load("biring(16)"))], "allreduce")
    finally:
        DeltaGenerator.file_uploader = real
    st.markdown("still here")


def test_a_bad_upload_is_one_error_line_and_nothing_else_breaks():
    at = AppTest.from_function(_bad_upload_page, default_timeout=60).run()
    assert not at.exception
    assert [e.value for e in at.error] == ["bad.log: no data rows (size count type redop root time algbw busbw "
                                           "#wrong ...): not an nccl-tests or rccl-tests log"]
    assert [m.value for m in at.markdown][-1] == "still here" and not at.get("plotly_chart")
    assert "t_measured_kept" not in at.session_state                 # a log that does not read is not kept
