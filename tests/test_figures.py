"""Figures: the layout follows the family, every link and node gets hover text, schedule figures hold the data."""
from fractions import Fraction

import pytest

from solvers.runtime import Execution, Model, bound_time_us, simulate
from solvers.synthesize import synthesize
from studio.figures.curves import runtime_curve
from studio.figures.timelines import gantt_figure, load_heatmap, utilisation_heatmap
from studio.figures.topology import choose_layout, topology_figure
from topologies import parse_topology

from .helpers import star


@pytest.mark.parametrize("expr, layout", [("torus(4,6)", "grid"), ("hamming(2,3)", "grid"),
                                          ("circulant(16,[3,4])", "circular"), ("biring(8)", "circular"),
                                          ("kautz(2,2)", "spring"), ("line(complete(3))", "spring")])
def test_layout_follows_the_family(expr, layout):
    topo = parse_topology(expr)
    name, pos = choose_layout(topo)
    assert name == layout and len(pos) == topo.num_nodes
    assert len(set(pos)) == topo.num_nodes          # no two nodes on the same spot


def test_torus_grid_puts_neighbours_next_to_each_other():
    topo = parse_topology("torus(4,6)")
    _, pos = choose_layout(topo)
    a, b = topo.index("1,2"), topo.index("1,3")
    assert abs(pos[a][0] - pos[b][0]) == 1 and pos[a][1] == pos[b][1]


def test_switched_clusters_are_layered():
    topo = star(4)
    name, pos = choose_layout(topo)
    assert name == "layered" and pos[4][1] > max(pos[i][1] for i in range(4))


def test_hover_text_names_links_and_nodes():
    topo = parse_topology("uniring(2,4)")
    fig = topology_figure(topo)
    texts = [t for tr in fig.data if tr.hovertext is not None for t in tr.hovertext]
    assert any("0 → 1 ×2" in t and "bandwidth 1, 1 GB/s" in t for t in texts)
    nodes = [tr for tr in fig.data if tr.name == "compute"][0]
    assert "in-links" in nodes.hovertemplate


def test_link_weights_draw_only_those_links():
    topo = parse_topology("biring(6)")
    fig = topology_figure(topo, link_weight={0: 1.0, 3: 0.5})
    weighted = [tr for tr in fig.data if tr.hovertext and "load" in str(tr.hovertext)]
    assert len(weighted) == 2


AB = Execution.alpha_beta(10.0, 12.5)


def _built(expr, algo, coll):
    r = synthesize(parse_topology(expr), algo, coll)
    return r.topology, r.schedule


def test_runtime_curve_is_the_models_time_and_algbw_above_the_bound():
    topo, schedule = _built("gkautz(2,8)", "bfb", "allreduce")
    sizes = [1e3, 1e6, 1e7, 1e9]
    times, slices = Model(topo, schedule, AB).times(sizes)
    bounds = [bound_time_us(topo, schedule.collective, m, AB) for m in sizes]
    at = simulate(topo, schedule, 1e6, AB)
    fig = runtime_curve(sizes, times, bounds, slices, label="bfb", marker=(1e6, at.time_us))
    time, bound, algbw, bound_bw, mark_t, mark_bw = fig.data
    assert list(time.y) == pytest.approx(list(times)) and time.name == "bfb"
    assert list(algbw.y) == pytest.approx([m / t / 1e3 for m, t in zip(sizes, times)])
    assert [c[0] for c in time.customdata] == [int(p) for p in slices] and max(slices) > 1   # P pipelines here
    assert all(t >= b * (1 - 1e-9) for t, b in zip(time.y, bound.y))
    assert all(a <= b * (1 + 1e-9) for a, b in zip(algbw.y, bound_bw.y))   # the bound's algbw is an upper bound
    assert (mark_t.x[0], mark_t.y[0]) == (1e6, at.time_us) and mark_bw.y[0] == pytest.approx(at.algbw_gbs)
    assert fig.layout.xaxis.type == fig.layout.xaxis2.type == "log"
    assert fig.layout.yaxis.type == fig.layout.yaxis2.type == "log"
    assert time.yaxis == "y" and algbw.yaxis == "y2"


def test_utilisation_heatmap_of_a_ring_is_full():
    topo, schedule = _built("ring(4)", "ring", "allreduce")
    run = simulate(topo, schedule, 1e6, AB)
    fig = utilisation_heatmap(topo, run)
    z = fig.data[0].z
    cells = [v for row in z for v in row if v is not None]
    assert len(cells) == len(topo.links) == 4
    assert all(0.0 <= v <= 1.0 for v in cells)
    assert max(cells) == pytest.approx(1.0)            # a ring allreduce keeps every link busy all the time
    for i, l in enumerate(topo.links):
        assert z[l.src][l.dst] == pytest.approx(run.utilisation()[i])


