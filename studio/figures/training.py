"""The Training page's work and figures (issue 57; the direct-connect paper's §8.4 and App. A.4): the job that
simulates one iteration on each design in a child process (``train_job``, for ``studio.jobs.run``), the breakdown
bars per design (the layout of Fig. 9: compute, exposed allreduce and all-to-all stacked, the ratio to the fastest
design beside each bar), the timeline of one iteration on its two streams (App. A.4 Fig. 16), and the tables.
Figures are plotly's JSON (``studio.figures.spec``), one colour per kind of bar. Pure functions: no Streamlit here.
"""
from __future__ import annotations

import json
import math
from typing import Callable, Sequence

import pandas as pd

from studio.figures.spec import FigureSpec
from studio.figures.titles import titled
from studio.tables import blank_missing

# one colour per kind: the breakdown's three segments and the timeline's bars share them where they mean the same
SEGMENTS = (("compute_ms", "compute", "#1f77b4"), ("allreduce_exposed_ms", "exposed allreduce", "#ff7f0e"),
            ("alltoall_ms", "all-to-all", "#d62728"))
KIND_COLORS = {"forward": "#1f77b4", "backward": "#6baed6", "allreduce": "#ff7f0e", "alltoall": "#d62728",
               "tp": "#9467bd", "pp": "#8c564b"}
KIND_NAMES = {"alltoall": "all-to-all", "tp": "TP allreduce", "pp": "PP send"}
STREAMS = ("compute", "tp", "comm")     # "tp": tp-dp's tensor-parallel lane (solvers.training.hybrid)
MAX_TIMELINE_BARS = 20000
MB = 2 ** 20
# the collectives a row of the per-collective table can open on the Schedule page, and the synthesizer that
# builds the one that has no synthesizer of its own (the all-to-all is priced by the MCF rate; of the registry's
# synthesizers only TE-CCL builds an all-to-all)
OPENABLE = ("allreduce", "alltoall")
ALLTOALL_ALGO = "teccl"


# ------------------------------------------------------------------------------------------------ the work
def train_one(expr: str, req: dict) -> dict:
    """One iteration of the request ``req`` on the design ``expr`` as ``Iteration.as_dict()``, the design named as
    it was typed. The design's priced collectives come from the results cache where it holds them
    (``solvers.training.design_prices``); the all-to-all LP is chosen as the CLI chooses it (``auto_mcf``: from
    256 nodes Frank-Wolfe under a time limit, its certified lower end used, the iteration's notes say so), so the
    page and ``train`` give the same number and share the cached prices. ``req``: model, profile (a list
    of ``Layer`` or None), parallel, gpu, bucket, efficiency, bytes_per_param, workload (a
    ``solvers.runtime.Workload``: alpha, B and the prices), runtime (allreduces by the runtime model), and
    optionally topologies (design line -> ``Topology``, for designs with no expression: an import)."""
    import solvers.training as training
    from solvers.training.pricing import auto_mcf
    from topologies.expression import parse_topology

    topo = req.get("topologies", {}).get(expr) or parse_topology(expr)      # an import travels as its topology
    ep = req["parallel"] == "ep"
    if ep:                                    # refused before the LP runs
        training.simulate.check_request(req["model"], req["profile"], topo.n)
    limit, method = auto_mcf(topo.n, None)
    prices = training.design_prices(topo, alltoall=ep, mcf_time_limit=limit, mcf_method=method)
    it = training.simulate_iteration(req["model"], topo, req["parallel"], req["gpu"], req["bucket"], req["profile"],
                                     req["workload"], req["efficiency"], req["bytes_per_param"],
                                     runtime=req["runtime"], prices=prices)
    out = it.as_dict()
    out["design"] = expr
    return out


def train_job(designs: Sequence[str], req: dict, progress: Callable[[str, float], None] | None = None
              ) -> list[dict]:
    """``train_one`` on every design in turn, as ``studio.jobs.run`` calls it, each with ``ratio_to_best`` (its
    iteration time over the fastest design's); ``progress`` hears which design is being priced."""
    out = []
    for i, expr in enumerate(designs):
        if progress is not None:
            progress(f"{expr} ({i + 1} of {len(designs)})", i / len(designs))
        out.append(train_one(expr, req))
    if progress is not None:
        progress(f"{len(designs)} of {len(designs)} designs", 1.0)
    return with_ratios(out)


def with_ratios(results: list[dict]) -> list[dict]:
    """``results`` with ``ratio_to_best``: each iteration time over the fastest's (the CLI's ``train`` does the
    same)."""
    best = min(r["iteration_ms"] for r in results)
    for r in results:
        r["ratio_to_best"] = r["iteration_ms"] / best if best > 0 else 1.0
    return results


