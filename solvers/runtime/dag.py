"""A verified schedule as the message graph a runtime executes (docs/ARCHITECTURE.md, "The runtime model").

Message. Everything one link carries in one step of the schedule IR is one message: the runtime issues it as one
send whose bytes are the sum of the pieces (their shares of a shard, ``load``), and it holds the link for
alpha_l + bytes / bandwidth_l. Messages on a link are served in step order.

Dependencies. A message may start once every piece it carries is at its sender:

* a copy (``reduce=False``) of a piece needs, for each point of it, the earliest arrival of that point at the
  sender as a copy, taken in step order (what the verifier calls the step the data became final there); points
  that never arrived as a copy are the sender's own reduced result, which needs every partial sum it received
  for them (an allreduce's owner after its reduce-scatter);
* a reduction (``reduce=True``) needs every partial sum the sender received for the piece in earlier steps;
* a sender's own data (its shard in a copy-only collective, every shard at the root of a broadcast or scatter,
  its contribution in a reduction) is there at 0.

Switches store and forward: a piece leaves a switch in a later step than it arrived (the verifier's rule), so
its message depends on the arrival like any other. Steps only order the sends on each link and name what
arrived before; the time a step takes is not fixed (the event model of ``solvers.runtime.engine``).

The dependencies are found in numpy columns where the bounds are 64-bit integers and every piece is non-empty
(``_dependencies_in_columns``; 0.4 s for 196k transfers against 2.4 s), else transfer by transfer
(``_dependencies_by_piece``, the definition above read literally, and the tests' reference for the other).
"""
from __future__ import annotations

from bisect import bisect_left
from dataclasses import dataclass

import numpy as np

from topologies.model import Topology

from ..core.schedule import Collective, Schedule, columns, shard_sources
from ..core.sorted_unique import sorted_unique


@dataclass
class MessageGraph:
    """The messages of a schedule in step order (index = position), with their dependencies as CSR arrays:
    message i waits for messages ``deps[ptr[i]:ptr[i+1]]``, all of earlier steps. ``batches`` cuts the messages
    into consecutive runs that may be computed together: no run holds two messages of one link or a message
    and one it waits for."""

    step: np.ndarray          # int64, non-decreasing
    link: np.ndarray          # int64
    load: np.ndarray          # float64: shards (M/N) carried per slice
    ptr: np.ndarray           # int64, len = messages + 1
    deps: np.ndarray          # int64
    src: np.ndarray           # sender node of each message
    dst: np.ndarray           # receiver node of each message
    transfers: int
    reduced: np.ndarray | None = None   # float64: of ``load``, the shards the receiver reduces into its copy

    @property
    def size(self) -> int:
        return len(self.step)


def _subtract(pieces: list[tuple[int, int]], lo: int, hi: int) -> tuple[list[tuple[int, int]], bool]:
    """``pieces`` (disjoint intervals) minus [lo, hi), and whether they overlapped."""
    out, hit = [], False
    for a, b in pieces:
        if hi <= a or b <= lo:
            out.append((a, b))
            continue
        hit = True
        if a < lo:
            out.append((a, lo))
        if hi < b:
            out.append((hi, b))
    return out, hit


