"""BFB: the breadth-first-broadcast allgather of the direct-connect paper (section 6.1, App. E; digest section 5).

In step t every node u receives the shards of the sources v at distance t, each from in-neighbours w that are one
hop nearer to v (d(v,w) = t - 1), so every schedule takes D(G) steps. LP (1), solved independently per (u, t):

    minimize U_{u,t}   subject to   sum_w x_{v,w} = 1 for every source v,
                                    sum_v x_{v,w} <= U_{u,t} * c_w for every in-neighbour w,

where c_w is the bandwidth of the links w -> u (their number on unit links; self-loops get no variable but keep
their port). The optimum is T_B = sum_t max_u U_{u,t} in units of (M/N)/b, i.e. tb_factor = B/N * sum_t max U.

This module solves it exactly and combinatorially. By Hall's theorem for fractional assignments the optimum is
U* = max over source sets J of |J| / c(N(J)) (Theorem 19's condition). Sources with the same set of eligible
in-neighbours are merged into one *type*; a Dinkelbach iteration then raises U from the volume bound
|S| / c(W) to U*: at each trial U = p/q an integer max-flow either saturates every source (U is optimal) or its
minimum cut names a set J with |J| / c(N(J)) > U, the next trial. Every number is an exact Fraction.
"""
from __future__ import annotations

from collections import defaultdict, deque
from fractions import Fraction
from math import lcm

import numpy as np

from topologies.model import Topology
from topologies.properties import compute_distances, is_strongly_connected

from .errors import NotApplicable
from .schedule import Collective, Schedule, Transfer

ONE = Fraction(1)


class _MaxFlow:
    """Dinic's algorithm on a small graph with integer capacities."""

    def __init__(self, n: int):
        self.n = n
        self.adj: list[list[int]] = [[] for _ in range(n)]
        self.to: list[int] = []
        self.cap: list[int] = []

    def add(self, a: int, b: int, c: int) -> int:
        self.adj[a].append(len(self.to)); self.to.append(b); self.cap.append(c)
        self.adj[b].append(len(self.to)); self.to.append(a); self.cap.append(0)
        return len(self.to) - 2

    def _levels(self, s: int) -> list[int]:
        level = [-1] * self.n
        level[s] = 0
        queue = deque([s])
        while queue:
            a = queue.popleft()
            for e in self.adj[a]:
                if self.cap[e] > 0 and level[self.to[e]] < 0:
                    level[self.to[e]] = level[a] + 1
                    queue.append(self.to[e])
        return level

    def run(self, s: int, t: int) -> int:
        total = 0
        while True:
            level = self._levels(s)
            if level[t] < 0:
                return total
            it = [0] * self.n

            def push(a: int, f: int) -> int:
                if a == t:
                    return f
                while it[a] < len(self.adj[a]):
                    e = self.adj[a][it[a]]
                    b = self.to[e]
                    if self.cap[e] > 0 and level[b] == level[a] + 1:
                        got = push(b, min(f, self.cap[e]))
                        if got:
                            self.cap[e] -= got
                            self.cap[e ^ 1] += got
                            return got
                    it[a] += 1
                return 0

            while True:
                f = push(s, 1 << 62)
                if not f:
                    break
                total += f

    def reachable(self, s: int) -> list[bool]:
        return [lv >= 0 for lv in self._levels(s)]


