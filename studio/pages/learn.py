"""The Learn page: a guided walk through the ideas behind the studio, for teachers and students. Each step has a
few sentences, a live control or two, a figure whose numbers come from the library (``solvers``, ``topologies``),
and a button that opens the page that does the same thing for real, with the design already loaded.

1. rings are bandwidth-optimal but slow (ring vs generalized Kautz, allreduce time against M, runtime model);
2. low diameter helps small messages (diameters beside the Moore bound, the latency share of the time);
3. what a line-graph expansion does to a schedule (G and L^n(G), steps + n, tb + about 1/N);
4. what a Pareto frontier is (``find(N, d)``; which design wins at a message size);
5. beyond alpha-beta: GenModel's incast and memory terms (CPS against Ring as N crosses w_t);
6. how the studio times a schedule: the runtime model, a small schedule's sends on its clock (a Gantt chart);
7. your machine: NCCL's own topology file imported (the DGX A100-like sample of examples/), ForestColl on it
   against the paper's DGX A100 model, and the model calibrated to a benchmark log (the sample nccl-tests log);
8. when links fail: a design of link connectivity c survives any c - 1 cable failures (circulants and generalized
   Kautz graphs of degree d have c = d), and a ring loses its Hamiltonian ring to one cut cable, its data then
   routed the long way round (``solvers.failures``);
9. rooted collectives and shared fabrics: a one-chunk broadcast on a mesh takes the root's eccentricity in
   steps, pipelining beats it on large buffers, and three collectives sharing the 6x6 mesh (TACOS Table V) slow
   each other down (``solvers.tenants``, the runtime model's overlay);
10. ring, tree and direct-connect at N = 64 (``studio.learn_collectives``): each verified allreduce's alpha and M/B
   terms against M, the sizes where the fastest changes, NCCL's double binary tree and ForestColl's forest drawn.

Times of built schedules come from the runtime model (``solvers.runtime``) with the sidebar's alpha and B;
where a step predicts (steps, tb) without building a schedule it uses the papers' step model
(``solvers.core.cost.alpha_beta_us``) and says so.

Every computation is small (sizes capped below) and cached, so the page renders in a few seconds.
"""
from __future__ import annotations

import math
from dataclasses import replace
from fractions import Fraction
from pathlib import Path

import pandas as pd
import plotly.graph_objects as go
import streamlit as st

from solvers.compare import crossing_size
from solvers.core.cost import alpha_beta_us
from solvers.directconnect.finder import bound, find
from solvers.genmodel import CPU_TESTBED, classic_cost, cps_cost, ring_cost
from solvers.directconnect.selection import best_index, step_model_time_us
from solvers.runtime import Execution, Model, Workload
from solvers.synthesize import synthesize
from studio import learn_collectives, navigation, workload
from studio.figures import HALF_WIDTH_PX, frontier_figure, gantt_figure, place_title, topology_figure
from studio.genmodel_figures import servers_figure
from studio.learn_figures import diameter_figure, latency_share_figure, size_curves_figure, survival_figure
from studio.metric_grid import metric_columns
from studio.tables import blank_missing
from topologies.expression import parse_topology
from topologies.properties import summarize

SIZES = [10 ** (k / 4) for k in range(8, 41)]            # 100 B to 10 GB, four points a decade
CROSS_SIZES = tuple(10 ** (k / 16) for k in range(32, 161))   # step 1's crossovers: 16 points a decade
RING_NS = [8, 12, 16, 24, 32, 48, 64]                    # step 1 (the ring schedule is verified: keep N small)
RING_DEGREES = [2, 3, 4]
DIAMETER_NS = [16, 32, 64, 128, 256]                     # step 2
DIAMETER_DEGREES = [2, 4]
LINE_BASES = {"complete(3)": "K_3, complete graph on 3 nodes", "complete(4)": "K_4, complete graph on 4 nodes",
              "complete(5)": "K_5, complete graph on 5 nodes", "bipartite(2)": "K_{2,2}, complete bipartite",
              "bipartite(3)": "K_{3,3}, complete bipartite", "dcirculant(2)": "DC(4,{1,2}), directed circulant",
              "diamond()": "Diamond, 8 nodes of degree 2"}
