"""All-to-all throughput: the multi-commodity-flow LP (3) of the direct-connect paper (App. A.5; appendix digest
section 1.5), with commodities aggregated by source.

    maximize f   subject to   sum_s y[s, l] <= c_l                                for every link l
                              f + sum_{l out of u} y[s, l] <= sum_{l into u} y[s, l]   for every s and u != s
                              y >= 0

y[s, l] is the flow that left source s and crosses link l (all its destinations together); every node keeps f of
every source's flow. Link capacities c_l are the links' bandwidths over the fastest link's (1 on the paper's unit
links, and on any fabric whose links all have one bandwidth); self-loops carry nothing. So f is in units of the
fastest link: with node bandwidth B on d links, a link of bandwidth b carries B/d * b / b_max, every node sends to
every other at f B/d, and an all-to-all in which every node sends M in total (M/N to each) takes
T = (M/B) d / (N f), with no alpha term (A.5.2). The Moore bound (``moore_rate_bound``, unit links) stays an
upper bound on that f, since no capacity is above 1.

``mcf_rate`` solves it with HiGHS on sparse matrices. The default below ``FW_MIN_NODES`` nodes,
``method="pdlp"``, is HiGHS's first-order primal-dual solver (PDLP), which scales to N = 256 in seconds and N = 512
in about a minute where the interior point method (``method="ipm"``, the reference) needs minutes at N = 128. A
first-order solution is only approximately feasible, so its value is not reported as is; it is turned into a
certified bracket lower <= f* <= upper:

- lower: clip the flows at 0, scale them down until no link exceeds its capacity, and take the least net inflow
  of any (source, node) pair: a feasible point of LP (3) (excess inflow may stay at a node, as the ``<=`` allows);
- upper: weak duality of the maximum concurrent flow, f* <= sum_l c_l w_l / sum_{s != t} dist_w(s, t) for any
  link lengths w >= 0; the capacity rows' dual values are used as w (plus 1e-12, so no length is zero).

``f`` is the lower end. A time limit stops PDLP with the bracket it has (``reached`` False, whatever its width;
an error only when no positive lower end is certified yet). From ``FW_MIN_NODES`` nodes on the default is
``method="fw"`` instead (``alltoall_fw.py``): conjugate Frank-Wolfe on a smoothed maximum link load with all-pairs shortest paths per
iteration, which stops at its target gap (0.5 %) or answers at its time limit (55 s by default, so that the whole
``alltoall`` command takes at most a minute) with the certified bracket it reached (``reached`` says which). The
threshold is measured on two shared cores: PDLP closes the bracket to 1e-6 at N = 256 in seconds and at N = 512 in
about 70 s; at N = 1024 it ran 600 s and 3.6 GB and stopped with gkautz(4,1024) only known within 1.7 %, where
Frank-Wolfe brackets it within 1.4 % in 55 s and 290 MB ([7.955e-4, 8.066e-4]; Table 7 prints 8.01e-4).
``mcf_model`` is the same LP as a Pyomo model, the readable reference
(``solvers.directconnect.bfb_lp.write_lp`` writes it as an .lp file).
"""
from __future__ import annotations

import math
from dataclasses import dataclass
from fractions import Fraction

import numpy as np

from topologies.model import Topology
from topologies.properties import degree, is_strongly_connected, moore_diameter_directed

from ..core.errors import NotApplicable

MCF_TIME_LIMIT_S = 600
FW_TIME_LIMIT_S = 55  # Frank-Wolfe's default: the whole alltoall command within 60 s, then the bracket it has
FW_GAP_TARGET = 5e-3  # Frank-Wolfe stops once (upper - lower) / upper is at most this
FW_MIN_NODES = 513    # the default method is "fw" from this many nodes, "pdlp" below (module docstring)
GAP_TARGET = 1e-6     # PDLP re-solves with a tighter tolerance until upper - lower <= this * upper (twice at most)


