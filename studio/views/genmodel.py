"""The GenModel page: AllReduce plan costs under GenModel (Xiong et al., Table 2) beside the classic (alpha, beta,
gamma) model, the HCPS factorization explorer, calibration from measured CPS runs, and GenTree on switch trees
beside the flat Ring / CPS / RHD baselines. Sizes are floats (4 bytes) and times seconds, as in the paper.

All numbers come from ``solvers.genmodel``; the figures from ``studio.figures.genmodel``.
"""
from __future__ import annotations

import numpy as np
import pandas as pd
import streamlit as st

from solvers.genmodel import (FitError, GenModelParams, ModelOptions, PaperSim, ParamsError, Planner, TreeError,
                              best_plan, fit, hcps_cost, memory_lower_bound, ordered_factorizations, parse_tree,
                              plan_cost, read_measurements, synthesize_measurements, to_csv, traffic_lower_bound)
from solvers.genmodel.fit import MAX_CSV_CHARS, design_matrix
from solvers.genmodel.params import PRESETS
from solvers.genmodel.tree import PRESET_TREES
from studio.metric_grid import metric, metric_columns
from studio.tables import blank_missing
from studio.uploads import UploadError, read_upload_text
from studio.figures.genmodel import (breakdown_figure, coincide_note, comparison_figure, factorization_figure,
                                     fit_figure, servers_figure, size_figure, tree_figure)

PARAM_FIELDS = ("alpha", "beta", "gamma", "delta", "epsilon")
MAX_SERVERS = 1024
MAX_TREE_SERVERS = 1024
SIZES = [float(x) for x in np.logspace(4, 10, 25)]


def _options(prefix: str, default_mu: str) -> ModelOptions:
    c = st.columns(3)
    mus = ["1", "3", "5", "path"]
    mu = c[0].selectbox("α per step (μ)", mus, index=mus.index(default_mu), key=f"{prefix}mu",
                        help="1: the paper's formulas; 3: one switch hop in the Table 7 simulator; 5: through a "
                             "root; path: one α per node on each flow's path")
    fan = c[1].radio("Incast fan-in w", ["group", "senders"], horizontal=True, key=f"{prefix}fanin",
                     help="group: w = group size (paper text, Eq. 8); senders: w = N - 1 (fits Table 7)")
    hcps = c[2].radio("HCPS formula", ["corrected", "printed"], horizontal=True, key=f"{prefix}hcps",
                      help="corrected (digest §1.4.2) or Table 2 as printed (inconsistent, pitfall P1)")
    return ModelOptions(fan_in=fan, alpha_steps=mu if mu == "path" else float(mu), hcps=hcps)


def _params() -> GenModelParams | None:
    c = st.columns([2, 1])
    names = list(PRESETS)
    name = c[0].selectbox("Parameters", names, index=names.index("middle_sw+server"), key="gm_preset",
                          help="GenModel paper Table 5 tiers (s and s/float); cpu_testbed = Middle-SW + Server, "
                               "w_t = 9")
    classic = c[1].checkbox("classic (α, β, γ) only", key="gm_classic",
                            help="Switch off the δ and ε terms to see where the classic model's pick differs")
    base = PRESETS[name]
    with st.expander("Edit parameters", expanded=False):
        cols = st.columns(6)
        values = {}
        for col, f in zip(cols, PARAM_FIELDS):
            values[f] = col.number_input(f, min_value=0.0, value=float(getattr(base, f)), format="%.4g",
                                         key=f"gm_p_{name}_{f}")
        values["w_t"] = cols[5].number_input("w_t", min_value=0, max_value=10_000, value=int(base.w_t), step=1,
                                             key=f"gm_p_{name}_w_t")
    try:
        p = GenModelParams(**{k: float(v) for k, v in values.items() if k != "w_t"}, w_t=int(values["w_t"]))
    except ParamsError as exc:
        st.error(str(exc))
        return None
    return p.classic() if classic else p


