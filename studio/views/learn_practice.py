"""Learn's steps 6 to 9 (``studio.pages.learn``): how the studio times a schedule (the runtime model's Gantt chart),
your machine (an NCCL topology file imported, a benchmark log fitted), when links fail, and rooted collectives
with several sharing one fabric."""
from __future__ import annotations

import pandas as pd
import plotly.graph_objects as go
import streamlit as st

from solvers.core.cost import alpha_beta_us
from solvers.runtime import Execution, Workload
from solvers.synthesize import synthesize
from studio import workload
from studio.figures.timelines import gantt_figure
from studio.figures.titles import HALF_WIDTH_PX, place_title
from studio.figures.topology import topology_figure
from studio.figures.learn import size_curves_figure, survival_figure
from studio.metric_grid import metric_columns
from studio.tables import blank_missing
from topologies.expression import parse_topology
from studio.views.learn_common import (GANTT_EXAMPLES, GANTT_MAX_SLICES, GANTT_SLICES, MACHINE_LOG, MACHINE_XML,
                                       SURVIVAL_DESIGNS, built, fraction_text, header, open_schedule, schedule_model)


def step_runtime_model(work: workload.Workload) -> None:
    header(6)
    st.markdown(
        "Every time the studio shows for a built schedule comes from its **runtime model**, which runs the "
        "schedule as a runtime would. Everything one link carries in one step is one send. A send starts once the "
        "data it carries has arrived at its sender (a reduction waits for every partial sum it adds) and its link "
        "is free, and holds the link for alpha + bytes / bandwidth; with the sidebar's numbers every send from a "
        "GPU pays alpha, and the links are scaled so that a node's egress is B. Switches store and forward: a "
        "switch port is a link like any other, and a piece leaves the switch once it has fully arrived (with the "
        "sidebar's numbers, at no new alpha). The buffer is cut into P slices that follow each other through the schedule, as a runtime "
        "loops over a large buffer: slice k's step t runs in wave k + t and a link serves its sends in wave order, "
        "so one slice's late steps overlap the next slice's early ones. The model tries P = 1, 2, 4, ... and keeps "
        "the fastest. Not modelled: protocol overheads beyond alpha (NCCL's LL and LL128 flags and packing), "
        "congestion control, and GPU compute (reductions and copies are free, except that an export for RCCL, "
        "whose kernels reduce in a local step after each receive, is planned with that pass at 40 GB/s per "
        "copy); a link is either busy or free. "
        "The papers' step model, steps × alpha + tb_factor × M/B, makes every step wait for the slowest link of "
        "the step before and never pipelines; it is shown beside the model as a second figure.")
    c1, c2, c3 = st.columns([2, 2, 1])
    pick = c1.selectbox("Schedule", list(GANTT_EXAMPLES), format_func=GANTT_EXAMPLES.get, key="l_gantt_pick")
    p = c2.radio("P, slices of the buffer", GANTT_SLICES, horizontal=True, key="l_gantt_p",
                 format_func=lambda v: "the model's best" if v == "best" else str(v),
                 help=f"The model's best tries P = 1, 2, 4, ... up to {GANTT_MAX_SLICES} here (no slice below "
                      f"{Execution().min_slice_bytes / 1024:g} KiB); a number fixes P.")
    colour = c3.radio("Colour by", ["slice", "step"], horizontal=True, key="l_gantt_color")
    expr, algo, coll = pick.split("|")
    try:
        with st.spinner("Running the runtime model …"):
            r = built(expr, algo, coll)
            model = schedule_model(expr, algo, coll, work.runtime.key, None if p == "best" else int(p),
                                   GANTT_MAX_SLICES)
            run = model.run(work.total_bytes, record=True)
    except ValueError as exc:
        text = str(exc).splitlines()[0] if str(exc) else type(exc).__name__
        st.error(f"the runtime model cannot time {expr}: {text}")
        return
    step = alpha_beta_us(r.cost.steps, r.cost.tb_factor, work.total_bytes, work.alpha_us, work.bandwidth_gbs)
    cols = metric_columns(4)
    cols[0].metric("runtime model (µs)", f"{run.time_us:.4g}",
                   help=f"algbw {run.algbw_gbs:.4g} GB/s, busbw {run.busbw_gbs:.4g} GB/s")
    cols[1].metric("P, slices", run.slices)
    cols[2].metric("step model (µs)", f"{step:.4g}",
                   help=f"{r.cost.steps} steps × alpha + tb_factor {fraction_text(r.cost.tb_factor)} × M/B")
    cols[3].metric("busiest link", f"{max(run.utilisation().values(), default=0.0):.0%}",
                   help="busy time / completion time")
    st.plotly_chart(gantt_figure(r.topology, run.timeline, colour), key="l_gantt_chart")
    st.caption(f"One bar per send: {run.messages} sends per slice × P = {run.slices} = {len(run.timeline)}, for the "
               f"sidebar's M = {work.total_bytes:.4g} bytes ({work.price_label}). A gap on a link is the link waiting for data; slices that overlap are pipelining at work.")
    open_schedule(st, f"Schedule {algo} {coll} on {expr}", "l_gantt_open", expr, algo, coll)


