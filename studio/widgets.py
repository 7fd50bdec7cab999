"""Widgets the pages share. ``option_controls`` draws a synthesizer's options from its ``Options`` declaration
(``solvers.registry.option``), so that a synthesizer added in one file gets its controls on every page."""
from __future__ import annotations

import time
from dataclasses import dataclass
from typing import Any, Callable

import streamlit as st

from solvers.registry import OptionSpec, Synthesizer
from studio.design import safe_stem  # noqa: F401  (the pages' name for it too)
from studio.expander import lazy_expander
from studio.metric_grid import metric_columns

Custom = Callable[[OptionSpec, object], object]
MISSING = object()          # a custom widget's answer when its value is missing (the page stops there)


def _sentence(text: str) -> str:
    """A declared help text (written for ``--help``, lower case) as a tooltip sentence."""
    return text[:1].upper() + text[1:]


def _number(spec: OptionSpec, where, prefix: str, default, disabled: bool):
    optional = spec.default is None                  # shown as 0 = automatic
    integer = spec.kind is int
    lo = spec.page_minimum if spec.page_minimum is not None else spec.minimum
    lo = 0 if optional else lo
    hi = spec.page_maximum if spec.page_maximum is not None else spec.maximum
    value = 0 if default is None else default
    cast = int if integer else float
    kwargs = {"step": cast(spec.step or 1)}
    if not integer and spec.step is not None and spec.step < 0.01:
        kwargs["format"] = "%.4g"
    got = where.number_input(spec.label, None if lo is None else cast(lo), None if hi is None else cast(hi),
                             cast(value), key=f"{prefix}{spec.key}", help=_sentence(spec.help),
                             disabled=disabled, **kwargs)
    got = cast(got)
    return None if optional and got == 0 else got


def option_controls(synth: type[Synthesizer], prefix: str, *, per_row: int = 4, defaults: dict | None = None,
                    custom: dict[str, Custom] | None = None, skip: tuple[str, ...] = (),
                    disabled: tuple[str, ...] = ()) -> dict | None:
    """The synthesizer's page options as widgets, ``per_row`` to a row (keys ``prefix + key``); returns
    {field: value}. ``defaults`` replaces declared defaults on the page; ``custom[widget]`` draws a field that
    declares ``widget`` (it returns the value, or MISSING to stop: then this returns None); ``skip`` leaves
    fields out, ``disabled`` greys them."""
    specs = [s for s in synth.option_specs() if s.page and s.name not in skip]
    values: dict = {}
    cols = []
    for i, spec in enumerate(specs):
        if i % per_row == 0:
            cols = st.columns(per_row)
        where = cols[i % per_row]
        default = (defaults or {}).get(spec.name, spec.default)
        off = spec.name in disabled
        if spec.widget is not None:
            value = (custom or {})[spec.widget](spec, where)
            if value is MISSING:
                return None
        elif spec.kind is bool:
            value = where.checkbox(spec.label, value=bool(default), key=f"{prefix}{spec.key}",
                                   help=_sentence(spec.help), disabled=off)
        elif spec.choices is not None:
            choices = list(spec.choices)
            text = where.selectbox(spec.label, choices, index=choices.index(str(default)),
                                   key=f"{prefix}{spec.key}", help=_sentence(spec.help),
                                   disabled=off)
            value = spec.parse(text) if spec.parse is not None else text
        else:
            value = _number(spec, where, prefix, default, off)
        values[spec.name] = value
    return values


HOW_TO_RUN = """**Running the file.** MSCCL executor (NCCL): copy it into `<build>/lib/msccl-algorithms/`. microsoft/msccl:
`mpirun -np <ngpus> -x MSCCL_XML_FILES=file.xml -x NCCL_ALGO=MSCCL,RING,TREE <nccl-tests binary> -b 1K -e 1G -f 2`.
RCCL: copy it into `<rccl>/build/release/msccl-algorithms/` and set `RCCL_MSCCL_FORCE_ENABLE=1`. The file serves
the call chosen above (nccl-tests runs out of place, then in place); its chunk count (`nchunksperloop`) must
divide the buffer's element count."""

