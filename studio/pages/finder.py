"""The Finder page: the Pareto frontier of (steps, tb_factor) designs for N nodes of degree d, priced for the
sidebar workload by the runtime model of each design's verified schedule (up to
``solvers.directconnect.pricing.RUNTIME_MAX_NODES`` nodes; the papers' step model beside it, and alone above), with
the recommended design one click from Compose and Schedule; and a sweep of the best step-model time against N
(direct-connect §5.4, A.3, Fig. 7)."""
from __future__ import annotations

import pandas as pd
import streamlit as st

from solvers.core.errors import NotApplicable
from solvers.directconnect.finder import EXPANSION_FAMILIES, SEED_FAMILIES, Finder, bound, diameter_of, sweep
from solvers.directconnect.pricing import (RUNTIME_MAX_NODES, RUNTIME_MODEL, STEP_MODEL, DesignModel, design_model,
                                           price, runtime_priced)
from solvers.directconnect.selection import COLLECTIVES, SizeMix, alltoall_time_us, best_index, step_model_mix_us
from solvers.runtime import Workload
from studio import navigation, workload
from studio.figures.curves import frontier_figure, sweep_figure
from studio.messages import for_page
from studio.tables import blank_missing
from studio.widgets import safe_stem
from topologies.display import math_name
from topologies.model import TopologyError

MAX_ALLTOALL_NODES = 256
DEFAULT_N = 64
SEARCH_AT_ONCE = 256           # a frontier up to this many nodes is found as soon as N is set; larger ones on request
MAX_SWEEP_POINTS = 400
MAX_LP_NODES = 64


@st.cache_resource(show_spinner=False)
def _finder(exclude: tuple[str, ...]) -> Finder:
    return Finder(exclude)


@st.cache_data(show_spinner=False, max_entries=64)
def _frontier(n: int, d: int, bidirectional: bool, exclude: tuple[str, ...]) -> list[dict]:
    """The frontier's rows as the page shows them: each name as math (``topologies.display.math_name``; the
    expression stays the machine text every button and price key uses)."""
    rows = []
    for c in _finder(exclude).frontier(n, d, bidirectional):
        rows.append({**c.as_dict(), "name": math_name(c.name), "diameter": diameter_of(c)})
    return rows


@st.cache_resource(show_spinner=False, max_entries=32)
def _design_model(expr: str, collective: str, algo: str) -> DesignModel:
    return design_model(expr, collective, algo)


@st.cache_data(show_spinner=False, max_entries=1024)
def _price(row: dict, collective: str, mix: SizeMix, prices: tuple) -> dict:
    """One frontier row's price (``pricing.price``), cached by design, collective and workload (``prices``: the
    key of the sidebar's ``solvers.runtime.Workload``, whose prices every page uses)."""
    p = price(row, collective, mix, model_of=_design_model, work=Workload(*prices))
    return {"time": p.time_us, "model": p.model, "step": p.step_model_us, "runtime": p.runtime_us, "algo": p.algo}


def _price_rows(rows: list[dict], collective: str, mix: SizeMix, work) -> None:
    """Add each row's prices (keys 'time', 'model', 'step', 'runtime', 'algo'), with a progress bar while the
    runtime model builds the schedules."""
    bar = st.progress(0.0, text="building the schedules for the runtime model …") \
        if runtime_priced(rows[0]["nodes"], collective) else None
    for i, r in enumerate(rows):
        if bar is not None:
            bar.progress(i / len(rows), text=f"runtime model: building and timing {r['name']} ({i + 1} of {len(rows)})")
        key = {k: r[k] for k in ("expr", "nodes", "steps", "tb_factor")}
        r.update(_price(key, collective, mix, work.runtime.key))
    if bar is not None:
        bar.empty()


@st.cache_data(show_spinner=False, max_entries=8)
def _mcf_lp(expr: str) -> str:
    from solvers.directconnect.alltoall import mcf_model
    from solvers.directconnect.bfb_lp import write_lp
    from topologies import parse_topology

    return write_lp(mcf_model(parse_topology(expr)))


