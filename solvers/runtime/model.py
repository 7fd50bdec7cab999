"""The runtime model itself: ``Execution`` (how links are priced and sliced), ``RuntimeResult``, ``Model`` (one
schedule's message graph timed for many sizes) and ``simulate``; its lower bound is ``bounds.bound_time_us``. The
semantics are the package's docstring (``solvers.runtime``), which re-exports everything here; ``workload.py``,
``calibrate.py``, ``overlay.py`` and ``bounds.py`` import it from this module, below the package, so that the
package can re-export them too.
"""
from __future__ import annotations

from dataclasses import dataclass, field, replace
from typing import Callable, Sequence

import numpy as np

from topologies.model import Topology

from ..core.cost import node_bandwidth
from ..core.schedule import Schedule
from .dag import MessageGraph, busbw_factor, message_graph
from .engine import Layout, WaveRun, run_waves

LOCAL_REDUCE_GBS = 40.0      # a threadblock's local reduction rate (solvers.runtime's docstring, "Local reductions")
MAX_CELLS = 32_000_000       # floats held per batch of sizes (the wave state of every size simulated at once)
BOUND_SLACK = 1e-9           # a depth is skipped only where its lower bound beats the best time by this share


@dataclass(frozen=True)
class Execution:
    """How the runtime executes a schedule.

    ``alpha_us``/``bandwidth_gbs``: None for the links' own prices, or the alpha-beta model (``solvers.runtime``'s
    docstring).
    ``slices``: a fixed pipelining depth P, or None to pick the fastest. ``max_slices`` caps the search and
    ``min_slice_bytes`` keeps every slice of the buffer at least that large (a runtime moves data in chunks of
    some size; a slice of a few bytes would make alpha the whole cost)."""

    alpha_us: float | None = None
    bandwidth_gbs: float | None = None
    slices: int | None = None
    max_slices: int = 1024
    min_slice_bytes: float = 65536.0

    def __post_init__(self):
        if (self.alpha_us is None) != (self.bandwidth_gbs is None):
            raise ValueError("give alpha and bandwidth together (the alpha-beta model), or neither (the links' "
                             "own alphas and bandwidths)")
        if self.alpha_us is not None and not (self.alpha_us >= 0 and self.bandwidth_gbs > 0):
            raise ValueError("alpha must be non-negative and the bandwidth positive")
        if self.slices is not None and not (isinstance(self.slices, int) and self.slices >= 1):
            raise ValueError(f"the number of slices must be a positive integer, got {self.slices!r}")
        if not (isinstance(self.max_slices, int) and self.max_slices >= 1):
            raise ValueError(f"max_slices must be a positive integer, got {self.max_slices!r}")
        if not (self.min_slice_bytes >= 0):
            raise ValueError("min_slice_bytes must be non-negative")

    @classmethod
    def alpha_beta(cls, alpha_us: float, bandwidth_gbs: float, **kw) -> "Execution":
        return cls(float(alpha_us), float(bandwidth_gbs), **kw)

    def fixed(self, slices: int) -> "Execution":
        return replace(self, slices=slices)

    @property
    def label(self) -> str:
        if self.alpha_us is None:
            return "the links' own alphas and bandwidths"
        return f"alpha {self.alpha_us:g} us, B {self.bandwidth_gbs:g} GB/s per node"

    def link_prices(self, topo: Topology) -> tuple[np.ndarray, np.ndarray]:
        """(alpha in us, microseconds per byte) of every link."""
        bw = np.array([float(l.bandwidth) for l in topo.links])
        if self.alpha_us is None:
            alpha = np.array([float(l.alpha) for l in topo.links])
        else:
            alpha = np.array([self.alpha_us if topo.is_compute(l.src) else 0.0 for l in topo.links])
            bw = bw * (self.bandwidth_gbs / float(node_bandwidth(topo)))
        return alpha, 1.0 / (bw * 1e3)


@dataclass
class RuntimeResult:
    """The model's answer for one buffer size. Times in microseconds, bandwidths in GB/s (nccl-tests: algbw =
    M / time, busbw = algbw * ``busbw_factor``)."""

    total_bytes: float
    time_us: float
    slices: int
    algbw_gbs: float
    busbw_gbs: float
    link_busy_us: dict[int, float]          # link -> time it is held (all slices)
    rank_finish_us: list[float]             # per compute node (rank order): when its last receive ends
    messages: int                           # per slice
    events: int                             # messages x slices
    execution: Execution = field(default_factory=Execution)
    timeline: list[dict] | None = None      # with record=True: one row per send of every slice

    def utilisation(self) -> dict[int, float]:
        """Busy time / completion time per link that carries data."""
        t = self.time_us
        return {l: (b / t if t > 0 else 0.0) for l, b in self.link_busy_us.items()}

    def as_dict(self) -> dict:
        busy = self.link_busy_us
        return {"time_us": self.time_us, "algbw_GBps": self.algbw_gbs, "busbw_GBps": self.busbw_gbs,
                "slices": self.slices, "messages": self.messages, "events": self.events,
                "max_link_utilisation": max(self.utilisation().values(), default=0.0),
                "links_used": len(busy), "model": self.execution.label}


