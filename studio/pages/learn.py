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
10. ring, tree and direct-connect at N = 64 (``studio.views.learn_collectives``): each verified allreduce's alpha and M/B
   terms against M, the sizes where the fastest changes, NCCL's double binary tree and ForestColl's forest drawn.

Times of built schedules come from the runtime model (``solvers.runtime``) with the sidebar's alpha and B;
where a step predicts (steps, tb) without building a schedule it uses the papers' step model
(``solvers.core.cost.alpha_beta_us``) and says so.

Every computation is small (sizes capped below) and cached, so the page renders in a few seconds.
"""
from __future__ import annotations

import math
from fractions import Fraction

import pandas as pd
import streamlit as st

from solvers.directconnect.finder import bound
from solvers.genmodel import CPU_TESTBED, classic_cost, cps_cost, ring_cost
from solvers.directconnect.selection import best_index, step_model_time_us
from studio import navigation, workload
from studio.views import learn_collectives
from studio.figures.curves import frontier_figure
from studio.figures.titles import HALF_WIDTH_PX
from studio.figures.genmodel import servers_figure
from studio.figures.learn import diameter_figure, latency_share_figure, size_curves_figure
from studio.metric_grid import metric_columns
from studio.tables import blank_missing
from studio.views.learn_common import (CROSS_SIZES, DIAMETER_DEGREES, DIAMETER_NS, FRONTIER_DEGREES, FRONTIER_NS,
                                       FRONTIER_SIZES, GENMODEL_FLOATS, GENMODEL_SERVERS, LINE_BASES, LINE_LEVELS,
                                       RING_DEGREES, RING_NS, SIZES, STEPS, crossings, drawing, fraction_text,
                                       frontier_rows, gkautz_expr, header, model_times, open_button, open_compose,
                                       open_schedule, schedule_numbers, step_model_us, topology_summary)
from studio.views.learn_practice import step_failures, step_machine, step_rooted, step_runtime_model



# ------------------------------------------------------------------------------------------------- the steps
def step_rings(work: workload.Workload) -> None:
    header(1)
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
    ring_expr, low_expr = f"uniring({d},{n})", gkautz_expr(d, n)
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
        b.metric(f"tb_factor ({tag})", f"{float(tb):.4f}", help=f"T_B / (M/B) = {fraction_text(tb)} exactly")
    st.caption(f"Lower bound: 2 × the Moore diameter {moore} (no {n}-node degree-{d} graph has a smaller "
               f"diameter) and 2(N-1)/N = {fraction_text(tb_bound)}, that is 2·{moore}·alpha + 2(N-1)/N·M/B, below "
               "the runtime model's time of any allreduce on such a graph. Both schedules were built and checked "
               "step by step by the simulator; their times are the runtime model's (step 6).")
    price = (work.runtime.key,)
    with st.spinner("Running the runtime model …"):
        ring_t = model_times(ring_expr, "ring", "allreduce", *price, tuple(SIZES))
        low_t = model_times(low_expr, "bfb", "allreduce", *price, tuple(SIZES))
        ring_fine = model_times(ring_expr, "ring", "allreduce", *price, CROSS_SIZES)
        low_fine = model_times(low_expr, "bfb", "allreduce", *price, CROSS_SIZES)
    series = {f"ring, {ring['name']}": ring_t, f"BFB, {low['name']}": low_t,
              "lower bound": [step_model_us(work, steps_bound, tb_bound, m) for m in SIZES]}
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
    open_schedule(c1, f"Schedule the ring on {ring['name']}", "l_ring_open_ring", ring_expr, "ring", "allreduce")
    open_schedule(c2, f"Schedule {low['name']} with BFB", "l_ring_open_low", low_expr, "bfb", "allreduce")


def diameter_designs(n: int, d: int) -> list[str]:
    """A few degree-d designs on n nodes, from a ring to the lowest-diameter family known for any n."""
    if d == 2:
        side = max(2, round(math.sqrt(n)))
        return [f"uniring(2,{n})", f"biring(2,{n})", f"dcirculant({n},[1,{side}])", gkautz_expr(2, n)]
    a = max(x for x in range(1, math.isqrt(n) + 1) if n % x == 0)
    out = [f"uniring(4,{n})", f"biring(4,{n})"]
    if a >= 3:
        out.append(f"torus({a},{n // a})")
    return out + [f"circulant({n},d=4)", gkautz_expr(4, n)]


def step_diameter(work: workload.Workload) -> None:
    header(2)
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
    shares = {r["name"]: [r["diameter"] * work.alpha_us / step_model_us(work, r["diameter"], share, m)
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
        open_compose(st, "Open in Compose", "l_diam_open", rows[pick]["expr"])


def step_line_graph(work: workload.Workload) -> None:
    header(3)
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
                        help="K₂,₂ is the paper's worked example (Fig. 2): L(K₂,₂) has 8 nodes, 3 steps, tb 1.")
    level = int(c2.radio("Expand n times", LINE_LEVELS, horizontal=True, key="l_line_n"))
    line_expr = f"line({base},{level})"
    with st.spinner("Building both expansion schedules …"):
        g = schedule_numbers(base, "expansion", "allgather")
        lg = schedule_numbers(line_expr, "expansion", "allgather")
    c1, c2 = st.columns(2)
    c1.plotly_chart(drawing(base, f"G = {g['name']}: {g['nodes']} nodes"), key="l_line_base_chart")
    c2.plotly_chart(drawing(line_expr, f"{lg['name']}: {lg['nodes']} nodes"), key="l_line_chart")
    cols = metric_columns(5)
    cols[0].metric("steps (G)", g["steps"], help="allgather steps of G's schedule")
    cols[1].metric("tb_factor (G)", f"{float(g['tb']):.4f}", help=f"{fraction_text(g['tb'])} exactly")
    cols[2].metric("steps (line graph)", lg["steps"], delta=f"+{lg['steps'] - g['steps']}", delta_color="off")
    cols[3].metric("tb_factor (line graph)", f"{float(lg['tb']):.4f}",
                   delta=f"+{float(lg['tb'] - g['tb']):.4f}", delta_color="off",
                   help=f"{fraction_text(lg['tb'])} exactly; G's was {fraction_text(g['tb'])}")
    cols[4].metric("tb bound (N'-1)/N'", f"{float(lg['tb_bound']):.4f}",
                   help=f"{fraction_text(lg['tb_bound'])}: the least any allgather on {lg['nodes']} nodes can do")
    predicted = lg["predicted_tb"]
    exact = "equal to" if lg["prediction_exact"] else "an upper bound on"
    st.caption(f"Allgather on G = {g['name']} ({g['nodes']} nodes) and on {lg['name']} ({lg['nodes']} nodes), both "
               f"built by the expansion schedule and verified. Predicted by the theorem: {lg['predicted_steps']} "
               f"steps and tb {fraction_text(predicted)} ({exact} the built value {fraction_text(lg['tb'])}); "
               f"{float(lg['tb'] / lg['tb_bound']):.4f}× the bandwidth bound. An allreduce doubles both numbers.")
    c1, c2 = st.columns(2)
    open_schedule(c1, f"Schedule {lg['name']} (expansion allgather)", "l_line_open_schedule", line_expr,
                   "expansion", "allgather")
    open_compose(c2, f"Open {lg['name']} in Compose", "l_line_open_compose", line_expr)


def frontier_times(rows: list[dict], work: workload.Workload, size: float) -> list[float]:
    """The step model's allreduce time of each frontier row (the theorems' steps and tb; no schedule is built)."""
    return [step_model_time_us(r["steps"], r["tb_factor"], work.alpha_us, size, work.bandwidth_gbs, "allreduce")
            for r in rows]


def step_frontier(work: workload.Workload) -> None:
    header(4)
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
    changes = [(fine[i], f"→ {rows[w]['name']}<br>≈ {fine[i]:.2g} B") for i, w in enumerate(winners)
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
    st.caption(f"x marks the bound: the Moore diameter {moore} and (N-1)/N = {fraction_text(share)}; the star the "
               f"winner for M = {size:.3g} bytes with the sidebar's alpha {work.alpha_us:g} µs and B "
               f"{work.bandwidth_gbs:g} GB/s. The times are the papers' step model, steps × alpha + tb × M/B "
               "doubled for allreduce: steps and tb come from the expansion theorems (the finder predicts, no "
               "schedule is built here); the Finder prices designs up to 256 nodes with the runtime model of their "
               "verified schedules, and the Schedule page builds and verifies one.")
    c1, c2 = st.columns(2)
    open_button(c1, f"Open N = {n}, d = {d} in the Finder", "l_front_open_finder", navigation.FINDER,
          {"f_n": n, "f_d": d, "f_kind": "directed", "f_coll": "allreduce", "f_mix": "the sidebar's M"},
          icon=":material/travel_explore:")
    open_schedule(c2, f"Schedule the winner {rows[best]['name']}", "l_front_open_schedule", rows[best]["expr"],
                   "expansion", "allreduce")


def genmodel_series(size: float) -> dict[str, list[float]]:
    p = CPU_TESTBED
    return {"CPS (GenModel)": [cps_cost(m, size, p).total for m in GENMODEL_SERVERS],
            "CPS (classic α, β, γ)": [classic_cost("cps", m, size, p).total for m in GENMODEL_SERVERS],
            "Ring (GenModel)": [ring_cost(m, size, p).total for m in GENMODEL_SERVERS]}


def step_genmodel(work: workload.Workload) -> None:
    header(5)
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
    open_button(st, f"Open the GenModel page with N = {n}", "l_gm_open", navigation.GENMODEL,
          {"gm_n": n, "gm_size": size, "gm_preset": "cpu_testbed"}, icon=":material/calculate:")


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
