"""The Schedule page: synthesize a collective on the composed topology, verified, and see why it costs what it
costs: steps and tb_factor against their bounds; the runtime model's time, algbw, busbw and pipelining depth P
for the sidebar's workload, beside its lower bound and the papers' step model; time and algbw against vector
size; per-step link loads and the model's link utilisation; the links busy at a chosen step, and one source's
broadcast tree.

The design is the session's current one (``studio.design.current_design``: an expression, or a machine imported on
Compose, named after its file on the page and in every download), or ``?expr=`` from a link. The synthesizer is
the link's ``?algo=`` or the user's choice; else BFB, replaced where it does not apply by the first synthesizer in
registry order that schedules the design (``_first_applicable``). ``algo`` and ``coll`` are kept in the URL too, and for
broadcast, reduce, gather and scatter the ``root`` (``root_choice``; the solvers get ``coll@root``). TE-CCL
(``teccl``) has its own knobs, collectives (alltoall and custom demands too) and result panel with an
epoch-by-epoch view (``studio.views.teccl``); TACOS (``tacos``) has its knobs, the time beside the ingress bound,
a per-link Gantt chart and the ILP comparison (``studio.views.tacos``). Under the choices, an expander sets an
nccl-tests / rccl-tests log (uploaded, or the sample) beside every applicable synthesizer's runtime model on prices
fitted to it (``studio.views.measured``).
"""
from __future__ import annotations

import json
from dataclasses import dataclass
from functools import partial

import streamlit as st

from solvers.core.cost import alpha_beta_us, link_loads, self_loop_tb_bound
from solvers.core.errors import NotApplicable, ScheduleError
from solvers.core.schedule import Collective
from solvers.runtime import Model, Workload as Prices
from solvers.runtime.bounds import bound_terms
from solvers.synthesize import ALGORITHMS
from studio import workload
from studio.figures import charts
from studio.views import measured as measured_view
from studio.views import teccl as teccl_view
from studio.views import tacos as tacos_view
from studio.jobs import JobError
from studio.metric_grid import metric_columns
from studio.expander import lazy_expander
from studio.widgets import (Solved, cache_note, cancel_slot, export_panel, nccl_graph_expander, option_controls,
                            rooted_collective, synthesize_with_bar)
from studio.figures.curves import runtime_curve
from studio.figures.images import render_images
from studio.figures.timelines import load_heatmap, utilisation_heatmap
from studio.figures.titles import HALF_WIDTH_PX
from studio.figures.topology import MAX_DRAWN_NODES, choose_layout, topology_figure
from studio.messages import for_page
from studio.design import (IMPORT_PREFIX, adopt_import, current_design, design_stem, is_import, load_design as load,
                           safe_stem)
from topologies.display import math_name
from topologies import TopologyError
from topologies.expression import DEFAULT_MAX_NODES

MAX_DOWNLOAD_TRANSFERS = 200_000
MAX_MODEL_TRANSFERS = 8_000_000         # the runtime model's message graph takes a few seconds per million transfers
SIZES = tuple(10.0 ** (3 + k / 4) for k in range(29))       # 1 KB to 10 GB, four points a decade


@st.cache_resource(show_spinner=False, max_entries=16)
def _solved(expr: str, algo: str, collective: str, options: tuple = (), total_bytes: float | None = None) -> Solved:
    """``options``: the synthesizer's options as sorted (name, value) pairs (hashable, for the cache);
    ``total_bytes``: M where the synthesizer's schedule depends on it (``sized_bytes``), else None. From the
    results cache, or solved in a child process that a Cancel or Stop ends (``studio.widgets.synthesize_with_bar``)."""
    return synthesize_with_bar("Synthesizing", load(expr), algo, collective, dict(options), total_bytes)


@st.cache_data(show_spinner=False, max_entries=64)
def _uses_bytes(expr: str, algo: str) -> bool:
    return ALGORITHMS[algo].uses_bytes(load(expr))


def sized_bytes(expr: str, algo: str, work) -> float | None:
    """The M a synthesis is asked with: the workload's where the schedule depends on it, as every door does
    (``solvers.synthesize.bytes_for``), so that changing M re-solves only those."""
    return work.total_bytes if _uses_bytes(expr, algo) else None


