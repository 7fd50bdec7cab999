"""The BFB linear programs as Pyomo models: the readable reference of the direct-connect paper's LP (1) and
LP (14) (section 6.1, App. E, E.3), solved with HiGHS.

``lp1_model(topo, problem)`` is LP (1) for one receiver u and step t:

    minimize U   subject to   sum_v x[v,w] <= c_w * U     for every in-neighbour w of u (c_w: its link bandwidth)
                              sum_w x[v,w] = 1            for every source v at distance t from u
                              0 <= x[v,w] <= 1, defined only when d(v,w) = t - 1

and ``lp14_model`` the same with alpha: alpha_w + s / c_w * sum_v x[v,w] <= U. ``write_lp`` gives the CPLEX LP
text the app offers for download. ``lp_allgather`` solves every (u, t) this way and reads the schedule off the
float solution (rationalised, each source renormalised to exactly [0, 1)); ``solvers.directconnect.bfb`` solves the same
problems exactly and much faster, and the tests hold the two to 1e-9.
"""
from __future__ import annotations

import os
import tempfile
from fractions import Fraction

from topologies.model import Topology

from .bfb_problems import Problem, read_off, receiver_problems
from ..core.errors import NotApplicable
from ..core.schedule import Schedule

LP_TIME_LIMIT_S = 60


def _pyomo():
    import pyomo.environ as pyo

    return pyo


def _namer(topo: Topology, p: Problem):
    """x is indexed by (source name, sender name), which is what the LP file shows."""
    return lambda i, j: (topo.names[p.sources[i]], topo.names[p.nbrs[j]])


def lp1_model(topo: Topology, p: Problem):
    """LP (1) for ``p`` as a Pyomo ConcreteModel with readable names (x[v,w] by node name)."""
    pyo = _pyomo()
    m = pyo.ConcreteModel(name=f"BFB LP (1), receiver {topo.names[p.u]}, step {p.t}")
    name = _namer(topo, p)
    m.x = pyo.Var([name(i, j) for i, e in enumerate(p.eligible) for j in e], bounds=(0, 1))
    m.U = pyo.Var(domain=pyo.NonNegativeReals)
    m.obj = pyo.Objective(expr=m.U, sense=pyo.minimize)
    caps = [float(sum((topo.links[i].bandwidth for i in ls), Fraction(0))) for ls in p.links]
    senders = [j for j in range(len(p.nbrs)) if any(j in e for e in p.eligible)]
    m.link_load = pyo.Constraint([topo.names[p.nbrs[j]] for j in senders],
                                 rule=lambda m, w: sum(m.x[name(i, j)] for j in senders if topo.names[p.nbrs[j]] == w
                                                       for i, e in enumerate(p.eligible) if j in e)
                                 <= caps[p.nbrs.index(topo.index(w))] * m.U)
    m.cover = pyo.Constraint([topo.names[v] for v in p.sources],
                             rule=lambda m, v: sum(m.x[name(i, j)] for i in [p.sources.index(topo.index(v))]
                                                   for j in p.eligible[i]) == 1)
    m.index_of = {name(i, j): (i, j) for i, e in enumerate(p.eligible) for j in e}
    return m


