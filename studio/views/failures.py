"""The Failures page's work and figures (issue 42): the job that analyses every failure set in a child process
(``analyse_job``, for ``studio.jobs.run``), the CDF of algbw over the failure sets, the table of every set, and
the topology with what failed drawn in red. Pure functions of the rows: no Streamlit here."""
from __future__ import annotations

from typing import Callable, Sequence

import pandas as pd
import plotly.graph_objects as go

from studio.figures.titles import place_title
from studio.figures.topology import choose_layout, topology_figure
from studio.tables import blank_missing


OVER_HEALTHY = ("Above 100 %: the runtime model's algbw at M includes latency, so a schedule that pays fewer α "
                "(fewer steps or sends) at this size can run faster on the degraded fabric than the synthesizer's "
                "schedule on the healthy design, although the fabric itself lost bandwidth (the optimum, a "
                "bandwidth bound without α, only falls).")


def count_text(sets: int, designs: int) -> str:
    """What one Run analyses, as the button and the progress both say it: every failure set and, once per
    design, the healthy design itself (the baseline each fraction divides by)."""
    return (f"{sets} failure set{'' if sets == 1 else 's'} + {designs} healthy design{'' if designs == 1 else 's'}")


def tasks_text(tasks: Sequence) -> str:
    """``count_text`` of ``tasks`` (``FailureTask``s; the healthy design is the task with nothing failed)."""
    healthy = sum(1 for t in tasks if not t.failed)
    return count_text(len(tasks) - healthy, healthy)


def kept_text(algo: str, bw: float, base: float) -> str:
    """"``algo`` keeps x % of its healthy algbw", with why where x is above 100 % (``OVER_HEALTHY``)."""
    share = bw / base
    text = f"{algo} keeps {share:.0%} of its healthy algbw"
    if share > 1.0 + 1e-9:
        text += (" (its healthy schedule pays more α at this size: the runtime model's algbw at M includes "
                 "latency)")
    return text


def analyse_job(tasks: Sequence, progress: Callable[[str, float], None] | None = None) -> list[dict]:
    """``solvers.failures.analyse`` of every task in turn, as ``studio.jobs.run`` calls it: the rows in the
    tasks' order; ``progress`` hears "i of n runs (s failure sets + d healthy designs)" after each, the count the
    page's Run button gives (``tasks_text``)."""
    from solvers import failures

    said = tasks_text(tasks)
    rows = []
    for i, task in enumerate(tasks):
        rows.append(failures.analyse(task))
        if progress is not None:
            progress(f"{i + 1} of {len(tasks)} runs ({said})", (i + 1) / len(tasks))
    return rows


def fraction(row: dict, healthy: dict, algo: str) -> float | None:
    """``algo``'s algbw on a failure set as a fraction of its algbw on the healthy design: 0 where the set
    disconnects the GPUs, None where it could not run (or no healthy algbw, or the set's worker was lost)."""
    bw, base = row.get(f"{algo}_algbw_GBps"), healthy.get(f"{algo}_algbw_GBps")
    if not base:                         # no fraction of nothing (as ``summarize_rows``)
        return None
    if row.get("connected") is False:
        return 0.0
    if row.get("connected") is None or bw is None:
        return None
    return float(bw) / float(base)


def cdf_figure(results: dict[str, tuple[dict, list[dict]]], algos: Sequence[str], collective: str, title: str
               ) -> go.Figure:
    """The CDF of algbw as a fraction of the healthy design's over the failure sets, one step line per design x
    synthesizer (``results``: design -> (healthy row, failure rows)); disconnected sets count at 0, sets a
    synthesizer could not run are left out of its line."""
    fig = go.Figure()
    top = 1.0
    for design, (healthy, rows) in results.items():
        for algo in algos:
            xs = sorted(x for x in (fraction(r, healthy, algo) for r in rows) if x is not None)
            if not xs:
                continue
            n = len(xs)
            top = max(top, xs[-1])
            fig.add_trace(go.Scatter(
                x=[0.0] + xs, y=[0.0] + [(i + 1) / n for i in range(n)], mode="lines+markers", line_shape="hv",
                marker=dict(size=4), name=f"{design} · {algo}",
                hovertemplate="%{x:.1%} of healthy: %{y:.0%} of sets at or below<extra>" + f"{design} · {algo}"
                              + "</extra>"))
    fig.update_layout(
        xaxis=dict(title=f"{collective} algbw as a fraction of the healthy design's", range=[0, top * 1.05],
                   tickformat=".0%", rangemode="tozero"),
        yaxis=dict(title="share of failure sets at or below", range=[0, 1.02], tickformat=".0%"),
        height=460, margin=dict(l=10, r=10, t=40, b=10), legend=dict(orientation="h", y=-0.2))
    return place_title(fig, title)


