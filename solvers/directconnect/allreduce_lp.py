"""The allreduce linear program (6) of ForestColl, Appendix E (forestcoll digest section 3), as a Pyomo model
solved by HiGHS.

Allreduce as reduce in-trees followed by broadcast out-trees, where every compute node v may root its own share
(rate x_v) and every link's bandwidth b_(u,v) may be split between reduction (c^RE) and broadcast (c^BC):

    maximize    sum_v x_v
    subject to  for every compute t:  F(s -> t) >= sum_v x_v   over edges s -> v (capacity x_v) and c^BC
                for every compute t:  F(t -> s) >= sum_v x_v   over edges v -> s (capacity x_v) and c^RE
                c^RE_(u,v) + c^BC_(u,v) <= b_(u,v)              for every linked pair (u, v)
                x, c^RE, c^BC >= 0

Each "F >= L" is written as flow variables with capacity bounds, no creation of flow at any node but the source,
and at least L arriving (L = sum x is itself a variable, so all of it stays linear). In the broadcast flow every
compute node must receive every root's share (out-trees on c^BC); in the reduce flow every compute node's data
must reach the roots in proportion to their shares, along the links' own direction (in-trees on c^RE; the paper
writes this network as the reverse of the broadcast one). The allreduce of M bytes then takes M / sum_v x_v:
``total_rate`` is that "data rate" in the bandwidths' unit (GB/s).

Parallel links are merged (capacity = the sum of their bandwidths); self-loops carry nothing.

Switches only relay, so they can be neither roots nor tree nodes. For a topology with switches the LP runs on the
complete compute-only graph with variable capacities b'_(alpha,beta) for every ordered compute pair, and a
multi-commodity flow routes each b'_(alpha,beta) from alpha to beta through the physical graph (commodity
h^(alpha beta) on every physical link, conservation at every node but alpha and beta, the sum over commodities at
most the link's bandwidth). Links into alpha and out of beta are left out of commodity (alpha, beta): flow on
them only makes cycles. Size: the routing part has N(N-1)|E| variables, so the model is O(N^2 |E| + N^3)
variables (O(N |E|) without switches); beyond MAX_VARIABLES ``allreduce_lp`` refuses with NotApplicable.
``routing="source"`` aggregates the commodities by source (one flow out of alpha that leaves b'_(alpha,beta) at
every beta): the same optimum with N|E| routing variables, O(N |E| + N^3) in all. The N^3 broadcast and reduce
flows on the complete compute graph then dominate: 2 clusters x 16 GPUs behind three switches take 192k variables
and about 230 s by pair, 73k and about 170 s by source (HiGHS IPM with crossover; 2 x 8 GPUs: 4 s and 3 s).

What it is for: verifying that reduce-scatter + allgather (every node a root with an equal share, c^RE = c^BC =
b/2, giving sum x = N x*/2 with 1/x* the allgather cut bound) is the optimal allreduce. ForestColl reports that
on every topology the authors tried the LP never beat RS+AG; ``total_rate`` above N x*/2 marks a topology where
it does. Such topologies exist once bandwidths are uneven: on the triangle with cables 0-1 and 1-2 at 1 and 0-2 at
4, RS+AG gives 3/2 but the LP gives 2 with node 1 rooting nothing (tests/test_allreduce_lp.py). Every allreduce
rate is at most the least bandwidth B_out(S) of a cut S that separates two compute nodes.
"""
from __future__ import annotations

import time
from dataclasses import dataclass, field
from fractions import Fraction

from topologies.model import Topology
from topologies.properties import is_strongly_connected

from ..core.errors import NotApplicable

LP_TIME_LIMIT_S = 120
MAX_VARIABLES = 300_000


@dataclass(frozen=True)
class AllReduceLP:
    """The optimum of LP (6): ``total_rate`` = sum_v x_v (allreduce of M takes M / total_rate)."""

    total_rate: float
    x: dict[str, float]                  # the share rate of every compute node, by node name
    status: str                          # the solver's termination condition
    seconds: float                       # model build + solve
    variables: int = 0
    constraints: int = 0
    switched: bool = False               # True when solved through the b' indirection
    extra: dict = field(default_factory=dict, compare=False, repr=False)

    def time_us(self, total_bytes: float) -> float:
        """Allreduce time M / total_rate in microseconds (bandwidths in GB/s are 1e3 bytes per microsecond)."""
        return total_bytes / (self.total_rate * 1e3)


def _capacities(topo: Topology) -> dict[tuple[int, int], float]:
    """One capacity per ordered linked pair: parallel links add up (exactly, then as a float); no self-loops."""
    cap: dict[tuple[int, int], Fraction] = {}
    for l in topo.links:
        if l.src != l.dst:
            cap[l.src, l.dst] = cap.get((l.src, l.dst), Fraction(0)) + l.bandwidth
    return {e: float(c) for e, c in cap.items()}


ROUTINGS = ("pair", "source")


