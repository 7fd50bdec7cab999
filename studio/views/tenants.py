"""The Compare page's "Several collectives at once" tab: a tenants file (JSON or YAML, typed or uploaded) on one
design, each chosen synthesizer run jointly (TACOS greedy, TEN ILP, TACCL-like, TE-CCL) or apart and laid over the
others (``solvers.tenants``); every tenant's schedule verified, all timed together by the runtime model for the
sidebar's workload; the makespans normalized to the first row (TACOS Table V) and each tenant's finish beside
its time alone, as a table and a bar chart."""
from __future__ import annotations

import plotly.graph_objects as go
import streamlit as st

from solvers.core.errors import NotApplicable, ScheduleError
from solvers.tenants import JOINT, MAX_FILE_BYTES, TenantsError, read_tenants, synthesize_tenants
from studio import workload
from studio.design import load_expression
from studio.figures import charts
from studio.figures.titles import place_title
from studio.messages import for_page
from studio.uploads import read_upload_text
from topologies import TopologyError

EXAMPLE = """# TACOS Table V: three collectives at once on a 6x6 mesh
- {name: bcast, collective: broadcast, root: 2, bytes: 1048576}
- {name: reduce, collective: reduce, root: 17, bytes: 1048576}
- {name: ag, collective: allgather, bytes: 37748736}
"""
DEFAULT_EXPR = "mesh(6,6)"
ALGOS = ("tacos_ilp", "tacos", "taccl_like", "teccl", "direct", "sptree")
TIME_LIMIT_S = 20.0             # per ILP horizon or TE-CCL instance on this page
MAX_GPUS = 256


def run_all(expr: str, text: str, algos: tuple[str, ...], work) -> tuple[list[dict], list]:
    """(one row per synthesizer, the results that ran) for the tenants in ``text`` on ``expr``; a synthesizer that
    cannot serve them gives a row that says why. TenantsError / TopologyError for the inputs themselves."""
    tenants = read_tenants(text)
    topo = load_expression(expr, MAX_GPUS)
    rows, results = [], []
    for algo in algos:
        mode = "joint" if algo in JOINT else "separate"
        options = {"time_limit": TIME_LIMIT_S} if algo in ("tacos_ilp", "taccl_like", "teccl") else {}
        try:
            result = synthesize_tenants(topo, tenants, algo, mode, options, work)
        except (NotApplicable, ScheduleError, ValueError) as exc:
            rows.append({"algo": algo, "mode": mode, "status": f"not applicable: {for_page(exc)}"})
            continue
        results.append(result)
        rows.append({"algo": algo, "mode": mode, "status": "ok: every tenant verified",
                     "makespan (µs)": result.makespan_us, "synthesis (s)": result.synthesis_s})
    base = next((r["makespan (µs)"] for r in rows if "makespan (µs)" in r), None)
    for r in rows:
        if "makespan (µs)" in r:
            r["normalized"] = r["makespan (µs)"] / base
    return rows, results


def finish_figure(results) -> go.Figure:
    """Each tenant's finish with the others beside its time alone, one group of bars per synthesizer."""
    fig = go.Figure()
    for result in results:
        names = [r.tenant.name for r in result.rows]
        fig.add_bar(name=f"{result.algo} ({result.mode})", x=names, y=[r.finish_us for r in result.rows],
                    hovertext=[f"alone {r.alone_us:.4g} µs" for r in result.rows])
    fig.update_layout(barmode="group", yaxis_title="finish (µs), all tenants running", xaxis_title="tenant",
                      yaxis_rangemode="tozero", height=380)
    place_title(fig, "Each tenant's finish with the others on the fabric")
    return fig


@st.cache_data(show_spinner=False, max_entries=8)
def _cached(expr: str, text: str, algos: tuple[str, ...], prices: tuple):
    from solvers.runtime import Workload

    return run_all(expr, text, algos, Workload(*prices))


def render() -> None:
    work = workload.current()
    st.caption("Several collectives share one design: broadcast, reduce, gather, scatter, allgather, reduce-scatter "
               "and allreduce tenants, each with its root and size. TACOS (greedy and ILP), TACCL-like and TE-CCL "
               "synthesize them jointly, the links shared in their own models; the others synthesize each tenant "
               "alone. Every tenant's schedule is verified on its own, and the runtime model times them together "
               f"for the sidebar's prices ({work.price_label}). The ILP and TE-CCL get {TIME_LIMIT_S:g} s a solve.")
    c1, c2 = st.columns([3, 2])
    expr = c1.text_input("Design", DEFAULT_EXPR, key="ten_expr")
    text = c1.text_area("Tenants (YAML or JSON: name, collective, root, bytes, group)", EXAMPLE, key="ten_text",
                        height=150)
    upload = c1.file_uploader("or a tenants file", type=["json", "yaml", "yml"], key="ten_upload")
    algos = c2.multiselect("Synthesizers", list(ALGOS), default=["tacos_ilp", "tacos", "taccl_like", "direct"],
                           key="ten_algos", help="The first row is what the others are normalized to.")
    if upload is not None:
        try:
            text = read_upload_text(upload, MAX_FILE_BYTES, "the tenants file")
        except ValueError as exc:
            st.error(for_page(exc))
            return
    if not algos:
        st.info("Choose at least one synthesizer.")
        return
    if not st.button("Run the tenants", key="ten_run", type="primary", icon=":material/play_arrow:"):
        st.info("Press Run the tenants.")
        return
    try:
        with st.spinner("Synthesizing and timing the tenants …"):
            rows, results = _cached(expr.strip(), text, tuple(algos), work.runtime.key)
    except (TenantsError, TopologyError, ValueError) as exc:
        st.error(for_page(exc))
        return
    st.dataframe(rows, hide_index=True, key="ten_table")
    if results:
        per_tenant = [{"algo": r.algo, **t.as_dict()} for r in results for t in r.rows]
        st.dataframe(per_tenant, hide_index=True, key="ten_rows")
        charts.show(finish_figure(results), "ten_chart")
    else:
        st.warning("No synthesizer served these tenants; each row says why.")