@dataclass(frozen=True)
class AllToAll:
    """The LP's per-pair rate ``f`` (and certified ``upper``) in units of the fastest link (module docstring)."""

    f: float
    nodes: int
    degree: int
    seconds: float
    upper: float | None = None     # certified upper bound on f* (None for the interior point reference)
    method: str = "ipm"
    reached: bool = True           # the solve met its target (False: a time limit stopped it with this bracket)

    @property
    def gap(self) -> float:
        """Relative width of the certified bracket [f, upper] (0 for the reference solve)."""
        return 0.0 if self.upper is None else (self.upper - self.f) / self.upper

    def time_us(self, total_bytes: float, bandwidth_gbs: float) -> float:
        """T = (M/B) d / (N f) in microseconds (B in GB/s is 1e3 bytes per microsecond)."""
        return total_bytes / (bandwidth_gbs * 1e3) * self.degree / (self.nodes * self.f)


def _fastest(topo: Topology) -> float:
    """The bandwidth of the fastest link that is not a self-loop: the unit of the LP's capacities."""
    return max((float(l.bandwidth) for l in topo.links if l.src != l.dst), default=1.0)


def _links(topo: Topology) -> list[tuple[int, int, float]]:
    unit = _fastest(topo)
    return [(l.src, l.dst, float(l.bandwidth) / unit) for l in topo.links if l.src != l.dst]


def _check(topo: Topology) -> None:
    if topo.switch_nodes:
        raise NotApplicable("the all-to-all LP here is for direct-connect topologies (no switches)")
    if not is_strongly_connected(topo):
        raise NotApplicable("all-to-all needs a strongly connected topology")


def mcf_rate(topo: Topology, time_limit: float | None = None, method: str | None = None,
             tolerance: float = 1e-7, target_gap: float = FW_GAP_TARGET, progress=None) -> AllToAll:
    """The optimal per-pair rate f of LP (3): a certified lower bound with ``upper`` and ``gap`` bracketing the
    optimum (``method="pdlp"``, the default below ``FW_MIN_NODES`` nodes, or ``"fw"``, the default from there), or
    the interior point optimum (``method="ipm"``). ``time_limit`` defaults to 600 s (55 s for ``"fw"``);
    ``target_gap`` and ``progress`` (a callable taking one line) are Frank-Wolfe's."""
    if method is None:
        method = "fw" if topo.num_nodes >= FW_MIN_NODES else "pdlp"
    if method == "fw":
        return _mcf_fw(topo, FW_TIME_LIMIT_S if time_limit is None else time_limit, target_gap, progress)
    time_limit = MCF_TIME_LIMIT_S if time_limit is None else time_limit
    if method == "pdlp":
        return _mcf_pdlp(topo, time_limit, tolerance)
    if method != "ipm":
        raise ValueError(f"unknown MCF method {method!r}: fw, pdlp or ipm")
    return _mcf_ipm(topo, time_limit)


def _mcf_fw(topo: Topology, time_limit: float, target_gap: float, progress) -> AllToAll:
    from .alltoall_fw import solve

    _check(topo)
    if not 0 < target_gap < 1:
        raise ValueError(f"the target gap must be between 0 and 1, not {target_gap:g}")
    src, dst, cap = _merged_links(topo)
    b = solve(topo.num_nodes, src, dst, cap, target_gap, time_limit, progress)
    return AllToAll(b.lower, topo.n, degree(topo), b.seconds, b.upper, "fw", b.reached)


def _merged_links(topo: Topology) -> tuple[np.ndarray, np.ndarray, np.ndarray]:
    """One (src, dst, capacity) per ordered pair: parallel links add up, self-loops carry nothing; capacities in
    units of the fastest link."""
    cap: dict[tuple[int, int], float] = {}
    for a, b, c in _links(topo):
        cap[a, b] = cap.get((a, b), 0.0) + c
    pairs = np.array(list(cap), dtype=np.int64).reshape(-1, 2)
    return pairs[:, 0], pairs[:, 1], np.array(list(cap.values()), dtype=float)


