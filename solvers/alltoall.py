"""All-to-all throughput: the multi-commodity-flow LP (3) of the direct-connect paper (App. A.5; appendix digest
section 1.5), with commodities aggregated by source.

    maximize f   subject to   sum_s y[s, l] <= c_l                                for every link l
                              f + sum_{l out of u} y[s, l] <= sum_{l into u} y[s, l]   for every s and u != s
                              y >= 0

y[s, l] is the flow that left source s and crosses link l (all its destinations together); every node keeps f of
every source's flow. Link capacities c_l are the links' bandwidths (1 on the paper's unit links); self-loops carry
nothing. With links of bandwidth B/d, every node sends to every other at f B/d, so an all-to-all in which every
node sends M in total (M/N to each) takes T = (M/B) d / (N f), with no alpha term (A.5.2).

``mcf_rate`` solves it with HiGHS's interior point method on sparse matrices (scipy); ``mcf_model`` is the same
LP as a Pyomo model, the readable reference (``solvers.bfb_lp.write_lp`` writes it as an .lp file).
"""
from __future__ import annotations

from dataclasses import dataclass
from fractions import Fraction

import numpy as np

from topologies.model import Topology
from topologies.properties import degree, is_strongly_connected, moore_diameter_directed

from .errors import NotApplicable

MCF_TIME_LIMIT_S = 600


@dataclass(frozen=True)
class AllToAll:
    f: float
    nodes: int
    degree: int
    seconds: float

    def time_us(self, total_bytes: float, bandwidth_gbs: float) -> float:
        """T = (M/B) d / (N f) in microseconds (B in GB/s is 1e3 bytes per microsecond)."""
        return total_bytes / (bandwidth_gbs * 1e3) * self.degree / (self.nodes * self.f)


def _links(topo: Topology) -> list[tuple[int, int, float]]:
    return [(l.src, l.dst, float(l.bandwidth)) for l in topo.links if l.src != l.dst]


def mcf_rate(topo: Topology, time_limit: float = MCF_TIME_LIMIT_S) -> AllToAll:
    """The optimal per-pair rate f of LP (3), solved with HiGHS IPM."""
    import time

    from scipy.optimize import linprog
    from scipy.sparse import coo_matrix

    if topo.switch_nodes:
        raise NotApplicable("the all-to-all LP here is for direct-connect topologies (no switches)")
    if not is_strongly_connected(topo):
        raise NotApplicable("all-to-all needs a strongly connected topology")
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
