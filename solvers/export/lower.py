"""Lowering a verified schedule to the MSCCL program IR of ``program.py`` (notes/msccl-xml-and-anchors.md
section 3): ``lowering`` and its all-to-all variant ``_lower_alltoall`` make the instructions and their
dependencies, which ``place.py`` places on threadblocks and channels (``Lowering.place``, ``Lowering.build``).

Lowering (``lower``). Shards are cut into L equal chunks, L the common denominator of the schedule's chunk bounds,
so nchunksperloop = N L and a transfer of [lo, hi) of shard s is chunks s L + lo L .. s L + hi L (split into
instructions of at most 71 chunks). Allgather runs in place in ``o``; reduce-scatter reads and reduces in ``i`` and
copies the rank's own shard to ``o`` at the end; allreduce runs in place in ``i``. Every link gets a threadblock on
each end (send on the sender, receive on the receiver; the k-th parallel link uses channel k), whose steps follow
the schedule's step order, so the k-th send on a connection meets the k-th receive. Cross-threadblock dependencies
come from the chunks each instruction reads and writes: a send waits for the last write of its chunks, a receive
for the last write and the reads since (write after read), and concurrent reductions into one chunk are chained.
Every dependency points to an earlier (step, send-before-receive) position, so the lowered program cannot deadlock.

All-to-all (``_lower_alltoall``, msccl-tools' ``AllToAll`` layout, out of place only). With L the common denominator
of the schedule's bounds and N, nchunksperloop = L = N m: shard s is rank s's whole input buffer ``i``, so its
piece for rank j, [j/N, (j+1)/N), is input chunks j m .. j m + m - 1, and rank r's output chunk s m + k receives
input chunk r m + k of rank s. A rank keeps a piece it relays (meant for a third rank) in its scratch buffer ``s``
(one slot per chunk it relays, laid out in (shard, chunk) order), so a send reads from ``i`` (its own shard),
``o`` (its own piece of another shard) or ``s``; its own piece goes from ``i`` to ``o`` by a local ``cpy`` first,
as the out-of-place allgather's own shard does. Sends and receives name both ends: src is the sender's slot and
dst the receiver's. A custom collective is refused: MSCCL cannot call it.

Rooted collectives (``_lower_rooted``; the IR's shard s of M/N bytes is cut into P = c I L chunks, as above). No
runtime gives the program the call's root (``program.ROOTED``), so a file serves one root R, named in its algo
name as ``root=R``; its buffers follow the runtimes' count x sizeMultiplier / nchunksperloop elements per chunk
with sizeMultiplier 1 (msccl-executor-nccl src/misc/msccl/msccl_parser.cc:330-373, msccl_setup.cc:475; RCCL's
copy of both; microsoft/msccl src/collectives/device/broadcast.h:89 and reduce.h:98), and each rank's i and o
are declared only where the call hands it that buffer (NCCL: recvbuff counts at the root only for reduce and
gather, sendbuff at the root only for broadcast and scatter):

* broadcast and reduce: count is the whole M-byte buffer, so nchunksperloop = N P and chunk s P + k is piece k
  of shard s. Broadcast: the root's input is its i (out of place) or o (in place, sendbuff == recvbuff; i_chunks
  0); every rank ends with o = the root's input; o_chunks = N P everywhere, i_chunks N P at the root out of
  place and 0 elsewhere. Out of place the root copies i to o locally and sends from i. Reduce: rank r's
  contribution is its i (the root's in place: its o); partial sums are kept where the reduce-scatter's
  out-of-place lowering keeps them (``_split_home_instructions``): at the root in o, elsewhere in scratch slot
  = chunk, so no rank writes its input; the root's o ends with every chunk reduced (out of place, chunks no
  step reduced into are copied from i). Non-roots: i_chunks N P, o_chunks 0. Both default to the in-place call
  (ncclBcast is one); ``in_place=False`` writes the out-of-place file.
* gather and scatter (rccl only: ``program.Target.refusal``): count is one rank's sendcount (recvcount), so
  nchunksperloop = P. Gather: rank s's shard is its i (P chunks); the root's o (N P chunks) ends with shard s at
  s P .. s P + P - 1; the root copies its own shard i -> o. Scatter: the root's i holds N P chunks (shard s at
  s P); rank s's o (P chunks) ends with shard s; the root copies its own. A rank that only relays a chunk keeps
  it in scratch, one slot per relayed chunk in chunk order. Out of place only: the in-place calls
  (sendbuff == recvbuff + rank x count, and the reverse) put every rank's part inside an N-part buffer only the
  root holds.
"""
from __future__ import annotations