def _mcf_pdlp(topo: Topology, time_limit: float, tolerance: float) -> AllToAll:
    import time

    import highspy
    from scipy.sparse import coo_matrix

    _check(topo)
    start = time.perf_counter()
    n = topo.num_nodes
    src, dst, cap = _merged_links(topo)
    m = len(cap)
    # y[s, e] for every source s and link e that does not enter s (flow back into its source is useless)
    S = np.repeat(np.arange(n), m)
    E = np.tile(np.arange(m), n)
    keep = dst[E] != S
    S, E = S[keep], E[keep]
    nv = len(S)
    col = 1 + np.arange(nv)

    def row_of(s, u):  # the keep row of (s, u != s), after the m capacity rows
        return m + s * (n - 1) + u - (u > s)

    leaves = src[E] != S
    rows = [E, row_of(S[leaves], src[E][leaves]), row_of(S, dst[E]), np.arange(m, m + n * (n - 1))]
    cols = [col, col[leaves], col, np.zeros(n * (n - 1), dtype=np.int64)]
    vals = [np.ones(nv), np.ones(int(leaves.sum())), -np.ones(nv), np.ones(n * (n - 1))]
    nrows = m + n * (n - 1)
    a = coo_matrix((np.concatenate(vals), (np.concatenate(rows), np.concatenate(cols))),
                   shape=(nrows, 1 + nv)).tocsc()
    h = highspy.Highs()
    h.setOptionValue("output_flag", False)
    h.setOptionValue("solver", "pdlp")
    h.setOptionValue("pdlp_optimality_tolerance", tolerance)
    lp = highspy.HighsLp()
    lp.num_col_, lp.num_row_ = 1 + nv, nrows
    cost = np.zeros(1 + nv)
    cost[0] = -1.0
    lp.col_cost_ = cost
    lp.col_lower_ = np.zeros(1 + nv)
    lp.col_upper_ = np.full(1 + nv, highspy.kHighsInf)
    lp.row_lower_ = np.full(nrows, -highspy.kHighsInf)
    lp.row_upper_ = np.concatenate([cap, np.zeros(nrows - m)])
    lp.a_matrix_.format_ = highspy.MatrixFormat.kColwise
    lp.a_matrix_.start_, lp.a_matrix_.index_, lp.a_matrix_.value_ = a.indptr, a.indices, a.data
    h.passModel(lp)
    lower, upper, reached = 0.0, math.inf, False
    for attempt in range(3):     # tighten the tolerance while the certified bracket is wider than GAP_TARGET
        left = float(time_limit) - (time.perf_counter() - start)
        if left <= 0:
            reached = False      # the limit came before the re-solve: the bracket so far, not at its target
            break
        h.setOptionValue("time_limit", left)
        h.run()
        status = h.getModelStatus()
        solution = h.getSolution()
        if status not in (highspy.HighsModelStatus.kOptimal, highspy.HighsModelStatus.kTimeLimit,
                          highspy.HighsModelStatus.kIterationLimit) or not solution.value_valid:
            if lower > 0:
                break            # a re-solve failed: the earlier certified bracket stands
            raise NotApplicable(f"the all-to-all LP stopped without a solution: {h.modelStatusToString(status)}")
        lo, up = _bracket(solution, n, src, dst, cap, S, E)
        lower, upper = max(lower, lo), min(upper, up)   # each end is certified on its own, so the best of each
        reached = status == highspy.HighsModelStatus.kOptimal
        if upper - lower <= GAP_TARGET * upper or not reached:
            break
        for option in ("pdlp_optimality_tolerance", "primal_feasibility_tolerance", "dual_feasibility_tolerance",
                       "optimality_tolerance"):
            h.setOptionValue(option, tolerance / 100 ** (attempt + 1))
    if not (lower > 0 and math.isfinite(upper)):
        raise NotApplicable(f"the all-to-all LP stopped at its {time_limit:g} s limit before it had a feasible "
                            f"positive rate (give it more time)")
    return AllToAll(lower, topo.n, degree(topo), time.perf_counter() - start, upper, "pdlp", reached)


