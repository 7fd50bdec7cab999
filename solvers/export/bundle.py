"""Export bundles: every file a runtime needs to run one schedule well at every buffer size.

A bundle holds, for each size range of ``tuning.plan`` (protocol and number of copies chosen with the runtime
model), one MSCCL file per call placement (in place and out of place; an all-to-all is out of place only), with
``minBytes``/``maxBytes`` that do not overlap and cover 0 .. no limit, in the directory layout the executors load
(``msccl-algorithms/``, named by ``MSCCL_ALGO_DIR``), and a README naming the files, the sizes each serves, the
limits it uses and how to enable it in each runtime. Every file is validated against the target's rules and
limits and simulated symbolically (``export``); files that differ only in their ``<algo>`` tag (protocol, range,
name) share one program, which is validated and simulated once (the tag does not change what it does); each
file's tag is read back, compared, and validated on its own.

Which calls run a file (ROCm/rccl src/misc/msccl/msccl_lifecycle.cc at 0088a12 and Azure/msccl-executor-nccl
src/misc/msccl/msccl_lifecycle.cc at 01ddfdb, ``mscclInternalSchedulerSelectAlgo``): same number of ranks and
collective, minBytes <= bytes <= maxBytes (maxBytes 0: no upper limit; bytes counts the whole buffer for
allgather and reduce-scatter), the element count a multiple of nchunksperloop, and the call's placement; any
other call silently runs the runtime's own algorithms. The msccl-tools dialect has no size range: its bundle holds
the choice for the largest sizes only.
"""
from __future__ import annotations

import io
import multiprocessing
import os
import threading
import zipfile
from dataclasses import dataclass, field, replace
from multiprocessing.connection import wait
from typing import Callable

import numpy as np

from topologies.model import Topology

from ..core.errors import NotApplicable
from ..core.gc_pause import gc_paused
from ..core.processes import start as start_process
from ..core.schedule import Collective, Schedule
from ..runtime import Execution, Model
from . import _merged_guess, export
from .check import Report, validate_header
from .lower import _refuse_custom, refuse_rooted
from .msccl_xml import algo_tag, parse_xml
from .program import DEFAULT_SM_BUDGET, OverLimit, Target, XmlError, target
from .runtime_choice import default_runtime
from .bundle_readme import ALGO_DIR, readme
from .tuning import COPIES, PROTOCOL_COSTS, Choice, Plan, plan, saturating_copies

LEGACY_MAX_BYTES = 1 << 40        # the msccl-tools dialect has no maxBytes; the IR keeps 1 TiB there


@dataclass
class BundleFile:
    """One file of a bundle: its ``path`` inside the zip, text, check report, the range it serves and how."""

    path: str
    text: str
    report: Report
    choice: Choice
    in_place: bool
    nchunksperloop: int


@dataclass
class Bundle:
    """A checked set of files for one schedule and runtime (module docstring); ``zip_bytes`` packs them."""

    runtime: str
    collective: Collective
    root: str
    plan: Plan
    files: list[BundleFile] = field(default_factory=list)
    notes: list[str] = field(default_factory=list)

    def rows(self) -> list[dict]:
        """One row per file: what the pages and the CLI show."""
        out = []
        for f in self.files:
            c = f.choice
            out.append({"file": f.path.rsplit("/", 1)[-1], "call": "in place" if f.in_place else "out of place",
                        "protocol": c.proto, "copies": c.copies, "min_bytes": c.min_bytes,
                        "max_bytes": c.max_bytes if c.max_bytes is not None else "no limit",
                        "count_multiple_of": f.nchunksperloop, "threadblocks_per_rank": f.report.tbs_per_rank,
                        "steps_per_threadblock": f.report.steps_per_tb, "step_types": " ".join(f.report.step_types),
                        "modelled_us_low": round(c.times_us[0], 3), "modelled_us_high": round(c.times_us[-1], 3),
                        "at_bytes": f"{c.sizes[0]}..{c.sizes[-1]}", "kb": round(len(f.text) / 1024, 1)})
        return out

    @property
    def readme(self) -> str:
        return readme(self)

    def zip_bytes(self) -> bytes:
        buf = io.BytesIO()
        with zipfile.ZipFile(buf, "w", zipfile.ZIP_DEFLATED) as z:
            z.writestr(f"{self.root}/README.md", self.readme)
            for f in self.files:
                z.writestr(f"{self.root}/{f.path}", f.text)
        return buf.getvalue()


