"""A greedy schedule in TE-CCL's own epochs, to start the MILP from (a MIP start) and to bound the epoch search
from above (digest sections 10.2 and 14: warm starts; TACOS's link-chunk matching, Won et al. section IV, in
epochs).

Epoch by epoch, every destination d takes as many chunks as its in-links can carry: the chunks d wants and does
not have or expect, each on a link (u, d) whose sender u holds it at the start of the epoch, within the link's
window capacity (``bounds.b_matching``, a maximum assignment). With copy, the destinations' choices do not
interact (a sender may send the same chunk on all its links), so each epoch delivers the most chunks it can; among
assignments of that size, the rarest chunks (fewest holders, ties broken by a seeded shuffle) are placed first, so
that the chunks spread evenly. A few seeds are tried and the schedule that finishes first, then delivers earliest
(the MILP's objective), is kept.

Fabrics with switches are left to the MILP (a switch holds nothing, so its forwarding is not a per-destination
choice): ``greedy_flows`` returns None for them, and for demands the greedy cannot finish.
"""
from __future__ import annotations

import math
import random

from topologies.model import Topology

from .bounds import b_matching
from .instance import Demand, Timing
from .milp import early_reward

SEEDS = 4


def _one_run(topo: Topology, demand: Demand, t: Timing, horizon: int, rng: random.Random):
    """One greedy run: (flows, finish epoch) or None when some demand is still open at ``horizon``."""
    lag = t.lag
    cap = [math.floor(c) for c in t.window_cap]
    into = {d: [i for i in topo.in_links[d] if topo.links[i].src != d] for d in topo.compute_nodes}
    wants: dict[int, set] = {}
    for s, c, d in demand.wants:
        wants.setdefault(d, set()).add((s, c))
    arrival: dict = {(s, c, s): 0 for (s, c) in demand.commodities}   # (σ, c, node) -> epoch it is held from
    holders: dict = {x: 1 for x in demand.commodities}
    sent: dict = {}                                                    # (link, epoch) -> chunks sent
    flows = []
    for k in range(horizon):
        for d in rng.sample(sorted(wants), len(wants)):
            need = [x for x in wants[d] if (x[0], x[1], d) not in arrival]
            if not need:
                continue
            rng.shuffle(need)
            need.sort(key=lambda x: holders[x])
            links = [i for i in into[d] if k + lag[i] <= horizon]
            free = [cap[i] - sum(sent.get((i, kk), 0) for kk in range(k - t.kappa[i] + 1, k)) for i in links]
            senders = [topo.links[i].src for i in links]
            options = [[j for j, u in enumerate(senders) if arrival.get((x[0], x[1], u), horizon + 1) <= k]
                       for x in need]
            for x, j in zip(need, b_matching(options, [max(0, f) for f in free])):
                if j is None:
                    continue
                i = links[j]
                flows.append((x[0], x[1], i, k))
                sent[(i, k)] = sent.get((i, k), 0) + 1
                arrival[(x[0], x[1], d)] = k + lag[i]
                holders[x] += 1
    finish = 0
    for s, c, d in demand.wants:
        a = arrival.get((s, c, d))
        if a is None:
            return None
        finish = max(finish, a)
    return flows, finish


def _delivery(topo: Topology, demand: Demand, t: Timing, flows, horizon: int) -> float:
    """The MILP's early-delivery objective of these flows at ``horizon`` epochs."""
    reward = early_reward(horizon)
    wanted = {(s, c, d) for s, c, d in demand.wants}
    return sum(reward[min(k + t.lag[i], horizon + 1)] for s, c, i, k in flows
               if (s, c, topo.links[i].dst) in wanted)


def greedy_flows(topo: Topology, demand: Demand, t: Timing, horizon: int, seeds: int = SEEDS):
    """The best of ``seeds`` greedy runs within ``horizon`` epochs (module docstring): (flows (σ, c, link, k),
    finish epoch), or None."""
    if topo.switch_nodes or not demand.copy:
        return None
    best, key = None, None
    for seed in range(seeds):
        run = _one_run(topo, demand, t, horizon, random.Random(seed))
        if run is None:
            continue
        flows, finish = run
        score = (finish, -_delivery(topo, demand, t, flows, finish))
        if key is None or score < key:
            best, key = run, score
    return best