from collections import Counter, defaultdict
from math import lcm

import numpy as np

from topologies.model import Topology

from ..core.errors import NotApplicable
from ..core.schedule import Collective, Schedule, columns
from .place import (CPY, I_BUF, LOCAL, O_BUF, RE, R, RECV, RRC, S, S_BUF, SEND, Instructions, Placed, Rows,
                    assemble, channels, dependencies, fuse_forwards, merge_pairs)
from .program import (MAX_CHANNELS, MAX_CHUNKS_PER_LOOP, MAX_COUNT, MAX_NODES_PER_RANK, MAX_TBS_PER_CHANNEL,
                      OPS_PER_THREADBLOCK, PROTOCOLS, ROOT_TAG, Algo)

_BUF_CODE = {"i": I_BUF, "o": O_BUF, "s": S_BUF}


def lower(topo: Topology, schedule: Schedule, *, ops_per_tb: int = OPS_PER_THREADBLOCK, merge: bool = False,
          tbs_per_channel: int = MAX_TBS_PER_CHANNEL, max_channels: int = MAX_CHANNELS, **kwargs) -> Algo:
    """The MSCCL program of a verified schedule (see the module docstring): ``lowering(topo, schedule, **kwargs)``
    placed on threadblocks by ``Lowering.build(ops_per_tb, merge, tbs_per_channel, max_channels)``."""
    return lowering(topo, schedule, **kwargs).build(ops_per_tb, merge, tbs_per_channel, max_channels)


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


