"""The Failures page (issue 42): what failed links, GPUs, NICs, switches or boxes do to one or more designs and to
each synthesizer's schedule on them. Every failure set is ``solvers.failures.analyse`` (the CLI's ``failures``
command, one set at a time) run in a child process behind a progress bar with a Cancel button; the page shows the
CDF of algbw over the sets as a fraction of the healthy design's, a table of every set, the worst set drawn on
its design, and opens any set on the Schedule page as a ``fail(...)`` expression."""
from __future__ import annotations

import streamlit as st

from solvers.core.errors import NotApplicable, ScheduleError
from solvers.core.schedule import Collective
from solvers.failures import KINDS, FailureTask, failure_sets
from solvers.synthesize import ALGORITHMS
from studio.design import current_design, current_or, is_import, load_expression
from studio import navigation, workload
from studio.views.failures import (OVER_HEALTHY, analyse_job, cdf_figure, count_text, failed_figure, fraction,
                                  kept_text, sets_table, summary_table, tasks_text, worst_row)
from studio.figures.topology import MAX_DRAWN_NODES
from studio.jobs import JobError
from studio.messages import for_page
from studio.widgets import queue_text
from topologies import TopologyError

DEFAULT_DESIGNS = "torus(4,4)\ncirculant(16,[1,4])"
DEFAULT_ALGOS = ["forestcoll", "bfb"]
MAX_PAGE_SETS = 2000          # failure sets (all designs) one Run may analyse; more is the CLI's failures command
MAX_DESIGNS = 8
KEPT_RUNS = 4                 # runs the session keeps, newest last


def _inputs():
    """The page's inputs as (designs, algos, collective, kind, k, samples, seed), or None after one error line."""
    key, name = current_design()
    if is_import(key):
        st.info(f"The current design, the import {name}, is not analysed here: failure sets run on expressions "
                "(the CLI's failures command takes the file: failures FILE --links 1).",
                icon=":material/upload_file:")
    text = st.text_area("Designs, one expression per line", current_or(DEFAULT_DESIGNS) if not is_import(key)
                        else DEFAULT_DESIGNS, key="fl_designs", height=90,
                        help="Any expression the studio takes (torus(4,4), circulant(16,[1,4]), dgx_a100(boxes=2), "
                             "...); each is analysed with the same failures.")
    c1, c2, c3 = st.columns([3, 2, 2])
    algos = c1.multiselect("Synthesizers", list(ALGORITHMS), DEFAULT_ALGOS, key="fl_algos",
                           help="Each runs again on every degraded fabric, verified and timed for the sidebar's "
                                "workload.")
    collectives = [c.value for c in Collective.every() if c.value in ("allgather", "reduce_scatter", "allreduce")]
    coll = c2.selectbox("Collective", collectives, key="fl_coll")
    kind = c3.selectbox("What fails", list(KINDS), key="fl_kind", format_func=lambda k: f"{k}: {KINDS[k]}")
    c1, c2, c3 = st.columns(3)
    k = int(c1.number_input("K (elements failed at once)", 1, 64, 1, key="fl_k"))
    samples = int(c2.number_input("Samples (0 = every set of K)", 0, MAX_PAGE_SETS, 0, key="fl_samples",
                                  help="0 analyses every set of K elements; S > 0 draws S random sets."))
    seed = int(c3.number_input("Seed", 0, 2**31 - 1, 0, key="fl_seed", help="The same seed draws the same sets."))
    designs = list(dict.fromkeys(line.strip() for line in text.splitlines() if line.strip()))
    if not designs:
        st.error("Give at least one design expression.")
        return None
    if len(designs) > MAX_DESIGNS:
        st.error(f"{len(designs)} designs: at most {MAX_DESIGNS} on the page.")
        return None
    if not algos:
        st.error("Choose at least one synthesizer.")
        return None
    return designs, tuple(algos), coll, kind, k, samples, seed


