"""The Clusters page: build or upload a switched fabric, run ForestColl on it, and see the bottleneck cut, the trees
of one root, throughput against a fixed k, the allreduce LP of App. E beside RS+AG (solved on request), and the
MSCCL export (ForestColl, arXiv:2402.06787); or run TE-CCL on it with the Schedule page's knobs and result panel
(``studio.views.teccl``)."""
from __future__ import annotations

from types import SimpleNamespace

import pandas as pd
import plotly.graph_objects as go
import streamlit as st

from solvers.core.errors import NotApplicable, ScheduleError
from solvers.forestcoll import MAX_FIXED_K, collective_schedule, forestcoll
from solvers.forestcoll.search import fabric, fixed_k_algbw
from solvers.core.schedule import Collective
from solvers.core.verify import verify
from studio import workload
from studio.views import teccl as teccl_view
from studio.jobs import JobError
from studio.metric_grid import metric_columns
from studio.tables import blank_missing
from studio.widgets import (cache_note, cancel_slot, export_panel, nccl_graph_expander, rooted_collective,
                            runtime_metrics)
from studio.figures.topology import MAX_DRAWN_NODES, choose_layout, topology_figure
from studio.pages.compose import _from_upload, show_import
from studio.design import current_or, line_key, load_design, load_expression
from studio.messages import for_page
from topologies.display import math_name
from topologies import TopologyError

MAX_CLUSTER_GPUS = 256
MAX_SCAN_K = 8
# The result views. A keyed control rather than st.tabs: the chosen view is session state, so a rerun (the k
# scan finishing, a new root) stays on it, and only that view is computed.
VIEWS = ("Bottleneck cut", "Trees", "k vs throughput", "Allreduce LP", "Export")
BUILDERS = {
    "DGX A100 boxes": ("dgx_a100(boxes={a})", "boxes", 2, None),
    "MI250 clusters (16 GPUs)": ("mi250(clusters={a})", "clusters", 2, None),
    "MI250 clusters (8 GPUs: the 8+8 setting)": ("mi250(clusters={a},gpus_per_cluster=8)", "clusters", 2, None),
    "two-level cluster (Fig. 2)": ("cluster({a},{b},10,1)", "boxes", 2, "GPUs per box"),
    "fat-tree": ("fat_tree({a})", "k (even)", 4, None),
}


def _source() -> tuple[object, str] | None:
    """(topology, identity) from the builder, an expression or an upload; None after showing an error."""
    current = current_or(None)      # the session's design (``studio.design``), offered first when there is one
    how = st.radio("Fabric", (["current"] if current else []) + ["build", "expression", "upload"], horizontal=True,
                   key="c_source", format_func=lambda c: f"current design: {current}" if c == "current" else c)
    try:
        if how == "current":
            key = line_key(current)
            return load_design(key), key
        if how == "build":
            c1, c2, c3 = st.columns([2, 1, 1])
            family = c1.selectbox("Family", list(BUILDERS), key="c_family")
            pattern, label, default, second = BUILDERS[family]
            a = c2.number_input(label, min_value=1, max_value=256, value=default, step=1, key="c_a")
            b = c3.number_input(second, min_value=1, max_value=64, value=4, step=1, key="c_b") if second else 0
            expr = pattern.format(a=int(a), b=int(b))
        elif how == "expression":
            expr = st.text_input("Expression", value="dgx_a100(boxes=2)", key="c_expr",
                                 help="Any expression, e.g. cluster(4,8,300,25) or mi250(clusters=2)")
        else:
            upload = st.file_uploader("A topology file (.json or .graphml) with compute and switch nodes, or "
                                      "your machine's: NCCL topology XML (one file per box makes a multi-box "
                                      "fabric), nvidia-smi topo -m or rocm-smi --showtopo as .txt",
                                      type=["json", "graphml", "xml", "txt"], key="c_upload",
                                      accept_multiple_files=True)
            if not upload:
                st.info("Upload a topology file, or build one.")
                return None
            topo, _, digest, imported = _from_upload(upload)
            show_import(imported)
            return topo, f"upload:{digest}"
        topo = load_expression(expr)
    except (TopologyError, ValueError) as exc:
        st.error(for_page(exc))
        return None
    return topo, expr