def lowering(topo: Topology, schedule: Schedule, *, proto: str = "Simple", name: str | None = None,
             min_bytes: int = 0, max_bytes: int = 1 << 40, in_place: bool | None = None, copies: int = 1,
             instances: int = 1, full_ops: bool = True) -> Lowering:
    """The instructions of a verified schedule's MSCCL program and their dependencies (see the module docstring).
    ``in_place`` picks the call the file serves (default: in place for allgather and allreduce, out of place for
    reduce-scatter). Out of place, the allgather first copies the input shard into its slot of ``o`` and the
    allreduce copies ``i`` into ``o`` and works there; the reduce-scatter never writes its input: a reduction reads
    the rank's own contribution from ``i`` and writes the partial sum to ``o`` (its own shard) or to scratch ``s``
    (other shards), where later steps find it. In place, the reduce-scatter leaves rank r's result in its own slot
    of ``i``. An all-to-all is lowered out of place (module docstring); a custom collective is refused. A rooted
    collective is lowered for its schedule's root (``_lower_rooted``, module docstring): broadcast and reduce in
    place by default, gather and scatter out of place only.

    Performance knobs. ``copies`` c runs c copies of the schedule on their own threadblocks and channels, copy j
    on the j-th 1/c of every shard (the runtime's channels: c threadblock pairs share each link). ``instances``
    I cuts every chunk further into I pieces that the same threadblocks send one after the other, piece p of
    step t in wave p + t (pipelining inside one loop of the runtime). Shards are then cut into c I L chunks.

    ``full_ops=False`` lowers for a kernel built without the fused receive steps (RCCL's: ``program.FULL_OPS``):
    a receive that reduces becomes a plain ``r`` and a local ``re`` on the same threadblock right after it. Where
    the partial sum stays in place (the receiver's own copy of the chunk is both summand and result), the ``r``
    lands in scratch: each rank's scratch holds one slot per chunk it ever reduces into, in chunk order
    (``_reduce_slots``); the out-of-place reduce-scatter, whose scratch already keeps partial sums at slot c for
    chunk c, lands them at slot N L + c. Where the result goes elsewhere (the out-of-place reduce-scatter moving
    a partial sum out of ``i``), the ``r`` lands in the result's place and the ``re`` adds the rank's own
    contribution to it. Nothing is fused into ``rcs``/``rrcs``. The dependencies come from the same chunk
    touches, the scratch slots included."""
    _refuse_custom(schedule)
    if topo.switch_nodes:
        raise NotApplicable("MSCCL lowering needs GPUs linked directly; this topology has switches")
    if proto not in PROTOCOLS:
        raise NotApplicable(f"unknown protocol {proto!r} (choose from {', '.join(PROTOCOLS)})")
    if not (isinstance(copies, int) and isinstance(instances, int) and copies >= 1 and instances >= 1):
        raise NotApplicable(f"copies and instances must be positive integers, got {copies!r} and {instances!r}")
    cols = columns(schedule)
    if cols is None:
        raise NotApplicable("the schedule's chunk bounds have no common denominator small enough for chunks")
    coll = schedule.collective
    if coll.rooted:
        return _lower_rooted(topo, schedule, cols, proto, name, min_bytes, max_bytes, in_place, copies, instances,
                             full_ops)
    if coll is Collective.ALLTOALL:
        if copies * instances != 1:
            raise NotApplicable("an all-to-all is lowered as one copy of its schedule (copies = instances = 1)")
        return _lower_alltoall(topo, schedule, cols, proto, name, min_bytes, max_bytes, in_place)
    n, one = topo.n, cols.one
    per = one * copies * instances                       # chunks of a shard in the file
    if n * per > MAX_CHUNKS_PER_LOOP:
        raise NotApplicable(f"the schedule cuts shards into {per} chunks, so nchunksperloop would be {n * per}; "
                            f"use a chunked schedule (for BFB: fewer chunks per shard, e.g. bfb_chunked) or "
                            "fewer copies and instances")
    if in_place is None:
        in_place = coll is not Collective.REDUCE_SCATTER
    work = O_BUF if coll is Collective.ALLGATHER or (coll is Collective.ALLREDUCE and not in_place) else I_BUF
    items = _items(cols, per, copies, instances)
    link_src, link_dst = topo.link_ends
    src, dst = link_src[items["link"]], link_dst[items["link"]]
    _check_instructions_per_rank(src, dst, per, None if full_ops else items["reduce"].astype(bool))
    first_copies = []            # out of place: (rank, source offset in i, offset in o, count) before anything
    if not in_place and coll is Collective.ALLGATHER:
        first_copies = [(r, a, r * per + a, min(per - a, MAX_COUNT - 1)) for r in range(n)
                        for a in range(0, per, MAX_COUNT - 1)]
    elif not in_place and coll is Collective.ALLREDUCE:
        first_copies = [(r, a, a, min(n * per - a, MAX_COUNT - 1)) for r in range(n)
                        for a in range(0, n * per, MAX_COUNT - 1)]
    scratch = None
    if coll is Collective.REDUCE_SCATTER and not in_place:
        ins, scratch = _split_home_instructions(topo, items, per, full_ops)
    else:
        slots = None if full_ops else _reduce_slots(dst, items, n)
        ins = _instructions(items, src, dst, work, first_copies, slots)
        if slots is not None:
            scratch = dict(enumerate(slots[1].tolist()))
    return Lowering(topo, coll, ins, items["link"], items["copy"], per, proto,
                    name or f"{schedule.algo or 'schedule'} {coll.value}", min_bytes, max_bytes, in_place, scratch,
                    full_ops)


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
    """NotApplicable when a rank would run more instructions than the runtime parser's XML nodes per rank
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
    raise NotApplicable(f"rank {busiest} would run {most} instructions (shards cut into {per} chunks), above "
                        f"the runtime parser's {MAX_NODES_PER_RANK} XML nodes per rank; use fewer chunks per "
                        "shard, fewer copies or instances, or a schedule with fewer transfers")


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


def _lower_rooted(topo: Topology, schedule: Schedule, cols, proto: str, name: str | None, min_bytes: int,
                  max_bytes: int, in_place: bool | None, copies: int, instances: int, full_ops: bool) -> Lowering:
    """The rooted layouts of the module docstring: broadcast and reduce over the whole buffer (nchunksperloop
    N P), gather and scatter over one rank's part (nchunksperloop P), each for the one root the file names."""
    coll, root, n = schedule.collective, schedule.root, topo.n
    if root is None or not 0 <= root < n:
        raise NotApplicable(f"a {coll.value} schedule needs a root among ranks 0..{n - 1}, not {root!r}")
    per = cols.one * copies * instances
    whole = coll in (Collective.BROADCAST, Collective.REDUCE)
    if n * per > MAX_CHUNKS_PER_LOOP:
        raise NotApplicable(f"the schedule cuts shards into {per} chunks, so the {coll.value}'s buffer would be "
                            f"{n * per} chunks; use fewer chunks per shard, copies or instances")
    if in_place is None:
        in_place = whole
    if in_place and not whole:
        raise NotApplicable(f"a {coll.value} is lowered out of place only: its in-place call puts each rank's part "
                            "at rank x count inside a buffer of all N parts, which only the root holds (--place out)")
    items = _items(cols, per, copies, instances)
    link_src, link_dst = topo.link_ends
    src, dst = link_src[items["link"]], link_dst[items["link"]]
    _check_instructions_per_rank(src, dst, per, None if full_ops else items["reduce"].astype(bool))
    c = n * per
    if coll is Collective.REDUCE:
        home = {(root, k): ("o", k) for k in range(c)} if in_place else {}
        ins, scratch = _split_home_instructions(
            topo, items, per, full_ops, new_home=lambda rank, first: ("o", first) if rank == root else ("s", first),
            finals=[] if in_place else [(root, 0, c, 0)], home=home)
        io = [((0 if in_place else c), c) if r == root else (c, 0) for r in range(n)]
    else:
        if items["reduce"].any():
            raise NotApplicable(f"a {coll.value} schedule only copies; this one reduces")
        ins, scratch = _rooted_copy_instructions(topo, coll, root, items, per, in_place)
        if coll is Collective.BROADCAST:
            io = [((0 if in_place else c), c) if r == root else (0, c) for r in range(n)]
        elif coll is Collective.GATHER:
            io = [(per, c) if r == root else (per, 0) for r in range(n)]
        else:
            io = [(c, per) if r == root else (0, per) for r in range(n)]
    label = name or f"{schedule.algo or 'schedule'} {coll.value}"
    tag = ROOT_TAG % root
    return Lowering(topo, coll, ins, items["link"], items["copy"], per, proto, label[:63 - len(tag)] + tag, min_bytes,
                    max_bytes, in_place, scratch, full_ops, buffers=io, nchunks=c if whole else per, root=root)


