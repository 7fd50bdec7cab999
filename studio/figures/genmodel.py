"""Plotly figures for GenModel and GenTree. Pure functions of already computed data: no Streamlit here.

* ``breakdown_figure``: per-plan stacked bars by GenModel term (as the paper's Fig. 10);
* ``size_figure``: T against S per plan, log-log, with the crossover of the best plan marked;
* ``servers_figure``: T against N per plan, the incast threshold w_t as a vertical line;
* ``factorization_figure``: every HCPS factorization by memory (delta) and incast (epsilon) seconds;
* ``tree_figure``: a switch tree, servers at the bottom, each switch labelled with its GenTree plan;
* ``comparison_figure``: GenTree beside the flat baselines;
* ``fit_figure``: measured against fitted times.
"""
from __future__ import annotations

import plotly.graph_objects as go

from studio.figures.titles import place_title

TERM_COLORS = {"alpha": "#1f77b4", "beta": "#ff7f0e", "gamma": "#2ca02c", "delta": "#9467bd", "epsilon": "#d62728"}
TERM_NAMES = {"alpha": "α latency", "beta": "β bandwidth", "gamma": "γ compute", "delta": "δ memory",
              "epsilon": "ε incast"}
MAX_TREE_SERVERS_DRAWN = 600


def breakdown_figure(rows: list[dict], title: str = "GenModel cost by term", top: int = 15) -> go.Figure:
    """Stacked bars (seconds) of ``rows`` (dicts with plan, alpha, beta, gamma, delta, epsilon), in order."""
    rows = rows[:top]
    plans = [r["plan"] for r in rows]
    fig = go.Figure()
    for term, color in TERM_COLORS.items():
        fig.add_trace(go.Bar(name=TERM_NAMES[term], x=plans, y=[r[term] for r in rows], marker_color=color,
                             hovertemplate="%{x}: %{y:.4g} s<extra>" + TERM_NAMES[term] + "</extra>"))
    fig.update_layout(barmode="stack", title=title, yaxis=dict(title="seconds", rangemode="tozero"),
                      xaxis=dict(title="plan"),
                      legend=dict(orientation="h", y=-0.25), margin=dict(t=50, b=10))
    return place_title(fig)


PLAN_DASHES = ("solid", "dash", "dot", "dashdot", "longdash", "longdashdot")
PLAN_SYMBOLS = ("circle-open", "square-open", "diamond-open", "triangle-up-open", "x-thin-open", "star-open",
                "pentagon-open", "cross-thin-open")
COINCIDE_REL = 0.02                    # two plans' curves within 2 % at every size lie on each other in the figure


def coinciding(sizes: list[float], series: dict[str, list[float]], rel: float = COINCIDE_REL) -> list[list[str]]:
    """The groups of two or more plans whose curves coincide: every time within ``rel`` (relative) of the
    group's first plan's at every one of ``sizes``; plans in ``series`` order, each in one group at most."""
    groups: list[list[str]] = []
    for name, ys in series.items():
        for g in groups:
            first = series[g[0]]
            if all(abs(a - b) <= rel * max(abs(a), abs(b)) for a, b in zip(ys, first)):
                g.append(name)
                break
        else:
            groups.append([name])
    return [g for g in groups if len(g) > 1]


def names_text(names: list[str]) -> str:
    """"a", "a and b", "a, b and c"."""
    return names[0] if len(names) == 1 else ", ".join(names[:-1]) + " and " + names[-1]


def coincide_note(sizes: list[float], series: dict[str, list[float]], sep: str = "; ") -> str:
    """Which plans' curves lie on each other (``coinciding``), one group after another joined by ``sep``, or ""
    where none do."""
    groups = coinciding(sizes, series)
    if not groups:
        return ""
    return (f"Curves that coincide (within {COINCIDE_REL:.0%} at every size, told apart by dash and marker):"
            + ("<br>" if sep == "<br>" else " ") + sep.join(names_text(g) for g in groups))