@st.cache_data(show_spinner=False, max_entries=256)
def _mcf(expr: str) -> tuple[float, float]:
    from solvers.directconnect.alltoall import mcf_rate
    from topologies import parse_topology

    result = mcf_rate(parse_topology(expr))
    return result.f, result.seconds


def parse_sizes(text: str) -> SizeMix:
    """'1e6, 4e6:3, 64e6' -> sizes in bytes with optional ':weight' (default 1). Numbers only, never eval."""
    sizes, weights = [], []
    for part in text.replace(";", ",").split(","):
        part = part.strip()
        if not part:
            continue
        size, _, weight = part.partition(":")
        try:
            sizes.append(float(size))
            weights.append(float(weight) if weight.strip() else 1.0)
        except ValueError:
            raise ValueError(f"'{part}' is not a size in bytes (optionally ':weight'), e.g. 1e6:2") from None
    return SizeMix.of(sizes, weights)


def _workload_mix(work) -> tuple[SizeMix, str]:
    choice = st.radio("Message sizes", ["the sidebar's M", "a distribution"], horizontal=True, key="f_mix")
    if choice == "the sidebar's M":
        return SizeMix.single(work.total_bytes), f"M = {work.total_bytes:.4g} bytes"
    text = st.text_input("Sizes in bytes, each with an optional :weight", value="2.6e7:4, 1e6:10, 1e8",
                         key="f_sizes", help="For example DDP buckets of 25 MiB four times as often as a 100 MB "
                                              "layer: 2.6e7:4, 1e8. Costs are summed with these weights.")
    mix = parse_sizes(text)
    return mix, f"{len(mix.sizes)} sizes, weighted"


def _open_buttons(row: dict) -> None:
    c1, c2, c3 = st.columns(3)
    if c1.button("Open in Compose", key="f_open_compose", icon=":material/hub:"):
        st.session_state.update(expr=row["expr"], design_expr=row["expr"])
        st.switch_page(navigation.COMPOSE, query_params={"expr": row["expr"]})
    algo = row.get("algo") or "expansion"        # the synthesizer whose schedule the runtime model timed
    if c2.button(f"Schedule it ({algo} allreduce)", key="f_open_schedule", icon=":material/schedule:",
                 help="Opens the Schedule page, which builds and verifies this schedule behind a progress bar, "
                      "then times it (about a minute at 1024 nodes)."):
        st.session_state.update(design_expr=row["expr"], algo=algo, coll="allreduce")
        st.switch_page(navigation.SCHEDULE, query_params={"expr": row["expr"], "algo": algo, "coll": "allreduce"})
    if row["nodes"] <= MAX_LP_NODES:
        stem = safe_stem(row["expr"], 60)
        c3.download_button("All-to-all LP (3) as .lp", lambda: _mcf_lp(row["expr"]), file_name=f"mcf_{stem}.lp",
                           mime="text/plain", key="f_lp", on_click="ignore",
                           help="The multi-commodity-flow LP of App. A.5 as the Pyomo model writes it (CPLEX LP).")
    else:
        c3.caption(f"The all-to-all LP file is offered up to {MAX_LP_NODES} nodes (it grows as N² × links).")


def _runtime_bound(diameter: int, n: int, collective: str, mix: SizeMix, work) -> float | None:
    """The runtime model's bound on any design of the frontier (``solvers.runtime.bounds.design_bound_us``), in
    the sidebar's uniform or calibrated prices; None with the links' own prices."""
    if work.runtime.prices == "links":
        return None
    from solvers.runtime.bounds import design_bound_us

    return design_bound_us(diameter, n, collective, mix.sizes, mix.weights, work.alpha_us, work.bandwidth_gbs)


