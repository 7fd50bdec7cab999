"""The parts of the lowering (``lower.py``) that every layout shares: ``Lowering`` (a schedule's instructions and
their dependencies, before they are placed on threadblocks), the transfers cut into instructions of fewer than
MAX_COUNT chunks (``_items``), the check of the runtime parser's XML nodes per rank
(``_check_instructions_per_rank``), the scratch slots of receives that reduce without full ops
(``_reduce_slots``), and the instructions of the allgather, the allreduce and the reduce-scatter in place
(``_instructions``) and out of place (``_split_home_instructions``, which the rooted reduce reuses). The layouts
themselves are described in ``lower.py``'s module docstring."""
from __future__ import annotations

from collections import defaultdict

import numpy as np

from topologies.model import Topology

from .place import (CPY, I_BUF, LOCAL, O_BUF, RE, R, RECV, RRC, S, S_BUF, SEND, Instructions, Placed, Rows,
                    assemble, channels, dependencies, fuse_forwards, merge_pairs)
from .program import MAX_CHANNELS, MAX_COUNT, MAX_NODES_PER_RANK, MAX_TBS_PER_CHANNEL, OPS_PER_THREADBLOCK, Algo, \
    OverLimit

_BUF_CODE = {"i": I_BUF, "o": O_BUF, "s": S_BUF}

class Lowering:
    """A schedule's instructions in program order with their data dependencies (``place.Instructions``), before
    they are placed on threadblocks: the part of the lowering that does not depend on the instructions per
    threadblock or on merging, so a search for a program within a runtime's limits makes it once and ``build``s
    each try from it. ``item_link``/``item_copy``: the link and copy of every transfer an instruction's ``slot``
    names."""

    def __init__(self, topo, coll, ins: Instructions, item_link, item_copy, per, proto, name, min_bytes, max_bytes,
                 in_place, scratch, full_ops: bool = True, *, buffers: "list[tuple[int, int]] | None" = None,
                 nchunks: int | None = None, root: int | None = None):
        self.topo, self.coll, self.ins, self.item_link, self.item_copy = topo, coll, ins, item_link, item_copy
        self.per, self.proto, self.name, self.min_bytes, self.max_bytes = per, proto, name, min_bytes, max_bytes
        self.in_place, self.scratch, self.full_ops = in_place, scratch, full_ops
        # a rooted collective's own (i, o) chunks per rank, nchunksperloop and root (``_lower_rooted``)
        self.buffers, self.nchunks, self.root = buffers, nchunks, root

    def build(self, ops_per_tb: int = OPS_PER_THREADBLOCK, merge: bool = False,
              tbs_per_channel: int = MAX_TBS_PER_CHANNEL, max_channels: int = MAX_CHANNELS) -> Algo:
        """The program IR of ``place`` with the same arguments."""
        return self.place(ops_per_tb, merge, tbs_per_channel, max_channels).algo()

    def place(self, ops_per_tb: int = OPS_PER_THREADBLOCK, merge: bool = False,
              tbs_per_channel: int = MAX_TBS_PER_CHANNEL, max_channels: int = MAX_CHANNELS) -> Placed:
        """The program, as columns (``place.Placed``: its ``text`` is the file): a link's instructions fill a
        threadblock up to ``ops_per_tb`` and continue on a further channel, no channel getting more than
        ``tbs_per_channel`` send (or receive) threadblocks of a rank (``place.channels``); ``merge`` pairs send and
        receive threadblocks (``place.merge_pairs``) to halve their number and, for a kernel with full ops, fuses a
        receive and the send that forwards the same chunks into one ``rcs``/``rrcs`` step
        (``place.fuse_forwards``). NotApplicable when more than ``max_channels`` channels would be needed."""
        ins, n = self.ins, self.topo.n
        of_item = channels(self.topo.links, self.item_link, self.item_copy, ops_per_tb, tbs_per_channel,
                           max_channels)
        local = ins.slot < 0
        chan = np.where(local, 0, of_item[np.maximum(ins.slot, 0)] if len(of_item) else 0)
        node, role, kind = ins.node, ins.role, ins.kind
        speer = np.where(role == SEND, ins.peer, -1)
        rpeer = np.where(role == RECV, ins.peer, -1)
        keep, src, dst = None, ins.src, ins.dst
        if merge:
            role, speer, rpeer = merge_pairs(node, role, speer, rpeer, chan, n)
            tb = np.unique(((node * 4 + role) * (n + 1) + speer + 1) * 64 + chan, return_inverse=True)[1]
            if self.full_ops:
                keep, kind, src, dst = fuse_forwards(ins, role, tb, kind)
            if keep is not None and not keep.all():
                node, role, speer, rpeer, chan = node[keep], role[keep], speer[keep], rpeer[keep], chan[keep]
        n_per, coll = self.per, self.coll
        sizes = {("allgather", True): (0, n * n_per), ("allgather", False): (n_per, n * n_per),
                 ("reduce_scatter", True): (n * n_per, 0), ("reduce_scatter", False): (n * n_per, n_per),
                 ("allreduce", True): (n * n_per, 0), ("allreduce", False): (n * n_per, n * n_per),
                 ("alltoall", False): (n * n_per, n * n_per)}
        if self.buffers is not None:
            io = self.buffers
        else:
            io = [sizes[(coll.value, self.in_place)]] * n
        buffers = [(*io[r], (self.scratch or {}).get(r, 0)) for r in range(n)]
        inplace, outofplace = (1, 0) if self.in_place else (0, 1)
        nchunks = n * n_per if self.nchunks is None else self.nchunks
        header = dict(name=self.name[:63], proto=self.proto, nchunksperloop=nchunks, ngpus=n, coll=coll.value,
                      inplace=inplace, outofplace=outofplace, min_bytes=self.min_bytes, max_bytes=self.max_bytes)
        return assemble(n, node, role, speer, rpeer, chan, kind, ins, keep, src, dst, header, buffers)


