"""Figures: the layout follows the family, every link and node gets hover text, schedule figures hold the data."""
from fractions import Fraction

import pytest

from studio.figures import choose_layout, load_heatmap, runtime_curve, topology_figure
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


def test_runtime_curve_and_bound():
    fig = runtime_curve(6, Fraction(261, 256), 6, Fraction(1023, 1024), 10.0, 12.5, [1e3, 1e6, 1e9])
    sched, bound = fig.data
    assert sched.y[1] == pytest.approx(6 * 10 + 261 / 256 * 1e6 / 12.5e3)
    assert all(s >= b for s, b in zip(sched.y, bound.y))
    assert fig.layout.xaxis.type == "log" and fig.layout.yaxis.type == "log"


def test_heatmap_cells_are_the_loads():
    topo = parse_topology("biring(4)")
    fig = load_heatmap(topo, {1: {0: Fraction(1), 1: Fraction(1, 2)}, 2: {0: Fraction(1, 4)}})
    z = fig.data[0].z
    assert [list(row) for row in z] == [[1.0, 0.5], [0.25, 0.0]]