@st.cache_data(show_spinner=False, max_entries=2)
def machine_numbers() -> dict:
    """Step 7's numbers: the sample NCCL topology imported, ForestColl on it and on ``dgx_a100(boxes=1)``."""
    from solvers.forestcoll import forestcoll
    from topologies.imports import read_import

    imported = read_import(MACHINE_XML)
    topo = imported.topology
    ours, paper = forestcoll(topo), forestcoll(parse_topology("dgx_a100(boxes=1)"))
    port = max(float(l.bandwidth) for l in topo.links)
    return {"gpus": topo.n, "switches": len(topo.switch_nodes), "port_gbs": port, "assumed": imported.assumed,
            "ours": float(ours.algbw), "paper": float(paper.algbw)}


@st.cache_data(show_spinner=False, max_entries=2)
def machine_fit() -> dict:
    """Step 7's calibration: the sample log fitted for NCCL's ring on biring(16) (``solvers.runtime.calibrate``)."""
    from solvers.runtime.calibrate import calibrate
    from solvers.runtime.measured import read_bench_log

    log = read_bench_log(MACHINE_LOG.read_bytes())
    r = built("biring(16)", "ring", "allreduce")
    fit = calibrate(r.topology, r.schedule, log, source=f"ring fit to {MACHINE_LOG.name}", detail=False)
    return {"alpha": fit.alpha_us, "bw": fit.bandwidth_gbs, "rms": fit.rms, "sizes": list(fit.sizes),
            "measured": list(fit.measured_us), "model": list(fit.model_us)}


def step_machine() -> None:
    header(7)
    st.markdown(
        "The people who export schedules have the machine. NCCL writes its own view of it to XML "
        "(`NCCL_TOPO_DUMP_FILE`), `nvidia-smi topo -m` and `rocm-smi --showtopo` print how the GPUs are joined, and "
        "nccl-tests prints the time it measured at every size. The studio reads all of them (Compose and Clusters "
        "take the files; the CLI takes their paths). An NCCL file becomes one compute node per GPU and one "
        "crossbar node per box for its NVSwitches, as NCCL itself folds them, each GPU's port as wide as its "
        f"NVLinks at NCCL's own figure for its generation. Here: `examples/{MACHINE_XML.name}`, written in "
        "NCCL's format for a DGX A100-like box (not a dump of a real machine).")
    try:
        with st.spinner("Importing the sample and running ForestColl …"):
            got = machine_numbers()
            fit = machine_fit()
    except (ValueError, OSError) as exc:
        st.error(f"the samples in examples/ cannot be read: {str(exc).splitlines()[0] if str(exc) else exc}")
        return
    cols = metric_columns(4)
    cols[0].metric("GPUs imported", got["gpus"], help=f"and {got['switches']} crossbar node(s)")
    cols[1].metric("NVLink per GPU (GB/s)", f"{got['port_gbs']:g}", help="12 NVLinks x 20 GB/s (sm 80)")
    cols[2].metric("ForestColl algbw (GB/s)", f"{got['ours']:.4g}", help="allgather, the flow model's optimum")
    cols[3].metric("on dgx_a100(boxes=1)", f"{got['paper']:.4g}",
                   help="the paper's model: 300 GB/s per GPU; the ratio is the ports' ratio")
    for line in got["assumed"]:
        st.caption(f"Assumed: {line}")
    st.markdown(
        f"The same ForestColl gives {got['ours']:.4g} GB/s here and {got['paper']:.4g} on the paper's model: "
        f"{got['ours'] / got['paper']:.3g} = {got['port_gbs']:g} / 300, the ratio of the GPUs' ports. Measured "
        f"times close the loop: `examples/{MACHINE_LOG.name}` is a 16-rank all_reduce log (synthetic, written "
        "from known prices with 3 % noise). Fitting the runtime model of NCCL's ring to it finds the prices "
        f"alpha = {fit['alpha']:.3g} µs and B = {fit['bw']:.3g} GB/s (relative error {fit['rms']:.1%} rms); "
        "`python -m studio calibrate LOG --topo EXPR -o prices.json` writes them as the price file the sidebar "
        "and every command take.")
    fig = size_curves_figure(
        fit["sizes"], {"measured (nccl-tests)": fit["measured"],
                       f"model, ring at alpha {fit['alpha']:.3g} µs, B {fit['bw']:.3g} GB/s": fit["model"]},
        title="The sample log and the calibrated model, ring allreduce on biring(16)")
    st.plotly_chart(fig, key="l_machine_chart")
    open_schedule(st, "Schedule ring allreduce on biring(16) (add the log under Measured)", "l_machine_open",
                   "biring(16)", "ring", "allreduce")