def _items(cols, per: int, copies: int, instances: int) -> dict[str, np.ndarray]:
    """Every transfer of every copy and piece as instructions of fewer than MAX_COUNT chunks, sorted by (wave,
    step, link, copy, first chunk, count, reduce): columns ``wave``, ``step``, ``link``, ``copy``, ``first``,
    ``cnt``, ``reduce``."""
    k = copies * instances
    t = np.repeat(np.arange(len(cols.step)), k)
    q = np.tile(np.arange(k), len(cols.step))              # copy * instances + piece
    start = cols.shard[t] * per + q * cols.one + cols.lo[t]
    end = cols.shard[t] * per + q * cols.one + cols.hi[t]
    pieces = np.maximum(end - start + MAX_COUNT - 2, 0) // (MAX_COUNT - 1)
    which = np.repeat(np.arange(len(t)), pieces)
    first = start[which] + (np.arange(len(which)) - np.repeat(np.cumsum(pieces) - pieces, pieces)) * (MAX_COUNT - 1)
    cnt = np.minimum(end[which] - first, MAX_COUNT - 1)
    tt = t[which]
    step, link, copy, red = cols.step[tt], cols.link[tt], q[which] // instances, cols.reduce[tt]
    wave = step + q[which] % instances
    order = np.lexsort((red, cnt, first, copy, link, step, wave))
    return {"wave": wave[order], "step": step[order], "link": link[order], "copy": copy[order],
            "first": first[order], "cnt": cnt[order], "reduce": red[order]}


def _check_instructions_per_rank(src: np.ndarray, dst: np.ndarray, per: int, local_reduce=None) -> None:
    """OverLimit (a NotApplicable) when a rank would run more instructions than the runtime parser's XML nodes per rank
    (``local_reduce``: the transfers whose receive is followed by an ``re`` of its own)."""
    if not len(src):
        return
    n = int(max(src.max(), dst.max())) + 1
    count = np.bincount(src, minlength=n) + np.bincount(dst, minlength=n)
    if local_reduce is not None:
        count += np.bincount(dst[local_reduce], minlength=n)
    most = int(count.max())
    if most + 1 + n <= MAX_NODES_PER_RANK:
        return
    ranks, seen_at = np.unique(np.stack([src, dst], axis=1).ravel(), return_index=True)
    busiest = int(ranks[np.flatnonzero(count[ranks] == most)[np.argmin(seen_at[count[ranks] == most])]])
    raise OverLimit(f"rank {busiest} would run {most} instructions (shards cut into {per} chunks), above "
                    f"the runtime parser's {MAX_NODES_PER_RANK} XML nodes per rank; use fewer chunks per "
                    "shard, fewer copies or instances, or a schedule with fewer transfers",
                    "XML nodes per rank", most + 1 + n, MAX_NODES_PER_RANK)