LINE_LEVELS = [1, 2]
FRONTIER_NS = [16, 32, 64, 128, 256, 512, 1024]          # step 4 (the finder predicts, it builds nothing)
FRONTIER_DEGREES = [2, 4]
FRONTIER_SIZES = [10 ** (k / 2) for k in range(6, 21)]   # 1 KB to 10 GB, two points a decade
GENMODEL_SERVERS = list(range(2, 33))                    # step 5
GENMODEL_FLOATS = [1e6, 1e7, 1e8, 1e9]
GANTT_EXAMPLES = {"ring(4)|ring|allreduce": "ring allreduce on a 4-node ring",
                  "complete(4)|dbt|allreduce": "double binary tree allreduce on K_4",
                  "complete(4)|rhd|allgather": "recursive doubling allgather on K_4",
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
    """Build, verify and cost one schedule with ``solvers.synthesize``; the numbers the page shows."""
    r = built(expr, algo, collective)
    predicted = getattr(r.detail, "predicted", None) or (None, None, None)     # the expansion theorems' prediction
    return {"expr": expr, "name": r.topology.name or expr, "nodes": r.topology.n, "steps": r.cost.steps,
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
    return summarize(parse_topology(expr)).as_dict()


@st.cache_data(show_spinner=False, max_entries=32)
def _drawing(expr: str, title: str):
    fig = topology_figure(parse_topology(expr), title, width_px=HALF_WIDTH_PX)
    fig.update_layout(height=380)
    return fig


@st.cache_data(show_spinner=False, max_entries=32)
def frontier_rows(n: int, d: int) -> list[dict]:
    """The finder's Pareto frontier for N nodes of degree d (directed), lowest steps first."""
    return [c.as_dict() for c in find(n, d)]


# ------------------------------------------------------------------------------------------------- helpers
def _fraction(x: Fraction) -> str:
    x = Fraction(x)
    return f"{x.numerator}/{x.denominator}" if x.denominator != 1 else str(x.numerator)


def _step_model_us(work: workload.Workload, steps: int, tb, size: float) -> float:
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


def _open(container, label: str, key: str, page, state: dict, query: dict | None = None, icon: str | None = None):
    """A button that loads ``state`` into the session and opens ``page`` (as the Finder's 'Open in Compose')."""
    if container.button(label, key=key, icon=icon):
        st.session_state.update(state)
        st.switch_page(page, query_params=query)


def _open_schedule(container, label: str, key: str, expr: str, algo: str, coll: str) -> None:
    _open(container, label, key, navigation.SCHEDULE, {"design_expr": expr, "algo": algo, "coll": coll},
          {"expr": expr, "algo": algo, "coll": coll}, icon=":material/schedule:")


def _open_compose(container, label: str, key: str, expr: str) -> None:
    _open(container, label, key, navigation.COMPOSE, {"expr": expr, "design_expr": expr}, {"expr": expr},
          icon=":material/hub:")


def _header(i: int) -> None:
    anchor, title = STEPS[i - 1]
    st.divider()
    st.header(f"{i}. {title}", anchor=anchor)


def _gkautz_expr(d: int, n: int) -> str:
    return f"gkautz({d},{n})"


# ------------------------------------------------------------------------------------------------- the steps
def step_rings(work: workload.Workload) -> None:
    _header(1)
    st.markdown(
        "An allreduce on a ring passes every piece of data around the circle one neighbour at a time. No link ever "
        "carries more than it must, so the bandwidth part of the time, T_B, meets the lower bound 2(N-1)/N × M/B. "
        "But it takes 2(N-1) steps, and every step pays the link latency alpha, so the latency part T_L = steps × "
        "alpha grows with N. A low-diameter graph of the same degree, the generalized Kautz graph Π with its "
        "breadth-first-broadcast (BFB) schedule, needs only about 2 log_d N steps but loads some links more: it "
        "wins for small messages and loses for large ones.")
    c1, c2 = st.columns(2)
    n = int(c1.select_slider("N, nodes", RING_NS, value=32, key="l_ring_n"))
    d = int(c2.radio("d, links out of each node", RING_DEGREES, index=2, horizontal=True, key="l_ring_d",
                     help="The ring uses d parallel links between neighbours, so both designs have the same node "
                          "bandwidth B."))
    ring_expr, low_expr = f"uniring({d},{n})", _gkautz_expr(d, n)
    with st.spinner("Building and verifying both schedules …"):
        ring = schedule_numbers(ring_expr, "ring", "allreduce")
        low = schedule_numbers(low_expr, "bfb", "allreduce")
    moore, share = bound(n, d)
    steps_bound, tb_bound = 2 * moore, 2 * share
    cols = st.columns(3)
    for col, tag, title, steps, tb in ((cols[0], "ring", f"Ring on {ring['name']}", ring["steps"], ring["tb"]),
                                       (cols[1], "Π", f"BFB on {low['name']}", low["steps"], low["tb"]),
                                       (cols[2], "bound", "Lower bound", steps_bound, tb_bound)):
        col.markdown(f"**{title}**")
        a, b = metric_columns(2, where=col)
        a.metric(f"steps ({tag})", steps, help="T_L / alpha: communication steps of the allreduce")
        b.metric(f"tb_factor ({tag})", f"{float(tb):.4f}", help=f"T_B / (M/B) = {_fraction(tb)} exactly")
    st.caption(f"Lower bound: 2 × the Moore diameter {moore} (no {n}-node degree-{d} graph has a smaller "
               f"diameter) and 2(N-1)/N = {_fraction(tb_bound)}, that is 2·{moore}·alpha + 2(N-1)/N·M/B, below "
               "the runtime model's time of any allreduce on such a graph. Both schedules were built and checked "
               "step by step by the simulator; their times are the runtime model's (step 6).")
    price = (work.runtime.key,)
    with st.spinner("Running the runtime model …"):
        ring_t = model_times(ring_expr, "ring", "allreduce", *price, tuple(SIZES))
        low_t = model_times(low_expr, "bfb", "allreduce", *price, tuple(SIZES))
        ring_fine = model_times(ring_expr, "ring", "allreduce", *price, CROSS_SIZES)
        low_fine = model_times(low_expr, "bfb", "allreduce", *price, CROSS_SIZES)
    series = {f"ring, {ring['name']}": ring_t, f"BFB, {low['name']}": low_t,
              "lower bound": [_step_model_us(work, steps_bound, tb_bound, m) for m in SIZES]}
    found = crossings(CROSS_SIZES, low_fine, ring_fine)       # where the ring overtakes Π (or falls behind)
    crossovers = [(x, f"crossover ≈ {x:.3g} B") for x, _ in found]
    small_low, large_low = low_fine[0] < ring_fine[0], low_fine[-1] < ring_fine[-1]
    if len(found) == 1 and small_low and not large_low:
        verdict = (f"Below about **{found[0][0]:.3g} bytes** {low['name']} is faster (fewer steps); above it the "
                   "ring is faster (less data on the busiest link).")
    elif found:
        verdict = ("The two curves cross at " + ", ".join(f"**{x:.3g} bytes**" for x, _ in found)
                   + f"; {low['name'] if large_low else 'the ring'} is faster for the largest messages.")
    elif small_low:
        verdict = f"{low['name']} is never slower here: it saves steps without costing more on its busiest links."
    else:
        verdict = "The ring is never slower here: with steps this cheap, less data per link wins at every size."
    st.plotly_chart(size_curves_figure(SIZES, series, marker=work.total_bytes, crossovers=crossovers,
                                       title=f"Allreduce time against M, runtime model ({work.price_label})"),
                    key="l_ring_chart")
    st.info(verdict + " Change alpha or B in the sidebar to move the crossover.", icon=":material/lightbulb:")
    c1, c2 = st.columns(2)
    _open_schedule(c1, f"Schedule the ring on {ring['name']}", "l_ring_open_ring", ring_expr, "ring", "allreduce")
    _open_schedule(c2, f"Schedule {low['name']} with BFB", "l_ring_open_low", low_expr, "bfb", "allreduce")


def diameter_designs(n: int, d: int) -> list[str]:
    """A few degree-d designs on n nodes, from a ring to the lowest-diameter family known for any n."""
    if d == 2:
        side = max(2, round(math.sqrt(n)))
        return [f"uniring(2,{n})", f"biring(2,{n})", f"dcirculant({n},[1,{side}])", _gkautz_expr(2, n)]
    a = max(x for x in range(1, math.isqrt(n) + 1) if n % x == 0)
    out = [f"uniring(4,{n})", f"biring(4,{n})"]
    if a >= 3:
        out.append(f"torus({a},{n // a})")
    return out + [f"circulant({n},d=4)", _gkautz_expr(4, n)]


def step_diameter(work: workload.Workload) -> None:
    _header(2)
    st.markdown(
        "In an allgather every node must hear from the node farthest away, so no schedule can finish in fewer steps "
        "than the graph's diameter D: T_L is at least D × alpha. With d links per node, a node reaches at most d "
        "nodes in one hop, d² in two, and so on; the Moore bound counts how many hops N nodes need at the very "
        "least. For a small message the bandwidth part is tiny, so the latency D × alpha is most of the time, and "
        "a graph close to the Moore bound wins.")
    c1, c2 = st.columns(2)
    n = int(c1.select_slider("N, nodes", DIAMETER_NS, value=64, key="l_diam_n"))
    d = int(c2.radio("d, links out of each node", DIAMETER_DEGREES, index=1, horizontal=True, key="l_diam_d"))
    rows = []
    for expr in diameter_designs(n, d):
        s = topology_summary(expr)
        rows.append({"name": s["name"] or expr, "expr": expr, "diameter": s["diameter"], "degree": s["degree"]})
    moore = topology_summary(rows[0]["expr"])["moore_diameter_directed"]
    share = Fraction(n - 1, n)
    c1, c2 = st.columns(2)
    c1.plotly_chart(diameter_figure(rows, moore, title=f"Diameter of degree-{d} designs on {n} nodes",
                                    width_px=HALF_WIDTH_PX),
                    key="l_diam_chart")
    shares = {r["name"]: [r["diameter"] * work.alpha_us / _step_model_us(work, r["diameter"], share, m)
                          if work.alpha_us else 0.0 for m in SIZES] for r in rows}
    c2.plotly_chart(latency_share_figure(SIZES, shares, marker=work.total_bytes,
                                         title="Latency share of an allgather, even with a perfect schedule "
                                               "(step model)", width_px=HALF_WIDTH_PX),
                    key="l_diam_share")
    table = pd.DataFrame([{"design": r["name"], "diameter D": r["diameter"], "Moore bound": moore,
                           "T_L ≥ D·alpha (µs)": r["diameter"] * work.alpha_us,
                           "T_B ≥ (N-1)/N·M/B (µs)": round(float(share) * work.total_bytes
                                                           / (work.bandwidth_gbs * 1e3), 3),
                           "expression": r["expr"]} for r in rows])
    st.dataframe(blank_missing(table), hide_index=True, key="l_diam_table")
    st.caption(f"Times for the sidebar's M = {work.total_bytes:.4g} bytes. The right-hand figure prices the best "
               "conceivable schedule on each graph (D steps, bandwidth-optimal) with the papers' step model, "
               "D × alpha + (N-1)/N × M/B, without building it, so the latency share there is a property of the "
               "graph alone.")
    c1, c2 = st.columns([2, 1])
    pick = c1.selectbox("Open a design", range(len(rows)), index=len(rows) - 1, key="l_diam_pick",
                        format_func=lambda i: f"{rows[i]['name']} (diameter {rows[i]['diameter']})")
    with c2:
        st.write("")
        _open_compose(st, "Open in Compose", "l_diam_open", rows[pick]["expr"])


def step_line_graph(work: workload.Workload) -> None:
    _header(3)
    st.markdown(
        "The line graph L(G) turns every link u→v of G into a node uv, and links uv→vw wherever one link ends where "
        "the next begins. A d-regular graph on N nodes becomes a d-regular graph on d·N nodes whose diameter is "
        "one larger. Its schedule reuses G's: in a first step every node sends its whole piece to all its "
        "neighbours, then G's steps run again on the lifted links, one step later.")
    st.markdown(
        "**The line-graph theorem** (direct-connect paper, Thm 7 and 10; Cor 7.1): T_L grows by exactly one "
        "alpha, and the bandwidth factor by at most 1/N of the base: τ(L(G)) ≤ τ(G) + 1/N, with equality when G's "
        "schedule is an optimal BFB schedule and every node has two or more out-neighbours. Repeating n times, "
        "τ(Lⁿ(G)) ≤ τ(G) + d/(d−1)·(1/N − 1/(dⁿN)). A Moore-optimal G stays Moore-optimal (Thm 8); bandwidth "
        "optimality is not kept exactly, but the loss shrinks as the base grows.")
    c1, c2 = st.columns([2, 1])
    base = c1.selectbox("Base graph G", list(LINE_BASES), index=list(LINE_BASES).index("bipartite(2)"),
                        format_func=lambda e: LINE_BASES[e], key="l_line_base",
                        help="K_{2,2} is the paper's worked example (Fig. 2): L(K_{2,2}) has 8 nodes, 3 steps, tb 1.")
    level = int(c2.radio("Expand n times", LINE_LEVELS, horizontal=True, key="l_line_n"))
    line_expr = f"line({base},{level})"
    with st.spinner("Building both expansion schedules …"):
        g = schedule_numbers(base, "expansion", "allgather")
        lg = schedule_numbers(line_expr, "expansion", "allgather")
    c1, c2 = st.columns(2)
    c1.plotly_chart(_drawing(base, f"G = {g['name']}: {g['nodes']} nodes"), key="l_line_base_chart")
    c2.plotly_chart(_drawing(line_expr, f"{lg['name']}: {lg['nodes']} nodes"), key="l_line_chart")
    cols = metric_columns(5)
    cols[0].metric("steps (G)", g["steps"], help="allgather steps of G's schedule")
    cols[1].metric("tb_factor (G)", f"{float(g['tb']):.4f}", help=f"{_fraction(g['tb'])} exactly")
    cols[2].metric("steps (line graph)", lg["steps"], delta=f"+{lg['steps'] - g['steps']}", delta_color="off")
    cols[3].metric("tb_factor (line graph)", f"{float(lg['tb']):.4f}",
                   delta=f"+{float(lg['tb'] - g['tb']):.4f}", delta_color="off",
                   help=f"{_fraction(lg['tb'])} exactly; G's was {_fraction(g['tb'])}")
    cols[4].metric("tb bound (N'-1)/N'", f"{float(lg['tb_bound']):.4f}",
                   help=f"{_fraction(lg['tb_bound'])}: the least any allgather on {lg['nodes']} nodes can do")
    predicted = lg["predicted_tb"]
    exact = "equal to" if lg["prediction_exact"] else "an upper bound on"
    st.caption(f"Allgather on G = {g['name']} ({g['nodes']} nodes) and on {lg['name']} ({lg['nodes']} nodes), both "
               f"built by the expansion schedule and verified. Predicted by the theorem: {lg['predicted_steps']} "
               f"steps and tb {_fraction(predicted)} ({exact} the built value {_fraction(lg['tb'])}); "
               f"{float(lg['tb'] / lg['tb_bound']):.4f}× the bandwidth bound. An allreduce doubles both numbers.")
    c1, c2 = st.columns(2)
    _open_schedule(c1, f"Schedule {lg['name']} (expansion allgather)", "l_line_open_schedule", line_expr,
                   "expansion", "allgather")
    _open_compose(c2, f"Open {lg['name']} in Compose", "l_line_open_compose", line_expr)


def frontier_times(rows: list[dict], work: workload.Workload, size: float) -> list[float]:
    """The step model's allreduce time of each frontier row (the theorems' steps and tb; no schedule is built)."""
    return [step_model_time_us(r["steps"], r["tb_factor"], work.alpha_us, size, work.bandwidth_gbs, "allreduce")
            for r in rows]


def step_frontier(work: workload.Workload) -> None:
    _header(4)
    st.markdown(
        "For a fixed number of nodes and links per node there is no single best design: some have few steps "
        "(good for small messages), others load every link evenly (good for large ones). The Finder builds many "
        "designs from known base graphs and expansions and keeps only those that no other beats in both numbers: "
        "the Pareto frontier. Which point on it is best depends on the message size; slide M to see the winner "
        "move from the low-step end to the low-bandwidth end.")
    c1, c2, c3 = st.columns([1, 1, 2])
    n = int(c1.select_slider("N, nodes", FRONTIER_NS, value=64, key="l_front_n"))
    d = int(c2.radio("d, links out of each node", FRONTIER_DEGREES, index=1, horizontal=True, key="l_front_d"))
    size = float(c3.select_slider("M, allreduce size (bytes)", FRONTIER_SIZES, value=1e6, key="l_front_m",
                                  format_func=lambda m: f"{m:.3g}"))
    rows = frontier_rows(n, d)
    times = frontier_times(rows, work, size)
    best = best_index(times)
    moore, share = bound(n, d)
    c1, c2 = st.columns(2)
    c1.plotly_chart(frontier_figure(rows, (moore, share), best, title=f"Pareto frontier, N = {n}, d = {d}",
                                    width_px=HALF_WIDTH_PX),
                    key="l_front_chart")
    series = {r["name"]: [step_model_time_us(r["steps"], r["tb_factor"], work.alpha_us, m, work.bandwidth_gbs,
                                             "allreduce") for m in FRONTIER_SIZES] for r in rows}
    series["lower bound"] = [step_model_time_us(moore, share, work.alpha_us, m, work.bandwidth_gbs, "allreduce")
                             for m in FRONTIER_SIZES]
    fine = [10 ** (k / 40) for k in range(120, 401)]         # where the winner changes, to 6% in M
    winners = [best_index(frontier_times(rows, work, m)) for m in fine]
    changes = [(fine[i], f"→ {rows[w]['name']} (≈{fine[i]:.2g} B)") for i, w in enumerate(winners)
               if i and w != winners[i - 1]]
    c2.plotly_chart(size_curves_figure(FRONTIER_SIZES, series, marker=size, crossovers=changes,
                                       highlight=rows[best]["name"],
                                       title="Allreduce time of each frontier design (step model)",
                                       y_title="time, step model (µs)", width_px=HALF_WIDTH_PX),
                    key="l_front_sizes")
    cols = metric_columns(3)
    cols[0].metric("winner at this M", rows[best]["name"])
    cols[1].metric("its allreduce time, step model (µs)", f"{times[best]:.4g}")
    bound_time = step_model_time_us(moore, share, work.alpha_us, size, work.bandwidth_gbs, "allreduce")
    cols[2].metric("× the lower bound", f"{times[best] / bound_time:.3f}")
    st.caption(f"x marks the bound: the Moore diameter {moore} and (N-1)/N = {_fraction(share)}; the star the "
               f"winner for M = {size:.3g} bytes with the sidebar's alpha {work.alpha_us:g} µs and B "
               f"{work.bandwidth_gbs:g} GB/s. The times are the papers' step model, steps × alpha + tb × M/B "
               "doubled for allreduce: steps and tb come from the expansion theorems (the finder predicts, no "
               "schedule is built here); the Finder prices designs up to 256 nodes with the runtime model of their "
               "verified schedules, and the Schedule page builds and verifies one.")
    c1, c2 = st.columns(2)
    _open(c1, f"Open N = {n}, d = {d} in the Finder", "l_front_open_finder", navigation.FINDER,
          {"f_n": n, "f_d": d, "f_kind": "directed", "f_coll": "allreduce", "f_mix": "the sidebar's M"},
          icon=":material/travel_explore:")
    _open_schedule(c2, f"Schedule the winner {rows[best]['name']}", "l_front_open_schedule", rows[best]["expr"],
                   "expansion", "allreduce")


def genmodel_series(size: float) -> dict[str, list[float]]:
    p = CPU_TESTBED
    return {"CPS (GenModel)": [cps_cost(m, size, p).total for m in GENMODEL_SERVERS],
            "CPS (classic α, β, γ)": [classic_cost("cps", m, size, p).total for m in GENMODEL_SERVERS],
            "Ring (GenModel)": [ring_cost(m, size, p).total for m in GENMODEL_SERVERS]}


def step_genmodel(work: workload.Workload) -> None:
    _header(5)
    st.markdown(
        "The alpha-beta model counts steps and bytes on links. Measured clusters show two more costs. Incast: when "
        "more than w_t senders push into one receiver at once, the switch pauses them and the transfer slows "
        "down. Memory: every reduction reads its inputs and writes its output, and a ring's chain of small "
        "reductions moves about three times the data of one wide reduction (CPS). GenModel adds both terms; below "
        "the GenModel paper's CPU testbed (w_t = 9): for large data, the one-switch 'co-located parameter "
        "server' plan (CPS, everyone sends to everyone) stops beating the ring a few servers past the knee, "
        "which the classic model cannot see.")
    c1, c2 = st.columns(2)
    size = float(c1.select_slider("S, floats per server", GENMODEL_FLOATS, value=1e9, key="l_gm_s",
                                  format_func=lambda s: f"{s:.0e} ({s * 4 / 1e6:g} MB)"))
    n = int(c2.slider("N for the numbers below", 2, GENMODEL_SERVERS[-1], 16, key="l_gm_n"))
    series = genmodel_series(size)
    st.plotly_chart(servers_figure(GENMODEL_SERVERS, series, CPU_TESTBED.w_t,
                                   title=f"AllReduce time against N, S = {size:.0e} floats (seconds)"),
                    key="l_gm_chart")
    i = GENMODEL_SERVERS.index(n)
    cps, classic, ring = (series[k][i] for k in ("CPS (GenModel)", "CPS (classic α, β, γ)", "Ring (GenModel)"))
    cols = metric_columns(3)
    cols[0].metric("CPS, GenModel (s)", f"{cps:.4g}", delta=f"{cps - classic:+.3g} s incast + memory",
                   delta_color="off")
    cols[1].metric("CPS, classic model (s)", f"{classic:.4g}")
    cols[2].metric("Ring, GenModel (s)", f"{ring:.4g}")
    ring_wins = next((m for m, r, c in zip(GENMODEL_SERVERS, series["Ring (GenModel)"], series["CPS (GenModel)"])
                      if r < c), None)
    verdict = (f"At this size the ring beats CPS from N = {ring_wins} servers on (GenModel); the classic model "
               "always prefers CPS." if ring_wins else
               "At this size the ring never beats CPS here: its 2(N-1) steps of latency cost more than the incast; "
               "try a larger S.")
    st.caption(f"{verdict} Up to w_t = 9 servers the two CPS curves differ only by the memory term; past the knee "
               "the incast term grows with every server. Splitting CPS into groups of at most w_t (hierarchical "
               "CPS, on the GenModel page) avoids it. Sizes in floats (4 bytes) and times in seconds, as in the "
               "paper.")
    _open(st, f"Open the GenModel page with N = {n}", "l_gm_open", navigation.GENMODEL,
          {"gm_n": n, "gm_size": size, "gm_preset": "cpu_testbed"}, icon=":material/calculate:")


def step_runtime_model(work: workload.Workload) -> None:
    _header(6)
    st.markdown(
        "Every time the studio shows for a built schedule comes from its **runtime model**, which runs the "
        "schedule as a runtime would. Everything one link carries in one step is one send. A send starts once the "
        "data it carries has arrived at its sender (a reduction waits for every partial sum it adds) and its link "
        "is free, and holds the link for alpha + bytes / bandwidth; with the sidebar's numbers every send from a "
        "GPU pays alpha, and the links are scaled so that a node's egress is B. Switches store and forward: a "
        "switch port is a link like any other, and a piece leaves the switch once it has fully arrived (with the "
        "sidebar's numbers, at no new alpha). The buffer is cut into P slices that follow each other through the schedule, as a runtime "
        "loops over a large buffer: slice k's step t runs in wave k + t and a link serves its sends in wave order, "
        "so one slice's late steps overlap the next slice's early ones. The model tries P = 1, 2, 4, ... and keeps "
        "the fastest. Not modelled: protocol overheads beyond alpha (NCCL's LL and LL128 flags and packing), "
        "congestion control, and GPU compute (reductions and copies are free, except that an export for RCCL, "
        "whose kernels reduce in a local step after each receive, is planned with that pass at 40 GB/s per "
        "copy); a link is either busy or free. "
        "The papers' step model, steps × alpha + tb_factor × M/B, makes every step wait for the slowest link of "
        "the step before and never pipelines; it is shown beside the model as a second figure.")
    c1, c2, c3 = st.columns([2, 2, 1])
    pick = c1.selectbox("Schedule", list(GANTT_EXAMPLES), format_func=GANTT_EXAMPLES.get, key="l_gantt_pick")
    p = c2.radio("P, slices of the buffer", GANTT_SLICES, horizontal=True, key="l_gantt_p",
                 format_func=lambda v: "the model's best" if v == "best" else str(v),
                 help=f"The model's best tries P = 1, 2, 4, ... up to {GANTT_MAX_SLICES} here (no slice below "
                      f"{Execution().min_slice_bytes / 1024:g} KiB); a number fixes P.")
    colour = c3.radio("Colour by", ["slice", "step"], horizontal=True, key="l_gantt_color")
    expr, algo, coll = pick.split("|")
    try:
        with st.spinner("Running the runtime model …"):
            r = built(expr, algo, coll)
            model = schedule_model(expr, algo, coll, work.runtime.key, None if p == "best" else int(p),
                                   GANTT_MAX_SLICES)
            run = model.run(work.total_bytes, record=True)
    except ValueError as exc:
        text = str(exc).splitlines()[0] if str(exc) else type(exc).__name__
        st.error(f"the runtime model cannot time {expr}: {text}")
        return
    step = alpha_beta_us(r.cost.steps, r.cost.tb_factor, work.total_bytes, work.alpha_us, work.bandwidth_gbs)
    cols = metric_columns(4)
    cols[0].metric("runtime model (µs)", f"{run.time_us:.4g}",
                   help=f"algbw {run.algbw_gbs:.4g} GB/s, busbw {run.busbw_gbs:.4g} GB/s")
    cols[1].metric("P, slices", run.slices)
    cols[2].metric("step model (µs)", f"{step:.4g}",
                   help=f"{r.cost.steps} steps × alpha + tb_factor {_fraction(r.cost.tb_factor)} × M/B")
    cols[3].metric("busiest link", f"{max(run.utilisation().values(), default=0.0):.0%}",
                   help="busy time / completion time")
    st.plotly_chart(gantt_figure(r.topology, run.timeline, colour), key="l_gantt_chart")
    st.caption(f"One bar per send: {run.messages} sends per slice × P = {run.slices} = {len(run.timeline)}, for the "
               f"sidebar's M = {work.total_bytes:.4g} bytes ({work.price_label}). A gap on a link is the link waiting for data; slices that overlap are pipelining at work.")
    _open_schedule(st, f"Schedule {algo} {coll} on {expr}", "l_gantt_open", expr, algo, coll)


@st.cache_data(show_spinner=False, max_entries=2)
def machine_numbers() -> dict:
    """Step 7's numbers: the sample NCCL topology imported, ForestColl on it and on ``dgx_a100(boxes=1)``."""
    from solvers.forestcoll import forestcoll
    from topologies.imports import read_import

    imported = read_import(MACHINE_XML)
    topo = imported.topology
    ours, paper = forestcoll(topo), forestcoll(parse_topology("dgx_a100(boxes=1)"))
    port = max(float(l.bandwidth) for l in topo.links)
    return {"gpus": topo.n, "switches": len(topo.switch_nodes), "port_gbs": port, "assumed": imported.assumed,
            "ours": float(ours.algbw), "paper": float(paper.algbw)}


@st.cache_data(show_spinner=False, max_entries=2)
def machine_fit() -> dict:
    """Step 7's calibration: the sample log fitted for NCCL's ring on biring(16) (``solvers.runtime.calibrate``)."""
    from solvers.runtime.calibrate import calibrate
    from solvers.runtime.measured import read_bench_log

    log = read_bench_log(MACHINE_LOG.read_bytes())
    r = built("biring(16)", "ring", "allreduce")
    fit = calibrate(r.topology, r.schedule, log, source=f"ring fit to {MACHINE_LOG.name}", detail=False)
    return {"alpha": fit.alpha_us, "bw": fit.bandwidth_gbs, "rms": fit.rms, "sizes": list(fit.sizes),
            "measured": list(fit.measured_us), "model": list(fit.model_us)}


def step_machine() -> None:
    _header(7)
    st.markdown(
        "The people who export schedules have the machine. NCCL writes its own view of it to XML "
        "(`NCCL_TOPO_DUMP_FILE`), `nvidia-smi topo -m` and `rocm-smi --showtopo` print how the GPUs are joined, and "
        "nccl-tests prints the time it measured at every size. The studio reads all of them (Compose and Clusters "
        "take the files; the CLI takes their paths). An NCCL file becomes one compute node per GPU and one "
        "crossbar node per box for its NVSwitches, as NCCL itself folds them, each GPU's port as wide as its "
        f"NVLinks at NCCL's own figure for its generation. Here: `examples/{MACHINE_XML.name}`, written in "
        "NCCL's format for a DGX A100-like box (not a dump of a real machine).")
    try:
        with st.spinner("Importing the sample and running ForestColl …"):
            got = machine_numbers()
            fit = machine_fit()
    except (ValueError, OSError) as exc:
        st.error(f"the samples in examples/ cannot be read: {str(exc).splitlines()[0] if str(exc) else exc}")
        return
    cols = metric_columns(4)
    cols[0].metric("GPUs imported", got["gpus"], help=f"and {got['switches']} crossbar node(s)")
    cols[1].metric("NVLink per GPU (GB/s)", f"{got['port_gbs']:g}", help="12 NVLinks x 20 GB/s (sm 80)")
    cols[2].metric("ForestColl algbw (GB/s)", f"{got['ours']:.4g}", help="allgather, the flow model's optimum")
    cols[3].metric("on dgx_a100(boxes=1)", f"{got['paper']:.4g}",
                   help="the paper's model: 300 GB/s per GPU; the ratio is the ports' ratio")
    for line in got["assumed"]:
        st.caption(f"Assumed: {line}")
    st.markdown(
        f"The same ForestColl gives {got['ours']:.4g} GB/s here and {got['paper']:.4g} on the paper's model: "
        f"{got['ours'] / got['paper']:.3g} = {got['port_gbs']:g} / 300, the ratio of the GPUs' ports. Measured "
        f"times close the loop: `examples/{MACHINE_LOG.name}` is a 16-rank all_reduce log (synthetic, written "
        "from known prices with 3 % noise). Fitting the runtime model of NCCL's ring to it finds the prices "
        f"alpha = {fit['alpha']:.3g} µs and B = {fit['bw']:.3g} GB/s (relative error {fit['rms']:.1%} rms); "
        "`python -m studio calibrate LOG --topo EXPR -o prices.json` writes them as the price file the sidebar "
        "and every command take.")
    fig = size_curves_figure(
        fit["sizes"], {"measured (nccl-tests)": fit["measured"],
                       f"model, ring at alpha {fit['alpha']:.3g} µs, B {fit['bw']:.3g} GB/s": fit["model"]},
        title="The sample log and the calibrated model, ring allreduce on biring(16)")
    st.plotly_chart(fig, key="l_machine_chart")
    _open_schedule(st, "Schedule ring allreduce on biring(16) (add the log under Measured)", "l_machine_open",
                   "biring(16)", "ring", "allreduce")


@st.cache_data(show_spinner=False, max_entries=2)
def survival_rows() -> list[dict]:
    """Step 8's numbers: per design its node and link connectivity, ForestColl's optimal allgather algbw healthy
    and after every single cable failure (``solvers.failures.analyse``: the worst kept), and how many of those
    failures leave it strongly connected."""
    from solvers.failures import FailureTask, analyse, connectivity, elements

    work = Workload().key
    rows = []
    for expr, label in SURVIVAL_DESIGNS.items():
        topo = parse_topology(expr)
        healthy = analyse(FailureTask(expr, "links", (), (), "allgather", work))
        cut = [analyse(FailureTask(expr, "links", (e.name,), (), "allgather", work)) for e in elements(topo, "links")]
        worst = min(cut, key=lambda r: r["optimum_algbw_GBps"] or 0.0)
        rows.append({"name": label, "expr": expr, **connectivity(topo), "cables": len(cut),
                     "connected": sum(1 for r in cut if r["connected"]), "healthy": healthy["optimum_algbw_GBps"],
                     "worst": worst["optimum_algbw_GBps"] or 0.0, "worst_expr": worst["expr"],
                     "worst_failed": worst["failed"]})
    return rows


@st.cache_data(show_spinner=False, max_entries=2)
def ring_after_a_cut() -> dict:
    """The ring on biring(8) with one cable cut: whether a ring is left, and BFB in its place."""
    from solvers.failures import FailureTask, analyse, elements

    cable = elements(parse_topology("biring(8)"), "links")[0].name
    healthy = analyse(FailureTask("biring(8)", "links", (), ("ring",), "allgather", Workload().key))
    row = analyse(FailureTask("biring(8)", "links", (cable,), ("ring", "bfb"), "allgather", Workload().key))
    return {"cable": cable, "expr": row["expr"], "ring": row["ring_status"], "why": row["ring_message"],
            "bfb_ok": row["bfb_status"] == "ok", "ring_algbw": row["ring_algbw_GBps"],
            "healthy_algbw": healthy["ring_algbw_GBps"]}


def step_failures() -> None:
    _header(8)
    st.markdown(
        "Clusters run with dead links every day, so a design is also judged by how it degrades. A graph's *link "
        "connectivity* c is the fewest links whose loss disconnects it: any c - 1 cut cables leave every GPU able "
        "to reach every other. Circulants and generalized Kautz graphs of degree d have c = d, the most a degree "
        "allows, so they survive any d - 1 failures (a generalized Kautz graph with self-loops, such as "
        "gkautz(4,12), has less: a loop is a link that joins nothing). A ring has c = 2 counting both directions, and "
        "a single cut cable takes its ring away. ForestColl's optimal algbw is the bandwidth reference: the cable "
        "whose loss "
        "costs most is the design's worst case. All numbers below are computed live (`solvers.failures`, every "
        "single cable of each design cut in turn).")
    try:
        with st.spinner("Cutting every cable of four designs …"):
            rows = survival_rows()
            ring = ring_after_a_cut()
    except (ValueError, ArithmeticError) as exc:
        st.error(f"the failure analysis did not run: {str(exc).splitlines()[0] if str(exc) else exc}")
        return
    table = pd.DataFrame([{"design": f"{r['name']}: {r['expr']}", "link connectivity": r["link_connectivity"],
                           "node connectivity": r["node_connectivity"],
                           "single cuts that stay connected": f"{r['connected']} of {r['cables']}",
                           "worst cut": r["worst_failed"]} for r in rows])
    st.dataframe(blank_missing(table), hide_index=True, key="l_fail_table")
    st.plotly_chart(survival_figure(rows), key="l_fail_chart")
    if ring["ring"] != "ok":
        verdict = f"no ring is left ({ring['why'] or ring['ring']})"
    elif "no Hamiltonian" in (ring["why"] or ""):
        verdict = (f"no Hamiltonian ring is left, so the ring routes an edge the long way round, over several links: "
                   f"{ring['ring_algbw']:.3g} GB/s of algbw against {ring['healthy_algbw']:.3g} healthy")
    else:
        verdict = "a ring is still found"
    st.markdown(
        f"A ring on biring(8) with the cable {ring['cable']} cut: {verdict}. The "
        "data must then take the long way round the broken ring; BFB "
        + ("still builds a verified schedule on what is left. " if ring["bfb_ok"] else "cannot run either. ")
        + "Open it on the Schedule page, export included: the degraded fabric is the design "
        f"`{ring['expr']}`.")
    _open_schedule(st, "Schedule BFB on biring(8) with one cable cut", "l_fail_open", ring["expr"], "bfb",
                   "allgather")


ROOTED_MESH = "mesh(6,6)"
ROOTED_ROOTS = {"0": "a corner", "2": "an edge (Table V's broadcast source)", "14": "near the centre"}
TABLE_V_TENANTS = [{"name": "broadcast from 2", "collective": "broadcast", "root": 2, "bytes": 1 << 20},
                   {"name": "reduce to 17", "collective": "reduce", "root": 17, "bytes": 1 << 20},
                   {"name": "allgather", "collective": "allgather", "bytes": 36 << 20}]


@st.cache_data(show_spinner=False, max_entries=8)
def rooted_rows(prices: tuple) -> list[dict]:
    """Step 9's table: per root of the 6x6 mesh its eccentricity, the one-chunk TACOS broadcast's steps and the
    runtime model's time for it and for a pipelined chain, at the workload's M."""
    from topologies.properties import eccentricity

    work = Workload(*prices)
    topo = parse_topology(ROOTED_MESH)
    rows = []
    for root, where in ROOTED_ROOTS.items():
        tacos = synthesize(topo, "tacos", f"broadcast@{root}", total_bytes=work.total_bytes)
        chain = synthesize(topo, "chain", f"broadcast@{root}")
        rows.append({"root": f"{root} ({where})", "eccentricity": eccentricity(topo, int(root)),
                     "TACOS steps": tacos.schedule.steps,
                     "TACOS one chunk (µs)": work.price_result(tacos).run.time_us,
                     "chain, 8 pieces (µs)": work.price_result(chain).run.time_us,
                     "bound (µs)": work.price_result(tacos).bound_us})
    return rows


@st.cache_data(show_spinner=False, max_entries=4)
def shared_mesh(prices: tuple) -> list[dict]:
    """Step 9's Table V run: the three tenants on the 6x6 mesh, TACOS's greedy jointly and apart and Direct; per
    tenant its finish with the others and alone."""
    import json

    from solvers.tenants import read_tenants, synthesize_tenants

    work = Workload(*prices)
    topo = parse_topology(ROOTED_MESH)
    tenants = read_tenants(json.dumps(TABLE_V_TENANTS))
    out = []
    for algo, mode in (("tacos", "joint"), ("tacos", "separate"), ("direct", "separate")):
        result = synthesize_tenants(topo, tenants, algo, mode, {}, work)
        out.append({"label": f"{algo} ({mode})", "makespan": result.makespan_us,
                    "rows": [(r.tenant.name, r.finish_us, r.alone_us) for r in result.rows]})
    return out


def step_rooted(work: workload.Workload) -> None:
    _header(9)
    st.markdown(
        "NCCL's broadcast and reduce, and the gather and scatter of pipeline-parallel and inference jobs, have a "
        "**root**. On a mesh a broadcast of one chunk cannot reach the farthest GPU in fewer hops than the root's "
        "*eccentricity* (its largest distance to another GPU), and TACOS's greedy reaches exactly that: every GPU "
        "takes the chunk from a neighbour the step after the neighbour got it. A reduce is the same tree run "
        "backwards on the reversed links. One chunk is latency-optimal but moves the whole buffer hop by hop; cut "
        "into pieces that follow each other (a pipelined chain), the buffer streams, and large messages go faster "
        "though the chain has far more steps.")
    topo = parse_topology(ROOTED_MESH)
    root = st.radio("Root on the 6x6 mesh", list(ROOTED_ROOTS), key="l_root", horizontal=True,
                    format_func=lambda r: f"{r}: {ROOTED_ROOTS[r]}")
    try:
        rows = rooted_rows(work.runtime.key)
        tree = synthesize(topo, "tacos", f"broadcast@{root}", total_bytes=work.total_bytes).schedule
    except (ValueError, ArithmeticError) as exc:
        st.error(f"the broadcasts did not run: {str(exc).splitlines()[0] if str(exc) else exc}")
        return
    left, right = st.columns(2)
    with left:
        st.dataframe(pd.DataFrame(rows), hide_index=True, key="l_root_table")
        st.caption(f"Times for M = {work.total_bytes:.4g} bytes, {work.price_label}. The bound needs every GPU to "
                   "take in all of M and the farthest one to be reached.")
    first: dict[int, int] = {}
    for t in tree.transfers:
        first[t.link] = min(first.get(t.link, t.step), t.step)
    fig = topology_figure(topo, f"TACOS broadcast from {root}: the step each link carries the chunk",
                          link_weight=first, weight_label="step", width_px=HALF_WIDTH_PX)
    with right:
        st.plotly_chart(fig, key="l_root_tree")
    st.markdown(
        "**Three collectives at once.** TACOS's Table V runs a broadcast from GPU 2, a reduce to GPU 17 and an "
        "allgather together on the 6x6 mesh. The allgather alone needs 18 chunk times: a corner GPU takes in 35 "
        "chunks over 2 links. Synthesized *jointly*, the broadcast and reduce fit in the links the allgather "
        "leaves free and the makespan stays the allgather's; synthesized *apart* and laid over each other, their "
        "sends queue behind each other on shared links; Direct, a separate copy per destination on a shortest "
        "path, congests the mesh most. Each tenant's schedule is verified on its own; the runtime model times "
        "them together.")
    try:
        with st.spinner("Three collectives on the 6x6 mesh …"):
            runs = shared_mesh(work.runtime.key)
    except (ValueError, ArithmeticError) as exc:
        st.error(f"the tenants did not run: {str(exc).splitlines()[0] if str(exc) else exc}")
        return
    fig = go.Figure()
    for run in runs:
        fig.add_bar(name=f"{run['label']}: makespan {run['makespan']:.4g} µs", x=[r[0] for r in run["rows"]],
                    y=[r[1] for r in run["rows"]],
                    hovertext=[f"alone {r[2]:.4g} µs" for r in run["rows"]])
    fig.update_layout(barmode="group", yaxis_title="finish with the others (µs)", yaxis_rangemode="tozero",
                      height=360)
    place_title(fig, "Each tenant's finish on the shared 6x6 mesh")
    st.plotly_chart(fig, key="l_tenants_chart")
    base = runs[0]["makespan"]
    st.caption(" · ".join(f"{r['label']} {r['makespan'] / base:.2f}" for r in runs)
               + " (makespans normalized to the joint greedy's). Compare's 'Several collectives at once' tab adds "
                 "the ILP, TACCL-like and TE-CCL.")
    _open_schedule(st, "Schedule a broadcast on the 6x6 mesh", "l_root_open", ROOTED_MESH, "tacos", "broadcast")


def render() -> None:
    st.title("Learn: latency, bandwidth and topology")
    work = workload.current()
    st.markdown(
        "A collective (allreduce, allgather, ...) on N accelerators costs two things in the alpha-beta model: "
        "**latency**, T_L = steps × alpha, paid once per communication step, and **bandwidth**, T_B = tb_factor × "
        "M/B, the data on the busiest link. The steps below show how the shape of the network trades one for the "
        "other. Every number is computed live by the studio's library, with alpha, M and B from the sidebar; the "
        "times of built schedules come from the runtime model of step 6. Each step ends with a button to the page "
        "that does it for real.")
    st.markdown(" · ".join(f"[{i}. {title}](#{anchor})" for i, (anchor, title) in enumerate(STEPS, 1)))
    step_rings(work)
    step_diameter(work)
    step_line_graph(work)
    step_frontier(work)
    step_genmodel(work)
    step_runtime_model(work)
    step_machine()
    step_failures()
    step_rooted(work)
    learn_collectives.render_section(work)    # ring, tree and direct-connect at N = 64
