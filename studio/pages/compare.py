"""The Compare page: every applicable synthesizer on several designs (catalogue picks, expressions, uploaded
files) and collectives, under one time budget, priced for the sidebar's workload: a table beside the lower bounds,
runtime against message size for all of them, and the fastest per message-size range (``solvers.compare``); below
them a benchmark log (nccl-tests / rccl-tests) of one design set beside its synthesizers' runtime model on prices
fitted to the log (``studio.views.measured``)."""
from __future__ import annotations

import hashlib

import pandas as pd
import streamlit as st

from solvers.compare import (BOUND, DEFAULT_BUDGET_S, EXPORT_MAX_TRANSFERS, OK, PLOT_SIZES, SIZES, CompareResult,
                             algorithm_order, compare)
from solvers.core.schedule import Collective
from solvers.runtime import Workload as Prices
from studio import workload
from studio.views import tenants as tenants_view
from studio.views import sweep as sweep_view
from studio.views import measured as measured_view
from studio.figures.compare import VIEWS, readable_table, runtime_figure
from studio.figures.images import render_images
from studio.uploads import read_topology
from studio.messages import for_page
from studio.design import current_or, is_import, line_key, load_design, load_expression
from studio.expander import lazy_expander
from topologies import TopologyError
from topologies.catalogue import BASES
from topologies.display import math_name

MAX_NODES = 1024
MAX_DESIGNS = 8
MAX_KEPT = 8                # results of this many input sets stay in the session
DEFAULT_EXPRS = "ring(8)\ngkautz(2,8)"
COLLECTIVES = [c.value for c in Collective.every() if c is not Collective.CUSTOM]
# the table's columns: row key -> header
# in reading order: what was run, its time and algbw, then how it got there; the long texts last
COLUMN_LABELS = {"name": "design", "collective": "collective", "algo": "algo", "time_us": "time (µs)",
                 "algbw_GBps": "algbw (GB/s)", "busbw_GBps": "busbw (GB/s)", "steps": "steps",
                 "tb_factor": "tb_factor (× M/B)", "status": "status", "verified": "verified", "N": "N",
                 "steps_lower_bound": "steps bound", "tb_lower_bound": "tb bound (× M/B)",
                 "synthesis_s": "synthesis (s)", "transfers": "transfers", "exportable": "MSCCL export",
                 "detail": "detail", "topology": "expression", "tb_factor_exact": "tb exact",
                 "tb_lower_bound_exact": "tb bound exact", "export_limits": "export: target and limits used"}
WHY_PX, WHY_CHARS_PER_LINE = 560, 80          # the "why" column's width and about how many characters a line holds
WRAP_ROW_PX = 68                               # three lines of text
MAX_TABLE_PX = 4200                            # sixty rows of three lines; more scroll inside the table
STATUS_COLORS = {"ok": "#e6f4ea", "bound": "#e8eefc", "not applicable": "#f1f1f1", "skipped": "#fff6dc",
                 "failed verification": "#fde7e7", "error": "#fde7e7"}


@st.cache_data(show_spinner=False, max_entries=64)
def _load_expr(expr: str):
    return load_expression(expr, MAX_NODES)


def _from_upload(upload):
    topo, digest = read_topology(upload)
    if topo.num_nodes > MAX_NODES:
        raise TopologyError(f"{upload.name} has {topo.num_nodes} nodes, above the Compare page's limit of "
                            f"{MAX_NODES}")
    return topo, f"file:{upload.name}:{digest[:16]}"


