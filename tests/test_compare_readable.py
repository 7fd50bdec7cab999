"""Issue 59, finding 3: the Compare page is easy to read. Rows that do not apply are folded away behind a toggle
that counts them; no cell reads "None"; the status is its outcome with the reason in a column of its own; every
synthesizer has a colour of its own (keyed by the registry's order, the same on every page) and every design a
dash of its own; the figure shows one curve per design by default (its fastest schedule at each size); the winner
bands' labels do not overlap."""
from __future__ import annotations

import json

import pandas as pd
import pytest
from streamlit.testing.v1 import AppTest

from solvers.compare import PLOT_SIZES, Curve, Winner, compare
from solvers.registry import ALGORITHMS

from .conftest import ROOT, switch_page

# cheap synthesizers, some of which do not apply to a directed ring or a Kautz graph (dbt, rhd, shifted_ring)
ALGOS = ["ring", "ring_uni", "shifted_ring", "dbt", "rhd", "sptree", "bfb", "forestcoll"]
DESIGNS = ["ring(8)", "gkautz(2,8)", "biring(8)"]
MISSING_TEXT = {"None", "nan", "NaN", "<NA>"}


def _no_missing_shown(frame: pd.DataFrame) -> None:
    for col in frame.columns:
        for v in frame[col]:
            assert v is not None and not (not isinstance(v, str) and pd.isna(v)), (col, v)
            assert not (isinstance(v, str) and v.strip() in MISSING_TEXT), (col, v)


@pytest.fixture(scope="module")
def result():
    return compare(DESIGNS, ["allreduce"], 1e6, alpha_us=10.0, bandwidth_gbs=12.5, algos=ALGOS)


def test_table_folds_rows_that_do_not_apply_and_shows_no_none(result):
    from studio.figures.compare import readable_table
    from studio.pages.compare import table

    frame = table(result)
    na = [r for r in result.rows if r["status"].startswith("not applicable: ")]
    assert na and len(na) < len(result.rows)
    shown, hidden = readable_table(frame)
    assert hidden == len(na) and len(shown) == len(result.rows) - len(na)
    assert "not applicable" not in set(shown["status"])
    _no_missing_shown(shown)
    every, hidden_again = readable_table(frame, show_not_applicable=True)
    assert hidden_again == hidden and len(every) == len(result.rows)
    _no_missing_shown(every)
    # the outcome stays short; the reason, in full, is in "why"
    assert set(every["status"]) <= {"ok", "bound", "not applicable", "skipped", "error", "failed verification"}
    whys = list(every.loc[every["status"] == "not applicable", "why"])
    assert sorted(whys) == sorted(r["status"].split(": ", 1)[1] for r in na)
    # not-applicable rows carry no time: those cells are empty, not "None"
    assert set(every.loc[every["status"] == "not applicable", "time (µs)"]) == {""}


def test_one_colour_per_synthesizer_the_same_on_every_page():
    from studio.figures import compare as compare_figures
    from studio.figures import charts

    colors = charts.synth_colors()
    assert list(colors) == list(ALGORITHMS)
    assert len(set(colors.values())) == len(colors), colors
    assert "#000000" not in colors.values()                # black is the bounds'
    for a, b in [("ring", "forestcoll"), ("ring_uni", "teccl")]:     # the pairs that shared a colour
        assert colors[a] != colors[b]
    assert all(compare_figures.algo_color(a) == colors[a] for a in ALGORITHMS)


def test_every_schedule_view_colours_by_synthesizer_and_dashes_by_design(result):
    from studio.figures.compare import design_dash, runtime_figure

    fig = runtime_figure(result.curves(PLOT_SIZES), result.winners(), view="every")
    lines = [t for t in fig.data if not t.name.startswith("lower bound")]
    by_algo: dict[str, set] = {}
    by_design: dict[str, set] = {}
    for t in lines:
        algo, design = t.name.split(" · ")
        by_algo.setdefault(algo, set()).add(t.line.color)
        by_design.setdefault(design, set()).add(t.line.dash)
    assert all(len(c) == 1 for c in by_algo.values())
    assert len({next(iter(c)) for c in by_algo.values()}) == len(by_algo)       # no two synthesizers share one
    assert all(len(d) == 1 for d in by_design.values()) and len(by_design) == len(DESIGNS)
    assert len({next(iter(d)) for d in by_design.values()}) == len(DESIGNS)
    assert len({design_dash(k) for k in range(8)}) == 8             # the page's eight designs, eight dashes


