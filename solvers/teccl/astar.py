"""TE-CCL's A*-style time partitioning (paper section 4.2, Appendix D; digest section 5).

Time is cut into rounds of ``round_epochs`` epochs solved one after another, each a MILP (``milp.build_milp``
with a ``Start``) that sees only its round plus a look-ahead of the longest link lag, in which chunks sent late in
the round may still land. A round does not have to meet the demand: it is paid for every open demand it meets
(early deliveries worth more) and, a little, for every chunk it moves to a node nearer an open destination (the
paper's distance objective, weighted by 1 / (1 + lag distance)), so a round that cannot finish still makes
progress. What every node holds at the round's end, and what is still in flight, starts the next round; the
demands met leave it. The rounds stop when every demand is met.

Each round is small, so A* scales where the single MILP does not, at the price of optimality (the paper measured
OPT 6-20 % better on its instances). The flows of all rounds, on one clock, go through the same reverse-DFS
pruning and lowering as the MILP's.
"""
from __future__ import annotations

import time

from topologies.model import Topology

from ..core.errors import NotApplicable
from .instance import Demand, Timing
from .milp import MAX_BINARIES, Start, build_milp, chosen_flows, milp_size
from .outcome import INFEASIBLE, TIMEOUT
from .solve import solve

PROGRESS_WEIGHT = 0.002          # the released code's γ
MAX_ROUNDS = 200


def astar_flows(topo: Topology, demand: Demand, t: Timing, round_epochs: int, switch_copy: bool,
                time_limit: float, gap: float, progress=None, group=None) -> tuple[list, list, float, int]:
    """(flows on the global clock, per-round (round, epochs, status, seconds, met), solver seconds, variables).
    With a symmetry ``group`` (``orbits.Orbits``), every round is the representatives' model with the orbit
    capacities, so the rounds' state stays invariant and is kept for the representatives only; the flows of all
    rounds are expanded to every source at the end."""
    full_demand = demand
    capacity = None
    if group is not None:
        demand, capacity = group.reduced(demand), group.capacity_sources()
    lag = t.lag
    look = max(lag[i] for i, l in enumerate(topo.links) if l.src != l.dst)
    horizon = round_epochs + look
    holders = {(s, c): {s} for (s, c) in demand.commodities}
    pending: dict = {}                   # (σ, c, n) -> global epoch of landing
    open_wants = set(demand.wants)
    flows_all: list = []
    rounds: list = []
    deadline = time.perf_counter() + time_limit
    solver_s, variables = 0.0, 0
    total = len(open_wants)
    for r in range(MAX_ROUNDS):
        if not open_wants:
            break
        left = deadline - time.perf_counter()
        if left <= 0:
            raise NotApplicable(f"A* ran out of its time limit after {r} rounds with {len(open_wants)} of "
                                f"{total} demands open; raise the time limit")
        base = r * round_epochs
        start = Start({k: set(v) for k, v in holders.items()},
                      {k: a - base for k, a in pending.items() if a - base <= horizon},
                      tuple(sorted(open_wants)), round_epochs)
        size = milp_size(topo, demand, t, horizon, start)
        if size > MAX_BINARIES:
            raise NotApplicable(f"an A* round of {round_epochs} epochs has {size:,} flow variables (more than "
                                f"{MAX_BINARIES:,}); use shorter rounds or fewer chunks")
        fm = build_milp(topo, demand, t, horizon, switch_copy, start, PROGRESS_WEIGHT, capacity=capacity)
        left = deadline - time.perf_counter()      # the build took part of it
        if left <= 0:
            raise NotApplicable(f"A* ran out of its time limit while building round {r + 1} with "
                                f"{len(open_wants)} of {total} demands open; raise the time limit")
        out = solve(fm.model, left, gap)
        solver_s += out.seconds
        variables = max(variables, out.variables)
        if out.status == INFEASIBLE:
            raise AssertionError("an A* round without forced demands cannot be infeasible")
        if out.status == TIMEOUT:
            raise NotApplicable(f"A* round {r + 1} found no solution before the time limit; raise it")
        flows = [(s, c, i, k + base) for s, c, i, k in chosen_flows(fm)]
        flows_all.extend(flows)
        for s, c, i, k in flows:
            n = topo.links[i].dst
            if topo.is_compute(n):
                pending[(s, c, n)] = k + lag[i]
        end = base + round_epochs
        for (s, c, n), a in list(pending.items()):
            if a <= end:
                holders[(s, c)].add(n)
                del pending[(s, c, n)]
        met = {(s, c, d) for (s, c, d) in open_wants
               if d in holders[(s, c)] or (s, c, d) in pending}
        open_wants -= met
        rounds.append({"round": r + 1, "epochs": round_epochs, "status": out.status,
                       "seconds": round(out.seconds, 3), "met": len(met)})
        if progress:
            progress(f"A* round {r + 1}: {total - len(open_wants)} of {total} demands met",
                     (total - len(open_wants)) / total)
        if not met and not flows:
            raise NotApplicable(f"A* round {r + 1} made no progress; use longer rounds")
    if open_wants:
        raise NotApplicable(f"A* stopped after {MAX_ROUNDS} rounds with demands open")
    if group is not None and full_demand is not demand:
        flows_all = group.expand(flows_all)
    return flows_all, rounds, solver_s, variables
