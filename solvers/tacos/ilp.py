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
search with status ``timeout``. The program is ``ten_ilp``'s, which holds any collective's chunks (this is its
allgather), with h continuous and the variables no schedule can use left out.
"""
from __future__ import annotations

from dataclasses import dataclass, field

from topologies.model import Topology

from ..core.schedule import Collective
from .demands import collective_chunks
from .greedy import link_times
from .ten_ilp import MAX_COLUMNS, link_step_counts, ten_ilp

MAX_BINARIES = MAX_COLUMNS          # variables of one horizon's program (``ten_ilp``)


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


def tacos_ilp(topo: Topology, chunks: int, chunk_bytes: float, quantum_us: float | None = None,
              time_limit: float = 60.0, max_extra: int = 20, progress=None) -> IlpResult:
    """The smallest feasible horizon of the All-Gather and its schedule (module docstring); chunk c = j N + s is
    the j-th of source s's ``chunks``."""
    steps, quantum = link_step_counts(link_times(topo, chunk_bytes), quantum_us)
    specs = collective_chunks(topo, Collective.ALLGATHER, None, chunks)
    found = ten_ilp(topo, specs, steps, time_limit, max_extra, progress=progress)
    return IlpResult(found.status, found.steps, quantum, steps, [(t, c, e) for t, _end, c, e, _r in found.sends],
                     [(h, status, seconds) for h, status, seconds, _ in found.tried])