def _tasks(designs, algos, coll, kind, k, samples, seed, work_key):
    """{design: [healthy task, failure tasks ...]} and the topologies, or None after one error line naming the
    design that cannot be analysed."""
    tasks, topos = {}, {}
    for expr in designs:
        try:
            topo = load_expression(expr)
            sets = failure_sets(topo, kind, k, samples or None, seed)
        except (TopologyError, ValueError) as exc:
            st.error(f"{expr}: {for_page(exc)}")
            return None
        make = lambda failed, expr=expr: FailureTask(expr, kind, failed, algos, coll, work_key)  # noqa: E731
        tasks[expr] = list(dict.fromkeys([make(())] + [make(tuple(e.name for e in s)) for s in sets]))
        topos[expr] = topo
    total = sum(len(t) - 1 for t in tasks.values())
    if total > MAX_PAGE_SETS:
        st.error(f"{total:,} failure sets: above the page's {MAX_PAGE_SETS:,}; set Samples, or run the CLI's "
                 "failures command.")
        return None
    return tasks, topos


def _run(tasks: dict) -> dict | None:
    """Every task analysed in a child process behind a progress bar with a Cancel button: {design: (healthy row,
    failure rows)}, or None after one error line."""
    from studio import jobs

    flat = [t for ts in tasks.values() for t in ts]
    cancel = st.empty()
    cancel.button("Cancel", key="fl_cancel", icon=":material/stop_circle:",
                  on_click=lambda: st.session_state.update(fl_cancelled=True),
                  help="Stop the analysis (its worker process is killed) and keep the session.")
    said = f"{len(flat)} runs ({tasks_text(flat)})"
    bar = st.progress(0.0, text=f"Analysing {said} …")
    state = {"f": 0.0, "text": said}

    def progress(phase: str, fraction: float) -> None:
        state["f"], state["text"] = min(max(fraction, 0.0), 1.0), phase

    def tick(elapsed: float) -> None:
        bar.progress(state["f"], text=f"Analysing: {state['text']} ({elapsed:.0f} s)")

    try:
        rows = jobs.run(analyse_job, flat, progress=progress, tick=tick,
                        queued=lambda place, running: bar.progress(0.0, text=queue_text("Analysing", place, running)))
    except (TopologyError, NotApplicable, ScheduleError, ValueError, JobError) as exc:
        st.error(f"The analysis stopped: {for_page(exc)}")
        return None
    finally:
        bar.empty()
        cancel.empty()
    out, i = {}, 0
    for expr, ts in tasks.items():
        out[expr] = (rows[i], rows[i + 1:i + len(ts)])
        i += len(ts)
    return out


def _open_schedule(expr: str, algo: str, coll: str) -> None:
    """Load the design, synthesizer and collective into the session and open the Schedule page on them."""
    st.session_state.update({"design_expr": expr, "algo": algo, "coll": coll})
    st.switch_page(navigation.SCHEDULE, query_params={"expr": expr, "algo": algo, "coll": coll})


def _worst(results: dict, topos: dict, algos, kind: str) -> None:
    c1, c2 = st.columns(2)
    design = c1.selectbox("Design", list(results), key="fl_worst_design")
    algo = c2.selectbox("Worst for", list(algos), key="fl_worst_algo")
    healthy, rows = results[design]
    row = worst_row(healthy, rows, algo)
    topo = topos[design]
    if row is None:
        st.info(f"{algo} ran on no failure set of {design}.")
        return
    failed = [n for n in str(row["failed"]).split(" + ")]
    base = healthy.get(f"{algo}_algbw_GBps")
    bw = row.get(f"{algo}_algbw_GBps")
    how = ("the GPUs are cut apart" + (f" ({row['cut_off']} cut off)" if row.get("cut_off") else "")
           if row.get("connected") is False else kept_text(algo, bw, base))
    if topo.num_nodes > MAX_DRAWN_NODES:
        st.info(f"The worst set for {algo} on {design}: {row['failed']}; {how} ({topo.num_nodes} nodes: too many "
                "to draw).")
        return
    st.plotly_chart(failed_figure(topo, kind, failed, f"The worst set for {algo} on {design}: {row['failed']} "
                                  f"(red); {how}"), key="fl_worst_fig")


