"""Plotly figures of topologies and schedules. Pure functions of the model: no Streamlit here, so notebooks can
use them too.

Layouts follow the family: a circle for rings, circulants and complete graphs; a grid for two-dimensional tori
and products (nodes named ``x,y``); layers for switched clusters (switches above the GPUs they serve); a spring
layout otherwise.
"""
from __future__ import annotations

import math
from collections import defaultdict

import plotly.graph_objects as go

from topologies.model import COMPUTE, Topology

from studio.figures.titles import FULL_WIDTH_PX, place_title

MAX_DRAWN_NODES = 512
MAX_ARROWS = 400
MAX_LINK_HOVERS = 1500
_COLORS = {COMPUTE: "#1f77b4", "switch": "#ff7f0e"}
_CIRCULAR = ("ring", "uniring", "biring", "circulant", "dcirculant", "complete", "gkautz", "debruijn")


def circular_layout(topo: Topology) -> list[tuple[float, float]]:
    """Compute nodes on a circle in index order, switches on an inner circle."""
    pos: list[tuple[float, float]] = [(0.0, 0.0)] * topo.num_nodes
    for ring_nodes, radius in ((topo.compute_nodes, 1.0), (topo.switch_nodes, 0.45)):
        k = len(ring_nodes)
        for j, u in enumerate(ring_nodes):
            angle = math.pi / 2 - 2 * math.pi * j / max(k, 1)
            pos[u] = (radius * math.cos(angle), radius * math.sin(angle)) if k > 1 else (0.0, 0.0)
    return pos


def grid_layout(topo: Topology) -> list[tuple[float, float]] | None:
    """Nodes named ``x,y`` (2D tori, products of two graphs) at (y, -x); None when the names are not pairs."""
    coords = []
    for name in topo.names:
        parts = name.split(",")
        if len(parts) != 2:
            return None
        coords.append(parts)
    rows = {v: i for i, v in enumerate(sorted({c[0] for c in coords}, key=_natural))}
    cols = {v: i for i, v in enumerate(sorted({c[1] for c in coords}, key=_natural))}
    return [(float(cols[b]), -float(rows[a])) for a, b in coords]


def _natural(text: str):
    return (0, int(text), "") if text.lstrip("-").isdigit() else (1, 0, text)


def layered_layout(topo: Topology) -> list[tuple[float, float]]:
    """Switches in rows above the compute nodes; each row spread evenly (switched clusters)."""
    import networkx as nx

    g = nx.Graph((l.src, l.dst) for l in topo.links)
    g.add_nodes_from(range(topo.num_nodes))
    level = {u: 0 for u in topo.compute_nodes}
    frontier = list(topo.compute_nodes)
    while frontier:                                    # a switch's level is its hop distance from the GPUs
        nxt = []
        for u in frontier:
            for w in g.neighbors(u):
                if w not in level:
                    level[w] = level[u] + 1
                    nxt.append(w)
        frontier = nxt
    rows: dict[int, list[int]] = defaultdict(list)
    for u in range(topo.num_nodes):
        rows[level.get(u, 1)].append(u)
    pos: list[tuple[float, float]] = [(0.0, 0.0)] * topo.num_nodes
    for lv in sorted(rows):
        members = rows[lv]
        if lv > 0:          # above its neighbours: order a row by the mean x of the row below it
            def centre(u: int) -> float:
                xs = [pos[w][0] for w in g.neighbors(u) if level.get(w, 1) < lv]
                return sum(xs) / len(xs) if xs else 0.5
            members = sorted(members, key=lambda u: (centre(u), u))
        for j, u in enumerate(members):
            pos[u] = ((j + 0.5) / len(members), float(lv))
    return pos


def spring_layout(topo: Topology) -> list[tuple[float, float]]:
    import networkx as nx

    g = nx.Graph((l.src, l.dst) for l in topo.links if l.src != l.dst)
    g.add_nodes_from(range(topo.num_nodes))
    p = nx.spring_layout(g, seed=1, iterations=60 if topo.num_nodes <= 200 else 30)
    return [(float(p[u][0]), float(p[u][1])) for u in range(topo.num_nodes)]