class _Replan(Exception):
    """A program the plan may pick turned out not to fit: plan again without its number of copies."""


PARALLEL_MIN_TRANSFERS = 10_000   # schedules at least this long: the programs are built in worker processes


@gc_paused()
def export_bundle(topo: Topology, schedule: Schedule, runtime: str | Target | None = None, *, coarsen: bool = True,
                  workload=None, **kwargs) -> Bundle:
    """``exact_bundle``, or where even its one-copy program is over a limit of the runtime (``OverLimit``) and
    ``coarsen`` is on, the bundle of the first coarsening whose one-copy program fits (``coarsen.py``, as
    ``export`` finds it, priced for ``workload``), the coarsening's line among the bundle's notes."""
    try:
        return exact_bundle(topo, schedule, runtime, **kwargs)
    except OverLimit as over:
        if not coarsen:
            raise
        from . import exact_export
        from .coarsen import coarsest_fitting

        chosen = runtime if runtime is not None else default_runtime(topo)[0]
        sm_budget = kwargs.get("sm_budget", DEFAULT_SM_BUDGET)
        coarse, _, report = coarsest_fitting(
            topo, schedule, over, lambda s: exact_export(topo, s, None, sm_budget, chosen, merge_view=True,
                                                         in_place=False, name=kwargs.get("name")),
            target(chosen).name, workload)
        bundle = exact_bundle(topo, coarse, runtime, merge_view=True, **kwargs)
        bundle.notes.append(report.coarsened.note())
        return bundle