def _synthesize(expr: str, algo: str, collective: str, options: tuple = (), total_bytes: float | None = None):
    return _solved(expr, algo, collective, options, total_bytes).result


@st.cache_resource(show_spinner=False, max_entries=16)
def _model(expr: str, algo: str, collective: str, options: tuple = (), total_bytes: float | None = None) -> Model:
    """The runtime model of the synthesized schedule at the links' own prices (its message graph, built once)."""
    result = _synthesize(expr, algo, collective, options, total_bytes)
    return Model(result.topology, result.schedule)


@st.cache_resource(show_spinner=False, max_entries=32)
def _priced(expr: str, algo: str, collective: str, options: tuple, total_bytes, prices: tuple) -> Model:
    """The same model priced by the workload whose ``key`` is ``prices`` (``solvers.runtime.Workload``)."""
    return _model(expr, algo, collective, options, total_bytes).with_execution(Prices(*prices).execution)


@st.cache_data(show_spinner=False, max_entries=32)
def _curve(expr: str, algo: str, collective: str, options: tuple, total_bytes, prices: tuple):
    """(times, slices, bounds) at ``SIZES``: the model's best time and its P, and the tightest bound
    (``solvers.runtime.bounds``: the largest of its terms, each alpha + a slope x M, at every size)."""
    model = _priced(expr, algo, collective, options, total_bytes, prices)
    times, slices = model.times(SIZES)
    terms = bound_terms(model.topo, model.schedule.collective, model.execution, model.schedule.root)
    bounds = [terms.at(m).time_us for m in SIZES]
    return [float(t) for t in times], [int(p) for p in slices], bounds


@st.cache_data(show_spinner=False, max_entries=16)
def _loads(expr: str, algo: str, collective: str, options: tuple = (), total_bytes: float | None = None):
    schedule = _synthesize(expr, algo, collective, options, total_bytes).schedule
    return {step: dict(per_link) for step, per_link in link_loads(schedule).items()}


@st.cache_data(show_spinner=False, max_entries=16)
def _ranks(expr: str) -> list[str]:
    """The compute nodes' names of the design, in rank order (a rooted collective's root is one of them)."""
    topo = load(expr)
    return [topo.names[v] for v in topo.compute_nodes]


def root_choice(expr: str, coll: str, where, key: str = "root") -> str:
    """``coll`` as the solvers take it (``widgets.rooted_collective``), the root among the design's GPUs kept in
    the URL."""
    if not Collective(coll).rooted:
        return coll
    try:
        ranks = _ranks(expr)
    except (TopologyError, ValueError):
        return coll
    return rooted_collective(ranks, coll, where, key, url=True)


def _said(coll: str) -> str:
    """``broadcast@3`` as a page says it: 'broadcast from 3'."""
    name, _, root = coll.partition("@")
    if not root:
        return name.replace("_", "-")
    return f"{name} {'from' if name in ('broadcast', 'scatter') else 'to'} {root}"


@st.cache_data(show_spinner=False, max_entries=8)
def _layout(expr: str):
    return choose_layout(load(expr))


def _schedule_json(result) -> str:
    topo, s = result.topology, result.schedule
    return json.dumps({
        "topology": topo.expr, "collective": s.collective.value, "algo": s.algo, "steps": s.steps,
        "tb_factor": str(result.cost.tb_factor), "verified": result.verification.ok,
        "transfers": [{"shard": topo.names[t.shard], "lo": str(t.lo), "hi": str(t.hi),
                       "src": topo.names[topo.links[t.link].src], "dst": topo.names[topo.links[t.link].dst],
                       "link": t.link, "step": t.step, "reduce": t.reduce} for t in s.transfers]})


def _bfb_lp_text(expr: str, step: int, receiver: str) -> str:
    from solvers.directconnect.bfb import receiver_problems
    from solvers.directconnect.bfb_lp import lp1_model, write_lp

    topo = load(expr)
    u = topo.index(receiver)
    (problem,) = [p for p in receiver_problems(topo) if p.u == u and p.t == step]
    return write_lp(lp1_model(topo, problem))