# ------------------------------------------------------------------------------------------------ designs
def default_designs(expr: str, n: int | None = None) -> list[str]:
    """The page's designs before the user types any: ``expr`` (the session's current design), then the
    paper's ring baseline ShiftedRing (``shifted_ring(N)``) and the squarest 2-D torus ``torus(a,b)`` (a <= b,
    a >= 2) of the same N where they exist (Fig. 9 compares those with the best design). ``n``: the design's node
    count where ``expr`` is not an expression (an import's name)."""
    from topologies import TopologyError
    from topologies.expression import parse_topology

    out = [expr]
    if n is None:
        try:
            n = parse_topology(expr).n
        except (TopologyError, ValueError):
            return out
    factors = [a for a in range(2, math.isqrt(n) + 1) if n % a == 0]
    for cand in [f"shifted_ring({n})"] + ([f"torus({factors[-1]},{n // factors[-1]})"] if factors else []):
        try:
            parse_topology(cand)
        except (TopologyError, ValueError):
            continue
        if cand not in out:
            out.append(cand)
    return out


# ------------------------------------------------------------------------------------------------ figures
def segment_names(parallel: str) -> dict[str, str]:
    """The breakdown's segment names: the middle one is what is neither compute nor all-to-all, the exposed
    allreduce (dp, ep), the tensor-parallel allreduces (tp) or the pipeline's sends (pp)."""
    middle = {"tp": "exposed TP allreduce", "pp": "exposed PP sends"}.get(parallel, "exposed allreduce")
    return {key: (middle if key == "allreduce_exposed_ms" else name) for key, name, _ in SEGMENTS}


def breakdown_figure(results: Sequence[dict], title: str | None = None) -> FigureSpec:
    """Fig. 9's layout: one stacked bar per design, compute, the exposed allreduce and the all-to-all (ms; the
    three add up to the iteration time exactly, ``solvers.training.simulate``), with the ratio of its iteration
    time to the fastest design's above each bar."""
    designs = [r["design"] for r in results]
    names = segment_names(results[0]["parallel"] if results else "dp")
    data = []
    for key, _, color in SEGMENTS:
        data.append(dict(type="bar", name=names[key], x=designs, y=[r[key] for r in results],
                         marker=dict(color=color),
                         customdata=[[r["iteration_ms"], r[key] / r["iteration_ms"] if r["iteration_ms"] else 0.0]
                                     for r in results],
                         hovertemplate="%{x}<br>" + names[key] + ": %{y:.4g} ms (%{customdata[1]:.1%} of "
                                       "%{customdata[0]:.4g} ms)<extra></extra>"))
    top = max((r["iteration_ms"] for r in results), default=1.0) or 1.0
    notes = [dict(x=r["design"], y=r["iteration_ms"], text=f"×{r.get('ratio_to_best', 1.0):.2f}"
                  + (" (fastest)" if r.get("ratio_to_best", 1.0) == 1.0 else ""), showarrow=False,
                  yanchor="bottom", yshift=4, font=dict(size=13)) for r in results]
    head = results[0] if results else {"model": "", "parallel": "", "gpu": ""}
    layout = dict(title=title or f"One iteration of {head['model']} ({head['parallel']}, {head['gpu']}) per design: "
                                 "compute, exposed allreduce and all-to-all; × the fastest design's time above "
                                 "each bar",
                  barmode="stack", annotations=notes, height=460, plot_bgcolor="white",
                  xaxis=dict(title=dict(text="design"), type="category", automargin=True),
                  yaxis=dict(title=dict(text="time per iteration (ms)"), range=[0, top * 1.12], rangemode="tozero",
                             automargin=True, gridcolor="#e5e5e5"),
                  margin=dict(l=10, r=10, t=40, b=10), legend=dict(orientation="h", y=-0.2, traceorder="normal"))
    return FigureSpec(data, titled(layout))


def _bytes_text(nbytes) -> str:
    if not nbytes:
        return ""
    return f"{nbytes / MB:.4g} MB ({nbytes:,.0f} bytes)"


