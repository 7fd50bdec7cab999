"""TACOS's synthesizers, switches unwound (TACOS sections IV-VII): the greedy link-chunk matching over the
time-expanded network (``tacos``), the TEN ILP (``tacos_ilp``, section V-A) and the ILP without its congestion
constraint, the paper's TACCL-like baseline (``taccl_like``, section VII-C, footnote 2). All three serve the
rooted collectives as pre/postconditions (section II-A)."""
from __future__ import annotations

from dataclasses import dataclass, field

from ..core.detail import Detail
from ..core.errors import NotApplicable
from ..core.schedule import Collective
from ..core.transform import build_collective
from ..registry import Built, Synthesizer, option, register
from . import DEFAULT_BUFFER, DEFAULT_RESTARTS, chunk_size, flat_root, rooted_chunk_bytes, tacos, tacos_rooted
from .demands import collective_chunks
from .greedy import link_times
from .joint import TenantCall, lower_tenants
from .ten_ilp import ten_ilp, link_step_counts

_EVERY = frozenset({Collective.ALLGATHER, Collective.REDUCE_SCATTER, Collective.ALLREDUCE, Collective.BROADCAST,
                    Collective.REDUCE, Collective.GATHER, Collective.SCATTER})


def parse_unwind(text: str):
    """``auto``, ``max`` or a positive integer degree."""
    value = str(text).strip().lower()
    if value in ("auto", "max"):
        return value
    if value.isdigit() and int(value) >= 1:
        return int(value)
    raise ValueError(f"--unwind takes auto, max or a positive integer, not {text!r}")


@dataclass(frozen=True)
class TacosOptions:
    chunks: int = option(1, "k: chunks per NPU; each NPU's shard is cut into k chunks that travel separately "
                            "(pipelining)", minimum=1, page_maximum=16, label="Chunks per NPU")
    restarts: int = option(DEFAULT_RESTARTS, "seeded greedy runs, the best kept (they stop once one meets the "
                                             "ingress bound)", minimum=1, page_maximum=64, label="Restarts")
    seed: int = option(0, "the first run's seed", minimum=0, page_maximum=1_000_000, label="Seed")
    unwind_degree: int | str = option(
        "auto", "switch unwinding degree: auto (a one-switch domain becomes a full mesh, a multi-switch one a ring, "
                "TACOS section VII-B), max (full mesh) or d (degree-d links at bandwidth/d)",
        choices=("auto", "max", "1", "2", "4"), flag="--unwind", key="unwind", label="Switch unwinding",
        parse=parse_unwind)


@register
class Tacos(Synthesizer):
    name = "tacos"
    summary = "TACOS greedy link-chunk matching over the time-expanded network; switches unwound"
    paper = "Won et al., TACOS, sections IV-VII"
    rank = 70
    reports_progress = True
    collectives = _EVERY
    Options = TacosOptions

    @classmethod
    def uses_bytes(cls, topo):
        return True                                        # chunks are sized from M

    def build(self, topo, collective, options: TacosOptions, work) -> Built:
        unwind = options.unwind_degree
        degree = int(unwind) if str(unwind).isdigit() else unwind
        if collective.rooted:
            found = tacos_rooted(topo, collective, work.root, chunks=options.chunks, buffer_bytes=work.total_bytes,
                                 restarts=options.restarts, seed=options.seed, unwind_degree=degree,
                                 progress=work.progress)
        else:
            found = tacos(topo, collective, chunks=options.chunks, buffer_bytes=work.total_bytes,
                          restarts=options.restarts, seed=options.seed, unwind_degree=degree, progress=work.progress)
        return Built(found.schedule, topology=found.topology, detail=found)


