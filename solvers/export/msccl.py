"""MSCCL XML: lowering a verified schedule, writing both dialects, reading any file back, checking it against the
runtime parser's rules, and simulating it symbolically (notes/msccl-xml-and-anchors.md section 3).

The IR mirrors the file: an ``Algo`` has one ``Gpu`` per rank, each with threadblocks (``Tb``: one send peer, one
receive peer, a channel) holding ``Step`` instructions. ``to_xml`` is a pure function of the IR.

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

import re
import xml.etree.ElementTree as ET
from collections import Counter, defaultdict, deque
from dataclasses import dataclass, field
from math import lcm

from topologies.model import Topology

from ..core.errors import NotApplicable
from ..core.schedule import Collective, Schedule, columns

MAX_COUNT = 72                 # cnt < 72
MAX_STEPS = 256                # steps per threadblock
MAX_NODES_PER_RANK = 4096      # parsed XML nodes: 1 (algo) + ngpus + tbs + steps of the rank's gpu
MAX_TBS_PER_CHANNEL = 32
MAX_CHANNELS = 32
DEFAULT_SM_BUDGET = 108        # threadblocks per GPU that can be co-resident (A100)
MAX_CHUNKS_PER_LOOP = 1 << 20
OPS_PER_THREADBLOCK = 160      # instructions of one link per threadblock, leaving room for dependency nops
PROTOCOLS = ("Simple", "LL", "LL128")
STEP_TYPES = ("s", "r", "rcs", "rrs", "rrc", "rrcs", "cpy", "re", "nop", "ra")
DIALECT_COLL = {"executor": {"allgather": "allgather", "reduce_scatter": "reducescatter", "allreduce": "allreduce",
                             "alltoall": "alltoall"},
                "msccl": {"allgather": "allgather", "reduce_scatter": "reduce_scatter", "allreduce": "allreduce",
                          "alltoall": "alltoall"}}
KNOWN_COLLS = {"executor": {"allgather", "reducescatter", "allreduce", "alltoall", "send", "recv", "gather", "scatter",
                            "alltoallv", "broadcast", "reduce", "custom"},
               "msccl": {"allgather", "reduce_scatter", "allreduce", "alltoall", "broadcast", "reduce", "custom"}}


@dataclass
class Step:
    s: int
    type: str
    srcbuf: str = "i"
    srcoff: int = -1
    dstbuf: str = "o"
    dstoff: int = -1
    cnt: int = 0
    depid: int = -1
    deps: int = -1
    hasdep: int = 0


@dataclass
class Tb:
    id: int
    send: int
    recv: int
    chan: int
    steps: list[Step] = field(default_factory=list)


@dataclass
class Gpu:
    id: int
    i_chunks: int
    o_chunks: int
    s_chunks: int
    tbs: list[Tb] = field(default_factory=list)


@dataclass
class Algo:
    name: str
    proto: str
    nchannels: int
    nchunksperloop: int
    ngpus: int
    coll: str
    inplace: int
    outofplace: int
    min_bytes: int = 0
    max_bytes: int = 1 << 40
    gpus: list[Gpu] = field(default_factory=list)


class XmlError(ValueError):
    """An MSCCL file the runtime would reject or that does not do its collective; the message names why."""


# --------------------------------------------------------------------------------------------------- lowering
@dataclass
class _Op:
    node: int
    tb: tuple
    kind: str            # s, r, rrc, cpy
    buf: str
    off: int
    cnt: int
    key: tuple
    deps: set = field(default_factory=set)
    index: int = -1      # position of the real step in its tb, after nops
    copy_from: tuple | None = None   # cpy: (source buffer, source offset); buf/off name the destination
    ends: tuple | None = None        # s/r naming both ends: (srcbuf, srcoff, dstbuf, dstoff); else buf/off for both


def lower(topo: Topology, schedule: Schedule, *, proto: str = "Simple", name: str | None = None,
          min_bytes: int = 0, max_bytes: int = 1 << 40, in_place: bool | None = None) -> Algo:
    """The MSCCL program of a verified schedule (see the module docstring). ``in_place`` picks the call the file
    serves (default: in place for allgather and allreduce, out of place for reduce-scatter). Out of place, the
    allgather first copies the input shard into its slot of ``o`` and the allreduce copies ``i`` into ``o`` and
    works there; in place, the reduce-scatter leaves rank r's result in its own slot of ``i``. An all-to-all is
    lowered out of place (module docstring); a custom collective is refused."""
    _refuse_custom(schedule)
    if topo.switch_nodes:
        raise NotApplicable("MSCCL lowering needs GPUs linked directly; this topology has switches")
    if proto not in PROTOCOLS:
        raise NotApplicable(f"unknown protocol {proto!r} (choose from {', '.join(PROTOCOLS)})")
    cols = columns(schedule)
    if cols is None:
        raise NotApplicable("the schedule's chunk bounds have no common denominator small enough for chunks")
    coll = schedule.collective
    if coll is Collective.ALLTOALL:
        return _lower_alltoall(topo, schedule, cols, proto, name, min_bytes, max_bytes, in_place)
    n, per = topo.n, cols.one
    if n * per > MAX_CHUNKS_PER_LOOP:
        raise NotApplicable(f"the schedule cuts shards into {per} chunks, so nchunksperloop would be {n * per}; "
                            f"use a chunked schedule (for BFB: fewer chunks per shard, e.g. bfb_chunked) instead")
    if in_place is None:
        in_place = coll is not Collective.REDUCE_SCATTER
    work = "o" if coll is Collective.ALLGATHER or (coll is Collective.ALLREDUCE and not in_place) else "i"
    reduce_buf = copy_buf = work
    # every transfer as instructions of < MAX_COUNT chunks: (step, link, shard, first chunk, count, reduce)
    items = []
    for step, link, shard, lo, hi, red in zip(cols.step.tolist(), cols.link.tolist(), cols.shard.tolist(),
                                              cols.lo.tolist(), cols.hi.tolist(), cols.reduce.tolist()):
        start, end = shard * per + lo, shard * per + hi
        while start < end:
            cnt = min(end - start, MAX_COUNT - 1)
            items.append((step, link, start, cnt, bool(red)))
            start += cnt
    items.sort()
    per_rank: Counter = Counter()
    for _, link, _, _, _ in items:
        per_rank[topo.links[link].src] += 1
        per_rank[topo.links[link].dst] += 1
    busiest, count = max(per_rank.items(), key=lambda kv: kv[1], default=(0, 0))
    if count + 1 + n > MAX_NODES_PER_RANK:
        raise NotApplicable(f"rank {busiest} would run {count} instructions (shards cut into {per} chunks), above "
                            f"the runtime parser's {MAX_NODES_PER_RANK} XML nodes per rank; use fewer chunks per "
                            "shard or a schedule with fewer transfers")
    ops: list[_Op] = []
    touch = _tracker(ops)
    first_copies = []            # out of place: (rank, source offset in i, offset in o, count) before anything
    if not in_place and coll is Collective.ALLGATHER:
        first_copies = [(r, a, r * per + a, min(per - a, MAX_COUNT - 1)) for r in range(n)
                        for a in range(0, per, MAX_COUNT - 1)]
    elif not in_place and coll is Collective.ALLREDUCE:
        first_copies = [(r, a, a, min(n * per - a, MAX_COUNT - 1)) for r in range(n)
                        for a in range(0, n * per, MAX_COUNT - 1)]
    channel_of = _channels(topo, [it[1] for it in items])
    for r, src_off, dst_off, cnt in first_copies:
        ops.append(_Op(r, ("local",), "cpy", "o", dst_off, cnt, (0, -1, 0), copy_from=("i", src_off)))
        touch(len(ops) - 1, r, "o", dst_off, cnt, writes=True)
    by_step: dict[int, list] = defaultdict(list)
    for it, chan in zip(items, channel_of):
        by_step[it[0]].append((*it, chan))
    for step in sorted(by_step):
        batch = by_step[step]
        for _, link, first, cnt, red, chan in batch:        # sends read what the end of step - 1 holds
            l = topo.links[link]
            buf = reduce_buf if red else copy_buf
            ops.append(_Op(l.src, ("send", l.dst, chan), "s", buf, first, cnt, (step, 0, link)))
            touch(len(ops) - 1, l.src, buf, first, cnt, writes=False)
        for _, link, first, cnt, red, chan in batch:
            l = topo.links[link]
            buf = reduce_buf if red else copy_buf
            ops.append(_Op(l.dst, ("recv", l.src, chan), "rrc" if red else "r", buf, first, cnt,
                           (step, 1, link)))
            touch(len(ops) - 1, l.dst, buf, first, cnt, writes=True)
    if coll is Collective.REDUCE_SCATTER and not in_place:   # the rank's reduced shard into the output buffer
        last = max((o.key[0] for o in ops), default=0) + 1
        for r in range(n):
            start = r * per
            while start < (r + 1) * per:
                cnt = min((r + 1) * per - start, MAX_COUNT - 1)
                ops.append(_Op(r, ("local",), "cpy", "o", start - r * per, cnt, (last, 2, 0), copy_from=("i", start)))
                touch(len(ops) - 1, r, "i", start, cnt, writes=False)
                start += cnt
    return _assemble(topo, coll, ops, per, proto, name or f"{schedule.algo or 'schedule'} {coll.value}",
                     min_bytes, max_bytes, in_place)


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


def _channels(topo: Topology, links: list[int]) -> list[int]:
    """The channel of each instruction on ``links`` (given in program order): the k-th parallel link of a GPU
    pair uses channel k, and a link whose instructions would overflow one threadblock continues on further
    channels (exact: the two ends of every connection still see the same sequence)."""
    parallel_index = {}
    seen: Counter = Counter()
    for i, l in enumerate(topo.links):
        parallel_index[i] = seen[(l.src, l.dst)]
        seen[(l.src, l.dst)] += 1
    width = 1 + max(parallel_index.values(), default=0)
    sent_on: Counter = Counter()
    channel_of = []
    for link in links:
        channel_of.append(parallel_index[link] + width * (sent_on[link] // OPS_PER_THREADBLOCK))
        sent_on[link] += 1
    return channel_of


def _lower_alltoall(topo: Topology, schedule: Schedule, cols, proto: str, name: str | None, min_bytes: int,
                    max_bytes: int, in_place: bool | None) -> Algo:
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
    channel_of = _channels(topo, [it[1] for it in items])
    ops: list[_Op] = []
    touch = _tracker(ops)
    for r in range(n):                       # the rank's own piece: input block r -> output block r
        for a in range(0, m, MAX_COUNT - 1):
            cnt = min(m - a, MAX_COUNT - 1)
            ops.append(_Op(r, ("local",), "cpy", "o", r * m + a, cnt, (0, -1, 0), copy_from=("i", r * m + a)))
            touch(len(ops) - 1, r, "o", r * m + a, cnt, writes=True)
    by_step: dict[int, list] = defaultdict(list)
    for it, chan in zip(items, channel_of):
        by_step[it[0]].append((*it, chan))
    for step in sorted(by_step):
        batch = [(link, topo.links[link], shard, first, cnt, chan) for _, link, shard, first, cnt, chan in
                 by_step[step]]
        ends = [(*where(l.src, shard, first, False), *where(l.dst, shard, first, True))
                for _, l, shard, first, _, _ in batch]
        for (link, l, _, _, cnt, chan), e in zip(batch, ends):      # sends read what the end of step - 1 holds
            ops.append(_Op(l.src, ("send", l.dst, chan), "s", e[0], e[1], cnt, (step, 0, link), ends=e))
            touch(len(ops) - 1, l.src, e[0], e[1], cnt, writes=False)
        for (link, l, _, _, cnt, chan), e in zip(batch, ends):
            ops.append(_Op(l.dst, ("recv", l.src, chan), "r", e[2], e[3], cnt, (step, 1, link), ends=e))
            touch(len(ops) - 1, l.dst, e[2], e[3], cnt, writes=True)
    scratch = {r: len(keys) for r, keys in slot.items()}
    return _assemble(topo, Collective.ALLTOALL, ops, m, proto,
                     name or f"{schedule.algo or 'schedule'} {Collective.ALLTOALL.value}", min_bytes, max_bytes,
                     False, scratch)


def _assemble(topo, coll, ops, per, proto, name, min_bytes, max_bytes, in_place, scratch=None) -> Algo:
    n = topo.n
    tb_keys: dict[int, list[tuple]] = defaultdict(list)
    for op in ops:
        if op.tb not in tb_keys[op.node]:
            tb_keys[op.node].append(op.tb)
    tb_ids = {}
    for node, keys in tb_keys.items():
        keys.sort(key=lambda k: (k[0] != "send", k[0] != "recv", k[1:]))
        for i, k in enumerate(keys):
            tb_ids[(node, k)] = i
    steps_of: dict[tuple, list] = defaultdict(list)
    for op_id, op in enumerate(ops):
        steps_of[(op.node, op.tb)].append(op_id)
    # drop dependencies implied by program order and keep one per threadblock (its latest step)
    position: dict[int, int] = {}
    for (node, tbk), op_ids in steps_of.items():
        for p, op_id in enumerate(op_ids):
            position[op_id] = p
    for op in ops:
        best: dict[tuple, int] = {}
        for d in op.deps:
            other = ops[d]
            if other.tb == op.tb and other.node == op.node:
                continue
            if other.tb not in best or position[d] > position[best[other.tb]]:
                best[other.tb] = d
        op.deps = set(best.values())
    # positions with nops in front of steps that wait for more than one threadblock
    for (node, tbk), op_ids in steps_of.items():
        p = 0
        for op_id in op_ids:
            p += max(len(ops[op_id].deps) - 1, 0)
            ops[op_id].index = p
            p += 1
    targets = {d for op in ops for d in op.deps}
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
            tb = Tb(tb_ids[(r, tbk)], tbk[1] if kind == "send" else -1, tbk[1] if kind == "recv" else -1,
                    tbk[2] if kind != "local" else 0)
            for op_id in steps_of[(r, tbk)]:
                op = ops[op_id]
                deps = sorted(op.deps, key=lambda d: (tb_ids[(r, ops[d].tb)], ops[d].index))
                for d in deps[:-1]:
                    tb.steps.append(Step(len(tb.steps), "nop", "i", -1, "o", -1, 0, tb_ids[(r, ops[d].tb)],
                                         ops[d].index, 0))
                depid, depstep = (tb_ids[(r, ops[deps[-1]].tb)], ops[deps[-1]].index) if deps else (-1, -1)
                if op.kind == "cpy":
                    (src, soff), dst, doff = op.copy_from, op.buf, op.off
                elif op.ends is not None:
                    src, soff, dst, doff = op.ends
                else:
                    src, soff, dst, doff = op.buf, op.off, op.buf, op.off
                tb.steps.append(Step(len(tb.steps), op.kind, src, soff, dst, doff, op.cnt, depid, depstep,
                                     1 if op_id in targets else 0))
            gpu.tbs.append(tb)
        gpu.tbs.sort(key=lambda t: t.id)
        gpus.append(gpu)
    nchannels = 1 + max((tb.chan for g in gpus for tb in g.tbs), default=0)
    inplace, outofplace = (1, 0) if in_place else (0, 1)
    return Algo(name[:63], proto, nchannels, n * per, n, coll.value, inplace, outofplace, min_bytes, max_bytes, gpus)


# ------------------------------------------------------------------------------------------------ XML text
def to_xml(algo: Algo, dialect: str = "executor") -> str:
    """The file text. ``executor`` (MSCCL executor / RCCL, the default): coll="reducescatter", inplace,
    outofplace, minBytes and maxBytes. ``msccl``: the msccl-tools writer's attributes. No <?xml?> line."""
    if dialect not in DIALECT_COLL:
        raise ValueError(f"unknown dialect {dialect!r} (executor or msccl)")
    coll = DIALECT_COLL[dialect].get(algo.coll, algo.coll)
    head = (f'<algo name="{_escape(algo.name)}" proto="{algo.proto}" nchannels="{algo.nchannels}" '
            f'nchunksperloop="{algo.nchunksperloop}" ngpus="{algo.ngpus}" coll="{coll}" inplace="{algo.inplace}"')
    if dialect == "executor":
        head += f' outofplace="{algo.outofplace}" minBytes="{algo.min_bytes}" maxBytes="{algo.max_bytes}"'
    lines = [head + ">"]
    for g in algo.gpus:
        lines.append(f'  <gpu id="{g.id}" i_chunks="{g.i_chunks}" o_chunks="{g.o_chunks}" s_chunks="{g.s_chunks}">')
        for tb in g.tbs:
            lines.append(f'    <tb id="{tb.id}" send="{tb.send}" recv="{tb.recv}" chan="{tb.chan}">')
            for st in tb.steps:
                lines.append(f'      <step s="{st.s}" type="{st.type}" srcbuf="{st.srcbuf}" srcoff="{st.srcoff}" '
                             f'dstbuf="{st.dstbuf}" dstoff="{st.dstoff}" cnt="{st.cnt}" depid="{st.depid}" '
                             f'deps="{st.deps}" hasdep="{st.hasdep}"/>')
            lines.append("    </tb>")
        lines.append("  </gpu>")
    lines.append("</algo>")
    return "\n".join(lines) + "\n"