_PLACES = {"default": None, "in place": True, "out of place": False}
MAX_BUNDLE_TRANSFERS = 100_000     # a bundle of a larger schedule takes minutes and hundreds of MB: the CLI's job


def export_panel(topo, schedule, prefix: str, name: str, file_stem: str, *, request: tuple = (),
                 graph: bool = False) -> None:
    """The one export widget every page uses, in tabs: a bundle for every buffer size (``bundle_panel``), one
    MSCCL file (``file_panel``), an MSCCL++ plan (``plan_panel``) and, with ``graph``, the design's NCCL graph file
    (``graph_file_panel``: not MSCCL but plain NCCL/RCCL's own rings). The pages show the graph file in a sibling
    expander of its own instead (``nccl_graph_expander``, issue 59 finding 11)."""
    labels = ["Bundle for every size (zip)", "One file", "MSCCL++ plan (JSON)"]
    tabs = st.tabs(labels + (["NCCL graph file (plain NCCL/RCCL, not MSCCL)"] if graph else []))
    with tabs[0]:
        bundle_panel(topo, schedule, prefix, name, file_stem, request=request)
    with tabs[1]:
        file_panel(topo, schedule, prefix, name, file_stem, request=request)
    with tabs[2]:
        plan_panel(topo, schedule, prefix, name, file_stem, request=request)
    if graph:
        with tabs[3]:
            graph_file_panel(topo, prefix)


GRAPH_SPEEDS = ("speedintra and speedinter are the file's two bandwidths, as NCCL reads them: what each channel "
                "moves over the links inside a box (typeintra) and over the network between boxes (typeinter; "
                "unused on a single box). Check a file with "
                "`python -m studio check-graph FILE --topo EXPR`.")


def graph_file_panel(topo, prefix: str) -> None:
    """The NCCL graph file of ``topo`` (``studio.views.nccl_graph.nccl_graph_panel``) with what its per-channel
    bandwidths are (``GRAPH_SPEEDS``)."""
    from studio.views.nccl_graph import nccl_graph_panel

    nccl_graph_panel(topo, prefix=prefix)
    st.caption(GRAPH_SPEEDS)


def nccl_graph_expander(topo, prefix: str, where=None) -> None:
    """``graph_file_panel`` in an expander of its own, "NCCL graph file", made only while open (its key
    ``{prefix}ngraph_open``): the sibling of a page's "Export to MSCCL XML" expander."""
    with lazy_expander("NCCL graph file (NCCL_GRAPH_FILE for plain NCCL/RCCL)", f"{prefix}ngraph_open",
                       where) as box:
        if box:
            graph_file_panel(topo, prefix)


def plan_panel(topo, schedule, prefix: str, name: str, file_stem: str, *, request: tuple = ()) -> None:
    """The same program as an MSCCL++ execution plan (``solvers.export.mscclpp.export_plan``), checked against
    the executor's rules and simulated over two launches before its download appears, or one line saying why
    not. Widget keys are ``prefix`` + p*; the plan is kept under ``prefix + "plan"`` with ``request``."""
    from solvers.export import DEFAULT_SM_BUDGET
    from solvers.export.mscclpp import MAX_OPERATION, export_plan

    place = st.selectbox("Call", list(_PLACES), key=f"{prefix}pplace")
    budget = int(st.session_state.get(f"{prefix}budget", DEFAULT_SM_BUDGET))
    asked = request + (place, budget)
    held_key = f"{prefix}plan"
    held = _built(f"{prefix}pbuild", "Build MSCCL++ plan", held_key, asked,
                  "Lowering, checking and simulating two launches …",
                  lambda built: export_plan(topo, built, budget, in_place=_PLACES[place], name=name), schedule)
    if held is None:
        return
    text, report = held
    st.success(f"Checked against the MSCCL++ executor's rules and simulated over two launches: {report.ngpus} "
               f"ranks, at most {report.max_threadblocks} threadblocks per rank (budget {budget}) and "
               f"{report.max_ops} operations per threadblock (limit {MAX_OPERATION}).")
    stem = safe_stem(file_stem)
    st.download_button("Download MSCCL++ plan", text, file_name=f"{stem}.json", mime="application/json",
                       key=f"{prefix}pdownload", on_click="ignore")