def tb_note(topo, cost, collective) -> str | None:
    """Why the tb bound is out of reach, where it is (``solvers.core.cost.self_loop_tb_bound``), with the best
    figure a schedule can reach; None otherwise."""
    tight = self_loop_tb_bound(topo, collective) if cost.tb_factor > cost.tb_lower_bound else None
    if tight is None:
        return None
    bound, loops = tight
    at = "; this schedule reaches it" if cost.tb_factor == bound else ""
    return (f"No schedule reaches the tb bound {float(cost.tb_lower_bound):.4g} here: it counts the bandwidth of "
            f"{loops} self-loop(s), links from a node to itself that carry nothing. Without them the bound is "
            f"{float(bound):.4g} ({bound}){at}.")


def _metrics(result, work, priced) -> None:
    """The schedule's numbers: steps and tb_factor against their bounds; the runtime model's figures for the
    workload (``priced``: ``solvers.runtime.Priced``; None when the schedule is too large to run) against their
    bound; the step model (and GenModel's price when the sidebar asks for it) as named second figures."""
    c = result.cost
    m, alpha, big_b = work.total_bytes, work.alpha_us, work.bandwidth_gbs
    step = alpha_beta_us(c.steps, c.tb_factor, m, alpha, big_b) if priced is None else priced.step_model_us
    step_bound = alpha_beta_us(c.steps_lower_bound, c.tb_lower_bound, m, alpha, big_b)
    coll = result.schedule.collective
    note = tb_note(result.topology, c, coll)
    reachable = note is not None and c.tb_factor == self_loop_tb_bound(result.topology, coll)[0]
    cols = metric_columns(5)
    cols[0].metric("Steps", c.steps, delta=f"bound {c.steps_lower_bound}",
                   delta_color="off" if c.steps == c.steps_lower_bound else "inverse")
    cols[1].metric("tb_factor", f"{float(c.tb_factor):.4f}", delta=f"bound {float(c.tb_lower_bound):.4f}",
                   delta_color="off" if c.tb_factor == c.tb_lower_bound or reachable else "inverse",
                   help=f"T_B / (M/B), exactly {c.tb_factor}; the bound is {c.tb_lower_bound}.")
    cols[2].metric("Transfers", result.schedule.count)
    optimal = "yes" if c.tb_factor == c.tb_lower_bound else ("reachable best" if reachable else "no")
    cols[3].metric("BW-optimal", optimal)
    step_help = ("The papers' step model: steps × alpha + tb_factor × M/B. Every step waits for its slowest link and "
                 "nothing is pipelined; a second figure beside the runtime model. Its delta is the step model's "
                 "bound, steps_lower_bound × alpha + tb_lower_bound × M/B (D(G) alpha + T_B* M/B), which holds in "
                 "the step model only: a pipelined schedule can beat it in the runtime model.")
    if work.prices == "links":
        cols[4].metric("Step model (µs)", f"{step:.4g}", help="The step model on the fabric's own links: each step "
                       "lasts as long as its slowest link (alpha + bytes / bandwidth); a second figure.")
    else:
        cols[4].metric("Step model (µs)", f"{step:.4g}", delta=f"bound {step_bound:.4g}", delta_color="off",
                       help=step_help)
    if note:
        st.caption(note)
    if priced is None:
        return
    run, bound_us = priced.run, priced.bound_us
    cols = metric_columns(5)
    cols[0].metric("Runtime (µs)", f"{run.time_us:.4g}", delta=f"bound {bound_us:.4g}", delta_color="off",
                   help=f"The runtime model for M = {m:.4g} bytes ({work.price_label}): every send starts when "
                        "its data has arrived and its link is free and holds the link for alpha + bytes / "
                        f"bandwidth; the buffer runs as P = {run.slices} pipelined slice(s), the fastest P tried. "
                        f"The bound is the tightest we prove, here the {priced.bound_name}: no schedule of this "
                        "collective takes less on this fabric in the same prices.")
    cols[1].metric("algbw (GB/s)", f"{run.algbw_gbs:.4g}", help="M / time (nccl-tests' algorithm bandwidth).")
    cols[2].metric("busbw (GB/s)", f"{run.busbw_gbs:.4g}",
                   help="algbw × the collective's bus factor (nccl-tests: (N-1)/N for allgather and "
                        "reduce-scatter, 2(N-1)/N for allreduce), comparable across N.")
    cols[3].metric("Slices P", run.slices,
                   help="The pipelining depth the model chose: the buffer is cut into P slices that follow each "
                        "other through the schedule (P = 1, 2, 4, ... tried, no slice below "
                        f"{run.execution.min_slice_bytes / 1024:g} KiB, the fastest kept).")
    if work.cost_model == "GenModel":
        gm = work.genmodel_price(result.topology, result.schedule)
        extra = {k: gm[f"{k}_us"] for k in ("epsilon", "gamma", "delta")}   # beyond alpha-beta
        cols[4].metric("GenModel (µs)", f"{step + sum(extra.values()):.4g}", delta=f"step model {step:.4g}",
                       delta_color="off",
                       help="GenModel's own figure: the step model plus its per-step terms ("
                            + ", ".join(f"{k} {v:.4g} µs" for k, v in extra.items())
                            + f"; parameters {work.genmodel_preset}). Not the runtime model.")
    else:
        busiest = max(run.utilisation().values(), default=0.0)
        cols[4].metric("Busiest link", f"{busiest:.0%}",
                       help="The largest busy time / completion time of a link in the runtime model.")
    st.caption(f"Times for M = {m:.4g} bytes with {work.price_label} (the sidebar's workload; the CLI's "
               "schedule --json gives the same figures for the same workload). The runtime model's bound is the "
               f"{priced.bound_name}.")


