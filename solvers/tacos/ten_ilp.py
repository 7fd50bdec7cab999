"""TACOS-ILP for any collective given as pre/postconditions, several at once (TACOS section V-A, Fig. 11-12; the
completed formulation of ``solvers.tacos.ilp``, notes tacos.md 1.6), and its TACCL-like relaxation (section
VII-C, footnote 2: the ILP without the congestion constraint).

Chunks are ``demands.ChunkSpec``. A forward chunk c travels on G: h[c,v,t] (v holds c at step t) and x[c,e,t]
(c starts on link e at step t, arriving at t + k_e). A ``reverse`` chunk (a reduction) is a broadcast on G^T in
reversed time: its x[c,e,t] carries c from dst(e) to src(e) over reversed steps [t, t + k_e), which is link e
carrying the reduction src(e) -> dst(e) over forward steps [T - t - k_e, T - t). The rows are (1)-(6) of
``ilp``, with

    (5) for every link e and forward step tau < T: the forward sends that occupy tau (started in
        (tau - k_e, tau]) plus the reverse sends that occupy it (t in [T - tau - k_e, T - tau - 1]) <= 1

so the tenants of a multi-tenant instance share every link's time (TACOS Table V). h is continuous: with x
binary, the maximised h is 0 or 1 at every optimum, and only x needs branching. Variables no schedule can use
are left out: h before the earliest step a chunk can reach v, sends from a node that cannot hold the chunk yet,
and sends that arrive too late to reach a target by T.

The horizon T starts at ``demands.lower_bound`` in steps (its distance half alone without congestion) and grows
by one until the program is feasible; the
first feasible T is optimal in TEN time when it is the bound or every shorter one was proven infeasible (status
``optimal``).
"""
from __future__ import annotations

import math
import time
from dataclasses import dataclass, field

from topologies.model import Topology
from topologies.properties import is_strongly_connected

from ..core.errors import NotApplicable
from ..teccl.linear import Linear
from ..teccl.solve import INFEASIBLE, OPTIMAL, TIMEOUT, solve
from .demands import ChunkSpec, least_times, lower_bound, prune

MAX_COLUMNS = 400_000


@dataclass
class TenResult:
    """The outcome: ``status`` (optimal, feasible: the search stopped at a time limit with a schedule, timeout),
    the horizon in steps, the forward-time sends (start, end, chunk, link, reduce) in steps, and every horizon
    tried as (T, status, seconds, binaries)."""

    status: str
    steps: int | None
    sends: list[tuple[int, int, int, int, bool]] = field(default_factory=list)
    tried: list[tuple[int, str, float, int]] = field(default_factory=list)
    seconds: float = 0.0


PROGRESS = 0.01        # a window's reward for a chunk held at its end, nearer a target more (``complete=False``)


def build(topo: Topology, specs: list[ChunkSpec], link_steps: list[int], horizon: int, congestion: bool = True,
          complete: bool = True):
    """The program for horizon T = ``horizon``: (Linear, h columns {(c, v, t): j}, x columns [(c, e, t, j)]).
    ``complete=False`` drops the postcondition (6): the window of time clustering and early termination (TACOS
    section V-B, V-C), which delivers what it can, rewards early arrivals as (6)'s objective does, and, by
    ``PROGRESS`` at most, every chunk held at T by a node the nearer a target it is, so a window too short for a
    delivery still moves chunks on."""
    T = horizon
    lm = Linear(maximize=True)
    h: dict[tuple[int, int, int], int] = {}
    xs: list[tuple[int, int, int, int]] = []
    transpose = topo.transpose()
    occupy: dict[tuple[int, int], list[int]] = {}          # (link, forward step) -> x columns that hold it
    for c, spec in enumerate(specs):
        spec = spec.travelling()
        g = transpose if spec.reverse else topo
        early = least_times(g, spec.sources, link_steps)
        late = least_times(g, spec.targets, link_steps, inward=True)
        if complete and any(early[v] > T for v in spec.targets):
            raise NotApplicable("horizon below a target's distance")
        far = max((x for x in late if x < math.inf), default=0) + 1
        for v in range(g.num_nodes):
            if v in spec.sources or early[v] > T:
                continue
            cols = lm.add_vars(T + 1 - int(early[v]), 0.0, 1.0)
            for t, j in zip(range(int(early[v]), T + 1), cols):
                h[c, v, t] = j
                if v in spec.targets and t >= 1:
                    lm.cost[j] = 1.0
            if v in spec.targets and complete:
                lm.lower[h[c, v, T]] = 1.0                                         # (6)
            elif not complete and v not in spec.targets and late[v] < math.inf:
                lm.cost[h[c, v, T]] += PROGRESS * (1 - late[v] / far)
        for e, link in enumerate(g.links):
            u, w, k = link.src, link.dst, link_steps[e]
            if w in spec.sources or early[u] == math.inf or late[w] == math.inf:
                continue
            first, last = int(early[u]), T - k - (int(late[w]) if complete else 0)
            if last < first:
                continue
            cols = lm.add_vars(last - first + 1, 0.0, 1.0, integer=True)
            for t, j in zip(range(first, last + 1), cols):
                xs.append((c, e, t, j))
                if u not in spec.sources:
                    lm.add_row([j, h[c, u, t]], [1.0, -1.0], -math.inf, 0.0)           # (2)
                span = range(T - t - k, T - t) if spec.reverse else range(t, t + k)
                for tau in span:
                    occupy.setdefault((e, tau), []).append(j)
    if len(lm.cost) > MAX_COLUMNS:
        raise NotApplicable(f"TACOS-ILP would need {len(lm.cost)} variables at horizon {T} (limit {MAX_COLUMNS}); "
                            f"use the greedy for this size")
    inflow: dict[tuple[int, int, int], list[int]] = {}
    for c, e, t, j in xs:
        g_dst = topo.links[e].src if specs[c].reverse else topo.links[e].dst
        inflow.setdefault((c, g_dst, t + link_steps[e]), []).append(j)
    for (c, v, t), j in h.items():
        prev = h.get((c, v, t - 1))
        arrive = inflow.get((c, v, t), [])
        idx, coef = [j] + arrive, [1.0] + [-1.0] * len(arrive)
        if prev is not None:
            lm.add_row([j, prev], [1.0, -1.0], 0.0, math.inf)                          # (4)
            idx, coef = idx + [prev], coef + [-1.0]
        lm.add_row(idx, coef, -math.inf, 0.0)                                           # (3)
    if congestion:
        for cols in occupy.values():
            if len(cols) > 1:
                lm.add_row(cols, [1.0] * len(cols), -math.inf, 1.0)                    # (5)
    return lm, h, xs


