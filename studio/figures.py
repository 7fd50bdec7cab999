"""Plotly figures of topologies. Pure functions of the model: no Streamlit here, so notebooks can use them."""
from __future__ import annotations

import math

import plotly.graph_objects as go

from topologies.model import COMPUTE, Topology

MAX_DRAWN_NODES = 512
MAX_ARROWS = 400
_COLORS = {COMPUTE: "#1f77b4", "switch": "#ff7f0e"}


def circular_layout(topo: Topology) -> list[tuple[float, float]]:
    """Compute nodes on a circle in index order, switches on an inner circle."""
    pos: list[tuple[float, float]] = [(0.0, 0.0)] * topo.num_nodes
    for ring_nodes, radius in ((topo.compute_nodes, 1.0), (topo.switch_nodes, 0.45)):
        k = len(ring_nodes)
        for j, u in enumerate(ring_nodes):
            angle = math.pi / 2 - 2 * math.pi * j / max(k, 1)
            pos[u] = (radius * math.cos(angle), radius * math.sin(angle)) if k > 1 else (0.0, 0.0)
    return pos


def topology_figure(topo: Topology, title: str | None = None) -> go.Figure:
    """The topology drawn on a circle: links as lines (arrows when the graph is directed and small)."""
    if topo.num_nodes > MAX_DRAWN_NODES:
        raise ValueError(f"{topo.num_nodes} nodes are too many to draw (the limit is {MAX_DRAWN_NODES})")
    pos = circular_layout(topo)
    edges = sorted({(l.src, l.dst) for l in topo.links if l.src != l.dst})
    fig = go.Figure()
    xs, ys = [], []
    for s, d in edges:
        xs += [pos[s][0], pos[d][0], None]
        ys += [pos[s][1], pos[d][1], None]
    fig.add_trace(go.Scatter(x=xs, y=ys, mode="lines", line=dict(width=1, color="#9aa5b1"), hoverinfo="skip",
                             name="links"))
    directed = not topo.is_bidirectional
    if directed and len(edges) <= MAX_ARROWS:
        for s, d in edges:
            fig.add_annotation(x=pos[d][0], y=pos[d][1], ax=pos[s][0], ay=pos[s][1], xref="x", yref="y",
                               axref="x", ayref="y", showarrow=True, arrowhead=3, arrowsize=1.2, arrowwidth=1,
                               arrowcolor="#7b8794", standoff=9, text="")
    for kind, color in _COLORS.items():
        nodes = [u for u in range(topo.num_nodes) if topo.kinds[u] == kind]
        if not nodes:
            continue
        outs = [len(topo.out_links[u]) for u in nodes]
        fig.add_trace(go.Scatter(
            x=[pos[u][0] for u in nodes], y=[pos[u][1] for u in nodes], mode="markers+text" if
            topo.num_nodes <= 64 else "markers", text=[topo.names[u] for u in nodes], textposition="middle center",
            textfont=dict(size=9, color="white"),
            marker=dict(size=22 if topo.num_nodes <= 64 else 8, color=color,
                        symbol="circle" if kind == COMPUTE else "square"),
            customdata=outs, hovertemplate="%{text}<br>out-links %{customdata}<extra>" + kind + "</extra>",
            name=kind))
    fig.update_layout(
        title=title if title is not None else f"{topo.name or topo.expr}: {topo.n} nodes, {len(topo.links)} links",
        showlegend=bool(topo.switch_nodes), xaxis=dict(visible=False), yaxis=dict(visible=False, scaleanchor="x"),
        margin=dict(l=10, r=10, t=40, b=10), height=520, plot_bgcolor="white")
    return fig