def _run(topo, key: str, fixed_k: int | None):
    """The forest for (fabric, k), kept in the session; its allgather verified before anything is shown."""
    cache = st.session_state.setdefault("c_forests", {})
    if (key, fixed_k) in cache:
        return cache[(key, fixed_k)]
    bar = st.progress(0.0, text="ForestColl")

    def progress(phase: str, fraction: float) -> None:
        bar.progress(min(max(fraction, 0.0), 1.0), text=f"ForestColl: {phase}")

    forest = forestcoll(topo, fixed_k, progress=progress)
    bar.progress(1.0, text="verifying the allgather")
    verify(topo, forest.allgather()).raise_if_failed()
    bar.empty()
    cache[(key, fixed_k)] = forest
    return forest


def _runtime(topo, forest, key: str, fixed_k: int | None) -> None:
    """The runtime model's figures of the forest's allgather for the sidebar's workload (the ones Compare, the
    Schedule page and the CLI show); its message graph is kept in the session with the forest."""
    from solvers.core.cost import cost
    from solvers.runtime import Model

    models = st.session_state.setdefault("c_models", {})
    if (key, fixed_k) not in models:
        while len(models) >= 4:
            models.pop(next(iter(models)))
        schedule = forest.allgather()
        models[(key, fixed_k)] = (Model(topo, schedule), cost(topo, schedule))
    model, costs = models[(key, fixed_k)]
    runtime_metrics(SimpleNamespace(topology=topo, schedule=model.schedule, cost=costs), workload.current(), model)


def _summary(forest) -> None:
    st.markdown("**ForestColl's own figures (its flow model)**")
    c = metric_columns(5)
    c[0].metric("best algbw (GB/s)", f"{float(forest.optimal_algbw):.2f}",
                help="The optimal allgather algbw, N·x*: no allgather schedule on this fabric can beat it "
                     "(ForestColl eq. (1))")
    c[1].metric("forest algbw (GB/s)", f"{float(forest.algbw):.2f}",
                help="This forest's allgather algbw, N·k/U in the flow model")
    c[2].metric("1/x* (s/GB)", str(forest.inv_x_star),
                help="the bottleneck cut's GPUs over the bandwidth leaving it: seconds per GB of each GPU's shard")
    c[3].metric("k (trees per root)", forest.k)
    c[4].metric("U (s/GB)", str(forest.u), help="the allgather takes (M/(N k))·U seconds for M in GB")
    seconds = ", ".join(f"{name} {t:.2f} s" for name, t in forest.seconds.items())
    st.caption(f"{forest.trees} trees in {len(forest.batches)} batches; switch removal: {forest.logical.method}; "
               f"packing: {forest.packing_method}; {seconds}. Allgather verified by the simulator.")