def choose_layout(topo: Topology) -> tuple[str, list[tuple[float, float]]]:
    """(layout name, positions) for the topology's family."""
    if topo.switch_nodes:
        return "layered", layered_layout(topo)
    head = topo.expr.split("(")[0].strip()
    if head in _CIRCULAR:
        return "circular", circular_layout(topo)
    if head in ("torus", "twisted_torus", "hamming", "product", "power"):
        grid = grid_layout(topo)
        if grid is not None:
            return "grid", grid
    if topo.num_nodes <= 3:
        return "circular", circular_layout(topo)
    return "spring", spring_layout(topo)


def _arrowheads(topo: Topology, pos: list[tuple[float, float]], pairs: list[tuple[int, int]], color: str):
    """One trace of arrowhead markers, one per directed pair, each set back from its head node along the link and
    turned to point at it. (Plotly annotations drew the arrows before, each a DOM group of its own: Compose on the
    directed gkautz(2,46) had 5,841 DOM nodes in Chromium, 2,300 with this one trace.)"""
    xs = [x for x, _ in pos] or [0.0]
    ys = [y for _, y in pos] or [0.0]
    span = max(max(xs) - min(xs), max(ys) - min(ys)) or 1.0
    back = span * (0.035 if topo.num_nodes <= 64 else 0.012)    # clear of the head node's marker (22 or 8 px)
    tip_x, tip_y, angles = [], [], []
    for s, d in pairs:
        dx, dy = pos[d][0] - pos[s][0], pos[d][1] - pos[s][1]
        length = math.hypot(dx, dy) or 1.0
        cut = min(back, 0.45 * length)
        tip_x.append(pos[d][0] - dx / length * cut)
        tip_y.append(pos[d][1] - dy / length * cut)
        angles.append(math.degrees(math.atan2(dx, dy)))          # plotly's marker angle: clockwise from up
    return go.Scatter(x=tip_x, y=tip_y, mode="markers", hoverinfo="skip", showlegend=False, name="arrows",
                      marker=dict(symbol="arrow", size=9, angle=angles, color=color, line=dict(width=0)))


