"""Lowering a verified schedule to the MSCCL program IR of ``program.py`` (notes/msccl-xml-and-anchors.md
section 3): ``lower`` and its all-to-all variant ``_lower_alltoall``, both assembled into an ``Algo`` by ``_assemble``.

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
"""
from __future__ import annotations

from collections import Counter, defaultdict
from dataclasses import dataclass, field
from math import lcm

from topologies.model import Topology

from ..core.errors import NotApplicable
from ..core.schedule import Collective, Schedule, columns
from .program import (MAX_CHANNELS, MAX_CHUNKS_PER_LOOP, MAX_COUNT, MAX_NODES_PER_RANK, MAX_TBS_PER_CHANNEL,
                      OPS_PER_THREADBLOCK, PROTOCOLS, Algo, Gpu, Step, Tb)


@dataclass(slots=True)
class _Op:
    node: int
    tb: tuple
    kind: str            # s, r, rrc, cpy
    buf: str
    off: int
    cnt: int
    key: tuple
    deps: set = field(default_factory=set)
    copy_from: tuple | None = None   # cpy: (source buffer, source offset); buf/off name the destination
    ends: tuple | None = None        # s/r naming both ends: (srcbuf, srcoff, dstbuf, dstoff); else buf/off for both


def lower(topo: Topology, schedule: Schedule, *, ops_per_tb: int = OPS_PER_THREADBLOCK, merge: bool = False,
          tbs_per_channel: int = MAX_TBS_PER_CHANNEL, max_channels: int = MAX_CHANNELS, **kwargs) -> Algo:
    """The MSCCL program of a verified schedule (see the module docstring): ``lowering(topo, schedule, **kwargs)``
    placed on threadblocks by ``Lowering.build(ops_per_tb, merge, tbs_per_channel, max_channels)``."""
    return lowering(topo, schedule, **kwargs).build(ops_per_tb, merge, tbs_per_channel, max_channels)


class Lowering:
    """A schedule's instructions in program order with their data dependencies, before they are placed on
    threadblocks: the part of the lowering that does not depend on the instructions per threadblock or on merging,
    so a search for a program within a runtime's limits makes it once and ``build``s each try from it."""

    def __init__(self, topo, coll, ops, slots, op_slot, per, proto, name, min_bytes, max_bytes, in_place, scratch):
        self.topo, self.coll, self.ops, self.slots, self.op_slot = topo, coll, ops, slots, op_slot
        self.per, self.proto, self.name, self.min_bytes, self.max_bytes = per, proto, name, min_bytes, max_bytes
        self.in_place, self.scratch = in_place, scratch

    def build(self, ops_per_tb: int = OPS_PER_THREADBLOCK, merge: bool = False,
              tbs_per_channel: int = MAX_TBS_PER_CHANNEL, max_channels: int = MAX_CHANNELS) -> Algo:
        """The program: a link's instructions fill a threadblock up to ``ops_per_tb`` and continue on a further
        channel, no channel getting more than ``tbs_per_channel`` send (or receive) threadblocks of a rank
        (``_channels``); ``merge`` pairs send and receive threadblocks (``_merge_threadblocks``) to halve their
        number and fuses a receive and the send that forwards the same chunks into one ``rcs``/``rrcs`` step
        (``_fuse_forwards``). NotApplicable when more than ``max_channels`` channels would be needed."""
        channel_of = _channels(self.topo, self.slots, ops_per_tb, tbs_per_channel, max_channels)
        # every op's dependency set is shared with the template: the steps after this replace sets, never change them
        ops = [_Op(t.node, t.tb if i < 0 else (*t.tb, channel_of[i]), t.kind, t.buf, t.off, t.cnt, t.key,
                   t.deps, t.copy_from, t.ends) for t, i in zip(self.ops, self.op_slot)]
        return _assemble(self.topo, self.coll, ops, self.per, self.proto, self.name, self.min_bytes, self.max_bytes,
                         self.in_place, self.scratch, merge)