def units_note(topo, forest, work) -> str:
    """Why the runtime model's algbw and ForestColl's differ, with the numbers (issue 59, finding 9): ForestColl's
    N x* is on the fabric's declared link speeds in its flow model (no alpha, M -> infinity); the runtime model
    prices with ``work`` (a ``solvers.runtime.Workload``): uniform or calibrated prices scale every link by
    B / (the slowest GPU's declared egress), and every send pays alpha."""
    from solvers.core.cost import node_bandwidth
    from solvers.runtime.bounds import tightest_bound

    declared = node_bandwidth(topo)
    scale = 1.0 if work.prices == "links" else work.bandwidth_gbs / float(declared)
    best = float(forest.optimal_algbw)
    speeds = sorted({l.bandwidth for l in topo.links if l.src != l.dst})
    shown = ", ".join(f"{float(b):g}" for b in speeds[:4]) + (" …" if len(speeds) > 4 else "")
    priced = ", ".join(f"{float(b) * scale:.4g}" for b in speeds[:4]) + (" …" if len(speeds) > 4 else "")
    m = work.total_bytes
    bound = tightest_bound(topo, "allgather", m, work.execution).time_us
    ceiling = f"{m / bound / 1e3:.4g} GB/s" if bound > 0 else "unbounded"
    if work.prices == "links":
        prices = (f"the runtime model prices with the fabric's own links (the same {shown} GB/s), so the optimum is "
                  f"the same {best:.2f} GB/s")
    else:
        prices = (f"the runtime model prices with {work.price_label}: every link is scaled by B / (the slowest GPU's "
                  f"declared egress, {float(declared):g} GB/s) = {work.bandwidth_gbs:g}/{float(declared):g} = "
                  f"{scale:.4g}, so the links run at {priced} GB/s and the same optimum is {best * scale:.4g} GB/s")
    return (f"Why the two algbw differ: ForestColl's best algbw {best:.2f} GB/s is N·x* on the links' declared "
            f"speeds ({shown} GB/s) in its flow model, with no alpha and M growing without end; {prices}. At M = "
            f"{m:.4g} bytes every send also pays its alpha, so no allgather beats {ceiling} (the bound, "
            f"{bound:.4g} µs) and the runtime model's algbw above is M / its time.")


def _cut_figure(topo, forest) -> go.Figure:
    side = forest.bottleneck
    crossing = {i: float(l.bandwidth) for i, l in enumerate(topo.links) if l.src in side and l.dst not in side}
    b = forest.bottleneck_summary()
    title = (f"Bottleneck cut: {len(b['compute'])} GPUs inside, {float(b['egress_GBps']):g} GB/s out "
             f"(ratio {b['ratio']} s/GB)")
    return topology_figure(topo, title, link_weight=crossing, weight_label="GB/s leaving the cut",
                           layout=choose_layout(topo))


def _tree_figure(topo, forest, root: int) -> go.Figure:
    loads: dict[int, float] = {}
    for t in forest.allgather().transfers:
        if t.shard == root:
            loads[t.link] = loads.get(t.link, 0.0) + float(t.hi - t.lo)
    return topology_figure(topo, f"The {forest.k} tree(s) of {topo.names[root]}: share of its shard per link",
                           link_weight=loads, weight_label="shard fraction", layout=choose_layout(topo))


def _scan(topo, key: str) -> None:
    cache = st.session_state.setdefault("c_scans", {})
    if key not in cache:
        fab = fabric(topo)
        bar = st.progress(0.0, text="fixed-k searches")
        rows = []
        for k in range(1, MAX_SCAN_K + 1):
            algbw = fixed_k_algbw(fab, k)
            rows.append({"k (trees per root)": k, "algbw (GB/s)": float(algbw), "U (s/GB)": str(topo.n * k / algbw)})
            bar.progress(k / MAX_SCAN_K, text=f"fixed k = {k}")
        bar.empty()
        cache[key] = rows


def _scan_figure(rows, optimum: float) -> go.Figure:
    fig = go.Figure(go.Scatter(x=[r["k (trees per root)"] for r in rows], y=[r["algbw (GB/s)"] for r in rows],
                               mode="lines+markers",
                               name="best schedule with k trees per root"))
    fig.add_hline(y=optimum, line_dash="dash", annotation_text=f"optimum {optimum:.2f} GB/s")
    fig.update_layout(title="Allgather algbw against k (Algorithm 3; not monotone in k)", xaxis=dict(title="k", dtick=1),
                      yaxis=dict(title="algbw (GB/s)"), height=380)
    return fig