@gc_paused()
def exact_bundle(topo: Topology, schedule: Schedule, runtime: str | Target | None = None, *,
                 execution: Execution | None = None, copies=COPIES, protocols=tuple(PROTOCOL_COSTS),
                 sm_budget: int = DEFAULT_SM_BUDGET, name: str | None = None,
                 progress: Callable[[str], None] | None = None, jobs: int | None = None,
                 merge_view: bool = False) -> Bundle:
    """The bundle of a verified ``schedule`` for ``runtime`` (default: the fabric's vendor's,
    ``runtime_choice.default_runtime``, named in the first note). A number of copies the target
    cannot hold (threadblocks, channels, steps) is dropped, with every larger one, and the ranges planned again
    without them; XmlError or NotApplicable (one line) when not even one copy fits. The count the plan is likely
    to pick (the fewest copies that saturate the links for some protocol, ``tuning.saturating_copies``) is always
    built, picked or not, so that the counts planned over do not depend on when its program is known to fit.

    The programs (one per number of copies and placement) are built in ``jobs`` worker processes (default: one
    per CPU for a schedule of ``PARALLEL_MIN_TRANSFERS`` transfers or more, else none): the one-copy programs
    start at once, one copy is timed in every protocol meanwhile, and the one-copy program tells which copy counts
    can fit and are worth timing too."""
    _refuse_custom(schedule)
    refuse_rooted(schedule, "bundle")
    notes = []
    if runtime is None:
        runtime, why = default_runtime(topo)
        notes.append(f"runtime: {why}")
    limits = target(runtime)
    coll = schedule.collective
    say = progress or (lambda _msg: None)
    places = (False,) if coll is Collective.ALLTOALL else (True, False)
    allowed = sorted({1} if coll is Collective.ALLTOALL else set(copies))
    label = name or f"{schedule.algo or 'schedule'} {coll.value}"
    stem = "".join(ch if ch.isalnum() else "_" for ch in f"{schedule.algo or 'schedule'}_{coll.value}_{topo.n}")
    if jobs is None:
        jobs = (os.cpu_count() or 1) if schedule.count >= PARALLEL_MIN_TRANSFERS else 1
    timed: dict = {}                # the plan's candidate times, kept when it plans again
    with _Builder(topo, schedule, jobs, sm_budget, limits, label, say, merge_view) as build:
        for in_place in places:
            build.start((1, in_place))
        model = Model(topo, schedule, execution)           # meanwhile the workers build the one-copy programs
        if not limits.full_ops:        # its files reduce through scratch: a local pass per reduced byte
            model = model.with_local_reductions()

        def fitting() -> list[int]:
            """The copy counts that can fit, from the one-copy program (raises when it does not fit); the
            workers then start on the copies the plan is likely to pick."""
            _, report = build.result((1, places[0]))
            build.first = report                               # where the further programs start their search
            room = min(limits.max_tbs, sm_budget)
            least = (report.tbs_per_rank + 1) // 2     # c copies take about c times one copy's, halved by merging
            too_many = [c for c in allowed if c * least > room]
            if too_many:
                notes.append(f"{', '.join(map(str, too_many))} copies would need at least {too_many[0] * least} "
                             f"threadblocks per rank, above the {room} of {limits.name}")
            fit = [c for c in allowed if c not in too_many]
            width = build.pair_channels
            too_wide = [c for c in fit if c * width > limits.max_channels]   # each copy needs channels of its own
            if too_wide:
                notes.append(f"{', '.join(map(str, too_wide))} copies would need at least {too_wide[0] * width} "
                             f"channels, above the {limits.max_channels} of {limits.name}")
                fit = [c for c in fit if c not in too_wide]
            likely = saturating_copies(model, protocols, fit)
            tried.append(likely)
            if build.context is not None and likely > 1:
                # the workers would wait for the plan: meanwhile they start on the copies it is likely to pick
                for in_place in sorted(places):
                    build.start((likely, in_place))
            return fit

        known: list[list[int]] = []
        tried: list[int] = []           # the likely copy count (``fitting``)

        def between() -> None:          # between the plan's candidates: take in programs, grow once one copy fits
            build.poll()
            if not known and build.succeeded((1, places[0])) and (1, False) not in build.started():
                known.append(fitting())

        say(f"timing one copy in {len(protocols)} protocols")     # meanwhile; more copies once it is known they fit
        plan(topo, schedule, protocols=protocols, copies=[1], model=model, timed=timed, between=between,
             time_many=build.time_many)
        allowed = known[0] if known else fitting()          # XmlError or NotApplicable when one copy does not fit

        def watch() -> None:           # between the plan's runs: stop planning with copies known not to fit
            build.poll()
            if build.failures(allowed):
                raise _Replan

        def known_failures() -> dict:
            """The counts whose program was found not to fit while the plan ran, with the error ``_fails`` gives
            (out of place first, as without workers)."""
            failed = build.failures(allowed)
            return _fails(build, [(c, in_place) for c in sorted(failed) for in_place in sorted(places)])

        likely = tried[-1] if tried and tried[-1] > 1 else None
        while True:
            failures = known_failures()
            if not failures:
                say(f"planning ranges over {len(allowed)} copy counts x {len(protocols)} protocols")
                try:
                    p = plan(topo, schedule, protocols=protocols, copies=allowed, model=model, timed=timed,
                             between=watch, time_many=build.time_many)
                except _Replan:
                    failures = known_failures()
            if not failures and likely in allowed:
                # the likely count is tried whether or not the plan picks it, and before the counts it picks:
                # whether it fits decides the counts planned over, the same with workers (which started on it
                # early) or without
                failures = _fails(build, [(likely, in_place) for in_place in sorted(places)])
            if not failures:
                choices = p.choices if limits.dialect == "executor" else \
                    [replace(p.choices[-1], min_bytes=0, max_bytes=None)]      # one file serves every size
                # out of place first: it has the local copies on top, so it is the one that meets a limit first
                todo = [(c, in_place) for c in sorted({ch.copies for ch in choices}, reverse=True)
                        for in_place in sorted(places)]
                for job in build.started():
                    if job[0] > 1 and job not in todo:
                        build.drop(job)
                failures = _fails(build, todo)
                if not failures:
                    break
            for c in sorted(failures):
                notes.append(f"{c} copies do not fit {limits.name}: {str(failures[c]).splitlines()[0]}")
                for in_place in places:
                    build.drop((c, in_place))
            allowed = [c for c in allowed if c < min(failures)]     # more copies than one that does not fit: out
        bundle = Bundle(limits.name, coll, stem, p, notes=notes)
        for ch in choices:
            for in_place in places:
                text, report = build.result((ch.copies, in_place))
                bundle.files.append(_retitled(text, report, ch, in_place, limits, label, stem))
    return bundle


def _fails(build, todo: list) -> dict:
    """Build the programs ``todo`` in order: {copies: the error} for the copy counts that do not fit (one copy not
    fitting raises); a count's other placement is not built once one fails."""
    for job in todo:
        build.start(job)
    failures: dict = {}
    for job in todo:
        if job[0] in failures:             # this number of copies is out whatever the other placement does
            continue
        try:
            build.result(job)
        except (XmlError, NotApplicable) as exc:
            if job[0] == 1:
                raise
            failures[job[0]] = exc
            build.drop((job[0], not job[1]))      # the other placement is of no use without this one
    return failures