@st.cache_data(show_spinner=False, max_entries=2)
def survival_rows() -> list[dict]:
    """Step 8's numbers: per design its node and link connectivity, ForestColl's optimal allgather algbw healthy
    and after every single cable failure (``solvers.failures.analyse``: the worst kept), and how many of those
    failures leave it strongly connected."""
    from solvers.failures import FailureTask, analyse, connectivity, elements

    work = Workload().key
    rows = []
    for expr, label in SURVIVAL_DESIGNS.items():
        topo = parse_topology(expr)
        healthy = analyse(FailureTask(expr, "links", (), (), "allgather", work))
        cut = [analyse(FailureTask(expr, "links", (e.name,), (), "allgather", work)) for e in elements(topo, "links")]
        worst = min(cut, key=lambda r: r["optimum_algbw_GBps"] or 0.0)
        rows.append({"name": label, "expr": expr, **connectivity(topo), "cables": len(cut),
                     "connected": sum(1 for r in cut if r["connected"]), "healthy": healthy["optimum_algbw_GBps"],
                     "worst": worst["optimum_algbw_GBps"] or 0.0, "worst_expr": worst["expr"],
                     "worst_failed": worst["failed"]})
    return rows


@st.cache_data(show_spinner=False, max_entries=2)
def ring_after_a_cut() -> dict:
    """The ring on biring(8) with one cable cut: whether a ring is left, and BFB in its place."""
    from solvers.failures import FailureTask, analyse, elements

    cable = elements(parse_topology("biring(8)"), "links")[0].name
    healthy = analyse(FailureTask("biring(8)", "links", (), ("ring",), "allgather", Workload().key))
    row = analyse(FailureTask("biring(8)", "links", (cable,), ("ring", "bfb"), "allgather", Workload().key))
    return {"cable": cable, "expr": row["expr"], "ring": row["ring_status"], "why": row["ring_message"],
            "bfb_ok": row["bfb_status"] == "ok", "ring_algbw": row["ring_algbw_GBps"],
            "healthy_algbw": healthy["ring_algbw_GBps"]}


