"""BFB: the breadth-first-broadcast allgather of the direct-connect paper (section 6.1, App. E; digest section 5).

In step t every node u receives the shards of the sources v at distance t, each from in-neighbours w that are one
hop nearer to v (d(v,w) = t - 1), so every schedule takes D(G) steps. LP (1), solved independently per (u, t):

    minimize U_{u,t}   subject to   sum_w x_{v,w} = 1 for every source v,
                                    sum_v x_{v,w} <= U_{u,t} * c_w for every in-neighbour w,

where c_w is the bandwidth of the links w -> u (their number on unit links; self-loops get no variable but keep
their port). The optimum is T_B = sum_t max_u U_{u,t} in units of (M/N)/b, i.e. tb_factor = B/N * sum_t max U.

This module solves it exactly and combinatorially for every receiver at once (``bfb_allgather``; the receivers
split over a forked worker pool on large topologies, one pool for both phases of an allreduce), with the
sources of a receiver grouped by kind and solutions shared between receivers whose problems match. Each
problem is an optimal fractional assignment (``bfb_assignment``: Hall's condition of Theorem 19 by a Dinkelbach
iteration over integer max-flows; every number an exact Fraction). Beside it: ``bfb_problems`` (the same LP one
(u, t) and one source at a time, and the chunked BFB of App. E.2) and ``bfb_timed`` (links with alpha, LP (14)
of App. E.3), both re-exported here.
"""
from __future__ import annotations

import multiprocessing
import os
from collections import defaultdict
from contextlib import contextmanager
from dataclasses import dataclass
from fractions import Fraction
from math import lcm
from typing import Callable

import numpy as np

from topologies.model import Topology
from topologies.properties import distances_into, is_strongly_connected

from ..core.errors import NotApplicable
from ..core.schedule import MAX_SCALED, Collective, Columns, Schedule, bounds_table, narrowest
from .bfb_assignment import assign_sources
from .bfb_problems import Problem, bfb_chunked, chunk_counts, receiver_problems, solve_problem
from .bfb_timed import bfb_timed

__all__ = ["PARALLEL_MIN_NODES", "Problem", "StepReport", "bfb_allgather", "bfb_chunked", "bfb_timed", "bfb_values",
           "chunk_counts", "receiver_problems", "shared_workers", "solve_problem"]


@dataclass(frozen=True)
class StepReport:
    """Why step t costs what it does: the receiver u with the largest U_{u,t}, its sources and in-links, and
    the Hall set J of Theorem 19 (|J| sources that can only use |N(J)| in-links, U = |J| / c(N(J)))."""

    step: int
    u: Fraction
    receiver: str
    sources: int
    in_links: int
    tight_sources: int
    tight_links: int
    balanced: bool      # U equals the receiver's volume bound |sources| / c(in-links): no Hall violation


def _signature_order(caps_bw, types):
    """Relabel in-neighbours by a signature of the problem (their link bandwidths, how many source types and
    sources may use them), so that receivers with the same local structure share one cache entry."""
    k = len(caps_bw)
    n_types, n_sources = [0] * k, [0] * k
    for mask, count in types:
        j = 0
        while mask:
            if mask & 1:
                n_types[j] += 1
                n_sources[j] += count
            mask >>= 1
            j += 1
    perm = sorted(range(k), key=lambda j: (caps_bw[j], n_types[j], n_sources[j], j))
    pos = [0] * k
    for p, j in enumerate(perm):
        pos[j] = p
    return perm, pos


def _remap_all(masks: list[int], pos: list[int]) -> list[int]:
    """Every mask with bit j moved to bit pos[j]."""
    if pos == sorted(pos):
        return list(masks)
    if len(masks) > 32 and len(pos) < 62:
        arr = np.asarray(masks, dtype=np.int64)
        bits = (arr[:, None] >> np.arange(len(pos), dtype=np.int64)) & 1
        return (bits << np.asarray(pos, dtype=np.int64)).sum(axis=1).tolist()
    out = []
    for mask in masks:
        new, j = 0, 0
        while mask:
            if mask & 1:
                new |= 1 << pos[j]
            mask >>= 1
            j += 1
        out.append(new)
    return out


