"""TACOS (Won et al., "TACOS: Topology-Aware Collective Algorithm Synthesizer for Distributed Machine Learning",
arXiv 2304.05301; notes tacos.md): greedy link-chunk matching over a time-expanded network, and the TACOS-ILP for
small instances.

``tacos(topo, collective, ...)`` unwinds the switches (``topologies.unwind``, section IV-D), runs the greedy All-Gather
(``greedy``) with several seeded restarts and lowers the best run into the schedule IR; a reduce-scatter is the
All-Gather synthesized on the transpose and reversed, an all-reduce is reduce-scatter then All-Gather (section VII-A;
``solvers.core.transform``). The IR gives each distinct start time of the continuous-time run its own step, in time
order, so every send follows the arrival of what it forwards.

Times. ``time_us`` is the synthesizer's own estimate: the continuous-time makespan of the greedy under the link
model alpha + chunk / bandwidth, one chunk per link at a time (the reduce-scatter phase mirrors the All-Gather on
the transpose; the all-reduce adds the phases, no overlap). ``bound_us`` is the ingress lower bound of notes 1.13
for each phase, summed. ``tacos_rooted`` does the same for broadcast, reduce, gather and scatter over their chunks
as pre/postconditions (``demands``, ``joint``), with the distance and ingress bound of any postcondition. The IR's
alpha-beta step model prices the same schedule differently (every step lasts as long as its slowest link) and is
reported beside it by ``synthesize``.
"""
from __future__ import annotations

import time
from dataclasses import dataclass, field
from fractions import Fraction

import numpy as np

from topologies.model import Topology
from topologies.unwind import unwind

from ..core.detail import Detail
from ..core.errors import NotApplicable
from ..core.schedule import Collective, Columns, Schedule, Transfer
from ..core.transform import build_collective
from .demands import collective_chunks
from .greedy import GreedyRun, best_of, greedy_allgather, ingress_bound_us
from .ilp import IlpResult, tacos_ilp
from .joint import TenantCall, best_joint, lower_tenants

DEFAULT_BUFFER = 1 << 26        # 64 MiB
DEFAULT_RESTARTS = 8

__all__ = ["tacos", "tacos_rooted", "rooted_chunk_bytes", "TacosResult", "greedy_allgather", "best_of",
           "ingress_bound_us", "tacos_ilp", "IlpResult", "chunk_size", "lower_run", "flat_root"]


def chunk_size(buffer_bytes: float, nodes: int, chunks: int) -> float:
    """The reference implementation's chunk: buffer / (N * k), whole bytes when the buffer is whole."""
    if buffer_bytes <= 0:
        raise NotApplicable(f"the buffer must be positive, got {buffer_bytes}")
    if float(buffer_bytes).is_integer():
        size = int(buffer_bytes) // (nodes * chunks)
        if size == 0:
            raise NotApplicable(f"a buffer of {int(buffer_bytes)} bytes is smaller than {nodes * chunks} chunks")
        return float(size)
    return buffer_bytes / (nodes * chunks)