def sets_table(results: dict[str, tuple[dict, list[dict]]], algos: Sequence[str]) -> pd.DataFrame:
    """One row per failure set of every design: the design, what failed, whether the GPUs stay connected, the
    optimum, and per synthesizer its algbw and its fraction of the healthy algbw; missing cells as dashes."""
    out = []
    for design, (healthy, rows) in results.items():
        for r in rows:
            line = {"design": design, "failed": r.get("failed"), "connected": r.get("connected"),
                    "cut off": r.get("cut_off") or None, "optimum (GB/s)": r.get("optimum_algbw_GBps")}
            for algo in algos:
                line[f"{algo} algbw (GB/s)"] = r.get(f"{algo}_algbw_GBps")
                line[f"{algo} fraction"] = fraction(r, healthy, algo)
                if r.get("connected") and r.get(f"{algo}_status") not in (None, "ok"):
                    line[f"{algo} algbw (GB/s)"] = r.get(f"{algo}_status")
            line["as a design"] = r.get("expr") or r.get("error")
            out.append(line)
    return blank_missing(pd.DataFrame(out))


def summary_table(results: dict[str, tuple[dict, list[dict]]], algos: Sequence[str]) -> pd.DataFrame:
    """Per design x synthesizer (``solvers.failures.summarize_rows``): the sets, the share that disconnects, the
    healthy algbw, the median and worst fraction of it, and the worst set."""
    from solvers.failures import summarize_rows

    out = []
    for design, (healthy, rows) in results.items():
        s = summarize_rows(healthy, rows, algos)
        for algo in algos:
            v = s["per_synthesizer"][algo]
            out.append({"design": design, "synthesizer": algo, "sets": s["sets"], "disconnected": s["disconnected"],
                        "healthy algbw (GB/s)": v["healthy_algbw_GBps"], "median": v["median_algbw_fraction"],
                        "worst": v["worst_algbw_fraction"], "worst set": v["worst_failure"],
                        "could not run": v["not_ok"]})
    return blank_missing(pd.DataFrame(out))


def worst_row(healthy: dict, rows: Sequence[dict], algo: str) -> dict | None:
    """The failure set where ``algo`` keeps the least of its healthy algbw (a disconnecting one first)."""
    scored = [(x, i) for i, r in enumerate(rows) if (x := fraction(r, healthy, algo)) is not None]
    return rows[min(scored)[1]] if scored else None


def failed_figure(topo, kind: str, failed: Sequence[str], title: str) -> go.Figure:
    """The healthy design drawn with the failed elements in red: failed links (and every link of a failed node)
    as thick red lines over the grey fabric, failed nodes as red crosses."""
    from topologies.failures import elements

    by_name = {e.name: e for e in elements(topo, kind)}
    chosen = [by_name[n] for n in failed if n in by_name]
    nodes = sorted({v for e in chosen for v in e.nodes})
    gone = {i for e in chosen for i in e.links}
    gone |= {i for i, l in enumerate(topo.links) if l.src in nodes or l.dst in nodes}
    layout = choose_layout(topo)
    fig = topology_figure(topo, title, link_weight={i: 1.0 for i in gone} or None, weight_label="failed",
                          layout=layout)
    if nodes:
        pos = layout[1]
        fig.add_trace(go.Scatter(x=[pos[v][0] for v in nodes], y=[pos[v][1] for v in nodes], mode="markers",
                                 marker=dict(size=26, color="#d62728", symbol="x"), name="failed",
                                 hovertext=[f"{topo.names[v]} failed" for v in nodes], hoverinfo="text"))
    return fig
