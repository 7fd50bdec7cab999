"""GenModel time of any schedule in the repo's IR (``solvers.core.schedule``), on the topology's own links.

Each comm step lasts (GenModel paper Fig. 2: launch, transmit, then aggregate, in sequence; pitfall P13)

    max over links l of (alpha_l + bytes_l / bandwidth_l)             -- exactly ``solvers.core.cost.step_model_us``
  + max over receiving compute nodes r of (incast_r + reduce_r)

* incast_r = max(w_r - w_t, 0) · (floats r receives in the step) · epsilon (Eq. 7). w_r counts the distinct
  compute nodes whose pieces arrive at r in the step, followed back through switches with
  ``switch_paths.network_view`` (plus one with ``fan_in="group"``: the receiver counts as a group member, Eq. 8).
  When the view cannot be built, w_r counts r's distinct incoming links that carry data.
* reduce_r: the reduce transfers arriving at r in the step are cut into elementary intervals per shard; an
  interval covered by k incoming partials is one reduction of fan-in k + 1 (the partial r holds and the k that
  arrive): k·E adds (gamma) and (k + 2)·E floats read or written (delta, §3.1), E its length in floats.

Links keep their bandwidth (GB/s) and alpha (microseconds); the GenModel parameters supply gamma, delta, epsilon
(s/float) and w_t, converted to microseconds per byte as x·1e6/4. With gamma = delta = epsilon = 0 the time is
``solvers.core.cost.step_model_us``.
"""
from __future__ import annotations

from collections import defaultdict
from fractions import Fraction

from solvers.core.cost import link_loads
from solvers.core.errors import NotApplicable
from solvers.core.schedule import Schedule
from solvers.core.switch_paths import network_view
from topologies.model import Topology

from .params import FLOAT_BYTES, GenModelParams, ModelOptions


def _arrivals(topo: Topology, schedule: Schedule):
    """(step, origin, destination, transfer) for every piece that reaches a compute node."""
    out = []
    try:
        net, view = network_view(topo, schedule)
        for t in view.transfers:
            link = net.links[t.link]
            out.append((t.step, topo.compute_nodes[link.src], topo.compute_nodes[link.dst], t, True))
        return out, True
    except NotApplicable:
        for t in schedule.transfers:
            link = topo.links[t.link]
            if topo.is_compute(link.dst):
                out.append((t.step, link.src, link.dst, t, False))
        return out, False


def _reduction(pieces: list[tuple[Fraction, Fraction]], shard_floats: float) -> tuple[float, float]:
    """(adds, memory floats) of the partials ``pieces`` ([lo, hi) of one shard) arriving at one node."""
    cuts = sorted({x for p in pieces for x in p})
    adds = mem = 0.0
    for a, b in zip(cuts, cuts[1:]):
        k = sum(1 for lo, hi in pieces if lo <= a and b <= hi)
        if k:
            e = float(b - a) * shard_floats
            adds += k * e
            mem += (k + 2) * e
    return adds, mem


def genmodel_time_us(topo: Topology, schedule: Schedule, total_bytes: float, params: GenModelParams,
                     options: ModelOptions = ModelOptions()) -> dict:
    """GenModel runtime in microseconds of ``schedule`` for a vector of ``total_bytes`` (M, as in
    ``solvers.core.cost.step_model_us``), with the breakdown by term and per step (module docstring)."""
    if not (total_bytes >= 0):
        raise ValueError(f"total_bytes must be non-negative, got {total_bytes!r}")
    shard_bytes = total_bytes / topo.n
    shard_floats = shard_bytes / FLOAT_BYTES
    to_us = 1e6                                                   # seconds per float -> us per float
    arrivals, traced = _arrivals(topo, schedule)
    by_step: dict[int, list] = defaultdict(list)
    for step, origin, dst, t, _ in arrivals:
        by_step[step].append((origin, dst, t))
    extra = 1 if options.fan_in == "group" else 0
    totals = dict.fromkeys(("alpha_us", "beta_us", "gamma_us", "delta_us", "epsilon_us"), 0.0)
    per_step = []
    for step, per_link in sorted(link_loads(schedule).items()):
        worst, a_part, b_part = -1.0, 0.0, 0.0
        for l, load in per_link.items():
            link = topo.links[l]
            a, b = float(link.alpha), float(load) * shard_bytes / (float(link.bandwidth) * 1e3)
            if a + b > worst:
                worst, a_part, b_part = a + b, a, b
        senders: dict[int, set] = defaultdict(set)
        received: dict[int, float] = defaultdict(float)
        partials: dict[tuple[int, int], list] = defaultdict(list)
        for origin, dst, t in by_step.get(step, ()):
            senders[dst].add(origin)
            received[dst] += float(t.hi - t.lo) * shard_floats
            if t.reduce:
                partials[(dst, t.shard)].append((t.lo, t.hi))
        work: dict[int, list[float]] = defaultdict(lambda: [0.0, 0.0, 0.0])   # node -> [incast, gamma, delta]
        for dst, got in received.items():
            w = len(senders[dst]) + extra
            work[dst][0] = max(w - params.w_t, 0) * got * params.epsilon * to_us
        for (dst, _), pieces in partials.items():
            adds, mem = _reduction(pieces, shard_floats)
            work[dst][1] += adds * params.gamma * to_us
            work[dst][2] += mem * params.delta * to_us
        e = g = d = 0.0
        if work:
            e, g, d = max(work.values(), key=sum)
        totals["alpha_us"] += a_part
        totals["beta_us"] += b_part
        totals["epsilon_us"] += e
        totals["gamma_us"] += g
        totals["delta_us"] += d
        per_step.append({"step": step, "alpha_beta_us": worst, "epsilon_us": e, "gamma_us": g, "delta_us": d,
                         "time_us": worst + e + g + d})
    total = sum(totals.values())
    return {"total_us": total, **totals, "alpha_beta_us": totals["alpha_us"] + totals["beta_us"],
            "steps": len(per_step), "traced_through_switches": traced, "per_step": per_step}