def _escape(text: str) -> str:
    return text.replace("&", "&amp;").replace('"', "&quot;").replace("<", "&lt;").replace(">", "&gt;")


_ALGO_REQUIRED = {"executor": ("nchunksperloop", "nchannels", "ngpus", "proto", "coll", "minBytes", "maxBytes",
                               "inplace", "outofplace"),
                  "msccl": ("name", "ngpus", "nchunksperloop", "nchannels", "proto", "coll", "inplace")}
_STEP_ATTRS = ("s", "type", "srcbuf", "srcoff", "dstbuf", "dstoff", "cnt", "depid", "deps", "hasdep")


def parse_xml(text: str, dialect: str | None = None) -> tuple[Algo, str]:
    """Read an MSCCL file as the runtime parser would; (Algo, dialect). The dialect is guessed from the
    attributes when not given (executor when outofplace/minBytes are present)."""
    stripped = text.lstrip()
    while stripped.startswith("<!--"):
        end = stripped.find("-->")
        if end < 0:
            raise XmlError("an XML comment is not closed")
        stripped = stripped[end + 3:].lstrip()
    if stripped.startswith("<?xml"):
        raise XmlError("the file starts with an <?xml ...?> declaration, which the runtime's XML reader cannot "
                       "parse (it expects the <algo> element first); remove that line")
    if re.search(r"<!DOCTYPE|<!ENTITY", text, re.IGNORECASE):
        raise XmlError("DOCTYPE and ENTITY declarations are not allowed")
    try:
        root = ET.fromstring(text)
    except ET.ParseError as exc:
        raise XmlError(f"not well-formed XML: {exc}") from None
    if root.tag != "algo":
        raise XmlError(f"the top element is <{root.tag}>, not <algo>")
    a = root.attrib
    if dialect is None:
        dialect = "executor" if ("outofplace" in a or "minBytes" in a) else "msccl"
    for key in _ALGO_REQUIRED[dialect]:
        if key not in a:
            raise XmlError(f"attribute {key} of <algo> is missing ({dialect} dialect): the runtime drops the algorithm")
    algo = Algo(a.get("name", ""), a["proto"], _int(a, "nchannels", "algo"), _int(a, "nchunksperloop", "algo"),
                _int(a, "ngpus", "algo"), a["coll"], _int(a, "inplace", "algo"),
                _int(a, "outofplace", "algo") if "outofplace" in a else 0,
                _int(a, "minBytes", "algo") if "minBytes" in a else 0,
                _int(a, "maxBytes", "algo") if "maxBytes" in a else 1 << 27)
    for g in root.findall("gpu"):
        for key in ("id", "i_chunks", "o_chunks", "s_chunks"):
            if key not in g.attrib:
                raise XmlError(f"attribute {key} of <gpu> is missing")
        gpu = Gpu(_int(g.attrib, "id", "gpu"), _int(g.attrib, "i_chunks", "gpu"), _int(g.attrib, "o_chunks", "gpu"),
                  _int(g.attrib, "s_chunks", "gpu"))
        for t in g.findall("tb"):
            for key in ("id", "send", "recv", "chan"):
                if key not in t.attrib:
                    raise XmlError(f"attribute {key} of <tb> on gpu {gpu.id} is missing")
            tb = Tb(*(_int(t.attrib, k, "tb") for k in ("id", "send", "recv", "chan")))
            for s in t.findall("step"):
                for key in _STEP_ATTRS:
                    if key not in s.attrib:
                        raise XmlError(f"attribute {key} of <step> in tb {tb.id} on gpu {gpu.id} is missing")
                b = s.attrib
                tb.steps.append(Step(_int(b, "s", "step"), b["type"], b["srcbuf"], _int(b, "srcoff", "step"),
                                     b["dstbuf"], _int(b, "dstoff", "step"), _int(b, "cnt", "step"),
                                     _int(b, "depid", "step"), _int(b, "deps", "step"), _int(b, "hasdep", "step")))
            gpu.tbs.append(tb)
        algo.gpus.append(gpu)
    return algo, dialect