@dataclass(frozen=True)
class _Computed:
    """What the result part of the page shows, all computed before any of it is sent: ``priced`` is None where
    the schedule is too large for the runtime model, or where it cannot time it (``error`` says why);
    ``figures`` by name (the downloads' too), ``drawings`` the same ready for ``charts.put``."""

    loads: dict
    priced: object
    figures: dict
    drawings: dict
    error: str | None = None


def _computed(expr: str, algo: str, coll: str, options: tuple, sized, work, result) -> _Computed:
    """The link loads, the runtime model for the workload and the curve, and the figures drawn, under one progress
    bar. Issue 44: a page whose elements reach the browser one by one while the server computes between them
    costs that browser a layout and paint for each (forty lines 50 ms apart: 0.94 CPU s more than a bare page,
    the same sent at once: 0.06 s; ``bench.widget_cost --variants trickle,burst``), and twenty sessions' scripts
    sharing the server's interpreter lock spread a page's elements over seconds."""
    topo, schedule = result.topology, result.schedule
    bar = st.progress(0.0, text="Counting every link's load in every step …")
    loads = _loads(expr, algo, coll, options, sized)
    heat = load_heatmap(topo, loads)
    if schedule.count > MAX_MODEL_TRANSFERS:
        drawing = charts.drawing(heat, "heatmap_chart")
        bar.empty()
        return _Computed(loads, None, {"heatmap": heat}, {"heatmap": drawing})
    try:
        prices = work.runtime
        bar.progress(0.3, text=f"Runtime model: the schedule's messages and their dependencies "
                               f"({schedule.count:,} transfers) …")
        model = _priced(expr, algo, coll, options, sized, prices.key)
        bar.progress(0.6, text=f"Runtime model: timing M = {work.total_bytes:.4g} bytes …")
        priced = prices.price_result(result, model)
        bar.progress(0.8, text=f"Runtime model: timing {len(SIZES)} sizes for the curve …")
        times, slices, bounds = _curve(expr, algo, coll, options, sized, prices.key)
    except ValueError as exc:
        bar.empty()
        return _Computed(loads, None, {}, {}, error=f"the runtime model cannot time this schedule: "
                                                    f"{str(exc).splitlines()[0] if str(exc) else type(exc).__name__}")
    figures = {"runtime": runtime_curve(SIZES, times, bounds, slices, label=algo,
                                        marker=(work.total_bytes, priced.run.time_us)),
               "heatmap": heat, "utilisation": utilisation_heatmap(topo, priced.run)}
    drawings = {"runtime": charts.drawing(figures["runtime"], "runtime_chart", width_px=HALF_WIDTH_PX),
                "heatmap": charts.drawing(heat, "heatmap_chart", width_px=HALF_WIDTH_PX),
                "utilisation": charts.drawing(figures["utilisation"], "utilisation_chart", width_px=HALF_WIDTH_PX)}
    bar.empty()
    return _Computed(loads, priced, figures, drawings)


