"""Plotly figures of topologies and schedules. Pure functions of the model: no Streamlit here, so notebooks can
use them too.

Layouts follow the family: a circle for rings, circulants and complete graphs; a grid for two-dimensional tori
and products (nodes named ``x,y``); layers for switched clusters (switches above the GPUs they serve); a spring
layout otherwise.
"""
from __future__ import annotations

import math
import textwrap
from collections import defaultdict
from fractions import Fraction
from typing import Sequence

import plotly.graph_objects as go

from studio.figure_spec import FigureSpec
from topologies.model import COMPUTE, Topology

MAX_DRAWN_NODES = 512
MAX_ARROWS = 400
MAX_LINK_HOVERS = 1500
_COLORS = {COMPUTE: "#1f77b4", "switch": "#ff7f0e"}
_CIRCULAR = ("ring", "uniring", "biring", "circulant", "dcirculant", "complete", "gkautz", "debruijn")

# Titles. The pages are planned for a main area FULL_WIDTH_PX wide (the wide layout on a 1280-pixel screen), a
# figure in one of two columns for HALF_WIDTH_PX. A title is cut into lines that fit its figure's width, anchored
# left, and starts below the strip where plotly's toolbar appears (top right, on hover), so the toolbar never
# covers it; the top margin grows with its lines.
FULL_WIDTH_PX = 800
HALF_WIDTH_PX = 390
TITLE_FONT_PX = 16
TITLE_CHAR_PX = 8.0          # a generous average glyph width at TITLE_FONT_PX (Streamlit's theme draws it bold)
TITLE_LINE_PX = 22
TOOLBAR_PX = 44               # the toolbar strip with Streamlit's own buttons beside plotly's


