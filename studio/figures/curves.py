"""Curves of schedules against the vector size or the node count: the runtime model's time and algbw, an export
bundle's protocol plan, the Finder's frontier and sweeps. Pure functions of the model: no Streamlit here."""
from __future__ import annotations

from fractions import Fraction
from typing import Sequence

import plotly.graph_objects as go

from studio.figures.spec import FigureSpec

from studio.figures.titles import FULL_WIDTH_PX, place_title, titled


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