def _headline(row: dict, collective: str, mix_text: str, work, model: str, step_bound: float,
              runtime_bound: float | None) -> str:
    """The recommendation with both models named (issue 59, finding 9): up to ``RUNTIME_MAX_NODES`` nodes the
    runtime model's time and the step model's beside it, above only the step model's, so that two sizes are
    compared on the step model, the one figure every N has."""
    head = (f"Recommended for {collective} ({mix_text}, {work.price_label}), priced by the {model}: "
            f"**{row['name']}**, {row['time']:.1f} µs")
    if model == RUNTIME_MODEL:
        ratio = f" ({row['time'] / runtime_bound:.3f}× the runtime-model bound)" if runtime_bound else ""
        return (f"{head}{ratio}; {STEP_MODEL} {row['step']:.1f} µs ({row['step'] / step_bound:.3f}× its bound), "
                f"the figure every N has: above {RUNTIME_MAX_NODES} nodes the Finder prices by the step model "
                "alone.")
    return (f"{head} ({row['time'] / step_bound:.3f}× the bound). The runtime model is built up to "
            f"{RUNTIME_MAX_NODES} nodes: compare this with a smaller N's {STEP_MODEL} figure, not its runtime one.")


def _frontier_view(work) -> None:
    c1, c2, c3, c4 = st.columns([1, 1, 2, 3])
    n = int(c1.number_input("N, nodes", min_value=2, max_value=4096, value=DEFAULT_N, step=1, key="f_n"))
    d = int(c2.number_input("d, degree", min_value=1, max_value=64, value=4, step=1, key="f_d"))
    kind = c3.radio("Topologies", ["directed", "bidirectional"], horizontal=True, key="f_kind",
                    help="Bidirectional: every link has its reverse (A.6 turns a reverse-symmetric directed design "
                         "of degree d/2 into one).")
    exclude = tuple(c4.multiselect("Leave out", list(SEED_FAMILIES + EXPANSION_FAMILIES), key="f_exclude",
                                   help="Base families or expansions the search may not use; leaving out "
                                        "circulant reproduces the paper's Table 7 at N = 128 and 512."))
    c1, c2 = st.columns([1, 3])
    collective = c1.selectbox("Collective", COLLECTIVES, key="f_coll")
    with c2:
        try:
            mix, mix_text = _workload_mix(work)
        except ValueError as exc:
            st.error(str(exc))
            return
    if not _search_requested((n, d, kind, exclude)):
        return
    bar = st.progress(0.0, text=f"Searching the expansion chains for N = {n}, d = {d} ({kind})"
                                + (", measuring BFB on each design …" if n <= SEARCH_AT_ONCE else " …"))
    try:
        rows = _frontier(n, d, kind == "bidirectional", exclude)
    except (NotApplicable, TopologyError) as exc:
        st.error(for_page(exc))
        return
    finally:
        bar.empty()
    if not rows:
        st.warning(f"No {kind} design with {n} nodes of degree {d} is reachable from the base database "
                   "(try the other kind or a different degree).")
        return
    try:
        _price_rows(rows, collective, mix, work)
    except (NotApplicable, TopologyError) as exc:
        st.error(for_page(exc))
        return
    best = best_index([r["time"] for r in rows])
    model = rows[best]["model"]
    b_steps, b_tb = bound(n, d, kind == "bidirectional")
    bound_time = step_model_mix_us(b_steps, b_tb, work.alpha_us, mix, work.bandwidth_gbs, collective)
    st.plotly_chart(frontier_figure(rows, (b_steps, b_tb), best,
                                    title=f"Pareto frontier, N = {n}, d = {d} ({kind})"), key="frontier_chart")
    st.success(_headline(rows[best], collective, mix_text, work, model, bound_time,
                         _runtime_bound(b_steps, n, collective, mix, work)), icon=":material/star:")
    a2a = st.session_state.setdefault("f_a2a", {})
    runtime_column = model == RUNTIME_MODEL
    table = pd.DataFrame([{
        "": "★" if i == best else "", "design": r["name"], "steps": r["steps"], "tb_factor": r["tb_factor"],
        "tb exact": r["tb_exact"], "steps, tb of": r["schedule"], "diameter": r["diameter"],
        "BW-optimal": r["bw_optimal"],
        **({f"{collective} µs": round(r["runtime"], 2), "schedule": r["algo"]} if runtime_column else {}),
        "step model µs": round(r["step"], 2),
        "all-to-all µs": (round(alltoall_time_us(a2a[r["expr"]], n, d, work.total_bytes, work.bandwidth_gbs), 2)
                          if r["expr"] in a2a else None),
        "MCF f": a2a.get(r["expr"]), "how": r["code"], "expression": r["expr"]} for i, r in enumerate(rows)])
    st.dataframe(blank_missing(table), key="frontier_table", hide_index=True)
    if runtime_column:
        priced = (f"{collective} µs is the runtime model of each design's best verified schedule (the "
                  "expansion's or BFB's, column schedule; the Learn page describes the model), "
                  "and the star is its least; step model µs is the papers' steps × alpha + tb × M/B on the "
                  "theorems' steps and tb (doubled for allreduce), the paper's Table 4 comparison.")
    else:
        priced = (f"Priced by the {STEP_MODEL} only: steps × alpha + tb × M/B on the theorems' steps and tb "
                  f"(doubled for allreduce), the paper's Table 4 comparison; the runtime model builds and times "
                  f"the schedules up to {RUNTIME_MAX_NODES} nodes.")
    rt_bound = _runtime_bound(b_steps, n, collective, mix, work)
    in_runtime = (f"; in the runtime model, where a pipeline overlaps latency and bandwidth, the bound is the larger "
                  f"of the two, {rt_bound:.1f} µs" if rt_bound is not None else "")
    st.caption(f"Bound: {b_steps} steps (Moore), tb (N-1)/N = {float(b_tb):.6f}, {collective} {bound_time:.1f} µs "
               f"in the step model{in_runtime}. {priced} steps and tb are the expansion "
               "theorems' predictions, or BFB's run on the built graph where that does better (column 'steps, tb "
               "of', measured up to 256 nodes); the tests build and verify every frontier design up to 256 nodes "
               "against them.")
    missing = [r for r in rows if r["expr"] not in a2a]
    if missing and n <= MAX_ALLTOALL_NODES:
        if st.button(f"Compute all-to-all times ({len(missing)} MCF solves)", key="f_a2a_go"):
            bar = st.progress(0.0, text="all-to-all multi-commodity flow …")
            for i, r in enumerate(missing):
                try:
                    a2a[r["expr"]] = _mcf(r["expr"])[0]
                except (NotApplicable, TopologyError) as exc:
                    st.error(f"{r['name']}: {for_page(exc)}")
                    break
                bar.progress((i + 1) / len(missing), text=f"solved {r['name']}")
            st.rerun()
    elif missing:
        st.caption(f"All-to-all times are offered up to {MAX_ALLTOALL_NODES} nodes here; N = 1024 takes minutes "
                   "(use the CLI command alltoall).")
    # keyed by the frontier, so that a new frontier starts a new selector (on its recommendation): one kept
    # across frontiers held its old index and the browser its old label, which then named another design
    frontier_key = f"f_pick:{n}:{d}:{kind}:{','.join(exclude)}"
    choice = st.selectbox("Open a design", range(len(rows)), index=best, key=frontier_key,
                          format_func=lambda i: _design_label(rows[i]))
    _open_buttons(rows[choice])


