"""Figures: the layout follows the family, every link and node gets hover text, schedule figures hold the data."""
from fractions import Fraction

import pytest

from solvers.runtime import Execution, Model, bound_time_us, simulate
from solvers.synthesize import synthesize
from studio.figures import (choose_layout, gantt_figure, load_heatmap, runtime_curve, topology_figure,
                            utilisation_heatmap)
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