def test_utilisation_heatmap_takes_the_busiest_of_parallel_links_and_leaves_non_links_empty():
    topo, schedule = _built("gkautz(2,8)", "bfb", "allreduce")
    run = simulate(topo, schedule, 1e6, AB)
    util = run.utilisation()
    z = utilisation_heatmap(topo, run).data[0].z
    for u in range(topo.num_nodes):
        for v in range(topo.num_nodes):
            mine = [util.get(i, 0.0) for i, l in enumerate(topo.links) if (l.src, l.dst) == (u, v)]
            assert z[u][v] == (pytest.approx(max(mine)) if mine else None)
    assert 0.0 <= min(util.values()) and max(util.values()) <= 1.0 + 1e-12


def test_utilisation_strip_for_big_fabrics_is_capped_and_sorted():
    topo, schedule = _built("circulant(16,[3,4])", "bfb", "allgather")
    run = simulate(topo, schedule, 1e6, AB)
    fig = utilisation_heatmap(topo, run, max_nodes=8, max_links=10)
    bars = fig.data[0]
    assert len(bars.y) == 10 and list(bars.y) == sorted(run.utilisation().values(), reverse=True)[:10]
    assert all(0.0 <= v <= 1.0 + 1e-12 for v in bars.y)


@pytest.mark.parametrize("color_by", ["slice", "step"])
def test_gantt_has_one_bar_per_recorded_send(color_by):
    topo, schedule = _built("complete(4)", "dbt", "allreduce")
    run = simulate(topo, schedule, 1e6, AB, record=True)
    assert run.slices > 1 and len(run.timeline) == run.messages * run.slices
    fig = gantt_figure(topo, run.timeline, color_by)
    (bars,) = fig.data
    assert len(bars.x) == len(run.timeline)
    spans = [v for span in sorted(zip(bars.base, bars.x)) for v in span]
    assert spans == pytest.approx([v for r in sorted(run.timeline, key=lambda r: (r["start_us"], r["end_us"]))
                                   for v in (r["start_us"], r["end_us"] - r["start_us"])])
    assert max(b + x for b, x in zip(bars.base, bars.x)) == pytest.approx(run.time_us)
    assert set(bars.y) == {f"{topo.names[topo.links[l].src]}→{topo.names[topo.links[l].dst]}"
                           for l in run.link_busy_us}
    assert sorted(set(bars.marker.color)) == sorted({r[color_by] for r in run.timeline})


def test_gantt_caps_links_and_rejects_an_unknown_colour():
    topo, schedule = _built("ring(4)", "ring", "allreduce")
    run = simulate(topo, schedule, 1e6, AB, record=True)
    assert len(set(gantt_figure(topo, run.timeline, max_links=2).data[0].y)) == 2
    with pytest.raises(ValueError, match="colour by"):
        gantt_figure(topo, run.timeline, "shard")


def test_heatmap_cells_are_the_loads():
    topo = parse_topology("biring(4)")
    fig = load_heatmap(topo, {1: {0: Fraction(1), 1: Fraction(1, 2)}, 2: {0: Fraction(1, 4)}})
    z = fig.data[0].z
    assert [list(row) for row in z] == [[1.0, 0.5], [0.25, 0.0]]


# ------------------------------------------------------------------------- layered drawings: labels in pixels
def _pixels(fig):
    """(to_px(x, y), width, height) for a figure drawn at its planned width (``meta.label_width_px``, else 800)
    and its height: plotly's mapping from data to pixels, with equal axis scales where ``scaleanchor`` asks."""
    lay = fig.layout
    width = (lay.meta or {}).get("label_width_px", 800) if isinstance(lay.meta, dict) else 800
    height = lay.height or 450
    m = lay.margin
    left, right, top, bottom = (v if v is not None else d for v, d in ((m.l, 80), (m.r, 80), (m.t, 100),
                                                                        (m.b, 80)))
    xs = [x for tr in fig.data if tr.x is not None for x in tr.x if x is not None]
    ys = [y for tr in fig.data if tr.y is not None for y in tr.y if y is not None]
    x0, x1 = lay.xaxis.range or (min(xs) - 0.05 * (max(xs) - min(xs)), max(xs) + 0.05 * (max(xs) - min(xs)))
    y0, y1 = lay.yaxis.range or (min(ys) - 0.05 * (max(ys) - min(ys)), max(ys) + 0.05 * (max(ys) - min(ys)))
    pw, ph = width - left - right, height - top - bottom
    sx, sy = pw / (x1 - x0), ph / (y1 - y0)
    if lay.yaxis.scaleanchor == "x":             # one scale for both, the plot centred in its box
        sx = sy = min(sx, sy)
    cx, cy = left + (pw - sx * (x1 - x0)) / 2, top + (ph - sy * (y1 - y0)) / 2
    return (lambda x, y: (cx + (x - x0) * sx, cy + (y1 - y) * sy)), width, height


