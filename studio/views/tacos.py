"""TACOS in the app (Schedule page): its knobs, a synthesis with a progress bar, and the result panel - the
greedy's collective time beside the ingress lower bound, the restarts' jitter, a per-link Gantt chart of every
send, and for small fabrics the TACOS-ILP optimum beside the greedy.

TACOS schedules the fabric with its switches unwound (``topologies.unwind``); the panel says so and shows that
fabric's links.
"""
from __future__ import annotations

import pandas as pd
import streamlit as st

from solvers.synthesize import ALGORITHMS
from solvers.tacos import TacosResult, tacos_ilp
from solvers.tacos.ilp import MAX_BINARIES
from studio.figures.timelines import tacos_gantt
from studio.metric_grid import metric_columns
from studio.widgets import option_controls, synthesize_with_bar
from topologies.display import math_name

Options = tuple
ILP_MAX_NODES = 16
ILP_TIME_LIMIT_S = 60.0
MAX_GANTT_SENDS = 20_000


def knobs(prefix: str) -> Options:
    """Chunks per NPU, restarts, seed and the unwinding degree as widgets (from TACOS's declared options)."""
    return tuple(sorted(option_controls(ALGORITHMS["tacos"], prefix).items()))


@st.cache_resource(show_spinner=False, max_entries=8)
def cached_solve(key: str, collective: str, options: Options, total_bytes: float, _load):
    """``synthesize(..., "tacos")`` for the topology ``key`` names (``_load`` builds it; not hashed): a
    ``studio.widgets.Solved`` from the results cache, or from a child process behind a progress bar that a Cancel
    or Stop ends (``studio.widgets.synthesize_with_bar``)."""
    return synthesize_with_bar("TACOS", _load(), "tacos", collective, dict(options), total_bytes)


@st.cache_data(show_spinner=False, max_entries=8)
def _ilp(key: str, chunks: int, chunk_bytes: float, _topo):
    found = tacos_ilp(_topo, chunks, chunk_bytes, time_limit=ILP_TIME_LIMIT_S)
    return found.status, found.steps, found.time_us, found.quantum_us, found.tried


def metrics(found: TacosResult) -> None:
    """TACOS's own figures, after the runtime model's: its clock, the gap to its ingress bound, the chunk size,
    the synthesis time and the sends."""
    c = metric_columns(5)
    c[0].metric("TACOS's own clock (µs)", f"{found.time_us:.5g}", delta=f"its bound {found.bound_us:.5g}",
                delta_color="off" if found.gap < 1e-9 else "inverse",
                help="TACOS's own continuous-time estimate, a second figure: alpha + chunk/bandwidth per link at "
                     "the fabric's own link prices, one chunk per link at a time, phases one after the other; the "
                     "bound is the ingress lower bound, summed over phases. The runtime model above is the figure "
                     "every page and command shows.")
    c[1].metric("Gap to bound", f"{100 * found.gap:.2f} %")
    c[2].metric("Chunk (bytes)", f"{found.chunk_bytes:.4g}")
    c[3].metric("Synthesis (s)", f"{found.seconds:.3g}")
    c[4].metric("Sends", sum(p.sends for p in found.phases))


def phase_table(found: TacosResult) -> pd.DataFrame:
    return pd.DataFrame([{"phase": p.collective, "time (µs)": p.time_us, "ingress bound (µs)": p.bound_us,
                          "runs": len(p.spread_us), "worst run (µs)": max(p.spread_us), "events": p.events,
                          "sends": p.sends, "replaced": p.replaced, "dropped": p.dropped} for p in found.phases])


def panel(result, found: TacosResult, prefix: str, total_bytes: float) -> dict:
    """The runtime model's figures for the sidebar's workload, TACOS's own metrics, the phase table, the Gantt
    chart and the ILP comparison; returns the figures drawn."""
    from studio import workload
    from studio.widgets import runtime_metrics

    if found.unwound:
        st.info(f"Switches unwound: TACOS schedules {math_name(found.topology.name)} ({found.topology.n} NPUs, "
                f"{len(found.topology.links)} point-to-point links).")
    runtime_metrics(result, workload.current())
    st.markdown("**TACOS's own figures**")
    metrics(found)
    st.dataframe(phase_table(found), hide_index=True, key=f"{prefix}phases")
    figures = {}
    sends = sum(p.sends for p in found.phases)
    if sends <= MAX_GANTT_SENDS:
        fig = tacos_gantt(found.topology, found.timeline())
        st.plotly_chart(fig, key=f"{prefix}gantt")
        figures["gantt"] = fig
    else:
        st.info(f"{sends} sends are too many for the Gantt chart (limit {MAX_GANTT_SENDS}).")
    if found.topology.n <= ILP_MAX_NODES and found.collective.value == "allgather":
        with st.expander("Compare with the TACOS-ILP optimum (small fabrics)"):
            st.caption(f"The time-expanded ILP in HiGHS (at most {MAX_BINARIES:,} variables a horizon, "
                       f"{ILP_TIME_LIMIT_S:.0f} s per horizon); link times are rounded up to whole quanta of the "
                       "fastest link's chunk time.")
            if st.button("Solve the ILP", key=f"{prefix}ilp"):
                try:
                    status, steps, time_us, quantum, tried = _ilp(found.topology.expr or found.topology.name,
                                                                   found.chunks, found.chunk_bytes, found.topology)
                except Exception as exc:        # NotApplicable (too large) or a solver failure: one line
                    st.error(f"ILP not solved: {str(exc).splitlines()[0]}")
                else:
                    if steps is None:
                        st.warning(f"ILP {status}: no horizon solved within the limits ({tried}).")
                    else:
                        st.success(f"ILP {status}: {steps} quanta of {quantum:.4g} µs = {time_us:.5g} µs; greedy "
                                   f"{found.time_us:.5g} µs ({100 * (found.time_us / time_us - 1):+.2f} %).")
    return figures
