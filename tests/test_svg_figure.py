"""The server's SVG drawings of the studio's plotly figures (studio/figures/svg.py): valid SVG, every mark where
the figure puts it, hover text kept, hostile names inert, and None (plotly then) for what is not covered."""
import math
import xml.etree.ElementTree as ET
from fractions import Fraction

import plotly.graph_objects as go
import pytest
from hypothesis import given, settings, strategies as st

from studio.figures.curves import runtime_curve
from studio.figures.timelines import load_heatmap
from studio.figures.topology import topology_figure
from studio.figures.svg import figure_svg
from topologies import parse_topology
from topologies.model import COMPUTE, Link, Topology

NS = "{http://www.w3.org/2000/svg}"


def parsed(fig, width=800, ident="t", **kw):
    text = figure_svg(fig, width, ident, **kw)
    assert text is not None
    return ET.fromstring(text)


def titles(root, tag):
    return [el.find(f"{NS}title").text for el in root.iter(f"{NS}{tag}") if el.find(f"{NS}title") is not None]


def test_a_directed_topology_has_a_node_per_circle_and_an_arrow_per_link():
    topo = parse_topology("gkautz(2,10)")
    root = parsed(topology_figure(topo))
    nodes = [t for t in titles(root, "circle") if "in-links" in t]
    assert sorted(t.split("\n")[0] for t in nodes) == sorted(topo.names)
    pairs = {(l.src, l.dst) for l in topo.links if l.src != l.dst}
    arrows = [p for p in root.iter(f"{NS}path") if "rotate(" in (p.get("transform") or "")]
    assert len(arrows) == len(pairs)
    assert "10 nodes, 20 links" in "".join(root.itertext())          # the title, drawn


def test_without_its_title_the_drawing_is_shorter_and_the_title_is_gone():
    fig = topology_figure(parse_topology("biring(6)"))
    full, bare = parsed(fig), parsed(fig, title=False)
    assert "6 nodes" in "".join(full.itertext()) and "6 nodes" not in "".join(bare.itertext())
    assert float(bare.get("height")) < float(full.get("height"))


def test_switches_are_squares_and_equal_scale_keeps_a_circle_round():
    dgx = parse_topology("dgx_a100(boxes=2)")
    root = parsed(topology_figure(dgx))
    squares = sorted(titles(root, "rect"))
    assert [t.split("\n")[0] for t in squares] == sorted(dgx.names[u] for u in dgx.switch_nodes)
    assert all(t.endswith("\nswitch") for t in squares)
    ring = parsed(topology_figure(parse_topology("biring(12)")))
    xy = [(float(c.get("cx")), float(c.get("cy"))) for c in ring.iter(f"{NS}circle")
          if c.find(f"{NS}title") is not None and "in-links" in c.find(f"{NS}title").text]
    xs, ys = [x for x, _ in xy], [y for _, y in xy]
    assert max(xs) - min(xs) == pytest.approx(max(ys) - min(ys), rel=0.02)


def test_hostile_names_stay_text():
    evil = '<script>alert(1)</script>&"'
    topo = Topology(names=(evil, "b"), kinds=(COMPUTE, COMPUTE), links=(Link(0, 1), Link(1, 0)), name=evil,
                    expr="x")
    text = figure_svg(topology_figure(topo), 800)
    root = ET.fromstring(text)
    assert not list(root.iter(f"{NS}script")) and "<script>" not in text
    assert any(evil in t for t in titles(root, "circle"))


def test_a_heatmap_has_a_cell_per_value_coloured_by_it():
    topo = parse_topology("ring(4)")
    loads = {1: {0: Fraction(1), 1: Fraction(3)}, 2: {2: Fraction(2)}}
    root = parsed(load_heatmap(topo, loads))
    cells = {t: r.get("fill") for r in root.iter(f"{NS}rect") for t in [getattr(r.find(f"{NS}title"), "text", None)]
             if t}
    assert len(cells) == 2 * 3                               # 2 steps x the 3 links that carry anything
    top = next(f for t, f in cells.items() if t.endswith(": 3 shards"))
    assert top == "rgb(103,0,13)"                            # the top of plotly's Reds
    assert next(f for t, f in cells.items() if t.endswith(": 0 shards")) == "rgb(255,245,240)"