def topology_figure(topo: Topology, title: str | None = None, *, link_weight: dict[int, float] | None = None,
                    weight_label: str = "load", layout: tuple[str, list] | None = None,
                    width_px: float = FULL_WIDTH_PX) -> go.Figure:
    """The topology drawn in its family's layout: links as lines (arrows when directed and small), hover on
    nodes and links. ``link_weight`` (link index -> value) draws only those links, colored and thickened by the
    value (a schedule step's load, a broadcast tree's step). The title is wrapped for ``width_px``."""
    if topo.num_nodes > MAX_DRAWN_NODES:
        raise ValueError(f"{topo.num_nodes} nodes are too many to draw (the limit is {MAX_DRAWN_NODES})")
    _, pos = layout if layout is not None else choose_layout(topo)
    fig = go.Figure()
    pairs: dict[tuple[int, int], list[int]] = defaultdict(list)
    for i, l in enumerate(topo.links):
        if l.src != l.dst:
            pairs[(l.src, l.dst)].append(i)
    xs, ys = [], []
    for s, d in pairs:
        xs += [pos[s][0], pos[d][0], None]
        ys += [pos[s][1], pos[d][1], None]
    fig.add_trace(go.Scatter(x=xs, y=ys, mode="lines", line=dict(width=1, color="#c3cad3" if link_weight else
                                                                 "#9aa5b1"), hoverinfo="skip", name="links"))
    if link_weight:
        top = max(link_weight.values()) or 1
        # one trace per link (each its own width and shade), handed to plotly at once: adding them one by one
        # copies and checks the figure's whole data again for every link
        weighted = []
        for i, w in sorted(link_weight.items(), key=lambda kv: kv[1]):
            l = topo.links[i]
            shade = 0.25 + 0.75 * w / top
            weighted.append(go.Scatter(
                x=[pos[l.src][0], pos[l.dst][0]], y=[pos[l.src][1], pos[l.dst][1]], mode="lines",
                line=dict(width=1.5 + 4 * w / top, color=f"rgba(214, 39, 40, {shade:.2f})"), showlegend=False,
                hovertext=f"{topo.names[l.src]} → {topo.names[l.dst]}: {weight_label} {w:g}", hoverinfo="text"))
        fig.add_traces(weighted)
    directed = not topo.is_bidirectional
    drawn = list(pairs) if not link_weight else sorted({(topo.links[i].src, topo.links[i].dst) for i in link_weight})
    if (directed or link_weight) and len(drawn) <= MAX_ARROWS:
        fig.add_trace(_arrowheads(topo, pos, [(s, d) for s, d in drawn if s != d],
                                  "#d62728" if link_weight else "#7b8794"))
    if not link_weight and len(pairs) <= MAX_LINK_HOVERS:
        mids = [((pos[s][0] + pos[d][0]) / 2, (pos[s][1] + pos[d][1]) / 2, s, d, idx) for (s, d), idx in pairs.items()]
        fig.add_trace(go.Scatter(
            x=[m[0] for m in mids], y=[m[1] for m in mids], mode="markers", marker=dict(size=6, opacity=0.0),
            hovertext=[_link_text(topo, s, d, idx) for _, _, s, d, idx in mids], hoverinfo="text", name="link info",
            showlegend=False))
    layered = layout is not None and layout[0] == "layered" or layout is None and bool(topo.switch_nodes)
    if title is None:
        title = f"{topo.name or topo.expr}: {topo.n} nodes, {len(topo.links)} links"
    if layered:
        place_title(fig, title, width_px)
        _layered_nodes(fig, topo, pos, fig.layout.margin.t)
        return fig
    for kind, color in _COLORS.items():
        nodes = [u for u in range(topo.num_nodes) if topo.kinds[u] == kind]
        if not nodes:
            continue
        small = topo.num_nodes <= 64
        fig.add_trace(go.Scatter(
            x=[pos[u][0] for u in nodes], y=[pos[u][1] for u in nodes], mode="markers+text" if small else "markers",
            text=[topo.names[u] for u in nodes], textposition="middle center", textfont=dict(size=9, color="white"),
            marker=dict(size=22 if small else 8, color=color, symbol="circle" if kind == COMPUTE else "square"),
            customdata=[[len(topo.in_links[u]), len(topo.out_links[u])] for u in nodes],
            hovertemplate="%{text}<br>in-links %{customdata[0]}, out-links %{customdata[1]}<extra>" + kind
                          + "</extra>", name=kind))
    fig.update_layout(
        showlegend=bool(topo.switch_nodes), xaxis=dict(visible=False), yaxis=dict(visible=False, scaleanchor="x"),
        margin=dict(l=10, r=10, t=40, b=10), height=520, plot_bgcolor="white")
    return place_title(fig, title, width_px)


# Layered drawings (switched fabrics) are planned for a drawing this wide: the main area of the app's wide layout
# on a 1280-pixel screen. Wider drawings only spread the labels further apart.
LAYERED_WIDTH_PX = 800
LABEL_FONT_PX = 10
LABEL_CHAR_PX = 6.5          # a generous average glyph width at LABEL_FONT_PX (names are short ASCII)
LABEL_LINE_PX = 13
LABEL_MAX_CHARS = 12         # longer names are cut with an ellipsis (hover shows them whole)
LABEL_ROWS = 3               # a crowded layer staggers its labels over up to this many rows, then labels every k-th
LABEL_GAP_PX = 4


def label_width_px(text: str) -> float:
    """The width a node label takes in a layered drawing, by the generous glyph width above."""
    return LABEL_CHAR_PX * len(text)


def _short(name: str) -> str:
    return name if len(name) <= LABEL_MAX_CHARS else name[:LABEL_MAX_CHARS - 1] + "…"


def _layer_labels(count: int, width: float, plot_px: float) -> tuple[int, int]:
    """(rows, stride) for one layer of ``count`` evenly spread nodes whose widest label is ``width`` pixels: the
    fewest rows of staggered labels in which neighbours of one row clear each other, and, when even
    ``LABEL_ROWS`` rows do not, the stride k of labelling every k-th node only."""
    gap = plot_px / max(count, 1)
    need = width + LABEL_GAP_PX
    for rows in range(1, LABEL_ROWS + 1):
        if rows * gap >= need:
            return rows, 1
    return LABEL_ROWS, math.ceil(need / (LABEL_ROWS * gap))


