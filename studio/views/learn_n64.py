"""Plotly figures of the Learn section "ring, tree and direct-connect at N = 64" (``studio.views.learn_collectives``).
Pure functions of numbers the library has already computed: no Streamlit and no cost model here.

* ``terms_figure``: each design's step-model time split into its two terms against M (log-log): the latency term
  T_L = steps × alpha (flat, dashed), the bandwidth term T_B = tb × M/B (rising, dotted) and their sum (solid), in
  one colour per design, with the sizes where the fastest design changes marked;
* ``trees_figure``: a small fabric with the links of a few trees drawn over it, one colour per tree;
* ``double_tree_figure``: rooted trees over the same GPUs drawn side by side (NCCL's double binary tree).
"""
from __future__ import annotations

import plotly.graph_objects as go

from studio.figures.titles import FULL_WIDTH_PX, place_title
from studio.figures.topology import choose_layout
from studio.figures.learn import mark_sizes
from topologies.model import Topology

COLORS = ("#1f77b4", "#ff7f0e", "#2ca02c", "#9467bd", "#8c564b", "#e377c2")
ALPHA_TERM, BANDWIDTH_TERM, TOTAL = "α term", "M/B term", "total"


def term_name(design: str, term: str) -> str:
    """The legend name of one design's trace: ``"<design>: α term"``, ``"<design>: M/B term"`` or ``"<design>:
    total"`` (the tests find the traces by these names)."""
    return f"{design}: {term}"


def terms_figure(sizes: list[float], terms: dict[str, tuple[list[float], list[float]]], *,
                 crossovers: list[tuple[float, str]] = (), marker: float | None = None,
                 title: str = "Latency and bandwidth terms against M", width_px: float = FULL_WIDTH_PX) -> go.Figure:
    """``terms``: design -> (alpha term at each of ``sizes``, M/B term at each), both in µs. Per design three
    traces in one colour: the alpha term dashed, the M/B term dotted, their sum solid and thicker. Each
    ``crossovers`` entry (size, text) is a dotted vertical line; ``marker`` a red one at the sidebar's M, each label
    on the side of its line that no other line crosses (``studio.figures.learn.label_anchors``)."""
    fig = go.Figure()
    for i, (design, (alpha, band)) in enumerate(terms.items()):
        color = COLORS[i % len(COLORS)]
        total = [a + b for a, b in zip(alpha, band)]
        for term, ys, dash, width in ((ALPHA_TERM, alpha, "dash", 1.5), (BANDWIDTH_TERM, band, "dot", 1.5),
                                      (TOTAL, total, None, 3)):
            name = term_name(design, term)
            fig.add_trace(go.Scatter(x=list(sizes), y=list(ys), mode="lines", name=name, legendgroup=design,
                                     line=dict(color=color, dash=dash, width=width),
                                     hovertemplate=name + "<br>M %{x:.3g} bytes: %{y:.4g} µs<extra></extra>"))
    fig.update_layout(title=title, xaxis=dict(type="log", title="M, message size (bytes)"),
                      yaxis=dict(type="log", title="time (µs)"), height=460, margin=dict(l=10, r=10, t=40, b=10),
                      legend=dict(orientation="h", y=-0.2))
    mark_sizes(fig, list(sizes), crossovers, marker, width_px)
    return place_title(fig, width_px=width_px)


