"""The Compare page's "Sweep on Dask" tab: a design sweep (``solvers.sweep``) on the embedded Dask cluster
(``studio.cluster``) with a progress bar, its table, a figure of time against the parameter, and the CSV; the
same grid as the CLI's ``sweep`` command."""
from __future__ import annotations

import pandas as pd
import plotly.graph_objects as go
import streamlit as st

from solvers.sweep import FIELDS, SweepError, grid, parse_param, run
from solvers.compare import algorithm_order
from studio.cluster import ClusterError, executor

MAX_PAGE_TASKS = 2000          # the CLI takes larger grids (and resumes them)
COLLECTIVES = ["allgather", "reduce_scatter", "allreduce"]


def _grid():
    c1, c2, c3 = st.columns([3, 2, 2])
    template = c1.text_input("Template", "gkautz(4,{N})", key="sw_template",
                             help="An expression with parameters in braces: torus({A},{A}), gkautz({D},{N}).")
    params_text = c2.text_input("Parameters", "N=64:256:64", key="sw_params",
                                help="NAME=VALUES separated by spaces; VALUES a list 8,16,32 or an inclusive range "
                                     "start:stop:step.")
    sizes_text = c3.text_input("Sizes (bytes)", "1e6, 1e8", key="sw_sizes")
    c1, c2, c3, c4 = st.columns([3, 2, 1, 1])
    algos = c1.multiselect("Synthesizers", algorithm_order(), default=["bfb", "ring"], key="sw_algos")
    colls = c2.multiselect("Collectives", COLLECTIVES, default=["allgather", "allreduce"], key="sw_colls")
    workers = int(c3.number_input("Worker processes", 1, 16, 2, key="sw_workers",
                                  help="Of the embedded Dask LocalCluster, one single-threaded process each."))
    limit = float(c4.number_input("Time limit (s)", 1, 3600, 300, key="sw_limit",
                                  help="Per task: a synthesis still running after this long stops, and its rows "
                                       "say time-out."))
    params = dict(parse_param(p) for p in params_text.split())
    try:
        sizes = [float(s) for s in sizes_text.replace(";", ",").split(",") if s.strip()]
    except ValueError:
        raise SweepError(f"'{sizes_text}' is not a list of sizes in bytes (1e6, 1e8)") from None
    tasks = grid(template, params, algos, colls, sizes, max_nodes=4096, time_limit_s=limit)
    if len(tasks) > MAX_PAGE_TASKS:
        raise SweepError(f"{len(tasks)} tasks: the page runs up to {MAX_PAGE_TASKS} (the CLI's sweep command "
                         "takes more and resumes)")
    return tasks, list(params), workers


def figure(frame: pd.DataFrame, param: str, size: float) -> go.Figure:
    """The runtime model's time against ``param`` at ``size``, one line per synthesizer and collective."""
    fig = go.Figure()
    ok = frame[(frame["status"] == "ok") & (frame["bytes"] == size)]
    for (algo, coll), part in ok.groupby(["algo", "collective"], sort=True):
        part = part.sort_values(param)
        fig.add_trace(go.Scatter(x=part[param], y=part["time_us"], mode="lines+markers", name=f"{algo} {coll}"))
    fig.update_layout(title=f"Runtime model time at M = {size:.4g} bytes", xaxis_title=param,
                      yaxis_title="time (µs)", yaxis_type="log", height=420)
    return fig


def render() -> None:
    st.caption("Every design of the grid × synthesizer × collective is synthesized, verified and timed by the runtime "
               "model at each size, on an embedded Dask LocalCluster (one worker process per CPU by default). "
               "For larger grids, a running Dask cluster (--scheduler) or resuming after Ctrl-C, use the CLI's "
               "sweep command.")
    try:
        tasks, names, workers = _grid()
    except SweepError as exc:
        st.error(str(exc))
        return
    st.caption(f"{len(tasks)} tasks.")
    key = (tuple(t.key for t in tasks), tuple(tasks[0].sizes) if tasks else (), workers)
    kept = st.session_state.setdefault("sw_results", {})
    if st.button("Run the sweep", key="sw_run", type="primary", icon=":material/play_arrow:"):
        rows: list[dict] = []
        bar = st.progress(0.0, text="starting the Dask cluster …")
        try:
            with executor(None, workers) as (pool, where, count):
                bar.progress(0.0, text=f"{len(tasks)} tasks on {where}")
                run(tasks, pool, lambda task, got: rows.extend(got),
                    progress=lambda done, total: bar.progress(done / total, text=f"{done}/{total} tasks on {where}"),
                    in_flight=2 * count)
        except ClusterError as exc:
            st.error(str(exc))
            return
        bar.empty()
        kept.clear()
        kept[key] = pd.DataFrame(rows, columns=names + list(FIELDS))
    frame = kept.get(key)
    if frame is None:
        st.info("Press Run the sweep.")
        return
    ok = int((frame["status"] == "ok").sum())
    st.success(f"{len(frame)} rows, {ok} verified and timed; the others say why in their message.",
               icon=":material/verified:")
    if names:
        size = st.selectbox("Figure at size", sorted(frame["bytes"].unique()), key="sw_fig_size",
                            format_func=lambda m: f"{m:.4g} bytes")
        st.plotly_chart(figure(frame, names[0], size), key="sw_chart")
    st.dataframe(frame, key="sw_table", hide_index=True)
    st.download_button("Rows as CSV", frame.to_csv(index=False), file_name="sweep.csv", mime="text/csv",
                       key="sw_csv", on_click="ignore")