def model_size(topo: Topology, routing: str = "pair") -> int:
    """The number of variables ``allreduce_lp_model(topo, routing)`` builds (without building it)."""
    if routing not in ROUTINGS:
        raise ValueError(f"unknown routing {routing!r}: pair or source")
    n = topo.n
    if not topo.switch_nodes:
        e = len(_capacities(topo))
        return n + 2 * e + 2 * n * (e + n)
    phys = _capacities(topo)
    compute = topo.compute_nodes
    if routing == "source":
        hs = sum(1 for a in compute for (u, v) in phys if v != a)
    else:
        hs = sum(1 for a in compute for b in compute if a != b for (u, v) in phys if v != a and u != b)
    pairs = n * (n - 1)
    return n + 3 * pairs + 2 * n * (pairs + n) + hs


def allreduce_lp_model(topo: Topology, routing: str = "pair"):
    """LP (6) as a Pyomo ConcreteModel, indexed by node names.

    Variables: ``x[v]``; ``c_re[u, v]``, ``c_bc[u, v]`` on the LP graph's edges; broadcast flows ``f_bc[t, u, v]``
    with source edges ``g_bc[t, v]`` (s -> v); reduce flows ``f_re[t, u, v]`` with sink edges ``g_re[t, v]``
    (v -> s). With switches also ``bp[a, b]`` (b') and the routing on physical links: ``h[a, b, u, v]``, one
    commodity per ordered pair (``routing="pair"``, the digest's form, N(N-1)|E| variables), or ``h[a, u, v]``,
    one commodity per source that delivers b'_(a,b) at every b (``routing="source"``, N|E| variables; the same
    optimum, since a single-source flow splits into paths, one set per destination).
    """
    if routing not in ROUTINGS:
        raise ValueError(f"unknown routing {routing!r}: pair or source")
    import pyomo.environ as pyo
    from pyomo.environ import quicksum

    nm = topo.names
    compute = list(topo.compute_nodes)
    cnames = [nm[v] for v in compute]
    phys = _capacities(topo)
    switched = bool(topo.switch_nodes)
    if switched:   # the LP graph: the complete digraph on compute nodes, capacities b' (variables)
        edges = [(nm[a], nm[b]) for a in compute for b in compute if a != b]
    else:
        edges = [(nm[u], nm[v]) for (u, v) in phys]
    out_e: dict[str, list] = {v: [] for v in cnames}
    in_e: dict[str, list] = {v: [] for v in cnames}
    for u, v in edges:
        out_e[u].append((u, v))
        in_e[v].append((u, v))

    m = pyo.ConcreteModel(name=f"ForestColl allreduce LP (6) on {topo.name or topo.expr or 'topology'}")
    m.x = pyo.Var(cnames, domain=pyo.NonNegativeReals)
    m.c_re = pyo.Var(edges, domain=pyo.NonNegativeReals)
    m.c_bc = pyo.Var(edges, domain=pyo.NonNegativeReals)
    m.f_bc = pyo.Var([(t, u, v) for t in cnames for (u, v) in edges], domain=pyo.NonNegativeReals)
    m.g_bc = pyo.Var([(t, v) for t in cnames for v in cnames], domain=pyo.NonNegativeReals)
    m.f_re = pyo.Var([(t, u, v) for t in cnames for (u, v) in edges], domain=pyo.NonNegativeReals)
    m.g_re = pyo.Var([(t, v) for t in cnames for v in cnames], domain=pyo.NonNegativeReals)
    total = quicksum(m.x[v] for v in cnames)
    m.obj = pyo.Objective(expr=total, sense=pyo.maximize)

    # broadcast flow s -> t: s -> v at most x_v, link (u, v) at most c^BC, no node but s creates flow, t keeps >= sum x
    m.bc_source = pyo.Constraint([(t, v) for t in cnames for v in cnames],
                                 rule=lambda m, t, v: m.g_bc[t, v] <= m.x[v])
    m.bc_link = pyo.Constraint([(t, u, v) for t in cnames for (u, v) in edges],
                               rule=lambda m, t, u, v: m.f_bc[t, u, v] <= m.c_bc[u, v])
    m.bc_node = pyo.Constraint(
        [(t, v) for t in cnames for v in cnames],
        rule=lambda m, t, v: (m.g_bc[t, v] + quicksum(m.f_bc[t, a, b] for a, b in in_e[v])
                              - quicksum(m.f_bc[t, a, b] for a, b in out_e[v])) >= (total if v == t else 0))
    # reduce flow t -> s: link (u, v) at most c^RE, v -> s at most x_v, no node but t creates flow, s gets >= sum x
    m.re_sink = pyo.Constraint([(t, v) for t in cnames for v in cnames],
                               rule=lambda m, t, v: m.g_re[t, v] <= m.x[v])
    m.re_link = pyo.Constraint([(t, u, v) for t in cnames for (u, v) in edges],
                               rule=lambda m, t, u, v: m.f_re[t, u, v] <= m.c_re[u, v])
    m.re_node = pyo.Constraint(
        [(t, v) for t in cnames for v in cnames if v != t],
        rule=lambda m, t, v: (quicksum(m.f_re[t, a, b] for a, b in in_e[v])
                              - quicksum(m.f_re[t, a, b] for a, b in out_e[v]) - m.g_re[t, v]) >= 0)
    m.re_sink_total = pyo.Constraint(cnames, rule=lambda m, t: quicksum(m.g_re[t, v] for v in cnames) >= total)

    if not switched:
        m.split = pyo.Constraint(edges, rule=lambda m, u, v: m.c_re[u, v] + m.c_bc[u, v] <= phys[topo.index(u),
                                                                                                  topo.index(v)])
        return m

    # indirection: b'_(a,b) replaces the link capacity, and is routed a -> b through the physical graph
    m.bp = pyo.Var(edges, domain=pyo.NonNegativeReals)
    m.split = pyo.Constraint(edges, rule=lambda m, a, b: m.c_re[a, b] + m.c_bc[a, b] <= m.bp[a, b])
    plinks = [(nm[u], nm[v]) for (u, v) in phys]
    if routing == "pair":   # commodity (a, b): out of a at least b'_(a,b), conserved at every node but a and b
        hidx = [(a, b, u, v) for (a, b) in edges for (u, v) in plinks if v != a and u != b]
        m.h = pyo.Var(hidx, domain=pyo.NonNegativeReals)
        h_out, h_in = _incidence(hidx, 2)
        m.route_source = pyo.Constraint(
            edges, rule=lambda m, a, b: quicksum(m.h[k] for k in h_out.get((a, b, a), [])) >= m.bp[a, b])
        m.route_node = pyo.Constraint(
            [(a, b, w) for (a, b) in edges for w in nm if w not in (a, b)],
            rule=lambda m, a, b, w: _conserve(m.h, h_in.get((a, b, w), []), h_out.get((a, b, w), []), 0))
    else:                   # commodity a: every compute b != a keeps b'_(a,b), every switch conserves
        hidx = [(a, u, v) for a in cnames for (u, v) in plinks if v != a]
        m.h = pyo.Var(hidx, domain=pyo.NonNegativeReals)
        h_out, h_in = _incidence(hidx, 1)
        m.route_node = pyo.Constraint(
            [(a, w) for a in cnames for w in nm if w != a],
            rule=lambda m, a, w: _conserve(m.h, h_in.get((a, w), []), h_out.get((a, w), []),
                                           m.bp[a, w] if (a, w) in m.bp else 0))
    by_link: dict[tuple, list] = {}
    for k in hidx:
        by_link.setdefault(k[-2:], []).append(k)
    m.link_capacity = pyo.Constraint(
        [e for e in plinks if e in by_link],
        rule=lambda m, u, v: quicksum(m.h[k] for k in by_link[u, v]) <= phys[topo.index(u), topo.index(v)])
    return m