def _assign(counts: list[int], eligible: list[tuple[int, ...]], caps: list[Fraction]):
    """Optimal fractional assignment of source types to in-neighbours.

    ``counts[k]`` sources of type k may use in-neighbours ``eligible[k]`` (indices into ``caps``). Returns
    ``(U, share)`` with ``share[k][w]`` the fraction of *each* type-k source sent by w (summing to 1 over w).
    """
    scale = lcm(*(c.denominator for c in caps))
    big_c = [int(c * scale) for c in caps]
    used = sorted({w for e in eligible for w in e})
    u = Fraction(sum(counts), sum(caps[w] for w in used))
    k, m = len(counts), len(caps)
    while True:
        p, q = u.numerator, u.denominator
        flow = _MaxFlow(k + m + 2)
        src, sink = k + m, k + m + 1
        for i, c in enumerate(counts):
            flow.add(src, i, c * q * scale)
        arcs = {(i, w): flow.add(i, k + w, 1 << 62) for i, e in enumerate(eligible) for w in e}
        for w in used:
            flow.add(k + w, sink, big_c[w] * p)
        need = sum(counts) * q * scale
        if flow.run(src, sink) == need:
            share = [{w: Fraction(flow.cap[arcs[i, w] ^ 1], counts[i] * q * scale) for w in e
                      if flow.cap[arcs[i, w] ^ 1]} for i, e in enumerate(eligible)]
            return u, share
        side = flow.reachable(src)
        tight = [i for i in range(k) if side[i]]
        nbrs = {w for i in tight for w in eligible[i]}
        u = Fraction(sum(counts[i] for i in tight)) / sum((caps[w] for w in nbrs), Fraction(0))


def bfb_allgather(topo: Topology) -> Schedule:
    """The optimal BFB allgather (Theorem 16): LP (1) solved exactly for every (u, t), read off into intervals.

    For each (u, t, v) the chosen fractions are laid end to end over [0, 1) in in-neighbour order (every eligible
    w holds all of v's shard after step t - 1), and a share on several parallel links w -> u is split in
    proportion to their bandwidth. ``notes`` keeps ``U[t]`` (max_u U_{u,t}) and the bottleneck receiver per step.
    """
    if topo.switch_nodes:
        raise NotApplicable("BFB is defined for direct-connect topologies; this one has switches")
    if not is_strongly_connected(topo):
        raise NotApplicable("BFB needs a strongly connected topology")
    dist = compute_distances(topo)
    n = topo.num_nodes
    transfers: list[Transfer] = []
    worst: dict[int, tuple[Fraction, int]] = {}
    for u in range(n):
        links_from: dict[int, list[int]] = defaultdict(list)
        for i in topo.in_links[u]:
            if topo.links[i].src != u:
                links_from[topo.links[i].src].append(i)
        nbrs = sorted(links_from)
        caps = [sum((topo.links[i].bandwidth for i in links_from[w]), Fraction(0)) for w in nbrs]
        du = dist[:, u]
        ok = dist[:, nbrs] == (du - 1)[:, None]  # ok[v, j]: nbrs[j] is one hop nearer to v than u
        if len(nbrs) < 63:  # the eligible set as a bitmask, else as a tuple of booleans
            codes = (ok.astype(np.int64) << np.arange(len(nbrs), dtype=np.int64)).sum(axis=1).tolist()
        else:
            codes = [tuple(row) for row in ok.tolist()]
        groups: dict[tuple[int, object], list[int]] = defaultdict(list)
        for v, (t, code) in enumerate(zip(du.tolist(), codes)):
            if t > 0:
                groups[int(t), code].append(v)
        by_step: dict[int, list[tuple[tuple[int, ...], list[int]]]] = defaultdict(list)
        for (t, _), members in groups.items():
            by_step[t].append((tuple(np.flatnonzero(ok[members[0]]).tolist()), members))
        for t, types in by_step.items():
            u_val, share = _assign([len(m) for _, m in types], [e for e, _ in types], caps)
            if t not in worst or u_val > worst[t][0]:
                worst[t] = (u_val, u)
            for (elig, members), parts in zip(types, share):
                pieces = []  # the same intervals serve every source of the type
                lo = Fraction(0)
                for j in elig:
                    x = parts.get(j)
                    if not x:
                        continue
                    width = x / caps[j]
                    for li in links_from[nbrs[j]]:
                        hi = lo + width * topo.links[li].bandwidth
                        pieces.append((lo, hi, li))
                        lo = hi
                transfers.extend(Transfer(v, a, b, li, t) for v in members for a, b, li in pieces)
    steps = sorted(worst)
    notes = {"U": {t: worst[t][0] for t in steps}, "bottleneck": {t: topo.names[worst[t][1]] for t in steps}}
    return Schedule(Collective.ALLGATHER, transfers, algo="bfb", notes=notes)