def _designs(exprs: list[str], uploads) -> list[tuple[str, object]]:
    """(key, topology) for every design that loads; one error line for each that does not."""
    out, seen = [], set()
    for expr in exprs:
        if expr in seen:
            continue
        seen.add(expr)
        try:
            key = line_key(expr)           # the current import, by its name (``studio.design``)
            out.append((expr, load_design(key, MAX_NODES) if is_import(key) else _load_expr(expr)))
        except TopologyError as exc:
            text = str(exc).splitlines()[0] if str(exc) else type(exc).__name__
            if "above the limit" in text:
                text = f"above the Compare page's limit of {MAX_NODES} nodes (the CLI's compare takes larger ones)"
            st.error(f"{expr}: {text}")
    for upload in uploads or []:
        try:
            topo, key = _from_upload(upload)
        except TopologyError as exc:
            st.error(for_page(exc))
            continue
        if key not in seen:
            seen.add(key)
            out.append((key, topo))
    if len(out) > MAX_DESIGNS:
        st.warning(f"{len(out)} designs: the first {MAX_DESIGNS} are compared.")
        out = out[:MAX_DESIGNS]
    return out


@st.cache_data(show_spinner=False, max_entries=16)
def _compare(keys: tuple[str, ...], collectives: tuple[str, ...], budget_s: float, algos: tuple[str, ...],
             prices: tuple, root: int | None, _topos) -> CompareResult:
    """``prices``: the key of the sidebar's ``solvers.runtime.Workload`` (M and its link prices); ``root``: the
    rank the rooted collectives start from or end at (None when none is chosen)."""
    bar = st.progress(0.0, text="Comparing …")

    def progress(label: str, fraction: float) -> None:
        bar.progress(min(max(fraction, 0.0), 1.0), text=f"{label} ({fraction:.0%})")
    try:
        return compare(list(_topos), list(collectives), budget_s=budget_s, algos=list(algos), progress=progress,
                       workload=Prices(*prices), root=root)
    finally:
        bar.empty()


def bytes_text(m: float) -> str:
    """A byte count rounded for reading: 571587.817 -> '572 KB' (decimal units, three significant digits)."""
    for unit, size in (("GB", 1e9), ("MB", 1e6), ("KB", 1e3)):
        if m >= size:
            return f"{m / size:.3g} {unit}"
    return f"{m:.3g} B"


def _style(frame: pd.DataFrame):
    def color(row):
        status = str(row["status"])
        tone = next((c for k, c in STATUS_COLORS.items() if status.startswith(k)), "")
        return [f"background-color: {tone}" if tone else ""] * len(row)
    return frame.style.apply(color, axis=1).format(precision=4, na_rep="")


def table(result: CompareResult) -> pd.DataFrame:
    """The rows as the page shows them (headers of COLUMN_LABELS)."""
    return result.to_frame()[list(COLUMN_LABELS)].rename(columns=COLUMN_LABELS)


def _inputs() -> tuple[list[str], list, list[str], list[str], float]:
    c1, c2 = st.columns([3, 2])
    with c1:
        picks = st.multiselect("Designs from the catalogue", list(BASES), key="cmp_bases",
                               format_func=lambda e: f"{e}: {math_name(BASES[e])}")
        text = st.text_area("Expressions, one per line", current_or(DEFAULT_EXPRS), key="cmp_exprs", height=110,
                            help="For example ring(64), gkautz(4,64), line(circulant(16,[3,4])), torus(4,4,4), "
                                 f"dgx1(); up to {MAX_NODES} nodes each, {MAX_DESIGNS} designs.")
        uploads = st.file_uploader("Topology files", type=["json", "graphml"], accept_multiple_files=True,
                                   key="cmp_uploads")
    with c2:
        colls = st.multiselect("Collectives", COLLECTIVES, default=["allreduce"], key="cmp_colls",
                               help="alltoall is solved by TE-CCL only (up to 16 nodes here).")
        algos = st.multiselect("Synthesizers", algorithm_order(), default=algorithm_order(), key="cmp_algos",
                               help="Run cheap ones first: baselines, shortest-path trees, expansions, BFB, TACOS, "
                                    "ForestColl, and TE-CCL (up to 16 compute nodes, with a time limit taken from "
                                    "what is left of the budget).")
        budget = st.slider("Time budget (s)", 0, 600, int(DEFAULT_BUDGET_S), step=5, key="cmp_budget",
                           help="All runs together; once spent, the rest are reported as 'skipped: budget'.")
        root = None
        if any(Collective(c).rooted for c in colls):
            root = int(st.number_input("Root rank (broadcast, reduce, gather, scatter)", 0, MAX_NODES - 1, 0,
                                       key="cmp_root", help="The same rank on every design; a rank beyond a "
                                       "design's GPUs is reported on that design's rows."))
    exprs = list(picks) + [line.strip() for line in text.splitlines() if line.strip()]
    return exprs, uploads, colls, algos, float(budget), root