def lp14_model(topo: Topology, p: Problem, shard_bytes: float, dropped: frozenset = frozenset()):
    """LP (14) for ``p``: times in microseconds, alpha per link, links in ``dropped`` left out."""
    pyo = _pyomo()
    m = pyo.ConcreteModel(name=f"BFB LP (14), receiver {topo.names[p.u]}, step {p.t}")
    usable = [tuple(j for j in e if j not in dropped) for e in p.eligible]
    name = _namer(topo, p)
    m.x = pyo.Var([name(i, j) for i, e in enumerate(usable) for j in e], bounds=(0, 1))
    m.U = pyo.Var(domain=pyo.NonNegativeReals)
    m.obj = pyo.Objective(expr=m.U, sense=pyo.minimize)
    caps = [float(sum((topo.links[i].bandwidth for i in ls), Fraction(0))) for ls in p.links]
    alphas = [float(max(topo.links[i].alpha for i in ls)) for ls in p.links]
    m.time = pyo.Constraint(sorted({j for e in usable for j in e}),
                            rule=lambda m, j: alphas[j] + shard_bytes / caps[j]
                            * sum(m.x[name(i, j)] for i, e in enumerate(usable) if j in e) <= m.U)
    m.cover = pyo.Constraint(range(len(p.sources)), rule=lambda m, i: sum(m.x[name(i, j)] for j in usable[i]) == 1)
    m.usable = usable
    m.index_of = {name(i, j): (i, j) for i, e in enumerate(usable) for j in e}
    return m


def solve(model) -> tuple[float, dict[tuple[int, int], float]]:
    """Solve with HiGHS (Pyomo's solver interface); (U, x), or NotApplicable with the solver's reason."""
    pyo = _pyomo()
    from pyomo.contrib.solver.common.factory import SolverFactory

    result = SolverFactory("highs").solve(model, time_limit=LP_TIME_LIMIT_S, load_solutions=False,
                                          raise_exception_on_nonoptimal_result=False)
    cond = str(result.termination_condition)
    if "convergenceCriteriaSatisfied" not in cond:
        raise NotApplicable(f"the LP solver stopped without an optimum ({cond.split('.')[-1]})")
    result.solution_loader.load_vars()
    return float(pyo.value(model.U)), {model.index_of[k]: float(pyo.value(v)) for k, v in model.x.items()}


def write_lp(model) -> str:
    """The model in CPLEX LP format, with symbolic names."""
    fd, path = tempfile.mkstemp(suffix=".lp")
    os.close(fd)
    try:
        model.write(path, io_options={"symbolic_solver_labels": True})
        with open(path, encoding="utf-8") as fh:
            return fh.read()
    finally:
        os.unlink(path)


def _rational_shares(p: Problem, x: dict[tuple[int, int], float], limit: int = 10 ** 6):
    """Float shares as Fractions that sum to exactly 1 per source (the largest share absorbs the rounding)."""
    shares = []
    for i, e in enumerate(p.eligible):
        parts = {j: Fraction(max(x.get((i, j), 0.0), 0.0)).limit_denominator(limit) for j in e}
        parts = {j: f for j, f in parts.items() if f > 0}
        top = max(parts, key=parts.get)
        parts[top] += 1 - sum(parts.values())
        shares.append(parts)
    return shares


def lp_allgather(topo: Topology) -> Schedule:
    """BFB through the Pyomo models: one LP (1) per (u, t), read off into a schedule. For small topologies
    (one solver call per (u, t)); ``notes["U"]`` holds max_u U_{u,t} as floats."""
    problems = receiver_problems(topo)
    shares, worst = [], {}
    for p in problems:
        u_val, x = solve(lp1_model(topo, p))
        shares.append(_rational_shares(p, x))
        worst[p.t] = max(worst.get(p.t, 0.0), u_val)
    return read_off(topo, problems, shares, "bfb-lp", {"U": worst})


def lp14_solve(topo: Topology, p: Problem, shard_bytes: float) -> tuple[float, dict, frozenset]:
    """LP (14) with App. E.3's repair: while an unused link's alpha alone sets U, drop it and solve again."""
    dropped: frozenset = frozenset()
    while True:
        model = lp14_model(topo, p, shard_bytes, dropped)
        u_val, x = solve(model)
        alphas = [float(max(topo.links[i].alpha for i in ls)) for ls in p.links]
        used = {j for (i, j), v in x.items() if v > 1e-9}
        idle = {j for e in model.usable for j in e} - used
        binding = {j for j in idle if alphas[j] >= u_val - 1e-9}
        if not binding:
            return u_val, x, dropped
        dropped = dropped | binding