PREFERRED = "bfb"        # the page's default where it applies (the BFB paper's synthesizer)


def _design() -> tuple[str, str]:
    """(key, name) of the design (``studio.design.current_design``): a ``?expr=`` from outside the page (a shared link)
    becomes the session's design first."""
    url = st.query_params.get("expr")
    if url is not None and url != st.session_state.get("schedule_url_expr"):
        st.session_state["schedule_url_expr"] = url
        if not is_import(url):
            st.session_state["design_expr"] = url
        elif url != current_design()[0]:
            try:
                adopt_import(url)
            except TopologyError as exc:
                st.error(for_page(exc))
    return current_design()


@st.cache_data(show_spinner=False, max_entries=64)
def _first_applicable(expr: str, coll: str, skip: tuple = ()) -> str | None:
    """The first synthesizer in registry order (``solvers.registry``: rank, cheap ones first) that builds
    ``coll`` (``name@root`` for a rooted one) on the design and whose schedule passes the simulator, ``skip``
    left out; None when none does. TE-CCL and the ILPs are not tried: they are asked for by name."""
    from solvers.synthesize import synthesize

    topo = load(expr)
    for name, synth in ALGORITHMS.items():
        if name in skip or name in ("teccl", "tacos_ilp", "taccl_like") \
                or not synth.builds(Collective(coll.partition("@")[0])):
            continue
        try:
            synthesize(topo, name, coll)
        except (NotApplicable, ScheduleError, ValueError):
            continue
        return name
    return None


def _choose_algo(expr: str) -> None:
    """The synthesizer before the page draws its choice: a link's ``?algo=`` or the user's (or another page's)
    choice wins; else ``PREFERRED``, which the page replaces by the first applicable one (``_first_applicable``)
    when it cannot schedule the design (``algo_auto`` records the design and synthesizer the page chose itself)."""
    auto = st.session_state.get("algo_auto")
    if "algo_next" in st.session_state:             # the page's own fallback, chosen in the run before
        st.session_state["algo"] = st.session_state.pop("algo_next")
        st.session_state["algo_auto"] = (expr, st.session_state["algo"])
        return
    if "algo" not in st.session_state:
        asked = st.query_params.get("algo")
        if asked is not None and asked not in ALGORITHMS:
            st.error(f"The link asks for an algorithm named {asked[:40]!r}, which does not exist: showing "
                     f"{PREFERRED} (choose another under Algorithm).")
            asked = None
        if asked is None or auto is None or auto[1] != asked:     # not the page's own earlier choice in its URL
            auto = None if asked else (expr, PREFERRED)
        st.session_state["algo"] = asked or PREFERRED
    elif auto is not None and auto[1] != st.session_state["algo"]:     # another page chose it
        auto = None
    if auto is not None and auto[0] != expr:        # a new design: the page chooses again
        st.session_state["algo"] = PREFERRED
        auto = (expr, PREFERRED)
    st.session_state["algo_auto"] = auto


def _user_chose_algo() -> None:
    st.session_state["algo_auto"] = None


def _fall_back(expr: str, algo: str, coll: str) -> bool:
    """After ``algo`` could not schedule the design: when the page chose it, choose the first applicable one for
    the next run and rerun (True never returns); False when the choice was the user's or nothing applies."""
    if st.session_state.get("algo_auto") != (expr, algo):
        return False
    found = _first_applicable(expr, coll, (algo,))
    if found is None:
        return False
    st.session_state["algo_next"] = found
    st.rerun()
    return True