def size_figure(sizes: list[float], series: dict[str, list[float]], best: list[str] | None = None,
                title: str = "AllReduce time against size") -> go.Figure:
    """Lines T(S) per plan (log-log), each plan with its own dash and open marker so that plans whose curves
    coincide stay visible, and a note under the axis naming them (``coincide_note``); ``best[i]`` names the
    cheapest plan at ``sizes[i]`` (hover + markers where it changes)."""
    fig = go.Figure()
    for k, (name, ys) in enumerate(series.items()):
        fig.add_trace(go.Scatter(x=sizes, y=ys, mode="lines+markers", name=name,
                                 line=dict(dash=PLAN_DASHES[k % len(PLAN_DASHES)], width=2),
                                 marker=dict(symbol=PLAN_SYMBOLS[k % len(PLAN_SYMBOLS)], size=7 + (k % 3)),
                                 hovertemplate=name + ": S %{x:.3g} floats, %{y:.4g} s<extra></extra>"))
    if best:
        xs, ys, text = [], [], []
        for i, b in enumerate(best):
            if i == 0 or b != best[i - 1]:
                xs.append(sizes[i])
                ys.append(series[b][i])
                text.append(b)
        fig.add_trace(go.Scatter(x=xs, y=ys, mode="markers+text", text=text, textposition="top left",
                                 name="best from here", marker=dict(size=10, symbol="diamond", color="black")))
    note = coincide_note(sizes, series, sep="<br>")
    bottom = 10
    if note:
        lines = note.count("<br>") + 1
        fig.add_annotation(text=note, xref="paper", yref="paper", x=0.0, y=0.0, yshift=-52, xanchor="left",
                           yanchor="top", showarrow=False, align="left", font=dict(size=11, color="#52606d"))
        bottom = 64 + 16 * lines
    fig.update_layout(title=title, xaxis=dict(type="log", title="S (floats per server)"),
                      yaxis=dict(type="log", title="AllReduce time (s)"), margin=dict(t=50, b=bottom))
    return place_title(fig)


def servers_figure(servers: list[int], series: dict[str, list[float]], w_t: int,
                   title: str = "AllReduce time against N") -> go.Figure:
    """Lines T(N) per plan with the incast knee at N = w_t."""
    fig = go.Figure()
    for name, ys in series.items():
        fig.add_trace(go.Scatter(x=servers, y=ys, mode="lines+markers", name=name))
    fig.add_vline(x=w_t, line_dash="dash", annotation_text=f"w_t = {w_t}")
    fig.update_layout(title=title, xaxis=dict(title="N (servers)"), yaxis=dict(title="AllReduce time (s)"),
                      margin=dict(t=50, b=10))
    return place_title(fig)


def factorization_figure(rows: list[dict], title: str = "HCPS factorizations: memory against incast") -> go.Figure:
    """One marker per factorization (dicts with plan, delta, epsilon, total, steps): x = delta seconds,
    y = epsilon seconds, colour = total; the cheapest is ringed."""
    fig = go.Figure(go.Scatter(
        x=[r["delta"] for r in rows], y=[r["epsilon"] for r in rows], mode="markers+text",
        text=[r["plan"] for r in rows], textposition="top center",
        marker=dict(size=12, color=[r["total"] for r in rows], colorscale="Viridis", showscale=True,
                    colorbar=dict(title="total s")),
        customdata=[[r["total"], r["steps"]] for r in rows],
        hovertemplate="%{text}<br>δ %{x:.4g} s, ε %{y:.4g} s<br>total %{customdata[0]:.4g} s, "
                      "%{customdata[1]} steps<extra></extra>", name="factorizations"))
    if rows:
        best = min(rows, key=lambda r: r["total"])
        fig.add_trace(go.Scatter(x=[best["delta"]], y=[best["epsilon"]], mode="markers", name=f"best: {best['plan']}",
                                 marker=dict(size=22, color="rgba(0,0,0,0)", line=dict(width=2, color="red"))))
    fig.update_layout(title=title, xaxis=dict(title="δ memory term (s)"), yaxis=dict(title="ε incast term (s)"),
                      margin=dict(t=50, b=10))
    return place_title(fig)


def tree_layout(tree) -> dict[str, tuple[float, float]]:
    """Servers evenly spaced at y = 0 in depth-first order; every switch above the middle of its servers, one
    level higher than its highest child."""
    pos: dict[str, tuple[float, float]] = {}

    def walk(v, counter):
        if v.is_server:
            pos[v.name] = (float(counter[0]), 0.0)
            counter[0] += 1
            return 0
        h = 1 + max(walk(c, counter) for c in v.children)
        xs = [pos[c.name][0] for c in v.children]
        pos[v.name] = ((min(xs) + max(xs)) / 2, float(h))
        return h

    walk(tree.root, [0])
    return pos


