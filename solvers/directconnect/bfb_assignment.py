"""BFB's per-(u, t) problem solved exactly: LP (1) of the direct-connect paper (section 6.1, Theorem 19) as an
optimal fractional assignment of sources to in-neighbours.

By Hall's theorem for fractional assignments the optimum is U* = max over source sets J of |J| / c(N(J))
(Theorem 19's condition). Sources with the same set of eligible in-neighbours are one *type*; a Dinkelbach
iteration raises U from the volume bound |S| / c(W) to U*: at each trial U = p/q an integer max-flow
(``DinicFlow``) either saturates every source (U is optimal) or its minimum cut names a set J with
|J| / c(N(J)) > U, the next trial. Every number is an exact Fraction. ``bfb.py`` (the schedule, every receiver),
``bfb_problems.py`` (one problem at a time) and ``bfb_timed.py`` (links with alpha, LP (14)) all solve with it.
"""
from __future__ import annotations

from collections import defaultdict, deque
from fractions import Fraction
from math import lcm

ONE = Fraction(1)


class DinicFlow:
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


def assign_sources(counts: list[int], eligible: list[tuple[int, ...]], caps: list[Fraction]):
    """Optimal fractional assignment of source types to in-neighbours.

    ``counts[k]`` sources of type k may use in-neighbours ``eligible[k]`` (indices into ``caps``). Returns
    ``(U, share, tight)``: ``share[k][w]`` is the fraction of *each* type-k source sent by w (summing to 1 over
    w), and ``tight`` the types of a source set J attaining U = |J| / c(N(J)) (Theorem 19's Hall condition).
    """
    if all(len(e) == 1 for e in eligible):          # nothing to balance: every source has one way in
        load: dict[int, int] = defaultdict(int)
        for c, (w,) in zip(counts, eligible):
            load[w] += c
        worst = max(load, key=lambda w: Fraction(load[w]) / caps[w])
        return (Fraction(load[worst]) / caps[worst], [{e[0]: ONE} for e in eligible],
                [i for i, e in enumerate(eligible) if e[0] == worst])
    scale = lcm(*(c.denominator for c in caps))
    big_c = [int(c * scale) for c in caps]
    used = sorted({w for e in eligible for w in e})
    u = Fraction(sum(counts), sum(caps[w] for w in used))
    tight = list(range(len(counts)))
    k, m = len(counts), len(caps)
    while True:
        p, q = u.numerator, u.denominator
        need = sum(counts) * q * scale
        flow = DinicFlow(k + m + 2)
        src, sink = k + m, k + m + 1
        for i, c in enumerate(counts):
            flow.add(src, i, c * q * scale)
        arcs = {(i, w): flow.add(i, k + w, need + 1) for i, e in enumerate(eligible) for w in e}
        for w in used:
            flow.add(k + w, sink, big_c[w] * p)
        if flow.run(src, sink) == need:
            share = [{w: Fraction(flow.cap[arcs[i, w] ^ 1], counts[i] * q * scale) for w in e
                      if flow.cap[arcs[i, w] ^ 1]} for i, e in enumerate(eligible)]
            return u, share, tight
        side = flow.reachable(src)
        tight = [i for i in range(k) if side[i]]
        nbrs = {w for i in tight for w in eligible[i]}
        u = Fraction(sum(counts[i] for i in tight)) / sum((caps[w] for w in nbrs), Fraction(0))
