"""Coarsening a schedule whose MSCCL program is over a runtime reader's limits (issue 60), before refusing it.

A reader holds a program to fixed limits (``program.TARGETS`` and ``MAX_NODES_PER_RANK``: 4,096 XML nodes per
rank, 32 channels, 64 steps per threadblock on RCCL, ...). A schedule whose exact shares have a large common
denominator (BFB's LP shares: 7,560 chunks per shard on a random 3-regular 40-rank digraph) or that moves many
small pieces (NCCL's 16 rings on ``mi250(clusters=2)``) lowers to more instructions than that. Rather than
refuse, ``export`` tries coarser schedules of the same algorithm, finest first, and writes the first that fits:

1. merged (``merged``, lossless): the pieces of one shard that cross one link in one step and touch are one
   transfer. The runtime model sends everything a link carries in one step as one message, so its time is the
   same; the program has fewer instructions.
2. quantized to a grid of G chunks per shard (``quantized``): every bound x of every transfer becomes
   floor(x G + 1/2) / G, transfers left empty are dropped, and the result is merged. Rounding is non-decreasing
   and keeps 0 and 1, so it maps a shard's pieces onto the grid's preserving order, unions and disjointness:
   what a node held it still holds (or the piece vanished everywhere at once), reductions still count each
   contribution once, and the postcondition (every piece of [0, 1)) still holds. An all-to-all keeps its
   pieces' bounds j/N when G is a multiple of N, so only such grids are tried for it. Each grid's schedule is
   verified again by the simulator (``core.verify``) before it is lowered, and priced by the runtime model with
   the same workload as the unrefined schedule; the loss is the ratio of the two times.

Grids go down from the one the first overshoot suggests (node and channel counts scale with the chunks per
shard once transfers are wider than 71 chunks; the first aims at half the limit, since lowering thousands of
chunks per shard takes seconds) in proportion to each further overshoot, preferring a divisor of
the last grid, halving where the count does not scale so (threadblocks per rank: one pair per link used), down to
one chunk per shard. A grid that fits with a loss is refined: up to ``REFINE`` grids halfway to the last one that
did not fit, the finest that fits kept. Nothing fitting at one chunk per shard, the export is refused
naming the limit and the smallest count any try reached (``OverLimit``).

The direct-connect paper's App. E.2 rounds BFB's LP shares to whole chunks per receiver (the ``bfb``
synthesizer's ``--chunks``, Theorem 20 bounding the loss); the rounding here is another one, of any verified
schedule after the fact, and its loss is measured by the runtime model instead of bounded.
"""
from __future__ import annotations

from dataclasses import dataclass
from fractions import Fraction
from math import gcd

import numpy as np

from topologies.model import Topology

from ..core.schedule import Collective, Columns, Schedule, Transfer, columns
from ..core.verify import verify
from .program import MAX_NODES_PER_RANK, OverLimit, XmlError

MAX_GRID = 1 << 20             # the finest grid tried (chunks per shard); bounds times it stay within int64
PROPORTIONAL = ("XML nodes per rank", "chunks per loop", "channels", "chunk offset")   # scale with the chunks
MARGIN = 0.9                   # a grid aims this far below the limit the last try overshot
FIRST_MARGIN = 0.5             # the first grid aims lower: a lowering of thousands of chunks per shard takes seconds
REFINE = 2                     # tries between a grid that fits with a loss and the finer one that did not


def merged(schedule: Schedule) -> Schedule:
    """``schedule`` with the transfers of one shard over one link in one step (both reducing or both copying)
    that touch end to start joined into one; the same schedule when none do."""
    cols = columns(schedule)
    if cols is None:
        return _merged_transfers(schedule)
    if not len(cols.step):
        return schedule
    order = np.lexsort((cols.lo, cols.reduce, cols.shard, cols.link, cols.step))
    step, link, shard, lo, hi, red = (a[order] for a in (cols.step, cols.link, cols.shard, cols.lo, cols.hi,
                                                         cols.reduce))
    same = np.zeros(len(step), dtype=bool)
    same[1:] = ((step[1:] == step[:-1]) & (link[1:] == link[:-1]) & (shard[1:] == shard[:-1])
                & (red[1:] == red[:-1]) & (lo[1:] == hi[:-1]))
    if not same.any():
        return schedule
    first = np.flatnonzero(~same)
    last = np.append(first[1:], len(step)) - 1
    return _rebuilt(schedule, step[first], link[first], shard[first], lo[first], hi[last], red[first], cols.one)