def file_panel(topo, schedule, prefix: str, name: str, file_stem: str, *, request: tuple = ()) -> None:
    """One MSCCL file: the runtime's settings (dialect, protocol, threadblock budget,
    in or out of place), a button, then the file lowered, validated against the runtime parser's rules and
    simulated (``solvers.export.export``) before its download appears, or one line saying why not.
    ``schedule`` is a verified Schedule or a function that builds one (called only when the button is pressed).

    Widget keys are ``prefix`` + dialect / proto / budget / place / export / download. The file is kept in the
    session under ``prefix + "xml"`` with ``request`` (whatever, beside the settings, the schedule depends on:
    expression, synthesizer, collective, options) and shown only while the page asks for the same."""
    from solvers.export import DEFAULT_SM_BUDGET, TARGETS, export

    c1, c2, c3, c4 = st.columns(4)
    runtime = c1.selectbox("Runtime", list(TARGETS), index=_default_runtime_index(topo), key=f"{prefix}runtime",
                           help="The runtime that loads the file; the export meets its reader's limits and uses "
                                "only the step types its kernels run. "
                                + "; ".join(f"{t.name}: {t.max_steps} steps per threadblock, {t.max_tbs} "
                                            f"threadblocks per rank, steps {' '.join(sorted(t.kernel_steps))} "
                                            f"({t.dialect} dialect)" for t in TARGETS.values()))
    proto = c2.selectbox("Protocol", ["Simple", "LL", "LL128"], key=f"{prefix}proto")
    budget = c3.number_input("Threadblocks per GPU", 1, 1024, DEFAULT_SM_BUDGET, key=f"{prefix}budget",
                             help="How many threadblocks can be resident at once (SMs); 108 on an A100.")
    place = c4.selectbox("Call", list(_PLACES), key=f"{prefix}place",
                         help="Default: in place for allgather and allreduce, out of place for reduce-scatter.")
    asked = request + (runtime, proto, int(budget), place)
    held_key = f"{prefix}xml"
    held = _built(f"{prefix}export", "Build MSCCL XML", held_key, asked, "Lowering, validating and simulating …",
                  lambda built: export(topo, built, None, int(budget), runtime, proto=proto, in_place=_PLACES[place],
                                       name=name), schedule)
    if held is None:
        return
    text, report = held
    limits = TARGETS[report.runtime]
    st.success(f"Validated against {report.runtime}'s rules, limits and kernels and simulated: {report.ranks} ranks, "
               f"{report.threadblocks} threadblocks, {report.steps} steps; at most {report.tbs_per_rank} "
               f"threadblocks per rank (limit {limits.max_tbs}) and {report.steps_per_tb} steps per threadblock "
               f"(limit {limits.max_steps}); step types {' '.join(report.step_types)}.")
    if getattr(report, "coarsened", None):           # over a reader's limit as built: coarsened to fit (issue 60)
        st.info(report.coarsened.note()[:1].upper() + report.coarsened.note()[1:] + ".", icon=":material/compress:")
    if getattr(report, "root_note", None):
        st.warning(f"This file {report.root_note}.", icon=":material/warning:")
    stem = safe_stem(file_stem)
    st.download_button("Download MSCCL XML", text, file_name=f"{stem}.xml", mime="application/xml",
                       key=f"{prefix}download", on_click="ignore")
    st.markdown(HOW_TO_RUN)


def _default_runtime_index(topo) -> int:
    """The position in ``TARGETS`` of the runtime the fabric's vendor uses (``default_runtime``), said in a caption
    beside the choice."""
    from solvers.export import TARGETS, default_runtime

    name, why = default_runtime(topo)
    st.caption(f"Default runtime {name}: {why}.")
    return list(TARGETS).index(name)