def test_log_axes_tick_by_decades_with_si_labels():
    sizes = [1e3 * 10 ** k for k in range(6)]
    fig = runtime_curve(sizes, [5 * 2 ** k for k in range(6)], [4 * 2 ** k for k in range(6)], [1] * 6, "bfb",
                        (1e6, 80))
    text = list(parsed(fig, 390).itertext())
    assert {"1k", "10k", "100k", "1M", "10M", "100M"} <= set(text)
    assert "M (bytes)" in text and "algbw (GB/s)" in text and "lower bound" in text


def test_what_is_not_covered_is_left_to_plotly():
    assert figure_svg(go.Figure(go.Bar(x=[1, 2], y=[3, 4])), 800) is None
    fig = go.Figure(go.Scatter(x=[1, 2], y=[3, 4]))
    fig.add_annotation(x=1, y=3, text="note")
    assert figure_svg(fig, 800) is None
    assert figure_svg(go.Figure(go.Scatter(x=[1], y=[1], marker=dict(symbol="star"))), 800) is None


def test_two_drawings_on_one_page_keep_their_ids_apart():
    fig = runtime_curve([1e3, 1e6], [1, 2], [1, 2], [1, 1])
    ids = [{el.get("id") for el in parsed(fig, 390, key).iter() if el.get("id")} for key in ("a", "b")]
    assert ids[0] and not ids[0] & ids[1]


def test_a_span_below_normal_floats_is_drawn_as_one_value():
    # hypothesis found it: y from 0 to 5e-324 (a subnormal span) made the tick step underflow to 0
    root = parsed(go.Figure(go.Scatter(x=[0.0, 0.0], y=[0.0, 5e-324], mode="markers")), 600)
    assert len(list(root.iter(f"{NS}circle"))) == 2


@settings(max_examples=60, deadline=None)
@given(st.lists(st.tuples(st.floats(-1e6, 1e6), st.floats(-1e6, 1e6)), min_size=2, max_size=30),
       st.booleans())
def test_points_land_inside_the_plot_in_their_order(points, log):
    xs = [x for x, _ in points]
    ys = [abs(y) + 1e-3 if log else y for _, y in points]
    fig = go.Figure(go.Scatter(x=xs, y=ys, mode="markers", hovertext=[str(k) for k in range(len(xs))],
                               hoverinfo="text"))
    if log:
        fig.update_yaxes(type="log")
    root = parsed(fig, 600)
    plot = next(r for r in root.iter(f"{NS}rect") if r.get("fill") == "white" and r.get("x"))
    x0, y0 = float(plot.get("x")), float(plot.get("y"))
    x1, y1 = x0 + float(plot.get("width")), y0 + float(plot.get("height"))
    drawn = {int(c.find(f"{NS}title").text): (float(c.get("cx")), float(c.get("cy"))) for c in root.iter(f"{NS}circle")}
    assert sorted(drawn) == list(range(len(xs)))
    for k, (px, py) in drawn.items():
        assert x0 - 0.05 <= px <= x1 + 0.05 and y0 - 0.05 <= py <= y1 + 0.05
    for a in range(len(xs)):
        for b in range(len(xs)):
            if xs[a] < xs[b] - 1e-6 * (max(xs) - min(xs) + 1):
                assert drawn[a][0] <= drawn[b][0] + 0.11               # to the right: larger x
            ya, yb = (math.log10(ys[a]), math.log10(ys[b])) if log else (ys[a], ys[b])
            if ya < yb - 1e-6 * (max(ys) - min(ys) + 1):
                assert drawn[a][1] >= drawn[b][1] - 0.11               # up the page: larger y