def _int(attrs, key, where) -> int:
    try:
        return int(attrs[key])
    except ValueError:
        raise XmlError(f"attribute {key} of <{where}> is not an integer: {attrs[key]!r}") from None


# ---------------------------------------------------------------------------------------------- validation
def validate(algo: Algo, dialect: str = "executor", sm_budget: int = DEFAULT_SM_BUDGET) -> list[str]:
    """The runtime parser's rules and limits (notes section 3.10/3.11) plus our semantic ones; the problems
    found, first one first (empty when the file is sound for the parser)."""
    errs: list[str] = []
    colls = KNOWN_COLLS[dialect]
    if algo.proto not in PROTOCOLS:
        errs.append(f'proto="{algo.proto}" is not one of {", ".join(PROTOCOLS)} (case-sensitive)')
    if algo.coll not in colls:
        hint = {"reduce_scatter": "reducescatter", "reducescatter": "reduce_scatter"}.get(algo.coll)
        errs.append(f'coll="{algo.coll}" is not a {dialect}-dialect collective'
                    + (f' (this dialect spells it "{hint}")' if hint else ""))
    if algo.min_bytes < 0 or algo.max_bytes < 0 or algo.min_bytes > algo.max_bytes:
        errs.append(f"minBytes={algo.min_bytes} and maxBytes={algo.max_bytes} are not a valid range")
    if algo.inplace not in (0, 1) or algo.outofplace not in (0, 1):
        errs.append("inplace and outofplace must be 0 or 1")
    if algo.nchunksperloop < 1:
        errs.append("nchunksperloop must be positive")
    ids = sorted(g.id for g in algo.gpus)
    if ids != list(range(algo.ngpus)):
        errs.append(f"ngpus={algo.ngpus} but the <gpu> ids are {ids[:8]}{'...' if len(ids) > 8 else ''}")
    for g in algo.gpus:
        where = f"gpu {g.id}"
        nodes = 1 + algo.ngpus + len(g.tbs) + sum(len(t.steps) for t in g.tbs)
        if nodes > MAX_NODES_PER_RANK:
            errs.append(f"{where}: {nodes} XML nodes for this rank, above the runtime parser's {MAX_NODES_PER_RANK} "
                        "(use fewer chunks per shard, or a schedule with fewer transfers)")
        if min(g.i_chunks, g.o_chunks, g.s_chunks) < 0:
            errs.append(f"{where}: negative buffer size")
        if len(g.tbs) > sm_budget:
            errs.append(f"{where}: {len(g.tbs)} threadblocks, above the budget of {sm_budget} co-resident blocks "
                        "(kernels spin on flags across blocks; raise the budget only if the GPU has that many SMs)")
        tb_ids = sorted(t.id for t in g.tbs)
        if tb_ids != list(range(len(g.tbs))):
            errs.append(f"{where}: threadblock ids {tb_ids[:8]} are not 0..{len(g.tbs) - 1} without gaps")
        per_chan = Counter()
        for t in g.tbs:
            for peer, role in ((t.send, "send"), (t.recv, "recv")):
                if not -1 <= peer < algo.ngpus or peer == g.id:
                    errs.append(f"{where} tb {t.id}: {role}={peer} is not another rank or -1")
                if peer >= 0:
                    per_chan[(role, peer, t.chan)] += 1
            if not 0 <= t.chan < MAX_CHANNELS:
                errs.append(f"{where} tb {t.id}: chan={t.chan} out of range")
        for (role, peer, chan), count in per_chan.items():
            if count > 1:
                errs.append(f"{where}: {count} threadblocks {role} with peer {peer} on channel {chan}; a connection "
                            "is one FIFO between exactly one sending and one receiving threadblock")
        for role in ("send", "recv"):
            for chan in {c for (r, _, c) in per_chan if r == role}:
                if sum(v for (r, _, c), v in per_chan.items() if r == role and c == chan) > MAX_TBS_PER_CHANNEL:
                    errs.append(f"{where}: more than {MAX_TBS_PER_CHANNEL} {role} threadblocks on channel {chan}")
        sizes = {"i": g.i_chunks, "o": g.o_chunks, "s": g.s_chunks}
        by_id = {t.id: t for t in g.tbs}
        for t in g.tbs:
            if len(t.steps) >= MAX_STEPS:
                errs.append(f"{where} tb {t.id}: {len(t.steps)} steps, the runtime allows fewer than {MAX_STEPS} "
                            "(spread the connection over more channels, or use fewer chunks per shard)")
            pending_nop = False
            for k, st in enumerate(t.steps):
                at = f"{where} tb {t.id} step {st.s}"
                if st.s != k:
                    errs.append(f"{at}: steps must be numbered 0, 1, 2, ... in order (expected s={k})")
                if st.type not in STEP_TYPES:
                    errs.append(f"{at}: unknown type {st.type!r}")
                    continue
                if st.type == "nop":
                    pending_nop = True
                elif pending_nop and st.depid < 0:
                    errs.append(f"{at}: a chain of nop dependencies must end in a step with its own depid "
                                "(the runtime ignores the file otherwise)")
                    pending_nop = False
                else:
                    pending_nop = False
                if not 0 <= st.cnt < MAX_COUNT:
                    errs.append(f"{at}: cnt={st.cnt}, the runtime needs 0 <= cnt < {MAX_COUNT}")
                if st.hasdep not in (0, 1):
                    errs.append(f"{at}: hasdep must be 0 or 1")
                sends = st.type in ("s", "rcs", "rrs", "rrcs")
                recvs = st.type in ("r", "rcs", "rrs", "rrc", "rrcs")
                if sends and t.send < 0:
                    errs.append(f"{at}: type {st.type} sends but the threadblock has send=-1")
                if recvs and t.recv < 0:
                    errs.append(f"{at}: type {st.type} receives but the threadblock has recv=-1")
                reads_src = st.type in ("s", "rrs", "rrc", "rrcs", "cpy", "re")
                writes_dst = st.type in ("r", "rcs", "rrc", "rrcs", "cpy", "re")
                for used, buf, off in ((reads_src, st.srcbuf, st.srcoff), (writes_dst, st.dstbuf, st.dstoff)):
                    if not used:
                        continue
                    if buf not in sizes:
                        errs.append(f"{at}: buffer {buf!r} is not i, o or s")
                    elif off < 0 or off + st.cnt > sizes[buf]:
                        errs.append(f"{at}: chunks {off}..{off + st.cnt - 1} of buffer {buf} are outside its "
                                    f"{sizes[buf]} chunks")
                if st.depid >= 0:
                    target = by_id.get(st.depid)
                    if target is None or st.depid == t.id:
                        errs.append(f"{at}: depends on threadblock {st.depid}, which "
                                    + ("is itself" if st.depid == t.id else "does not exist"))
                    elif not 0 <= st.deps < len(target.steps):
                        errs.append(f"{at}: depends on step {st.deps} of tb {st.depid}, which does not exist")
                    elif target.steps[st.deps].hasdep != 1:
                        errs.append(f"{at}: depends on tb {st.depid} step {st.deps}, which has hasdep=0 and so never "
                                    "publishes its completion (the wait would never end)")
    return errs