def _export(topo, forest, key: str) -> None:
    coll = st.selectbox("Collective", [c.value for c in Collective], key="c_coll", persist_state="page")

    def build():
        sched = collective_schedule(topo, Collective(coll), forest=forest)
        verify(topo, sched).raise_if_failed()
        return sched

    export_panel(topo, build, "c_", f"forestcoll {coll} {topo.name or topo.expr}", f"forestcoll_{coll}",
                 request=(key, coll))
    nccl_graph_expander(topo, "c_")


def _allreduce_lp(topo, key: str) -> None:
    """ForestColl's allreduce LP (App. E) on the fabric, solved on request: its rate and every GPU's root share
    beside RS+AG's N x*/2 (``studio.cli.allreduce_lp.lp_report``, the CLI's ``allreduce-lp``)."""
    from solvers.directconnect.allreduce_lp import LP_TIME_LIMIT_S, MAX_VARIABLES, model_size

    size = model_size(topo, "source")
    st.caption(f"The LP lets every GPU root its own share of the allreduce and splits every link between the "
               f"reduce and the broadcast trees; RS+AG is its point with equal shares and halves (N·x*/2). "
               f"The paper found the LP never above RS+AG. This fabric's LP has {size:,} variables (at most "
               f"{MAX_VARIABLES:,}); HiGHS gets {LP_TIME_LIMIT_S} s.")
    done = st.session_state.setdefault("c_lps", {})
    if st.button("Solve the allreduce LP", key="c_lp_solve"):
        from studio.cli.allreduce_lp import lp_report

        try:
            with st.spinner("HiGHS is solving LP (6)"):
                done[key] = lp_report(topo)
        except (NotApplicable, ValueError) as exc:
            st.error(for_page(exc))
            return
    out = done.get(key)
    if out is None:
        return
    c = metric_columns(2)
    c[0].metric("LP rate (GB/s)", f"{out['lp_rate_GBps']:.2f}",
                help="the sum of the roots' rates x_v: the allreduce of M bytes takes M / this")
    c[1].metric("RS+AG rate (GB/s)", f"{out['rs_ag_rate_GBps']:.2f}",
                help="N·x*/2, what ForestColl's allreduce (reduce-scatter then allgather) reaches")
    total = out["lp_rate_GBps"]
    st.dataframe(pd.DataFrame([{"GPU": name, "x_v (GB/s)": share * total, "share of M": share}
                               for name, share in out["root_shares"].items()]), hide_index=True)
    st.caption(f"LP / RS+AG = {out['lp_over_rs_ag']:.6f}; {out['roots']} GPUs root a positive share (the LP's "
               f"optimum need not be unique). {out['variables']:,} variables, {out['constraints']:,} constraints, "
               f"{out['seconds']:.1f} s ({out['status']}).")


def _teccl(topo, key: str) -> None:
    """TE-CCL on the fabric: the shared knobs and result panel, and a compact MSCCL export."""
    work = workload.current()
    coll = st.selectbox("Collective", teccl_view.COLLECTIVES, key="ct_coll")
    coll = rooted_collective([topo.names[v] for v in topo.compute_nodes], coll, st, "ct_root")
    options = teccl_view.knobs("ct_", coll)
    if options is None:
        return
    slot = cancel_slot("ct_solve", (key, coll, options, work.total_bytes), f"TE-CCL {coll} on {math_name(topo.name or key)}")
    if slot is None:
        return
    try:
        solved = teccl_view.cached_solve(key, coll, options, work.total_bytes, lambda: topo)
    except (NotApplicable, ScheduleError, ValueError, JobError) as exc:
        slot.empty()
        st.error(f"TE-CCL: {for_page(exc)}")
        return
    slot.empty()
    cache_note(solved, "ct")
    result, found = solved.result, solved.result.detail
    layout = choose_layout(topo) if topo.num_nodes <= MAX_DRAWN_NODES else None
    teccl_view.panel(result, found, "ct_", work.total_bytes, layout=layout)
    with st.expander("Export to MSCCL XML (validated and simulated before download)"):
        export_panel(topo, result.schedule, "ct_", f"teccl {coll} {topo.name or topo.expr}", f"teccl_{coll}",
                     request=(key, coll, options, work.total_bytes))