def quantized(schedule: Schedule, grid: int) -> Schedule:
    """``schedule`` with every bound x rounded to floor(x grid + 1/2) / grid (module docstring), the transfers
    left empty dropped and the rest ``merged``: at most ``grid`` chunks per shard."""
    if grid < 1:
        raise ValueError(f"a grid has at least one chunk per shard, not {grid}")
    cols = columns(schedule)
    if cols is None or cols.one * grid >= 1 << 61:
        half = Fraction(1, 2)
        rounded = [Transfer(t.shard, Fraction(int(t.lo * grid + half), grid), Fraction(int(t.hi * grid + half), grid),
                            t.link, t.step, t.reduce) for t in schedule.transfers]
        return merged(_like(schedule, [t for t in rounded if t.hi > t.lo]))
    lo = (2 * cols.lo * grid + cols.one) // (2 * cols.one)
    hi = (2 * cols.hi * grid + cols.one) // (2 * cols.one)
    keep = hi > lo
    common = gcd(grid, *np.unique(np.concatenate([lo[keep], hi[keep]])).tolist())
    return merged(_rebuilt(schedule, cols.step[keep], cols.link[keep], cols.shard[keep], lo[keep] // common,
                           hi[keep] // common, cols.reduce[keep], grid // common))


def chunks_per_shard(schedule: Schedule) -> int | None:
    """The common denominator of the schedule's bounds (the lowering's chunks per shard), None past int64."""
    cols = columns(schedule)
    return None if cols is None else int(cols.one)


def _rebuilt(schedule: Schedule, step, link, shard, lo, hi, red, one: int) -> Schedule:
    cols = Columns(np.asarray(step, np.int64), np.asarray(link, np.int64), np.asarray(shard, np.int64),
                   np.asarray(lo, np.int64), np.asarray(hi, np.int64), np.asarray(red, bool), int(one))
    return Schedule(schedule.collective, algo=schedule.algo, notes=schedule.notes, cols=cols, demand=schedule.demand,
                    root=schedule.root, group=schedule.group)


def _like(schedule: Schedule, transfers: list) -> Schedule:
    return Schedule(schedule.collective, transfers, algo=schedule.algo, notes=schedule.notes, demand=schedule.demand,
                    root=schedule.root, group=schedule.group)


def _merged_transfers(schedule: Schedule) -> Schedule:
    """``merged`` on the exact transfers, for bounds past int64."""
    out: list[Transfer] = []
    for t in sorted(schedule.transfers, key=lambda t: (t.step, t.link, t.shard, bool(t.reduce), t.lo)):
        prev = out[-1] if out else None
        if (prev is not None and (prev.step, prev.link, prev.shard, bool(prev.reduce)) ==
                (t.step, t.link, t.shard, bool(t.reduce)) and prev.hi == t.lo):
            out[-1] = prev._replace(hi=t.hi)
        else:
            out.append(t)
    return schedule if len(out) == schedule.count else _like(schedule, out)


@dataclass(frozen=True)
class Coarsening:
    """What a coarsened export gave up (``note`` says it in one line): the limit it was over (``what``,
    ``limit``; ``over``: the count the unrefined program needed, 0 where only "more than the limit" is known)
    and the count the written file has (``now``), the chunks per shard and transfers before and after, and the
    runtime model's time of both schedules for one workload (``prices``)."""

    runtime: str
    what: str
    limit: int
    over: int
    now: int
    chunks: tuple
    transfers: tuple
    times_us: tuple
    prices: str

    @property
    def loss(self) -> float:
        """The coarsened schedule's time over the unrefined one's, minus one."""
        before, after = self.times_us
        return after / before - 1 if before > 0 else 0.0

    def note(self) -> str:
        was = f"at least {self.over:,}" if self.over else "more than that"
        chunks = "{:,} -> {:,}".format(*self.chunks) if None not in self.chunks else f"-> {self.chunks[1]:,}"
        return (f"coarsened to fit {self.runtime}'s limit of {self.limit:,} {self.what} (the unrefined program: "
                f"{was}): chunks per shard {chunks}, transfers {self.transfers[0]:,} -> {self.transfers[1]:,}, "
                f"{self.now:,} {self.what} (limit {self.limit:,}), time {100 * self.loss:+.1f} % against the "
                f"unrefined schedule ({self.times_us[0]:.4g} -> {self.times_us[1]:.4g} us, runtime model, "
                f"{self.prices})")


def coarsened_export(topo: Topology, schedule: Schedule, over: OverLimit, attempt, runtime: str, workload=None):
    """``coarsest_fitting``'s file: (text, report)."""
    return coarsest_fitting(topo, schedule, over, attempt, runtime, workload)[1:]


def coarsest_fitting(topo: Topology, schedule: Schedule, over: OverLimit, attempt, runtime: str, workload=None):
    """(the coarsened schedule, and ``attempt``'s text and report of it): the first coarsening of ``schedule`` (module docstring) whose program ``attempt(schedule)`` writes within
    the runtime's limits, as ``attempt``'s (text, report) with ``report.coarsened`` the ``Coarsening`` and its
    note added to ``report.runtime_note``; OverLimit naming the limit and the smallest count reached when none
    fits. ``over`` is the unrefined program's overshoot; ``workload`` prices both schedules (default: the
    studio's, ``solvers.runtime.DEFAULT_WORKLOAD``)."""
    from ..runtime import DEFAULT_WORKLOAD

    work = workload or DEFAULT_WORKLOAD
    one = chunks_per_shard(schedule)
    n = len(topo.compute_nodes)
    step = n if schedule.collective is Collective.ALLTOALL else 1
    tried, best = [], {}          # (grid, what, reached); the least count reached per limit
    before_us = None

    def fitted(coarse: Schedule):
        nonlocal before_us
        verify(topo, coarse).raise_if_failed()
        text, report = attempt(coarse)
        if before_us is None:
            before_us = work.price(topo, schedule).time_us
        after_us = work.price(topo, coarse).time_us
        done = Coarsening(report.runtime, over.what, over.limit, over.reached, _count(report, over.what),
                          (one, chunks_per_shard(coarse)), (schedule.count, coarse.count), (before_us, after_us),
                          f"{work.price_label}, M {work.total_bytes:g} bytes")
        report.coarsened = done
        report.runtime_note = "; ".join(x for x in (report.runtime_note, done.note()) if x)
        return coarse, text, report

    last = over
    coarse = merged(schedule)
    if coarse.count < schedule.count:
        try:
            return fitted(coarse)
        except XmlError as exc:
            last = exc if isinstance(exc, OverLimit) else last
            tried.append((one, last.what, exc.reached if isinstance(exc, OverLimit) else 0))
    failed = one if one is not None else MAX_GRID + 1      # the finest grid known not to fit
    grid = _next_grid(failed, last, step, FIRST_MARGIN)
    while grid is not None:
        try:
            got = fitted(quantized(schedule, grid))
        except XmlError as exc:          # OverLimit, or a file the checker refused otherwise: coarser still
            last = exc if isinstance(exc, OverLimit) else last
            failed = grid
            tried.append((grid, last.what, exc.reached if isinstance(exc, OverLimit) else 0))
            grid = _next_grid(grid, exc if isinstance(exc, OverLimit) else OverLimit(str(exc), "", 0, 0), step)
            continue
        for _ in range(REFINE):      # a loss: grids between this one and the last that failed, finest that fits
            mid = (grid + failed) // 2
            mid -= mid % step
            if got[2].coarsened.loss <= 0 or mid <= grid:
                break
            try:
                got, grid = fitted(quantized(schedule, mid)), mid
            except XmlError:
                failed = mid
        return got
    for _, what, reached in tried:
        if reached and (what not in best or reached < best[what]):
            best[what] = reached
    least = best.get(last.what) or last.reached
    coarsest = tried[-1][0] if tried else (one or 0)
    raise OverLimit(f"no coarsening fits {runtime}'s limit of {last.limit:,} {last.what}: the fewest any try "
                    f"reached is {least:,} ({len(tried)} tries, down to {coarsest:,} chunk"
                    f"{'s' if coarsest != 1 else ''} per shard; the last: {last})", last.what, least,
                    last.limit) from None


def _next_grid(grid: int, over: OverLimit, step: int, margin: float = MARGIN) -> int | None:
    """The next, coarser grid after ``grid`` overshot as ``over`` says (a multiple of ``step``), None when
    ``grid`` was the coarsest."""
    if grid <= step:
        return None
    if over.what in PROPORTIONAL and over.reached > over.limit > 0:
        want = int(grid * over.limit / over.reached * margin)
    else:
        want = grid // 2
    want = min(want, grid - 1, MAX_GRID)
    want -= want % step
    return max(_divisor_near(grid, want, step), step)


def _divisor_near(grid: int, want: int, step: int) -> int:
    """The largest divisor of ``grid`` (a multiple of ``step``) between ``want`` / 2 and ``want``, else
    ``want``: a grid that divides the last one keeps every bound already on it, so equal pieces stay equal."""
    if grid > MAX_GRID:
        return want
    for d in range(want, max(want // 2, 1) - 1, -1):
        if grid % d == 0 and d % step == 0:
            return d
    return want


def _count(report, what: str) -> int:
    """The count of ``what`` (an ``OverLimit.what``) in a checked file's ``report``."""
    if what == "threadblocks per rank":
        return report.tbs_per_rank
    if what == "steps per threadblock":
        return report.steps_per_tb
    flat, program = report.flat, report.program
    header = flat.header if flat is not None else program
    if what == "channels":
        return header.nchannels
    if what in ("chunks per loop", "chunks per shard"):
        return header.nchunksperloop
    if what == "chunk offset":
        if flat is not None:
            return int(max(flat.steps["srcoff"].max(initial=0), flat.steps["dstoff"].max(initial=0)))
        return max((max(st.srcoff, st.dstoff) for g in program.gpus for t in g.tbs for st in t.steps), default=0)
    if flat is not None:
        per = np.bincount(flat.tb_gpu, minlength=header.ngpus) + np.bincount(
            flat.tb_gpu, weights=flat.tb_len, minlength=header.ngpus).astype(np.int64)
        return 1 + header.ngpus + int(per.max(initial=0))
    return max((1 + header.ngpus + len(g.tbs) + sum(len(t.steps) for t in g.tbs) for g in program.gpus),
               default=MAX_NODES_PER_RANK)
