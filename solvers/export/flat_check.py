"""Fast verdicts on a ``FlatProgram``: ``sound`` (does ``check.validate`` find nothing?) and ``runs`` (does
``check.simulate`` find nothing?), each a few numpy passes over the columns instead of a loop over a million
``Step`` objects.

They decide pass or fail only; ``check.check_xml`` takes a passing file as it is and hands a failing one to the
object checker, whose messages name the first problem (so both checkers' rules must agree: tests compare them
on mutated programs).

``runs`` executes the program as a dataflow graph: a step waits for the step before it on its threadblock, for
the step its dependency names, and (a receive) for the send it matches (the k-th send on a connection meets the
k-th receive; ``sound`` has made each connection one sending and one receiving threadblock). Steps are run in
waves: a wave holds every step whose waits are over, all its reads happen before its writes. A program whose
every read and write of a chunk is ordered by these waits (as every lowered program's is: ``lower.py``) ends
in the same state whatever the order, so the waves reach the state the event-driven ``simulate`` reaches. A
graph with a cycle or a receive without a send deadlocks. Chunk values are those of ``simulate``: the input
chunk index they derive from (-1 when mixed), the ranks whose contributions they hold (a bit mask, in 64-bit
words) and whether one was counted twice or an empty chunk was reduced.
"""
from __future__ import annotations

import numpy as np

from ..core.rows import put_rows, take_rows
from ..core.sorted_unique import sorted_unique
from .flat import BUF_CODE, TYPE_CODE, FlatProgram
from .layout import chunks_agree, file_root, rooted_layout
from .program import (MAX_DEPENDENCY_TB, MAX_INT, MAX_NODES_PER_RANK, MAX_OFFSET, MAX_SIMULATED_CHUNKS, ROOTED,
                      READING_STEPS, RECEIVING_STEPS, SENDING_STEPS, STEP_TYPES, WRITING_STEPS, Target)

_CODES = lambda names: np.array([TYPE_CODE[t] for t in names], dtype=np.int64)      # noqa: E731
_SENDS, _RECVS, _READS, _WRITES = (np.isin(np.arange(len(STEP_TYPES)), _CODES(names))
                                   for names in (SENDING_STEPS, RECEIVING_STEPS, READING_STEPS, WRITING_STEPS))
_NOP = TYPE_CODE["nop"]
_REDUCING = np.isin(np.arange(len(STEP_TYPES)), _CODES(("rrc", "rrs", "rrcs")))
_RE = TYPE_CODE["re"]
FEW_WAVES = 256              # up to this many waves a program is run in columns whatever its size; beyond,
MIN_STEPS_PER_WAVE = 16      # with fewer steps per wave on average the event-driven simulation is faster, and
                             # ``runs`` defers to it