@pytest.mark.parametrize("expr", ["dgx_a100(boxes=2)", "mi250(clusters=2)", "mi250(clusters=4)", "fat_tree(8)",
                                  "dgx_a100(boxes=8)", "cluster(16,16,10,1)"])
def test_layered_drawing_labels_do_not_overlap(expr):
    """Issue 40: a cluster's layered drawing squeezed its node labels into each other. Drawn at its planned
    width, labels of one row clear each other, stay inside the figure, sit below their own node and above the
    next layer, and each layer keeps labels (all of them while a layer has at most 32 nodes)."""
    from topologies.files import load

    topo = load(expr)
    fig = topology_figure(topo)
    to_px, width, height = _pixels(fig)
    nodes = [(to_px(x, y), s) for tr in fig.data if tr.name in ("compute", "switch")
             for x, y, s in zip(tr.x, tr.y, tr.marker.size if isinstance(tr.marker.size, tuple)
                                else [tr.marker.size] * len(tr.x))]
    layers = sorted({round(p[1], 3) for p, _ in nodes})
    labels = []
    for tr in fig.data:
        if tr.mode and "text" in tr.mode and tr.text is not None and tr.name in ("compute", "switch", "labels"):
            size = tr.textfont.size or 12
            for x, y, t in zip(tr.x, tr.y, tr.text):
                px, py = to_px(x, y)
                labels.append((px, py, 0.6 * size * len(t), 1.2 * size))
    per_layer = {ly: [lb for lb in labels if max(v for v in layers if v <= lb[1] + 0.5) == ly] for ly in layers}
    for ly, members in per_layer.items():
        count = sum(1 for p, _ in nodes if round(p[1], 3) == ly)
        assert len(members) >= (count if count <= 32 else 16), f"layer at {ly:.0f} px: {len(members)} of {count}"
    for px, py, w, h in labels:
        assert w / 2 <= px <= width - w / 2 and h / 2 <= py <= height - h / 2
    rows: dict[float, list] = {}
    for lb in labels:
        rows.setdefault(round(lb[1], 3), []).append(lb)
    for row in rows.values():
        row.sort()
        for a, b in zip(row, row[1:]):
            assert b[0] - a[0] >= (a[2] + b[2]) / 2 + 2, f"labels at {a[0]:.0f} and {b[0]:.0f} px overlap"
    ys = sorted(rows)
    for a, b in zip(ys, ys[1:]):
        assert b - a >= rows[a][0][3] - 1e-6                       # rows of text do not overlap each other
    for px, py, w, h in labels:                                    # no label on a node of the layer below
        for (nx, ny), s in nodes:
            if ny > py:
                assert ny - s / 2 >= py + h / 2 or abs(nx - px) >= w / 2 + s / 2


