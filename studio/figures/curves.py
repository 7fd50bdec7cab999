"""Curves of schedules against the vector size or the node count: the runtime model's time and algbw, an export
bundle's protocol plan, the Finder's frontier and sweeps. Pure functions of the model: no Streamlit here."""
from __future__ import annotations

from fractions import Fraction
from typing import Sequence

import plotly.graph_objects as go

from studio.figures.spec import FigureSpec

from studio.figures.titles import FULL_WIDTH_PX, place_title, titled
from topologies.display import math_name


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
    (``spec``): Schedule makes it on every view, and plotly's subplot machinery cost ten times the drawing;
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

FRONTIER_MARKER_PX = 11
STAR_PX = 20                     # the recommended design's star
FRONTIER_MAX_WIDEN = 0.3         # the axes widen for labels by at most this share of the points' span each side
FRONTIER_TEXT_CHAR_PX = 7.0      # a generous average glyph width of plotly's 12 px point labels
FRONTIER_TEXT_LINE_PX = 16
FRONTIER_HEIGHT_PX = 440
FRONTIER_INSET_PX = (60, 170)    # what the axes' labels, the title, the legend and the margins take across and up
_POSITIONS = ("bottom left", "top right", "bottom right", "top left", "middle left", "middle right",
              "bottom center", "top center")


def frontier_label_box(x: float, y: float, text: str, position: str, px_per_x: float, px_per_y: float,
                       marker_px: float = FRONTIER_MARKER_PX) -> tuple[float, float, float, float]:
    """The data-space box (x0, x1, y0, y1) a point label of ``text`` takes at plotly's ``textposition``
    ``position`` beside a marker ``marker_px`` wide, estimated with ``FRONTIER_TEXT_CHAR_PX`` per character;
    ``px_per_x``, ``px_per_y``: the axes' scales."""
    w, h = len(text) * FRONTIER_TEXT_CHAR_PX / px_per_x, FRONTIER_TEXT_LINE_PX / px_per_y
    rx, ry = marker_px / 2 / px_per_x, marker_px / 2 / px_per_y
    across = position.split()[1]
    x0 = x + rx if across == "right" else x - rx - w if across == "left" else x - w / 2
    up = position.split()[0]
    y0 = y + ry if up == "top" else y - ry - h if up == "bottom" else y - h / 2
    return x0, x0 + w, y0, y0 + h


def frontier_obstacles(xs: list[float], ys: list[float], marks: list[tuple[float, float, float]], px_per_x: float,
                       px_per_y: float) -> list[tuple[float, float, float, float]]:
    """Boxes a label must not touch: each segment of the stepped line (plotly's ``shape="hv"``: across at a
    point's level, then down to the next point) and each marker (``marks``: x, y, size in px)."""
    out = []
    for (x0, y0), (x1, y1) in zip(zip(xs, ys), zip(xs[1:], ys[1:])):
        out += [(min(x0, x1), max(x0, x1), y0, y0), (x1, x1, min(y0, y1), max(y0, y1))]
    for x, y, size in marks:
        rx, ry = size / 2 / px_per_x, size / 2 / px_per_y
        out.append((x - rx, x + rx, y - ry, y + ry))
    return out


def _overlaps(a, b) -> bool:
    """Whether two boxes (x0, x1, y0, y1), either possibly a segment, share an inner point (touching edges do
    not count: a label starts where its marker ends)."""
    return a[0] < b[1] and b[0] < a[1] and a[2] < b[3] and b[2] < a[3]


def frontier_label_positions(xs, ys, texts, marks, px_per_x: float, px_per_y: float,
                             sizes: list[float] | None = None) -> list[str]:
    """Each point's ``textposition``: the first of the candidates (above-right for the first point, whose line
    runs right at its level; below-left for the others, the quadrant a falling Pareto frontier leaves empty)
    whose label touches no segment of the line, no marker and no label placed before; the least crowded
    candidate when every one touches something. The frontier line struck through 'C(64,{6,7})' at N = 64,
    d = 4 when every label sat above-right."""
    obstacles = frontier_obstacles(xs, ys, marks, px_per_x, px_per_y)
    sizes = sizes or [FRONTIER_MARKER_PX] * len(xs)
    out, placed = [], []
    for i, (x, y, text) in enumerate(zip(xs, ys, texts)):
        order = (("top right",) if i == 0 else ()) + tuple(p for p in _POSITIONS if i != 0 or p != "top right")
        boxes = [frontier_label_box(x, y, text, p, px_per_x, px_per_y, sizes[i]) for p in order]
        hits = [(sum(_overlaps(b, o) for o in obstacles + placed), k) for k, b in enumerate(boxes)]
        k = min(hits)[1]
        out.append(order[k])
        placed.append(boxes[k])
    return out