def render() -> None:
    st.title("Compare synthesizers and designs")
    compare_tab, tenants_tab, sweep_tab = st.tabs(["Designs side by side", "Several collectives at once",
                                                   "Sweep on Dask"])
    with compare_tab:
        _compare_view()
    with tenants_tab:
        with lazy_expander("Tenants: several collectives that share one design (TACOS Table V, TE-CCL section 5)",
                           "ten_open") as box:
            if box:
                tenants_view.render()
    with sweep_tab:
        sweep_view.render()


def _compare_view() -> None:
    work = workload.current()
    exprs, uploads, colls, algos, budget, root = _inputs()
    designs = _designs(exprs, uploads)
    if not designs:
        st.info("Pick designs from the catalogue, type expressions or upload files.")
        return
    if not colls or not algos:
        st.info("Choose at least one collective and one synthesizer.")
        return
    key = (tuple(k for k, _ in designs), tuple(colls), budget, tuple(algos), work.runtime.key, root)
    results = st.session_state.setdefault("cmp_results", {})
    st.caption(f"{len(designs)} designs × {len(colls)} collectives × {len(algos)} synthesizers, priced for the "
               f"sidebar's workload: M = {work.total_bytes:.4g} bytes, {work.price_label}. Times are the runtime "
               "model's: each schedule run as a runtime runs it, pipelined over the best number of slices, with sends "
               "sharing links (Learn explains it); the Schedule page and the CLI give the same time for the same "
               "workload.")
    if work.cost_model != "alpha-beta":
        st.caption("The sidebar's GenModel prices one schedule at a time on the Schedule page; this comparison "
                   "shows the step model as its second figure.")
    if st.button("Run", key="cmp_run", type="primary", icon=":material/play_arrow:"):
        results.pop(key, None)
        while len(results) >= MAX_KEPT:          # the oldest runs go first
            results.pop(next(iter(results)))
        results[key] = _compare(*key, tuple(t for _, t in designs))
    result = results.get(key)
    if result is None:
        st.info("Press Run to compare" + (" (the inputs changed since the last run)." if results else "."))
    else:
        _show(result, key, colls)
    # a benchmark log beside one of the designs, with the synthesizers chosen above (TE-CCL left out: minutes)
    measured_view.panel("cmp_", [(k, lambda t=t: t) for k, t in designs], colls[0], algos)