def render() -> None:
    st.title("Clusters")
    st.caption("ForestColl on switched and mixed-bandwidth fabrics: the throughput optimum, the cut that limits it, "
               "and spanning-tree schedules that reach it (Zhao et al., ForestColl); or TE-CCL's time-expanded flow "
               "(Liu et al.).")
    got = _source()
    if got is None:
        return
    topo, key = got
    if topo.n > MAX_CLUSTER_GPUS:
        st.error(f"{topo.n} GPUs is above this page's limit of {MAX_CLUSTER_GPUS}; use the CLI "
                 "(python -m studio forestcoll) for larger fabrics.")
        return
    if st.radio("Algorithm", ["ForestColl", "TE-CCL"], horizontal=True, key="c_algo",
                help="ForestColl: throughput-optimal spanning trees. TE-CCL: a time-expanded flow over epochs, "
                     "any demand (alltoall and demand matrices too).") == "TE-CCL":
        _teccl(topo, key)
        return
    mode = st.radio("Trees per root", ["optimal k", "fixed k"], horizontal=True, key="c_mode",
                    help="The optimal k can be large (83 on 2 x 16 MI250); a small fixed k is easier to run.")
    fixed_k = int(st.number_input("k", min_value=1, max_value=MAX_FIXED_K, value=1, step=1, key="c_k")) \
        if mode == "fixed k" else None
    try:
        forest = _run(topo, key, fixed_k)
    except (NotApplicable, ValueError) as exc:
        st.error(str(exc).splitlines()[0])
        return
    st.markdown("**The allgather of these trees in the runtime model**")
    _runtime(topo, forest, key, fixed_k)
    _summary(forest)
    st.caption(units_note(topo, forest, workload.current().runtime))
    view = st.segmented_control("View", VIEWS, default=VIEWS[0], required=True, key="c_view", persist_state="page",
                                label_visibility="collapsed") or VIEWS[0]
    if view == "Bottleneck cut":
        b = forest.bottleneck_summary()
        if topo.num_nodes <= 512:
            st.plotly_chart(_cut_figure(topo, forest), key="c_cut_fig", width="stretch")
        st.markdown(f"**Outside the cut:** {', '.join(b['outside'][:24])}"
                    + (" …" if len(b["outside"]) > 24 else ""))
    elif view == "Trees":
        names = [topo.names[v] for v in topo.compute_nodes]
        root_name = st.selectbox("Root", names, key="c_root", persist_state="page")
        root = topo.index(root_name)
        batches = [bt for bt in forest.batches if bt.root == root]
        table = pd.DataFrame([{"batch": i, "trees": bt.mult, "edges": len(bt.edges),
                               "first edges": ", ".join(f"{topo.names[x]}→{topo.names[y]}" for x, y in bt.edges[:6])}
                              for i, bt in enumerate(batches)])
        st.dataframe(blank_missing(table), hide_index=True)
        if topo.num_nodes <= 512:
            st.plotly_chart(_tree_figure(topo, forest, root), key="c_tree_fig", width="stretch")
    elif view == "k vs throughput":
        if st.button(f"Scan k = 1..{MAX_SCAN_K}", key="c_scan"):
            try:
                _scan(topo, key)
            except NotApplicable as exc:
                st.error(str(exc).splitlines()[0])
        rows = st.session_state.get("c_scans", {}).get(key)
        if rows:
            st.plotly_chart(_scan_figure(rows, float(forest.optimal_algbw)), key="c_scan_fig", width="stretch")
            st.dataframe(blank_missing(pd.DataFrame(rows)), hide_index=True)
    elif view == "Allreduce LP":
        _allreduce_lp(topo, key)
    else:
        _export(topo, forest, f"{key}|{fixed_k}")