class _Solver:
    """LP (1) for every (u, t) of a topology, with solutions shared between receivers whose problems match."""

    def __init__(self, topo: Topology):
        self.topo = topo
        self.cache: dict = {}
        self.bandwidths: dict[int, tuple[Fraction, ...]] = {}
        self.intervals: dict[tuple[Fraction, Fraction], int] = {}

    def interval(self, lo: Fraction, hi: Fraction) -> int:
        key = (lo, hi)
        iid = self.intervals.get(key)
        if iid is None:
            iid = self.intervals[key] = len(self.intervals)
        return iid

    def solve(self, caps_bw: list[int], types: list[tuple[int, int]]):
        """(U, tight types, pieces per type) with pieces ``[(interval id, in-neighbour index, parallel link k)]``.

        ``caps_bw[j]`` names (in ``self.bandwidths``) the tuple of bandwidths of the links from in-neighbour j."""
        perm, pos = _signature_order(caps_bw, types)
        canon = list(zip(_remap_all([m for m, _ in types], pos), [c for _, c in types]))
        key = (tuple(caps_bw[j] for j in perm), tuple(sorted(canon)))
        entry = self.cache.get(key)
        if entry is None:
            link_bws = [self.bandwidths[b] for b in key[0]]
            caps = [sum(bws, Fraction(0)) for bws in link_bws]
            kinds = list(key[1])
            eligible = [tuple(j for j in range(len(caps)) if mask >> j & 1) for mask, _ in kinds]
            u_val, share, tight = assign_sources([c for _, c in kinds], eligible, caps)
            pieces = {}
            for (mask, _), parts, elig in zip(kinds, share, eligible):
                lo, out = Fraction(0), []
                for j in elig:
                    x = parts.get(j)
                    if not x:
                        continue
                    width = x / caps[j]
                    for k, bw in enumerate(link_bws[j]):
                        hi = lo + width * bw
                        out.append((self.interval(lo, hi), j, k))
                        lo = hi
                pieces[mask] = out
            tight_masks = {kinds[i][0] for i in tight}
            entry = self.cache[key] = (u_val, tight_masks, pieces)
        u_val, tight_masks, pieces = entry
        per_type = [[(iid, perm[j], k) for iid, j, k in pieces[cm]] for cm, _ in canon]
        tight = [i for i, (cm, _) in enumerate(canon) if cm in tight_masks]
        return u_val, tight, per_type


@dataclass
class _Partial:
    """What one worker found for a range of receivers: interval table, piece table (interval, link, step), the
    transfers as (shard, piece) arrays, one pair per receiver in receiver order, and per step the worst
    receiver's report fields."""

    intervals: list
    piece_iid: np.ndarray
    piece_link: np.ndarray
    piece_step: np.ndarray
    shards: list
    pieces: list
    worst: dict


RADIX_MAX_DEGREE = 7     # distinct in-neighbours up to which a receiver's source kinds are 16-bit codes


def _kinds(into: np.ndarray, u: int, nbrs: list[int]):
    """The sources of receiver u grouped by kind (t = d(v, u), mask of the in-neighbours w with d(v, w) = t - 1):
    (members ordered by kind then index, [(t, mask)] in code order, count per kind)."""
    k = len(nbrs)
    du = into[u]
    before = du.astype(np.int32) - 1
    if k <= RADIX_MAX_DEGREE and into.dtype == np.uint8:
        code = du.astype(np.uint16) << k                 # u itself (du = 0, no eligible w) is the only code 0
        for j, w in enumerate(nbrs):
            code |= (into[w] == before).view(np.uint8).astype(np.uint16) << j
        order = np.argsort(code, kind="stable")          # a radix sort on 16-bit keys
        tally = np.bincount(code)
        used = np.flatnonzero(tally)[1:]
        kinds = [(c >> k, c & ((1 << k) - 1)) for c in used.tolist()]
        return order[1:], kinds, tally[used].tolist()
    others = np.flatnonzero(du > 0)
    ok = np.stack([into[w][others] == before[others] for w in nbrs], axis=1)
    if k <= 40:
        codes = du[others].astype(np.int64) << k | (ok.astype(np.int64) << np.arange(k, dtype=np.int64)).sum(axis=1)
        uniq, inverse = np.unique(codes, return_inverse=True)
        kinds = [(x >> k, x & ((1 << k) - 1)) for x in uniq.tolist()]
    else:
        uniq, inverse = np.unique(np.column_stack([du[others], ok]), axis=0, return_inverse=True)
        kinds = [(int(r[0]), sum(1 << j for j in np.flatnonzero(r[1:]).tolist())) for r in uniq]
    inverse = inverse.ravel()
    order = np.argsort(inverse, kind="stable")
    return others[order], kinds, np.bincount(inverse, minlength=len(kinds)).tolist()