def sound(p: FlatProgram, sm_budget: int, limits: Target) -> bool:
    """True when ``check._validate_body`` would find no problem (the header is checked by ``validate_header``)."""
    h, st = p.header, p.steps
    n, ngpus, ntbs = len(p.gpu_id), h.ngpus, len(p.tb_id)
    if limits.refusal(h.coll) is not None:
        return False
    if not np.array_equal(np.sort(p.gpu_id), np.arange(ngpus)):
        return False
    if limits.dialect == "msccl" and not all(chunks_agree(h.coll, ngpus, h.nchunksperloop, i, o) for i, o in
                                             zip(p.i_chunks.tolist(), p.o_chunks.tolist())):
        return False
    tb_len = p.tb_len
    tbs_of = np.bincount(p.tb_gpu, minlength=n)
    steps_of = np.bincount(p.tb_gpu, weights=tb_len, minlength=n) if ntbs else np.zeros(n)
    if n and ((1 + ngpus + tbs_of + steps_of).max() > MAX_NODES_PER_RANK
              or min(p.i_chunks.min(), p.o_chunks.min(), p.s_chunks.min()) < 0
              or max(p.i_chunks.max(), p.o_chunks.max(), p.s_chunks.max()) > MAX_INT
              or tbs_of.max() > min(limits.max_tbs, sm_budget)):
        return False
    if not ntbs:
        return True
    order = np.lexsort((p.tb_id, p.tb_gpu))          # by rank row, then id: ids must be 0 .. count - 1
    first_of_gpu = np.concatenate(([0], np.cumsum(tbs_of)[:-1]))
    if not np.array_equal(p.tb_id[order], np.arange(ntbs) - first_of_gpu[p.tb_gpu[order]]):
        return False
    me = p.gpu_id[p.tb_gpu]
    for peer in (p.tb_send, p.tb_recv):
        if ((peer < -1) | (peer >= ngpus) | (peer == me)).any():
            return False
    if ((p.tb_chan < 0) | (p.tb_chan >= limits.max_channels)).any():
        return False
    width = limits.max_channels
    for role, peer in enumerate((p.tb_send, p.tb_recv)):
        used = peer >= 0
        conn = (p.tb_gpu[used] * (ngpus + 1) + peer[used]) * width + p.tb_chan[used]
        if len(conn) and sorted_unique(conn).size != conn.size:       # two threadblocks on one connection
            return False
        per_chan = np.unique(p.tb_gpu[used] * width + p.tb_chan[used], return_counts=True)[1]
        if len(per_chan) and per_chan.max() > limits.max_tbs_per_channel:
            return False
    if tb_len.max() > limits.max_steps:
        return False
    nsteps = int(p.tb_start[-1])
    if not nsteps:
        return True
    step_tb = np.repeat(np.arange(ntbs), tb_len)
    position = np.arange(nsteps) - p.tb_start[step_tb]
    kind, cnt, depid, deps = st["type"], st["cnt"], st["depid"], st["deps"]
    if not np.array_equal(st["s"], position):
        return False
    after_nop = np.zeros(nsteps, dtype=bool)
    after_nop[1:] = (kind[:-1] == _NOP) & (position[1:] > 0)
    if (after_nop & (kind != _NOP) & (depid < 0)).any():
        return False
    if ((cnt < 0) | (cnt >= limits.max_count)).any() or ((st["hasdep"] != 0) & (st["hasdep"] != 1)).any():
        return False
    if not np.isin(kind, _CODES(sorted(limits.kernel_steps & set(STEP_TYPES)))).all():   # the kernels run them
        return False
    if (_SENDS[kind] & (p.tb_send[step_tb] < 0)).any() or (_RECVS[kind] & (p.tb_recv[step_tb] < 0)).any():
        return False
    sizes = np.stack([p.i_chunks, p.o_chunks, p.s_chunks], axis=1)[p.tb_gpu[step_tb]]
    for used, buf, off in ((_READS[kind], st["srcbuf"], st["srcoff"]), (_WRITES[kind], st["dstbuf"], st["dstoff"])):
        size = sizes[np.arange(nsteps), buf]
        if (used & ((off < 0) | (off + cnt > size) | (off > MAX_OFFSET))).any():
            return False
    if (depid > MAX_DEPENDENCY_TB).any():
        return False
    waits = np.flatnonzero(depid >= 0)
    if len(waits):
        g = p.tb_gpu[step_tb[waits]]
        if ((depid[waits] >= tbs_of[g]) | (depid[waits] == p.tb_id[step_tb[waits]])).any():
            return False
        target = order[first_of_gpu[g] + depid[waits]]
        if ((deps[waits] < 0) | (deps[waits] >= tb_len[target])).any():
            return False
        if (st["hasdep"][p.tb_start[target] + deps[waits]] != 1).any():
            return False
    return True


