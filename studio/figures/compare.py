"""Figures and the table of the Compare page: runtime against vector size for the verified schedules of several
designs (by default each design's fastest schedule at each size, or every schedule), with each design's lower
bound and the fastest schedule per message-size range as coloured bands; and the table of runs as the page shows
it (rows that do not apply folded away, empty cells empty, the status split into its outcome and its reason).

Colours: one per synthesizer, the same on every page (``studio.figures.charts.synth_color``, keyed by the registry's
order); dashes: one per design, in the order the designs were given."""
from __future__ import annotations

import math
from typing import NamedTuple, Sequence

import pandas as pd
import plotly.graph_objects as go

from solvers.compare import Curve, Winner
from studio.figures.charts import synth_color
from studio.figures.titles import place_title
from topologies.display import math_name

# designs differ by dash (eight: the Compare page's limit of designs); plotly's six named ones, then two patterns
DASHES = ["solid", "dot", "dash", "longdash", "dashdot", "longdashdot", "12px,3px,3px,3px,3px,3px", "2px,7px"]
VIEWS = {"fastest": "fastest per design", "every": "every schedule"}
PLOT_WIDTH_PX = 900           # the plot area the band labels are fitted to (the page's full width less the legend)
LABEL_CHAR_PX = 6.6           # the width of one character of an 11 px label, on average
LABEL_ROWS = 2                # rows of band labels above the plot; a label that fits in none is left out


def algo_color(algo: str) -> str:
    """The synthesizer's colour (``studio.figures.charts.synth_color``)."""
    return synth_color(algo)


def design_dash(k: int) -> str:
    """The dash of the k-th design."""
    return DASHES[k % len(DASHES)]


class Fastest(NamedTuple):
    """One design's fastest verified schedule at each size: ``algos[j]`` ran ``times_us[j]`` at ``sizes[j]``."""

    topology: str
    name: str
    collective: str
    sizes: tuple[float, ...]
    times_us: tuple[float, ...]
    algos: tuple[str, ...]


def fastest_per_design(curves: Sequence[Curve]) -> list[Fastest]:
    """For every (design, collective) of ``curves``, the minimum time over its verified schedules at each sampled
    size and the synthesizer that reaches it (the first listed on a tie); bound curves are left out."""
    groups: dict[tuple[str, str], list[Curve]] = {}
    for c in curves:
        if not c.bound:
            groups.setdefault((c.topology, c.collective), []).append(c)
    out = []
    for (topo, coll), cs in groups.items():
        times, algos = [], []
        for j in range(len(cs[0].sizes)):
            best = min(cs, key=lambda c: c.times_us[j])
            times.append(best.times_us[j])
            algos.append(best.algo)
        out.append(Fastest(topo, cs[0].name, coll, tuple(cs[0].sizes), tuple(times), tuple(algos)))
    return out


class BandLabel(NamedTuple):
    """A winner band's label: at ``x`` (log10 bytes, the band's middle), in ``row`` (0: just above the plot)."""

    x: float
    row: int
    text: str
    algo: str
    width: float                # in log10 bytes, as drawn on a plot PLOT_WIDTH_PX wide


def band_labels(winners: Sequence[Winner], many_designs: bool, plot_width_px: float = PLOT_WIDTH_PX,
                rows: int = LABEL_ROWS) -> list[BandLabel]:
    """Labels for the winner bands that do not overlap: each goes in the first row where it clears the labels
    already there (widths estimated at ``LABEL_CHAR_PX`` a character on a plot ``plot_width_px`` wide); one that
    fits in none of ``rows`` rows is left out (its band stays, its winner is in the table below the figure)."""
    if not winners:
        return []
    lo = math.log10(min(w.from_bytes for w in winners))
    hi = math.log10(max(w.to_bytes for w in winners))
    per_px = max(hi - lo, 1e-9) / plot_width_px
    ends = [-math.inf] * rows              # the right end of the last label in each row
    out = []
    for w in winners:
        text = (f"{w.algo} · {math_name(w.name)}" if many_designs else w.algo) + \
            (f" (+{len(w.ties)} tied)" if w.ties else "")
        x = (math.log10(w.from_bytes) + math.log10(w.to_bytes)) / 2
        width = (len(text) * LABEL_CHAR_PX + 8) * per_px
        left = min(max(x - width / 2, lo), hi - width)      # at an end of the axis: shifted inside
        right = left + width
        row = next((r for r in range(rows) if ends[r] <= left), None)
        if row is None:
            continue
        ends[row] = right
        out.append(BandLabel((left + right) / 2, row, text, w.algo, width))
    return out