def _reduce_slots(dst: np.ndarray, items: dict, n: int) -> tuple[np.ndarray, np.ndarray]:
    """Scratch slots for the receives that reduce, without full ops (``lowering``'s docstring): every rank keeps
    one slot per chunk it ever reduces into, in chunk order from slot 0, so an instruction's run of chunks has a
    run of slots. Returns (the first slot of each item, -1 where it does not reduce; the slots each rank
    uses)."""
    red = items["reduce"].astype(bool)
    first, cnt = items["first"], items["cnt"]
    slot = np.full(len(first), -1, np.int64)
    size = np.zeros(n, np.int64)
    if not red.any():
        return slot, size
    at = np.flatnonzero(red)
    rank, lo, hi = dst[at], first[at], first[at] + cnt[at]
    order = np.lexsort((lo, rank))
    rank_o, lo_o, hi_o = rank[order], lo[order], hi[order]
    # merge each rank's intervals: a new run starts where the rank changes or a gap opens
    width = int(hi_o.max()) + 1
    reach = np.maximum.accumulate(rank_o * width + hi_o) - rank_o * width   # the furthest end so far, per rank
    new_run = np.ones(len(order), dtype=bool)
    new_run[1:] = (rank_o[1:] != rank_o[:-1]) | (lo_o[1:] > reach[:-1])
    run = np.cumsum(new_run) - 1
    run_lo = lo_o[new_run]
    run_hi = np.zeros(len(run_lo), np.int64)
    np.maximum.at(run_hi, run, hi_o)
    run_rank = rank_o[new_run]
    length = run_hi - run_lo
    before = np.cumsum(length) - length                    # slots of earlier runs, all ranks
    rank_first_run = np.searchsorted(run_rank, run_rank)
    run_slot = before - before[rank_first_run]
    slot[at[order]] = run_slot[run] + lo_o - run_lo[run]
    np.add.at(size, run_rank, length)
    return slot, size