def runs(p: FlatProgram, root: int | None = None) -> bool | None:
    """True when ``check.simulate`` finds nothing (module docstring) on a program that is ``sound``; False when
    it would find a fault; None when the program runs in too many waves for this to be the faster way. A rooted
    file is run for ``root`` (default: its name's, ``check.file_root``), as ``simulate`` runs it."""
    h, st = p.header, p.steps
    ngpus, ntbs, nsteps = h.ngpus, len(p.tb_id), int(p.tb_start[-1])
    coll = h.coll.replace("_", "")
    in_place = h.inplace == 1 and h.outofplace == 0
    if coll not in ("allgather", "reducescatter", "allreduce", "alltoall") + ROOTED:
        return False                   # simulate names the missing postcondition
    chunks = int(p.i_chunks.sum() + p.o_chunks.sum() + p.s_chunks.sum()) + ngpus * max(h.nchunksperloop, 0)
    if chunks > MAX_SIMULATED_CHUNKS:
        return False                   # too large: simulate says so
    layout = None
    if coll in ROOTED:
        root, why = file_root(h, root)
        if why is not None:
            return False
        layout = rooted_layout(coll, ngpus, h.nchunksperloop, root, in_place)
    kind, cnt = st["type"], st["cnt"]
    step_tb = np.repeat(np.arange(ntbs), p.tb_len)
    if not in_place and layout is None and (_WRITES[kind] & (st["dstbuf"] == BUF_CODE["i"])).any():
        return False
    me = p.gpu_id[p.tb_gpu]
    if layout is not None and layout[3]:
        banned = np.zeros((ngpus, len(BUF_CODE)), dtype=bool)
        for r, buf in layout[3]:
            banned[r, BUF_CODE[buf]] = True
        if (_WRITES[kind] & banned[me[step_tb], st["dstbuf"]]).any():
            return False
    # the k-th send on a connection (sender, receiver, channel) meets the k-th receive
    sending, receiving = np.flatnonzero(_SENDS[kind]), np.flatnonzero(_RECVS[kind])
    t_s, t_r = step_tb[sending], step_tb[receiving]
    key_s = (me[t_s] * ngpus + p.tb_send[t_s]) * 64 + p.tb_chan[t_s]
    key_r = (p.tb_recv[t_r] * ngpus + me[t_r]) * 64 + p.tb_chan[t_r]
    if len(sending) != len(receiving):
        return False
    order_s, order_r = np.argsort(key_s, kind="stable"), np.argsort(key_r, kind="stable")
    if not np.array_equal(key_s[order_s], key_r[order_r]):
        return False                   # a receive waits for a send that never comes, or a message is left over
    matched = np.zeros(nsteps, np.int64)
    matched[receiving[order_r]] = sending[order_s]
    if (cnt[receiving[order_r]] != cnt[sending[order_s]]).any():
        return False
    # waits: the step before on the threadblock, the dependency, the matching send
    tb_row = np.empty(ntbs, np.int64)          # (rank row, id) -> threadblock row
    tbs_of = np.bincount(p.tb_gpu, minlength=len(p.gpu_id))
    first_of_gpu = np.concatenate(([0], np.cumsum(tbs_of)[:-1]))
    tb_row[first_of_gpu[p.tb_gpu] + p.tb_id] = np.arange(ntbs)
    position = np.arange(nsteps) - p.tb_start[step_tb]
    after = np.flatnonzero(position > 0)
    waits = np.flatnonzero(st["depid"] >= 0)
    dep_on = p.tb_start[tb_row[first_of_gpu[p.tb_gpu[step_tb[waits]]] + st["depid"][waits]]] + st["deps"][waits]
    src = np.concatenate((after - 1, dep_on, matched[receiving]))
    dst = np.concatenate((after, waits, receiving))
    wave = _waves(src, dst, nsteps)
    if wave is None:
        return False                   # deadlock
    nwaves = int(wave.max()) + 1 if nsteps else 0
    if nwaves > FEW_WAVES and nsteps < nwaves * MIN_STEPS_PER_WAVE:
        return None
    return _run_waves(p, step_tb, matched, wave, nwaves, coll, in_place, layout, root)


def _waves(src: np.ndarray, dst: np.ndarray, n: int) -> np.ndarray | None:
    """The wave of each of ``n`` steps (the longest chain of waits before it) given waits dst-after-src; None
    when some step never gets to run."""
    indegree = np.bincount(dst, minlength=n)
    order = np.argsort(src, kind="stable")
    succ = dst[order]
    start = np.concatenate(([0], np.cumsum(np.bincount(src, minlength=n))))
    wave = np.full(n, -1, np.int64)
    front = np.flatnonzero(indegree == 0)
    level = done = 0
    while len(front):
        wave[front] = level
        done += len(front)
        begin, count = start[front], start[front + 1] - start[front]
        total = int(count.sum())
        if not total:
            break
        nxt = succ[np.repeat(begin - np.cumsum(count) + count, count) + np.arange(total)]
        np.subtract.at(indegree, nxt, 1)
        front = sorted_unique(nxt[indegree[nxt] == 0])
        level += 1
    return wave if done == n else None