# ------------------------------------------------------------------------------------------------ simulation
_EMPTY = None


def _plus(a, b):
    """Reduce two chunk values: (input chunk index or -1 when mixed, mask of contributing ranks, counted twice)."""
    if a is None or b is None:
        return ("empty", 0, True) if a is None and b is None else (a or b)[:2] + (True,)
    index = a[0] if a[0] == b[0] else -1
    return (index, a[1] | b[1], a[2] or b[2] or bool(a[1] & b[1]))


def simulate(algo: Algo) -> list[str]:
    """Run the program symbolically: every threadblock steps through its list, receives match sends in FIFO
    order per (sender, receiver, channel), dependencies wait for the named step. A chunk's value is the input
    chunk index it derives from, the set of ranks whose contributions it holds and whether one was counted twice.
    Returns the faults: a deadlock (with where a stuck threadblock waits), a size mismatch between a send and its
    receive, or a final state that is not the collective (a contribution missing, foreign or counted twice).
    Reducing into an empty chunk counts as a fault too (it reads data that was never there)."""
    n, c = algo.ngpus, algo.nchunksperloop
    per = c // n if n else 0
    bufs: dict[tuple, list] = {}
    for g in algo.gpus:
        for name, size in (("i", g.i_chunks), ("o", g.o_chunks), ("s", g.s_chunks)):
            bufs[(g.id, name)] = [_EMPTY] * size
    coll = algo.coll
    in_place = algo.inplace == 1 and algo.outofplace == 0
    for g in algo.gpus:
        if coll == "allgather" and in_place:
            cells = bufs[(g.id, "o")]
            for k in range(per):
                if g.id * per + k < len(cells):
                    cells[g.id * per + k] = (k, 1 << g.id, False)
        else:
            cells = bufs[(g.id, "i")]
            for k in range(len(cells)):
                cells[k] = (k, 1 << g.id, False)
    fifo: dict[tuple, deque] = defaultdict(deque)
    pc = {(g.id, t.id): 0 for g in algo.gpus for t in g.tbs}
    tbs = {(g.id, t.id): t for g in algo.gpus for t in g.tbs}
    progress = True
    while progress:
        progress = False
        for key, t in tbs.items():
            rank = key[0]
            steps, p = t.steps, pc[key]
            while p < len(steps):
                st = steps[p]
                if st.depid >= 0 and pc.get((rank, st.depid), 0) <= st.deps:
                    break
                if st.type in ("r", "rcs", "rrs", "rrc", "rrcs"):
                    q = fifo[(t.recv, rank, t.chan)]
                    if not q:
                        break
                    data = q.popleft()
                    if len(data) != st.cnt:
                        return [f"gpu {rank} tb {t.id} step {st.s}: receives {st.cnt} chunks but the matching send "
                                f"from gpu {t.recv} on channel {t.chan} carried {len(data)}"]
                kind = st.type
                if kind == "s":
                    fifo[(rank, t.send, t.chan)].append(bufs[(rank, st.srcbuf)][st.srcoff:st.srcoff + st.cnt])
                elif kind in ("r", "rcs"):
                    bufs[(rank, st.dstbuf)][st.dstoff:st.dstoff + st.cnt] = data
                    if kind == "rcs":
                        fifo[(rank, t.send, t.chan)].append(data)
                elif kind in ("rrc", "rrs", "rrcs"):
                    mine = bufs[(rank, st.srcbuf)][st.srcoff:st.srcoff + st.cnt]
                    total = [_plus(a, b) for a, b in zip(mine, data)]
                    if kind != "rrs":
                        bufs[(rank, st.dstbuf)][st.dstoff:st.dstoff + st.cnt] = total
                    if kind != "rrc":
                        fifo[(rank, t.send, t.chan)].append(total)
                elif kind == "cpy":
                    bufs[(rank, st.dstbuf)][st.dstoff:st.dstoff + st.cnt] = \
                        bufs[(rank, st.srcbuf)][st.srcoff:st.srcoff + st.cnt]
                elif kind == "re":
                    src = bufs[(rank, st.srcbuf)][st.srcoff:st.srcoff + st.cnt]
                    dst = bufs[(rank, st.dstbuf)]
                    for k in range(st.cnt):
                        dst[st.dstoff + k] = _plus(dst[st.dstoff + k], src[k])
                p += 1
                pc[key] = p
                progress = True
    stuck = [(k, t) for k, t in tbs.items() if pc[k] < len(t.steps)]
    if stuck:
        (rank, tid), t = stuck[0]
        st = t.steps[pc[(rank, tid)]]
        why = (f"waits for tb {st.depid} step {st.deps}" if st.depid >= 0 and pc.get((rank, st.depid), 0) <= st.deps
               else f"waits for data from gpu {t.recv} on channel {t.chan} that never comes")
        return [f"deadlock: {len(stuck)} threadblocks never finish; gpu {rank} tb {tid} step {st.s} ({st.type}) {why}"]
    leftovers = [k for k, q in fifo.items() if q]
    if leftovers:
        a, b, ch = leftovers[0]
        return [f"gpu {a} sends {len(fifo[leftovers[0]])} message(s) to gpu {b} on channel {ch} that are never "
                "received"]
    return _postcondition(algo, bufs, per, in_place)


