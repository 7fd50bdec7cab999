"""Figures written as plotly's JSON (studio/figures/spec.py): valid to plotly, drawn the same whichever way they
reach the SVG drawing, and shaped as the plotly calls they replace."""
import copy
import pickle
from fractions import Fraction

import plotly.graph_objects as go
import pytest
from plotly.subplots import make_subplots

from solvers.runtime import Execution, simulate
from studio.figures.charts import plain_title
from studio.figures.spec import FigureSpec, plotly_figure
from studio.figures.curves import runtime_curve
from studio.figures.timelines import load_heatmap, utilisation_heatmap
from studio.figures.titles import place_title, titled
from studio.figures.svg import figure_svg
from solvers.synthesize import synthesize
from topologies import parse_topology as load


def _specs() -> dict[str, FigureSpec]:
    topo = load("gkautz(2,10)")
    schedule = synthesize(topo, "bfb", "allgather").schedule
    run = simulate(topo, schedule, 1e6, Execution.alpha_beta(10.0, 12.5))
    sizes = [1e3, 1e5, 1e7, 1e9]
    return {
        "runtime curve": runtime_curve(sizes, [3.0, 9.0, 400.0, 39000.0], [1.0, 5.0, 300.0, 30000.0], [1, 1, 2, 4],
                                       label="bfb", marker=(1e6, 50.0)),
        "runtime curve without P": runtime_curve(sizes, [3.0, 9.0, 400.0, 39000.0], [1.0, 5.0, 300.0, 30000.0]),
        "load": load_heatmap(topo, {1: {0: Fraction(1), 3: Fraction(1, 2)}, 2: {5: Fraction(1, 4)}}),
        "utilisation matrix": utilisation_heatmap(topo, run),
        "utilisation strip": utilisation_heatmap(topo, run, max_nodes=4, max_links=6),
    }


SPECS = _specs()


@pytest.mark.parametrize("name", sorted(SPECS))
def test_plotly_takes_the_dict_as_it_is(name):
    spec = SPECS[name]
    fig = spec.figure()                        # plotly checks every property on the way in
    assert isinstance(fig, go.Figure)
    assert fig.to_dict()["data"] == go.Figure(spec.to_dict()).to_dict()["data"]
    assert plotly_figure(spec) is fig and plotly_figure(fig) is fig


@pytest.mark.parametrize("name", sorted(SPECS))
def test_the_drawing_is_the_same_from_the_dict_and_from_plotly(name):
    spec = SPECS[name]
    fresh = FigureSpec(**spec.to_dict())      # not yet built into plotly: the drawing reads the dict
    assert fresh._figure is None
    assert figure_svg(fresh, 390, "k") == figure_svg(go.Figure(spec.to_dict()), 390, "k")
    assert fresh._figure is None               # drawing it built nothing of plotly's
    assert plain_title(fresh) == plain_title(go.Figure(spec.to_dict())) != ""


def test_the_strip_is_left_to_plotly():
    assert figure_svg(SPECS["utilisation strip"], 390) is None      # a bar chart: plotly shows it


def test_the_two_panels_are_make_subplots_own():
    made = make_subplots(rows=2, cols=1, shared_xaxes=True, vertical_spacing=0.06).layout
    ours = SPECS["runtime curve"].figure().layout
    for axis in ("xaxis", "yaxis", "xaxis2", "yaxis2"):
        for prop in ("anchor", "domain", "matches", "showticklabels"):
            assert ours[axis][prop] == made[axis][prop], (axis, prop)
    data = SPECS["runtime curve"].to_dict()["data"]
    assert [(t["xaxis"], t["yaxis"]) for t in data] == \
        [("x", "y")] * 2 + [("x2", "y2")] * 2 + [("x", "y"), ("x2", "y2")]


def test_titled_places_a_title_as_place_title_does():
    text = "A long title that has to be cut into two lines for a half-width drawing on the Schedule page"
    layout = titled({"title": text, "margin": {"l": 5, "t": 10}}, 390)
    fig = place_title(go.Figure(layout={"title": text, "margin": {"l": 5, "t": 10}}), width_px=390)
    assert go.Figure(layout=layout).layout.title == fig.layout.title
    assert layout["margin"] == {"l": 5, "t": fig.layout.margin.t}
    assert "<br>" in layout["title"]["text"]


def test_to_dict_is_a_copy_and_plotly_wins_once_built():
    spec = load_heatmap(load("ring(4)"), {1: {0: Fraction(1)}})
    spec.to_dict()["data"][0]["z"][0][0] = 99.0
    assert spec.to_dict()["data"][0]["z"][0][0] == 1.0
    spec.update_layout(height=999)             # plotly's own method, on the figure it builds
    assert spec.to_dict()["layout"]["height"] == 999


def test_it_copies_and_pickles():
    spec = SPECS["load"]
    for other in (copy.deepcopy(spec), pickle.loads(pickle.dumps(spec))):
        assert other.to_dict()["data"] == spec.to_dict()["data"]
    with pytest.raises(AttributeError):
        spec._nothing_of_plotly
    with pytest.raises(ValueError):           # a property plotly does not know fails as plotly's figures do
        FigureSpec([{"type": "scatter", "nonsense": 1}], {}).figure()


def test_the_title_is_read_before_and_after_plotly_is_built():
    spec = FigureSpec([], {"title": "plain"})
    assert spec.title_text == "plain" and FigureSpec([], {}).title_text == ""
    spec = FigureSpec([], {"title": {"text": "as a dict"}})
    assert spec.title_text == "as a dict"
    spec.update_layout(title="changed through plotly")
    assert spec.title_text == "changed through plotly"