@dataclass
class IlpDetail(Detail):
    """What the TEN ILP found: per phase (an allreduce has two) its status, horizon in steps, and every horizon
    tried as (T, status, seconds, binaries); the step quantum and the chunk; TACCL-like when congestion is off."""

    status: str
    steps: list[int]
    quantum_us: float
    chunk_bytes: float
    congestion: bool
    tried: list[list] = field(default_factory=list)
    seconds: float = 0.0

    def fields(self, result) -> dict:
        return {"ilp": {"status": self.status, "steps": self.steps, "quantum_us": self.quantum_us,
                        "chunk_bytes": self.chunk_bytes, "congestion": self.congestion, "tried": self.tried,
                        "seconds": self.seconds}}

    def text_rows(self, out: dict) -> dict:
        return {"ilp status": self.status, "ilp TEN steps": "+".join(map(str, self.steps)),
                "ilp quantum_us": round(self.quantum_us, 4), "ilp solve_s": round(self.seconds, 3)}

    def hidden_text_keys(self) -> tuple[str, ...]:
        return ("ilp",)

    def compare_note(self) -> str:
        what = "TEN ILP" if self.congestion else "TEN ILP without congestion (TACCL-like)"
        return f"{what}: {self.status}, {'+'.join(map(str, self.steps))} steps of {self.quantum_us:.4g} us"


@dataclass(frozen=True)
class IlpOptions:
    chunks: int = option(1, "k: chunks per NPU (broadcast and reduce: the buffer in k chunks)", minimum=1,
                         maximum=64, page_maximum=8, label="Chunks per NPU")
    time_limit: float = option(30.0, "seconds per horizon tried (the search stops at the first that times out)",
                               minimum=0.1, maximum=3600.0, page_maximum=600.0, label="Time limit per horizon (s)")
    quantum_us: float = option(0.0, "the discretization factor f in microseconds: a link of chunk time t takes "
                                    "ceil(t / f) steps (TACOS section IV-C; 0: the fastest link's chunk time)",
                               minimum=0.0, maximum=1e9, flag="--quantum", label="Time step f (µs, 0 = auto)")
    window: int = option(0, "time clustering (TACOS section V-C): solve windows of this many steps in turn, each "
                            "starting from what the last one delivered (0: off)", minimum=0, maximum=10_000,
                         page_maximum=64, label="Time-clustering window (steps, 0 = off)")
    early_s: float = option(0.0, "early termination (TACOS section V-B): stop the ILP after this many seconds in "
                                 "all and deliver what is missing by TACOS's greedy (0: off)", minimum=0.0,
                            maximum=86400.0, page_maximum=600.0, flag="--early", label="Early termination (s, 0 = off)")
    unwind_degree: int | str = option(
        "auto", "switch unwinding degree: auto, max or d (as for tacos)", choices=("auto", "max", "1", "2", "4"),
        flag="--unwind", key="unwind", label="Switch unwinding", parse=parse_unwind)


class _TenIlp(Synthesizer):
    """The TEN ILP over a collective's chunks (``ten_ilp``); ``congestion`` off is the TACCL-like baseline."""

    collectives = _EVERY
    reports_progress = True
    Options = IlpOptions
    congestion = True

    @classmethod
    def uses_bytes(cls, topo):
        return True

    @classmethod
    def compare_plan(cls, topo, collective, left_s):
        most = 64 if collective.rooted else 16
        if topo.n > most:
            return (f"skipped: Compare runs the TEN ILP on at most {most} NPUs for {collective.value} (schedule "
                    f"--algo {cls.name} runs it on any size)")
        if left_s < 5:
            return "skipped: budget"
        return {"time_limit": max(1.0, min(10.0, left_s / 4))}

    def build(self, topo, collective, options: IlpOptions, work) -> Built:
        from topologies.unwind import unwind

        unwind_degree = options.unwind_degree
        flat = unwind(topo, int(unwind_degree) if str(unwind_degree).isdigit() else unwind_degree)
        if flat.n < 2:
            raise NotApplicable("TACOS-ILP needs at least two compute nodes")
        buffer = DEFAULT_BUFFER if work.total_bytes is None else work.total_bytes
        if collective.rooted:
            size = rooted_chunk_bytes(collective, buffer, flat.n, options.chunks)
        else:
            size = chunk_size(buffer, flat.n, options.chunks)
        steps, quantum = link_step_counts(link_times(flat, size), options.quantum_us or None)
        found = IlpDetail("optimal", [], quantum, size, self.congestion)
        if options.window and options.early_s:
            raise NotApplicable("choose time clustering (--window) or early termination (--early), not both")

        def solve(g, coll, root):
            if options.window or options.early_s:
                return _windowed(g, coll, root, options, steps, quantum, size, found, self.name, work)
            specs = collective_chunks(g, coll, root, options.chunks)
            report = None if work.progress is None else (
                lambda horizon, status: work.progress(f"{self.name}: horizon {horizon} {status}", 0.0))
            try:
                out = ten_ilp(g, specs, steps, options.time_limit, congestion=self.congestion, progress=report)
            except NotApplicable as exc:
                if self.congestion or "would need" not in str(exc):
                    raise
                return _shortest_path_trees(g, coll, root, options.chunks, found)
            found.tried.extend([list(t) for t in out.tried])
            found.seconds += out.seconds
            if out.steps is None:
                raise NotApplicable(f"{self.name}: no schedule found ({out.status} after "
                                    f"{out.seconds:.1f} s; raise --time-limit or use tacos)")
            if out.status != "optimal":
                found.status = out.status
            found.steps.append(out.steps)
            [schedule] = lower_tenants(g, specs, out.sends, [TenantCall(coll, root)], self.name,
                                       {"ten_steps": out.steps})
            return schedule

        if collective.rooted:
            schedule = solve(flat, collective, flat_root(topo, flat, work.root))
        else:
            schedule = build_collective(flat, collective, lambda g: solve(g, Collective.ALLGATHER, None))
        return Built(schedule, topology=flat, detail=found)