def message_graph(topo: Topology, schedule: Schedule) -> MessageGraph:
    """The message graph of ``schedule`` on ``topo`` (module docstring)."""
    cols = columns(schedule)
    if cols is not None and cols.lo.dtype == np.int64:
        step, link, shard = cols.step.astype(np.int64), cols.link.astype(np.int64), cols.shard.astype(np.int64)
        lo, hi, red = cols.lo, cols.hi, cols.reduce.astype(bool)
        one = cols.one
    else:                      # bounds beyond 64-bit scaling: exact Fractions, as objects
        ts = schedule.transfers
        step = np.array([t.step for t in ts], dtype=np.int64)
        link = np.array([t.link for t in ts], dtype=np.int64)
        shard = np.array([t.shard for t in ts], dtype=np.int64)
        lo = np.array([t.lo for t in ts], dtype=object)
        hi = np.array([t.hi for t in ts], dtype=object)
        red = np.array([t.reduce for t in ts], dtype=bool)
        one = 1
    n_tr = len(step)
    link_src, link_dst = topo.link_ends
    if n_tr == 0:
        empty = np.zeros(0, dtype=np.int64)
        return MessageGraph(empty, empty, np.zeros(0), np.zeros(1, dtype=np.int64), empty, empty, empty, 0)

    # messages: one per (step, link), in step order
    order = np.lexsort((link, step))
    key = step[order] * (len(topo.links) + 1) + link[order]
    first = np.ones(n_tr, dtype=bool)
    first[1:] = key[1:] != key[:-1]
    msg_sorted = np.cumsum(first) - 1
    msg_of = np.empty(n_tr, dtype=np.int64)
    msg_of[order] = msg_sorted
    heads = order[first]
    m_step, m_link = step[heads], link[heads]
    n_msg = len(heads)
    width = (hi - lo) if lo.dtype != object else np.array([float(x) for x in hi - lo])
    m_load = np.bincount(msg_of, weights=np.asarray(width, dtype=np.float64) / float(one), minlength=n_msg)
    m_reduced = np.bincount(msg_of, weights=np.asarray(width, dtype=np.float64) * red / float(one), minlength=n_msg)

    src, dst = link_src[link], link_dst[link]
    is_switch = np.array([not topo.is_compute(v) for v in range(topo.num_nodes)], dtype=bool)
    senders = np.ones(n_tr, dtype=bool)
    if schedule.collective.copy_only:         # a rank's own shard (the root's every shard) is there from the start
        senders = src != shard_sources(schedule.collective, shard, schedule.root)
    if lo.dtype == object or not np.all(lo < hi):
        ptr, deps = _dependencies_by_piece(order, step, shard, lo, hi, red, src, dst, is_switch, senders, msg_of,
                                           n_msg)
    else:
        ptr, deps = _dependencies_in_columns(order, step, shard, lo, hi, red, src, dst, is_switch, senders, msg_of,
                                             n_msg)
    return MessageGraph(m_step, m_link, m_load, ptr, deps, link_src[m_link], link_dst[m_link], n_tr, m_reduced)


def _dependencies_by_piece(order, step, shard, lo, hi, red, src, dst, is_switch, senders, msg_of, n_msg):
    """The dependencies of the module docstring, transfer by transfer (any bounds, Fractions included), as CSR
    arrays (ptr, deps) over the messages."""
    arrivals: dict[tuple[int, int], list] = {}       # per (receiver, shard), in step order
    for i in np.lexsort((step, shard, dst)).tolist():
        arrivals.setdefault((int(dst[i]), int(shard[i])), []).append(i)
    steps_of = {k: [int(step[i]) for i in v] for k, v in arrivals.items()}
    deps_of: list[set] = [set() for _ in range(n_msg)]
    st_l, lo_l, hi_l, red_l, src_l, sh_l = (step.tolist(), lo.tolist(), hi.tolist(), red.tolist(), src.tolist(),
                                            shard.tolist())
    msg_l, dst_l, switch_l, sending = msg_of.tolist(), dst.tolist(), is_switch.tolist(), senders.tolist()
    at_switch: dict[tuple, list[int]] = {}     # (switch, shard, lo, hi, reduce) -> its arrivals in step order
    for i in order.tolist():
        if switch_l[dst_l[i]]:
            at_switch.setdefault((dst_l[i], sh_l[i], lo_l[i], hi_l[i], red_l[i]), []).append(i)
    forwarded: dict[tuple, int] = {}           # the same key -> arrivals already forwarded
    for i in order.tolist():                   # step order, so a switch forwards its arrivals first in, first out
        if not sending[i]:
            continue
        u, s = src_l[i], sh_l[i]
        if switch_l[u]:
            piece = (u, s, lo_l[i], hi_l[i], red_l[i])
            same = at_switch.get(piece, ())
            k = forwarded.get(piece, 0)
            if k < len(same) and st_l[same[k]] < st_l[i]:
                forwarded[piece] = k + 1
                deps_of[msg_l[i]].add(msg_l[same[k]])
                continue
        got = arrivals.get((u, s))
        if not got:
            continue
        before = got[:bisect_left(steps_of[(u, s)], st_l[i])]
        if not before:
            continue
        a, b = lo_l[i], hi_l[i]
        need = deps_of[msg_l[i]]
        if red_l[i]:
            for j in before:
                if red_l[j] and lo_l[j] < b and a < hi_l[j]:
                    need.add(msg_l[j])
            continue
        open_ = [(a, b)]
        for j in before:
            if not red_l[j] and open_:
                open_, hit = _subtract(open_, lo_l[j], hi_l[j])
                if hit:
                    need.add(msg_l[j])
        for x, y in open_:
            for j in before:
                if red_l[j] and lo_l[j] < y and x < hi_l[j]:
                    need.add(msg_l[j])
    counts = np.fromiter((len(d) for d in deps_of), dtype=np.int64, count=n_msg)
    ptr = np.zeros(n_msg + 1, dtype=np.int64)
    np.cumsum(counts, out=ptr[1:])
    deps = np.fromiter((d for ds in deps_of for d in sorted(ds)), dtype=np.int64, count=int(ptr[-1]))
    return ptr, deps


