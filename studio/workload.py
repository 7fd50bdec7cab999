"""The sidebar's workload, the one every page and panel prices with: the vector size M and one price list
(``solvers.runtime.Workload``: uniform alpha and B, the fabric's own link prices, or a calibrated price file),
with the same defaults as every CLI command (``--bytes``, ``--prices``, ``--alpha``, ``--bandwidth``). Beside it
the cost model of the named second figure: the papers' step model, or GenModel with one of its presets."""
from __future__ import annotations

from dataclasses import dataclass

import streamlit as st

from solvers.runtime.workload import (DEFAULT, MAX_ALPHA_US, MAX_BANDWIDTH_GBS, MAX_BYTES, MAX_PRICE_FILE_BYTES,
                                      MIN_BANDWIDTH_GBS, Workload as Prices, WorkloadError, read_price_file)

DEFAULTS = {"w_alpha": DEFAULT.alpha_us, "w_bytes": DEFAULT.total_bytes, "w_bandwidth": DEFAULT.bandwidth_gbs,
            "w_prices": DEFAULT.prices, "w_cost": "alpha-beta", "w_genmodel": "middle_sw+server"}
COST_MODELS = ["alpha-beta", "GenModel"]
PRICE_CHOICES = {"uniform": "Uniform alpha and B", "links": "The fabric's own links",
                 "calibrated": "Calibrated price file"}


@dataclass(frozen=True)
class Workload:
    alpha_us: float
    total_bytes: float
    bandwidth_gbs: float
    cost_model: str = "alpha-beta"
    genmodel_preset: str = "middle_sw+server"
    prices: str = "uniform"
    source: str = ""

    @property
    def runtime(self) -> Prices:
        """The workload every time on the pages comes from (``solvers.runtime.Workload``)."""
        return Prices(self.total_bytes, self.prices, self.alpha_us, self.bandwidth_gbs, self.source)

    @property
    def price_label(self) -> str:
        return self.runtime.price_label

    def genmodel_price(self, topo, schedule) -> dict:
        """``solvers.genmodel.genmodel_time_us`` of ``schedule`` for this workload's M and GenModel preset: the
        total and the per-term microseconds (``alpha_us`` ... ``epsilon_us``) on the topology's own links."""
        from solvers.genmodel import PRESETS, genmodel_time_us

        return genmodel_time_us(topo, schedule, self.total_bytes, PRESETS[self.genmodel_preset])


def _price_file(where) -> None:
    """The calibrated price file's uploader: a file read keeps its alpha, B and source (``w_cal``) for
    ``current``; a bad one is named in one line and the prices stay as they were."""
    upload = where.file_uploader("Price file (JSON)", type=["json"], key="w_price_file",
                                 help="{\"alpha_us\": 2.5, \"bandwidth_gbs\": 180, \"source\": \"where measured\"}: "
                                      "uniform prices measured on a real machine")
    if upload is not None:
        from studio.uploads import read_at_most

        try:
            read = read_price_file(read_at_most(upload, MAX_PRICE_FILE_BYTES))
        except WorkloadError as exc:
            where.error(f"{upload.name}: {exc}")
        else:
            st.session_state["w_cal"] = (read.alpha_us, read.bandwidth_gbs, read.source or upload.name)
    cal = st.session_state.get("w_cal")
    if cal is None:
        where.info("Upload a price file; until then the alpha and B above are used.")
    else:
        where.caption(f"From {cal[2]}: alpha {cal[0]:g} µs, B {cal[1]:g} GB/s per node.")


WORKLOAD_OPEN = "workload_open"        # the sidebar's "Change the workload" box: open (its widgets shown) or not