# ------------------------------------------------------------------------------------ titles and the toolbar
def _every_titled_figure():
    """One of each figure the studio's figure modules build (small inputs), by name."""
    from solvers.compare import Curve, Winner
    from studio.figures import learn as lf
    from studio.figures import genmodel as gm
    from studio.figures import compare as compare_figures
    from studio.figures.curves import frontier_figure, sweep_figure
    from studio.figures.timelines import epoch_gantt, tacos_gantt
    from solvers.genmodel import parse_tree
    from solvers.genmodel.gentree import Planner

    topo, schedule = _built("gkautz(2,8)", "bfb", "allreduce")
    sizes = [1e3, 1e6, 1e9]
    times, slices = Model(topo, schedule, AB).times(sizes)
    bounds = [bound_time_us(topo, schedule.collective, m, AB) for m in sizes]
    run = simulate(topo, schedule, 1e6, AB, record=True)
    tree = Planner(parse_tree("tree(2x3,1x4)")).run(1e8)
    curve = Curve("bfb", "gkautz(2,8)", "Π_{2,8}", "allreduce", "bfb", tuple(sizes), tuple(times))
    rows = [{"name": "a", "steps": 3, "tb_factor": 1.0}, {"name": "b", "steps": 4, "tb_factor": 0.9}]
    plans = [{"plan": "CPS", "alpha": 1, "beta": 2, "gamma": 0, "delta": 1, "epsilon": 0, "total": 4, "steps": 2}]
    return {
        "runtime_curve": runtime_curve(sizes, times, bounds, slices),
        "topology circular": topology_figure(topo),
        "topology layered": topology_figure(parse_topology("dgx_a100(boxes=2)")),
        "gantt": gantt_figure(topo, run.timeline),
        "utilisation": utilisation_heatmap(topo, run),
        "load": load_heatmap(topo, {0: {0: Fraction(1)}}),
        "epoch gantt": epoch_gantt(topo, [{"epoch": 0, "arrives": 1, "from": "0", "to": "1", "source": "0",
                                           "lo": "0", "hi": "1"}]),
        "tacos gantt": tacos_gantt(topo, [{"link": 0, "phase": "allgather", "shard": 0, "part": 0,
                                           "start_us": 0.0, "end_us": 1.0}]),
        "frontier": frontier_figure(rows, (3, Fraction(7, 8))),
        "sweep": sweep_figure({"a": [(8, 1.0), (16, 2.0)]}),
        "compare runtime": compare_figures.runtime_figure([curve], [Winner(1e3, 1e9, "bfb", "gkautz(2,8)",
                                                                           "allreduce", "Π_{2,8}")]),
        "learn sizes": lf.size_curves_figure(sizes, {"a": list(times)}, title="x " * 80),
        "learn share": lf.latency_share_figure(sizes, {"a": [0.5, 0.2, 0.1]}),
        "learn diameter": lf.diameter_figure([{"name": "a", "diameter": 3}], 2),
        "genmodel breakdown": gm.breakdown_figure(plans),
        "genmodel size": gm.size_figure(sizes, {"CPS": [1.0, 2.0, 3.0]}),
        "genmodel servers": gm.servers_figure([2, 3], {"CPS": [1.0, 2.0]}, 9),
        "genmodel factorization": gm.factorization_figure(plans),
        "genmodel tree": gm.tree_figure(tree.tree),
        "genmodel comparison": gm.comparison_figure(tree.comparison()),
        "genmodel fit": gm.fit_figure([1.0, 2.0], [1.1, 1.9], ["a", "b"]),
    }


def test_titles_sit_left_below_the_toolbar():
    """Issue 40: plotly's toolbar (top right, on hover) covered the runtime chart's title. Every figure's title
    is anchored at the left edge, starts below the toolbar strip (40 px; measured in Chromium), and the top margin
    holds all its lines below that."""
    for name, fig in _every_titled_figure().items():
        t = fig.layout.title
        assert t.text, name
        assert (t.x, t.xanchor, t.xref) == (0, "left", "container"), name
        assert t.yref == "container" and t.y == 1 and t.yanchor == "top" and t.pad.t >= 40, name
        lines = t.text.count("<br>") + 1
        assert fig.layout.margin.t >= t.pad.t + lines * 1.2 * (t.font.size or 17), name


def _value_axis(fig, trace):
    """The layout axis a bar's length is read on: x for horizontal bars, else y (first subplot's names)."""
    if trace.orientation == "h":
        return fig.layout[(trace.xaxis or "x").replace("x", "xaxis")]
    return fig.layout[(trace.yaxis or "y").replace("y", "yaxis")]


def test_every_bar_chart_starts_at_zero():
    """Issue 40: GenTree's chart started its log axis at 1.35 s, so a 1.6x gap looked like 15x. Every bar chart
    the figure modules build reads its bars on a linear axis that starts at zero."""
    from solvers.genmodel import ModelOptions, parse_tree
    from solvers.genmodel.gentree import Planner
    from studio.figures import learn as lf
    from studio.figures import genmodel as gm

    topo, schedule = _built("gkautz(2,8)", "bfb", "allreduce")
    run = simulate(topo, schedule, 1e6, AB, record=True)
    ss24 = Planner(parse_tree("ss24"), ModelOptions(alpha_steps="path")).run(1e8, rhd_baseline=True)
    figures = dict(_every_titled_figure())
    figures.update({
        "utilisation strip": utilisation_heatmap(topo, run, max_nodes=4),
        "learn diameter, wide span": lf.diameter_figure([{"name": "ring", "diameter": 63},
                                                         {"name": "kautz", "diameter": 3}], 3),
        "genmodel comparison ss24": gm.comparison_figure(ss24.comparison()),
    })
    bars = 0
    for name, fig in figures.items():
        for tr in fig.data:
            if tr.type != "bar":
                continue
            bars += 1
            axis = _value_axis(fig, tr)
            assert axis.type != "log", name
            assert (axis.range is not None and axis.range[0] == 0) or axis.rangemode == "tozero", name
    assert bars >= 8