class _Builder:
    """The programs of one bundle, by (copies, in place): ``start`` asks for one, ``result`` gives (text, report
    cut to its header) or raises the XmlError/NotApplicable of ``export``, and ``drop`` says it is no longer
    needed (a worker building it is stopped). With ``jobs`` > 1 they are built in up to that many worker
    processes, one process per program (so one can be stopped), in the order asked for; else (or when the workers
    cannot start or die) each is built here when first asked for. ``pair_channels`` is that of the one-copy
    program (``_pair_channels``). Once ``first`` holds the one-copy program's report, programs started from then
    on begin ``export``'s search where it ended: its instructions per threadblock, merged if it was or if c times
    its threadblocks are over the limit (c copies of it have c times its threadblocks with as many steps in each,
    so the search would get there next), and then at ``export``'s first merged guess from its steps
    (``guessed_from``)."""

    def __init__(self, topo, schedule, jobs, sm_budget, limits, label, say, merge_view=False):
        self.args = (topo, schedule, sm_budget, limits.name, label)
        self.merge_view = merge_view
        self.say = say
        self.jobs = jobs
        self.context = None
        if jobs > 1 and not multiprocessing.current_process().daemon:     # a pool's worker may not have its own
            # a plain fork copies this process as it is, which is only safe with no other thread running (a web
            # server's threads may hold locks); otherwise workers come from a fork server
            self.context = multiprocessing.get_context("fork" if threading.active_count() == 1 else "forkserver")
        self.waiting: dict[tuple, tuple] = {}           # job -> its search hint, in the order asked for
        self.running: dict[tuple, tuple] = {}           # job -> (process, its end of the pipe, hint)
        self.done: dict[tuple, object] = {}
        self.pair_channels = 1
        self.tb_limit = min(limits.max_tbs, sm_budget)
        self.max_steps = limits.max_steps
        self.first = None           # the one-copy program's report: where further programs start their search

    def __enter__(self):
        return self

    def __exit__(self, *exc):
        for job in list(self.running):
            self.drop(job)

    def _hint(self, job: tuple[int, bool]):
        first = self.first
        if first is None:
            return None
        ops, guessed_from = first.ops_per_tb, None      # c copies: c times the threadblocks, as many steps in each
        merged = first.merged or job[0] * first.tbs_per_rank > self.tb_limit
        if merged and not first.merged:                 # export's first merged try (its docstring)
            guessed_from, ops = ops, _merged_guess(ops, first.steps_per_tb, self.max_steps)
        return ops, merged, guessed_from

    def start(self, job: tuple[int, bool]) -> None:
        if job not in self.done and job not in self.running and job not in self.waiting:
            self.waiting[job] = self._hint(job)
            self._fill()

    def _fill(self) -> None:
        """Start waiting programs in workers while fewer than ``jobs`` run."""
        while self.context is not None and self.waiting and len(self.running) < self.jobs:
            job, hint = next(iter(self.waiting.items()))
            receive, send = self.context.Pipe(duplex=False)
            try:
                process = self.context.Process(target=_worker, args=(send, *self.args, job, hint, self.merge_view),
                                               daemon=True)
                start_process(process)
            except Exception:          # no process, or arguments a fork server cannot be sent: build here
                receive.close()
                send.close()
                self._give_up_workers()
                return
            send.close()
            del self.waiting[job]
            self.running[job] = (process, receive, hint)
            self.say(f"building {_what(job)} in a worker process")

    def poll(self, timeout: float | None = 0) -> None:
        """Take in the programs that workers have finished (waiting up to ``timeout`` seconds, None: until one
        has) and start waiting ones in the freed workers. A worker holds its finished program until it is taken
        in, so the caller polls while it does other work."""
        if self.context is None or not self.running:
            return
        ready = wait([conn for _, conn, _ in self.running.values()], timeout)
        for job in [j for j, (_, conn, _) in self.running.items() if conn in ready]:
            if job in self.running:       # not given back by a worker that died just before
                self._collect(job)
        self._fill()

    def result(self, job: tuple[int, bool]):
        self.start(job)
        while job not in self.done:
            if self.context is not None and self.running:
                self.poll(None)
            else:
                hint = self.waiting.pop(job)
                self.say(f"lowering, validating and simulating {_what(job)}")
                self._record(job, _export_job(*self.args, job, hint, self.merge_view))
        got = self.done[job]
        if isinstance(got, Exception):
            raise got
        return got

    def started(self) -> list[tuple[int, bool]]:
        """The programs asked for and not built yet."""
        return [*self.waiting, *self.running]

    def succeeded(self, job: tuple[int, bool]) -> bool:
        """Whether ``job`` is built and fits."""
        return job in self.done and not isinstance(self.done[job], Exception)

    def time_many(self, models: dict, sizes: tuple, between, timed: dict) -> None:
        """``tuning.plan``'s candidates timed at once: while CPUs are free of programs being built (one is this
        process's), candidates each in a process of their own (the runtime model is the same computation there),
        the others here, calling ``between`` as it goes and while it waits; a CPU freed while a candidate is timed
        here (a program done, or found not to fit) takes the next candidate at once. Each result goes into
        ``timed`` as it comes. Without workers, when one dies, or once a process fails to start, the rest are
        timed here."""
        keys = list(models)
        running: dict = {}                  # key -> (process, its end of the pipe)
        can_start = [True]                  # a process that failed to start: the rest are timed here

        def launch(keep: int) -> None:
            """Candidates into processes while CPUs are free (this process takes one), ``keep`` left here."""
            # (taking in programs may find the workers dead, and leave no context)
            while (can_start[0] and len(keys) > keep and len(running) < self._idle() - 1
                   and self.context is not None):
                key = keys.pop()
                receive, send = self.context.Pipe(duplex=False)
                try:
                    process = self.context.Process(target=_time_candidate, args=(send, models[key], sizes),
                                                   daemon=True)
                    start_process(process)
                except Exception:      # no process: time it here, and the ones after it too
                    receive.close()
                    keys.append(key)
                    can_start[0] = False
                    return
                finally:
                    send.close()
                running[key] = (process, receive)

        def tick() -> None:            # during a candidate timed here: a program done frees a CPU for the others
            if between is not None:
                between()
            launch(0)

        try:
            while keys or running:
                launch(1)
                if keys:
                    key = keys.pop(0)
                    timed[key] = models[key].times(sizes, tick)[0]
                    continue
                ready = wait([conn for _, conn in running.values()], 0.2)
                for key in [k for k, (_, conn) in running.items() if conn in ready]:
                    process, conn = running.pop(key)
                    try:
                        timed[key] = conn.recv()
                    except (EOFError, OSError):         # it died without an answer: time it here
                        keys.append(key)
                    conn.close()
                    process.join()
                if between is not None:
                    between()
        finally:
            for process, conn in running.values():
                _stop(process, conn)

    def _idle(self) -> int:
        """Of ``jobs`` CPUs, those no program is being built on."""
        self.poll()
        return self.jobs - len(self.running)

    def failures(self, copies) -> set:
        """The counts among ``copies`` (above one) with a program built that does not fit."""
        return {job[0] for job, got in self.done.items()
                if job[0] > 1 and job[0] in copies and isinstance(got, Exception)}

    def drop(self, job: tuple[int, bool]) -> None:
        """``job`` is not needed any more: not started, or its worker stopped."""
        self.waiting.pop(job, None)
        if job in self.running:
            _stop(*self.running.pop(job)[:2])
            self._fill()

    def _collect(self, job: tuple[int, bool]) -> None:
        process, conn, hint = self.running.pop(job)
        try:
            got = conn.recv()
        except (EOFError, OSError):            # the worker died without an answer
            got = None
        conn.close()
        process.join()
        if got is None:
            self.waiting = {job: hint, **self.waiting}
            self._give_up_workers()
        else:
            self._record(job, got)

    def _record(self, job: tuple[int, bool], got) -> None:
        if job[0] == 1 and not isinstance(got, Exception):
            self.pair_channels = max(self.pair_channels, got[2])
        self.done[job] = got if isinstance(got, Exception) else got[:2]

    def _give_up_workers(self) -> None:
        self.say("worker processes failed; building the programs here")
        self.context = None
        for job, (process, conn, hint) in self.running.items():
            _stop(process, conn)
            self.waiting[job] = hint
        self.running.clear()