def render() -> None:
    st.title("Schedule a collective")
    work = workload.current()
    expr, name = _design()
    _choose_algo(expr)
    if "coll" not in st.session_state:
        asked = st.query_params.get("coll", "allgather")
        if asked not in {c.value for c in Collective.every()}:
            st.error(f"The link asks for a collective named {asked[:40]!r}, which does not exist: showing "
                     "allgather.")
            asked = "allgather"
        st.session_state["coll"] = asked
    c1, c2, c3 = st.columns([3, 2, 2])
    if expr.startswith(IMPORT_PREFIX):
        said = load(expr).name or ""
        said = said[len(name) + 2:] if said.startswith(f"{name}: ") else said
        c1.markdown(f"**Topology** the import `{name}`{': ' + said if said else ''} (change it on Compose)")
    else:
        c1.markdown(f"**Topology** `{expr}` (change it on Compose)")
    c1.caption(f"Schedules are verified in full; topologies up to {DEFAULT_MAX_NODES} nodes, drawn up to "
               f"{MAX_DRAWN_NODES}.")
    algo = c2.selectbox("Algorithm", list(ALGORITHMS), key="algo", format_func=lambda a: a, on_change=_user_chose_algo,
                        help=" · ".join(f"{k}: {v.summary}" for k, v in ALGORITHMS.items()))
    synth = ALGORITHMS[algo]
    # the collectives the synthesizer builds (alltoall and custom demands only TE-CCL); else back to allgather
    colls = [c.value for c in Collective.every() if synth.builds(c)]
    if st.session_state.get("coll") not in colls:
        st.session_state["coll"] = "allgather"
    coll = c3.selectbox("Collective", colls, key="coll")
    st.query_params.update({"expr": expr, "algo": algo, "coll": coll})      # an import by its digest
    st.session_state["schedule_url_expr"] = expr
    rooted = Collective(coll).rooted
    if not rooted:
        st.query_params.pop("root", None)
        measured_view.panel("s_", [(name, lambda: load(expr))], coll)
    coll = root_choice(expr, coll, c3)
    if algo in PANELS:                           # a synthesizer with a result panel of its own
        PANELS[algo](expr, coll, work, name)
        return
    options = tuple(sorted((option_controls(synth, f"o_{algo}_") or {}).items()))
    slot = cancel_slot("s_solve", (expr, algo, coll, options), f"{algo} {coll} on {name}")
    if slot is None:
        return
    try:
        sized = sized_bytes(expr, algo, work)
        solved = _solved(expr, algo, coll, options, sized)
    except (TopologyError, NotApplicable, ScheduleError, ValueError, JobError) as exc:
        slot.empty()
        if not isinstance(exc, NotApplicable) or not _fall_back(expr, algo, coll):
            st.error(f"{algo} cannot schedule {name}: {for_page(exc)}")
        return
    slot.empty()
    result = solved.result
    topo, schedule = result.topology, result.schedule
    shown = _computed(expr, algo, coll, options, sized, work, result)
    # from here the page only sends what is computed, so that its elements reach the browser together
    cache_note(solved, "s")
    if result.verification.ok:
        st.success(f"Verified by the simulator: a correct {_said(coll)} on {math_name(topo.name or name)}.",
                   icon=":material/verified:")
    if shown.error:
        st.error(shown.error)
        return
    _metrics(result, work, shown.priced)
    drawings, figures, loads = shown.drawings, shown.figures, shown.loads
    if shown.priced is None:
        st.info(f"{schedule.count} transfers: too many for the runtime model here (limit {MAX_MODEL_TRANSFERS}); "
                "the step model above is the only time shown.")
        charts.put(drawings["heatmap"])
    else:
        left, right = st.columns(2)
        charts.put(drawings["runtime"], where=left)
        load_tab, busy_tab = right.tabs(["Load per step", "Link utilisation (runtime model)"])
        charts.put(drawings["heatmap"], where=load_tab)
        charts.put(drawings["utilisation"], where=busy_tab)
        busy_tab.caption(f"Busy time / completion time of every link at M = {work.total_bytes:.4g} bytes "
                         f"(P = {shown.priced.run.slices}); a link at 100% never rests.")
    if topo.num_nodes <= MAX_DRAWN_NODES:
        with lazy_expander("Step by step: the links each step uses, and where one node's shard travels",
                           "steps_open") as box:
            if box:
                figures.update(_step_by_step(expr, topo, schedule, loads))
    else:
        st.info(f"{topo.num_nodes} nodes are too many to draw (limit {MAX_DRAWN_NODES}); the numbers above are "
                "exact.")
    # the report explains an allgather on this graph (a reduce-scatter's is about the transposed graph)
    report = getattr(result.detail, "report", None) if schedule.collective is Collective.ALLGATHER else None
    if report:
        with lazy_expander("Why each step costs what it does (BFB, Theorem 19)", "report_open") as box:
            if box:
                st.dataframe([{"step": r.step, "U": str(r.u), "receiver": r.receiver, "sources": r.sources,
                               "in-links": r.in_links, "Hall set: sources": r.tight_sources,
                               "Hall set: in-links": r.tight_links, "balanced": r.balanced} for r in report],
                             key="report_table")
    _downloads(result, expr, figures, report, name)
    _export_panel(result, expr, algo, coll, (options, sized), name)