def _postcondition(algo: Algo, bufs, per, in_place) -> list[str]:
    n = algo.ngpus
    full = (1 << n) - 1
    coll = algo.coll.replace("_", "")

    def check(rank, buf, off, want):
        cells = bufs.get((rank, buf), [])
        got = cells[off] if off < len(cells) else None
        if got == want:
            return []
        if got is None:
            return [f"gpu {rank} buffer {buf} chunk {off} ends empty"]
        if got[2]:
            return [f"gpu {rank} buffer {buf} chunk {off}: a contribution is counted twice (or an empty chunk was "
                    "reduced)"]
        ranks = [r for r in range(n) if got[1] >> r & 1]
        return [f"gpu {rank} buffer {buf} chunk {off} holds input chunk {got[0]} of ranks "
                f"{ranks[:6]}{'...' if len(ranks) > 6 else ''}, expected chunk {want[0]} of "
                f"{'all ranks' if want[1] == full else [r for r in range(n) if want[1] >> r & 1]}"]

    for r in range(n):
        if coll == "allgather":
            for s in range(n):
                for k in range(per):
                    err = check(r, "o", s * per + k, (k, 1 << s, False))
                    if err:
                        return err
        elif coll == "reducescatter":
            for k in range(per):
                err = (check(r, "i", r * per + k, (r * per + k, full, False)) if in_place
                       else check(r, "o", k, (r * per + k, full, False)))
                if err:
                    return err
        elif coll == "allreduce":
            for k in range(algo.nchunksperloop):
                err = check(r, "i" if in_place else "o", k, (k, full, False))
                if err:
                    return err
        elif coll == "alltoall":           # output block s of rank r = input block r of rank s (in place: in i)
            for s in range(n):
                for k in range(per):
                    err = check(r, "i" if in_place else "o", s * per + k, (r * per + k, 1 << s, False))
                    if err:
                        return err
        else:
            return [f"no postcondition known for coll={algo.coll}: only its soundness was simulated"]
    return []


