"""The event computation of the runtime model: P slices of the buffer run one message graph, pipelined.

Slice k carries 1/P of every message, so message m holds its link for ``alpha_m + load_m * (M/N) / P / bw_m``.
Number the schedule's steps 0..S-1 (dense). Slice k's step t belongs to wave k + t: what a pipelined runtime's
loop does, slice k+1 entering a step as slice k leaves it. Each link serves its sends in wave order, and in a wave
in step order; a send starts when the link is free and its dependencies (same slice, earlier steps, so earlier
waves) have finished. With P = 1 this is plain step order.

One wave is a few vectorised operations over the messages it runs and all requested sizes: the dependencies'
finish times come from each message's last h slices (h = the longest step distance of an edge that waits on it,
plus one; H the largest h), and on each link the sends of a wave form a chain f_j = max(f_{j-1}, r_j) + d_j,
which is f_j = D_j + max(free, max_{i<=j} (r_i - D_{i-1})) with D the running sum of durations: a cumulative
maximum.

Steady state. Waves S-1 .. P-1 hold every message once, and one such wave is a map of the state (the links' free
times and the last H slices' finish times) that commutes with adding a constant to every time. Once H + 1 waves
in a row finish every message exactly lambda later than the wave before, every later full wave does the same,
and the model adds the remaining full waves in closed form, then runs the last S-1 (draining) waves.
"""
from __future__ import annotations

from dataclasses import dataclass, replace

import numpy as np

from ..core.rows import put_rows, take_rows
from .dag import MessageGraph

STEADY_RTOL = 1e-12         # a wave's shift counts as uniform when its spread is below this share of the time
PER_MESSAGE_SAVING = 4      # each message keeps its own history when that takes at most 1/4 of H per message


@dataclass
class Layout:
    """Where each message sits in a wave: its link's row, its place in that link's chain (by step), its dense
    step rank; the message that waits on each dependency edge, and H, the longest step distance of an edge
    plus one. Message m keeps the finish times of its last ``keep[m]`` slices: slice k at ``base[m] + (k %
    keep[m]) * stride`` of ``cells`` in all. Where most messages need far fewer than H (the longest step
    distance of an edge that waits on m, plus one), each keeps that many in a block of its own (stride 1);
    otherwise every message keeps H, slot-major (stride = messages), so the messages of a wave sit side by side."""

    rank: np.ndarray            # dense step of each message, 0..S-1
    steps: int                  # S
    row: np.ndarray             # link row (0..links used - 1)
    col: np.ndarray             # place on the link's chain in a wave
    rows: int
    cols: int
    owner: np.ndarray           # per dependency edge: the message that waits
    history: int                # H
    keep: np.ndarray
    base: np.ndarray
    stride: int
    cells: int

    @classmethod
    def of(cls, g: MessageGraph) -> "Layout":
        _, rank = np.unique(g.step, return_inverse=True)
        rank = rank.astype(np.int64)
        used, row = np.unique(g.link, return_inverse=True)
        order = np.lexsort((rank, row))               # by link, then step
        col = np.empty(g.size, dtype=np.int64)
        starts = np.searchsorted(row[order], np.arange(len(used)))
        col[order] = np.arange(g.size) - starts[row[order]]
        owner = np.repeat(np.arange(g.size), np.diff(g.ptr))
        lag = rank[owner] - rank[g.deps]
        history = int(lag.max(initial=0)) + 1
        keep = np.ones(g.size, dtype=np.int64)
        np.maximum.at(keep, g.deps, lag + 1)
        if PER_MESSAGE_SAVING * keep.sum() <= history * g.size:
            base, stride = np.cumsum(keep) - keep, 1
        else:
            keep, base, stride = np.full(g.size, history), np.arange(g.size), g.size
        return cls(rank, int(rank.max()) + 1 if g.size else 0, row.astype(np.int64), col, len(used),
                   int(col.max()) + 1 if g.size else 0, owner, history, keep, base, stride, int(keep.sum()))

    def for_slices(self, slices: int) -> "Layout":
        """The same layout keeping at most ``slices`` finish times per message: a run of P slices has only slices
        0..P-1, so no slot is written twice when a message keeps min(h, P) (fewer cells, the same times)."""
        if slices >= int(self.keep.max(initial=1)):
            return self
        keep = np.minimum(self.keep, slices)
        base = self.base if self.stride > 1 else np.cumsum(keep) - keep
        return replace(self, keep=keep, base=base, cells=int(keep.sum()))


@dataclass
class WaveRun:
    """Times of one run (P slices) for S sizes: ``total_us[s]``; per message the start and finish of its last
    slice (messages x sizes); ``waves`` computed one by one (the rest in closed form); with ``record`` the start
    and finish of every slice (P x messages x sizes)."""

    total_us: np.ndarray
    last_start: np.ndarray
    last_finish: np.ndarray
    waves: int
    starts: np.ndarray | None = None
    finishes: np.ndarray | None = None


