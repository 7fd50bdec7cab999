"""The Training page (issue 57; the direct-connect paper's §8.4, Fig. 9 and App. A.4): one training iteration of a
model on each of several designs, simulated on a compute and a communication stream (``solvers.training``, the
CLI's ``train`` command). The model is a preset priced by the FLOPs model on a GPU preset, or an uploaded per-layer
profile (CSV); every allreduce is priced by the design's cheapest verified schedule and every all-to-all by the
MCF rate, at the sidebar's alpha and B. The work runs in a child process behind a progress bar with a Cancel
button. The page shows Fig. 9's breakdown bars per design, the timeline of one iteration (Fig. 16), each design's
priced collectives with "Open in Schedule", and the results as JSON."""
from __future__ import annotations

import hashlib

import streamlit as st

from solvers.core.errors import NotApplicable, ScheduleError
from solvers.training import BUCKETS, DEFAULT_EFFICIENCY, GPUS, PARALLEL, PROFILE_COLUMNS, TrainingError
from solvers.training import model_presets
from studio import navigation, workload
from studio.design import DEFAULT_EXPR, current_design, is_import, line_key, load_design, load_line
from studio.figures.spec import plotly_figure
from studio.jobs import JobError
from studio.messages import for_page
from studio.figures.training import (breakdown_figure, collective_rows, collectives_table, default_designs,
                                     results_json, schedule_bytes, schedule_target, summary_table, timeline_figure,
                                     train_job)
from studio.widgets import queue_text
from topologies import TopologyError

DEFAULT_MODEL = "switch-base-128"
MAX_DESIGNS = 8
KEPT_RUNS = 4                            # runs the session keeps, newest last
PARALLEL_HELP = {"dp": "data parallel (PyTorch DDP): gradients allreduced in buckets during backward",
                 "ep": "expert parallel: experts sharded over all nodes, all-to-all around each expert layer "
                       "(App. A.4)",
                 "tp": "tensor parallel: the design is one group, each layer split N ways",
                 "pp": "pipeline parallel: the nodes are stages in order (GPipe)",
                 "tp-dp": "tensor parallel inside a box, data parallel across boxes: a design made of boxes "
                          "(dgx_a100, mi250, cluster)",
                 "tp-pp": "tensor parallel inside a box, each box a pipeline stage (GPipe): a design made of "
                          "boxes"}
SCHEDULE_KEY = "tr_open"                 # the Schedule page to open on the next run: (expr, algo, coll)


def _profile():
    """(layers, label, digest) of an uploaded profile, (None, None, None) without one, or False after one error
    line. The upload is read through ``studio.uploads`` (at most the profile reader's cap, UTF-8) and parsed by
    ``solvers.training.parse_profile``."""
    from solvers.training import parse_profile
    from solvers.training.profile import MAX_PROFILE_BYTES
    from studio.uploads import read_at_most

    upload = st.file_uploader("Per-layer profile (CSV)", type=["csv", "txt"], key="tr_profile_file",
                              help="One row per layer in forward order; columns " + ", ".join(PROFILE_COLUMNS)
                                   + " (expert and tokens optional). Times in ms on one GPU, bytes per node.")
    if upload is None:
        st.info("Upload a profile; until then nothing is simulated.")
        return False
    data = read_at_most(upload, MAX_PROFILE_BYTES)
    try:
        if len(data) > MAX_PROFILE_BYTES:
            raise TrainingError(f"{upload.name} is larger than {MAX_PROFILE_BYTES // 2 ** 20} MiB")
        try:
            text = data.decode("utf-8")
        except UnicodeDecodeError:
            raise TrainingError(f"{upload.name} is not UTF-8 text") from None
        layers = parse_profile(text, upload.name)
    except TrainingError as exc:
        st.error(for_page(exc))
        return False
    return layers, f"profile {upload.name}", hashlib.sha256(data).hexdigest()


