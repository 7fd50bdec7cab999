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
* a sender's own data (its shard in a copy-only collective, its contribution in a reduction) is there at 0.

Switches store and forward: a piece leaves a switch in a later step than it arrived (the verifier's rule), so
its message depends on the arrival like any other. Steps only order the sends on each link and name what
arrived before; the time a step takes is not fixed (the event model of ``solvers.runtime.engine``).
"""
from __future__ import annotations

from bisect import bisect_left
from dataclasses import dataclass

import numpy as np

from topologies.model import Topology

from ..core.schedule import Collective, Schedule, columns


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
    link_src = np.array([l.src for l in topo.links], dtype=np.int64)
    link_dst = np.array([l.dst for l in topo.links], dtype=np.int64)
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

    src, dst = link_src[link], link_dst[link]
    owner_holds = schedule.collective.copy_only
    # arrivals per (receiver, shard), in step order: (step, lo, hi, reduce, message)
    arrivals: dict[tuple[int, int], list] = {}
    for i in np.lexsort((step, shard, dst)).tolist():
        arrivals.setdefault((int(dst[i]), int(shard[i])), []).append(i)
    steps_of = {k: [int(step[i]) for i in v] for k, v in arrivals.items()}

    deps_of: list[set] = [set() for _ in range(n_msg)]
    st_l, lo_l, hi_l, red_l, src_l, sh_l = (step.tolist(), lo.tolist(), hi.tolist(), red.tolist(), src.tolist(),
                                            shard.tolist())
    msg_l = msg_of.tolist()
    is_switch = [not topo.is_compute(v) for v in range(topo.num_nodes)]
    dst_l = dst.tolist()
    at_switch: dict[tuple, list[int]] = {}     # (switch, shard, lo, hi, reduce) -> its arrivals in step order
    for i in order.tolist():
        if is_switch[dst_l[i]]:
            at_switch.setdefault((dst_l[i], sh_l[i], lo_l[i], hi_l[i], red_l[i]), []).append(i)
    forwarded: dict[tuple, int] = {}           # the same key -> arrivals already forwarded
    for i in order.tolist():                   # step order, so a switch forwards its arrivals first in, first out
        u, s = src_l[i], sh_l[i]
        if owner_holds and u == s:
            continue
        if is_switch[u]:
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
    return MessageGraph(m_step, m_link, m_load, ptr, deps, link_src[m_link], link_dst[m_link], n_tr)


def busbw_factor(collective: Collective, n: int) -> float:
    """busbw / algbw as nccl-tests defines it: 2(n-1)/n for allreduce, (n-1)/n for allgather, reduce-scatter
    and all-to-all, 1 for anything else."""
    if n <= 1:
        return 1.0
    if collective is Collective.ALLREDUCE:
        return 2 * (n - 1) / n
    if collective in (Collective.ALLGATHER, Collective.REDUCE_SCATTER, Collective.ALLTOALL):
        return (n - 1) / n
    return 1.0