def _solve_receivers(topo: Topology, into: np.ndarray, receivers: range,
                     progress: Callable[[float], None] | None = None, values_only: bool = False) -> _Partial:
    solver = _Solver(topo)
    shard_type = narrowest(max(topo.num_nodes - 1, 0))
    shard_parts, piece_parts = [], []
    piece_iid: list[int] = []
    piece_link: list[int] = []
    piece_step: list[int] = []
    worst: dict[int, tuple] = {}
    bw_ids: dict[tuple, int] = {}
    every = max(1, len(receivers) // 20)
    for done, u in enumerate(receivers, 1):
        links_from: dict[int, list[int]] = defaultdict(list)
        for i in topo.in_links[u]:
            if topo.links[i].src != u:
                links_from[topo.links[i].src].append(i)
        nbrs = sorted(links_from)
        k = len(nbrs)
        caps_bw = [bw_ids.setdefault(tuple(topo.links[i].bandwidth for i in links_from[w]), len(bw_ids))
                   for w in nbrs]
        solver.bandwidths = {v: b for b, v in bw_ids.items()}
        members, kinds, counts = _kinds(into, u, nbrs)
        by_step: dict[int, list[int]] = defaultdict(list)
        for i, (t, _) in enumerate(kinds):
            by_step[t].append(i)
        kind_first = [0] * len(kinds)
        kind_pieces = [0] * len(kinds)
        for t, idx in by_step.items():
            u_val, tight, per_type = solver.solve(caps_bw, [(kinds[i][1], counts[i]) for i in idx])
            if t not in worst or u_val > worst[t][0]:
                src = sum(counts[i] for i in idx)
                tight_links = {j for pos in tight for j in range(k) if kinds[idx[pos]][1] >> j & 1}
                total_cap = sum((topo.links[i].bandwidth for w in nbrs for i in links_from[w]), Fraction(0))
                worst[t] = (u_val, u, src, sum(len(links_from[w]) for w in nbrs),
                            sum(counts[idx[pos]] for pos in tight), sum(len(links_from[nbrs[j]]) for j in tight_links),
                            u_val == Fraction(src) / total_cap)
            if values_only:
                continue
            for i, pieces in zip(idx, per_type):
                kind_first[i] = len(piece_iid)
                kind_pieces[i] = len(pieces)
                for iid, j, kk in pieces:
                    piece_iid.append(iid)
                    piece_link.append(links_from[nbrs[j]][kk])
                    piece_step.append(t)
        if values_only:
            continue
        if all(p == 1 for p in kind_pieces):           # one piece per source (unique shortest paths): no repeat
            shard_parts.append(members.astype(shard_type))
            piece_parts.append(np.repeat(np.asarray(kind_first, dtype=np.int32), counts))
        else:
            per_member = np.repeat(np.asarray(kind_pieces, dtype=np.int64), counts)
            firsts = np.repeat(np.asarray(kind_first, dtype=np.int64), counts)
            starts = np.cumsum(per_member) - per_member
            shard_parts.append(np.repeat(members, per_member).astype(shard_type))
            piece_parts.append((np.repeat(firsts - starts, per_member)
                                + np.arange(int(per_member.sum()))).astype(np.int32))
        if progress is not None and done % every == 0:
            progress(done / len(receivers))
    return _Partial(list(solver.intervals), np.asarray(piece_iid, dtype=np.int64),
                    np.asarray(piece_link, dtype=np.int64), np.asarray(piece_step, dtype=np.int64),
                    shard_parts, piece_parts, worst)


_FORKED: dict = {}             # key -> (topology, distances), handed to forked workers without pickling
_SHARED: dict = {}             # while ``shared_workers`` is open: "pool" and the keys of the topologies it knows
PARALLEL_MIN_NODES = 512


def _worker(task: tuple) -> _Partial:
    key, receivers = task
    topo, into = _FORKED[key]
    return _solve_receivers(topo, into, receivers)


def _workers() -> int:
    try:
        return len(os.sched_getaffinity(0))
    except AttributeError:
        return os.cpu_count() or 1


def _parallel(n: int) -> int:
    """Processes to split n receivers between (this one included); 1 where it is not worth it or not allowed."""
    jobs = min(_workers(), 4)
    if (n < PARALLEL_MIN_NODES or jobs < 2 or "fork" not in multiprocessing.get_all_start_methods()
            or multiprocessing.current_process().daemon):       # a daemon (a Dask worker) may not have children
        return 1
    return jobs


@contextmanager
def shared_workers(topos: list[Topology]):
    """One pool of workers for BFB's allgathers on ``topos`` (an allreduce's two phases), forked before either
    runs, with every topology's distances: a worker forked later would inherit the first phase's columns (2.5 GB
    at 16384 nodes), which its resident size then counts again although it never touches them."""
    jobs = max((_parallel(t.num_nodes) for t in topos), default=1)
    if jobs < 2 or _SHARED:
        yield
        return
    for t in topos:
        _FORKED[id(t)] = (t, _bfb_distances(t))
    try:
        with multiprocessing.get_context("fork").Pool(jobs - 1) as pool:
            _SHARED.update(pool=pool, keys={id(t) for t in topos}, jobs=jobs)
            yield
    finally:
        _SHARED.clear()
        for t in topos:
            _FORKED.pop(id(t), None)


def _solve_all(topo: Topology, into: np.ndarray, progress) -> list[_Partial]:
    n = topo.num_nodes
    shared = id(topo) in _SHARED.get("keys", ())
    jobs = _SHARED["jobs"] if shared else _parallel(n)
    if jobs < 2:
        return [_solve_receivers(topo, into, range(n), progress)]
    bounds = [n * i // jobs for i in range(jobs + 1)]

    def solve(pool, key) -> list[_Partial]:
        pending = pool.map_async(_worker, [(key, range(bounds[i], bounds[i + 1])) for i in range(1, jobs)])
        first = _solve_receivers(topo, into, range(bounds[0], bounds[1]),
                                 None if progress is None else (lambda f: progress(f / jobs)))
        return [first] + pending.get()

    if shared:
        parts = solve(_SHARED["pool"], id(topo))
        _SHARED["keys"].discard(id(topo))
        if not _SHARED["keys"]:              # the last phase: let the workers go before the caller joins the phases
            _SHARED["pool"].close()
            _SHARED["pool"].join()
        return parts
    _FORKED[0] = (topo, into)
    try:
        with multiprocessing.get_context("fork").Pool(jobs - 1) as pool:
            return solve(pool, 0)
    finally:
        _FORKED.pop(0, None)


def _bfb_distances(topo: Topology) -> np.ndarray:
    if topo.switch_nodes:
        raise NotApplicable("BFB is defined for direct-connect topologies; this one has switches")
    if not is_strongly_connected(topo):
        raise NotApplicable("BFB needs a strongly connected topology")
    return distances_into(topo)


def bfb_allgather(topo: Topology, progress: Callable[[float], None] | None = None) -> Schedule:
    """The optimal BFB allgather (Theorem 16): LP (1) solved exactly for every (u, t), read off into intervals.

    For each (u, t, v) the chosen fractions are laid end to end over [0, 1) in in-neighbour order (every eligible
    w holds all of v's shard after step t - 1), and a share on several parallel links w -> u is split in
    proportion to their bandwidth. Receivers are split between the machine's cores on large topologies. The
    schedule comes back as numpy columns of the narrowest integer types that hold them (on gkautz(4,16384),
    268M transfers in 2.7 GB). ``notes["report"]`` explains every step's cost (``StepReport``);
    ``progress(fraction)`` is called as receivers are done.
    """
    into = _bfb_distances(topo)
    parts = _solve_all(topo, into, progress)
    intervals: dict[tuple[Fraction, Fraction], int] = {}
    worst: dict[int, tuple] = {}
    remaps = []
    for part in parts:
        remaps.append(np.array([intervals.setdefault(iv, len(intervals)) for iv in part.intervals] or [0],
                               dtype=np.int64))
        for t, w in part.worst.items():
            if t not in worst or w[0] > worst[t][0]:
                worst[t] = w
    one = lcm(*{x.denominator for pair in intervals for x in pair})
    lo_tab = np.array([lo.numerator * (one // lo.denominator) for lo, _ in intervals], dtype=object)
    hi_tab = np.array([hi.numerator * (one // hi.denominator) for _, hi in intervals], dtype=object)
    table = None
    if one <= MAX_SCALED:
        bound_type = narrowest(one)
        lo_tab, hi_tab = lo_tab.astype(bound_type), hi_tab.astype(bound_type)
    else:       # too large for int64 arithmetic: positions in a table of the exact values (Columns.bounds)
        table, position = bounds_table({0, one} | set(lo_tab.tolist()) | set(hi_tab.tolist()))
        bound_type = narrowest(len(table) - 1)
        lo_tab = np.array([position[v] for v in lo_tab.tolist()], dtype=bound_type)
        hi_tab = np.array([position[v] for v in hi_tab.tolist()], dtype=bound_type)
    total = sum(len(s) for part in parts for s in part.shards)
    step_type = narrowest(max(worst, default=0))
    link_type = narrowest(max(len(topo.links) - 1, 0))
    step, link = np.empty(total, dtype=step_type), np.empty(total, dtype=link_type)
    shard = np.empty(total, dtype=narrowest(max(topo.num_nodes - 1, 0)))
    lo, hi = np.empty(total, dtype=bound_type), np.empty(total, dtype=bound_type)
    at = 0
    for part, remap in zip(parts, remaps):     # filled receiver by receiver, each part freed as it is copied
        iid = remap[part.piece_iid] if len(part.piece_iid) else part.piece_iid
        p_step, p_link = part.piece_step.astype(step_type), part.piece_link.astype(link_type)
        p_lo, p_hi = lo_tab[iid], hi_tab[iid]
        for r in range(len(part.shards)):
            sh, pc = part.shards[r], part.pieces[r]
            end = at + len(sh)
            shard[at:end] = sh
            step[at:end] = p_step[pc]
            link[at:end] = p_link[pc]
            lo[at:end] = p_lo[pc]
            hi[at:end] = p_hi[pc]
            part.shards[r] = part.pieces[r] = None
            at = end
    cols = Columns(step, link, shard, lo, hi, np.zeros(total, dtype=bool), one, table)
    report = [StepReport(t, w[0], topo.names[w[1]], w[2], w[3], w[4], w[5], w[6]) for t, w in sorted(worst.items())]
    if progress is not None:
        progress(1.0)
    return Schedule(Collective.ALLGATHER, algo="bfb", notes={"U": {r.step: r.u for r in report}, "report": report},
                    cols=cols)


def bfb_values(topo: Topology) -> tuple[int, Fraction]:
    """(steps, tb_factor) of the optimal BFB allgather without assembling the schedule: tb_factor is
    sum_t max_u U*(u,t) * B / N (each step lasts as long as its most loaded in-link, Theorem 16), with B the
    node bandwidth. For the finder's base table, where only the two numbers are kept."""
    if topo.switch_nodes or not is_strongly_connected(topo):
        raise NotApplicable("BFB needs a strongly connected direct-connect topology")
    worst = _solve_receivers(topo, distances_into(topo), range(topo.num_nodes), values_only=True).worst
    node_bw = min(sum((topo.links[i].bandwidth for i in topo.out_links[u]), Fraction(0))
                  for u in range(topo.num_nodes))
    return len(worst), sum((w[0] for w in worst.values()), Fraction(0)) * node_bw / topo.num_nodes