def _design_label(row: dict) -> str:
    return f"{row['name']} ({row['steps']} steps, tb {row['tb_factor']:.4f})"


def _search_requested(target: tuple) -> bool:
    """Whether to find the frontier for ``target`` (N, d, kind, left out) now: at once up to ``SEARCH_AT_ONCE``
    nodes, above once the Find designs button was pressed for it (remembered while the target stays)."""
    n = target[0]
    if n <= SEARCH_AT_ONCE or st.session_state.get("f_asked") == target:
        return True
    if st.button(f"Find designs for N = {n}", key="f_find", type="primary", icon=":material/travel_explore:"):
        st.session_state["f_asked"] = target
        return True
    st.info(f"Frontiers above {SEARCH_AT_ONCE} nodes are found on request: press Find designs for N = {n}.",
            icon=":material/info:")
    return False


@st.cache_data(show_spinner=False, max_entries=16)
def _sweep(d: int, lo: int, hi: int, step: int, collective: str, alpha_us: float, total_bytes: float,
           bandwidth_gbs: float) -> dict:
    """``finder.sweep`` over N = lo, lo + step, ..., hi, shared by every session that asks the same: the page
    opens on one default sweep, and twenty sessions opening it at once each searched it in full (1.0 CPU s per
    Finder view, 72 % of it this search; Streamlit computes one key once while the others wait for it)."""
    return sweep(range(lo, hi + 1, step), d,
                 lambda s, tb: step_model_mix_us(s, tb, alpha_us, SizeMix.single(total_bytes), bandwidth_gbs,
                                                 collective), _finder(()))