def timeline_figure(result: dict, max_bars: int = MAX_TIMELINE_BARS) -> FigureSpec:
    """App. A.4 Fig. 16: the iteration on its two streams, compute and communication, one horizontal bar per
    event from its start to its end, coloured by kind (forward, backward, allreduce, all-to-all, TP, PP); hover
    names the layer or bucket and the bytes moved. At most ``max_bars`` bars (the earliest)."""
    events = sorted(result["timeline"], key=lambda e: (e["start_ms"], e["stream"]))
    shown = events[:max_bars]
    data = []
    for kind, color in KIND_COLORS.items():
        rows = [e for e in shown if e["kind"] == kind]
        if not rows:
            continue
        name = KIND_NAMES.get(kind, kind)
        data.append(dict(type="bar", orientation="h", name=name, y=[e["stream"] for e in rows],
                         base=[e["start_ms"] for e in rows], x=[e["end_ms"] - e["start_ms"] for e in rows],
                         marker=dict(color=color, line=dict(width=0.5, color="white")),
                         customdata=[[e["label"], _bytes_text(e.get("bytes")), e["start_ms"], e["end_ms"]]
                                     for e in rows],
                         hovertemplate="%{customdata[0]}<br>%{customdata[2]:.4g} → %{customdata[3]:.4g} ms"
                                       "<br>%{customdata[1]}<extra>" + name + "</extra>"))
    cut = f" (the first {max_bars:,} of {len(events):,} bars)" if len(events) > max_bars else ""
    layout = dict(title=f"One iteration of {result['model']} on {result['design']}: the compute and communication "
                        f"streams over {result['iteration_ms']:.4g} ms{cut}",
                  barmode="overlay", height=300, plot_bgcolor="white", bargap=0.35,
                  xaxis=dict(title=dict(text="time (ms)"), range=[0, result["iteration_ms"] * 1.01 or 1.0],
                             rangemode="tozero", automargin=True, gridcolor="#e5e5e5"),
                  yaxis=dict(title=dict(text="stream"), type="category", categoryorder="array",
                             categoryarray=[k for k in reversed(STREAMS) if any(e["stream"] == k for e in events)],
                             automargin=True),
                  margin=dict(l=10, r=10, t=40, b=10), legend=dict(orientation="h", y=-0.35))
    return FigureSpec(data, titled(layout))


# ------------------------------------------------------------------------------------------------ tables
def _bucket(b) -> str | None:
    if b is None:
        return None
    return f"{b / MB:g} MB" if b < 1024 * MB else f"{b / (1024 * MB):g} GB"


def summary_table(results: Sequence[dict]) -> pd.DataFrame:
    """One row per design: nodes, the breakdown (ms), the all-to-all's share, the bucket and the ratio to the
    fastest design."""
    rows = [{"design": r["design"], "nodes": r["nodes"], "iteration (ms)": r["iteration_ms"],
             "compute (ms)": r["compute_ms"], "exposed allreduce (ms)": r["allreduce_exposed_ms"],
             "all-to-all (ms)": r["alltoall_ms"], "all-to-all share": r["alltoall_share"],
             "bucket": _bucket(r["bucket_bytes"]), "× fastest": r.get("ratio_to_best")} for r in results]
    return blank_missing(pd.DataFrame(rows))


def collective_rows(result: dict) -> list[dict]:
    """The design's per-collective rows (``CollectiveCost``) as the page shows them: collective, bytes, count,
    ms each, priced by, algo."""
    return [{"collective": c["collective"], "bytes": c["bytes"], "count": c["count"], "ms each": c["ms_each"],
             "priced by": c["priced_by"], "algo": c["algo"]} for c in result["collectives"]]


def collectives_table(result: dict) -> pd.DataFrame:
    return blank_missing(pd.DataFrame(collective_rows(result),
                                      columns=["collective", "bytes", "count", "ms each", "priced by", "algo"]))


def schedule_target(row: dict) -> tuple[str, str] | None:
    """(synthesizer, collective) that opens a per-collective row on the Schedule page, or None for a row that is
    no collective of the registry (a pipeline stage's send): an allreduce with the synthesizer that priced it,
    an all-to-all with TE-CCL (``ALLTOALL_ALGO``)."""
    coll = row["collective"]
    if coll not in OPENABLE:
        return None
    if coll == "alltoall":
        return ALLTOALL_ALGO, "alltoall"
    return (row["algo"], coll) if row.get("algo") else None


def schedule_bytes(row: dict, nodes: int) -> float:
    """The Schedule page's M for a per-collective row: an allreduce's buffer as it is; an all-to-all's row holds
    what one node sends, while a schedule's M is the whole vector of the N nodes' inputs (``solvers.core.schedule``:
    shard s, M/N bytes, is node s's input), so N times that."""
    return float(row["bytes"]) * (nodes if row["collective"] == "alltoall" else 1)


def results_json(request: dict, results: Sequence[dict]) -> str:
    """The run as JSON: the request (without the profile's layers) and every design's iteration, as the CLI's
    ``train --json --timeline`` gives them, with the fastest named."""
    best = min(results, key=lambda r: r["iteration_ms"])
    return json.dumps({"request": request, "best": best["design"], "results": list(results)}, indent=1, default=str)