def _show(result: CompareResult, key: tuple, colls: list[str]) -> None:
    rows = result.rows
    ok = sum(r["status"] == OK for r in rows)
    runs = sum(r["algo"] != BOUND for r in rows)
    skipped = sum(r["status"] == "skipped: budget" for r in rows)
    st.success(f"{ok} verified schedules from {runs} runs in {result.elapsed_s:.1f} s (budget {result.budget_s:g} s).",
               icon=":material/verified:")
    if skipped:
        st.warning(f"{skipped} runs were skipped when the budget ran out; raise it to run them.")
    frame = table(result)
    coll = colls[0]
    if len(colls) > 1:
        coll = st.selectbox("Collective in the figure", colls, key="cmp_plot_coll")
    curves = [c for c in result.curves(PLOT_SIZES) if c.collective == coll]
    winners = [w for w in result.winners() if w.collective == coll]
    c1, c2 = st.columns(2)
    metric = c1.radio("Plot", ["time", "algbw"], horizontal=True, key="cmp_plot_metric",
                      help="The runtime model's time, or algbw = M / time (as nccl-tests), against M.")
    view = c2.radio("Curves", list(VIEWS), format_func=VIEWS.get, horizontal=True, key="cmp_plot_view",
                    help="Fastest per design: one line per design through its fastest verified schedule at each "
                         "size, each point coloured by the synthesizer that reaches it. Every schedule: one line "
                         "per verified schedule (colour: synthesizer, dash: design).")
    fig = runtime_figure(curves, winners, metric=metric, view=view,
                         title=f"{coll}: runtime model {metric} against vector size ({VIEWS[view]}; bands: fastest)")
    st.plotly_chart(fig, key="cmp_chart")
    if winners:
        st.markdown("**Fastest per message-size range**")
        st.dataframe(pd.DataFrame([{"from": bytes_text(w.from_bytes), "to": bytes_text(w.to_bytes), "algo": w.algo,
                                    "design": math_name(w.name), "expression": w.topology,
                                    "ties (as fast)": ", ".join(w.ties)} for w in winners]),
                     key="cmp_winners", hide_index=True)
    st.markdown("**Every run beside the lower bound**")
    _, hidden = readable_table(frame)
    show_na = bool(hidden) and st.toggle(f"Show the {hidden} rows that do not apply", key="cmp_show_na",
                                         help="Synthesizers that cannot build this collective on this design "
                                              "(the 'why' column says what they need).")
    shown, _ = readable_table(frame, show_na)
    # a reason longer than its column wraps onto three lines (Streamlit wraps text in rows taller than 4 rem)
    row_px = WRAP_ROW_PX if shown["why"].astype(str).str.len().max() > WHY_CHARS_PER_LINE else 35
    st.dataframe(_style(shown), key="cmp_table", hide_index=True, row_height=row_px,
                 height=min(row_px * len(shown) + 38, MAX_TABLE_PX),
                 column_config={"status": st.column_config.TextColumn(width=110),
                                "why": st.column_config.TextColumn(width=WHY_PX,
                                                                   help="The reason behind the status"),
                                "detail": st.column_config.TextColumn(width="large")})
    st.caption(f"Curves from {SIZES[0]:.0e} to {SIZES[-1]:.0e} bytes, every point the runtime model's (pipelined "
               "over the best P, links shared); the black lines are each design's lower bound in the same prices: "
               "the largest bound we prove (ForestColl's cut bound (M/N)/x* for allgather and reduce-scatter, M over "
               "the smallest cut for allreduce, the per-GPU and volume bounds, the farthest alpha distance), named "
               "in the bound row's detail. Every 'ok' schedule "
               "passed the simulator; MSCCL export is tried up to "
               f"{EXPORT_MAX_TRANSFERS} transfers (blank: not tried). algbw = M / time and busbw as nccl-tests "
               "define them; step_model_us is the papers' steps × alpha + tb × M/B.")
    _downloads(frame, fig, key, coll)


def _downloads(frame: pd.DataFrame, fig, key: tuple, coll: str) -> None:
    st.markdown("**Downloads**")
    cols = st.columns(3)
    cols[0].download_button("Table CSV", frame.to_csv(index=False), file_name="compare.csv", mime="text/csv",
                            key="cmp_dl_csv", on_click="ignore")
    images = st.session_state.setdefault("cmp_images", {})
    stamp = hashlib.sha256(repr((key, coll)).encode()).hexdigest()[:16]
    if images.get("key") != stamp:
        cols[1].button("Render figure as PNG and SVG", key="cmp_render",
                       on_click=lambda: render_images(images, stamp, {"figure": fig}))
        if images.get("error"):
            st.error(images["error"])
    else:
        cols[1].download_button("Figure PNG", images["figure.png"], file_name=f"compare_{coll}.png",
                                mime="image/png", key="cmp_dl_png", on_click="ignore")
        cols[2].download_button("Figure SVG", images["figure.svg"], file_name=f"compare_{coll}.svg",
                                mime="image/svg+xml", key="cmp_dl_svg", on_click="ignore")