def _inputs():
    """The page's inputs as (designs, request, key), or None after one error line. ``request`` is what the job
    takes (``studio.figures.training.train_one``); ``key`` identifies the run (the profile by its digest)."""
    presets = model_presets()
    c1, c2, c3 = st.columns([3, 2, 2])
    source = c1.radio("Model", ["Preset", "Profile CSV"], key="tr_source", horizontal=True,
                      help="A preset's layers come from the FLOPs model on the GPU below; a profile gives measured "
                           "per-layer times (the paper's own input, App. A.4).")
    parallel = c2.selectbox("Parallelism", list(PARALLEL), index=list(PARALLEL).index("ep"), key="tr_parallel",
                            format_func=lambda p: f"{p}: {PARALLEL_HELP[p].split(':')[0]}",
                            help=" · ".join(f"{k}: {v}" for k, v in PARALLEL_HELP.items()))
    bucket = c3.selectbox("DDP bucket", ["best"] + list(BUCKETS), key="tr_bucket",
                          help="Gradients are allreduced once a bucket of this capacity fills; best simulates all "
                               "four and keeps the fastest iteration.")
    profile = label = digest = None
    if source == "Preset":
        c1, c2, c3, c4 = st.columns([3, 2, 2, 2])
        model = c1.selectbox("Model preset", list(presets), index=list(presets).index(DEFAULT_MODEL),
                             key="tr_model", format_func=lambda m: f"{m}: {presets[m].description}")
        gpu = c2.selectbox("GPU", list(GPUS), key="tr_gpu",
                           help=" · ".join(f"{k}: {g.peak_tflops:g} TFLOP/s, {g.source}" for k, g in GPUS.items()))
        efficiency = c3.number_input("Efficiency", 0.01, 1.0, DEFAULT_EFFICIENCY, 0.05, key="tr_efficiency",
                                     help="The share of the GPU's dense BF16 peak the layers reach (the FLOPs "
                                          "model's time = FLOPs / (peak × efficiency)).")
        bpp = c4.number_input("Bytes per parameter", 0.125, 16.0, 2.0, 0.5, key="tr_bpp",
                              help="Bytes of each parameter, gradient and activation element (2: BF16).")
    else:
        read = _profile()
        if read is False:
            return None
        profile, label, digest = read
        model, gpu, efficiency, bpp = label, "A100", None, 2.0
    if "tr_designs" not in st.session_state:        # the session's current design, a ring and a torus of its N
        key, current = current_design()
        try:
            n = load_design(key).n if is_import(key) else None
        except TopologyError:
            key, current, n = DEFAULT_EXPR, DEFAULT_EXPR, None
        st.session_state["tr_designs"] = "\n".join(default_designs(current, n))
    text = st.text_area("Designs, one expression per line", key="tr_designs", height=100,
                        help="Any expression the studio takes (biring(8), torus(4,4), gkautz(4,256), ...); each "
                             "runs the same job on all of its nodes.")
    runtime = st.checkbox("Price allreduces by the runtime model (where the schedule is small enough)",
                          key="tr_runtime", help="Off: the paper's step model, T_L alpha + T_B M/B.")
    designs = list(dict.fromkeys(line.strip() for line in text.splitlines() if line.strip()))
    if not designs:
        st.error("Give at least one design expression.")
        return None
    if len(designs) > MAX_DESIGNS:
        st.error(f"{len(designs)} designs: at most {MAX_DESIGNS} on the page.")
        return None
    if parallel == "ep" and not (presets[model].moe if profile is None else any(layer.expert for layer in profile)):
        st.error(f"Expert parallelism needs a mixture-of-experts model: {model} has no expert layers (choose a "
                 "Switch model, or dp).")
        return None
    imports = {}
    for expr in designs:            # every design loads and suits the job before anything is priced
        try:
            topo = load_line(expr)
            if is_import(line_key(expr)):
                imports[expr] = topo
            if parallel == "ep":
                from solvers.training.simulate import check_request

                check_request(model if profile is None else None, profile, topo.n)
        except (TopologyError, ValueError) as exc:
            st.error(f"{expr}: {for_page(exc)}")
            return None
    work = workload.current()
    from solvers.runtime import Workload

    prices = Workload(1.0, work.prices, work.alpha_us, work.bandwidth_gbs, work.source)
    request = {"model": model, "profile": profile, "parallel": parallel, "gpu": gpu, "bucket": bucket,
               "efficiency": efficiency, "bytes_per_param": float(bpp), "workload": prices, "runtime": runtime,
               "topologies": imports}
    key = (tuple(line_key(d) for d in designs), model, digest, parallel, gpu, bucket, efficiency, float(bpp), prices.key, runtime)
    return designs, request, key


def _run(designs: list[str], request: dict) -> list[dict] | None:
    """Every design simulated in a child process behind a progress bar with a Cancel button; the results, or None
    after one error line."""
    from studio import jobs

    cancel = st.empty()
    cancel.button("Cancel", key="tr_cancel", icon=":material/stop_circle:",
                  on_click=lambda: st.session_state.update(tr_cancelled=True),
                  help="Stop the simulation (its worker process is killed) and keep the session.")
    bar = st.progress(0.0, text=f"Simulating {len(designs)} design(s) …")
    state = {"f": 0.0, "text": f"{len(designs)} design(s)"}

    def progress(phase: str, fraction: float) -> None:
        state["f"], state["text"] = min(max(fraction, 0.0), 1.0), phase

    def tick(elapsed: float) -> None:
        bar.progress(state["f"], text=f"Pricing and simulating: {state['text']} ({elapsed:.0f} s)")

    try:
        return jobs.run(train_job, designs, request, progress=progress, tick=tick,
                        queued=lambda place, running: bar.progress(0.0, text=queue_text("Simulating", place,
                                                                                         running)))
    except (TopologyError, NotApplicable, ScheduleError, ValueError, JobError) as exc:
        st.error(f"The simulation stopped: {for_page(exc)}")
        return None
    finally:
        bar.empty()
        cancel.empty()