def step_failures() -> None:
    header(8)
    st.markdown(
        "Clusters run with dead links every day, so a design is also judged by how it degrades. A graph's *link "
        "connectivity* c is the fewest links whose loss disconnects it: any c - 1 cut cables leave every GPU able "
        "to reach every other. Circulants and generalized Kautz graphs of degree d have c = d, the most a degree "
        "allows, so they survive any d - 1 failures (a generalized Kautz graph with self-loops, such as "
        "gkautz(4,12), has less: a loop is a link that joins nothing). A ring has c = 2 counting both directions, and "
        "a single cut cable takes its ring away. ForestColl's optimal algbw is the bandwidth reference: the cable "
        "whose loss "
        "costs most is the design's worst case. All numbers below are computed live (`solvers.failures`, every "
        "single cable of each design cut in turn).")
    try:
        with st.spinner("Cutting every cable of four designs …"):
            rows = survival_rows()
            ring = ring_after_a_cut()
    except (ValueError, ArithmeticError) as exc:
        st.error(f"the failure analysis did not run: {str(exc).splitlines()[0] if str(exc) else exc}")
        return
    table = pd.DataFrame([{"design": f"{r['name']}: {r['expr']}", "link connectivity": r["link_connectivity"],
                           "node connectivity": r["node_connectivity"],
                           "single cuts that stay connected": f"{r['connected']} of {r['cables']}",
                           "worst cut": r["worst_failed"]} for r in rows])
    st.dataframe(blank_missing(table), hide_index=True, key="l_fail_table")
    st.plotly_chart(survival_figure(rows), key="l_fail_chart")
    if ring["ring"] != "ok":
        verdict = f"no ring is left ({ring['why'] or ring['ring']})"
    elif "no Hamiltonian" in (ring["why"] or ""):
        verdict = (f"no Hamiltonian ring is left, so the ring routes an edge the long way round, over several links: "
                   f"{ring['ring_algbw']:.3g} GB/s of algbw against {ring['healthy_algbw']:.3g} healthy")
    else:
        verdict = "a ring is still found"
    st.markdown(
        f"A ring on biring(8) with the cable {ring['cable']} cut: {verdict}. The "
        "data must then take the long way round the broken ring; BFB "
        + ("still builds a verified schedule on what is left. " if ring["bfb_ok"] else "cannot run either. ")
        + "Open it on the Schedule page, export included: the degraded fabric is the design "
        f"`{ring['expr']}`.")
    open_schedule(st, "Schedule BFB on biring(8) with one cable cut", "l_fail_open", ring["expr"], "bfb",
                   "allgather")


ROOTED_MESH = "mesh(6,6)"
ROOTED_ROOTS = {"0": "a corner", "2": "an edge (Table V's broadcast source)", "14": "near the centre"}
TABLE_V_TENANTS = [{"name": "broadcast from 2", "collective": "broadcast", "root": 2, "bytes": 1 << 20},
                   {"name": "reduce to 17", "collective": "reduce", "root": 17, "bytes": 1 << 20},
                   {"name": "allgather", "collective": "allgather", "bytes": 36 << 20}]


@st.cache_data(show_spinner=False, max_entries=8)
def rooted_rows(prices: tuple) -> list[dict]:
    """Step 9's table: per root of the 6x6 mesh its eccentricity, the one-chunk TACOS broadcast's steps and the
    runtime model's time for it and for a pipelined chain, at the workload's M."""
    from topologies.properties import eccentricity

    work = Workload(*prices)
    topo = parse_topology(ROOTED_MESH)
    rows = []
    for root, where in ROOTED_ROOTS.items():
        tacos = synthesize(topo, "tacos", f"broadcast@{root}", total_bytes=work.total_bytes)
        chain = synthesize(topo, "chain", f"broadcast@{root}")
        rows.append({"root": f"{root} ({where})", "eccentricity": eccentricity(topo, int(root)),
                     "TACOS steps": tacos.schedule.steps,
                     "TACOS one chunk (µs)": work.price_result(tacos).run.time_us,
                     "chain, 8 pieces (µs)": work.price_result(chain).run.time_us,
                     "bound (µs)": work.price_result(tacos).bound_us})
    return rows


@st.cache_data(show_spinner=False, max_entries=4)
def shared_mesh(prices: tuple) -> list[dict]:
    """Step 9's Table V run: the three tenants on the 6x6 mesh, TACOS's greedy jointly and apart and Direct; per
    tenant its finish with the others and alone."""
    import json

    from solvers.tenants import read_tenants, synthesize_tenants

    work = Workload(*prices)
    topo = parse_topology(ROOTED_MESH)
    tenants = read_tenants(json.dumps(TABLE_V_TENANTS))
    out = []
    for algo, mode in (("tacos", "joint"), ("tacos", "separate"), ("direct", "separate")):
        result = synthesize_tenants(topo, tenants, algo, mode, {}, work)
        out.append({"label": f"{algo} ({mode})", "makespan": result.makespan_us,
                    "rows": [(r.tenant.name, r.finish_us, r.alone_us) for r in result.rows]})
    return out


