"""What the Learn page's steps share (``studio.pages.learn``): the sizes and designs they sweep, the library calls
they cache (schedules built and verified by ``solvers.synthesize``, their runtime models), and the buttons that
open another page with a design loaded."""
from __future__ import annotations

import math
from dataclasses import replace
from fractions import Fraction
from pathlib import Path

import streamlit as st

from solvers.compare import crossing_size
from solvers.core.cost import alpha_beta_us
from solvers.directconnect.finder import find
from solvers.runtime import Model, Workload
from solvers.synthesize import synthesize
from studio import navigation, workload
from studio.views import learn_collectives
from studio.figures.titles import HALF_WIDTH_PX
from studio.figures.topology import topology_figure
from topologies.expression import parse_topology
from topologies.display import math_name
from topologies.properties import summarize


SIZES = [10 ** (k / 4) for k in range(8, 41)]            # 100 B to 10 GB, four points a decade
CROSS_SIZES = tuple(10 ** (k / 16) for k in range(32, 161))   # step 1's crossovers: 16 points a decade
RING_NS = [8, 12, 16, 24, 32, 48, 64]                    # step 1 (the ring schedule is verified: keep N small)
RING_DEGREES = [2, 3, 4]
DIAMETER_NS = [16, 32, 64, 128, 256]                     # step 2
DIAMETER_DEGREES = [2, 4]
LINE_BASES = {"complete(3)": "K₃, complete graph on 3 nodes", "complete(4)": "K₄, complete graph on 4 nodes",
              "complete(5)": "K₅, complete graph on 5 nodes", "bipartite(2)": "K₂,₂, complete bipartite",
              "bipartite(3)": "K₃,₃, complete bipartite", "dcirculant(2)": "DC(4,{1,2}), directed circulant",
              "diamond()": "Diamond, 8 nodes of degree 2"}         # the names as math (topologies.display)
LINE_LEVELS = [1, 2]
FRONTIER_NS = [16, 32, 64, 128, 256, 512, 1024]          # step 4 (the finder predicts, it builds nothing)
FRONTIER_DEGREES = [2, 4]
FRONTIER_SIZES = [10 ** (k / 2) for k in range(6, 21)]   # 1 KB to 10 GB, two points a decade
GENMODEL_SERVERS = list(range(2, 33))                    # step 5
GENMODEL_FLOATS = [1e6, 1e7, 1e8, 1e9]
GANTT_EXAMPLES = {"ring(4)|ring|allreduce": "ring allreduce on a 4-node ring",
                  "complete(4)|dbt|allreduce": "double binary tree allreduce on K₄",
                  "complete(4)|rhd|allgather": "recursive doubling allgather on K₄",
                  "circulant(8,[1,2])|bfb|allgather": "BFB allgather on the circulant C(8,{1,2})"}   # step 6
GANTT_SLICES = ["best", 1, 2, 4, 8]
GANTT_MAX_SLICES = 16                                    # the Gantt chart's P search stops here (bars stay few)

STEPS = [("rings", "Rings: bandwidth-optimal, but slow"),
         ("diameter", "Low diameter helps small messages"),
         ("line-graph", "What a line-graph expansion does to a schedule"),
         ("frontier", "The Pareto frontier: no single best design"),
         ("genmodel", "Beyond alpha-beta: incast and memory"),
         ("runtime-model", "How the studio times a schedule"),
         ("your-machine", "Your machine: import it, measure it, calibrate the model"),
         ("failures", "When links fail"),
         ("rooted", "Rooted collectives, and several sharing one fabric"),
         (learn_collectives.ANCHOR, learn_collectives.TITLE.split(". ", 1)[1])]
SURVIVAL_DESIGNS = {"biring(12)": "ring", "circulant(12,[1,3])": "circulant", "kautz(2,2)": "Kautz",
                    "gkautz(3,12)": "generalized Kautz"}                                     # step 8: 12 nodes each
EXAMPLES = Path(__file__).resolve().parents[2] / "examples"
MACHINE_XML, MACHINE_LOG = EXAMPLES / "nccl-topo-dgx-a100.xml", EXAMPLES / "nccl-tests-allreduce-16.log"   # step 7



# ------------------------------------------------------------------------------------------ cached library calls
@st.cache_resource(show_spinner=False, max_entries=64)
def built(expr: str, algo: str, collective: str):
    """One schedule built and verified by ``solvers.synthesize`` (kept for the runtime model)."""
    return synthesize(parse_topology(expr), algo, collective)