def _open_panel(results: dict, algos, coll: str) -> None:
    choices = [(design, i) for design, (_, rows) in results.items() for i, r in enumerate(rows) if r.get("expr")]
    if not choices:
        st.info("No failure set can be opened as an expression (designs from files).")
        return
    c1, c2, c3 = st.columns([4, 2, 2])
    pick = c1.selectbox("Failure set", choices, key="fl_open_set",
                        format_func=lambda c: f"{c[0]}: {results[c[0]][1][c[1]]['failed']}")
    algo = c2.selectbox("Synthesizer", list(algos), key="fl_open_algo")
    row = results[pick[0]][1][pick[1]]
    c3.markdown("&nbsp;")
    if c3.button("Open in Schedule", key="fl_open", icon=":material/schedule:",
                 help=f"The Schedule page on {row['expr']}: the schedule, its MSCCL bundle and NCCL graph."):
        _open_schedule(row["expr"], algo, coll)
    st.caption(f"As a design: `{row['expr']}`")


def render() -> None:
    st.title("Failures")
    st.caption("What failed links, GPUs, NICs, switches or boxes do to each design and to every schedule on it: "
               "each failure set's degraded fabric is scheduled again, verified and timed for the sidebar's "
               "workload, priced at the healthy design's scale (the CLI's `failures` command).")
    asked = _inputs()
    if asked is None:
        return
    work = workload.current().runtime
    made = _tasks(*asked, work.key)
    if made is None:
        return
    tasks, topos = made
    designs, algos, coll, kind, k, samples, seed = asked
    request = (tuple(designs), algos, coll, kind, k, samples, seed, work.key)
    total = sum(len(t) - 1 for t in tasks.values())
    kept = st.session_state.setdefault("fl_runs", {})
    pressed = st.button(f"Run ({count_text(total, len(tasks))})", key="fl_run", type="primary",
                        icon=":material/play_arrow:")
    if pressed:
        st.session_state.pop("fl_cancelled", None)
        results = _run(tasks)
        if results is None:
            return
        kept.pop(request, None)
        kept[request] = results
        while len(kept) > KEPT_RUNS:
            kept.pop(next(iter(kept)))
    elif st.session_state.pop("fl_cancelled", False):
        st.info("Cancelled: the analysis stopped. Press Run to start it again.", icon=":material/cancel:")
        return
    results = kept.get(request)
    if results is None:
        st.info(f"Press Run to analyse {count_text(total, len(tasks))} ({KINDS[kind]}) with {', '.join(algos)}: "
                "each healthy design is run too, as the baseline every fraction divides by.")
        return
    st.caption(f"{coll} for M = {work.total_bytes:.4g} bytes with {work.price_label}; algbw by the runtime model, "
               "every degraded fabric priced at the healthy design's scale; disconnected sets count as 0.")
    title = (f"{coll} algbw with K = {k} {kind} failed: the share of failure sets at or below each fraction of "
             "the healthy design's algbw")
    st.plotly_chart(cdf_figure(results, algos, coll, title), key="fl_cdf")
    if any((x := fraction(r, healthy, a)) is not None and x > 1.0 + 1e-9
           for healthy, rows in results.values() for r in rows for a in algos):
        st.caption(OVER_HEALTHY)
    st.subheader("Per design and synthesizer")
    st.dataframe(summary_table(results, algos), hide_index=True, key="fl_summary")
    st.subheader("Every failure set")
    st.dataframe(sets_table(results, algos), hide_index=True, key="fl_table")
    st.subheader("The worst failure set")
    _worst(results, topos, algos, kind)
    st.subheader("Schedule a failure set")
    _open_panel(results, algos, coll)