def ten_ilp(topo: Topology, specs: list[ChunkSpec], link_steps: list[int], time_limit: float = 30.0,
            max_extra: int = 20, congestion: bool = True, progress=None, first: int | None = None,
            polish_s: float = 2.0, budget_s: float | None = None) -> TenResult:
    """The smallest feasible horizon and its sends (module docstring). ``time_limit`` bounds each solve;
    ``first``: the horizon to start from (default: the lower bound). Each horizon is first solved for
    feasibility alone (no objective: HiGHS finds a 6x6-mesh Table V schedule in 1.5 s that way, and none in 60 s
    while maximising early arrivals); the first feasible one is then improved for early arrivals (Fig. 12b) for
    at most ``polish_s`` seconds, starting from the schedule found. ``budget_s``: seconds for the whole search
    (each solve gets what is left of it; the search stops with ``timeout`` when it is spent)."""
    if topo.switch_nodes:
        raise NotApplicable("TACOS-ILP runs on point-to-point links: unwind the switches first")
    if not is_strongly_connected(topo):       # else the horizon's lower bound is infinite
        raise NotApplicable("the topology is not strongly connected: some compute node cannot reach another")
    begin = time.perf_counter()
    bound = lower_bound(topo, specs, [float(k) for k in link_steps], ingress=congestion)
    start = first if first is not None else int(math.ceil(bound - 1e-9))
    out = TenResult(TIMEOUT, None)
    transpose = topo.transpose()
    for horizon in range(max(start, 1), max(start, 1) + max_extra + 1):
        try:
            lm, h, xs = build(topo, specs, link_steps, horizon, congestion)
        except NotApplicable as exc:
            if "horizon below" in str(exc):
                continue
            raise
        early_arrivals = lm.cost
        lm.cost = [0.0] * len(early_arrivals)          # first: is there any schedule of T steps?
        limit = time_limit
        if budget_s is not None:
            limit = min(limit, budget_s - (time.perf_counter() - begin))
            if limit <= 0.05:
                out.status = TIMEOUT
                break
        outcome = solve(lm, limit, gap=1e-6)
        binaries = sum(lm.integer)
        out.tried.append((horizon, outcome.status, outcome.seconds, binaries))
        if progress is not None:
            progress(horizon, outcome.status)
        if outcome.status == INFEASIBLE:
            continue
        if not outcome.has_solution:
            out.status = outcome.status
            break
        out.status = OPTIMAL if horizon == start or all(status == INFEASIBLE for _, status, _, _ in
                                                        out.tried[:-1]) else "feasible"
        out.steps = horizon
        values = lm.values
        if polish_s > 0:                               # then: the earliest arrivals, from that schedule
            lm.cost, lm.start = early_arrivals, values
            better = solve(lm, polish_s, gap=1e-3)
            if better.has_solution:
                values = lm.values
        chosen = [(t, t + link_steps[e], c, e) for c, e, t, j in xs if values[j] > 0.5]
        travel = [s.travelling() for s in specs]
        for reverse in (False, True):
            part = [s for s in chosen if specs[s[2]].reverse == reverse]
            for start_, end, c, e in prune(transpose if reverse else topo, travel, part):
                if reverse:
                    out.sends.append((horizon - end, horizon - start_, c, e, specs[c].reduce))
                else:
                    out.sends.append((start_, end, c, e, False))
        out.sends.sort()
        break
    out.seconds = time.perf_counter() - begin
    return out


def link_step_counts(times: list[float], quantum: float | None = None) -> tuple[list[int], float]:
    """Each link's chunk time in TEN steps of ``quantum`` (default: the fastest link's), rounded up (section IV-C)."""
    q = quantum or min(times)
    return [max(1, math.ceil(t / q - 1e-9)) for t in times], q