def _instructions(items: dict, src: np.ndarray, dst: np.ndarray, work: int, first_copies: list,
                  slots: tuple | None = None) -> Instructions:
    """The instructions of an allgather, an allreduce or an in-place reduce-scatter: the local copies, then for
    every batch (wave, step) its sends and then its receives, in item order, all in the ``work`` buffer; a send
    reads its chunks, a receive (or copy) writes them. With ``slots`` (``_reduce_slots``; no full ops) a receive
    that reduces is an ``r`` into its scratch slots followed by an ``re`` of them into the chunks."""
    count = len(src)
    ncpy = len(first_copies)
    red = items["reduce"].astype(bool)
    extra = (red if slots is not None else np.zeros(count, dtype=bool)).astype(np.int64)
    m = ncpy + 2 * count + int(extra.sum())
    wave, step = items["wave"], items["step"]
    new = np.ones(count, dtype=bool)
    new[1:] = (wave[1:] != wave[:-1]) | (step[1:] != step[:-1])
    starts = np.flatnonzero(new)
    batch = np.cumsum(new) - 1
    batch_start, batch_len = starts[batch], np.diff(np.append(starts, count))[batch]
    at = np.arange(count)
    extra_before = np.cumsum(extra) - extra                 # ``re`` instructions of earlier items
    base = ncpy + 2 * batch_start + extra_before[batch_start]
    send_op = base + at - batch_start
    recv_op = base + batch_len + at - batch_start + extra_before - extra_before[batch_start]
    cols = {name: np.empty(m, np.int64) for name in ("node", "role", "peer", "kind", "sbuf", "soff", "dbuf",
                                                     "doff", "cnt", "slot")}
    if ncpy:
        r, a, b, c = (np.array(v, dtype=np.int64) for v in zip(*first_copies))
        for name, value in (("node", r), ("role", LOCAL), ("peer", -1), ("kind", CPY), ("sbuf", I_BUF),
                            ("soff", a), ("dbuf", O_BUF), ("doff", b), ("cnt", c), ("slot", -1)):
            cols[name][:ncpy] = value
    first, cnt = items["first"], items["cnt"]
    split = extra.astype(bool)
    recv_kind = np.where(red & ~split, RRC, R)
    recv_buf = np.where(split, S_BUF, work)
    recv_off = np.where(split, slots[0] if slots is not None else first, first)
    for ops, values in ((send_op, (src, SEND, dst, S)), (recv_op, (dst, RECV, src, recv_kind))):
        for name, value in zip(("node", "role", "peer", "kind"), values):
            cols[name][ops] = value
        for name, value in (("sbuf", work), ("soff", first), ("dbuf", work), ("doff", first), ("cnt", cnt),
                            ("slot", at)):
            cols[name][ops] = value
    cols["sbuf"][recv_op] = cols["dbuf"][recv_op] = recv_buf
    cols["soff"][recv_op] = cols["doff"][recv_op] = recv_off
    if split.any():         # the local reduction, on the receiving threadblock right after its receive
        re_op = recv_op[split] + 1
        for name, value in (("node", dst[split]), ("role", RECV), ("peer", src[split]), ("kind", RE),
                            ("sbuf", S_BUF), ("soff", recv_off[split]), ("dbuf", work), ("doff", first[split]),
                            ("cnt", cnt[split]), ("slot", at[split])):
            cols[name][re_op] = value
    # touches in program order: every instruction its destination (a send: its source), and an ``re`` first reads
    # its scratch slots
    ops = np.arange(m)
    is_re = cols["kind"] == RE
    t_op = np.concatenate((ops, ops[is_re]))
    t_sub = np.concatenate((np.ones(m, np.int64), np.zeros(int(is_re.sum()), np.int64)))
    t_buf = np.concatenate((cols["dbuf"], cols["sbuf"][is_re]))
    t_off = np.concatenate((cols["doff"], cols["soff"][is_re]))
    t_cnt = np.concatenate((cols["cnt"], cols["cnt"][is_re]))
    t_writes = np.concatenate((cols["kind"] != S, np.zeros(int(is_re.sum()), dtype=bool)))
    order = np.lexsort((t_sub, t_op))
    t_node = cols["node"][t_op]
    ins_src, ins_dst = dependencies(t_op[order], t_node[order], t_buf[order], t_off[order], t_cnt[order],
                                    t_writes[order], m)
    return Instructions(**cols, ends=np.zeros(m, dtype=bool), src=ins_src, dst=ins_dst)


