"""The workload every page prices schedules with: link latency alpha, vector size M and node bandwidth B."""
from __future__ import annotations

from dataclasses import dataclass

import streamlit as st

DEFAULTS = {"w_alpha": 10.0, "w_bytes": 1.0e6, "w_bandwidth": 12.5}


@dataclass(frozen=True)
class Workload:
    alpha_us: float
    total_bytes: float
    bandwidth_gbs: float

    def runtime_us(self, steps: int, tb_factor) -> float:
        """T_L + T_B = steps * alpha + tb * M / B (B in GB/s is 1e3 bytes per microsecond)."""
        return steps * self.alpha_us + float(tb_factor) * self.total_bytes / (self.bandwidth_gbs * 1e3)


def sidebar() -> Workload:
    """The workload inputs, shown in the sidebar of every page (values kept across pages)."""
    for key, value in DEFAULTS.items():
        st.session_state.setdefault(key, value)
    with st.sidebar:
        st.markdown("**Workload**")
        alpha = st.number_input("alpha, link latency (µs)", min_value=0.0, max_value=1e6, step=1.0, key="w_alpha",
                                help="Per-step latency of a link: T_L = steps × alpha.")
        size = st.number_input("M, vector size (bytes)", min_value=1.0, max_value=1e13, step=1e6, key="w_bytes",
                               format="%.4g", help="The whole vector of a collective; each of N nodes owns M/N.")
        bw = st.number_input("B, node bandwidth (GB/s)", min_value=1e-3, max_value=1e6, step=1.0, key="w_bandwidth",
                             help="A node's total egress bandwidth: T_B = tb_factor × M / B. 100 Gb/s = 12.5 GB/s.")
        st.divider()
    return Workload(float(alpha), float(size), float(bw))


def current() -> Workload:
    """The workload as the sidebar last set it (defaults before the sidebar ran)."""
    get = st.session_state.get
    return Workload(float(get("w_alpha", DEFAULTS["w_alpha"])), float(get("w_bytes", DEFAULTS["w_bytes"])),
                    float(get("w_bandwidth", DEFAULTS["w_bandwidth"])))