def title_lines(text: str, width_px: float = FULL_WIDTH_PX) -> list[str]:
    """``text`` cut at spaces (and at any ``<br>`` already in it) into lines that fit ``width_px``."""
    limit = max(12, int((width_px - 20) // TITLE_CHAR_PX))
    lines: list[str] = []
    for part in (text or "").split("<br>"):
        lines += textwrap.wrap(part, limit, break_on_hyphens=False) or ([""] if part else [])
    return lines


def title_margin(lines: int) -> int:
    """The top margin that holds a title of ``lines`` lines below the toolbar strip."""
    return TOOLBAR_PX + lines * TITLE_LINE_PX + 12


def place_title(fig: go.Figure, text: str | None = None, width_px: float = FULL_WIDTH_PX) -> go.Figure:
    """Give ``fig`` its title (``text``, else the one it has) wrapped for a drawing ``width_px`` wide, anchored
    left below the toolbar strip, with the top margin to hold it."""
    if text is None:
        text = fig.layout.title.text or ""
    title, top = _title(text, fig.layout.margin.t, width_px)
    fig.update_layout(title=title, margin=dict(t=top))
    return fig


def titled(layout: dict, width_px: float = FULL_WIDTH_PX) -> dict:
    """``place_title`` for a layout written as a dict (``figure_spec``): its ``title`` (a string) and
    ``margin`` made the same way, in place; returns ``layout``."""
    title, top = _title(layout.get("title") or "", layout.get("margin", {}).get("t"), width_px)
    layout["title"] = title
    layout.setdefault("margin", {})["t"] = top
    return layout


def _title(text: str, top: int | None, width_px: float) -> tuple[dict, int]:
    """The title's layout and the top margin that holds it (at least ``top``)."""
    lines = title_lines(text, width_px)
    return (dict(text="<br>".join(lines), x=0, xref="container", xanchor="left", y=1, yref="container",
                 yanchor="top", pad=dict(t=TOOLBAR_PX, l=10), font=dict(size=TITLE_FONT_PX)),
            max(top or 0, title_margin(len(lines))))


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


# ------------------------------------------------------------------------------------------- schedule figures
def _algbw(m: float, t: float) -> float | None:
    """M / time in GB/s (1e3 bytes per microsecond); None for a zero time."""
    return m / t / 1e3 if t > 0 else None


def runtime_curve(sizes: Sequence[float], times_us: Sequence[float], bound_us: Sequence[float],
                  slices: Sequence[int] | None = None, label: str = "schedule",
                  marker: tuple[float, float] | None = None) -> FigureSpec:
    """The runtime model's time (above) and algbw (below) against the vector size M, log-log: ``times_us[i]``
    is the modelled time at ``sizes[i]`` (``slices[i]`` the pipelining depth P it chose), ``bound_us[i]`` the
    lower bound in the same link prices, so the bound's algbw is an upper bound. algbw = M / time, in GB/s (1e3
    bytes per microsecond). ``marker``: (M, time) of the workload, drawn on both panels. Written as plotly's JSON
    (``figure_spec``): Schedule makes it on every view, and plotly's subplot machinery cost ten times the drawing;
    the two panels are the layout ``make_subplots(rows=2, shared_xaxes=True, vertical_spacing=0.06)`` gives."""
    sizes = [float(m) for m in sizes]
    times = [float(t) for t in times_us]
    bounds = [float(t) for t in bound_us]
    ps = [[int(p)] for p in slices] if slices is not None else [["?"]] * len(sizes)
    data: list[dict] = []
    for row, ys, bs, unit in ((1, times, bounds, "µs"),
                              (2, [_algbw(m, t) for m, t in zip(sizes, times)],
                               [_algbw(m, t) for m, t in zip(sizes, bounds)], "GB/s")):
        axes = {"xaxis": "x", "yaxis": "y"} if row == 1 else {"xaxis": "x2", "yaxis": "y2"}
        data.append(dict(
            type="scatter", x=sizes, y=ys, mode="lines+markers", name=label if row == 1 else f"{label} algbw",
            legendgroup="model", showlegend=row == 1, customdata=ps, marker=dict(size=5), line=dict(color="#1f77b4"),
            hovertemplate="M %{x:.3g} bytes: %{y:.4g} " + unit + ", P = %{customdata[0]}<extra>" + label
                          + "</extra>", **axes))
        data.append(dict(
            type="scatter", x=sizes, y=bs, mode="lines", name="lower bound" if row == 1 else "bound algbw",
            legendgroup="bound", showlegend=row == 1, line=dict(dash="dash", color="#52606d"),
            hovertemplate="M %{x:.3g} bytes: " + ("%{y:.4g} µs" if row == 1 else "at most %{y:.4g} GB/s")
                          + "<extra>bound</extra>", **axes))
    if marker is not None:
        m, t = float(marker[0]), float(marker[1])
        for row, y in ((1, t), (2, _algbw(m, t))):
            data.append(dict(
                type="scatter", x=[m], y=[y], mode="markers", name=f"M = {m:.3g} B", legendgroup="marker",
                showlegend=row == 1, marker=dict(size=11, color="#d62728", symbol="circle-open", line=dict(width=2)),
                hovertemplate=f"the workload's M = {m:.3g} bytes: %{{y:.4g}} " + ("µs" if row == 1 else "GB/s")
                              + "<extra></extra>",
                xaxis="x" if row == 1 else "x2", yaxis="y" if row == 1 else "y2"))
    layout = dict(
        xaxis=dict(anchor="y", domain=[0.0, 1.0], matches="x2", showticklabels=False, type="log", automargin=True),
        yaxis=dict(anchor="x", domain=[0.53, 1.0], type="log", title=dict(text="time (µs)"), automargin=True),
        xaxis2=dict(anchor="y2", domain=[0.0, 1.0], type="log", automargin=True, title=dict(text="M (bytes)")),
        yaxis2=dict(anchor="x2", domain=[0.0, 0.47], type="log", title=dict(text="algbw (GB/s)"), automargin=True),
        title="Runtime model: time and algbw against M", height=480, margin=dict(l=60, r=10, t=40, b=10),
        legend=dict(orientation="h", y=-0.2))
    return FigureSpec(data, titled(layout))


def bundle_plan_figure(plan) -> go.Figure:
    """algbw against M for every protocol and copies candidate of an export plan (``solvers.export.tuning.Plan``),
    with the range each bundle file serves shaded and named: the model's reason for each file."""
    sizes = [float(m) for m in plan.sizes]
    fig = go.Figure()
    colors = {"LL": "#2ca02c", "LL128": "#ff7f0e", "Simple": "#1f77b4"}
    dashes = {1: "dot", 2: "dash", 4: "longdash", 8: "solid", 16: "solid"}
    for (proto, copies), times in sorted(plan.times.items()):
        fig.add_trace(go.Scatter(x=sizes, y=[_algbw(m, float(t)) for m, t in zip(sizes, times)], mode="lines",
                                 name=f"{proto} x{copies}",
                                 line=dict(color=colors.get(proto), dash=dashes.get(copies, "solid"), width=1.5),
                                 hovertemplate="M %{x:.3g} bytes: %{y:.4g} GB/s<extra>" + f"{proto} x{copies}"
                                               + "</extra>"))
    for c in plan.choices:          # each range as the files serve it, clipped to the sizes drawn
        lo = max(float(c.min_bytes), sizes[0])
        hi = sizes[-1] if c.max_bytes is None else min(float(c.max_bytes), sizes[-1])
        fig.add_vrect(x0=lo, x1=hi, fillcolor=colors.get(c.proto, "#999"), opacity=0.08, line_width=0,
                      annotation_text=f"{c.proto} x{c.copies}", annotation_position="top left")
    fig.update_xaxes(type="log", title="M (bytes)", automargin=True)
    fig.update_yaxes(type="log", title="modelled algbw (GB/s)", automargin=True)
    fig.update_layout(title="Export bundle: the model's protocol and copies per size range", height=380,
                      margin=dict(l=60, r=10, t=40, b=10), legend=dict(orientation="h", y=-0.25))
    return place_title(fig)


def _link_labels(topo: Topology, links: Sequence[int]) -> list[str]:
    """``a→b`` per link, with ``#k`` on the second and later of parallel links (a row label must be unique)."""
    seen: dict[tuple[int, int], int] = defaultdict(int)
    out = []
    for i in links:
        l = topo.links[i]
        k = seen[(l.src, l.dst)]
        seen[(l.src, l.dst)] += 1
        out.append(f"{topo.names[l.src]}→{topo.names[l.dst]}" + (f" #{k + 1}" if k else ""))
    return out


def utilisation_heatmap(topo: Topology, result, max_nodes: int = 64, max_links: int = 1024) -> FigureSpec:
    """How busy the runtime model keeps each link: busy time / completion time (``RuntimeResult.utilisation``,
    from 0 to 1; 1 is a link that never rests). Up to ``max_nodes`` nodes it is a matrix, source node down and
    destination node across, a cell the busiest of the links from one to the other (empty where there is no
    link, 0 for a link that carries nothing); above, a strip of the ``max_links`` busiest links, busiest
    first. Written as plotly's JSON (``figure_spec``): Schedule makes it on every view."""
    util = result.utilisation()
    if topo.num_nodes <= max_nodes:
        names = list(topo.names)
        z: list[list[float | None]] = [[None] * topo.num_nodes for _ in range(topo.num_nodes)]
        count = [[0] * topo.num_nodes for _ in range(topo.num_nodes)]
        for i, l in enumerate(topo.links):
            u = util.get(i, 0.0)
            z[l.src][l.dst] = u if z[l.src][l.dst] is None else max(z[l.src][l.dst], u)
            count[l.src][l.dst] += 1
        text = [[f" (busiest of {c} links)" if c > 1 else "" for c in row] for row in count]
        trace = dict(type="heatmap", z=z, x=names, y=names, text=text, colorscale="Reds", zmin=0.0, zmax=1.0,
                     xgap=1, ygap=1, hoverongaps=False, colorbar=dict(title=dict(text="busy"), tickformat=".0%"),
                     hovertemplate="%{y} → %{x}: busy %{z:.1%} of the time%{text}<extra></extra>")
        layout = dict(xaxis=dict(title=dict(text="to"), showticklabels=topo.num_nodes <= 32, type="category",
                                 automargin=True),
                      yaxis=dict(title=dict(text="from"), autorange="reversed", showticklabels=topo.num_nodes <= 32,
                                 type="category", automargin=True),
                      height=min(700, max(380, 100 + 8 * topo.num_nodes)),
                      title="Link utilisation: busy / completion time")
    else:
        links = sorted(util, key=lambda i: (-util[i], i))[:max_links]
        labels = _link_labels(topo, links)
        trace = dict(type="bar", x=list(range(1, len(links) + 1)), y=[util[i] for i in links], text=labels,
                     marker=dict(color=[util[i] for i in links], colorscale="Reds", cmin=0.0, cmax=1.0,
                                 line=dict(width=0)),
                     hovertemplate="%{text}: busy %{y:.1%} of the time<extra></extra>")
        layout = dict(xaxis=dict(title=dict(text=f"links, busiest first ({len(links)} of {len(util)} that carry "
                                                 "data)"), automargin=True),
                      yaxis=dict(title=dict(text="busy"), range=[0, 1.05], tickformat=".0%", automargin=True),
                      bargap=0, height=380, title="Link utilisation (busiest links): busy / completion time")
    layout.update(margin=dict(l=60, r=10, t=40, b=50), plot_bgcolor="white")
    return FigureSpec([trace], titled(layout))


def gantt_figure(topo: Topology, timeline: Sequence[dict], color_by: str = "slice", max_links: int = 64,
                 max_bars: int = 20000) -> go.Figure:
    """The runtime model's sends on its clock: one row per link (the ``max_links`` busiest that carry data), one
    bar per send from its start to its end (``RuntimeResult.timeline`` rows: slice, step, link, start_us,
    end_us), coloured by ``color_by`` ("slice", the pipelining slice k, or "step", the schedule's step t). At
    most ``max_bars`` bars are drawn (the earliest sends)."""
    if color_by not in ("slice", "step"):
        raise ValueError(f"colour by 'slice' or 'step', not {color_by!r}")
    busy: dict[int, float] = defaultdict(float)
    for r in timeline:
        busy[r["link"]] += r["end_us"] - r["start_us"]
    links = sorted(sorted(busy, key=lambda i: (-busy[i], i))[:max_links])
    labels = _link_labels(topo, links)
    row_of = dict(zip(links, labels))
    rows = sorted((r for r in timeline if r["link"] in row_of), key=lambda r: (r["start_us"], r["link"]))[:max_bars]
    top = max((r[color_by] for r in rows), default=0)
    fig = go.Figure(go.Bar(
        base=[r["start_us"] for r in rows], x=[r["end_us"] - r["start_us"] for r in rows],
        y=[row_of[r["link"]] for r in rows], orientation="h",
        marker=dict(color=[r[color_by] for r in rows], colorscale="Viridis", cmin=0, cmax=max(top, 1),
                    line=dict(width=1, color="white"),
                    colorbar=dict(title=color_by, dtick=1 if top <= 16 else None)),
        customdata=[[r["slice"], r["step"], r["start_us"], r["end_us"]] for r in rows],
        hovertemplate="%{y}<br>slice %{customdata[0]}, step %{customdata[1]}<br>%{customdata[2]:.4g} → "
                      "%{customdata[3]:.4g} µs<extra></extra>", name="sends"))
    fig.update_layout(title=f"Sends per link on the model's clock (colour: {color_by})",
                      xaxis=dict(title="time (µs)", automargin=True, rangemode="tozero"),
                      yaxis=dict(title="links", autorange="reversed", automargin=True, categoryorder="array",
                                 categoryarray=labels, showticklabels=len(labels) <= 80),
                      height=min(900, max(300, 80 + 26 * len(labels))), margin=dict(l=10, r=10, t=40, b=10),
                      plot_bgcolor="white", showlegend=False)
    return place_title(fig)


def load_heatmap(topo: Topology, loads: dict[int, dict[int, Fraction]], max_links: int = 4096) -> FigureSpec:
    """Per-step link loads (in shards) as a heatmap: steps down, links across (the busiest ``max_links``).
    Written as plotly's JSON (``figure_spec``): Schedule makes it on every view."""
    totals: dict[int, Fraction] = defaultdict(Fraction)
    for per_link in loads.values():
        for link, v in per_link.items():
            totals[link] += v
    links = sorted(totals, key=lambda i: (-totals[i], i))[:max_links]
    links.sort()
    steps = sorted(loads)
    z = [[float(loads[t].get(i, 0)) for i in links] for t in steps]
    labels = [f"{topo.names[topo.links[i].src]}→{topo.names[topo.links[i].dst]}" for i in links]
    trace = dict(type="heatmap", z=z, x=labels, y=[f"step {t}" for t in steps], colorscale="Reds",
                 colorbar=dict(title=dict(text="shards")),
                 hovertemplate="%{y}, %{x}: %{z:.4g} shards<extra></extra>")
    layout = dict(title="Link load per step", xaxis=dict(showticklabels=len(links) <= 64, title=dict(text="links")),
                  height=320, margin=dict(l=10, r=10, t=40, b=10))
    return FigureSpec([trace], titled(layout))


# ------------------------------------------------------------------------------------------ TE-CCL epoch views
def chunk_label(source: str, lo: str, hi: str) -> str:
    """A chunk as ``source`` (the whole shard) or ``source[lo,hi)``."""
    return source if (lo, hi) == ("0", "1") else f"{source}[{lo},{hi})"


def _pair_indices(topo: Topology) -> dict[tuple[str, str], int]:
    """(from name, to name) -> the first link index between them."""
    out: dict[tuple[str, str], int] = {}
    for i, l in enumerate(topo.links):
        out.setdefault((topo.names[l.src], topo.names[l.dst]), i)
    return out


def epoch_figure(topo: Topology, rows: list[dict], epoch: int, layout: tuple[str, list] | None = None,
                 max_labels: int = 3, max_labelled_links: int = 48) -> go.Figure:
    """The topology with the links that start sending in ``epoch`` highlighted (thicker for more chunks) and
    labelled near their head with the chunks they carry (up to ``max_labelled_links`` links; hover always).
    ``rows`` are ``TecclResult.epoch_table()`` rows (epoch, arrives, from, to, source, lo, hi)."""
    sent = [r for r in rows if r["epoch"] == epoch]
    pairs = _pair_indices(topo)
    on: dict[tuple[str, str], list[dict]] = defaultdict(list)
    for r in sent:
        on[(r["from"], r["to"])].append(r)
    weight = {pairs[p]: float(len(rs)) for p, rs in on.items() if p in pairs}
    title = (f"Epoch {epoch}: {len(sent)} chunk send(s) on {len(on)} link(s)" if sent
             else f"Epoch {epoch}: no link starts a send (chunks in flight or waiting)")
    fig = topology_figure(topo, title, link_weight=weight, weight_label="chunks", layout=layout)
    if on:
        _, pos = layout if layout is not None else choose_layout(topo)
        index = {name: u for u, name in enumerate(topo.names)}
        xs, ys, texts, hovers = [], [], [], []
        for j, ((a, b), rs) in enumerate(sorted(on.items())):
            (x0, y0), (x1, y1) = pos[index[a]], pos[index[b]]
            f = (0.72, 0.58)[j % 2]     # nearer the head (the two directions of a pair do not meet), staggered
            xs.append(x0 + f * (x1 - x0))
            ys.append(y0 + f * (y1 - y0))
            labels = [chunk_label(r["source"], r["lo"], r["hi"]) for r in rs]
            texts.append("<br>".join(labels[:max_labels]) + (f"<br>+{len(labels) - max_labels}"
                                                            if len(labels) > max_labels else ""))
            hovers.append(f"{a} → {b}<br>" + "<br>".join(
                f"{chunk_label(r['source'], r['lo'], r['hi'])}: arrives at the start of epoch {r['arrives']}"
                for r in rs[:20]) + ("<br>…" if len(rs) > 20 else ""))
        labelled = len(on) <= max_labelled_links
        fig.add_trace(go.Scatter(x=xs, y=ys, mode="text" if labelled else "markers", text=texts,
                                 marker=dict(size=8, color="rgba(139, 26, 26, 0.6)"),
                                 textfont=dict(size=10, color="#8b1a1a"), hovertext=hovers, hoverinfo="text",
                                 showlegend=False, name="chunks"))
    return fig


def epoch_gantt(topo: Topology, rows: list[dict], max_links: int = 400) -> go.Figure:
    """Links (the ones that carry anything, at most ``max_links`` busiest) against epochs: a cell is a link
    starting a send in that epoch, coloured by the source GPU of its (first) chunk; hover lists every chunk."""
    index = {name: u for u, name in enumerate(topo.names)}
    gpu = {topo.names[u]: j for j, u in enumerate(topo.compute_nodes)}
    busy: dict[tuple[str, str], int] = defaultdict(int)
    for r in rows:
        busy[(r["from"], r["to"])] += 1
    pairs = sorted(busy, key=lambda p: (-busy[p], index[p[0]], index[p[1]]))[:max_links]
    pairs.sort(key=lambda p: (index[p[0]], index[p[1]]))
    row_of = {p: i for i, p in enumerate(pairs)}
    last = max((r["epoch"] for r in rows), default=0)
    z: list[list[float | None]] = [[None] * (last + 1) for _ in pairs]
    text: list[list[str]] = [[""] * (last + 1) for _ in pairs]
    for r in rows:
        i = row_of.get((r["from"], r["to"]))
        if i is None:
            continue
        e = r["epoch"]
        if z[i][e] is None:
            z[i][e] = float(gpu.get(r["source"], 0))
        label = f"{chunk_label(r['source'], r['lo'], r['hi'])} → epoch {r['arrives']}"
        text[i][e] = f"{text[i][e]}<br>{label}" if text[i][e] else label
    n = max(len(topo.compute_nodes), 1)
    names = [topo.names[u] for u in topo.compute_nodes]
    ticks = list(range(0, n, max(1, n // 16)))
    fig = go.Figure(go.Heatmap(
        z=z, x=list(range(last + 1)), y=[f"{a}→{b}" for a, b in pairs], text=text, colorscale="Turbo", zmin=0,
        zmax=max(n - 1, 1), xgap=1, ygap=1, hoverongaps=False,
        colorbar=dict(title="source GPU", tickvals=ticks, ticktext=[names[j] for j in ticks]),
        hovertemplate="%{y}, epoch %{x}<br>%{text}<extra></extra>"))
    fig.update_layout(title="Sends per link and epoch (colour: source GPU)",
                      xaxis=dict(title="epoch", dtick=1 if last <= 40 else None, automargin=True),
                      yaxis=dict(title="links", autorange="reversed", showticklabels=len(pairs) <= 80,
                                 automargin=True),
                      height=min(900, max(320, 60 + 16 * len(pairs))), margin=dict(l=10, r=10, t=40, b=10),
                      plot_bgcolor="white")
    return place_title(fig)


def tacos_gantt(topo: Topology, rows: list[dict], max_links: int = 200) -> go.Figure:
    """TACOS's sends on a continuous clock: one row per link (the ``max_links`` busiest), one bar per send from
    its start to its arrival, coloured by the source NPU of the chunk; the reduce-scatter phase is drawn
    lighter. ``rows`` are ``TacosResult.timeline()`` entries."""
    busy: dict[int, int] = defaultdict(int)
    for r in rows:
        busy[r["link"]] += 1
    links = sorted(sorted(busy, key=lambda l: -busy[l])[:max_links])
    row_of = {l: i for i, l in enumerate(links)}
    labels = [f"{topo.names[topo.links[l].src]}→{topo.names[topo.links[l].dst]}" for l in links]
    n = max(topo.n, 1)
    fig = go.Figure()
    for phase, opacity in (("reduce_scatter", 0.55), ("allgather", 1.0)):
        part = [r for r in rows if r["phase"] == phase and r["link"] in row_of]
        if not part:
            continue
        fig.add_trace(go.Bar(
            base=[r["start_us"] for r in part], x=[r["end_us"] - r["start_us"] for r in part],
            y=[labels[row_of[r["link"]]] for r in part], orientation="h", opacity=opacity,
            marker=dict(color=[r["shard"] for r in part], colorscale="Turbo", cmin=0, cmax=max(n - 1, 1),
                        line=dict(width=0)),
            customdata=[[topo.names[r["shard"]], r["part"], r["start_us"], r["end_us"]] for r in part],
            hovertemplate="%{y}<br>chunk %{customdata[1]} of %{customdata[0]}<br>%{customdata[2]:.4g} → "
                          "%{customdata[3]:.4g} µs<extra>" + phase.replace("_", "-") + "</extra>",
            name=phase.replace("_", "-")))
    fig.update_layout(title="Sends per link (colour: source NPU; lighter: reduce-scatter)", barmode="overlay",
                      xaxis=dict(title="time (µs)", automargin=True, rangemode="tozero"),
                      yaxis=dict(title="links", autorange="reversed", showticklabels=len(links) <= 80,
                                 automargin=True, categoryorder="array", categoryarray=labels),
                      height=min(900, max(320, 60 + 14 * len(links))), margin=dict(l=10, r=10, t=40, b=10),
                      plot_bgcolor="white", legend=dict(orientation="h"))
    return place_title(fig)


# --------------------------------------------------------------------------------------------- finder figures
def frontier_figure(rows: list[dict], bound: tuple[int, Fraction], recommended: int | None = None,
                    title: str = "Pareto frontier", width_px: float = FULL_WIDTH_PX) -> go.Figure:
    """The finder's frontier: steps (total-hop latency in alphas) across, tb_factor (bandwidth runtime in M/B)
    up, one marker per design, the recommended one as a star, and the theoretical bound point (Moore diameter,
    (N-1)/N). ``rows`` hold ``name``, ``steps``, ``tb_factor`` and optionally ``code``; the title is wrapped for
    ``width_px``."""
    fig = go.Figure()
    fig.add_trace(go.Scatter(
        x=[r["steps"] for r in rows], y=[r["tb_factor"] for r in rows], mode="lines+markers+text", name="frontier",
        text=[r["name"] for r in rows],
        textposition=["top right"] * (len(rows) - 1) + ["top left"] if len(rows) > 1 else "top right", line=dict(shape="hv", dash="dot"),
        customdata=[[r.get("code", "")] for r in rows], marker=dict(size=11),
        hovertemplate="%{text}<br>%{x} steps, tb %{y:.6f}<br>%{customdata[0]}<extra></extra>"))
    if recommended is not None and 0 <= recommended < len(rows):
        r = rows[recommended]
        fig.add_trace(go.Scatter(x=[r["steps"]], y=[r["tb_factor"]], mode="markers", name="recommended",
                                 marker=dict(symbol="star", size=20, color="#d62728"),
                                 hovertemplate=f"recommended: {r['name']}<extra></extra>"))
    fig.add_trace(go.Scatter(x=[bound[0]], y=[float(bound[1])], mode="markers", name="theoretical bound",
                             marker=dict(symbol="x", size=13, color="black"),
                             hovertemplate="bound: Moore diameter %{x}, tb (N-1)/N = %{y:.6f}<extra></extra>"))
    fig.update_layout(title=title, xaxis=dict(title="steps (T_L / alpha)", dtick=1),
                      yaxis=dict(title="tb_factor (T_B / (M/B))"), height=440,
                      margin=dict(l=10, r=10, t=40, b=10))
    return place_title(fig, width_px=width_px)


def sweep_figure(series: dict[str, list[tuple[int, float]]], ylabel: str = "allreduce time (µs)",
                 title: str = "Best allreduce time against N") -> go.Figure:
    """Several designs' times against the number of nodes (the paper's Fig. 7 style), one line each; ``series``
    maps a label to (N, time) points."""
    fig = go.Figure()
    for label, pts in series.items():
        fig.add_trace(go.Scatter(x=[n for n, _ in pts], y=[t for _, t in pts], mode="lines+markers", name=label,
                                 marker=dict(size=5), line=dict(dash="dash") if "bound" in label else None))
    fig.update_layout(title=title, xaxis=dict(title="N (nodes)"), yaxis=dict(title=ylabel, type="log"),
                      height=420, margin=dict(l=10, r=10, t=40, b=10))
    return place_title(fig)


class ImageError(RuntimeError):
    """A figure could not be rendered as an image (one line: kaleido needs a Chromium it can start)."""


def figure_bytes(fig: go.Figure, fmt: str) -> bytes:
    """The figure as PNG or SVG through kaleido (which drives Debian's chromium); ImageError when kaleido cannot
    render it (no Chromium on this machine, or one that does not start)."""
    if fmt not in ("png", "svg"):
        raise ValueError(f"unknown image format {fmt!r}")
    import kaleido

    try:
        # mathjax False: kaleido would otherwise load MathJax from a CDN (the studio draws no LaTeX; plotly's own
        # "mathjax = False" default is dropped before kaleido sees it); plotly.js comes from the installed package
        return kaleido.calc_fig_sync(fig.to_dict(), opts=dict(format=fmt, width=1000,
                                                              height=int(fig.layout.height or 520),
                                                              scale=1 if fmt == "svg" else 2),
                                     kopts={"mathjax": False})
    except Exception as exc:              # kaleido's own errors: a missing or failing browser, mostly
        why = (str(exc).strip().splitlines() or [type(exc).__name__])[0][:200]
        raise ImageError(f"static images need Chromium for kaleido (Debian package chromium); {why}") from None


def render_images(images: dict, key: str, figures: dict) -> None:
    """A render button's callback: each of ``figures`` (name -> figure) as PNG and SVG into ``images`` under
    "name.png" / "name.svg", with ``images["key"] = key``; when they cannot be rendered, only ``images["error"]``
    (its one-line message) and no key, so the page says why and keeps the button."""
    try:
        rendered = {f"{name}.{fmt}": figure_bytes(fig, fmt) for name, fig in figures.items() for fmt in ("png", "svg")}
    except ImageError as exc:
        images.clear()
        images["error"] = str(exc)
        return
    images.clear()
    images.update(key=key, **rendered)