def _split_home_instructions(topo: Topology, items: dict, per: int, full_ops: bool = True, new_home=None,
                             finals=None, home: dict | None = None) -> tuple[Instructions, dict]:
    """The out-of-place reduce-scatter's instructions (``lowering``'s docstring): transfers cut where the buffer
    their chunks live in changes (``_split_by_home``), receives naming both ends, and a final copy of every chunk
    of the rank's own shard that no step reduced into; and each rank's scratch chunks. Without ``full_ops`` a
    receive that reduces is an ``r`` and an ``re``: into the result's place, then the rank's contribution added,
    where the two differ; into scratch slot N L + chunk (after the partial sums), then reduced, where they are
    the same.

    The rooted reduce (``_lower_rooted``) is the same with its own rules: ``new_home(rank, chunk)`` (buffer,
    offset) where a rank's reduction leaves a chunk (default: the reduce-scatter's, ``o`` for the rank's own
    shard, scratch slot = chunk otherwise), ``finals`` the (rank, first chunk, end, shift) runs copied from ``i``
    to ``o`` (at chunk - shift) where no step reduced into them (default: each rank's own shard), ``home`` the
    chunks that start elsewhere than at ``i``, chunk (default: none)."""
    rows = Rows()
    landing = topo.n * per            # scratch slots for receives that reduce in place, without full ops
    used_landing = False
    home = {} if home is None else home

    if new_home is None:
        def new_home(rank: int, first: int) -> tuple[str, int]:
            return ("o", first - rank * per) if first // per == rank else ("s", first)
    if finals is None:
        finals = [(r, r * per, (r + 1) * per, r * per) for r in range(topo.n)]

    by_batch: dict[tuple, list] = defaultdict(list)
    for index, it in enumerate(zip(items["wave"].tolist(), items["step"].tolist(), items["link"].tolist(),
                                   items["copy"].tolist(), items["first"].tolist(), items["cnt"].tolist(),
                                   items["reduce"].tolist())):
        by_batch[it[:2]].append((*it[2:], index))
    for batch_key in sorted(by_batch):
        batch = _split_by_home(topo, by_batch[batch_key], home, new_home)
        for link, _, first, cnt, red, index, (buf, off), _, _ in batch:   # sends read what the batch starts with
            l = topo.links[link]
            op = rows.add(l.src, SEND, l.dst, S, _BUF_CODE[buf], off, _BUF_CODE[buf], off, cnt, index)
            rows.touch(op, l.src, _BUF_CODE[buf], off, cnt, False)
        for link, _, first, cnt, red, index, _, src, dst in batch:
            l = topo.links[link]
            s_buf, d_buf = _BUF_CODE[src[0]], _BUF_CODE[dst[0]]
            if red and not full_ops:
                at = (S_BUF, landing + first) if (s_buf, src[1]) == (d_buf, dst[1]) else (d_buf, dst[1])
                used_landing |= at[0] == S_BUF and at[1] >= landing
                op = rows.add(l.dst, RECV, l.src, R, *at, *at, cnt, index, True)
                rows.touch(op, l.dst, *at, cnt, True)
                other = at if at != (d_buf, dst[1]) else (s_buf, src[1])     # what the re adds to the result
                op = rows.add(l.dst, RECV, l.src, RE, *other, d_buf, dst[1], cnt, index, True)
                rows.touch(op, l.dst, *other, cnt, False)
                rows.touch(op, l.dst, d_buf, dst[1], cnt, True)
                continue
            op = rows.add(l.dst, RECV, l.src, RRC if red else R, s_buf, src[1], d_buf, dst[1], cnt, index, True)
            if red:
                rows.touch(op, l.dst, s_buf, src[1], cnt, False)
            rows.touch(op, l.dst, d_buf, dst[1], cnt, True)
    for r, lo, hi, shift in finals:     # a chunk of the result that no step reduced into is still in i: copy it
        rest = [c for c in range(lo, hi) if (r, c) not in home]
        for start, cnt in _runs(rest):
            op = rows.add(r, LOCAL, -1, CPY, I_BUF, start, O_BUF, start - shift, cnt)
            rows.touch(op, r, O_BUF, start - shift, cnt, True)
    size = 2 * landing if used_landing else landing
    return rows.instructions(), {r: size for r in range(topo.n)}


def _split_by_home(topo: Topology, batch: list, home: dict, new_home) -> list:
    """One batch of an out-of-place reduce-scatter with each transfer cut where the buffer its chunks live in
    changes, on the sender (read at the start of the batch) or on the receiver (read in batch order, since two
    reductions into one chunk in a batch follow each other); each piece gains (send source, receive source,
    receive destination). Updates ``home`` to where the receives leave the chunks."""
    start_home = dict(home)
    out = []
    for link, copy, first, cnt, red, index in batch:
        l = topo.links[link]
        piece = None
        for c in range(first, first + cnt):
            s_at = start_home.get((l.src, c), ("i", c))
            r_at = home.get((l.dst, c), ("i", c))
            if piece and piece[-1] == (s_at[0], r_at[0]):
                piece[3] += 1
            else:
                piece = [link, copy, c, 1, red, index, s_at, r_at, (s_at[0], r_at[0])]
                out.append(piece)
            home[(l.dst, c)] = new_home(l.dst, c)
    return [(link, copy, c, n, red, index, s_at, r_at, new_home(topo.links[link].dst, c))
            for link, copy, c, n, red, index, s_at, r_at, _ in out]


def _runs(chunks: list[int]):
    """Consecutive runs of ``chunks`` (sorted) as (first, count) with count < MAX_COUNT."""
    start = prev = None
    for c in chunks:
        if start is not None and c == prev + 1 and c - start < MAX_COUNT - 1:
            prev = c
            continue
        if start is not None:
            yield start, prev - start + 1
        start = prev = c
    if start is not None:
        yield start, prev - start + 1