def _run_waves(p: FlatProgram, step_tb, matched, wave, nwaves: int, coll: str, in_place: bool, layout=None,
               root: int | None = None) -> bool:
    """Run the steps wave by wave on symbolic chunk values and check the collective's postcondition (a rooted
    one's from ``layout``, ``check.rooted_layout``)."""
    h, st = p.header, p.steps
    ngpus, per = h.ngpus, (h.nchunksperloop // h.ngpus if h.ngpus else 0)
    if layout is not None:
        per = layout[0]
    kind, cnt = st["type"], st["cnt"]
    sizes = np.stack([p.i_chunks, p.o_chunks, p.s_chunks], axis=1)       # per rank row
    base = np.concatenate(([0], np.cumsum(sizes.ravel())))[:-1].reshape(sizes.shape)
    ncells = int(sizes.sum())
    sends = _SENDS[kind]
    msg_base = np.zeros(len(kind), np.int64)
    msg_base[sends] = ncells + np.concatenate(([0], np.cumsum(cnt[sends])[:-1]))
    total = ncells + int(cnt[sends].sum())
    gpu = p.tb_gpu[step_tb]
    # one row per chunk a step moves: operand a (and b to reduce with), destinations d (a cell) and e (a message)
    moves = np.flatnonzero((cnt > 0) & (_READS[kind] | _RECVS[kind]))
    k = np.repeat(moves, cnt[moves])
    j = np.arange(len(k)) - np.repeat(np.cumsum(cnt[moves]) - cnt[moves], cnt[moves])
    kk = kind[k]
    src_cell = base[gpu[k], st["srcbuf"][k]] + st["srcoff"][k] + j
    dst_cell = base[gpu[k], st["dstbuf"][k]] + st["dstoff"][k] + j
    incoming = np.where(_RECVS[kk], msg_base[matched[k]] + j, -1) if len(k) else k
    a = np.where(kk == _RE, dst_cell, np.where(_READS[kk], src_cell, incoming))
    b = np.where(kk == _RE, src_cell, np.where(_REDUCING[kk], incoming, -1))
    d = np.where(_WRITES[kk], dst_cell, -1)
    e = np.where(_SENDS[kk], msg_base[k] + j, -1)
    order = np.argsort(wave[k], kind="stable")
    a, b, d, e = a[order], b[order], d[order], e[order]
    bounds = np.searchsorted(wave[k][order], np.arange(nwaves + 1))
    words = max(1, (ngpus + 63) // 64)
    idx = np.full(total, -3, np.int64)           # -3: never written (None), -2: reduced from two empties, -1: mixed
    mask = np.zeros((total, words), np.uint64)
    twice = np.zeros(total, dtype=bool)
    ranks = np.arange(ngpus)
    one_hot = np.zeros((ngpus, words), np.uint64)
    one_hot[ranks, ranks // 64] = np.left_shift(np.uint64(1), (ranks % 64).astype(np.uint64))
    row_of = np.empty(ngpus, np.int64)
    row_of[p.gpu_id] = np.arange(len(p.gpu_id))
    for r in range(ngpus):                                       # the inputs
        g = row_of[r]
        if layout is not None:
            if r not in layout[1]:
                continue
            buf, count = layout[1][r]
            count = max(0, min(count, int(sizes[g, BUF_CODE[buf]])))
            cells = base[g, BUF_CODE[buf]] + np.arange(count)
            idx[cells] = np.arange(count)
        elif coll == "allgather" and in_place:
            n_in = max(0, min(per, int(p.o_chunks[g]) - r * per))
            cells = base[g, 1] + r * per + np.arange(n_in)
            idx[cells] = np.arange(n_in)
        else:
            cells = base[g, 0] + np.arange(int(p.i_chunks[g]))
            idx[cells] = np.arange(len(cells))
        mask[cells] = one_hot[r]
    for w in range(nwaves):
        lo, hi = bounds[w], bounds[w + 1]
        if lo == hi:
            continue
        aa, bb, dd, ee = a[lo:hi], b[lo:hi], d[lo:hi], e[lo:hi]
        v_idx, v_mask, v_twice = idx[aa], take_rows(mask, aa), twice[aa]
        red = bb >= 0
        if red.any():
            red = np.flatnonzero(red)
            x = bb[red]
            ai, am, at = v_idx[red], take_rows(v_mask, red), v_twice[red]
            bi, bm, bt = idx[x], take_rows(mask, x), twice[x]
            a_none, b_none = ai == -3, bi == -3
            both = a_none & b_none
            r_idx = np.where(a_none | b_none, np.where(a_none, bi, ai), np.where(ai == bi, ai, -1))
            r_idx[both] = -2
            r_twice = at | bt | a_none | b_none | (am & bm).any(axis=1)
            v_idx[red], v_twice[red] = r_idx, r_twice
            put_rows(v_mask, red, am | bm)
        for where in (dd, ee):                  # the cells and messages written
            put = np.flatnonzero(where >= 0)
            to = where[put]
            idx[to], twice[to] = v_idx[put], v_twice[put]
            put_rows(mask, to, take_rows(v_mask, put))
    if layout is not None:
        return _rooted_postcondition(p, layout, root, base, idx, mask, twice, one_hot, row_of)
    return _postcondition(p, coll, in_place, per, base, idx, mask, twice, one_hot, row_of)


def _rooted_postcondition(p: FlatProgram, layout, root, base, idx, mask, twice, one_hot, row_of) -> bool:
    """``check._postcondition`` of a rooted file: every rank's ``results`` of ``check.rooted_layout``."""
    full = np.bitwise_or.reduce(one_hot, axis=0)
    for r, (buf, count, first, modulo, who) in layout[2].items():
        g = row_of[r]
        b = BUF_CODE[buf]
        if int((p.i_chunks, p.o_chunks, p.s_chunks)[b][g]) < count:
            return False
        k = np.arange(count)
        if who == "part":
            want_mask = one_hot[k // modulo]
        else:
            want_mask = np.broadcast_to(one_hot[root] if who == "root" else full, (count, one_hot.shape[1]))
        cells = base[g, b] + k
        if not (np.array_equal(idx[cells], first + k % modulo) and np.array_equal(mask[cells], want_mask)
                and not twice[cells].any()):
            return False
    return True


def _postcondition(p: FlatProgram, coll, in_place, per, base, idx, mask, twice, one_hot, row_of) -> bool:
    ngpus, c = p.header.ngpus, p.header.nchunksperloop
    full = np.bitwise_or.reduce(one_hot, axis=0) if ngpus else None
    for r in range(ngpus):
        g = row_of[r]
        if coll == "allgather":
            buf, need = 1, ngpus * per
            want_idx, want_mask = np.tile(np.arange(per), ngpus), np.repeat(one_hot, per, axis=0)
        elif coll == "reducescatter":
            buf, need = (0, (r + 1) * per) if in_place else (1, per)
            want_idx, want_mask = r * per + np.arange(per), np.broadcast_to(full, (per, len(full)))
        elif coll == "allreduce":
            buf, need = (0 if in_place else 1), c
            want_idx, want_mask = np.arange(c), np.broadcast_to(full, (c, len(full)))
        else:
            buf, need = (0 if in_place else 1), ngpus * per
            want_idx, want_mask = np.tile(r * per + np.arange(per), ngpus), np.repeat(one_hot, per, axis=0)
        size = (p.i_chunks, p.o_chunks)[buf][g]
        if size < need:
            return False
        first = base[g, buf] + (r * per if coll == "reducescatter" and in_place else 0)
        cells = first + np.arange(len(want_idx))
        if not (np.array_equal(idx[cells], want_idx) and np.array_equal(mask[cells], want_mask)
                and not twice[cells].any()):
            return False
    return True