def trees_figure(topo: Topology, trees: dict[str, list[tuple[int, int]]], title: str,
                 width_px: float = FULL_WIDTH_PX) -> go.Figure:
    """``topo`` in its family's layout, its links thin and grey, and over them the edges (parent, child) of each of
    ``trees`` (label -> edges), one colour per tree, each drawn as an arrow-less line from parent to child with
    the child's end marked; the legend names the trees."""
    _, pos = choose_layout(topo)
    fig = go.Figure()
    xs, ys = [], []
    for link in topo.links:
        if link.src != link.dst:
            xs += [pos[link.src][0], pos[link.dst][0], None]
            ys += [pos[link.src][1], pos[link.dst][1], None]
    fig.add_trace(go.Scatter(x=xs, y=ys, mode="lines", line=dict(width=1, color="#d5dbe1"), hoverinfo="skip",
                             name="fabric links"))
    for i, (label, edges) in enumerate(trees.items()):
        color = COLORS[i % len(COLORS)]
        tx, ty = [], []
        for u, v in edges:                     # a slight offset per tree, so two trees on one link both show
            off = 0.015 * (i - (len(trees) - 1) / 2)
            tx += [pos[u][0] + off, pos[v][0] + off, None]
            ty += [pos[u][1] + off, pos[v][1] + off, None]
        fig.add_trace(go.Scatter(x=tx, y=ty, mode="lines", line=dict(width=3, color=color), name=label,
                                 hoverinfo="skip"))
    nodes = topo.compute_nodes
    fig.add_trace(go.Scatter(x=[pos[v][0] for v in nodes], y=[pos[v][1] for v in nodes], mode="markers+text",
                             text=[topo.names[v] for v in nodes], textposition="middle center",
                             marker=dict(size=22, color="white", line=dict(width=2, color="#323f4b")),
                             name="GPUs", showlegend=False, hovertemplate="GPU %{text}<extra></extra>"))
    fig.update_layout(title=title, height=380, margin=dict(l=10, r=10, t=40, b=10),
                      xaxis=dict(visible=False), yaxis=dict(visible=False, scaleanchor="x"),
                      legend=dict(orientation="h", y=-0.05))
    return place_title(fig, width_px=width_px)


def tree_positions(parents: tuple[int, ...] | list[int]) -> dict[int, tuple[float, float]]:
    """Positions of a rooted tree given by ``parents`` (parent of every node, -1 at the root): depth downwards
    (the root at y = 0, a child one below its parent), x from a left-to-right walk, the leaves one apart and a
    parent above the middle of its children."""
    children: dict[int, list[int]] = {v: [] for v in range(len(parents))}
    for v, p in enumerate(parents):
        if p >= 0:
            children[p].append(v)
    root = list(parents).index(-1)
    pos: dict[int, tuple[float, float]] = {}
    next_x = [0.0]

    def place(v: int, depth: int) -> float:
        kids = sorted(children[v])
        if kids:
            xs = [place(w, depth + 1) for w in kids]
            x = (xs[0] + xs[-1]) / 2
        else:
            x, next_x[0] = next_x[0], next_x[0] + 1
        pos[v] = (x, -float(depth))
        return x
    place(root, 0)
    return pos


def double_tree_figure(trees: dict[str, tuple[int, ...]], names: tuple[str, ...] | list[str], title: str,
                       width_px: float = FULL_WIDTH_PX) -> go.Figure:
    """Each of ``trees`` (label -> parent of every rank, -1 at the root) drawn as a rooted tree, side by side, one
    colour per tree: every GPU appears once in each tree, so a GPU inside one tree and a leaf of the other shows
    as such."""
    fig = go.Figure()
    shift = 0.0
    for i, (label, parents) in enumerate(trees.items()):
        color = COLORS[i % len(COLORS)]
        pos = {v: (x + shift, y) for v, (x, y) in tree_positions(parents).items()}
        xs, ys = [], []
        for v, p in enumerate(parents):
            if p >= 0:
                xs += [pos[p][0], pos[v][0], None]
                ys += [pos[p][1], pos[v][1], None]
        fig.add_trace(go.Scatter(x=xs, y=ys, mode="lines", line=dict(width=3, color=color), name=label,
                                 hoverinfo="skip"))
        order = sorted(pos)
        fig.add_trace(go.Scatter(x=[pos[v][0] for v in order], y=[pos[v][1] for v in order], mode="markers+text",
                                 text=[names[v] for v in order], textposition="middle center", showlegend=False,
                                 marker=dict(size=22, color="white", line=dict(width=2, color=color)),
                                 name=f"{label} GPUs", hovertemplate="GPU %{text}<extra>" + label + "</extra>"))
        shift = max(x for x, _ in pos.values()) + 1.5
    fig.update_layout(title=title, height=380, margin=dict(l=10, r=10, t=40, b=10),
                      xaxis=dict(visible=False), yaxis=dict(visible=False),
                      legend=dict(orientation="h", y=-0.05))
    return place_title(fig, width_px=width_px)