def _conserve(h, into: list, out: list, keep):
    """inflow - outflow == keep, skipped where a node has no routing variable at all (and keeps nothing)."""
    import pyomo.environ as pyo

    if not into and not out and isinstance(keep, int):
        return pyo.Constraint.Skip
    return sum(h[k] for k in into) - sum(h[k] for k in out) == keep


def _incidence(hidx: list[tuple], head: int) -> tuple[dict, dict]:
    """For routing variables ``commodity + (u, v)`` (commodity = the first ``head`` entries): the variables leaving
    and entering each (commodity..., node)."""
    out: dict[tuple, list] = {}
    into: dict[tuple, list] = {}
    for k in hidx:
        out.setdefault(k[:head] + (k[head],), []).append(k)
        into.setdefault(k[:head] + (k[head + 1],), []).append(k)
    return out, into


def allreduce_lp(topo: Topology, time_limit: float = LP_TIME_LIMIT_S, routing: str = "pair") -> AllReduceLP:
    """Solve LP (6) with HiGHS; NotApplicable (one line) for an input it does not apply to or a solver failure."""
    import pyomo.environ as pyo
    from pyomo.contrib.solver.common.factory import SolverFactory

    if topo.n < 2:
        raise NotApplicable("allreduce needs at least two compute nodes")
    if not is_strongly_connected(topo):
        raise NotApplicable("the allreduce LP needs every compute node to reach every other one")
    size = model_size(topo, routing)
    if size > MAX_VARIABLES:
        raise NotApplicable(f"the allreduce LP would have {size:,} variables (more than {MAX_VARIABLES:,})")
    start = time.perf_counter()
    m = allreduce_lp_model(topo, routing)
    options = {"solver": "ipm"} if size > 20_000 else {}    # IPM (with crossover) is far faster on large LPs
    result = SolverFactory("highs").solve(m, time_limit=time_limit, load_solutions=False, solver_options=options,
                                          raise_exception_on_nonoptimal_result=False)
    cond = str(result.termination_condition).split(".")[-1]
    if cond != "convergenceCriteriaSatisfied":
        raise NotApplicable(f"the allreduce LP solver stopped without an optimum ({cond})")
    result.solution_loader.load_vars()
    x = {v: max(float(pyo.value(m.x[v])), 0.0) for v in m.x}
    return AllReduceLP(total_rate=float(pyo.value(m.obj)), x=x, status=cond, seconds=time.perf_counter() - start,
                       variables=m.nvariables(), constraints=m.nconstraints(), switched=bool(topo.switch_nodes))