def _bracket(solution, n, src, dst, cap, S, E) -> tuple[float, float]:
    """The certified [lower, upper] of a PDLP solution (module docstring)."""
    from scipy.sparse import csr_matrix
    from scipy.sparse.csgraph import dijkstra

    m = len(cap)
    # lower bound: the clipped flows, scaled to fit every capacity, are feasible for LP (3)
    y = np.maximum(np.asarray(solution.col_value)[1:], 0.0)
    load = np.bincount(E, y, m)
    scale = min(1.0, float(np.min(cap / np.maximum(load, 1e-300))))
    net = np.zeros((n, n))
    np.add.at(net, (S, dst[E]), y)
    np.subtract.at(net, (S, src[E]), y)
    np.fill_diagonal(net, np.inf)
    lower = scale * float(net.min())
    # upper bound: weak duality with the capacity rows' duals as link lengths
    lengths = np.maximum(-np.asarray(solution.row_dual)[:m], 0.0) + 1e-12
    dist = dijkstra(csr_matrix((lengths, (src, dst)), shape=(n, n)))
    upper = float(np.dot(cap, lengths) / dist.sum())
    return lower, upper


def _mcf_ipm(topo: Topology, time_limit: float) -> AllToAll:
    import time

    from scipy.optimize import linprog
    from scipy.sparse import coo_matrix

    _check(topo)
    n, links = topo.num_nodes, _links(topo)
    m = len(links)
    var = lambda s, e: 1 + s * m + e  # noqa: E731   (variable 0 is f)
    rows, cols, vals = [], [], []
    # capacity rows 0..m-1
    for s in range(n):
        for e in range(m):
            rows.append(e), cols.append(var(s, e)), vals.append(1.0)
    # conservation rows: one per (s, u != s)
    row = m
    out_of = [[] for _ in range(n)]
    into = [[] for _ in range(n)]
    for e, (a, b, _) in enumerate(links):
        out_of[a].append(e)
        into[b].append(e)
    for s in range(n):
        for u in range(n):
            if u == s:
                continue
            rows.append(row), cols.append(0), vals.append(1.0)
            for e in out_of[u]:
                rows.append(row), cols.append(var(s, e)), vals.append(1.0)
            for e in into[u]:
                rows.append(row), cols.append(var(s, e)), vals.append(-1.0)
            row += 1
    a_ub = coo_matrix((vals, (rows, cols)), shape=(row, 1 + n * m)).tocsr()
    b_ub = np.concatenate([np.array([c for _, _, c in links]), np.zeros(row - m)])
    cost = np.zeros(1 + n * m)
    cost[0] = -1.0
    start = time.perf_counter()
    res = linprog(cost, A_ub=a_ub, b_ub=b_ub, bounds=(0, None), method="highs-ipm",
                  options={"time_limit": time_limit})
    if res.status != 0:
        raise NotApplicable(f"the all-to-all LP stopped without an optimum: {res.message}")
    return AllToAll(float(res.x[0]), topo.n, degree(topo), time.perf_counter() - start)


def mcf_model(topo: Topology):
    """LP (3) as a Pyomo ConcreteModel (y indexed by source name and link index)."""
    import pyomo.environ as pyo

    links = _links(topo)
    n = topo.num_nodes
    m = pyo.ConcreteModel(name=f"all-to-all MCF LP (3) on {topo.name or topo.expr}")
    m.f = pyo.Var(domain=pyo.NonNegativeReals)
    m.y = pyo.Var([(topo.names[s], e) for s in range(n) for e in range(len(links))], domain=pyo.NonNegativeReals)
    m.obj = pyo.Objective(expr=m.f, sense=pyo.maximize)
    m.capacity = pyo.Constraint(range(len(links)), rule=lambda m, e: sum(m.y[topo.names[s], e] for s in range(n))
                                <= links[e][2])
    pairs = [(s, u) for s in range(n) for u in range(n) if u != s]
    m.keep = pyo.Constraint(
        [(topo.names[s], topo.names[u]) for s, u in pairs],
        rule=lambda m, sn, un: m.f + sum(m.y[sn, e] for e, l in enumerate(links) if l[0] == topo.index(un))
        <= sum(m.y[sn, e] for e, l in enumerate(links) if l[1] == topo.index(un)))
    return m


def moore_rate_bound(n: int, d: int) -> Fraction:
    """The 'theoretical bound' f* = d / sum_i i n_i with the Moore-tree distance profile n_i = d^i below the
    directed Moore diameter k and the rest at distance k (total capacity over the least total distance)."""
    k = moore_diameter_directed(n, d)
    counts = [d ** i for i in range(1, k)]
    counts.append(n - 1 - sum(counts))
    return Fraction(d, sum(i * c for i, c in enumerate(counts, 1)))