def _layered_nodes(fig: go.Figure, topo: Topology, pos: list[tuple[float, float]], top: int) -> None:
    """Nodes of a layered drawing with their names beneath them, spaced for ``LAYERED_WIDTH_PX``: a layer whose
    labels would overlap staggers them over rows or labels every k-th node; the height grows with the layers
    and their label rows, so no label runs into the layer below. Hover names every node. ``top``: the top
    margin (the title's)."""
    layers: dict[float, list[int]] = defaultdict(list)
    for u in range(topo.num_nodes):
        layers[pos[u][1]].append(u)
    for members in layers.values():
        members.sort(key=lambda u: pos[u][0])
    labels = [_short(name) for name in topo.names]
    widest = max((label_width_px(t) for t in labels), default=0.0)
    side = max(10, math.ceil(widest / 2) + 2)          # room for the outermost labels to overhang the plot
    plot_px = LAYERED_WIDTH_PX - 2 * side
    plan = {y: _layer_labels(len(m), max(label_width_px(labels[u]) for u in m), plot_px) for y, m in layers.items()}
    sizes = {y: max(6.0, min(16.0, 0.7 * plot_px / len(m))) for y, m in layers.items()}
    levels = sorted(layers)
    below = {y: sizes[y] / 2 + 3 + plan[y][0] * LABEL_LINE_PX for y in levels}     # marker and its label rows
    step_px = max([90.0] + [below[y] + 60 for y in levels[1:]])        # one level to the next, labels clear
    top_px, bottom_px = sizes[levels[-1]] / 2 + 8, below[levels[0]] + 6
    span = levels[-1] - levels[0]
    plot_h = span * step_px + top_px + bottom_px
    margin = dict(l=side, r=side, t=top, b=40)
    height = max(360, math.ceil(plot_h + margin["t"] + margin["b"]))
    unit = (height - margin["t"] - margin["b"]) / (span + (top_px + bottom_px) / step_px)   # pixels per level
    y0 = levels[0] - bottom_px / unit
    y1 = y0 + (height - margin["t"] - margin["b"]) / unit
    for kind, color in _COLORS.items():
        nodes = [u for u in range(topo.num_nodes) if topo.kinds[u] == kind]
        if nodes:
            fig.add_trace(go.Scatter(
                x=[pos[u][0] for u in nodes], y=[pos[u][1] for u in nodes], mode="markers",
                text=[topo.names[u] for u in nodes],
                marker=dict(size=[sizes[pos[u][1]] for u in nodes], color=color,
                            symbol="circle" if kind == COMPUTE else "square"),
                customdata=[[len(topo.in_links[u]), len(topo.out_links[u])] for u in nodes],
                hovertemplate="%{text}<br>in-links %{customdata[0]}, out-links %{customdata[1]}<extra>" + kind
                              + "</extra>", name=kind))
    xs, ys, texts = [], [], []
    for y, members in layers.items():
        rows, stride = plan[y]
        for i, u in enumerate(members[::stride]):
            row = i % rows
            offset = sizes[y] / 2 + 3 + (row + 0.5) * LABEL_LINE_PX          # pixels below the node's centre
            xs.append(pos[u][0])
            ys.append(y - offset / unit)
            texts.append(labels[u])
    fig.add_trace(go.Scatter(x=xs, y=ys, mode="text", text=texts, textposition="middle center",
                             textfont=dict(size=LABEL_FONT_PX, color="#323f4b"), hoverinfo="skip", cliponaxis=False,
                             showlegend=False, name="labels"))
    fig.update_layout(showlegend=True, legend=dict(orientation="h", x=0, y=0, yanchor="top"),
                      xaxis=dict(visible=False, range=[0.0, 1.0]),
                      yaxis=dict(visible=False, range=[y0, y1]), margin=margin, height=height,
                      plot_bgcolor="white", meta=dict(label_width_px=LAYERED_WIDTH_PX))


def _link_text(topo: Topology, s: int, d: int, idx: list[int]) -> str:
    bws = ", ".join(f"{float(topo.links[i].bandwidth):g}" for i in idx)
    alphas = ", ".join(f"{float(topo.links[i].alpha):g}" for i in idx)
    count = f" ×{len(idx)}" if len(idx) > 1 else ""
    return f"{topo.names[s]} → {topo.names[d]}{count}<br>bandwidth {bws} GB/s<br>alpha {alphas} µs"