def runtime_figure(curves: Sequence[Curve], winners: Sequence[Winner] = (), title: str | None = None,
                   metric: str = "time", view: str = "every") -> go.Figure:
    """The runtime model against M (bytes), log-log: time (µs), or with ``metric="algbw"`` algbw = M / time
    (GB/s, 1e3 bytes per µs; the bound's algbw is then an upper bound). ``view="every"``: a line per verified
    schedule (colour: synthesizer, dash: design); ``view="fastest"``: a line per design (its dash, dark grey)
    through its fastest schedule at each size, each point coloured by the synthesizer that reaches it. Each
    design's lower bound in black, and a light band per winner range labelled with its algorithm (``band_labels``)."""
    if metric not in ("time", "algbw"):
        raise ValueError(f"metric must be 'time' or 'algbw', not {metric!r}")
    if view not in VIEWS:
        raise ValueError(f"view must be one of {', '.join(VIEWS)}, not {view!r}")
    unit = "µs" if metric == "time" else "GB/s"

    def ys(sizes, times) -> list[float]:
        if metric == "time":
            return list(times)
        return [m / (t * 1e3) if t > 0 else None for m, t in zip(sizes, times)]

    designs = list(dict.fromkeys(c.topology for c in curves))
    fig = go.Figure()
    for c in curves:
        if c.bound:
            fig.add_trace(go.Scatter(x=list(c.sizes), y=ys(c.sizes, c.times_us), mode="lines",
                                     name=f"lower bound · {c.name}", legendgroup=c.topology,
                                     line=dict(color="black", width=2.5, dash=design_dash(designs.index(c.topology))),
                                     hovertemplate=f"bound, {c.name}<br>M %{{x:.3g}} B<br>%{{y:.4g}} {unit}"
                                                   "<extra></extra>"))
    if view == "every":
        for c in curves:
            if c.bound:
                continue
            fig.add_trace(go.Scatter(x=list(c.sizes), y=ys(c.sizes, c.times_us), mode="lines",
                                     name=f"{c.algo} · {c.name}", legendgroup=c.topology,
                                     line=dict(color=algo_color(c.algo), dash=design_dash(designs.index(c.topology)),
                                               width=2),
                                     hovertemplate=f"{c.algo} on {c.name}<br>M %{{x:.3g}} B<br>%{{y:.4g}} {unit}"
                                                   "<extra></extra>"))
    else:
        seen: list[str] = []
        for f in fastest_per_design(curves):
            seen += [a for a in dict.fromkeys(f.algos) if a not in seen]
            fig.add_trace(go.Scatter(x=list(f.sizes), y=ys(f.sizes, f.times_us), mode="lines+markers",
                                     name=f"fastest · {f.name}", legendgroup=f.topology, customdata=list(f.algos),
                                     line=dict(color="#444", dash=design_dash(designs.index(f.topology)), width=2),
                                     marker=dict(color=[algo_color(a) for a in f.algos], size=6),
                                     hovertemplate=f"%{{customdata}} on {f.name}<br>M %{{x:.3g}} B<br>"
                                                   f"%{{y:.4g}} {unit}<extra></extra>"))
        for a in seen:               # the key to the points' colours (legend entries only)
            fig.add_trace(go.Scatter(x=[None], y=[None], mode="markers", name=a, legendgroup="synthesizers",
                                     marker=dict(color=algo_color(a), size=8), hoverinfo="skip"))
    for w in winners:
        fig.add_vrect(x0=w.from_bytes, x1=w.to_bytes, fillcolor=algo_color(w.algo), opacity=0.10, layer="below",
                      line_width=0)
    labels = band_labels(winners, len(designs) > 1)
    for lab in labels:
        fig.add_annotation(x=lab.x, y=1.0, yref="paper", yanchor="bottom", yshift=16 * lab.row, text=lab.text,
                           showarrow=False, font=dict(size=11, color=algo_color(lab.algo)))
    fig.update_layout(title=title or "Runtime against vector size",
                      xaxis=dict(type="log", title="M, vector size (bytes)"),
                      yaxis=dict(type="log", title="time (µs)" if metric == "time" else "algbw (GB/s)"),
                      height=560, margin=dict(l=10, r=10, t=10, b=10),
                      legend=dict(font=dict(size=10)), plot_bgcolor="white")
    fig.update_xaxes(gridcolor="#eee")
    fig.update_yaxes(gridcolor="#eee")
    place_title(fig)
    if labels:                      # their names sit just above the plot, below the title
        fig.update_layout(margin=dict(t=fig.layout.margin.t + 20 + 16 * max(lab.row for lab in labels)))
    return fig