@dataclass
class Report:
    ok: bool
    dialect: str
    problems: list[str]
    ranks: int
    threadblocks: int
    steps: int

    @property
    def first(self) -> str:
        return self.problems[0] if self.problems else "ok"


def check_xml(text: str, dialect: str | None = None, sm_budget: int = DEFAULT_SM_BUDGET) -> Report:
    """Validate (parser rules) and, when that passes, simulate (deadlock, FIFO matching, postcondition)."""
    try:
        algo, dialect = parse_xml(text, dialect)
    except XmlError as exc:
        return Report(False, dialect or "?", [str(exc)], 0, 0, 0)
    problems = validate(algo, dialect, sm_budget)
    if not problems:
        problems = simulate(algo)
    tbs = sum(len(g.tbs) for g in algo.gpus)
    steps = sum(len(t.steps) for g in algo.gpus for t in g.tbs)
    return Report(not problems, dialect, problems, algo.ngpus, tbs, steps)


def export(topo: Topology, schedule: Schedule, dialect: str = "executor", sm_budget: int = DEFAULT_SM_BUDGET,
           **kwargs) -> tuple[str, Report]:
    """Lower, write, then validate and simulate the written text; raise XmlError naming the first problem
    rather than return a file that fails. On a switched fabric the schedule is first turned into the GPU-to-GPU
    sends the runtime issues (``solvers.core.switch_paths.network_view``), which are verified again. A custom
    collective is refused (NotApplicable)."""
    _refuse_custom(schedule)
    if topo.switch_nodes:
        from ..core.switch_paths import network_view
        from ..core.verify import verify

        topo, schedule = network_view(topo, schedule)
        verify(topo, schedule).raise_if_failed()
    text = to_xml(lower(topo, schedule, **kwargs), dialect)
    report = check_xml(text, dialect, sm_budget)
    if not report.ok:
        raise XmlError(f"the exported XML fails its check: {report.first}")
    return text, report