def _sweep_view(work) -> None:
    st.markdown("The least time of several designs as N grows, for the sidebar workload, in the papers' step model "
                "(steps × alpha + tb × M/B on the theorems' steps and tb, the paper's Fig. 7; no schedule is built, "
                "so the sweep reaches 2000 nodes). Generalized Kautz values come from the table, so an N it lacks "
                "shows no generalized Kautz point.")
    c1, c2, c3, c4, c5 = st.columns(5)
    d = int(c1.number_input("d", min_value=1, max_value=64, value=4, key="s_d"))
    lo = int(c2.number_input("N from", min_value=2, max_value=2000, value=16, key="s_lo"))
    hi = int(c3.number_input("to", min_value=2, max_value=2000, value=1024, key="s_hi"))
    step = int(c4.number_input("step", min_value=1, max_value=2000, value=16, key="s_step"))
    collective = c5.selectbox("Collective", COLLECTIVES, key="s_coll")
    ns = list(range(lo, hi + 1, step))
    if not ns:
        st.error("The range is empty: 'N from' must not exceed 'to'.")
        return
    if len(ns) > MAX_SWEEP_POINTS:
        st.error(f"{len(ns)} points is too many for the page (limit {MAX_SWEEP_POINTS}); raise the step.")
        return
    with st.spinner(f"Searching every N from {lo} to {hi} …"):
        series = _sweep(d, lo, hi, step, collective, float(work.alpha_us), float(work.total_bytes),
                        float(work.bandwidth_gbs))
    st.plotly_chart(sweep_figure({sweep_label(k): [(n, t) for n, t, _ in v] for k, v in series.items()},
                                 ylabel=f"{collective} time, step model (µs)",
                                 title=f"Best {collective} time against N, d = {d} (step model)"),
                    key="sweep_chart")
    rows = [{"N": n, "design": sweep_label(label), "name": math_name(name), "step model µs": round(t, 2)}
            for label, pts in series.items() for n, t, name in pts]
    with st.expander("The points"):
        st.dataframe(pd.DataFrame(rows), key="sweep_table", hide_index=True)


def sweep_label(label: str) -> str:
    """A sweep series' label as the page shows it: ``finder.sweep``'s "generalized Kautz Π_{d,N}" has letters
    Unicode cannot subscript, so the family's name stands alone (the design at each N is in the points' table,
    as math); the others through ``math_name``."""
    return "generalized Kautz" if label.startswith("generalized Kautz") else math_name(label)


def render() -> None:
    st.title("Find a topology")
    work = workload.current()
    frontier_tab, sweep_tab = st.tabs(["Frontier for N and d", "Sweep over N"])
    with frontier_tab:
        _frontier_view(work)
    with sweep_tab:
        _sweep_view(work)
