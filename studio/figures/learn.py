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
from topologies.display import math_name

_DASHED = ("bound", "lower")
_MEASURED = "measured"


LABEL_CHAR_PX = 7.0          # a generous average glyph width of an 11 px annotation
LABEL_LINE_PX = 14           # one line of an 11 px annotation, and the gap between staggered rows
PLOT_INSET_PX = 80           # the width a log-log figure loses to its y axis's labels and margins
PLOT_FRAME_PX = 160          # the height it loses to its title, x axis and legend


def _log_vline(fig: go.Figure, x: float, text: str, *, color: str, dash: str | None, top: bool,
               row: int = 0, anchor: str = "left", row_px: int = 0, reach: float = 1.0) -> None:
    """A vertical line at ``x`` on a logarithmic x axis, from the bottom of the plot to ``reach`` of its height,
    with its label on the ``anchor`` side of the line ("left": the label starts at the line and runs right),
    ``row`` rows of ``row_px`` (default 0.07 of the plot) down from the top. The label is a separate annotation
    because plotly places an ``add_vline`` annotation at the raw value, not at log10 of it, on log axes."""
    fig.add_vline(x=x, y0=0.0, y1=reach, line=dict(color=color, width=1, dash=dash))
    y = (1.0 if row_px else 1.0 - 0.07 * row) if top else 0.0
    fig.add_annotation(x=math.log10(x), xref="x", y=y, yref="paper", yshift=-row * row_px if top else 0, text=text,
                       showarrow=False, xanchor=anchor, yanchor="top" if top else "bottom", align=anchor,
                       font=dict(size=11, color=color), bgcolor="rgba(255,255,255,0.7)")


def label_span(x: float, text: str, anchor: str, decades_per_px: float) -> tuple[float, float]:
    """The log10 extent across of a label of ``text`` (lines split at ``<br>``) drawn at size ``x`` on the
    ``anchor`` side, estimated from ``LABEL_CHAR_PX`` per character of its longest line, 3 px of padding
    either side."""
    width = (max(len(line) for line in text.split("<br>")) * LABEL_CHAR_PX + 6) * decades_per_px
    at = math.log10(x)
    return (at, at + width) if anchor == "left" else (at - width, at)


def label_anchors(lines: list[tuple[float, str]], decades_per_px: float,
                  limits: tuple[float, float] | None = None) -> list[str]:
    """For each vertical line (size, label text), the side its label goes: to the right of the line ("left"
    anchor) unless the left side ("right" anchor) is better: fewer other lines of ``lines`` crossing the label,
    then the label inside ``limits`` (log10 of the axis range) where the right side's is not. Used for the
    crossovers and the workload's M marker (Learn step 4: the M line struck a crossover's label)."""
    xs = [math.log10(x) for x, _ in lines]

    def cost(i: int, anchor: str) -> tuple[int, int]:
        lo, hi = label_span(lines[i][0], lines[i][1], anchor, decades_per_px)
        crossed = sum(lo < xs[j] < hi or xs[j] == xs[i] for j in range(len(lines)) if j != i)
        outside = limits is not None and (lo < limits[0] or hi > limits[1])
        return crossed, int(outside)
    return ["right" if cost(i, "right") < cost(i, "left") else "left" for i in range(len(lines))]


def mark_sizes(fig: go.Figure, sizes: list[float], crossovers, marker: float | None, width_px: float) -> None:
    """The crossovers (dotted, labels at the top, staggered over three rows) and the workload's M (red, label at
    the bottom), each label on the side of its line that no other line crosses (``label_anchors``). The M line
    stops below the crossovers' labels, so it never strikes one (Learn step 4), and its own label takes the
    side the crossover lines leave free. The x axis is fixed to the sizes drawn, so a label's width in decades
    is known; a label of several lines (``<br>``) staggers by its height."""
    lo, hi = math.log10(min(sizes)), math.log10(max(sizes))
    fig.update_xaxes(range=[lo, hi])
    decades_per_px = (hi - lo) / max(width_px - PLOT_INSET_PX, 100) if hi > lo else 0.0
    lines = [(float(x), math_name(text)) for x, text in crossovers]
    anchors = label_anchors(lines, decades_per_px, (lo, hi))
    tall = max((text.count("<br>") + 1 for _, text in lines), default=1)
    row_px = LABEL_LINE_PX * tall + 4
    for i, (x, text) in enumerate(lines):
        _log_vline(fig, x, text, color="#52606d", dash="dot", top=True, row=i % 3, anchor=anchors[i],
                   row_px=row_px)
    if marker is not None:
        label = f"M = {marker:.3g} B"
        anchor = label_anchors(lines + [(float(marker), label)], decades_per_px, (lo, hi))[-1]
        plot_px = max(float(fig.layout.height or 400) - PLOT_FRAME_PX, 120.0)
        reach = 1.0 - (min(len(lines), 3) * row_px + 6) / plot_px if lines else 1.0
        _log_vline(fig, marker, label, color="#d62728", dash=None, top=False, anchor=anchor, reach=max(reach, 0.3))


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
    fig.update_layout(title=title, xaxis=dict(type="log", title="M, message size (bytes)"),
                      yaxis=dict(type="log", title=y_title), height=400, margin=dict(l=10, r=10, t=40, b=10),
                      legend=dict(orientation="h", y=-0.2))
    mark_sizes(fig, sizes, crossovers, marker, width_px)
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
    fig.update_layout(title=title, xaxis=dict(type="log", title="M, message size (bytes)"),
                      yaxis=dict(title="T_L / (T_L + T_B)", range=[0, 1.02], tickformat=".0%"), height=400,
                      margin=dict(l=10, r=10, t=40, b=10), legend=dict(orientation="h", y=-0.2))
    mark_sizes(fig, sizes, (), marker, width_px)
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