def rooted_collective(ranks: list[str], coll: str, where, key: str, url: bool = False) -> str:
    """The collective as the solvers take it: ``coll`` itself, or for broadcast, reduce, gather and scatter
    ``coll@root`` with the root chosen here among ``ranks`` (the GPUs' names in rank order;
    ``solvers.core.schedule.rooted_request``). ``url``: the root is kept in the page's URL as ``root``."""
    from solvers.core.schedule import Collective

    if not Collective(coll).rooted:
        return coll
    if st.session_state.get(key) not in ranks:
        asked = st.query_params.get("root") if url else None
        st.session_state[key] = asked if asked in ranks else ranks[0]
    root = where.selectbox("Root", ranks, key=key, help="The GPU the broadcast and scatter leave from, the reduce "
                           "and gather end at (rank order; NCCL's and RCCL's root argument).")
    if url:
        st.query_params["root"] = root
    return f"{coll}@{root}"


def _built(button_key: str, label: str, held_key: str, asked: tuple, doing: str, make, schedule):
    """The shared build step of the export tabs: on ``label``'s button, ``make(schedule)`` (the schedule built
    first when it is a function) under a spinner; its result is kept in the session under ``held_key`` with
    ``asked`` and returned while the page still asks for the same, else None. A refusal is one error line."""
    from solvers.core.errors import NotApplicable
    from solvers.export import XmlError

    if st.button(label, key=button_key):
        st.session_state.pop(held_key, None)
        with st.spinner(doing):
            try:
                made = make(schedule() if callable(schedule) else schedule)
            except (XmlError, NotApplicable, ValueError) as exc:
                st.error(f"Not exported: {str(exc).splitlines()[0] if str(exc) else type(exc).__name__}")
                return None
        st.session_state[held_key] = (asked, made)
    held = st.session_state.get(held_key)
    return held[1] if held and held[0] == asked else None


def bundle_panel(topo, schedule, prefix: str, name: str, file_stem: str, *, request: tuple = ()) -> None:
    """A bundle for every buffer size (``solvers.export.bundle``): the runtime, the link prices the model uses
    to choose protocol and copies per size range, a button, then the figure of the plan, one row per file (target,
    range, protocol, copies, limits used against the target's, modelled time) and the zip, or one line saying
    why not. Widget keys are ``prefix`` + b*; the result is kept under ``prefix + "bundle"`` with ``request``."""
    from solvers.core.errors import NotApplicable
    from solvers.export import DEFAULT_SM_BUDGET, TARGETS, XmlError
    from solvers.export.bundle import export_bundle

    from . import workload
    from studio.figures.curves import bundle_plan_figure

    c1, c2 = st.columns([1, 3])
    runtime = c1.selectbox("Runtime", list(TARGETS), index=_default_runtime_index(topo), key=f"{prefix}bruntime",
                           help="The runtime that loads the bundle; every file meets its limits and uses only the "
                                "step types its kernels run.")
    prices = workload.current().runtime
    c2.caption(f"Protocol and copies per size range are chosen by the runtime model with the sidebar's prices: "
               f"{prices.price_label} (the CLI's export --format bundle --prices).")
    budget = int(st.session_state.get(f"{prefix}budget", DEFAULT_SM_BUDGET))
    execution = prices.execution
    asked = request + (runtime, prices.key[1:], budget)
    held_key = f"{prefix}bundle"
    if st.button("Build bundle (zip)", key=f"{prefix}bbuild"):
        st.session_state.pop(held_key, None)
        with st.status("Planning, lowering, validating and simulating …") as status:
            try:
                built = schedule() if callable(schedule) else schedule
                if built.count > MAX_BUNDLE_TRANSFERS:
                    raise ValueError(f"{built.count} transfers: too many to bundle on the page (limit "
                                     f"{MAX_BUNDLE_TRANSFERS}, a few minutes of work); use `python -m studio export "
                                     "... --format bundle -o FILE.zip`")
                bundle = export_bundle(topo, built, runtime, execution=execution, sm_budget=budget, name=name,
                                       progress=lambda msg: status.update(label=msg[:1].upper() + msg[1:] + " …"))
            except (XmlError, NotApplicable, ValueError) as exc:
                status.update(label="Not exported", state="error")
                st.error(f"Not exported: {str(exc).splitlines()[0] if str(exc) else type(exc).__name__}")
                return
            status.update(label=f"{len(bundle.files)} files checked", state="complete")
        st.session_state[held_key] = (asked, bundle.zip_bytes(), bundle.rows(), bundle.notes, bundle.plan,
                                      bundle.runtime)
    held = st.session_state.get(held_key)
    if not held or held[0] != asked:
        return
    _, data, rows, notes, plan, target = held
    limits = TARGETS[target]
    st.success(f"{len(rows)} files, each validated against {target}'s rules and limits ({limits.max_steps} steps "
               f"per threadblock, {limits.max_tbs} threadblocks per rank) and simulated.")
    st.plotly_chart(bundle_plan_figure(plan), key=f"{prefix}bplan")
    st.dataframe([{"target": target, "bytes": f"{r['min_bytes']}..{r['max_bytes']}", "call": r["call"],
                   "protocol": r["protocol"], "copies": r["copies"], "count multiple of": r["count_multiple_of"],
                   "threadblocks/rank": f"{r['threadblocks_per_rank']} of {limits.max_tbs}",
                   "steps/threadblock": f"{r['steps_per_threadblock']} of {limits.max_steps}",
                   "step types": r["step_types"],
                   "modelled µs (range ends)": f"{r['modelled_us_low']:.4g} .. {r['modelled_us_high']:.4g}",
                   "file": r["file"]} for r in rows], key=f"{prefix}btable", hide_index=True)
    for note in notes:
        st.caption(note)
    stem = safe_stem(file_stem)
    st.download_button("Download bundle (zip)", data, file_name=f"{stem}_{target}.zip", mime="application/zip",
                       key=f"{prefix}bdownload", on_click="ignore")
    st.caption("The zip holds msccl-algorithms/ and a README with the environment variables that load it.")


