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
from ..core.schedule import MAX_SCALED, Collective, Schedule, columns
from .lower_parts import (_BUF_CODE, Lowering, _check_instructions_per_rank, _instructions, _items, _reduce_slots,
                          _split_home_instructions)
from .place import CPY, I_BUF, LOCAL, O_BUF, R, RECV, S, S_BUF, SEND, Instructions, Rows
from .program import (MAX_CHANNELS, MAX_CHUNKS_PER_LOOP, MAX_COUNT, MAX_NODES_PER_RANK, MAX_TBS_PER_CHANNEL,
                      OPS_PER_THREADBLOCK, PROTOCOLS, ROOT_TAG, Algo, OverLimit)

__all__ = ["Lowering", "lower", "lowering", "refuse_rooted"]


def lower(topo: Topology, schedule: Schedule, *, ops_per_tb: int = OPS_PER_THREADBLOCK, merge: bool = False,
          tbs_per_channel: int = MAX_TBS_PER_CHANNEL, max_channels: int = MAX_CHANNELS, **kwargs) -> Algo:
    """The MSCCL program of a verified schedule (see the module docstring): ``lowering(topo, schedule, **kwargs)``
    placed on threadblocks by ``Lowering.build(ops_per_tb, merge, tbs_per_channel, max_channels)``."""
    return lowering(topo, schedule, **kwargs).build(ops_per_tb, merge, tbs_per_channel, max_channels)


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
        raise OverLimit("the schedule's chunk bounds have no common denominator small enough for chunks",
                        "chunks per shard", 0, MAX_SCALED)
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
        raise OverLimit(f"the schedule cuts shards into {per} chunks, so nchunksperloop would be {n * per}; "
                        f"use a chunked schedule (for BFB: fewer chunks per shard, e.g. bfb_chunked) or "
                        "fewer copies and instances", "chunks per loop", n * per, MAX_CHUNKS_PER_LOOP)
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
        raise OverLimit(f"the schedule cuts shards into {per} chunks, so the {coll.value}'s buffer would be "
                        f"{n * per} chunks; use fewer chunks per shard, copies or instances", "chunks per loop",
                        n * per, MAX_CHUNKS_PER_LOOP)
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
        raise OverLimit(f"the schedule cuts shards into {chunks} chunks, above nchunksperloop's "
                        f"{MAX_CHUNKS_PER_LOOP}; use fewer, larger chunks", "chunks per loop", chunks,
                        MAX_CHUNKS_PER_LOOP)
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
        raise OverLimit(f"rank {busiest} would run {count} instructions, above the runtime parser's "
                        f"{MAX_NODES_PER_RANK} XML nodes per rank; use fewer chunks or fewer transfers",
                        "XML nodes per rank", count + 2 + n + m // (MAX_COUNT - 1), MAX_NODES_PER_RANK)
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