def lowering(topo: Topology, schedule: Schedule, *, proto: str = "Simple", name: str | None = None,
             min_bytes: int = 0, max_bytes: int = 1 << 40, in_place: bool | None = None, copies: int = 1,
             instances: int = 1) -> Lowering:
    """The instructions of a verified schedule's MSCCL program and their dependencies (see the module docstring).
    ``in_place`` picks the call the file serves (default: in place for allgather and allreduce, out of place for
    reduce-scatter). Out of place, the allgather first copies the input shard into its slot of ``o`` and the
    allreduce copies ``i`` into ``o`` and works there; the reduce-scatter never writes its input: a reduction reads
    the rank's own contribution from ``i`` and writes the partial sum to ``o`` (its own shard) or to scratch ``s``
    (other shards), where later steps find it. In place, the reduce-scatter leaves rank r's result in its own slot
    of ``i``. An all-to-all is lowered out of place (module docstring); a custom collective is refused.

    Performance knobs. ``copies`` c runs c copies of the schedule on their own threadblocks and channels, copy j
    on the j-th 1/c of every shard (the runtime's channels: c threadblock pairs share each link). ``instances``
    I cuts every chunk further into I pieces that the same threadblocks send one after the other, piece p of
    step t in wave p + t (pipelining inside one loop of the runtime). Shards are then cut into c I L chunks."""
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
    work = "o" if coll is Collective.ALLGATHER or (coll is Collective.ALLREDUCE and not in_place) else "i"
    # every transfer as instructions of < MAX_COUNT chunks: (wave, step, link, copy, first chunk, count, reduce)
    items = []
    for step, link, shard, lo, hi, red in zip(cols.step.tolist(), cols.link.tolist(), cols.shard.tolist(),
                                              cols.lo.tolist(), cols.hi.tolist(), cols.reduce.tolist()):
        for copy in range(copies):
            for piece in range(instances):
                base = shard * per + (copy * instances + piece) * one
                start, end = base + lo, base + hi
                while start < end:
                    cnt = min(end - start, MAX_COUNT - 1)
                    items.append((step + piece, step, link, copy, start, cnt, bool(red)))
                    start += cnt
    items.sort()
    per_rank: Counter = Counter()
    for it in items:
        per_rank[topo.links[it[2]].src] += 1
        per_rank[topo.links[it[2]].dst] += 1
    busiest, count = max(per_rank.items(), key=lambda kv: kv[1], default=(0, 0))
    if count + 1 + n > MAX_NODES_PER_RANK:
        raise NotApplicable(f"rank {busiest} would run {count} instructions (shards cut into {per} chunks), above "
                            f"the runtime parser's {MAX_NODES_PER_RANK} XML nodes per rank; use fewer chunks per "
                            "shard, fewer copies or instances, or a schedule with fewer transfers")
    ops: list[_Op] = []
    op_slot: list[int] = []          # the item each op carries out (its channel is that item's), -1 for local ops
    touch = _tracker(ops)
    first_copies = []            # out of place: (rank, source offset in i, offset in o, count) before anything
    if not in_place and coll is Collective.ALLGATHER:
        first_copies = [(r, a, r * per + a, min(per - a, MAX_COUNT - 1)) for r in range(n)
                        for a in range(0, per, MAX_COUNT - 1)]
    elif not in_place and coll is Collective.ALLREDUCE:
        first_copies = [(r, a, a, min(n * per - a, MAX_COUNT - 1)) for r in range(n)
                        for a in range(0, n * per, MAX_COUNT - 1)]
    for r, src_off, dst_off, cnt in first_copies:
        ops.append(_Op(r, ("local",), "cpy", "o", dst_off, cnt, (0, -1, 0), copy_from=("i", src_off)))
        op_slot.append(-1)
        touch(len(ops) - 1, r, "o", dst_off, cnt, writes=True)
    # out-of-place reduce-scatter: where each chunk's current value lives on a rank (default: its input)
    home: dict[tuple, tuple] = {}
    split_home = coll is Collective.REDUCE_SCATTER and not in_place

    def new_home(rank: int, first: int) -> tuple[str, int]:
        return ("o", first - rank * per) if first // per == rank else ("s", first)

    by_batch: dict[tuple, list] = defaultdict(list)
    for index, it in enumerate(items):
        by_batch[it[:2]].append((*it[2:], index))
    for batch_key in sorted(by_batch):
        batch = by_batch[batch_key]
        step = batch_key[1]
        if split_home:
            batch = _split_by_home(topo, batch, home, new_home)
        for link, _, first, cnt, red, index, *where in batch:   # sends read what the end of the previous wave holds
            l = topo.links[link]
            buf, off = where[0] if where else (work, first)
            ops.append(_Op(l.src, ("send", l.dst), "s", buf, off, cnt, (step, 0, link)))
            op_slot.append(index)
            touch(len(ops) - 1, l.src, buf, off, cnt, writes=False)
        for link, _, first, cnt, red, index, *where in batch:
            l = topo.links[link]
            kind = "rrc" if red else "r"
            op_slot.append(index)
            if where:
                _, src, dst = where
                ops.append(_Op(l.dst, ("recv", l.src), kind, dst[0], dst[1], cnt, (step, 1, link),
                               ends=(*src, *dst)))
                if red:
                    touch(len(ops) - 1, l.dst, src[0], src[1], cnt, writes=False)
                touch(len(ops) - 1, l.dst, dst[0], dst[1], cnt, writes=True)
            else:
                ops.append(_Op(l.dst, ("recv", l.src), kind, work, first, cnt, (step, 1, link)))
                touch(len(ops) - 1, l.dst, work, first, cnt, writes=True)
    if split_home:       # a chunk of the rank's own shard that no step reduced into is still in i: copy it
        last = max((o.key[0] for o in ops), default=0) + 1
        for r in range(n):
            rest = [c for c in range(r * per, (r + 1) * per) if (r, c) not in home]
            for start, cnt in _runs(rest):
                ops.append(_Op(r, ("local",), "cpy", "o", start - r * per, cnt, (last, 2, 0), copy_from=("i", start)))
                op_slot.append(-1)
                touch(len(ops) - 1, r, "o", start - r * per, cnt, writes=True)
    scratch = {r: n * per for r in range(n)} if split_home else None
    return Lowering(topo, coll, ops, [(it[2], it[3]) for it in items], op_slot, per, proto,
                    name or f"{schedule.algo or 'schedule'} {coll.value}", min_bytes, max_bytes, in_place, scratch)


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