# ------------------------------------------------------------------------------------------ stoppable solves
@st.cache_resource(show_spinner=False, max_entries=16)
def _schedule_model(schedule_id: int, _topo, _schedule):
    """The runtime model (its message graph) of the schedule whose ``id`` is ``schedule_id``, built once: the
    model keeps the schedule alive, so while an entry is cached no other object can carry its id."""
    from solvers.runtime import Model

    return Model(_topo, _schedule)


def runtime_metrics(result, work, model=None) -> None:
    """The runtime model's figures for the sidebar's workload (``studio.workload``): time against its bound,
    algbw, busbw and the pipelining depth, the same numbers the Schedule page, Compare and the CLI show for this
    schedule and workload. Panels whose synthesizer keeps a clock of its own (TACOS, TE-CCL) show it after these,
    named as that synthesizer's. ``result``: a ``Result`` (or anything with its topology, schedule and cost);
    ``model``: the schedule's runtime model when the page keeps one (else one is built and kept per schedule,
    so a panel's reruns do not build the message graph again)."""
    prices = work.runtime
    try:
        if model is None:
            model = _schedule_model(id(result.schedule), result.topology, result.schedule)
        priced = prices.price_result(result, model)
    except ValueError as exc:
        st.error(f"the runtime model cannot time this schedule: {str(exc).splitlines()[0] if str(exc) else exc}")
        return
    run = priced.run
    c = metric_columns(4)
    c[0].metric("Runtime (µs)", f"{run.time_us:.4g}", delta=f"bound {priced.bound_us:.4g}", delta_color="off",
                help=f"The runtime model for M = {prices.total_bytes:.4g} bytes ({prices.price_label}); the bound is "
                     f"the tightest we prove, here the {priced.bound_name}: no schedule of this collective takes less "
                     "on this fabric in the same prices.")
    c[1].metric("algbw (GB/s)", f"{run.algbw_gbs:.4g}", help="M / time (nccl-tests' algorithm bandwidth).")
    c[2].metric("busbw (GB/s)", f"{run.busbw_gbs:.4g}", help="algbw × the collective's bus factor (nccl-tests).")
    c[3].metric("P (slices)", run.slices, help="The pipelining depth the runtime model chose.")
    st.caption(f"Runtime model for M = {prices.total_bytes:.4g} bytes with {prices.price_label}: the same figures as "
               "Compare and the CLI for this workload.")