def tree_figure(tree, labels: dict[str, str] | None = None, title: str | None = None) -> go.Figure:
    """The tree with edges parent-child; switches labelled with ``labels[name]`` (e.g. their GenTree plan) and
    coloured by tier."""
    labels = labels or {}
    pos = tree_layout(tree)
    ex, ey = [], []
    for v in tree.nodes:
        for c in v.children:
            ex += [pos[v.name][0], pos[c.name][0], None]
            ey += [pos[v.name][1], pos[c.name][1], None]
    fig = go.Figure(go.Scatter(x=ex, y=ey, mode="lines", line=dict(color="#bbb", width=1), hoverinfo="skip",
                               showlegend=False))
    servers = [v for v in tree.nodes if v.is_server]
    fig.add_trace(go.Scatter(x=[pos[v.name][0] for v in servers], y=[0.0] * len(servers), mode="markers",
                             marker=dict(size=6 if len(servers) > 64 else 10, color="#1f77b4"), name="servers",
                             text=[v.name for v in servers], hovertemplate="%{text}<extra>server</extra>"))
    colors = {"middle_sw": "#ff7f0e", "root_sw": "#2ca02c", "cross_dc": "#d62728"}
    for tier, color in colors.items():
        sws = [v for v in tree.switches if v.tier == tier]
        if not sws:
            continue
        fig.add_trace(go.Scatter(
            x=[pos[v.name][0] for v in sws], y=[pos[v.name][1] for v in sws], mode="markers+text",
            marker=dict(size=16, color=color, symbol="square"), name=tier,
            text=[labels.get(v.name, "") for v in sws], textposition="top center",
            customdata=[[v.name, v.servers] for v in sws],
            hovertemplate="%{customdata[0]} (%{customdata[1]} servers)<br>%{text}<extra>" + tier + "</extra>"))
    fig.update_layout(title=title or f"{tree.name} ({tree.n} servers)", showlegend=True,
                      xaxis=dict(visible=False), yaxis=dict(visible=False), margin=dict(t=50, b=10),
                      height=420)
    return place_title(fig)


def comparison_figure(times: dict[str, float], title: str = "AllReduce time: GenTree and flat baselines") -> go.Figure:
    """Bars of ``times`` (name -> seconds), GenTree highlighted; hover shows the speed-up over GenTree. The time
    axis is linear from zero, so bar heights compare as the times do."""
    names = list(times)
    base = times.get("GenTree")
    colors = ["#2ca02c" if n == "GenTree" else "#7f7f7f" for n in names]
    fig = go.Figure(go.Bar(x=names, y=[times[n] for n in names], marker_color=colors,
                           customdata=[times[n] / base if base else None for n in names],
                           text=[f"{times[n]:.3g} s" for n in names], textposition="outside",
                           hovertemplate="%{x}: %{y:.4g} s (%{customdata:.2f}x GenTree)<extra></extra>"))
    top = max(times.values(), default=1.0)
    fig.update_layout(title=title, yaxis=dict(title="AllReduce time (s)", range=[0, 1.15 * top]),
                      margin=dict(t=50, b=10))
    return place_title(fig)


def fit_figure(measured: list[float], fitted: list[float], labels: list[str]) -> go.Figure:
    """Measured against fitted times with the diagonal."""
    lo, hi = min(measured + fitted), max(measured + fitted)
    fig = go.Figure(go.Scatter(x=measured, y=fitted, mode="markers", text=labels, name="runs",
                               hovertemplate="%{text}<br>measured %{x:.4g} s, fitted %{y:.4g} s<extra></extra>"))
    fig.add_trace(go.Scatter(x=[lo, hi], y=[lo, hi], mode="lines", line=dict(dash="dash", color="#888"),
                             name="fitted = measured"))
    fig.update_layout(title="Fit: measured against GenModel", xaxis=dict(title="measured (s)", type="log"),
                      yaxis=dict(title="fitted (s)", type="log"), margin=dict(t=50, b=10))
    return place_title(fig)
