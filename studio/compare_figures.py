"""Figures of the Compare page: runtime against vector size for every verified schedule of several designs, with
each design's lower bound and the fastest schedule per message-size range as colored bands."""
from __future__ import annotations

import math
from typing import Sequence

import plotly.graph_objects as go

from solvers.compare import ORDER, Curve, Winner
from studio.figures import place_title

# one color per synthesizer (the same across designs and figures); designs differ by dash
PALETTE = ["#1f77b4", "#ff7f0e", "#2ca02c", "#d62728", "#9467bd", "#8c564b", "#e377c2", "#7f7f7f", "#bcbd22",
           "#17becf", "#393b79", "#ad494a"]
ALGO_COLORS = {a: PALETTE[i % len(PALETTE)] for i, a in enumerate(ORDER)}
DASHES = ["solid", "dot", "dash", "longdash", "dashdot", "longdashdot"]


def algo_color(algo: str) -> str:
    return ALGO_COLORS.get(algo, PALETTE[sum(map(ord, algo)) % len(PALETTE)])


def runtime_figure(curves: Sequence[Curve], winners: Sequence[Winner] = (), title: str | None = None,
                   metric: str = "time") -> go.Figure:
    """The runtime model against M (bytes), log-log: time (µs), or with ``metric="algbw"`` algbw = M / time
    (GB/s, 1e3 bytes per µs; the bound's algbw is then an upper bound). A line per verified schedule (color:
    synthesizer, dash: design), each design's lower bound in black, and a light band per winner range labelled
    with its algorithm."""
    if metric not in ("time", "algbw"):
        raise ValueError(f"metric must be 'time' or 'algbw', not {metric!r}")
    unit = "µs" if metric == "time" else "GB/s"

    def ys(c: Curve) -> list[float]:
        if metric == "time":
            return list(c.times_us)
        return [m / (t * 1e3) if t > 0 else None for m, t in zip(c.sizes, c.times_us)]

    designs = list(dict.fromkeys(c.topology for c in curves))
    fig = go.Figure()
    for c in curves:
        k = designs.index(c.topology)
        if c.bound:
            fig.add_trace(go.Scatter(x=list(c.sizes), y=ys(c), mode="lines",
                                     name=f"lower bound · {c.name}", legendgroup=c.topology,
                                     line=dict(color="black", width=2.5, dash=DASHES[k % len(DASHES)]),
                                     hovertemplate=f"bound, {c.name}<br>M %{{x:.3g}} B<br>%{{y:.4g}} {unit}"
                                                   "<extra></extra>"))
            continue
        fig.add_trace(go.Scatter(x=list(c.sizes), y=ys(c), mode="lines",
                                 name=f"{c.algo} · {c.name}", legendgroup=c.topology,
                                 line=dict(color=algo_color(c.algo), dash=DASHES[k % len(DASHES)], width=2),
                                 hovertemplate=f"{c.algo} on {c.name}<br>M %{{x:.3g}} B<br>%{{y:.4g}} {unit}"
                                               "<extra></extra>"))
    for w in winners:
        fig.add_vrect(x0=w.from_bytes, x1=w.to_bytes, fillcolor=algo_color(w.algo), opacity=0.10, layer="below",
                      line_width=0)
        # annotations on a log axis take log10 of the position
        fig.add_annotation(x=math.log10(math.sqrt(w.from_bytes * w.to_bytes)), y=1.0, yref="paper", yanchor="bottom",
                           text=(f"{w.algo} · {w.name}" if len(designs) > 1 else w.algo)
                           + (f" (+{len(w.ties)} tied)" if w.ties else ""), showarrow=False,
                           font=dict(size=11, color=algo_color(w.algo)))
    fig.update_layout(title=title or "Runtime against vector size",
                      xaxis=dict(type="log", title="M, vector size (bytes)"),
                      yaxis=dict(type="log", title="time (µs)" if metric == "time" else "algbw (GB/s)"),
                      height=560, margin=dict(l=10, r=10, t=10, b=10),
                      legend=dict(font=dict(size=10)), plot_bgcolor="white")
    fig.update_xaxes(gridcolor="#eee")
    fig.update_yaxes(gridcolor="#eee")
    place_title(fig)
    if winners:                     # their names sit just above the plot, below the title
        fig.update_layout(margin=dict(t=fig.layout.margin.t + 20))
    return fig