def run_waves(g: MessageGraph, lay: Layout, alpha_us: np.ndarray, us_per_byte: np.ndarray,
              shard_bytes: np.ndarray, slices: int, record: bool = False, shortcut: bool = True) -> WaveRun:
    """Simulate ``slices`` pipelined slices for every size in ``shard_bytes`` (M/N per size). ``alpha_us`` and
    ``us_per_byte`` are per message (its link's alpha and 1 / bandwidth). ``shortcut=False`` computes every
    wave (the benchmark's event rate; the result is the same).

    Messages are in step order, so the ones a wave runs (steps tau-P+1 .. tau) are one index range; a wave
    touches only those. Finish times are kept per message for its last h slices (``Layout.keep``)."""
    n, sizes, P = g.size, len(shard_bytes), slices
    if n == 0:
        zeros = np.zeros((0, sizes))
        return WaveRun(np.zeros(sizes), zeros, zeros, 0)
    lay = lay.for_slices(P)
    S, H = lay.steps, lay.history
    dur = alpha_us[:, None] + (g.load * us_per_byte)[:, None] * (np.asarray(shard_bytes, float) / P)[None, :]
    free = np.zeros((lay.rows, sizes))
    keep, base, stride = lay.keep, lay.base, lay.stride
    done_at = np.zeros((lay.cells, sizes))          # finish of message m in slice k: Layout's docstring
    last_start = np.zeros((n, sizes))
    last_finish = np.zeros((n, sizes))
    starts = np.zeros((P, n, sizes)) if record else None
    finishes = np.zeros((P, n, sizes)) if record else None
    bounds = np.searchsorted(lay.rank, np.arange(S + 1))   # messages of step rank r: bounds[r] .. bounds[r+1]
    total_waves = P + S - 1
    streak, last_shift, computed = 0, None, 0
    tau = 0
    while tau < total_waves:
        r0, r1 = max(0, tau - P + 1), min(S - 1, tau)
        lo, hi = int(bounds[r0]), int(bounds[r1 + 1])
        idx = np.arange(lo, hi)
        k = tau - lay.rank[lo:hi]                    # each present message's slice
        slot = base[lo:hi] + k % keep[lo:hi] * stride
        ready = np.zeros((hi - lo, sizes))
        d0, d1 = int(g.ptr[lo]), int(g.ptr[hi])
        if d1 > d0:
            deps = g.deps[d0:d1]
            got = take_rows(done_at, base[deps] + k[lay.owner[d0:d1] - lo] % keep[deps] * stride)   # its slice
            counts = np.diff(g.ptr[lo:hi + 1])
            at = g.ptr[lo:hi] - d0
            has = np.flatnonzero(counts)
            ready[has] = take_rows(got, at[has])
            for j in range(1, int(counts.max())):      # the latest of each message's dependencies
                more = np.flatnonzero(counts > j)
                ready[more] = np.maximum(take_rows(ready, more), take_rows(got, at[more] + j))
        rows = lay.row[lo:hi]
        cols = lay.col[lo:hi]
        first = np.full(lay.rows, np.iinfo(np.int64).max)
        np.minimum.at(first, rows, cols)
        pos = cols - first[rows]
        width = int(pos.max()) + 1
        cell = rows * width + pos
        grid_r = np.full((lay.rows * width, sizes), -np.inf)
        grid_d = np.zeros((lay.rows * width, sizes))
        d = dur[lo:hi]
        put_rows(grid_r, cell, ready)
        put_rows(grid_d, cell, d)
        grid_r, grid_d = grid_r.reshape(lay.rows, width, sizes), grid_d.reshape(lay.rows, width, sizes)
        cum = np.cumsum(grid_d, axis=1)
        best = np.maximum.accumulate(np.maximum(grid_r - (cum - grid_d), free[:, None, :]), axis=1)
        fin_grid = cum + best
        free = fin_grid[:, -1, :]
        fin = take_rows(fin_grid.reshape(-1, sizes), cell)
        full = hi - lo == n and r0 == 0 and r1 == S - 1
        prev = take_rows(done_at, base[lo:hi] + (k - 1) % keep[lo:hi] * stride) if full else None
        put_rows(done_at, slot, fin)
        computed += 1
        end = k == P - 1
        if end.any():
            last_finish[idx[end]] = fin[end]
            last_start[idx[end]] = fin[end] - d[end]
        if record:
            starts[k, idx] = fin - d
            finishes[k, idx] = fin
        if full and shortcut and not record and tau >= 1 and tau < P - 1:
            shift = fin - prev
            lo_s, hi_s = shift.min(axis=0), shift.max(axis=0)
            scale = np.maximum(np.abs(fin).max(axis=0), 1e-300)
            uniform = bool(np.all(hi_s - lo_s <= STEADY_RTOL * scale))
            if uniform and last_shift is not None and np.all(np.abs(hi_s - last_shift) <= STEADY_RTOL * scale):
                streak += 1
            else:
                streak = 1 if uniform else 0
            last_shift = hi_s if uniform else None
            if streak >= H + 1:
                jump = (P - 1) - tau                 # full waves left, each lambda later than the last
                add = jump * hi_s
                done_at = _rolled(done_at, lay, jump) + add
                free = free + add
                tau += jump + 1
                streak, last_shift = 0, None
                first_step = lay.rank == 0           # their last slice ran in wave P-1, one of those skipped
                last_finish[first_step] = done_at[(base + (P - 1) % keep * stride)[first_step]]
                last_start[first_step] = last_finish[first_step] - dur[first_step]
                continue
        tau += 1
    return WaveRun(free.max(axis=0) if lay.rows else np.zeros(sizes), last_start, last_finish, computed,
                   starts, finishes)


def _rolled(done_at: np.ndarray, lay: Layout, jump: int) -> np.ndarray:
    """The kept finish times moved ``jump`` slices on: what was slice k's slot becomes slice k + jump's."""
    if lay.stride > 1:                       # slot-major: whole rows of slots move
        n = len(lay.keep)
        return np.roll(done_at.reshape(-1, n, done_at.shape[1]), jump, axis=0).reshape(done_at.shape)
    owner = np.repeat(np.arange(len(lay.keep)), lay.keep)
    place = np.arange(lay.cells) - lay.base[owner]
    out = np.empty_like(done_at)
    out[lay.base[owner] + (place + jump) % lay.keep[owner]] = done_at
    return out