@dataclass(frozen=True)
class Solved:
    """A verified Result for a page: ``solved_at`` (seconds since the epoch) is when it was solved, the cache
    file's time when ``from_disk`` (the results cache, ``solvers.results_cache``)."""

    result: Any
    solved_at: float
    from_disk: bool


def synthesize_with_bar(label: str, topo, algo: str, collective: str, options: dict,
                        total_bytes: float | None = None) -> Solved:
    """``synthesize`` answered from the results cache where it holds this solve, else run in a child process
    (``studio.jobs.run``) behind a progress bar that names the phase and the seconds so far, and then stored. The
    bar's update is where a Stop, a changed widget or ``cancel_slot``'s button ends the run; the child is then
    killed, and nothing is cached.

    A heavy solve that runs on (``jobs.detach_s``) leaves the page's run: the page shows ``background_panel``,
    which looks after the solve every ``BACKGROUND_POLL_S`` seconds and runs the page again once it is done; the
    rest of the page is not drawn meanwhile (``st.stop``). While no script runs, the page costs its browser next
    to nothing: a script left running for a whole solve kept Streamlit's running icon and the bar redrawing, 0.1
    CPU s a second, and raised twenty other sessions' Compose p95 by 24.5 % (issue 44)."""
    from solvers.results_cache import ResultsCache, cached_synthesize, solve_key
    from solvers.synthesize import ALGORITHMS
    from studio import jobs

    def solve(topo, synth, collective, _progress, total_bytes, options):
        looking.empty()
        chosen = synth.options_from(options) if hasattr(synth, "options_from") else options
        key = session_prefix() + solve_key(topo, getattr(synth, "name", str(synth)), str(collective), chosen,
                                           total_bytes)
        waiting = jobs.background(key)
        if waiting is not None:                  # the solve this page left running: its answer, or its panel again
            if not waiting.done.is_set():
                raise jobs.Detached(waiting)
            return jobs.take(key)
        bar = st.progress(0.0, text=f"{label} …")
        state = {"f": 0.0, "text": label}

        def progress(phase: str, fraction: float) -> None:
            state["f"] = min(max(fraction, 0.0), 1.0)
            state["text"] = f"{label}: {phase} {int(state['f'] * 100)}%"

        def tick(elapsed: float) -> None:
            bar.progress(state["f"], text=f"{state['text']} ({elapsed:.1f} s)")

        try:
            result = jobs.run(jobs.synthesize_job, topo, synth, collective, options, total_bytes, progress=progress,
                              tick=tick, key=key, queued=lambda place, running: bar.progress(
                                  0.0, text=queue_text(label, place, running)))
        except jobs.Detached:
            bar.empty()
            raise
        bar.empty()
        return result

    # the class, not its name: one registered in this process only (a plugin, a test's) is imported by the child
    synth = ALGORITHMS.get(algo, algo)
    looking = st.empty()        # a stored schedule is verified again before it is shown: seconds on large designs
    looking.progress(0.0, text=f"{label}: looking in the results cache; a stored schedule is verified again …")
    try:
        result, hit = cached_synthesize(topo, synth, collective, cache=ResultsCache.default(),
                                        total_bytes=total_bytes, options=options, solve=solve)
    except jobs.Detached as gone:
        background_panel(label, gone.entry.key)
        st.stop()
    finally:
        looking.empty()
    return Solved(result, hit.saved_at if hit else time.time(), hit is not None)


BACKGROUND_POLL_S = 3.0      # how often a page looks after its solve in the background