def _stop(process, conn) -> None:
    """End a worker whatever it is doing, and close our end of its pipe."""
    process.terminate()
    process.join()
    conn.close()


def _worker(connection, *args) -> None:
    """A worker process: one program (``_export_job``) sent back whole; nothing sent if it fails unexpectedly
    (the parent then builds it itself and meets the error there)."""
    try:
        connection.send(_export_job(*args))
    finally:
        connection.close()


def _time_candidate(connection, model, sizes) -> None:
    """A worker process timing one candidate of the plan (``_Builder.time_many``)."""
    try:
        connection.send(model.times(sizes)[0])
    finally:
        connection.close()


def _what(job: tuple[int, bool]) -> str:
    c, in_place = job
    return f"{c} cop{'y' if c == 1 else 'ies'}, {'in place' if in_place else 'out of place'}"


def _export_job(topo: Topology, schedule: Schedule, sm_budget: int, runtime: str, label: str,
                job: tuple[int, bool], hint: tuple[int, bool, int | None] | None = None, merge_view: bool = False):
    """One program of a bundle (``export``, its search started at ``hint``: instructions per threadblock, whether
    merged, and ``guessed_from``) as (text, report cut to its header, ``_pair_channels``), which is what a worker
    sends back; the one-line error instead when it does not fit."""
    c, in_place = job
    start_ops, start_merged, guessed_from = hint or (None, False, None)
    try:
        text, report = export(topo, schedule, None, sm_budget, runtime, start_ops, start_merged, guessed_from,
                              coarsen=False, copies=c, in_place=in_place, name=label, merge_view=merge_view)
    except (XmlError, NotApplicable) as exc:
        return exc
    return text, _header_only(report), _pair_channels(report)


