"""The epoch search of ``teccl`` (module docstring there): the smallest K with a schedule, found by probes from the
cut lower bound up and a bisection, then early delivery optimised at that K, started from the schedule already known
(a probe's first point or the greedy one) and, when the LP relaxation already meets that schedule's objective,
proven optimal without a branch and bound.
"""
from __future__ import annotations

import time

import numpy as np

from ..core.errors import NotApplicable
from .linear import relaxation_bound
from .milp import start_vector
from .outcome import FEASIBLE, INFEASIBLE, OPTIMAL, Outcome
from .result import Probe
from .solve import solve


def search(build, left, tell, probes: list, whole: bool, gap: float, lower_bound: int, upper: int | None):
    """The smallest K with a schedule: probes from the lower bound up (steps doubling), then a bisection between
    the largest K proven infeasible and the smallest feasible one. A greedy schedule in ``upper`` epochs stands
    for a feasible probe there (no solve). Returns (hi, lo, found, unknown): hi the smallest feasible K found, lo
    the largest K taken as infeasible, found = (hi, model, outcome), model and outcome None when the greedy
    schedule is what fits, unknown whether some K in between timed out rather than being proven infeasible."""
    def probe(k: int):
        """(model, outcome) of one solve at K = ``k``, kept in ``probes``; None when no time is left."""
        fm = build(k)
        rest = left()
        if rest <= 0:
            return None
        out = solve(fm.model, rest, gap, first_solution=whole)
        probes.append(Probe(k, out.status, out.seconds))
        return fm, out

    infeasible_below = lower_bound - 1   # the largest K known to have no schedule
    k, step, feasible_at, found = lower_bound, 1, None, None
    while feasible_at is None:
        if upper is not None and k >= upper:
            feasible_at, found = upper, (upper, None, None)
            break
        if left() <= 0:
            break
        tell(f"probing K = {k}", 0.1 + 0.5 * (len(probes) / (len(probes) + 4)))
        tried = probe(k)
        if tried is None:
            break
        fm, out = tried
        if out.has_solution:
            feasible_at, found = k, (k, fm, out)
        else:
            if out.status == INFEASIBLE:
                infeasible_below = k
            k += step
            step *= 2
    if found is None:
        return None, infeasible_below, None, False
    lo, hi = infeasible_below, feasible_at
    unknown = False
    while hi - lo > 1 and left() > 0:
        mid = (lo + hi) // 2
        tell(f"bisecting K in ({lo}, {hi}]", 0.6)
        tried = probe(mid)
        if tried is None:
            break
        fm, out = tried
        if out.has_solution:
            hi, found = mid, (mid, fm, out)
        elif out.status == INFEASIBLE:
            lo = mid
        else:
            unknown = True
            lo = mid                   # not proven: treat as infeasible and say so
    return hi, lo, found, unknown


def optimise(build, left, tell, probes: list, gap: float, k: int, found, greedy):
    """Early delivery at K = ``k`` (the paper's objective), starting HiGHS from the schedule already known there:
    the probe's first point, or the greedy schedule when it fits in ``k`` epochs. First the LP relaxation, in at
    most half the time left (``start_proven``): when it meets the start's objective (the entry cuts make it tight)
    the start is optimal and no branch and bound runs; else HiGHS's MIP from the start. Returns (k, model,
    outcome); with no time left, what ``found`` holds (the greedy schedule loaded as a feasible outcome when no
    probe ran)."""
    _, fm, out = found
    if fm is None:
        fm = build(k)
        fm.model.start = start_vector(fm, greedy[0])
    else:
        fm.model.start = fm.model.values
    known = fm.model.start
    rest = left()
    proven = start_proven(fm.model, rest / 2, gap) if rest > 0 and known is not None else None
    if proven is not None:
        probes.append(Probe(k, proven.status, proven.seconds))
        fm.model.values = known
        return k, fm, proven
    rest = left()
    if rest > 0:
        tell(f"optimising delivery at K = {k}", 0.8)
        better = solve(fm.model, rest, gap)
        probes.append(Probe(k, better.status, better.seconds))
        if better.has_solution:
            return k, fm, better
    if known is None:
        raise NotApplicable(f"the solver found no schedule at K = {k} before the time limit; raise it")
    fm.model.values = known          # keep the schedule we started from
    if out is None:
        out = Outcome(FEASIBLE, None, None, 0.0, fm.model.nvariables(), fm.model.nconstraints())
    return k, fm, out


def start_proven(model, time_limit: float, gap: float) -> Outcome | None:
    """An ``optimal`` outcome for the MIP start ``model.start`` when the LP relaxation's optimum is within ``gap``
    (relative, HiGHS's own criterion) of its objective, else None: then no branch and bound is needed (on NDv2 x 2
    allgather the greedy start meets the bound and HiGHS spent 1 s of presolve to find that out)."""
    started = time.perf_counter()
    value = float(np.dot(model.cost, model.start))
    bound = relaxation_bound(model, time_limit)
    if bound is None or bound - value > gap * max(abs(value), 1e-9):
        return None
    return Outcome(OPTIMAL, value, bound, time.perf_counter() - started, model.nvariables(), model.nconstraints())
