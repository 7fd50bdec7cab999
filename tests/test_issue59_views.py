"""Issue 59, findings 5, 7 and 10: what the Failures, Measured, GenModel and Learn views told a new user wrongly.

5. The Failures button and its progress count the same runs and say what they are (failure sets + healthy
   designs); a kept share above 100 % says why (the runtime model's algbw at M includes latency).
7. The Measured view's "Not drawn" reasons are never cut mid-word, and every registered synthesizer that is not
   drawn is listed with its reason (teccl included).
10. GenModel's "AllReduce time against size" has a real y title, a dash and a marker per plan, and names the plans
   whose curves coincide; Learn's measured line is drawn above the model, with markers.
"""
from __future__ import annotations

import json

import pytest
from streamlit.testing.v1 import AppTest

from .conftest import ROOT, switch_page


# ---- 5. Failures -----------------------------------------------------------------------------------------------

def test_the_failures_button_counts_failure_sets_and_healthy_designs():
    at = AppTest.from_file(str(ROOT / "app.py"), default_timeout=180).run()
    switch_page(at, "failures").run()
    assert not at.exception
    label = at.button(key="fl_run").label
    # the default designs: torus(4,4) and circulant(16,[1,4]), 32 cables each, each healthy design analysed too
    assert label == "Run (64 failure sets + 2 healthy designs)", label


def test_the_progress_counts_what_the_button_counts(monkeypatch):
    import solvers.failures
    from solvers.failures import FailureTask
    from studio.views.failures import analyse_job, count_text

    monkeypatch.setattr(solvers.failures, "analyse", lambda task: {"failed": task.failed})
    tasks = []
    for expr in ("a", "b"):
        tasks += [FailureTask(expr, "links", failed, ("bfb",), "allgather", ()) for failed in ((), ("x",), ("y",))]
    heard = []
    analyse_job(tasks, lambda phase, f: heard.append(phase))
    said = count_text(4, 2)
    assert said == "4 failure sets + 2 healthy designs"
    assert heard[-1] == f"6 of 6 runs ({said})", heard[-1]
    assert all(said in phase for phase in heard)
    assert count_text(1, 1) == "1 failure set + 1 healthy design"


def test_a_kept_share_above_100_percent_says_why():
    from studio.views.failures import OVER_HEALTHY, kept_text

    text = kept_text("forestcoll", 1.25, 1.0)
    assert "keeps 125% of its healthy algbw" in text
    assert "latency" in text and "α" in text and "at this size" in text
    assert "latency" in OVER_HEALTHY and "α" in OVER_HEALTHY
    plain = kept_text("bfb", 0.75, 1.0)
    assert plain == "bfb keeps 75% of its healthy algbw"


# ---- 7. Measured view ------------------------------------------------------------------------------------------

def test_reasons_are_cut_at_a_word_boundary_with_an_ellipsis():
    from studio.views.measured import short_reason

    text = ("not applicable: the double binary tree needs a number of ranks that its two trees can share, "
            "and biring(16) gives a layout where the second tree's interior nodes are leaves of the first one "
            "everywhere")
    short = short_reason(text, 140)
    assert len(short) <= 141 and short.endswith("…")
    kept = short[:-1]
    assert text.startswith(kept) and text[len(kept)] == " " and not kept.endswith(" ")
    assert short_reason("short reason", 140) == "short reason"
    assert short_reason("x" * 200, 140) == "x" * 139 + "…"        # one long word: cut, but marked


@pytest.fixture(scope="module")
def sample():
    from solvers.runtime.measured import read_bench_log
    from studio.views.measured import SAMPLE_LOG

    return read_bench_log(SAMPLE_LOG.read_bytes())


def test_every_synthesizer_not_drawn_is_listed_with_its_reason(sample):
    from solvers.registry import ALGORITHMS
    from studio.views.measured import SLOW, measured_vs_model
    from topologies import load

    view = measured_vs_model(load("biring(16)"), sample, ["ring", "dbt"], "allreduce")
    listed = dict(view.not_drawn())
    drawn = {c.algo for c in view.curves}
    assert drawn == {"ring"}
    assert set(listed) == set(ALGORITHMS) - drawn
    assert listed["teccl"] == SLOW["teccl"]
    assert listed["dbt"].startswith("not applicable: ")
    assert all(reason for reason in listed.values())


def test_the_default_run_lists_teccl(sample):
    from solvers.registry import ALGORITHMS
    from studio.views.measured import SLOW, measured_vs_model, not_drawn_caption
    from topologies import load

    view = measured_vs_model(load("biring(16)"), sample, None, "allreduce", budget_s=0.0)
    listed = dict(view.not_drawn())
    assert listed["teccl"] == SLOW["teccl"]
    assert {c.algo for c in view.curves} | set(listed) == set(ALGORITHMS)
    short, full = not_drawn_caption(view)
    assert "teccl" in short and SLOW["teccl"] in full
    for algo, reason in view.not_drawn():
        assert f"{algo} ({reason})" in full


# ---- 10. GenModel's and Learn's hidden curves -------------------------------------------------------------------

def test_genmodel_size_figure_titles_its_axis_and_tells_plans_apart():
    from studio.figures.genmodel import coinciding, size_figure

    sizes = [1e3, 1e5, 1e7]
    series = {"CPS": [1.0, 2.0, 3.0], "Ring": [5.0, 6.0, 7.0], "6 × 2": [1.0, 2.0, 3.0], "4 × 3": [1.001, 2.0, 3.0]}
    assert coinciding(sizes, series) == [["CPS", "6 × 2", "4 × 3"]]
    fig = size_figure(sizes, series, ["CPS"] * 3)
    assert fig.layout.yaxis.title.text == "AllReduce time (s)"
    plans = [t for t in fig.data if t.name in series]
    assert len({t.line.dash for t in plans}) == len(plans)
    assert len({t.marker.symbol for t in plans}) == len(plans)
    assert all("markers" in t.mode for t in plans)
    notes = " ".join(a.text for a in fig.layout.annotations)
    assert "CPS, 6 × 2 and 4 × 3" in notes and "coincide" in notes


def test_the_genmodel_page_names_its_coinciding_plans():
    def page():
        from studio.views.genmodel import render

        render()

    at = AppTest.from_function(page, default_timeout=120).run()
    assert not at.exception and not at.error
    spec = next(json.loads(c.proto.spec) for c in at.get("plotly_chart")
                if json.loads(c.proto.spec)["layout"]["title"]["text"].startswith("AllReduce time against size"))
    assert spec["layout"]["yaxis"]["title"]["text"] == "AllReduce time (s)"
    plans = [t for t in spec["data"] if t["name"] != "best from here"]
    assert len(plans) == 6 and len({t["line"]["dash"] for t in plans}) == 6


def test_learn_draws_the_measured_line_above_the_model_with_markers():
    from studio.figures.learn import size_curves_figure

    fig = size_curves_figure([1e3, 1e6], {"measured (nccl-tests)": [10.0, 100.0],
                                          "model, ring at alpha 6 µs": [10.0, 100.0]})
    assert fig.data[-1].name == "measured (nccl-tests)"
    assert "markers" in fig.data[-1].mode and fig.data[0].mode == "lines"