def _calculator() -> None:
    c = st.columns(2)
    n = int(c[0].number_input("N, servers", min_value=2, max_value=MAX_SERVERS, value=12, step=1, key="gm_n"))
    size = float(c[1].number_input("S, floats per server", min_value=1.0, max_value=1e12, value=1e8, format="%.4g",
                                   key="gm_size"))
    params = _params()
    options = _options("gm_", "1")
    if params is None:
        return
    ranking = best_plan(n, size, params, options)
    rows = ranking.rows()
    table = pd.DataFrame(rows)
    table.insert(0, "", ["★" if i == 0 else "" for i in range(len(table))])
    st.success(f"Best for N = {n}, S = {size:g}: **{ranking.best.label}** ({ranking.best.total:.4g} s). "
               f"The classic (α, β, γ) model picks **{ranking.classic_best.label}**.")
    st.caption(f"Bounds: Theorem 1 memory (N+1)S/N = {memory_lower_bound(n, size):.4g} floats (δ-optimal); "
               f"Eq. 2 traffic 2(N-1)S/N = {traffic_lower_bound(n, size):.4g} floats per server "
               f"(bandwidth-optimal).")
    st.dataframe(blank_missing(table), hide_index=True, key="gm_table")
    st.plotly_chart(breakdown_figure(rows), key="gm_breakdown")
    shown = [c.label for c in ranking.costs[:6]]
    specs = {c.label: (c.kind if c.kind != "hcps" else c.fanins) for c in ranking.costs[:6]}
    series = {lab: [plan_cost(specs[lab], n, s, params, options).total for s in SIZES] for lab in shown}
    best = [min(shown, key=lambda lab: series[lab][i]) for i in range(len(SIZES))]
    st.plotly_chart(size_figure(SIZES, series, best), key="gm_sizes")
    note = coincide_note(SIZES, series)
    if note:
        st.caption(note + ".")
    servers = list(range(2, min(max(2 * n, 32), 64) + 1))
    by_n = {k: [plan_cost(k, m, size, params, options).total for m in servers] for k in ("cps", "ring")}
    by_n["best HCPS"] = [min(hcps_cost(f, size, params, options).total for f in ordered_factorizations(m))
                         for m in servers]
    st.plotly_chart(servers_figure(servers, by_n, params.w_t), key="gm_servers")


def _explorer() -> None:
    n = int(st.session_state.get("gm_n", 12))
    size = float(st.session_state.get("gm_size", 1e8))
    params = _params_quiet()
    options = ModelOptions(fan_in=st.session_state.get("gm_fanin", "group"),
                           alpha_steps=_mu_value(st.session_state.get("gm_mu", "1")),
                           hcps=st.session_state.get("gm_hcps", "corrected"))
    facts = ordered_factorizations(n)
    if len(facts) > 400:
        st.info(f"{len(facts)} factorizations: showing those with at most 3 steps")
        facts = [f for f in facts if len(f) <= 3]
    rows = []
    for f in facts:
        c = hcps_cost(f, size, params, options)
        rows.append({"plan": c.label, "steps": c.steps, "delta": c.delta, "epsilon": c.epsilon, "total": c.total,
                     "epsilon-optimal": c.epsilon == 0, "delta-optimal": len(f) == 1})
    rows.sort(key=lambda r: r["total"])
    st.markdown(f"Every ordered factorization of N = {n} (first step first), S = {size:g}. Theorem 2: for "
                f"N > w_t = {params.w_t} none is both ε- and δ-optimal.")
    st.plotly_chart(factorization_figure(rows), key="gm_fact_fig")
    st.dataframe(blank_missing(pd.DataFrame(rows)), hide_index=True, key="gm_fact_table")


def _mu_value(text: str):
    return "path" if text == "path" else float(text)


def _params_quiet() -> GenModelParams:
    name = st.session_state.get("gm_preset", "middle_sw+server")
    base = PRESETS.get(name, PRESETS["middle_sw+server"])
    try:
        p = GenModelParams(**{f: float(st.session_state.get(f"gm_p_{name}_{f}", getattr(base, f)))
                              for f in PARAM_FIELDS}, w_t=int(st.session_state.get(f"gm_p_{name}_w_t", base.w_t)))
    except ParamsError:
        p = base
    return p.classic() if st.session_state.get("gm_classic") else p


def _is_bench_log(text: str) -> bool:
    """Whether ``text`` reads as an nccl-tests / rccl-tests log (``solvers.runtime.measured``)."""
    from solvers.runtime.measured import LogError, read_bench_log

    try:
        read_bench_log(text)
    except LogError:
        return False
    return True