# ------------------------------------------------------------------------------------------------------- the table
NOT_APPLICABLE = "not applicable"


def split_status(status) -> tuple[str, str]:
    """``"not applicable: dbt needs ..."`` -> ``("not applicable", "dbt needs ...")``; ``"ok"`` -> ``("ok", "")``."""
    text = "" if status is None else str(status)
    outcome, _, why = text.partition(": ")
    return outcome, why


def _cell(v) -> str:
    """A cell of a column that has empty cells, as text: numbers with at most four decimals, missing ones empty."""
    if v is None or (not isinstance(v, str) and pd.isna(v)):
        return ""
    if isinstance(v, str):
        return "" if v.strip() in ("None", "nan", "NaN", "<NA>") else v
    if isinstance(v, bool):
        return str(v).lower()
    if isinstance(v, float):
        return f"{v:.4f}"            # as the page's other number columns (four decimals)
    if isinstance(v, int):
        return str(v)
    return str(v)


def readable_table(frame: pd.DataFrame, show_not_applicable: bool = False) -> tuple[pd.DataFrame, int]:
    """The Compare table as shown, and the number of its rows that do not apply. ``frame`` has a "status" column
    (``solvers.compare`` statuses): the rows whose status is "not applicable: ..." are left out unless
    ``show_not_applicable``; "status" keeps the outcome and a "why" column (after "verified" where there is one)
    the reason; a column with an empty cell becomes text with that cell empty (Streamlit draws a missing value as
    "None" whatever the Styler says), numbers in it with four decimals; the others keep their type."""
    outcome_why = [split_status(s) for s in frame["status"]]
    applies = [o != NOT_APPLICABLE for o, _ in outcome_why]
    hidden = len(applies) - sum(applies)
    out = frame.copy()
    out["status"] = [o for o, _ in outcome_why]
    after = "verified" if "verified" in out.columns else "status"      # the short cells first, then the long text
    at = list(out.columns).index(after) + 1
    out.insert(at, "why", [w for _, w in outcome_why])
    if not show_not_applicable:
        out = out[applies]
    out = out.reset_index(drop=True)
    if "design" in out.columns:                        # names as math (``topologies.display.math_name``)
        out["design"] = out["design"].map(math_name)
    for col in out.columns:
        values = out[col]
        missing = values.isna() | values.map(lambda v: isinstance(v, str) and v.strip() in ("None", "nan", "<NA>"))
        if missing.any():
            out[col] = pd.Series([_cell(v) for v in values.astype(object)], index=out.index, dtype=object)
    return out, hidden