def test_fastest_view_draws_one_curve_per_design(result):
    from studio.figures.compare import fastest_per_design, runtime_figure

    curves = result.curves(PLOT_SIZES)
    fig = runtime_figure(curves, result.winners(), view="fastest")
    drawn = [t for t in fig.data if t.x and t.x[0] is not None and not t.name.startswith("lower bound")]
    assert len(drawn) == len(DESIGNS) and all(t.name.startswith("fastest · ") for t in drawn)
    for f in fastest_per_design(curves):           # at each size, no verified schedule of the design is faster
        mine = [c for c in curves if c.topology == f.topology and not c.bound]
        for j, t in enumerate(f.times_us):
            assert t == min(c.times_us[j] for c in mine)
            assert f.algos[j] in {c.algo for c in mine if c.times_us[j] == t}
    with pytest.raises(ValueError, match="view"):
        runtime_figure(curves, view="some")


def test_band_labels_do_not_overlap():
    from studio.figures.compare import band_labels

    edges = [1e3 * 1.5 ** k for k in range(30)]            # 29 narrow bands, names far wider than them
    winners = [Winner(a, b, "forestcoll" if k % 2 else "expansion", "t", "allreduce", "a long design name")
               for k, (a, b) in enumerate(zip(edges, edges[1:]))]
    labels = band_labels(winners, many_designs=True)
    assert 0 < len(labels) < len(winners)                  # those that fit nowhere are left out
    for row in {lab.row for lab in labels}:
        spans = sorted((lab.x - lab.width / 2, lab.x + lab.width / 2) for lab in labels if lab.row == row)
        assert all(a[1] <= b[0] + 1e-12 for a, b in zip(spans, spans[1:])), spans
    wide = [Winner(1e3, 1e6, "ring", "t", "allreduce", "x"), Winner(1e6, 1e10, "bfb", "t", "allreduce", "x")]
    assert [lab.row for lab in band_labels(wide, many_designs=False)] == [0, 0]


def test_the_page_folds_not_applicable_rows_and_draws_one_curve_per_design():
    at = AppTest.from_file(str(ROOT / "app.py"), default_timeout=300).run()
    at = switch_page(at, "compare").run()
    at.text_area(key="cmp_exprs").set_value("\n".join(DESIGNS)).run()
    at.multiselect(key="cmp_algos").set_value(ALGOS).run()
    at.button(key="cmp_run").click().run()
    assert not at.exception
    frame = next(d.value for d in at.dataframe if "status" in d.value.columns)
    assert "not applicable" not in set(frame["status"])
    _no_missing_shown(frame)
    toggle = at.toggle(key="cmp_show_na")
    hidden = int(toggle.label.split()[2])
    assert toggle.value is False and toggle.label == f"Show the {hidden} rows that do not apply" and hidden > 0
    spec = json.loads(at.get("plotly_chart")[0].proto.spec)
    drawn = [t for t in spec["data"] if t["x"] and t["x"][0] is not None
             and not t["name"].startswith("lower bound")]
    assert sorted(t["name"] for t in drawn) == sorted(f"fastest · {n}" for n in ("UniRing(1,8)", "Π₂,₈",
                                                                                 "BiRing(2,8)"))
    toggle.set_value(True).run()
    every = next(d.value for d in at.dataframe if "status" in d.value.columns)
    assert len(every) == len(frame) + hidden == len(DESIGNS) * (1 + len(ALGOS))
    _no_missing_shown(every)
    at.radio(key="cmp_plot_view").set_value("every").run()
    spec = json.loads(at.get("plotly_chart")[0].proto.spec)
    assert len([t for t in spec["data"] if not t["name"].startswith("lower bound")]) == sum(
        r == "ok" for r in every["status"])