def step_rooted(work: workload.Workload) -> None:
    header(9)
    st.markdown(
        "NCCL's broadcast and reduce, and the gather and scatter of pipeline-parallel and inference jobs, have a "
        "**root**. On a mesh a broadcast of one chunk cannot reach the farthest GPU in fewer hops than the root's "
        "*eccentricity* (its largest distance to another GPU), and TACOS's greedy reaches exactly that: every GPU "
        "takes the chunk from a neighbour the step after the neighbour got it. A reduce is the same tree run "
        "backwards on the reversed links. One chunk is latency-optimal but moves the whole buffer hop by hop; cut "
        "into pieces that follow each other (a pipelined chain), the buffer streams, and large messages go faster "
        "though the chain has far more steps.")
    topo = parse_topology(ROOTED_MESH)
    root = st.radio("Root on the 6x6 mesh", list(ROOTED_ROOTS), key="l_root", horizontal=True,
                    format_func=lambda r: f"{r}: {ROOTED_ROOTS[r]}")
    try:
        rows = rooted_rows(work.runtime.key)
        tree = synthesize(topo, "tacos", f"broadcast@{root}", total_bytes=work.total_bytes).schedule
    except (ValueError, ArithmeticError) as exc:
        st.error(f"the broadcasts did not run: {str(exc).splitlines()[0] if str(exc) else exc}")
        return
    left, right = st.columns(2)
    with left:
        st.dataframe(pd.DataFrame(rows), hide_index=True, key="l_root_table")
        st.caption(f"Times for M = {work.total_bytes:.4g} bytes, {work.price_label}. The bound needs every GPU to "
                   "take in all of M and the farthest one to be reached.")
    first: dict[int, int] = {}
    for t in tree.transfers:
        first[t.link] = min(first.get(t.link, t.step), t.step)
    fig = topology_figure(topo, f"TACOS broadcast from {root}: the step each link carries the chunk",
                          link_weight=first, weight_label="step", width_px=HALF_WIDTH_PX)
    with right:
        st.plotly_chart(fig, key="l_root_tree")
    st.markdown(
        "**Three collectives at once.** TACOS's Table V runs a broadcast from GPU 2, a reduce to GPU 17 and an "
        "allgather together on the 6x6 mesh. The allgather alone needs 18 chunk times: a corner GPU takes in 35 "
        "chunks over 2 links. Synthesized *jointly*, the broadcast and reduce fit in the links the allgather "
        "leaves free and the makespan stays the allgather's; synthesized *apart* and laid over each other, their "
        "sends queue behind each other on shared links; Direct, a separate copy per destination on a shortest "
        "path, congests the mesh most. Each tenant's schedule is verified on its own; the runtime model times "
        "them together.")
    try:
        with st.spinner("Three collectives on the 6x6 mesh …"):
            runs = shared_mesh(work.runtime.key)
    except (ValueError, ArithmeticError) as exc:
        st.error(f"the tenants did not run: {str(exc).splitlines()[0] if str(exc) else exc}")
        return
    fig = go.Figure()
    for run in runs:
        fig.add_bar(name=f"{run['label']}: makespan {run['makespan']:.4g} µs", x=[r[0] for r in run["rows"]],
                    y=[r[1] for r in run["rows"]],
                    hovertext=[f"alone {r[2]:.4g} µs" for r in run["rows"]])
    fig.update_layout(barmode="group", yaxis_title="finish with the others (µs)", yaxis_rangemode="tozero",
                      height=360)
    place_title(fig, "Each tenant's finish on the shared 6x6 mesh")
    st.plotly_chart(fig, key="l_tenants_chart")
    base = runs[0]["makespan"]
    st.caption(" · ".join(f"{r['label']} {r['makespan'] / base:.2f}" for r in runs)
               + " (makespans normalized to the joint greedy's). Compare's 'Several collectives at once' tab adds "
                 "the ILP, TACCL-like and TE-CCL.")
    open_schedule(st, "Schedule a broadcast on the 6x6 mesh", "l_root_open", ROOTED_MESH, "tacos", "broadcast")