def _measured_pointer(show, lead: str = "") -> None:
    """Where an nccl-tests log is fitted: GenModel fits CPS runs at several N, a log times one machine at one N,
    so its α and B are fitted on the Schedule page's Measured box (``studio.views.measured``), linked here."""
    from studio import navigation

    show(f"{lead}An nccl-tests / rccl-tests log (.log) times one machine at one N: fit it on the Schedule page's "
         "**Measured** box (the runtime model's α and B, or `python -m studio calibrate LOG --topo EXPR`).")
    st.page_link(navigation.SCHEDULE, label="Schedule → Measured (nccl-tests / rccl-tests log)",
                 icon=":material/schedule:")


def _calibration() -> None:
    st.markdown("Upload CPS benchmark runs (CSV with `servers`, `size` in floats or `bytes`, `time` in s; "
                "N = 2 … max at two or more sizes). Each candidate w_t gets a non-negative least-squares fit of "
                "T = 2α + (N-1)/N·S·(2β+γ) + (N+1)/N·S·δ + 2(N-1)/N·S·max(w-w_t,0)·ε; the best is kept.")
    upload = st.file_uploader("Measurements (CSV)", type=["csv", "txt", "log"], key="gm_csv")
    _measured_pointer(st.caption)
    example = to_csv(synthesize_measurements(PRESETS["cpu_testbed"], range(2, 16), [1e7, 1e8], noise=0.002))
    text = st.text_area("…or paste CSV", value="", height=120, key="gm_csv_text", placeholder=example[:200])
    if st.button("Use example data (CPU testbed parameters + 0.2 % noise)", key="gm_csv_example"):
        st.session_state["gm_csv_text_example"] = example
    if upload is not None:
        try:
            text = read_upload_text(upload, MAX_CSV_CHARS, "the CSV")
        except UploadError as exc:
            st.error(str(exc))
            return
    elif not text.strip():
        text = st.session_state.get("gm_csv_text_example", "")
    if not text.strip():
        st.info("Upload or paste measurements to fit GenModel.")
        return
    try:
        rows = read_measurements(text)
        result = fit(rows, ModelOptions(fan_in=st.session_state.get("gm_fanin", "group")))
    except FitError as exc:
        if _is_bench_log(text):
            _measured_pointer(st.warning, "This is an nccl-tests / rccl-tests log, not CPS measurements. ")
        else:
            st.error(f"Cannot fit: {exc}")
        return
    c = metric_columns(5)
    c[0].metric("α (s)", f"{result.alpha:.4g}")
    c[1].metric("2β+γ (s/float)", f"{result.beta2_gamma:.4g}")
    c[2].metric("δ (s/float)", f"{result.delta:.4g}")
    c[3].metric("ε (s/float)", f"{result.epsilon:.4g}")
    c[4].metric("w_t", result.w_t)
    for w in result.warnings:
        st.warning(w)
    coef = design_matrix(rows, result.w_t, ModelOptions(fan_in=st.session_state.get("gm_fanin", "group")))
    fitted = list(coef @ np.array([result.alpha, result.beta2_gamma, result.delta, result.epsilon]))
    st.plotly_chart(fit_figure([r.time for r in rows], fitted, [f"N={r.servers}, S={r.size:g}" for r in rows]),
                    key="gm_fit_fig")
    st.caption(f"relative residuals: rms {result.rms_relative:.3%}, max {result.max_relative:.3%}")


SELECTIONS = {"tree cost": "tree", "paper (Table 2 on S)": "table2"}


@st.cache_resource(show_spinner=False, max_entries=16)
def _planner(spec: str, fan_in: str, mu: str, select: str = "tree") -> Planner:
    return Planner(parse_tree(spec), ModelOptions(fan_in=fan_in, alpha_steps=_mu_value(mu)), select=select)


