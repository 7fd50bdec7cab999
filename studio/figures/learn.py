"""Plotly figures for the Learn page. Pure functions of numbers the library has already computed: no Streamlit and
no cost model here (the page prices schedules through ``solvers``), so a notebook can draw them too.

* ``size_curves_figure``: time against message size for several designs (log-log), the sidebar's size and the
  crossovers marked;
* ``latency_share_figure``: the share of a collective's time that is latency, against message size;
* ``diameter_figure``: the diameters of several designs of one degree beside the Moore bound;
* ``survival_figure``: each design's optimal algbw healthy and after its worst single link failure.

Each takes ``width_px``, the width the page gives it (``studio.figures.HALF_WIDTH_PX`` in one of two columns), and
wraps its title to fit (``studio.figures.titles.place_title``).
"""
from __future__ import annotations

import math

import plotly.graph_objects as go

from studio.figures.titles import FULL_WIDTH_PX, place_title

_DASHED = ("bound", "lower")
_MEASURED = "measured"


def _log_vline(fig: go.Figure, x: float, text: str, *, color: str, dash: str | None, top: bool,
               row: int = 0) -> None:
    """A vertical line at ``x`` on a logarithmic x axis with its label. The label is a separate annotation
    because plotly places an ``add_vline`` annotation at the raw value, not at log10 of it, on log axes."""
    fig.add_vline(x=x, line=dict(color=color, width=1, dash=dash))
    fig.add_annotation(x=math.log10(x), xref="x", y=(1.0 - 0.07 * row) if top else 0.0, yref="paper", text=text,
                       showarrow=False, xanchor="left", yanchor="top" if top else "bottom",
                       font=dict(size=11, color=color), bgcolor="rgba(255,255,255,0.7)")


def _dash(label: str) -> str | None:
    return "dash" if any(word in label for word in _DASHED) else None


def size_curves_figure(sizes: list[float], series: dict[str, list[float]], *, marker: float | None = None,
                       crossovers: list[tuple[float, str]] = (), highlight: str | None = None,
                       title: str = "Time against message size", y_title: str = "time (µs)",
                       width_px: float = FULL_WIDTH_PX) -> go.Figure:
    """One line per design (``series``: label -> time at each of ``sizes``), both axes logarithmic; labels with
    'bound' are dashed, ``highlight`` is drawn thicker; labels with 'measured' are drawn last, above the model
    lines they may lie on, as markers on a thin line; ``marker`` draws a vertical line at that size (the
    workload's M) and each ``crossovers`` entry (size, text) a dotted one."""
    fig = go.Figure()
    order = sorted(series, key=lambda label: _MEASURED in label)          # measured last: drawn on top
    for label in order:
        ys = series[label]
        width = 4 if label == highlight else 2
        measured = _MEASURED in label
        fig.add_trace(go.Scatter(x=sizes, y=ys, mode="lines+markers" if measured else "lines", name=label,
                                 line=dict(dash=_dash(label), width=1 if measured else width,
                                           color="#111111" if measured else None),
                                 marker=dict(size=8, symbol="circle-open", line=dict(width=2)) if measured else None,
                                 hovertemplate=label + "<br>M %{x:.3g} bytes: %{y:.4g} µs<extra></extra>"))
    for i, (x, text) in enumerate(crossovers):                  # labels staggered so neighbours do not overlap
        _log_vline(fig, x, text, color="#52606d", dash="dot", top=True, row=i % 3)
    if marker is not None:
        _log_vline(fig, marker, f"M = {marker:.3g} B", color="#d62728", dash=None, top=False)
    fig.update_layout(title=title, xaxis=dict(type="log", title="M, message size (bytes)"),
                      yaxis=dict(type="log", title=y_title), height=400, margin=dict(l=10, r=10, t=40, b=10),
                      legend=dict(orientation="h", y=-0.2))
    return place_title(fig, width_px=width_px)