@st.cache_data(show_spinner=False, max_entries=128)
def schedule_numbers(expr: str, algo: str, collective: str) -> dict:
    """Build, verify and cost one schedule with ``solvers.synthesize``; the numbers the page shows (the
    design's name as math, ``topologies.display.math_name``)."""
    r = built(expr, algo, collective)
    predicted = getattr(r.detail, "predicted", None) or (None, None, None)     # the expansion theorems' prediction
    return {"expr": expr, "name": math_name(r.topology.name or expr), "nodes": r.topology.n, "steps": r.cost.steps,
            "tb": r.cost.tb_factor, "tb_bound": r.cost.tb_lower_bound, "steps_bound": r.cost.steps_lower_bound,
            "verified": r.verification.ok, "predicted_steps": predicted[0], "predicted_tb": predicted[1],
            "prediction_exact": predicted[2]}


@st.cache_resource(show_spinner=False, max_entries=64)
def schedule_model(expr: str, algo: str, collective: str, prices: tuple, slices: int | None = None,
                   max_slices: int = 1024) -> Model:
    """The runtime model of ``built(expr, algo, collective)`` priced by the sidebar's workload (``prices``: the key
    of its ``solvers.runtime.Workload``, the prices every page uses); ``slices`` fixes the pipelining depth P
    (None: the fastest P up to ``max_slices``)."""
    r = built(expr, algo, collective)
    execution = replace(Workload(*prices).execution, slices=slices, max_slices=max_slices)
    return Model(r.topology, r.schedule, execution)


@st.cache_data(show_spinner=False, max_entries=128)
def model_times(expr: str, algo: str, collective: str, prices: tuple, sizes: tuple[float, ...]) -> list[float]:
    """The runtime model's time (µs, best P) of one built schedule at each of ``sizes``."""
    times, _ = schedule_model(expr, algo, collective, prices).times(sizes)
    return [float(t) for t in times]


@st.cache_data(show_spinner=False, max_entries=128)
def topology_summary(expr: str) -> dict:
    """``summarize``'s numbers of one design, its name as math (``topologies.display.math_name``)."""
    out = summarize(parse_topology(expr)).as_dict()
    return {**out, "name": math_name(out.get("name"))}


@st.cache_data(show_spinner=False, max_entries=32)
def drawing(expr: str, title: str):
    fig = topology_figure(parse_topology(expr), title, width_px=HALF_WIDTH_PX)
    fig.update_layout(height=380)
    return fig


@st.cache_data(show_spinner=False, max_entries=32)
def frontier_rows(n: int, d: int) -> list[dict]:
    """The finder's Pareto frontier for N nodes of degree d (directed), lowest steps first, each name as math
    (``topologies.display.math_name``)."""
    return [{**c.as_dict(), "name": math_name(c.name)} for c in find(n, d)]


# ------------------------------------------------------------------------------------------------- helpers
def fraction_text(x: Fraction) -> str:
    x = Fraction(x)
    return f"{x.numerator}/{x.denominator}" if x.denominator != 1 else str(x.numerator)


def step_model_us(work: workload.Workload, steps: int, tb, size: float) -> float:
    """The papers' step model steps × alpha + tb × M/B (``tb`` already the collective's own factor) at vector
    size ``size``, with the sidebar's alpha and B: a prediction for (steps, tb) without a schedule."""
    return alpha_beta_us(steps, tb, float(size), work.alpha_us, work.bandwidth_gbs)


def crossings(sizes, a: list[float], b: list[float]) -> list[tuple[float, bool]]:
    """Where curve ``b`` overtakes curve ``a`` or falls behind it (both sampled at ``sizes``, ascending): the
    size where log a - log b changes sign (``solvers.compare.crossing_size``, log-log between the samples), and
    whether ``a`` is the faster one above it."""
    out = []
    diff = [math.log(x) - math.log(y) if x > 0 and y > 0 else x - y for x, y in zip(a, b)]
    for j in range(len(sizes) - 1):
        d0, d1 = diff[j], diff[j + 1]
        if d0 == 0 or (d0 > 0) == (d1 > 0) or d1 == 0:
            continue
        out.append((crossing_size(sizes, a, b, j), d1 < 0))
    return out


def open_button(container, label: str, key: str, page, state: dict, query: dict | None = None, icon: str | None = None):
    """A button that loads ``state`` into the session and opens ``page`` (as the Finder's 'Open in Compose')."""
    if container.button(label, key=key, icon=icon):
        st.session_state.update(state)
        st.switch_page(page, query_params=query)


def open_schedule(container, label: str, key: str, expr: str, algo: str, coll: str) -> None:
    open_button(container, label, key, navigation.SCHEDULE, {"design_expr": expr, "algo": algo, "coll": coll},
          {"expr": expr, "algo": algo, "coll": coll}, icon=":material/schedule:")


def open_compose(container, label: str, key: str, expr: str) -> None:
    open_button(container, label, key, navigation.COMPOSE, {"expr": expr, "design_expr": expr}, {"expr": expr},
          icon=":material/hub:")


def header(i: int) -> None:
    anchor, title = STEPS[i - 1]
    st.divider()
    st.header(f"{i}. {title}", anchor=anchor)


def gkautz_expr(d: int, n: int) -> str:
    return f"gkautz({d},{n})"


