"""TACOS-ILP: All-Gather as an integer program over the time-expanded network (TACOS section V-A, Fig. 11-12; the
completed formulation of notes tacos.md 1.6, pitfall T2), for small instances.

Discretization (section IV-C): with quantum f (default: the fastest link's chunk time), link e takes
k_e = ceil(t_e / f) time steps. For a horizon of T steps the binaries are h[c,v,t] (node v holds chunk c at
step t, t = 0..T) and x[c,e,t] (chunk c starts on link e at step t, arriving at t + k_e), with

    (1) h[c,v,0] = 1 exactly where c starts                         (precondition)
    (2) x[c,(u,v),t] <= h[c,u,t]                                     (a sender holds what it sends)
    (3) h[c,v,t] <= h[c,v,t-1] + sum_{e=(u,v)} x[c,e,t-k_e]          (a chunk appears only by arriving;
                                                                      missing from the paper)
    (4) h[c,v,t] >= h[c,v,t-1]                                       (nothing is dropped)
    (5) sum_c sum_{t-k_e < t' <= t} x[c,e,t'] <= 1                   (one chunk in flight per link: congestion)
    (6) h[c,v,T] = 1 for every (c,v) of the postcondition
    maximize sum over the postcondition of sum_{t=1..T} h[c,v,t]     (early arrival, Fig. 12b)

The horizon starts at a lower bound (the larger of the farthest chunk's shortest path in steps and the ingress
bound in steps) and grows by one until the program is feasible; the first feasible T is the optimum in TEN time
when each solve is proven (section V-A). Every solve has a time limit; one that ends without an answer stops the
search with status ``timeout``.
"""
from __future__ import annotations

import math
from dataclasses import dataclass, field

from topologies.model import Topology

from ..core.errors import NotApplicable
from ..teccl.solve import INFEASIBLE, OPTIMAL, Outcome, solve
from .greedy import link_times

MAX_BINARIES = 60_000


@dataclass
class IlpResult:
    """The optimal horizon (in steps of ``quantum_us``) and the sends (start step, chunk, link) that deliver."""

    status: str
    steps: int | None
    quantum_us: float
    link_steps: list[int]
    sends: list[tuple[int, int, int]] = field(default_factory=list)
    tried: list[tuple[int, str, float]] = field(default_factory=list)   # (horizon, status, seconds)

    @property
    def time_us(self) -> float | None:
        return None if self.steps is None else self.steps * self.quantum_us


def _distances(topo: Topology, steps: list[int], source: int) -> list[float]:
    import heapq

    dist = [math.inf] * topo.num_nodes
    dist[source] = 0
    heap = [(0, source)]
    while heap:
        d, u = heapq.heappop(heap)
        if d > dist[u]:
            continue
        for i in topo.out_links[u]:
            v, nd = topo.links[i].dst, d + steps[i]
            if nd < dist[v]:
                dist[v] = nd
                heapq.heappush(heap, (nd, v))
    return dist


def horizon_lower_bound(topo: Topology, chunks: int, steps: list[int]) -> int:
    """max(farthest shortest path in steps, ingress bound in steps)."""
    far = max(max(_distances(topo, steps, s)) for s in topo.compute_nodes)
    if far == math.inf:
        raise NotApplicable("TACOS-ILP: the topology is not strongly connected")
    need = chunks * (topo.n - 1)
    ingress = 0
    for d in topo.compute_nodes:
        own = [steps[i] for i in topo.in_links[d]]
        t = 0
        while sum(t // k for k in own) < need:
            t += 1
        ingress = max(ingress, t)
    return max(int(far), ingress)


def build_model(topo: Topology, chunks: int, steps: list[int], horizon: int):
    """The Pyomo model (1)-(6) for horizon T = ``horizon``."""
    import pyomo.environ as pyo

    n, T = topo.n, horizon
    C = range(chunks * n)
    owner = [c % n for c in C]
    m = pyo.ConcreteModel(name="tacos_ilp")
    h_index = [(c, v, t) for c in C for v in range(n) for t in range(T + 1)]
    x_index = [(c, e, t) for c in C for e, link in enumerate(topo.links) if link.dst != owner[c]
               for t in range(T - steps[e] + 1)]
    if len(h_index) + len(x_index) > MAX_BINARIES:
        raise NotApplicable(f"TACOS-ILP would need {len(h_index) + len(x_index)} binaries at horizon {T} "
                            f"(limit {MAX_BINARIES}); use the greedy for this size")
    m.h = pyo.Var(h_index, domain=pyo.Binary)
    m.x = pyo.Var(x_index, domain=pyo.Binary)
    xs = set(x_index)
    m.cons = pyo.ConstraintList()
    for c in C:
        for v in range(n):
            m.h[c, v, 0].fix(1 if v == owner[c] else 0)
            m.h[c, v, T].setlb(1)                                                  # (6)
            for t in range(1, T + 1):
                m.cons.add(m.h[c, v, t] >= m.h[c, v, t - 1])                      # (4)
                inflow = [m.x[c, e, t - steps[e]] for e in topo.in_links[v] if (c, e, t - steps[e]) in xs]
                m.cons.add(m.h[c, v, t] <= m.h[c, v, t - 1] + sum(inflow))       # (3)
    for (c, e, t) in x_index:
        m.cons.add(m.x[c, e, t] <= m.h[c, topo.links[e].src, t])                  # (2)
    for e in range(len(topo.links)):
        for t in range(T + 1):
            window = [m.x[c, e, s] for c in C for s in range(max(0, t - steps[e] + 1), t + 1) if (c, e, s) in xs]
            if len(window) > 1:
                m.cons.add(sum(window) <= 1)                                        # (5)
    m.obj = pyo.Objective(expr=sum(m.h[c, v, t] for c in C for v in range(n) if v != owner[c]
                                   for t in range(1, T + 1)), sense=pyo.maximize)
    return m


def tacos_ilp(topo: Topology, chunks: int, chunk_bytes: float, quantum_us: float | None = None,
              time_limit: float = 60.0, max_extra: int = 20, progress=None) -> IlpResult:
    """The smallest feasible horizon and its schedule (module docstring)."""
    if topo.switch_nodes:
        raise NotApplicable("TACOS-ILP runs on point-to-point links: unwind the switches first")
    times = link_times(topo, chunk_bytes)
    quantum = quantum_us or min(times)
    steps = [max(1, math.ceil(t / quantum - 1e-9)) for t in times]
    start = horizon_lower_bound(topo, chunks, steps)
    result = IlpResult("timeout", None, quantum, steps)
    for horizon in range(start, start + max_extra + 1):
        model = build_model(topo, chunks, steps, horizon)
        outcome: Outcome = solve(model, time_limit, gap=1e-6, first_solution=False)
        result.tried.append((horizon, outcome.status, outcome.seconds))
        if progress is not None:
            progress(horizon, outcome.status)
        if outcome.status == INFEASIBLE:
            continue
        if not outcome.has_solution:
            result.status = outcome.status
            return result
        result.status = OPTIMAL            # every shorter horizon was proven infeasible (or is below the bound)
        result.steps = horizon
        holds = {(c, v) for (c, v, t) in model.h if t == 0 and model.h[c, v, t].value > 0.5}
        for (c, e, t) in sorted(model.x, key=lambda k: (k[2] + steps[k[1]], k[2], k[1], k[0])):
            if model.x[c, e, t].value > 0.5:
                dst = topo.links[e].dst
                if (c, dst) not in holds:
                    holds.add((c, dst))
                    result.sends.append((t, c, e))
        return result
    return result