def _dependencies_in_columns(order, step, shard, lo, hi, red, src, dst, is_switch, senders, msg_of, n_msg):
    """``_dependencies_by_piece`` as array passes, for 64-bit bounds with every piece non-empty: the same (ptr,
    deps). Each (rank, shard) is cut into elementary pieces at every bound that arrives there or leaves it, so
    every transfer covers whole pieces; then a copy waits, per piece it carries, for the first copy of that piece
    to arrive (when that came in an earlier step), and for the pieces no copy reached before, like a reduction,
    for every partial sum of the piece received in an earlier step."""
    n_tr = len(step)
    pairs = []                                            # (waiting transfer, transfer it waits for)
    # a switch forwards what arrived in its order: the k-th send of a piece takes the k-th arrival of that piece
    # while one arrived in an earlier step (it then waits for nothing else); sends that find none fall through
    forwarded = np.zeros(n_tr, dtype=bool)
    at = np.empty(n_tr, dtype=np.int64)
    at[order] = np.arange(n_tr)                           # each transfer's place in step order
    into, out_of = np.flatnonzero(is_switch[dst]), np.flatnonzero(is_switch[src] & senders)
    if len(into) and len(out_of):
        rows = np.concatenate([into, out_of])
        node = np.concatenate([dst[into], src[out_of]])
        key = _dense_rows(node, shard[rows], lo[rows], hi[rows], red[rows].astype(np.int64))
        k_in, k_out = key[:len(into)], key[len(into):]
        arr = into[np.lexsort((at[into], k_in))]                  # arrivals by piece, in step order
        arr_key = np.sort(k_in)
        snd_order = np.lexsort((at[out_of], k_out))
        snd, snd_key = out_of[snd_order], k_out[snd_order]
        span = int(step.max()) + 2
        # arrivals of the piece in steps before the send's: all of the piece's arrivals up to that step
        first_arr = np.searchsorted(arr_key, snd_key)
        earlier = np.searchsorted(arr_key * span + step[arr], snd_key * span + step[snd]) - first_arr
        group_start = np.searchsorted(snd_key, snd_key)
        j = np.arange(len(snd)) - group_start                     # the send's number among its piece's sends
        # matched after send j: c_j = min(c_{j-1} + 1, earlier_j), c_{-1} = 0, so c_j = j + min(1, min over i <= j
        # of earlier_i - i) within the piece; the minimum restarts at each piece (offsets keep pieces apart)
        big = len(snd) + n_tr + 2
        groups = np.cumsum(np.concatenate(([0], snd_key[1:] != snd_key[:-1])))
        shift = (groups[-1] - groups) * big
        low = np.minimum.accumulate(earlier - j + shift) - shift
        matched = j + np.minimum(1, low)
        before = np.where(j > 0, np.roll(matched, 1), 0)
        took = matched > before
        pairs.append((snd[took], arr[first_arr[took] + matched[took] - 1]))
        forwarded[snd[took]] = True
    waiting = np.flatnonzero(senders & ~forwarded)
    if len(waiting):
        pairs.append(_piece_dependencies(waiting, step, shard, lo, hi, red, dst, src))
    if pairs:
        who = np.concatenate([p[0] for p in pairs])
        what = np.concatenate([p[1] for p in pairs])
        code = sorted_unique(msg_of[who] * n_msg + msg_of[what])
    else:
        code = np.zeros(0, dtype=np.int64)
    ptr = np.zeros(n_msg + 1, dtype=np.int64)
    np.cumsum(np.bincount(code // n_msg, minlength=n_msg), out=ptr[1:])
    return ptr, code % n_msg


def _dense_rows(*cols) -> np.ndarray:
    """One integer per row of the columns, equal for equal rows, ordered as the rows are lexicographically."""
    order = np.lexsort(cols[::-1])
    change = np.zeros(len(order), dtype=bool)
    for c in cols:
        s = c[order]
        change[1:] |= s[1:] != s[:-1]
    out = np.empty(len(order), dtype=np.int64)
    out[order] = np.cumsum(change)
    return out


def _piece_dependencies(waiting, step, shard, lo, hi, red, dst, src):
    """(waiting transfer, transfer it waits for) for the transfers ``waiting`` (``_dependencies_in_columns``)."""
    arrivals = np.arange(len(step))
    node = np.concatenate([dst, src[waiting]])
    where = _dense_rows(node, np.concatenate([shard, shard[waiting]]))   # (rank, shard) of every arrival and send
    w_arr, w_snd = where[:len(step)], where[len(step):]
    values = sorted_unique(np.concatenate([lo, hi]))
    width = len(values) + 1
    cut = lambda w, v: w * width + np.searchsorted(values, v)        # noqa: E731  (a bound at its rank and shard)
    points = sorted_unique(np.concatenate([cut(w_arr, lo), cut(w_arr, hi), cut(w_snd, lo[waiting]),
                                           cut(w_snd, hi[waiting])]))

    def pieces(w, a, b, who):
        """Rows (piece, transfer) for transfers ``who`` covering [a, b) at ``w``: piece p runs from points[p]."""
        first, end = np.searchsorted(points, cut(w, a)), np.searchsorted(points, cut(w, b))
        count = end - first
        rows = np.repeat(np.arange(len(who)), count)
        return first[rows] + np.arange(len(rows)) - np.repeat(np.cumsum(count) - count, count), who[rows]

    span = int(step.max()) + 2
    copies = ~red
    p_copy, j_copy = pieces(w_arr[copies], lo[copies], hi[copies], arrivals[copies])
    p_red, j_red = pieces(w_arr[red], lo[red], hi[red], arrivals[red])
    p_snd, i_snd = pieces(w_snd, lo[waiting], hi[waiting], waiting)
    out_who, out_what = [], []
    # copies: per piece, the first copy to arrive (in step order, then in schedule order), if before the send
    first = np.full(len(points), -1, dtype=np.int64)
    by = np.lexsort((j_copy, step[j_copy], p_copy))
    lead = np.concatenate(([True], p_copy[by][1:] != p_copy[by][:-1])) if len(by) else np.zeros(0, dtype=bool)
    first[p_copy[by][lead]] = j_copy[by][lead]
    got = first[p_snd]
    reached = ~red[i_snd] & (got >= 0)
    reached[reached] = step[got[reached]] < step[i_snd[reached]]
    out_who.append(i_snd[reached])
    out_what.append(got[reached])
    # reductions, and the pieces of copies no copy reached before: every partial sum received in an earlier step
    ask_p, ask_i = p_snd[~reached], i_snd[~reached]
    by = np.lexsort((step[j_red], p_red))
    key = p_red[by] * span + step[j_red[by]]
    start = np.searchsorted(key, ask_p * span)
    end = np.searchsorted(key, ask_p * span + step[ask_i])
    count = end - start
    rows = np.repeat(np.arange(len(ask_i)), count)
    out_who.append(ask_i[rows])
    out_what.append(j_red[by][start[rows] + np.arange(len(rows)) - np.repeat(np.cumsum(count) - count, count)])
    return np.concatenate(out_who), np.concatenate(out_what)


def busbw_factor(collective: Collective, n: int) -> float:
    """busbw / algbw as nccl-tests defines it: 2(n-1)/n for allreduce, (n-1)/n for allgather, reduce-scatter,
    all-to-all, gather and scatter, 1 for anything else (broadcast and reduce among them)."""
    if n <= 1:
        return 1.0
    if collective is Collective.ALLREDUCE:
        return 2 * (n - 1) / n
    if collective in (Collective.ALLGATHER, Collective.REDUCE_SCATTER, Collective.ALLTOALL, Collective.GATHER,
                      Collective.SCATTER):
        return (n - 1) / n
    return 1.0