def _rooted_copy_instructions(topo: Topology, coll: Collective, root: int, items: dict, per: int,
                              in_place: bool) -> tuple[Instructions, dict]:
    """The instructions of a broadcast, gather or scatter (module docstring): the root's local copy of its own
    part first (out of place), then for every batch (wave, step) its sends, then its receives, each naming the
    slot where its rank keeps the chunks (``where``); a rank keeps what it only relays in scratch, one slot per
    chunk, in chunk order. Returns the instructions and each rank's scratch chunks."""
    n = topo.n
    out_of_place_root = not in_place

    def where(rank: int, first: int, sending: bool):
        """(buffer, offset) of chunk ``first`` (a chunk of the whole N P, shard first // P) on ``rank``, or None:
        scratch."""
        shard, k = divmod(first, per)
        if coll is Collective.BROADCAST:
            return (I_BUF, first) if rank == root and sending and out_of_place_root else (O_BUF, first)
        if coll is Collective.GATHER:
            if rank == shard and sending:
                return I_BUF, k
            return (O_BUF, first) if rank == root else None
        if rank == root and sending:                           # scatter: the root holds every part in i
            return I_BUF, first
        return (O_BUF, k) if rank == shard else None

    link_src, link_dst = topo.link_ends
    first_l, cnt_l, link_l = items["first"].tolist(), items["cnt"].tolist(), items["link"].tolist()
    ends = [(int(link_src[li]), int(link_dst[li])) for li in link_l]
    relayed: dict[int, set] = defaultdict(set)
    for (a, b), first, cnt in zip(ends, first_l, cnt_l):
        if where(b, first, False) is None:
            relayed[b].update(range(first, first + cnt))
    slot = {r: {chunk: k for k, chunk in enumerate(sorted(keys))} for r, keys in relayed.items()}

    def place(rank: int, first: int, sending: bool) -> tuple[int, int]:
        at = where(rank, first, sending)
        if at is not None:
            return at
        try:
            return S_BUF, slot[rank][first]
        except KeyError:
            raise NotApplicable(f"rank {rank} sends chunk {first} of the {coll.value} that it never received; lower "
                                "a verified schedule") from None

    rows = Rows()
    if out_of_place_root:              # the root's own part of the result, from its input
        src_at, dst_at, size = {Collective.BROADCAST: (0, 0, n * per), Collective.GATHER: (0, root * per, per),
                                Collective.SCATTER: (root * per, 0, per)}[coll]
        for a in range(0, size, MAX_COUNT - 1):
            cnt = min(size - a, MAX_COUNT - 1)
            op = rows.add(root, LOCAL, -1, CPY, I_BUF, src_at + a, O_BUF, dst_at + a, cnt)
            rows.touch(op, root, O_BUF, dst_at + a, cnt, True)
    wave, step = items["wave"].tolist(), items["step"].tolist()
    order = list(range(len(first_l)))
    batches: dict[tuple, list] = defaultdict(list)
    for index in order:
        batches[(wave[index], step[index])].append(index)
    for key in sorted(batches):
        batch = batches[key]
        for index in batch:                 # sends read what the batch starts with
            a, b = ends[index]
            buf, off = place(a, first_l[index], True)
            op = rows.add(a, SEND, b, S, buf, off, buf, off, cnt_l[index], index)
            rows.touch(op, a, buf, off, cnt_l[index], False)
        for index in batch:
            a, b = ends[index]
            buf, off = place(b, first_l[index], False)
            op = rows.add(b, RECV, a, R, buf, off, buf, off, cnt_l[index], index)
            rows.touch(op, b, buf, off, cnt_l[index], True)
    return rows.instructions(), {r: len(keys) for r, keys in slot.items()}


