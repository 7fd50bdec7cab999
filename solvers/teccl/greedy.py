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

Switches hold nothing, so a chunk through a switch w is two sends in one go: (u, w) in epoch k and (w, d) in
epoch k + L_(u,w), the epoch it arrives at w (the MILP's switch rows: out = arrivals, no copy). After the direct
links, a destination fills its links from switches with the chunks still unplaced, each from the first compute
node u that holds it and whose link into w, and w's link to d at the later epoch, have room (a chunk crosses
(u, w) at most once per epoch). Paths of two switches in a row are not tried: ``greedy_flows`` returns None for
the demands it cannot finish (then the MILP alone searches), and for copy-free demands (the LP's).
"""
from __future__ import annotations

import math
import random

from topologies.model import Topology

from .bounds import b_matching
from .instance import Demand, Timing
from .milp import early_reward

SEEDS = 4


class _Links:
    """What each link has carried so far, per epoch, and whether one more chunk fits into every κ-window that a
    send in a given epoch falls in (the MILP's sliding-window capacity, Appendix F)."""

    def __init__(self, t: Timing):
        self.cap = [math.floor(c) for c in t.window_cap]
        self.kappa = t.kappa
        self.sent: dict = {}                         # (link, epoch) -> chunks sent

    def room(self, i: int, k: int) -> int:
        """How many more chunks link i can start in epoch k."""
        kap, sent = self.kappa[i], self.sent
        if kap == 1:
            return self.cap[i] - sent.get((i, k), 0)
        return min(self.cap[i] - sum(sent.get((i, x), 0) for x in range(end - kap + 1, end + 1))
                   for end in range(k, k + kap))

    def take(self, i: int, k: int) -> None:
        self.sent[(i, k)] = self.sent.get((i, k), 0) + 1


def _one_run(topo: Topology, demand: Demand, t: Timing, horizon: int, rng: random.Random):
    """One greedy run: (flows, finish epoch) or None when some demand is still open at ``horizon``."""
    lag = t.lag
    links = _Links(t)
    compute = set(topo.compute_nodes)
    ends = topo.links
    into = {d: [i for i in topo.in_links[d] if ends[i].src != d and ends[i].src in compute]
            for d in topo.compute_nodes}
    # through a switch w: the links (w, d) into d, and the links (u, w) from compute nodes into w
    down = {d: [i for i in topo.in_links[d] if ends[i].src not in compute] for d in topo.compute_nodes}
    up = {w: [i for i in topo.in_links[w] if ends[i].src in compute] for w in topo.switch_nodes}
    wants: dict[int, set] = {}
    for s, c, d in demand.wants:
        wants.setdefault(d, set()).add((s, c))
    arrival: dict = {(s, c, s): 0 for (s, c) in demand.commodities}   # (σ, c, node) -> epoch it is held from
    holders: dict = {x: 1 for x in demand.commodities}
    through: set = set()                                               # (σ, c, uplink, epoch) already sent
    flows = []
    for k in range(horizon):
        for d in rng.sample(sorted(wants), len(wants)):
            need = [x for x in wants[d] if (x[0], x[1], d) not in arrival]
            if not need:
                continue
            rng.shuffle(need)
            need.sort(key=lambda x: holders[x])
            direct = [i for i in into[d] if k + lag[i] <= horizon]
            free = [links.room(i, k) for i in direct]
            senders = [ends[i].src for i in direct]
            options = [[j for j, u in enumerate(senders) if arrival.get((x[0], x[1], u), horizon + 1) <= k]
                       for x in need]
            left = []
            for x, j in zip(need, b_matching(options, [max(0, f) for f in free])):
                if j is None:
                    left.append(x)
                    continue
                i = direct[j]
                flows.append((x[0], x[1], i, k))
                links.take(i, k)
                arrival[(x[0], x[1], d)] = k + lag[i]
                holders[x] += 1
            for dn in down[d]:                       # what the direct links could not take, through a switch
                w = ends[dn].src
                for x in list(left):
                    ok = None
                    for i in up.get(w, ()):
                        u = ends[i].src
                        at = k + lag[i]
                        if u != d and arrival.get((x[0], x[1], u), horizon + 1) <= k and at + lag[dn] <= horizon \
                                and (x[0], x[1], i, k) not in through and links.room(i, k) > 0 \
                                and links.room(dn, at) > 0:
                            ok = (i, at)
                            break
                    if ok is None:
                        continue
                    i, at = ok
                    flows.extend([(x[0], x[1], i, k), (x[0], x[1], dn, at)])
                    links.take(i, k)
                    links.take(dn, at)
                    through.add((x[0], x[1], i, k))
                    arrival[(x[0], x[1], d)] = at + lag[dn]
                    holders[x] += 1
                    left.remove(x)
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
    if not demand.copy:
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