def _step_by_step(expr: str, topo, schedule, loads) -> dict:
    """The step-by-step drawings, in a box made only while open: a step's slider and a source's choice, two more
    drawings and the slider's code cost every browser about half a CPU second per view (issue 44). Returns the
    figures for the downloads."""
    layout = _layout(expr)
    left, right = st.columns(2)
    with left:
        step = st.slider("Step", 1, max(schedule.steps, 1), 1, key="step") if schedule.steps > 1 else 1
        at_step = {i: float(v) for i, v in loads.get(step, {}).items()}
        fig_step = topology_figure(topo, f"Links busy in step {step} (load in shards)", link_weight=at_step,
                                   weight_label="shards", layout=layout)
        charts.show(fig_step, "step_chart", width_px=HALF_WIDTH_PX)
    with right:
        source = st.selectbox("Source of the broadcast tree", list(topo.names), key="source")
        v = topo.index(source)
        first: dict[int, int] = {}
        for t in schedule.transfers:
            if t.shard == v and not t.reduce:
                first[t.link] = min(first.get(t.link, t.step), t.step)
        fig_tree = topology_figure(topo, f"Where shard {source} travels (color: step)", link_weight=first,
                                   weight_label="step", layout=layout)
        charts.show(fig_tree, "tree_chart", width_px=HALF_WIDTH_PX)
    return {"step": fig_step, "tree": fig_tree}


def _render_teccl(expr: str, coll: str, work, name: str) -> None:
    """TE-CCL: its knobs, a solve with a progress bar, the shared result panel, downloads and the MSCCL export."""
    options = teccl_view.knobs("t_", coll)
    if options is None:
        return
    slot = cancel_slot("t_solve", (expr, coll, options, work.total_bytes), f"TE-CCL {coll} on {name}")
    if slot is None:
        return
    try:
        solved = teccl_view.cached_solve(expr, coll, options, work.total_bytes, lambda: load(expr))
    except (TopologyError, NotApplicable, ScheduleError, ValueError, JobError) as exc:
        slot.empty()
        st.error(f"teccl cannot schedule {name}: {for_page(exc)}")
        return
    slot.empty()
    cache_note(solved, "t")
    result, found = solved.result, solved.result.detail
    layout = _layout(expr) if result.topology.num_nodes <= MAX_DRAWN_NODES else None
    figures = teccl_view.panel(result, found, "t_", work.total_bytes, layout=layout)
    _downloads(result, expr, figures, None, name)
    _export_panel(result, expr, "teccl", coll, (options, work.total_bytes), name)