def frontier_layout(xs: list[float], ys: list[float], texts: list[str], marks: list[tuple[float, float, float]],
                    width_px: float, sizes: list[float] | None = None) -> tuple[list[str], list[float], list[float]]:
    """Label positions and axis ranges for the frontier's points (``sizes``: their markers' sizes in px, which
    plotly sets a label off by; ``marks``: every marker drawn, x, y, size in px):
    the ranges hold every point and every label (a label left of the first steps or below the last level would
    be clipped) up to ``FRONTIER_MAX_WIDEN`` of the points' own span either side (a crowded narrow figure, five
    long names at N = 1024 in half the page, lets labels run into the margin rather than shrink the points to a
    corner), and the positions are chosen for the scales those ranges give (a few rounds, as each depends on
    the other)."""
    plot_w, plot_h = max(width_px - FRONTIER_INSET_PX[0], 120), FRONTIER_HEIGHT_PX - FRONTIER_INSET_PX[1]
    all_x, all_y = xs + [m[0] for m in marks], ys + [m[1] for m in marks]
    y_span = (max(all_y) - min(all_y)) or max(abs(max(all_y)), 1.0) * 0.1
    base = [min(all_x) - 0.5, max(all_x) + 0.5, min(all_y) - 0.06 * y_span, max(all_y) + 0.06 * y_span]
    span_x, span_y = base[1] - base[0], base[3] - base[2]
    cap = [base[0] - FRONTIER_MAX_WIDEN * span_x, base[1] + FRONTIER_MAX_WIDEN * span_x,
           base[2] - FRONTIER_MAX_WIDEN * span_y, base[3] + FRONTIER_MAX_WIDEN * span_y]
    box = list(base)
    for _ in range(8):
        px_x, px_y = plot_w / (box[1] - box[0]), plot_h / (box[3] - box[2])
        positions = frontier_label_positions(xs, ys, texts, marks, px_x, px_y, sizes)
        need = list(base)
        for x, y, text, p, size in zip(xs, ys, texts, positions, sizes or [FRONTIER_MARKER_PX] * len(xs)):
            x0, x1, y0, y1 = frontier_label_box(x, y, text, p, px_x, px_y, size)
            need = [min(need[0], x0), max(need[1], x1), min(need[2], y0), max(need[3], y1)]
        need = [max(need[0], cap[0]), min(need[1], cap[1]), max(need[2], cap[2]), min(need[3], cap[3])]
        if box[0] <= need[0] and need[1] <= box[1] and box[2] <= need[2] and need[3] <= box[3]:
            break                        # every label inside (or the cap reached): these positions stand
        # widen a little past what the labels need, as the wider range shrinks the scale they were measured in
        pad_x, pad_y = 0.03 * (need[1] - need[0]), 0.03 * (need[3] - need[2])
        box = [min(box[0], max(need[0] - pad_x * (need[0] < base[0]), cap[0])),
               max(box[1], min(need[1] + pad_x * (need[1] > base[1]), cap[1])),
               min(box[2], max(need[2] - pad_y * (need[2] < base[2]), cap[2])),
               max(box[3], min(need[3] + pad_y * (need[3] > base[3]), cap[3]))]
    return positions, box[:2], box[2:]


def frontier_figure(rows: list[dict], bound: tuple[int, Fraction], recommended: int | None = None,
                    title: str = "Pareto frontier", width_px: float = FULL_WIDTH_PX) -> go.Figure:
    """The finder's frontier: steps (total-hop latency in alphas) across, tb_factor (bandwidth runtime in M/B)
    up, one marker per design labelled with its name as math (``topologies.display.math_name``), the
    recommended one as a star, and the theoretical bound point (Moore diameter, (N-1)/N). ``rows`` hold
    ``name``, ``steps``, ``tb_factor`` and optionally ``code``; each label sits where neither the stepped line
    nor a marker nor another label is (``frontier_layout``), inside axis ranges that hold it; the title is
    wrapped for ``width_px``."""
    fig = go.Figure()
    names = [math_name(r["name"]) for r in rows]
    xs, ys = [r["steps"] for r in rows], [float(r["tb_factor"]) for r in rows]
    starred = recommended is not None and 0 <= recommended < len(rows)
    # the starred point's own marker is as large as its star (and hidden under it), so plotly sets its label off
    # by the star's size rather than into it
    sizes = [STAR_PX if starred and i == recommended else FRONTIER_MARKER_PX for i in range(len(rows))]
    marks = [(x, y, s) for x, y, s in zip(xs, ys, sizes)] + [(bound[0], float(bound[1]), 13)]
    layout = dict(title=title, xaxis=dict(title="steps (T_L / alpha)", dtick=1),
                  yaxis=dict(title="tb_factor (T_B / (M/B))"), height=FRONTIER_HEIGHT_PX,
                  margin=dict(l=10, r=10, t=40, b=10), legend=dict(orientation="h", y=-0.22))
    positions: list[str] = []
    if rows:
        positions, layout["xaxis"]["range"], layout["yaxis"]["range"] = frontier_layout(xs, ys, names, marks,
                                                                                          width_px, sizes)
        x_range = layout["xaxis"]["range"]
        if (x_range[1] - x_range[0]) * 28 > width_px:      # a tick a step while each has 28 px, else plotly's
            del layout["xaxis"]["dtick"]
    fig.add_trace(go.Scatter(
        x=xs, y=ys, mode="lines+markers+text", name="frontier", text=names, textposition=positions or None,
        line=dict(shape="hv", dash="dot"), customdata=[[r.get("code", "")] for r in rows],
        marker=dict(size=sizes, opacity=[0.0 if s == STAR_PX else 1.0 for s in sizes]), cliponaxis=False,
        hovertemplate="%{text}<br>%{x} steps, tb %{y:.6f}<br>%{customdata[0]}<extra></extra>"))
    if starred:
        r = rows[recommended]
        fig.add_trace(go.Scatter(x=[r["steps"]], y=[r["tb_factor"]], mode="markers", name="recommended",
                                 marker=dict(symbol="star", size=STAR_PX, color="#d62728"),
                                 hovertemplate=f"recommended: {names[recommended]}<extra></extra>"))
    fig.add_trace(go.Scatter(x=[bound[0]], y=[float(bound[1])], mode="markers", name="theoretical bound",
                             marker=dict(symbol="x", size=13, color="black"),
                             hovertemplate="bound: Moore diameter %{x}, tb (N-1)/N = %{y:.6f}<extra></extra>"))
    fig.update_layout(**layout)
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