def _header_only(report: Report) -> Report:
    """``report`` keeping of the program it read only the ``<algo>`` attributes (a 256-rank program has about a
    million steps; the bundle's files need its tag, and the counts the report already holds)."""
    return replace(report, program=replace(report.program, gpus=[]), flat=None)


def _pair_channels(report: Report) -> int:
    """The most channels one GPU pair uses in the checked program (one per threadblock pair on its connection):
    c copies need c times as many distinct channels for that pair."""
    flat = report.flat
    if flat is not None:
        sends = flat.tb_send >= 0
        pairs = np.unique(np.stack([flat.tb_gpu[sends], flat.tb_send[sends], flat.tb_chan[sends]]), axis=1)
        return int(np.unique(pairs[:2], axis=1, return_counts=True)[1].max(initial=1))
    program = report.program
    if program is None:
        return 1
    used: dict[tuple, set] = {}
    for g in program.gpus:
        for t in g.tbs:
            if t.send >= 0:
                used.setdefault((g.id, t.send), set()).add(t.chan)
    return max((len(c) for c in used.values()), default=1)


def _retitled(text: str, report: Report, ch: Choice, in_place: bool, limits: Target, label: str,
              stem: str) -> BundleFile:
    """The checked program ``text`` with the ``<algo>`` tag of range ``ch``. The body stays byte for byte the one
    that was validated and simulated; the new tag is read back, must say what was asked and keep every attribute
    the body's rules and simulation read (ranks, chunks per loop, collective, placement), and passes the target's
    rules for a tag (``validate_header``): so the whole file passes ``validate`` without reading the body again,
    which for a 256-rank program is a million steps."""
    dialect = report.dialect
    program = report.program
    unbounded = 0 if limits.dialect == "executor" else LEGACY_MAX_BYTES
    whole = replace(program, proto=ch.proto, name=f"{label} {ch.proto} x{ch.copies}"[:63], gpus=[],
                    min_bytes=ch.min_bytes if limits.dialect == "executor" else 0,
                    max_bytes=unbounded if ch.max_bytes is None else ch.max_bytes)
    tag = algo_tag(whole, dialect)
    back, _ = parse_xml(tag + "\n</algo>\n", dialect)
    kept = ("nchannels", "nchunksperloop", "ngpus", "coll", "inplace", "outofplace")
    said = ((back.proto, back.inplace) == (ch.proto, int(in_place))
            and all(getattr(back, k) == getattr(program, k) for k in kept))
    if limits.dialect == "executor":
        said = said and (back.outofplace, back.min_bytes, back.max_bytes) == (int(not in_place), whole.min_bytes,
                                                                              whole.max_bytes)
    if not said:
        raise XmlError(f"the retitled file for {ch.label} does not read back as written")
    problems = validate_header(back, dialect)
    if problems:
        raise XmlError(f"the file for {ch.label} fails its check for {limits.name}: {problems[0]}")
    new = tag + text[text.index("\n"):]
    hi = "inf" if ch.max_bytes is None else str(ch.max_bytes)
    place = "inplace" if in_place else "outofplace"
    path = f"{ALGO_DIR}/{stem}.{ch.proto}.x{ch.copies}.{place}.{ch.min_bytes}-{hi}.xml"
    return BundleFile(path, new, report, ch, in_place, whole.nchunksperloop)