def _render_tacos(expr: str, coll: str, work, name: str) -> None:
    st.caption("TACOS greedy link-chunk matching: chunks are matched to free links event by event, one chunk per "
               f"link at a time, sized for the sidebar's M = {work.total_bytes:.4g} bytes. Its time is the runtime "
               "model's for the sidebar's workload; TACOS's own clock follows as a second figure.")
    options = tacos_view.knobs("c_")
    slot = cancel_slot("c_solve", (expr, coll, options, work.total_bytes), f"TACOS {coll} on {name}")
    if slot is None:
        return
    try:
        solved = tacos_view.cached_solve(expr, coll, options, work.total_bytes, lambda: load(expr))
    except (TopologyError, NotApplicable, ScheduleError, ValueError, JobError) as exc:
        slot.empty()
        st.error(f"tacos cannot schedule {name}: {for_page(exc)}")
        return
    slot.empty()
    cache_note(solved, "c")
    result, found = solved.result, solved.result.detail
    st.success(f"Verified by the simulator: a correct {_said(coll)} on {math_name(result.topology.name or name)}.",
               icon=":material/verified:")
    tacos_view.panel(result, found, "c_", work.total_bytes)
    if work.cost_model == "GenModel":
        priced = work.genmodel_price(result.topology, result.schedule)
        st.caption(f"GenModel ({work.genmodel_preset}) prices this schedule step by step on the fabric's links at "
                   f"{priced['total_us']:.5g} µs (incast {priced['epsilon_us']:.4g}, reduction "
                   f"{priced['gamma_us']:.4g}, memory {priced['delta_us']:.4g} µs).")
    _export_panel(result, expr, "tacos", coll, (options, work.total_bytes), name)


PANELS = {"teccl": _render_teccl, "tacos": _render_tacos}


def _downloads(result, expr: str, figures: dict, report, name: str) -> None:
    """The schedule's downloads in a box made only while open (``lazy_expander``): their buttons cost every
    browser about 0.25 CPU s per view (issue 44), and most views download nothing."""
    with lazy_expander("Downloads: the schedule as JSON, BFB's LP, the figures as PNG and SVG",
                       "downloads_open") as box:
        if box:
            _download_buttons(result, expr, figures, report, name)


def _download_buttons(result, expr: str, figures: dict, report, name: str) -> None:
    cols = st.columns(3)
    stem = safe_stem(f"{design_stem(name)}_{result.schedule.algo}")
    if result.schedule.count <= MAX_DOWNLOAD_TRANSFERS:
        # the files are made when clicked (a callable): most views never download, and every view paid for them
        cols[0].download_button("Schedule JSON", partial(_schedule_json, result), file_name=f"{stem}.json",
                                mime="application/json", key="dl_schedule", on_click="ignore")
    else:
        cols[0].caption(f"{result.schedule.count} transfers: too many for a JSON download "
                        f"(limit {MAX_DOWNLOAD_TRANSFERS}).")
    if report:
        worst = max(report, key=lambda r: r.u)
        cols[1].download_button(f"LP (1) of step {worst.step}, receiver {worst.receiver} (.lp)",
                                partial(_bfb_lp_text, expr, worst.step, worst.receiver), file_name=f"{stem}.lp",
                                mime="text/plain", key="dl_lp", on_click="ignore")
    images = st.session_state.setdefault("schedule_images", {})
    if images.get("key") != stem:
        cols[2].button("Render figures as PNG and SVG", key="render_schedule_images",
                       on_click=lambda: render_images(images, stem, figures))
        if images.get("error"):
            st.error(images["error"])
    else:
        for k in figures:
            for fmt in ("png", "svg"):
                if f"{k}.{fmt}" in images:
                    cols[2].download_button(f"{k}.{fmt}", images[f"{k}.{fmt}"], file_name=f"{stem}_{k}.{fmt}",
                                            key=f"dl_{k}_{fmt}", on_click="ignore")


def _export_panel(result, expr: str, algo: str, coll: str, variant, name: str) -> None:
    """``variant``: what beyond the expression, synthesizer and collective the schedule depends on (its options;
    TE-CCL's and TACOS's also the bytes)."""
    with lazy_expander("Export to MSCCL XML (validated and simulated before download)", "export_open") as box:
        if box:
            export_panel(result.topology, result.schedule, "x_", f"{algo} {coll} {result.topology.name or name}",
                         f"{design_stem(name)}_{algo}_{coll}", request=(expr, algo, coll, variant))
    nccl_graph_expander(result.topology, "x_")     # plain NCCL/RCCL's rings: beside the MSCCL export, not in it