_TRAVELS = {Collective.REDUCE: Collective.BROADCAST, Collective.SCATTER: Collective.GATHER}


def _windowed(g, coll: Collective, root, options: IlpOptions, steps, quantum, size, found: IlpDetail, name, work):
    """TACOS-ILP with time clustering or early termination (``windows``): a reduction or a scatter as its
    broadcast or gather on G^T, run backwards."""
    from ..core.transform import reverse
    from .windows import clustered, early_terminated

    travel = _TRAVELS.get(coll, coll)
    h = g.transpose() if travel is not coll else g
    specs = collective_chunks(h, travel, root, options.chunks)
    report = None if work.progress is None else (lambda k, status: work.progress(f"{name}: {status} {k}", 0.0))
    if options.window:
        sends, end, note = clustered(h, specs, steps, options.window, options.time_limit, report)
    else:
        sends, end, note = early_terminated(h, specs, steps, options.early_s, quantum, size, report)
    found.status = note
    found.steps.append(end)
    [schedule] = lower_tenants(h, specs, [(a, b, c, e, False) for a, b, c, e in sends], [TenantCall(travel, root)],
                               name, {"ten_steps": end})
    return reverse(schedule) if travel is not coll else schedule


def _shortest_path_trees(g, coll: Collective, root, chunks: int, found: IlpDetail):
    """TACCL-like where its ILP is too large to build: without the congestion constraint every chunk meets its
    distance on any shortest path, so the ILP's optimum is a shortest-path tree per source, congestion-blind
    (``solvers.baselines.routed.tree_allgather``; the root's tree, or each shard's path to or from the root)."""
    from ..baselines import rooted
    from ..baselines.routed import tree_allgather
    from ..core.transform import reverse

    if coll is Collective.ALLGATHER:
        schedule = tree_allgather(g, chunks)
    elif coll in (Collective.BROADCAST, Collective.REDUCE):
        schedule = rooted.sptree(g, coll, root)
    elif coll is Collective.GATHER:
        schedule = rooted.direct(g, coll, root)
    else:
        schedule = reverse(rooted.direct(g.transpose(), Collective.GATHER, root))
    schedule.algo = "taccl_like"
    found.status = "shortest-path trees (the ILP without congestion, too large to build: its optimum's form)"
    found.steps.append(schedule.steps)
    return schedule


@register
class TacosIlp(_TenIlp):
    name = "tacos_ilp"
    summary = "TACOS-ILP: the time-expanded network as an integer program, the least horizon searched upward"
    paper = "Won et al., TACOS, section V-A"
    rank = 95


@register
class TacclLike(_TenIlp):
    name = "taccl_like"
    summary = "TACCL-like: TACOS's ILP without the congestion constraint (chunks routed on paths, links shared)"
    paper = "Won et al., TACOS, section VII-C (footnote 2)"
    rank = 96
    congestion = False