def session_prefix() -> str:
    """This browser session's mark on the solves it leaves in the background (``studio.jobs.cancel``)."""
    from streamlit.runtime.scriptrunner import get_script_run_ctx

    ctx = get_script_run_ctx()
    return f"{ctx.session_id if ctx is not None else 'no-session'}|"


@st.fragment(run_every=BACKGROUND_POLL_S)
def background_panel(label: str, key: str) -> None:
    """A solve in the background: its phase, its seconds and a note, looked at again every ``BACKGROUND_POLL_S``
    seconds (a fragment's run, not the page's); the whole page runs again once the solve is done (or gone)."""
    from studio import jobs

    entry = jobs.background(key)
    if entry is None or entry.done.is_set():
        st.rerun(scope="app")
    entry.touch()
    phase = f": {entry.phase} {int(min(max(entry.fraction, 0.0), 1.0) * 100)}%" if entry.phase else ""
    st.progress(min(max(entry.fraction, 0.0), 1.0),
                text=f"{label}{phase} ({entry.elapsed():.0f} s; a long solve, running in the background at low "
                     f"priority so that every page stays quick; this page looks every {BACKGROUND_POLL_S:g} s and "
                     "shows the result when it is done)")


def queue_text(label: str, place: int, running: int) -> str:
    """What a page shows while its solve waits for a free solver (``studio.jobs.SolveQueue``)."""
    ahead = "next in line" if place == 1 else f"{place - 1} ahead of it in line"
    return (f"{label}: waiting for a free solver, {ahead} ({running} solve{'s' if running != 1 else ''} running; "
            "this app runs a few at once so that every page stays quick)")


def cache_note(solved: Solved, key: str) -> None:
    """'Cached' with the result's age when the page did not just solve it (from the results cache on disk, or
    kept in memory by the app), and a button that clears both."""
    age = time.time() - solved.solved_at
    if not solved.from_disk and age < 2:
        return
    from solvers.results_cache import Hit, ResultsCache

    where = "the results cache on disk" if solved.from_disk else "the app's memory"
    c1, c2 = st.columns([4, 1])
    c1.caption(f":material/cached: Cached: solved {Hit(None, solved.solved_at).age_text()} ago, answered from "
               f"{where}.")
    if c2.button("Clear cached results", key=f"{key}_clear_cache", icon=":material/delete_sweep:",
                 help="Delete the results cache on disk and the app's memory of solves; the next request solves "
                      "again."):
        from solvers.results_cache import UnsafeCache

        st.cache_resource.clear()
        st.cache_data.clear()
        store = ResultsCache.default()
        try:
            cleared = store.clear() if store is not None else 0
        except (UnsafeCache, OSError) as exc:       # a refused cache setting: the app's memory is cleared anyway
            st.error(f"Cleared the app's memory of solves; the results cache on disk was left: {exc}")
            return
        st.toast(f"Cleared {cleared} cached results.")
        st.rerun()


def cancel_slot(key: str, request: tuple, what: str):
    """Call before a solve that may run long. Returns a slot holding a Cancel button (``slot.empty()`` once the
    solve is back), or None when this very ``request`` was cancelled: then a note and a "Run it again" button
    stand in its place and the page should stop there. Clicking Cancel while the solve runs reruns the page, which
    stops the solve (``synthesize_with_bar``) and lands here with the button pressed."""
    cancelled = st.session_state.setdefault("cancelled_solves", {})
    if cancelled.get(key) == request:
        st.info(f"Cancelled: {what}. The session goes on; change a setting, or run it again.",
                icon=":material/cancel:")
        if not st.button("Run it again", key=f"{key}_again", icon=":material/replay:"):
            return None
        del cancelled[key]
    slot = st.empty()
    if slot.button("Cancel", key=f"{key}_cancel", icon=":material/stop_circle:",
                   help="Stop this solve (its worker process is killed) and keep the session."):
        cancelled[key] = request
        from studio import jobs

        jobs.cancel(session_prefix())         # a solve this page left in the background ends too
        slot.empty()
        st.rerun()
    return slot