def lower_run(topo: Topology, run: GreedyRun, chunks: int, algo: str = "tacos") -> Schedule:
    """The All-Gather schedule of a greedy run: chunk c = j*N + s is part [j/k, (j+1)/k) of shard s; each
    distinct start time is one step, in time order."""
    n = topo.n
    notes = {"tacos_time_us": run.time_us}
    if run.columns is not None:                # the numpy engine: straight into columns, no tuple per send
        start, _end, chunk, link = run.columns
        _, step = np.unique(start, return_inverse=True)
        cols = Columns(step.astype(np.int64) + 1, link.astype(np.int64), chunk % n, chunk // n, chunk // n + 1,
                       np.zeros(len(chunk), dtype=bool), chunks)
        return Schedule(Collective.ALLGATHER, algo=algo, notes=notes, cols=cols)
    starts = sorted({start for start, _end, _c, _l in run.sends})
    step_of = {t: i + 1 for i, t in enumerate(starts)}
    transfers = [Transfer(c % n, Fraction(c // n, chunks), Fraction(c // n + 1, chunks), link, step_of[start])
                 for start, _end, c, link in run.sends]
    return Schedule(Collective.ALLGATHER, transfers, algo, notes)


@dataclass
class Phase:
    collective: str
    time_us: float
    bound_us: float
    spread_us: list[float]
    events: int
    sends: int
    replaced: int
    dropped: int
    run: GreedyRun | None = field(default=None, repr=False)     # the kept run (on the transpose for RS)


@dataclass
class TacosResult(Detail):
    """A TACOS schedule on the (unwound) topology with the synthesizer's time estimate and its lower bound.
    As the ``Detail`` of a synthesized Result it adds the greedy's own clock beside its ingress bound."""

    topology: Topology
    schedule: Schedule
    collective: Collective
    chunks: int
    chunk_bytes: float
    restarts: int
    phases: list[Phase]
    seconds: float
    unwound: bool
    ilp: IlpResult | None = None
    notes: dict = field(default_factory=dict)

    @property
    def time_us(self) -> float:
        return sum(p.time_us for p in self.phases)

    @property
    def bound_us(self) -> float:
        return sum(p.bound_us for p in self.phases)

    @property
    def gap(self) -> float:
        """time / bound - 1."""
        return self.time_us / self.bound_us - 1 if self.bound_us else 0.0

    def timeline(self) -> list[dict]:
        """Every send on the collective's clock: the reduce-scatter phase is its transpose All-Gather run
        backwards (a send over [t0, t1] there is one over [T - t1, T - t0] on the link's reverse direction,
        the same link index), the All-Gather phase follows it."""
        rows, offset = [], 0.0
        n = self.topology.n
        for phase in self.phases:
            for start, end, c, link in phase.run.send_rows():
                if phase.collective == "reduce_scatter":
                    start, end = phase.time_us - end, phase.time_us - start
                rows.append({"phase": phase.collective, "start_us": offset + start, "end_us": offset + end,
                             "link": link, "shard": c % n, "part": c // n})
            offset += phase.time_us
        return rows

    def as_dict(self) -> dict:
        out = {"time_us": self.time_us, "bound_us": self.bound_us, "gap": self.gap, "chunks": self.chunks,
               "chunk_bytes": self.chunk_bytes, "restarts": self.restarts, "synthesis_s": self.seconds,
               "unwound": self.unwound,
               "phases": [{"collective": p.collective, "time_us": p.time_us, "bound_us": p.bound_us,
                           "best_of": len(p.spread_us), "worst_us": max(p.spread_us), "events": p.events,
                           "sends": p.sends, "replaced": p.replaced, "dropped": p.dropped} for p in self.phases]}
        if self.ilp is not None:
            out["ilp"] = {"status": self.ilp.status, "steps": self.ilp.steps, "time_us": self.ilp.time_us,
                          "quantum_us": self.ilp.quantum_us, "tried": self.ilp.tried}
        return out

    # -- Detail hooks: the greedy's continuous-time estimate beside its ingress bound
    def fields(self, result) -> dict:
        return {"tacos": self.as_dict(), "synthesizer_time_us": self.time_us, "synthesizer_bound_us": self.bound_us}

    def text_rows(self, out: dict) -> dict:
        t = out["tacos"]
        return {"tacos chunks": t["chunks"], "tacos chunk_bytes": t["chunk_bytes"], "tacos restarts": t["restarts"],
                "tacos gap to bound": f"{100 * t['gap']:.2f} %", "tacos synthesis_s": round(t["synthesis_s"], 3)}

    def hidden_text_keys(self) -> tuple[str, ...]:
        return ("tacos",)

    def compare_note(self) -> str:
        return f"TACOS's own clock: {self.time_us:.4g} us on the fabric's links"


def tacos(topo: Topology, collective: Collective | str = Collective.ALLGATHER, chunks: int = 1,
          buffer_bytes: float | None = None, restarts: int = DEFAULT_RESTARTS, seed: int = 0,
          unwind_degree: int | str = "auto", progress=None) -> TacosResult:
    """TACOS for allgather, reduce-scatter or allreduce (module docstring). ``chunks`` is k, the chunks per NPU
    (pipelining, section VIII-C); ``buffer_bytes`` the collective's buffer (the papers' M; 64 MiB by default);
    ``progress(phase, fraction)`` hears about each restart. Restarts stop early once a run meets the ingress
    bound."""
    if isinstance(collective, str):
        collective = Collective.parse(collective)
    if collective not in (Collective.ALLGATHER, Collective.REDUCE_SCATTER, Collective.ALLREDUCE):
        raise NotApplicable(f"TACOS synthesizes allgather, reduce-scatter and allreduce, not {collective.value}")
    if isinstance(chunks, bool) or not isinstance(chunks, int) or chunks < 1:
        raise NotApplicable(f"chunks per NPU must be a positive integer, got {chunks!r}")
    start = time.perf_counter()
    flat = unwind(topo, unwind_degree)
    if flat.n < 2:
        raise NotApplicable("TACOS needs at least two compute nodes")
    size = chunk_size(DEFAULT_BUFFER if buffer_bytes is None else buffer_bytes, flat.n, chunks)
    phases: list[Phase] = []

    def allgather(g: Topology) -> Schedule:
        name = "reduce_scatter" if g is not flat else "allgather"
        report = (lambda f: progress(f"tacos {name}", f)) if progress else None
        bound = ingress_bound_us(g, chunks, size)
        run, spread = best_of(g, chunks, size, restarts, seed, report, target_us=bound)
        phases.append(Phase(name, run.time_us, bound, spread, run.events,
                            run.count, run.replaced, run.dropped, run))
        return lower_run(g, run, chunks)

    schedule = build_collective(flat, collective, allgather)
    phases.sort(key=lambda p: p.collective != "reduce_scatter")
    schedule.algo = "tacos"
    return TacosResult(flat, schedule, collective, chunks, size, restarts, phases, time.perf_counter() - start,
                       flat is not topo)


def rooted_chunk_bytes(collective: Collective, buffer_bytes: float, nodes: int, chunks: int) -> float:
    """A chunk of a rooted collective: M / k for broadcast and reduce (the whole buffer is one message), M / (N k)
    for gather and scatter (each NPU's part), whole bytes when M is whole."""
    if collective in (Collective.BROADCAST, Collective.REDUCE):
        return chunk_size(buffer_bytes, 1, chunks)
    return chunk_size(buffer_bytes, nodes, chunks)


def flat_root(topo: Topology, flat: Topology, root: int) -> int:
    """The index on the unwound ``flat`` of node ``root`` of ``topo`` (unwinding keeps compute nodes' names)."""
    return root if flat is topo else flat.names.index(topo.names[root])


def tacos_rooted(topo: Topology, collective: Collective, root: int, chunks: int = 1,
                 buffer_bytes: float | None = None, restarts: int = DEFAULT_RESTARTS, seed: int = 0,
                 unwind_degree: int | str = "auto", progress=None) -> TacosResult:
    """TACOS's greedy for broadcast, reduce, gather or scatter rooted at node ``root`` of ``topo`` (TACOS section
    II-A, Fig. 2-3; ``solvers.tacos.joint``): the collective's chunks as pre/postconditions, reductions and
    scatters matched on the transpose and run backwards, relays on shortest paths (pitfall T4)."""
    start = time.perf_counter()
    flat = unwind(topo, unwind_degree)
    if flat.n < 2:
        raise NotApplicable("TACOS needs at least two compute nodes")
    node = flat_root(topo, flat, root)
    size = rooted_chunk_bytes(collective, DEFAULT_BUFFER if buffer_bytes is None else buffer_bytes, flat.n, chunks)
    specs = collective_chunks(flat, collective, node, chunks)
    report = (lambda f: progress(f"tacos {collective.value}", f)) if progress else None
    run = best_joint(flat, specs, size, restarts, seed, report)
    [schedule] = lower_tenants(flat, specs, run.sends, [TenantCall(collective, node)], "tacos",
                               {"tacos_time_us": run.time})
    kept = GreedyRun(run.time, [(a, b, c, link) for a, b, c, link, _ in run.sends], len(run.spread), 0, 0, run.seed)
    # the joint greedy counts no events: 0
    phase = Phase(collective.value, run.time, run.bound, run.spread, 0, len(run.sends), 0, 0, kept)
    return TacosResult(flat, schedule, collective, chunks, size, restarts, [phase], time.perf_counter() - start,
                       flat is not topo)