class Model:
    """One schedule on one fabric, ready to be timed at many sizes (the message graph is built once)."""

    def __init__(self, topo: Topology, schedule: Schedule, execution: Execution | None = None,
                 graph: MessageGraph | None = None):
        self.topo, self.schedule = topo, schedule
        self.execution = execution or Execution()
        self.graph = graph if graph is not None else message_graph(topo, schedule)
        self.layout = Layout.of(self.graph)
        alpha, per_byte = self.execution.link_prices(topo)
        self._alpha, self._per_byte = alpha[self.graph.link], per_byte[self.graph.link]
        group = getattr(schedule, "group", None)
        self.n = topo.n if group is None else len(group)       # a group's shards are M / |group| bytes
        self.local_reduce_gbs: float | None = None     # ``with_local_reductions``

    def _local_extra(self) -> np.ndarray | float:
        """Microseconds per shard-byte unit each message adds for its local reductions (``solvers.runtime``'s
        docstring)."""
        g = self.graph
        if self.local_reduce_gbs is None or g.reduced is None or not g.size:
            return 0.0
        return g.reduced / np.maximum(g.load, 1e-300) / (self.local_reduce_gbs * 1e3)

    def with_local_reductions(self, gbs: float = LOCAL_REDUCE_GBS) -> "Model":
        """The same schedule run by a kernel without fused receive-reduce steps: every reduced byte costs a
        further 1 / ``gbs`` on its message's link (``solvers.runtime``'s docstring, "Local reductions"); kept by
        ``with_link_prices`` and ``with_execution``."""
        if not gbs > 0:
            raise ValueError("the local reduction rate must be positive")
        out = Model(self.topo, self.schedule, self.execution, self.graph)
        out._alpha, out.local_reduce_gbs = self._alpha, float(gbs)
        out._per_byte = self._per_byte - self._local_extra() + out._local_extra()
        return out

    def with_execution(self, execution: Execution) -> "Model":
        out = Model(self.topo, self.schedule, execution, self.graph)
        return out if self.local_reduce_gbs is None else out.with_local_reductions(self.local_reduce_gbs)

    def with_link_prices(self, alpha_us: np.ndarray, us_per_byte: np.ndarray) -> "Model":
        """The same schedule with every link's alpha and microseconds per byte replaced (arrays indexed by link;
        e.g. ``solvers.export.tuning`` charges a runtime protocol's per-hop latency and throughput)."""
        alpha_us, us_per_byte = np.asarray(alpha_us, dtype=float), np.asarray(us_per_byte, dtype=float)
        if alpha_us.shape != (len(self.topo.links),) or us_per_byte.shape != alpha_us.shape:
            raise ValueError(f"give one alpha and one price per byte for each of the {len(self.topo.links)} links")
        if np.any(alpha_us < 0) or np.any(~(us_per_byte > 0)):
            raise ValueError("alphas must be non-negative and prices per byte positive")
        out = Model(self.topo, self.schedule, self.execution, self.graph)
        out.local_reduce_gbs = self.local_reduce_gbs
        out._alpha, out._per_byte = alpha_us[self.graph.link], us_per_byte[self.graph.link] + out._local_extra()
        return out

    # -- the pipelining depth
    def _candidates(self, total_bytes: float) -> list[int]:
        ex = self.execution
        if ex.slices is not None:
            return [ex.slices]
        cap = ex.max_slices
        if ex.min_slice_bytes > 0:
            cap = min(cap, max(1, int(total_bytes // ex.min_slice_bytes)))
        out, p = [], 1
        while p <= cap:
            out.append(p)
            p *= 2
        return out

    def times(self, sizes: Sequence[float], between: Callable[[], None] | None = None
              ) -> tuple[np.ndarray, np.ndarray]:
        """(best time in us, its P) for every size, trying P = 1, 2, 4, ... while it still helps: per batch of
        sizes (as many as ``MAX_CELLS`` allows at the most history), it stops after two doublings that made no size
        of the batch faster. A size is not run at a P where some link's busy time alone (``_link_busy``) is above
        its best time so far: it cannot be faster there, nor at any larger P. The sizes that several batches run
        at one P are run together where the memory of that P allows and no steady-state shortcut can be taken
        (each size's times are then computed independently, so the same as batch by batch). ``between`` is called
        after each run of the wave model (a caller's chance to do other work)."""
        sizes = np.asarray([float(m) for m in sizes])
        if np.any(~(sizes > 0)) or not np.all(np.isfinite(sizes)):
            raise ValueError("buffer sizes must be positive and finite")
        best = np.full(len(sizes), np.inf)
        best_p = np.ones(len(sizes), dtype=np.int64)
        if self.graph.size == 0:
            return np.zeros(len(sizes)), best_p
        cands = [self._candidates(m) for m in sizes]
        lay = self.layout
        per_size = lay.cells + 6 * self.graph.size + 3 * lay.rows * lay.cols
        chunk = max(1, MAX_CELLS // max(1, per_size))
        alphas, bytes_cost = self._link_busy()
        batches = [np.arange(lo, min(len(sizes), lo + chunk)) for lo in range(0, len(sizes), chunk)]
        depths = [sorted({p for i in idx for p in cands[i]}) for idx in batches]
        worse = [0] * len(batches)
        live = set(range(len(batches)))
        for p in sorted({p for ps in depths for p in ps}):
            takes = {}
            for b in sorted(live):
                if p not in depths[b]:
                    continue
                idx = batches[b]
                take = idx[[p in cands[i] for i in idx]]
                # no link can be busy for longer than the whole run: sizes whose bound is already above their best
                # time cannot get faster with p slices, nor with more (the bound grows with p)
                busy = (p * alphas[:, None] + bytes_cost[:, None] * (sizes[take] / self.n)[None, :]).max(axis=0)
                take = take[busy * (1 - BOUND_SLACK) < best[take]]
                if len(take):
                    takes[b] = take
                else:
                    live.discard(b)
            got = np.empty(len(sizes))
            for run in self._runs_at(p, list(takes.values())):
                got[run] = self._run(sizes[run], p).total_us
                if between is not None:
                    between()
            for b, take in takes.items():
                better = got[take] < best[take] * (1 - 1e-12)
                best[take[better]] = got[take[better]]
                best_p[take[better]] = p
                worse[b] = 0 if better.any() else worse[b] + 1
                if worse[b] >= 2:
                    live.discard(b)
            if not live:
                break
        return best, best_p

    def _runs_at(self, p: int, takes: list[np.ndarray]) -> list[np.ndarray]:
        """The sizes of several batches to run at depth ``p``, in runs: merged into as few as the memory of ``p``
        slices allows when no steady-state shortcut can happen (``engine.run_waves``: it needs P >= S + H + 1 and
        couples the sizes of a run), else one run per batch."""
        lay = self.layout
        if p >= lay.steps + lay.history + 1 or len(takes) < 2:
            return takes
        per_size = lay.for_slices(p).cells + 6 * self.graph.size + 3 * lay.rows * lay.cols
        room = max(1, MAX_CELLS // max(1, per_size))
        merged = np.concatenate(takes)
        return [merged[lo:lo + room] for lo in range(0, len(merged), room)]

    def _link_busy(self) -> tuple[np.ndarray, np.ndarray]:
        """Per link that carries data, (the sum of its messages' alphas, the sum of their microseconds per shard
        byte): with P slices of shards of s bytes it is busy for P a + b s in all, a lower bound on the time."""
        row, rows = self.layout.row, self.layout.rows
        return (np.bincount(row, weights=self._alpha, minlength=rows),
                np.bincount(row, weights=self.graph.load * self._per_byte, minlength=rows))

    def _run(self, sizes: np.ndarray, slices: int, record: bool = False, shortcut: bool = True) -> WaveRun:
        return run_waves(self.graph, self.layout, self._alpha, self._per_byte, sizes / self.n, slices, record,
                         shortcut)

    def run(self, total_bytes: float, record: bool = False) -> RuntimeResult:
        """The model at one size, with the per-link and per-rank figures; ``record`` keeps every send's times
        (``RuntimeResult.timeline``; meant for small schedules: P x messages rows)."""
        t, p = self.times([total_bytes])
        slices = int(p[0])
        sim = self._run(np.array([float(total_bytes)]), slices, record)
        g = self.graph
        time_us = float(sim.total_us[0])
        dur = self._alpha + g.load * self._per_byte * (float(total_bytes) / self.n / slices)
        busy: dict[int, float] = {}
        for link, d in zip(g.link.tolist(), (dur * slices).tolist()):
            busy[link] = busy.get(link, 0.0) + d
        finish = np.zeros(self.topo.num_nodes)
        np.maximum.at(finish, g.dst, sim.last_finish[:, 0])
        ranks = [float(finish[v]) for v in self.topo.compute_nodes]
        algbw = float(total_bytes) / time_us / 1e3 if time_us > 0 else float("inf")
        timeline = None
        if record:
            timeline = [{"slice": k, "message": i, "step": int(g.step[i]), "link": int(g.link[i]),
                         "src": int(g.src[i]), "dst": int(g.dst[i]), "start_us": float(sim.starts[k, i, 0]),
                         "end_us": float(sim.finishes[k, i, 0])}
                        for k in range(slices) for i in range(g.size)]
        return RuntimeResult(float(total_bytes), time_us, slices, algbw,
                             algbw * busbw_factor(self.schedule.collective, self.n), busy, ranks, g.size,
                             g.size * slices, self.execution, timeline)


def simulate(topo: Topology, schedule: Schedule, total_bytes: float, execution: Execution | None = None,
             record: bool = False) -> RuntimeResult:
    """The runtime model of ``schedule`` (verified) on ``topo`` for a buffer of ``total_bytes``."""
    return Model(topo, schedule, execution).run(total_bytes, record)