def sidebar() -> Workload:
    """The workload of every page, in the sidebar: a one-line summary always, its inputs in a box that is made
    only while open (``expander.lazy_expander``, key ``WORKLOAD_OPEN``). Every input widget type a page shows costs
    each browser its code's load and first layout, about 0.4 CPU s for these (issue 44), so they stay closed until
    asked for. Their values are kept across pages and while the box is closed: each run stores them again as
    session values, which Streamlit keeps where it would drop the state of a widget not shown."""
    from studio.expander import lazy_expander

    for key, value in DEFAULTS.items():
        st.session_state[key] = st.session_state.get(key, value)
    with st.sidebar:
        st.markdown("**Workload**")
        summary = st.empty()
        with lazy_expander("Change the workload", WORKLOAD_OPEN) as box:
            if box:
                _inputs()
        work = current()
        summary.caption(f"M = {work.total_bytes:.4g} bytes; prices: {work.price_label}"
                        + ("; second figure: GenModel (" + work.genmodel_preset + ")"
                           if work.cost_model == "GenModel" else "") + ".")
        st.divider()
    return work


def _inputs() -> None:
    """The workload's input widgets (keys ``w_*``, ``DEFAULTS``)."""
    st.number_input("M, vector size (bytes)", min_value=1.0, max_value=MAX_BYTES, step=1e6, key="w_bytes",
                    format="%.4g", help=f"The whole vector of a collective; each of N nodes owns M/N. Default "
                                        f"{DEFAULT.total_bytes:g}, as the CLI's --bytes.")
    prices = st.radio("Link prices", list(PRICE_CHOICES), key="w_prices", format_func=PRICE_CHOICES.get,
                      help="How every time on every page is priced (the CLI's --prices): uniform alpha per send "
                           "and links scaled so a node's egress is B (default), each link's own alpha and "
                           "bandwidth as the fabric declares them, or alpha and B measured on a real machine.")
    calibrated = prices == "calibrated"
    from_file = calibrated and "w_cal" in st.session_state      # the file's alpha and B rule
    st.number_input("alpha, latency per send (µs)", min_value=0.0, max_value=MAX_ALPHA_US, step=1.0,
                    key="w_alpha", disabled=from_file,
                    help=f"Latency of every send a GPU makes (default {DEFAULT.alpha_us:g}, as --alpha); "
                         "the step model charges it once per step: T_L = steps × alpha.")
    st.number_input("B, node bandwidth (GB/s)", min_value=MIN_BANDWIDTH_GBS, max_value=MAX_BANDWIDTH_GBS,
                    step=1.0, key="w_bandwidth", disabled=from_file,
                    help=f"A node's total egress bandwidth, links scaled to it (default "
                         f"{DEFAULT.bandwidth_gbs:g}, as --bandwidth); the step model's "
                         "T_B = tb_factor × M / B. 100 Gb/s = 12.5 GB/s.")
    if calibrated:
        _price_file(st)
    if prices == "links":
        st.caption("alpha and B above price only the step model, the second figure.")
    model = st.radio("Second figure", COST_MODELS, key="w_cost", horizontal=True,
                     help="Times always come from the runtime model with the prices above. The step model "
                          "(steps × alpha + tb_factor × M/B) is shown beside them; GenModel adds, per step, "
                          "the incast (fan-in above w_t), reduction (gamma) and memory (delta) terms of the "
                          "GenModel paper (Eq. 11), with the preset's parameters.")
    if model == "GenModel":
        from solvers.genmodel import PRESETS

        st.selectbox("GenModel parameters", sorted(PRESETS), key="w_genmodel",
                     help="gamma, delta, epsilon and w_t from the paper's Table 5 tiers")


def current() -> Workload:
    """The workload as the sidebar last set it (defaults before the sidebar ran). Calibrated prices come from the
    price file read (``w_cal``), or, before one is read, from alpha and B as set."""
    get = st.session_state.get
    prices = get("w_prices", DEFAULTS["w_prices"])
    alpha, bw = float(get("w_alpha", DEFAULTS["w_alpha"])), float(get("w_bandwidth", DEFAULTS["w_bandwidth"]))
    source = ""
    if prices == "calibrated":
        cal = get("w_cal")
        if cal is None:
            prices = "uniform"
        else:
            alpha, bw, source = cal
    return Workload(alpha, float(get("w_bytes", DEFAULTS["w_bytes"])), bw, get("w_cost", DEFAULTS["w_cost"]),
                    get("w_genmodel", DEFAULTS["w_genmodel"]), prices, source)
