"""The Learn section "Ring, tree and direct-connect at N = 64" (issue 59, finding 13): the three classic shapes of an
allreduce on 64 GPUs side by side, each one's step-model time split into its latency and bandwidth terms.

The designs (``DESIGNS``): a ring (``biring(64)`` with the ring synthesizer: 2(N-1) steps, T_B at the lower bound
2(N-1)/N × M/B), NCCL's double binary tree (the ``dbt`` synthesizer on ``dbt_graph(64)``, the two trees' edges both
ways; one chunk, so 2h steps for trees of height h, direct-connect paper section 8.2) and the best direct-connect
design of degree 4, the generalized Kautz graph Π_{4,64} with BFB (direct-connect paper Table 7). Each allreduce is
built and verified by ``solvers.synthesize`` once per process (``st.cache_data``), and priced by the step model
T = T_L + T_B = steps × alpha + tb × M/B (``solvers.core.cost.alpha_beta_us``) with the sidebar's alpha and B.
Where the fastest design changes is ``solvers.compare.winners`` over the same numbers. Below the figure, the
double binary tree's two trees on 8 GPUs and ForestColl's forest (ForestColl section 4: k out-trees per GPU packed
into the fabric) are drawn.
"""
from __future__ import annotations

from fractions import Fraction

import streamlit as st

from solvers.compare import Curve, winners
from solvers.core.cost import alpha_beta_us
from solvers.core.verify import verify
from solvers.synthesize import synthesize
from studio import workload
from studio.figures.titles import HALF_WIDTH_PX
from studio.views.learn_n64 import double_tree_figure, terms_figure, trees_figure
from topologies.baseline_fabrics import nccl_double_binary_tree
from topologies.display import math_name
from topologies.expression import parse_topology

N = 64
ANCHOR = "ring-tree-direct"
TITLE = "10. Ring, tree and direct-connect at N = 64"
SIZES = tuple(10.0 ** (3 + k / 8) for k in range(49))        # 1 KB to 1 GB, eight points a decade
DESIGNS = (("ring", "biring(64)", "ring"),                     # (label, design, synthesizer)
           ("double binary tree", "dbt_graph(64)", "dbt"),
           ("Π₄,₆₄ with BFB", "gkautz(4,64)", "bfb"))            # names as math (topologies.display)
TREE_FABRIC = "dbt_graph(8)"                                   # NCCL's two trees on 8 GPUs
FOREST_FABRIC = "circulant(8,[1,2])"                           # ForestColl's forest on a degree-4 ring of 8


@st.cache_data(show_spinner=False, max_entries=2)
def design_numbers() -> list[dict]:
    """Each design's allreduce built and verified by ``solvers.synthesize``: its label, design, synthesizer, name,
    steps and tb_factor (exact, as "num/den") and whether the simulator passed it."""
    out = []
    for label, expr, algo in DESIGNS:
        r = synthesize(parse_topology(expr), algo, "allreduce")
        out.append({"label": label, "expr": expr, "algo": algo, "name": math_name(r.topology.name or expr),
                    "steps": int(r.cost.steps), "tb": str(Fraction(r.cost.tb_factor)),
                    "verified": bool(r.verification.ok)})
    return out


def terms(rows: list[dict], alpha_us: float, bandwidth_gbs: float,
          sizes: tuple[float, ...] = SIZES) -> dict[str, tuple[list[float], list[float]]]:
    """label -> (T_L at each size, T_B at each size) in µs: T_L = steps × alpha, T_B = tb × M/B, the two parts of
    ``alpha_beta_us`` (computed as that function's value at M = 0 and the rest, so they add up to it)."""
    out = {}
    for r in rows:
        alpha = alpha_beta_us(r["steps"], Fraction(r["tb"]), 0.0, alpha_us, bandwidth_gbs)
        out[r["label"]] = ([alpha] * len(sizes),
                           [alpha_beta_us(r["steps"], Fraction(r["tb"]), m, alpha_us, bandwidth_gbs) - alpha
                            for m in sizes])
    return out


def crossovers(rows: list[dict], split: dict[str, tuple[list[float], list[float]]],
               sizes: tuple[float, ...] = SIZES) -> list[tuple[float, str, str]]:
    """(size, slower-above, faster-above) wherever the fastest design changes, from ``solvers.compare.winners``
    over the step-model totals."""
    cs = [Curve(r["label"], r["expr"], r["label"], "allreduce", r["algo"], tuple(sizes),
                tuple(a + b for a, b in zip(*split[r["label"]]))) for r in rows]
    wins = winners(cs)
    return [(w.to_bytes, w.name, nxt.name) for w, nxt in zip(wins, wins[1:])]


