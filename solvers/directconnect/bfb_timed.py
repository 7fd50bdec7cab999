"""BFB on links of different bandwidth and alpha: LP (14) of the direct-connect paper (App. E.3), solved
exactly per (u, t) with the appendix's fix built in (a link pays its alpha only when it carries data).
"""
from __future__ import annotations

from fractions import Fraction
from math import lcm

from topologies.model import Topology

from ..core.schedule import Schedule
from .bfb_assignment import DinicFlow
from .bfb_problems import read_off, receiver_problems


def _timed_bound(caps: list[Fraction], alphas: list[Fraction], js, count: int, shard_bytes: Fraction) -> Fraction:
    """The least U with sum_{j in js} max(0, U - alpha_j) * cap_j / shard_bytes >= count."""
    order = sorted(js, key=lambda j: alphas[j])
    rate, offset = Fraction(0), Fraction(0)   # sum over active j of cap_j / s, and of alpha_j cap_j / s
    for k, j in enumerate(order):
        rate += caps[j] / shard_bytes
        offset += alphas[j] * caps[j] / shard_bytes
        u = (count + offset) / rate
        if k + 1 == len(order) or u <= alphas[order[k + 1]]:
            return u
    raise AssertionError("unreachable")


def _assign_timed(eligible, caps, alphas, shard_bytes):
    """LP (14) for one (u, t) with the fix of App. E.3 built in: a link pays its alpha only when it carries data.
    U is the least time such that the sources fit into capacities (U - alpha_j)^+ * cap_j / s (a max-flow, as in
    ``bfb_assignment.assign_sources``; each infeasible trial names a source set J whose own bound is the next trial)."""
    m = len(caps)
    every = list(range(len(eligible)))
    u = _timed_bound(caps, alphas, sorted({j for e in eligible for j in e}), len(eligible), shard_bytes)
    while True:
        room = [max(Fraction(0), (u - alphas[j]) * caps[j] / shard_bytes) for j in range(m)]
        scale = lcm(*(r.denominator for r in room))
        k = len(eligible)
        flow = DinicFlow(k + m + 2)
        src, sink = k + m, k + m + 1
        need = k * scale
        for i in every:
            flow.add(src, i, scale)
        arcs = {(i, j): flow.add(i, k + j, need + 1) for i, e in enumerate(eligible) for j in e}
        for j in range(m):
            flow.add(k + j, sink, int(room[j] * scale))
        if flow.run(src, sink) == need:
            return u, [{j: Fraction(flow.cap[arcs[i, j] ^ 1], scale) for j in e if flow.cap[arcs[i, j] ^ 1]}
                       for i, e in enumerate(eligible)]
        side = flow.reachable(src)
        tight = [i for i in every if side[i]]
        u = _timed_bound(caps, alphas, sorted({j for i in tight for j in eligible[i]}), len(tight), shard_bytes)


def bfb_timed(topo: Topology, total_bytes) -> Schedule:
    """BFB on links of different bandwidth and alpha (App. E.3, LP (14)) for an M = ``total_bytes`` vector.

    Per (u, t), U_{u,t} is a time in microseconds: every used link (w, u) must finish alpha_{w,u} +
    (M/N) * load / bandwidth <= U (bandwidth in GB/s = 1e3 bytes/us). A link that would carry nothing never
    sets U (App. E.3's re-solve without the unused link, done exactly). ``notes["U"][t]`` is max_u U_{u,t}
    and their sum the schedule's time."""
    shard_bytes = Fraction(str(total_bytes)) / topo.n / 1000    # bytes per shard over 1e3 bytes/us per GB/s
    if shard_bytes <= 0:
        raise ValueError("the vector size must be positive")
    problems = receiver_problems(topo)
    shares, worst = [], {}
    for p in problems:
        caps = [sum((topo.links[i].bandwidth for i in ls), Fraction(0)) for ls in p.links]
        alphas = [max(topo.links[i].alpha for i in ls) for ls in p.links]
        u_val, share = _assign_timed(p.eligible, caps, alphas, shard_bytes)
        shares.append(share)
        worst[p.t] = max(worst.get(p.t, Fraction(0)), u_val)
    return read_off(topo, problems, shares, "bfb", {"U": worst, "time_us": sum(worst.values(), Fraction(0))})