def _tracker(ops: list[_Op]):
    """``touch(op_id, node, buf, first, cnt, writes)``: record that op ``op_id`` reads or writes chunks
    ``first .. first + cnt - 1`` of ``buf`` on ``node`` and add its dependencies: a read waits for the last write,
    a write for the last write and the reads since."""
    last_write: dict[tuple, int] = {}
    reads: dict[tuple, list[int]] = defaultdict(list)

    def touch(op_id: int, node: int, buf: str, first: int, cnt: int, writes: bool) -> None:
        op = ops[op_id]
        for c in range(first, first + cnt):
            key = (node, buf, c)
            if key in last_write:
                op.deps.add(last_write[key])
            if writes:
                op.deps.update(reads.pop(key, []))
                last_write[key] = op_id
            else:
                reads[key].append(op_id)
    return touch


def _channels(topo: Topology, slots: list[tuple[int, int]], ops_per_tb: int = OPS_PER_THREADBLOCK,
              tbs_per_channel: int = MAX_TBS_PER_CHANNEL, max_channels: int = MAX_CHANNELS) -> list[int]:
    """The channel of each instruction, given as (link, copy) in program order. Each link's instructions of one
    copy are cut into blocks of ``ops_per_tb``; every block is one threadblock pair, on the lowest channel that
    the GPU pair does not use yet and on which neither end has ``tbs_per_channel`` threadblocks of that role
    (blocks taken copy by copy, block by block, parallel link by parallel link). Without limits hit this is
    channel k for the k-th parallel link and further channels for further blocks and copies; both ends of a
    connection see the same sequence. NotApplicable when more than ``max_channels`` channels would be needed."""
    parallel_index = {}
    seen: Counter = Counter()
    for i, l in enumerate(topo.links):
        parallel_index[i] = seen[(l.src, l.dst)]
        seen[(l.src, l.dst)] += 1
    block = []
    sent_on: Counter = Counter()
    for slot in slots:
        block.append(sent_on[slot] // ops_per_tb)
        sent_on[slot] += 1
    wanted = sorted({(copy, k, parallel_index[link], link) for (link, copy), k in zip(slots, block)})
    pair_used: dict[tuple, set] = defaultdict(set)
    sends: Counter = Counter()
    recvs: Counter = Counter()
    chosen = {}
    for copy, k, _, link in wanted:
        l = topo.links[link]
        c = 0
        while (c in pair_used[(l.src, l.dst)] or sends[(l.src, c)] >= tbs_per_channel
               or recvs[(l.dst, c)] >= tbs_per_channel):
            c += 1
        if c >= max_channels:
            raise NotApplicable(f"the program needs more than the runtime's {max_channels} channels (gpu {l.src} to "
                                f"{l.dst}); use fewer copies or a schedule with fewer transfers per link")
        pair_used[(l.src, l.dst)].add(c)
        sends[(l.src, c)] += 1
        recvs[(l.dst, c)] += 1
        chosen[(link, copy, k)] = c
    return [chosen[(link, copy, k)] for (link, copy), k in zip(slots, block)]


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
    ops: list[_Op] = []
    op_slot: list[int] = []
    touch = _tracker(ops)
    for r in range(n):                       # the rank's own piece: input block r -> output block r
        for a in range(0, m, MAX_COUNT - 1):
            cnt = min(m - a, MAX_COUNT - 1)
            ops.append(_Op(r, ("local",), "cpy", "o", r * m + a, cnt, (0, -1, 0), copy_from=("i", r * m + a)))
            op_slot.append(-1)
            touch(len(ops) - 1, r, "o", r * m + a, cnt, writes=True)
    by_step: dict[int, list] = defaultdict(list)
    for index, it in enumerate(items):
        by_step[it[0]].append((*it, index))
    for step in sorted(by_step):
        batch = [(link, topo.links[link], shard, first, cnt, index) for _, link, shard, first, cnt, index in
                 by_step[step]]
        ends = [(*where(l.src, shard, first, False), *where(l.dst, shard, first, True))
                for _, l, shard, first, _, _ in batch]
        for (link, l, _, _, cnt, index), e in zip(batch, ends):      # sends read what the end of step - 1 holds
            ops.append(_Op(l.src, ("send", l.dst), "s", e[0], e[1], cnt, (step, 0, link), ends=e))
            op_slot.append(index)
            touch(len(ops) - 1, l.src, e[0], e[1], cnt, writes=False)
        for (link, l, _, _, cnt, index), e in zip(batch, ends):
            ops.append(_Op(l.dst, ("recv", l.src), "r", e[2], e[3], cnt, (step, 1, link), ends=e))
            op_slot.append(index)
            touch(len(ops) - 1, l.dst, e[2], e[3], cnt, writes=True)
    scratch = {r: len(keys) for r, keys in slot.items()}
    return Lowering(topo, Collective.ALLTOALL, ops, [(it[1], 0) for it in items], op_slot, m, proto,
                    name or f"{schedule.algo or 'schedule'} {Collective.ALLTOALL.value}", min_bytes, max_bytes,
                    False, scratch)


def _merge_threadblocks(ops: list[_Op]) -> None:
    """On every rank and channel, the i-th send threadblock and the i-th receive threadblock (in order of first
    use) become one threadblock with both peers. Its steps keep the program order of all instructions, the
    (step, send before receive) order every dependency and every send-receive match already follows, so the
    merged program still cannot deadlock; it runs the two links' instructions one after the other."""
    roles: dict[tuple, dict[str, dict]] = defaultdict(lambda: {"send": {}, "recv": {}})   # dicts: ordered sets
    for op in ops:
        kind = op.tb[0]
        if kind in ("send", "recv"):
            roles[(op.node, op.tb[2])][kind].setdefault(op.tb)
    mapping = {}
    for (node, chan), both in roles.items():
        for send, recv in zip(both["send"], both["recv"]):
            merged = ("pair", send[1], recv[1], chan)
            mapping[(node, send)] = mapping[(node, recv)] = merged
    for op in ops:
        op.tb = mapping.get((op.node, op.tb), op.tb)


def _fuse_forwards(ops: list[_Op]) -> list[_Op]:
    """In a merged threadblock (receive peer u, send peer w), a receive of chunks X followed at once by the send of
    the same chunks X to w becomes one step: ``rcs`` (receive, copy, send) after a plain receive, ``rrcs``
    (receive, reduce, copy, send) after a receive-reduce. Data that flows straight through then costs one step
    instead of two. Only a send that waits for nothing but that receive is fused (a send that also waits for
    another threadblock, e.g. a second reduction into the same chunks, could make the receive wait for itself).
    The fused step keeps the receive's place; whatever waited for the send waits for it. Returns the remaining
    instructions, dependencies renumbered."""
    last_in_tb: dict[tuple, int] = {}
    into: dict[int, int] = {}
    for i, op in enumerate(ops):
        where = (op.node, op.tb)
        prev = last_in_tb.get(where)
        last_in_tb[where] = i
        if prev is None or op.kind != "s" or op.ends is not None or op.tb[0] != "pair":
            continue
        a = ops[prev]
        alone = all(d == prev or (ops[d].node, ops[d].tb) == where for d in op.deps)   # waits for a only
        if alone and a.kind in ("r", "rrc") and prev not in into and (a.buf, a.off, a.cnt) == (op.buf, op.off, op.cnt):
            a.kind = "rcs" if a.kind == "r" else "rrcs"
            a.deps = a.deps | (op.deps - {prev})      # a new set: Lowering.build's copies share the template's
            into[i] = prev
            last_in_tb[where] = prev
    if not into:
        return ops
    keep = [i for i in range(len(ops)) if i not in into]
    new_id = {old: k for k, old in enumerate(keep)}
    out = []
    for old in keep:
        op = ops[old]
        op.deps = {new_id[into.get(d, d)] for d in op.deps} - {new_id[old]}
        out.append(op)
    return out


def _assemble(topo, coll, ops, per, proto, name, min_bytes, max_bytes, in_place, scratch=None,
              merge: bool = False) -> Algo:
    n = topo.n
    if merge:
        _merge_threadblocks(ops)
        ops = _fuse_forwards(ops)
    # every threadblock gets a number in order of first use; tb_of and position say where each op runs
    tb_number: dict[tuple, int] = {}
    members: list[list[int]] = []
    tb_of = [0] * len(ops)
    position = [0] * len(ops)
    for op_id, op in enumerate(ops):
        key = (op.node, op.tb)
        t = tb_number.get(key)
        if t is None:
            t = tb_number[key] = len(members)
            members.append([])
        tb_of[op_id] = t
        position[op_id] = len(members[t])
        members[t].append(op_id)
    tb_keys: dict[int, list[tuple]] = defaultdict(list)
    for node, tbk in tb_number:
        tb_keys[node].append(tbk)
    local_id = [0] * len(members)          # the threadblock's id on its rank
    for node, keys in tb_keys.items():
        keys.sort(key=lambda k: (k[0] != "pair", k[0] != "send", k[0] != "recv", k[1:]))
        for i, k in enumerate(keys):
            local_id[tb_number[(node, k)]] = i
    # drop dependencies implied by program order and keep one per threadblock (its latest step)
    for op_id, op in enumerate(ops):
        deps = op.deps
        if not deps:
            continue
        t = tb_of[op_id]
        if len(deps) == 1:
            (d,) = deps
            if tb_of[d] == t:
                op.deps = set()
            continue
        best: dict[int, int] = {}
        for d in deps:
            other = tb_of[d]
            if other != t and (other not in best or position[d] > position[best[other]]):
                best[other] = d
        op.deps = set(best.values())
    # positions with nops in front of steps that wait for more than one threadblock
    index = [0] * len(ops)
    targets = set()
    for op_ids in members:
        p = 0
        for op_id in op_ids:
            deps = ops[op_id].deps
            if deps:
                targets.update(deps)
                if len(deps) > 1:
                    p += len(deps) - 1
            index[op_id] = p
            p += 1
    gpus = []
    sizes = {("allgather", True): (0, n * per), ("allgather", False): (per, n * per),
             ("reduce_scatter", True): (n * per, 0), ("reduce_scatter", False): (n * per, per),
             ("allreduce", True): (n * per, 0), ("allreduce", False): (n * per, n * per),
             ("alltoall", False): (n * per, n * per)}
    i_chunks, o_chunks = sizes[(coll.value, in_place)]
    for r in range(n):
        gpu = Gpu(r, i_chunks, o_chunks, (scratch or {}).get(r, 0))
        for tbk in tb_keys.get(r, []):
            kind = tbk[0]
            t = tb_number[(r, tbk)]
            if kind == "pair":
                tb = Tb(local_id[t], tbk[1], tbk[2], tbk[3])
            else:
                tb = Tb(local_id[t], tbk[1] if kind == "send" else -1, tbk[1] if kind == "recv" else -1,
                        tbk[2] if kind != "local" else 0)
            steps = tb.steps
            for op_id in members[t]:
                op = ops[op_id]
                depid = depstep = -1
                if op.deps:
                    if len(op.deps) == 1:
                        (last,) = op.deps
                    else:
                        deps = sorted(op.deps, key=lambda d: (local_id[tb_of[d]], index[d]))
                        for d in deps[:-1]:
                            steps.append(Step(len(steps), "nop", "i", -1, "o", -1, 0, local_id[tb_of[d]], index[d],
                                              0))
                        last = deps[-1]
                    depid, depstep = local_id[tb_of[last]], index[last]
                if op.kind == "cpy":
                    (src, soff), dst, doff = op.copy_from, op.buf, op.off
                elif op.ends is not None:
                    src, soff, dst, doff = op.ends
                else:
                    src, soff, dst, doff = op.buf, op.off, op.buf, op.off
                steps.append(Step(len(steps), op.kind, src, soff, dst, doff, op.cnt, depid, depstep,
                                  1 if op_id in targets else 0))
            gpu.tbs.append(tb)
        gpus.append(gpu)
    nchannels = 1 + max((tb.chan for g in gpus for tb in g.tbs), default=0)
    inplace, outofplace = (1, 0) if in_place else (0, 1)
    return Algo(name[:63], proto, nchannels, n * per, n, coll.value, inplace, outofplace, min_bytes, max_bytes, gpus)