def _lower_alltoall(topo: Topology, schedule: Schedule, cols, proto: str, name: str | None, min_bytes: int,
                    max_bytes: int, in_place: bool | None) -> Lowering:
    """The all-to-all layout of the module docstring."""
    if in_place:
        raise NotApplicable("an all-to-all is lowered out of place only (each rank's output differs from its input)")
    n = topo.n
    chunks = lcm(cols.one, n)                # nchunksperloop: shard s = rank s's input, cut into `chunks` chunks
    if chunks > MAX_CHUNKS_PER_LOOP:
        raise NotApplicable(f"the schedule cuts shards into {chunks} chunks, above nchunksperloop's "
                            f"{MAX_CHUNKS_PER_LOOP}; use fewer, larger chunks")
    m, scale = chunks // n, chunks // cols.one
    if cols.reduce.any():
        raise NotApplicable("an all-to-all schedule only copies; this one reduces")
    # every transfer as segments inside one piece of < MAX_COUNT chunks: (step, link, shard, first chunk, count)
    items = []
    for step, link, shard, lo, hi in zip(cols.step.tolist(), cols.link.tolist(), cols.shard.tolist(),
                                         (cols.lo * scale).tolist(), (cols.hi * scale).tolist()):
        start = lo
        while start < hi:
            cnt = min(hi - start, MAX_COUNT - 1, (start // m + 1) * m - start)
            items.append((step, link, shard, start, cnt))
            start += cnt
    items.sort()
    # relayed chunks (neither the rank's own shard nor its own piece) live in scratch, one slot each
    relayed: dict[int, set] = defaultdict(set)
    for _, link, shard, first, cnt in items:
        w = topo.links[link].dst
        if w == shard or first // m != w:
            relayed[w].update((shard, c) for c in range(first, first + cnt))
    slot = {r: {key: k for k, key in enumerate(sorted(keys))} for r, keys in relayed.items()}

    def where(rank: int, shard: int, first: int, receive: bool) -> tuple[str, int]:
        if rank == shard and not receive:
            return "i", first
        if rank != shard and first // m == rank:
            return "o", shard * m + first % m
        try:
            return "s", slot[rank][(shard, first)]
        except KeyError:
            raise NotApplicable(f"rank {rank} sends chunk {first} of shard {shard} that it never received; lower a "
                                "verified schedule") from None

    per_rank: Counter = Counter()
    for _, link, _, _, _ in items:
        per_rank[topo.links[link].src] += 1
        per_rank[topo.links[link].dst] += 1
    busiest, count = max(per_rank.items(), key=lambda kv: kv[1], default=(0, 0))
    if count + 2 + n + m // (MAX_COUNT - 1) > MAX_NODES_PER_RANK:
        raise NotApplicable(f"rank {busiest} would run {count} instructions, above the runtime parser's "
                            f"{MAX_NODES_PER_RANK} XML nodes per rank; use fewer chunks or fewer transfers")
    rows = Rows()
    for r in range(n):                       # the rank's own piece: input block r -> output block r
        for a in range(0, m, MAX_COUNT - 1):
            cnt = min(m - a, MAX_COUNT - 1)
            op = rows.add(r, LOCAL, -1, CPY, I_BUF, r * m + a, O_BUF, r * m + a, cnt)
            rows.touch(op, r, O_BUF, r * m + a, cnt, True)
    by_step: dict[int, list] = defaultdict(list)
    for index, it in enumerate(items):
        by_step[it[0]].append((*it, index))
    for step in sorted(by_step):
        batch = [(link, topo.links[link], shard, first, cnt, index) for _, link, shard, first, cnt, index in
                 by_step[step]]
        ends = [(*where(l.src, shard, first, False), *where(l.dst, shard, first, True))
                for _, l, shard, first, _, _ in batch]
        for (link, l, _, _, cnt, index), e in zip(batch, ends):      # sends read what the end of step - 1 holds
            op = rows.add(l.src, SEND, l.dst, S, _BUF_CODE[e[0]], e[1], _BUF_CODE[e[2]], e[3], cnt, index, True)
            rows.touch(op, l.src, _BUF_CODE[e[0]], e[1], cnt, False)
        for (link, l, _, _, cnt, index), e in zip(batch, ends):
            op = rows.add(l.dst, RECV, l.src, R, _BUF_CODE[e[0]], e[1], _BUF_CODE[e[2]], e[3], cnt, index, True)
            rows.touch(op, l.dst, _BUF_CODE[e[2]], e[3], cnt, True)
    scratch = {r: len(keys) for r, keys in slot.items()}
    links = np.array([it[1] for it in items], dtype=np.int64)
    return Lowering(topo, Collective.ALLTOALL, rows.instructions(), links, np.zeros(len(links), np.int64), m, proto,
                    name or f"{schedule.algo or 'schedule'} {Collective.ALLTOALL.value}", min_bytes, max_bytes,
                    False, scratch)


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


def _refuse_custom(schedule: Schedule) -> None:
    if schedule.collective is Collective.CUSTOM:
        raise NotApplicable("MSCCL has no custom collective; export a schedule whose demand is an all-to-all or an "
                            "allgather as alltoall/allgather")
    if getattr(schedule, "group", None) is not None:
        raise NotApplicable("a collective among a group of GPUs may relay through GPUs outside it, which a "
                            "communicator of the group has no rank for: it is not exported")


def refuse_rooted(schedule: Schedule, fmt: str) -> None:
    """NotApplicable, in one line, for a rooted collective in a format that does not carry one: ``fmt`` is
    "bundle" or "mscclpp"."""
    coll = schedule.collective
    if not coll.rooted:
        return
    if fmt == "bundle":
        raise NotApplicable(f"a bundle holds no {coll.value}: its size ranges count bytes as the unrooted "
                            "collectives do, and every rooted file serves one root only; export the "
                            f"{coll.value} as one MSCCL file (--format msccl --root R)")
    raise NotApplicable(f"an MSCCL++ plan has no {coll.value} here: the plans written are allgather, reducescatter, "
                        "allreduce and alltoall (mscclpp/format.py COLLECTIVES), and a plan carries no root; export "
                        f"the {coll.value} as MSCCL XML (--format msccl --root R)")