@st.cache_data(show_spinner=False, max_entries=2)
def tree_edges() -> dict:
    """The two trees of NCCL's double binary tree on ``TREE_FABRIC`` (its allreduce verified by ``synthesize``) and
    ForestColl's trees rooted at one GPU of ``FOREST_FABRIC``, the first with the most distinct trees (the forest's
    allgather verified by the simulator)."""
    from solvers.forestcoll import forestcoll

    topo = parse_topology(TREE_FABRIC)
    dbt = synthesize(topo, "dbt", "allreduce")
    first, second = nccl_double_binary_tree(topo.n)
    dbt_trees = {f"tree {i} (root {parents.index(-1)})": parents for i, parents in enumerate((first, second), 1)}
    fabric = parse_topology(FOREST_FABRIC)
    forest = forestcoll(fabric)
    verify(fabric, forest.allgather()).raise_if_failed()
    counts = [sum(b.root == v for b in forest.batches) for v in fabric.compute_nodes]
    root = fabric.compute_nodes[counts.index(max(counts))]      # the first GPU whose trees differ most
    mine = [b for b in forest.batches if b.root == root]
    forest_trees = {f"tree {i} ×{b.mult}": [tuple(e) for e in b.edges] for i, b in enumerate(mine, 1)}
    return {"dbt": dbt_trees, "names": list(topo.names), "dbt_verified": bool(dbt.verification.ok),
            "dbt_steps": int(dbt.cost.steps), "forest": forest_trees, "root": fabric.names[root], "k": forest.k,
            "forest_trees": forest.trees}


def render_section(work: workload.Workload | None = None) -> None:
    """The section: the terms figure for the sidebar's alpha and B, the crossovers in words, the trees drawn."""
    work = work or workload.current()
    st.divider()
    st.header(TITLE, anchor=ANCHOR)
    st.markdown(
        f"Three ways to allreduce on {N} GPUs. A **ring** moves the least data per link (T_B meets the bound "
        "2(N-1)/N × M/B) but takes 2(N-1) steps. NCCL's **double binary tree** takes 2 × the trees' height steps "
        "(about 2 log₂ N), but sends without pipelining the whole half vector over each tree edge. The "
        "**generalized Kautz graph Π₄,₆₄** with BFB needs 2 × its diameter steps and spreads the data over "
        "all four links of each GPU. Each design's time is its latency term T_L = steps × alpha (dashed) plus "
        "its bandwidth term T_B = tb × M/B (dotted); the solid line is the sum.")
    try:
        with st.spinner("Building and verifying three allreduces on 64 GPUs …"):
            rows = design_numbers()
    except (ValueError, ArithmeticError) as exc:
        st.error(f"the designs did not build: {str(exc).splitlines()[0] if str(exc) else exc}")
        return
    split = terms(rows, work.alpha_us, work.bandwidth_gbs)
    found = crossovers(rows, split)
    marks = [(x, f"{above} faster above ≈ {x:.3g} B") for x, _, above in found]
    st.plotly_chart(terms_figure(list(SIZES), split, crossovers=marks, marker=work.total_bytes,
                                 title=f"Allreduce on {N} GPUs: alpha term and M/B term (alpha {work.alpha_us:g} µs, "
                                       f"B {work.bandwidth_gbs:g} GB/s)"), key="l_n64_terms")
    st.dataframe([{"design": r["label"], "topology": r["name"], "synthesizer": r["algo"], "steps (T_L/alpha)":
                   r["steps"], "tb (T_B/(M/B))": f"{float(Fraction(r['tb'])):.4f}", "verified": r["verified"]}
                  for r in rows], hide_index=True, key="l_n64_table")
    if found:
        said = "; ".join(f"above about **{x:.3g} bytes** {above} overtakes {below}" for x, below, above in found)
        st.info(f"The fastest design changes where the solid lines cross: {said}. Change alpha or B in the sidebar "
                "to move the crossovers.", icon=":material/lightbulb:")
    else:
        st.info("One design is fastest from 1 KB to 1 GB at these prices.", icon=":material/lightbulb:")
    trees = tree_edges()
    left, right = st.columns(2)
    left.plotly_chart(double_tree_figure(trees["dbt"], trees["names"],
                                         "NCCL's double binary tree on 8 GPUs: two trees, half the data each",
                                         width_px=HALF_WIDTH_PX), key="l_n64_dbt")
    right.plotly_chart(trees_figure(parse_topology(FOREST_FABRIC), trees["forest"],
                                    f"ForestColl's trees of GPU {trees['root']} on C(8,{{1,2}}): {trees['k']} per GPU",
                                    width_px=HALF_WIDTH_PX), key="l_n64_forest")
    st.caption(
        "Left: most GPUs that are inner nodes of one tree are leaves of the other, so each sends about as much as "
        f"it receives (allreduce verified, {trees['dbt_steps']} steps on {TREE_FABRIC}). Right: ForestColl packs "
        f"k = {trees['k']} spanning out-trees per GPU ({trees['forest_trees']} in all; ×m: m identical trees) so "
        "that the busiest cut of the fabric sets the time, the optimal allgather (ForestColl section 4; verified by "
        "the simulator).")
