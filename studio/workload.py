"""The workload every page prices schedules with: link latency alpha, vector size M, node bandwidth B, and the
cost model (alpha-beta, or GenModel with one of its parameter presets). Times come from the runtime model
(``solvers.runtime``) with ``Execution.alpha_beta(alpha, B)``; the papers' step model is
``solvers.core.cost.alpha_beta_us``."""
from __future__ import annotations

from dataclasses import dataclass

import streamlit as st

DEFAULTS = {"w_alpha": 10.0, "w_bytes": 1.0e6, "w_bandwidth": 12.5, "w_cost": "alpha-beta",
            "w_genmodel": "middle_sw+server"}
COST_MODELS = ["alpha-beta", "GenModel"]


@dataclass(frozen=True)
class Workload:
    alpha_us: float
    total_bytes: float
    bandwidth_gbs: float
    cost_model: str = "alpha-beta"
    genmodel_preset: str = "middle_sw+server"

    def genmodel_price(self, topo, schedule) -> dict:
        """``solvers.genmodel.genmodel_time_us`` of ``schedule`` for this workload's M and GenModel preset: the
        total and the per-term microseconds (``alpha_us`` ... ``epsilon_us``) on the topology's own links."""
        from solvers.genmodel import PRESETS, genmodel_time_us

        return genmodel_time_us(topo, schedule, self.total_bytes, PRESETS[self.genmodel_preset])

def sidebar() -> Workload:
    """The workload inputs, shown in the sidebar of every page (values kept across pages)."""
    for key, value in DEFAULTS.items():
        st.session_state.setdefault(key, value)
    with st.sidebar:
        st.markdown("**Workload**")
        alpha = st.number_input("alpha, link latency (µs)", min_value=0.0, max_value=1e6, step=1.0, key="w_alpha",
                                help="Latency of every send a GPU makes (the runtime model); the step model "
                                     "charges it once per step: T_L = steps × alpha.")
        size = st.number_input("M, vector size (bytes)", min_value=1.0, max_value=1e13, step=1e6, key="w_bytes",
                               format="%.4g", help="The whole vector of a collective; each of N nodes owns M/N.")
        bw = st.number_input("B, node bandwidth (GB/s)", min_value=1e-3, max_value=1e6, step=1.0, key="w_bandwidth",
                             help="A node's total egress bandwidth (links scaled to it); the step model's "
                                  "T_B = tb_factor × M / B. 100 Gb/s = 12.5 GB/s.")
        model = st.radio("Cost model", COST_MODELS, key="w_cost", horizontal=True,
                         help="Times always come from the runtime model with alpha and B. GenModel adds its own "
                              "figure: the step model steps × alpha + tb_factor × M/B plus, per step, the incast "
                              "(fan-in above w_t), reduction (gamma) and memory (delta) terms of the GenModel "
                              "paper (Eq. 11), with the preset's parameters.")
        preset = st.session_state["w_genmodel"]
        if model == "GenModel":
            from solvers.genmodel import PRESETS

            preset = st.selectbox("GenModel parameters", sorted(PRESETS), key="w_genmodel",
                                  help="gamma, delta, epsilon and w_t from the paper's Table 5 tiers")
        st.divider()
    return Workload(float(alpha), float(size), float(bw), model, preset)


def current() -> Workload:
    """The workload as the sidebar last set it (defaults before the sidebar ran)."""
    get = st.session_state.get
    return Workload(float(get("w_alpha", DEFAULTS["w_alpha"])), float(get("w_bytes", DEFAULTS["w_bytes"])),
                    float(get("w_bandwidth", DEFAULTS["w_bandwidth"])), get("w_cost", DEFAULTS["w_cost"]),
                    get("w_genmodel", DEFAULTS["w_genmodel"]))