def _paper_sim(result) -> None:
    """The paper's simulator as its Table 7 shows it (``papersim``), beside the studio's own times."""
    sim = PaperSim(result.tree).table7(result.size)
    ours = result.comparison()
    rows = [{"plan": k, "studio (s)": ours.get(k), "paper simulator (s)": v.total} for k, v in sim.items()]
    st.dataframe(blank_missing(pd.DataFrame(rows)), hide_index=True, key="gm_tree_papersim")
    st.caption("Paper simulator: the reading of GenModel §5.3 that reproduces Table 7 (one α per node on the path; "
               "hierarchical plans run the top level first, the racks finishing on S/k; Ring is the 2-D ring over "
               "the racks). The studio's own times run GenTree bottom-up as Algorithm 2 does.")


def _gentree() -> None:
    presets = list(PRESET_TREES) + ["custom"]
    c = st.columns([1, 2, 1])
    choice = c[0].selectbox("Tree", presets, index=presets.index("ss24"), key="gm_tree")
    spec = choice
    if choice == "custom":
        spec = c[1].text_input("Tree spec", value="tree(4x8,2x4)", key="gm_tree_spec",
                               help="switch(24), tree(16x24), tree(8x32,8x16), cdc(8x32|8x16)")
    size = float(c[2].number_input("S, floats", min_value=1.0, max_value=1e12, value=1e8, format="%.4g",
                                   key="gm_tree_size"))
    c = st.columns(5)
    mus = ["path", "1", "3", "5"]
    mu = c[0].selectbox("α per step", mus, key="gm_tree_mu", help="path: one α per node on a flow's path")
    fan = c[1].radio("Incast fan-in", ["group", "senders"], horizontal=True, key="gm_tree_fanin")
    rearrange = c[2].checkbox("Data rearrangement", value=True, key="gm_tree_rearrange",
                              help="Off: GenTree* (Algorithm 2 without rearrangement)")
    flatten = c[3].checkbox("Allow flat plans", value=True, key="gm_tree_flatten",
                            help="A switch may run one flat Ring/CPS/RHD over its whole subtree when faster "
                                 "(off: the paper's GenTree)")
    select = c[4].selectbox("Plan choice", list(SELECTIONS), key="gm_tree_select",
                            help="tree cost: the cheapest plan under the studio's tree cost; paper: Algorithm 2 "
                                 "read literally, Table 2 for c participants holding S (reproduces Table 6)")
    try:
        planner = _planner(spec, fan, mu, SELECTIONS[select])
        if planner.tree.n > MAX_TREE_SERVERS:
            st.error(f"{planner.tree.n} servers: the page plans at most {MAX_TREE_SERVERS}")
            return
        result = planner.run(size, rearrange, flatten, rhd_baseline=True)   # RHD beside Ring and CPS always
    except (TreeError, ValueError) as exc:
        st.error(str(exc))
        return
    labels = {d.switch: d.algorithm for d in result.decisions}
    st.plotly_chart(tree_figure(result.tree, labels), key="gm_tree_fig")
    st.dataframe(blank_missing(result.to_frame()), hide_index=True, key="gm_tree_table")
    times = result.comparison()
    metric("GenTree AllReduce (s)", f"{result.total:.4g}")
    st.plotly_chart(comparison_figure(times), key="gm_tree_cmp")
    n = result.tree.n
    if n & (n - 1):
        st.caption(f"RHD on {n} servers, not a power of two: the first {2 * (n - (1 << (n.bit_length() - 1)))} "
                   "pair up, one hands its data to the other before the halving and gets the result back after "
                   "the doubling (two extra steps).")
    speedups = pd.DataFrame([{"plan": k, "seconds": v, "speed-up of GenTree": v / result.total}
                             for k, v in times.items()])
    st.dataframe(blank_missing(speedups), hide_index=True, key="gm_tree_speedup")
    _paper_sim(result)


def render() -> None:
    st.title("GenModel and GenTree")
    st.caption("AllReduce time = Aα + Bβ + Cγ + Dδ + max(w − w_t, 0)·B·ε (Xiong et al., Eq. 11): the classic model "
               "plus memory access (δ) and incast (ε). Sizes in floats, times in seconds.")
    tabs = st.tabs(["Cost calculator", "HCPS explorer", "Calibration", "GenTree"])
    with tabs[0]:
        _calculator()
    with tabs[1]:
        _explorer()
    with tabs[2]:
        _calibration()
    with tabs[3]:
        _gentree()