def _ask_schedule(expr: str, algo: str, coll: str, nbytes: float) -> None:
    """Button callback: the Schedule page's design, synthesizer, collective and the sidebar's M (its size) set
    before the next run makes any widget (the sidebar's M may be one), and the page opened on that run."""
    from solvers.runtime.workload import MAX_BYTES

    expr = line_key(expr)           # the import by its key; an expression becomes the session's design
    if not is_import(expr):
        st.session_state["design_expr"] = expr
    st.session_state.update({"algo": algo, "coll": coll,
                             "w_bytes": float(min(max(nbytes, 1.0), MAX_BYTES)), SCHEDULE_KEY: (expr, algo, coll)})


def _open_schedule() -> None:
    """Switch to the Schedule page when a button asked for it on the last run (``_ask_schedule``)."""
    asked = st.session_state.pop(SCHEDULE_KEY, None)
    if asked is not None:
        expr, algo, coll = asked
        st.switch_page(navigation.SCHEDULE, query_params={"expr": expr, "algo": algo, "coll": coll})


def _collectives(results: list[dict]) -> None:
    by_design = {r["design"]: r for r in results}
    design = st.selectbox("Design", list(by_design), key="tr_pick",
                          help="The design whose timeline and collectives are shown.")
    result = by_design[design]
    st.plotly_chart(plotly_figure(timeline_figure(result)), key="tr_timeline")
    st.subheader("Collectives of one iteration")
    st.dataframe(collectives_table(result), hide_index=True, key="tr_colls")
    rows = [(i, r) for i, r in enumerate(collective_rows(result)) if schedule_target(r) is not None]
    if rows:
        c1, c2 = st.columns([5, 2])
        pick = c1.selectbox("Collective", [i for i, _ in rows], key="tr_open_row",
                            format_func=lambda i: _row_text(collective_rows(result)[i]))
        row = dict(rows)[pick]
        algo, coll = schedule_target(row)
        nbytes = schedule_bytes(row, result["nodes"])
        c2.markdown("&nbsp;")
        c2.button("Open in Schedule", key="tr_open_btn", icon=":material/schedule:",
                  on_click=_ask_schedule, args=(design, algo, coll, nbytes),
                  help=f"The Schedule page on {design}: {algo}'s {coll} of M = {nbytes:.4g} bytes (the "
                       "sidebar's M is set to it).")
        if coll == "alltoall":
            st.caption(f"The all-to-all is priced by the MCF rate; on Schedule it opens with TE-CCL, the "
                       f"registry's synthesizer of all-to-all schedules, at M = {nbytes:.4g} bytes: the whole "
                       f"vector of the {result['nodes']} nodes' inputs, each sending {row['bytes']:.4g}.")
    for note in result["notes"]:
        st.caption(note)


def _row_text(row: dict) -> str:
    return (f"{row['collective']} of {row['bytes'] / 2 ** 20:.4g} MB × {row['count']}, {row['ms each']:.4g} ms each "
            f"({row['priced by']}{', ' + row['algo'] if row['algo'] else ''})")


def render() -> None:
    _open_schedule()
    st.title("Training")
    st.caption("One training iteration of a model on each design (the direct-connect paper's Fig. 9 and App. A.4; "
               "the CLI's `train` command): compute and communication on two streams, every allreduce priced by "
               "the design's cheapest verified schedule and every all-to-all by the MCF rate, at the sidebar's "
               "alpha and B.")
    asked = _inputs()
    if asked is None:
        return
    designs, request, key = asked
    kept = st.session_state.setdefault("tr_runs", {})
    pressed = st.button(f"Run ({len(designs)} design{'s' if len(designs) != 1 else ''})", key="tr_run",
                        type="primary", icon=":material/play_arrow:")
    if pressed:
        st.session_state.pop("tr_cancelled", None)
        results = _run(designs, request)
        if results is None:
            return
        kept.pop(key, None)
        kept[key] = results
        while len(kept) > KEPT_RUNS:
            kept.pop(next(iter(kept)))
    elif st.session_state.pop("tr_cancelled", False):
        st.info("Cancelled: the simulation stopped. Press Run to start it again.", icon=":material/cancel:")
        return
    results = kept.get(key)
    if results is None:
        st.info(f"Press Run to simulate one iteration of {request['model']} ({request['parallel']}) on "
                f"{len(designs)} design(s).")
        return
    st.plotly_chart(plotly_figure(breakdown_figure(results)), key="tr_breakdown")
    st.dataframe(summary_table(results), hide_index=True, key="tr_summary")
    shown = {k: v for k, v in request.items() if k not in ("profile", "workload")}
    shown["workload"] = {"alpha_us": request["workload"].alpha_us,
                         "bandwidth_gbs": request["workload"].bandwidth_gbs, "prices": request["workload"].prices}
    st.download_button("Results JSON", results_json(shown, results), file_name="training.json",
                       mime="application/json", key="tr_json", icon=":material/download:")
    st.subheader("The timeline of one iteration")
    _collectives(results)