def latency_share_figure(sizes: list[float], series: dict[str, list[float]], *, marker: float | None = None,
                         title: str = "How much of the time is latency", width_px: float = FULL_WIDTH_PX) -> go.Figure:
    """``series``: label -> T_L / (T_L + T_B) at each of ``sizes`` (a number from 0 to 1), log size across."""
    fig = go.Figure()
    for label, ys in series.items():
        fig.add_trace(go.Scatter(x=sizes, y=ys, mode="lines", name=label,
                                 hovertemplate=label + "<br>M %{x:.3g} bytes: %{y:.0%} latency<extra></extra>"))
    fig.add_hline(y=0.5, line=dict(dash="dot", color="#7b8794"), annotation_text="half the time",
                  annotation_position="bottom left")
    if marker is not None:
        _log_vline(fig, marker, f"M = {marker:.3g} B", color="#d62728", dash=None, top=False)
    fig.update_layout(title=title, xaxis=dict(type="log", title="M, message size (bytes)"),
                      yaxis=dict(title="T_L / (T_L + T_B)", range=[0, 1.02], tickformat=".0%"), height=400,
                      margin=dict(l=10, r=10, t=40, b=10), legend=dict(orientation="h", y=-0.2))
    return place_title(fig, width_px=width_px)


def diameter_figure(rows: list[dict], moore: int, title: str = "Diameter beside the Moore bound",
                    width_px: float = FULL_WIDTH_PX) -> go.Figure:
    """Bars of ``rows`` (dicts with ``name`` and ``diameter``) and a dashed line at the Moore bound ``moore``: no
    graph of that size and degree has a smaller diameter. The y axis is linear from zero, so bar heights compare as
    the diameters do."""
    names = [r["name"] for r in rows]
    values = [r["diameter"] for r in rows]
    colors = ["#2ca02c" if v == moore else "#1f77b4" for v in values]
    fig = go.Figure(go.Bar(x=names, y=values, marker_color=colors, text=values, textposition="outside",
                           hovertemplate="%{x}: diameter %{y}<extra></extra>", name="diameter", showlegend=False))
    fig.add_trace(go.Scatter(x=names, y=[moore] * len(names), mode="lines", name=f"Moore bound ({moore})",
                             line=dict(dash="dash", color="black", width=2),
                             hovertemplate=f"Moore bound: no graph of this size and degree has diameter below "
                                           f"{moore}<extra></extra>"))
    top = max(values + [moore], default=1)
    fig.update_layout(title=title, yaxis=dict(title="diameter (hops)", range=[0, top * 1.15]), xaxis=dict(title=None),
                      height=400,
                      margin=dict(l=10, r=10, t=40, b=10), legend=dict(orientation="h", y=-0.15))
    return place_title(fig, width_px=width_px)


def survival_figure(rows: list[dict], title: str = "Optimal allgather algbw, healthy and after the worst cut cable",
                    width_px: float = FULL_WIDTH_PX) -> go.Figure:
    """Grouped bars from zero: per design (``rows``: dicts with ``name``, ``healthy`` and ``worst``, GB/s in the
    links' own units), its optimal algbw with every link and after the single cable failure that costs most."""
    names = [r["name"] for r in rows]
    fig = go.Figure()
    for key, label, color in (("healthy", "every link", "#1f77b4"), ("worst", "worst single cable cut", "#d62728")):
        values = [r[key] for r in rows]
        fig.add_trace(go.Bar(x=names, y=values, name=label, marker_color=color,
                             text=[f"{v:.3g}" for v in values], textposition="outside",
                             hovertemplate="%{x}: %{y:.4g} GB/s (" + label + ")<extra></extra>"))
    top = max([r["healthy"] for r in rows] + [1e-9])
    fig.update_layout(title=title, barmode="group", yaxis=dict(title="algbw (GB/s, unit links)", range=[0, top * 1.2]),
                      xaxis=dict(title=None), height=400, margin=dict(l=10, r=10, t=40, b=10),
                      legend=dict(orientation="h", y=-0.15))
    return place_title(fig, width_px=width_px)
