"""Solving a TE-CCL model with HiGHS under a time limit and a relative gap, and reading back what it found: a Pyomo
model through Pyomo's HiGHS interface, TE-CCL's MILP and LP and TACOS's TEN ILP (``linear.Linear``) through highspy
directly.
The statuses and ``Outcome`` live in ``outcome`` (imported by both, so ``linear`` never imports this module).

Every solve has a time limit (there is no way to call one without). The outcome is one of

* ``optimal``: proven optimal within ``gap``;
* ``feasible``: stopped at the time limit with an incumbent (its gap is reported);
* ``infeasible``: proven to have no solution;
* ``timeout``: stopped at the time limit with no solution found.
"""
from __future__ import annotations

import time

from .linear import Linear, solve_linear
from .outcome import FEASIBLE, INFEASIBLE, OPTIMAL, TIMEOUT, Outcome

__all__ = ["solve", "Outcome", "OPTIMAL", "FEASIBLE", "INFEASIBLE", "TIMEOUT"]


def solve(model, time_limit: float, gap: float = 1e-4, first_solution: bool = False,
          options: dict | None = None) -> Outcome:
    """Solve ``model`` (a Pyomo ConcreteModel, or a ``linear.Linear`` handed to highspy directly) with HiGHS;
    load the solution into it when there is one. ``first_solution`` stops at the first feasible point (a
    feasibility probe)."""
    if not time_limit or time_limit <= 0:
        raise ValueError("every TE-CCL solve needs a positive time limit")
    if isinstance(model, Linear):
        return solve_linear(model, time_limit, gap, first_solution, options)
    from pyomo.contrib.solver.common.factory import SolverFactory

    opts = dict(options or {})
    if first_solution:
        opts["mip_max_improving_sols"] = 1
    start = time.perf_counter()
    result = SolverFactory("highs").solve(model, time_limit=float(time_limit), rel_gap=float(gap),
                                          load_solutions=False, raise_exception_on_nonoptimal_result=False,
                                          solver_options=opts)
    seconds = time.perf_counter() - start
    cond = str(result.termination_condition).split(".")[-1]
    sol = str(result.solution_status).split(".")[-1]
    found = sol in ("optimal", "feasible")
    if cond == "provenInfeasible" or cond == "infeasibleOrUnbounded":
        status = INFEASIBLE
    elif found and cond == "convergenceCriteriaSatisfied":
        status = OPTIMAL
    elif found:
        status = FEASIBLE
    else:
        status = TIMEOUT
    if found:
        result.solution_loader.load_vars()
    objective = result.incumbent_objective if found else None
    bound = getattr(result, "objective_bound", None)
    return Outcome(status, None if objective is None else float(objective),
                   None if bound is None else float(bound), seconds, model.nvariables(), model.nconstraints())
