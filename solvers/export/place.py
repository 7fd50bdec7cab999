"""Placing a lowered program's instructions on threadblocks and channels, in columns (``Lowering.place``).

``Instructions`` holds one row per instruction in program order (numpy columns: rank, threadblock role and peers,
step type, source and destination slots, count, the transfer it carries out) and its data dependencies as pairs
(instruction ``dst`` waits for instruction ``src``). ``dependencies`` derives those pairs from the chunks each
instruction reads and writes; ``channels`` gives every transfer its channel; ``merge_pairs`` and
``fuse_forwards`` pair send and receive threadblocks and fuse receive-then-forward; ``assemble`` writes the
result as the program IR of ``program.py``. Working on columns keeps a 256-rank program of millions of
instructions to a few numpy passes (bench/export_speed.py); the rules are the ones of ``lower.py``'s docstring.
"""
from __future__ import annotations

from collections import Counter, defaultdict
from dataclasses import dataclass

import numpy as np

from ..core.sorted_unique import sorted_unique
from .line_writer import write_lines
from .msccl_xml import GPU_LINE, STEP_LINE, TB_LINE, algo_tag
from .program import Algo, Gpu, OverLimit, Step, Tb

KINDS = ("s", "r", "rrc", "cpy", "rcs", "rrcs", "nop", "re")
S, R, RRC, CPY, RCS, RRCS, NOP, RE = range(len(KINDS))
BUFS = ("i", "o", "s")
I_BUF, O_BUF, S_BUF = range(len(BUFS))
PAIR, SEND, RECV, LOCAL = range(4)       # threadblock roles, in the order a rank lists its threadblocks
_KIND_NAMES = np.array(KINDS, dtype=object)
_BUF_NAMES = np.array(BUFS, dtype=object)


@dataclass
class Instructions:
    """A program's instructions in program order, one numpy column per field: ``node`` the rank, ``role`` and
    ``peer`` the threadblock it runs on before channels (send to / receive from ``peer``, or local), ``kind``
    (``KINDS``), source ``sbuf``/``soff`` and destination ``dbuf``/``doff`` (``BUFS``; both the same slot for a
    plain send or receive), ``cnt`` chunks, ``slot`` the transfer it carries out (-1 for a local copy), ``ends``
    whether a send or receive names both ends (never fused); ``src``/``dst`` the dependencies."""

    node: np.ndarray
    role: np.ndarray
    peer: np.ndarray
    kind: np.ndarray
    sbuf: np.ndarray
    soff: np.ndarray
    dbuf: np.ndarray
    doff: np.ndarray
    cnt: np.ndarray
    slot: np.ndarray
    ends: np.ndarray
    src: np.ndarray
    dst: np.ndarray

    def __len__(self) -> int:
        return len(self.node)


class Rows:
    """Instructions added one at a time (the lowerings that follow chunks one by one), then ``instructions()``."""

    def __init__(self):
        self._cols: list[list[int]] = [[] for _ in range(11)]
        self._touches: list[list[int]] = [[] for _ in range(6)]

    def add(self, node: int, role: int, peer: int, kind: int, sbuf: int, soff: int, dbuf: int, doff: int, cnt: int,
            slot: int = -1, ends: bool = False) -> int:
        """Append an instruction; its id."""
        op = len(self._cols[0])
        for col, value in zip(self._cols, (node, role, peer, kind, sbuf, soff, dbuf, doff, cnt, slot, ends)):
            col.append(value)
        return op

    def touch(self, op: int, node: int, buf: int, first: int, cnt: int, writes: bool) -> None:
        """Instruction ``op`` reads (or writes) chunks ``first .. first + cnt - 1`` of ``buf`` on ``node``; touches
        count in the order they are made."""
        for col, value in zip(self._touches, (op, node, buf, first, cnt, writes)):
            col.append(value)

    def instructions(self) -> Instructions:
        cols = [np.array(c, dtype=np.int64) for c in self._cols]
        cols[10] = cols[10].astype(bool)
        t = [np.array(c, dtype=np.int64) for c in self._touches]
        src, dst = dependencies(t[0], t[1], t[2], t[3], t[4], t[5].astype(bool), len(cols[0]))
        return Instructions(*cols, src, dst)


def dependencies(op, node, buf, first, cnt, writes, m: int) -> tuple[np.ndarray, np.ndarray]:
    """The data dependencies of ``m`` instructions from their touches (one row each, in the order they happen:
    instruction ``op`` reads or ``writes`` chunks ``first .. first + cnt - 1`` of ``buf`` on ``node``): on every
    chunk, a touch waits for the last write before it, and a write also for the reads since that write. Pairs
    (src, dst), dst waiting for src, without repeats or self-dependencies, ordered by dst then src."""
    total = int(cnt.sum()) if len(cnt) else 0
    if total == 0:
        return np.empty(0, np.int64), np.empty(0, np.int64)
    width = int((first + cnt).max()) + 1
    touch = np.repeat(np.arange(len(op)), cnt)
    cell = ((node * len(BUFS) + buf) * width + first)[touch] + (np.arange(total) - np.repeat(np.cumsum(cnt) - cnt,
                                                                                              cnt))
    order = np.argsort(cell, kind="stable")            # per chunk, its touches in the order they happen
    cell, touch = cell[order], touch[order]
    who, w = op[touch], writes[touch]
    pos = np.arange(total)
    starts_here = np.ones(total, dtype=bool)
    starts_here[1:] = cell[1:] != cell[:-1]
    starts = np.flatnonzero(starts_here)
    chunk = np.cumsum(starts_here) - 1
    chunk_start, chunk_end = starts[chunk], np.append(starts[1:], total)[chunk]
    last_write = np.maximum.accumulate(np.where(w, pos, -1))
    before = np.concatenate(([-1], last_write[:-1]))           # the last write strictly before each touch
    waits = before >= chunk_start
    next_write = np.minimum.accumulate(np.where(w, pos, total)[::-1])[::-1]
    after = np.append(next_write[1:], total)                    # the next write strictly after each touch
    read_then_write = ~w & (after < chunk_end)
    return unique_pairs(np.concatenate((who[before[waits]], who[read_then_write])),
                        np.concatenate((who[waits], who[after[read_then_write]])), m)


def unique_pairs(src: np.ndarray, dst: np.ndarray, m: int) -> tuple[np.ndarray, np.ndarray]:
    """Dependency pairs without repeats or self-dependencies, ordered by dst then src."""
    keep = src != dst
    key = sorted_unique(dst[keep] * m + src[keep])
    return key % m, key // m


def channels(links: list, item_link: np.ndarray, item_copy: np.ndarray, ops_per_tb: int, tbs_per_channel: int,
             max_channels: int) -> np.ndarray:
    """The channel of each transfer, given by its link and copy in program order. Each link's transfers of one
    copy are cut into blocks of ``ops_per_tb``; every block is one threadblock pair, on the lowest channel that
    the GPU pair does not use yet and on which neither end has ``tbs_per_channel`` threadblocks of that role
    (blocks taken copy by copy, block by block, parallel link by parallel link). Without limits hit this is
    channel k for the k-th parallel link and further channels for further blocks and copies; both ends of a
    connection see the same sequence. OverLimit (a NotApplicable) when more than ``max_channels`` channels would
    be needed."""
    if not len(item_link):
        return np.empty(0, np.int64)
    parallel = np.empty(len(links), np.int64)
    seen: Counter = Counter()
    for i, l in enumerate(links):
        parallel[i] = seen[(l.src, l.dst)]
        seen[(l.src, l.dst)] += 1
    nlinks, npar, ncopies = len(links), int(parallel.max()) + 1, int(item_copy.max()) + 1
    key = item_link * ncopies + item_copy
    order = np.argsort(key, kind="stable")
    sorted_key = key[order]
    new = np.ones(len(key), dtype=bool)
    new[1:] = sorted_key[1:] != sorted_key[:-1]
    starts = np.flatnonzero(new)
    block = np.empty(len(key), np.int64)
    block[order] = (np.arange(len(key)) - starts[np.cumsum(new) - 1]) // ops_per_tb
    nblocks = int(block.max()) + 1
    code = ((item_copy * nblocks + block) * npar + parallel[item_link]) * nlinks + item_link
    wanted, inverse = np.unique(code, return_inverse=True)      # sorted: copy, block, parallel index, link
    pair_used: dict[tuple, set] = defaultdict(set)
    sends: Counter = Counter()
    recvs: Counter = Counter()
    chosen = np.empty(len(wanted), np.int64)
    first_over = None
    for k, link in enumerate((wanted % nlinks).tolist()):
        l = links[link]
        c = 0
        while (c in pair_used[(l.src, l.dst)] or sends[(l.src, c)] >= tbs_per_channel
               or recvs[(l.dst, c)] >= tbs_per_channel):
            c += 1
        if c >= max_channels and first_over is None:
            first_over = l
        pair_used[(l.src, l.dst)].add(c)
        sends[(l.src, c)] += 1
        recvs[(l.dst, c)] += 1
        chosen[k] = c
    if first_over is not None:
        need = int(chosen.max()) + 1
        raise OverLimit(f"the program needs {need} channels, more than the runtime's {max_channels} (first on gpu "
                        f"{first_over.src} to {first_over.dst}); use fewer copies or a schedule with fewer transfers "
                        "per link", "channels", need, max_channels)
    return chosen[inverse]


def _tb_code(node, role, speer, rpeer, chan, n: int) -> np.ndarray:
    """One integer per threadblock that sorts as a rank lists its threadblocks: by rank, role (``PAIR`` first),
    send peer, receive peer, channel."""
    width = int(chan.max()) + 1 if len(chan) else 1
    return (((node * 4 + role) * (n + 1) + speer + 1) * (n + 1) + rpeer + 1) * width + chan


def merge_pairs(node, role, speer, rpeer, chan, n: int) -> tuple[np.ndarray, np.ndarray, np.ndarray]:
    """On every rank and channel, the i-th send threadblock and the i-th receive threadblock (in order of first
    use) become one threadblock with both peers: each instruction's new (role, send peer, receive peer). Its steps
    keep the program order of all instructions, the (step, send before receive) order every dependency and every
    send-receive match already follows, so the merged program still cannot deadlock; it runs the two links'
    instructions one after the other."""
    _, first, inverse = np.unique(_tb_code(node, role, speer, rpeer, chan, n), return_index=True,
                                  return_inverse=True)
    t_node, t_role, t_chan = node[first].tolist(), role[first].tolist(), chan[first].tolist()
    t_speer, t_rpeer = speer[first].copy(), rpeer[first].copy()
    new_role = role[first].copy()
    queues: dict[tuple, tuple[list, list]] = defaultdict(lambda: ([], []))
    for k in np.argsort(first).tolist():
        if t_role[k] in (SEND, RECV):
            queues[(t_node[k], t_chan[k])][t_role[k] - SEND].append(k)
    for sends, recvs in queues.values():
        for a, b in zip(sends, recvs):
            new_role[a] = new_role[b] = PAIR
            t_rpeer[a] = t_rpeer[b]
            t_speer[b] = t_speer[a]
    return new_role[inverse], t_speer[inverse], t_rpeer[inverse]


def fuse_forwards(ins: Instructions, role, tb, kind) -> tuple[np.ndarray, np.ndarray, np.ndarray, np.ndarray]:
    """In a merged threadblock (receive peer u, send peer w), a receive of chunks X followed at once by the send of
    the same chunks X to w becomes one step: ``rcs`` (receive, copy, send) after a plain receive, ``rrcs``
    (receive, reduce, copy, send) after a receive-reduce. Data that flows straight through then costs one step
    instead of two. Only a send that waits for nothing but that receive is fused (a send that also waits for
    another threadblock, e.g. a second reduction into the same chunks, could make the receive wait for itself).
    The fused step keeps the receive's place; whatever waited for the send waits for it. ``tb`` numbers each
    instruction's threadblock. Returns the instructions kept (a mask), their kinds, and the dependencies renumbered
    over the kept instructions."""
    m = len(kind)
    order = np.argsort(tb, kind="stable")
    prev = np.full(m, -1, np.int64)                 # the instruction before, on the same threadblock
    same = tb[order[1:]] == tb[order[:-1]]
    prev[order[1:][same]] = order[:-1][same]
    p = np.maximum(prev, 0)
    fusable = ((kind == S) & ~ins.ends & (role == PAIR) & (prev >= 0) & ((kind[p] == R) | (kind[p] == RRC))
               & (ins.dbuf[p] == ins.sbuf) & (ins.doff[p] == ins.soff) & (ins.cnt[p] == ins.cnt))
    src, dst = ins.src, ins.dst
    elsewhere = (src != prev[dst]) & (tb[src] != tb[dst])   # waits for another threadblock, not its receive
    fusable &= np.bincount(dst[elsewhere], minlength=m) == 0
    fused = np.flatnonzero(fusable)
    keep = np.ones(m, dtype=bool)
    if not len(fused):
        return keep, kind, src, dst
    into = prev[fused]
    kind = kind.copy()
    kind[into] = np.where(kind[into] == R, RCS, RRCS)
    target = np.arange(m)
    target[fused] = into
    keep[fused] = False
    new_id = np.cumsum(keep) - 1
    src, dst = unique_pairs(new_id[target[src]], new_id[target[dst]], int(keep.sum()))
    return keep, kind[keep], src, dst


def assemble(n: int, node, role, speer, rpeer, chan, kind, ins: Instructions, keep, src, dst,
             header: dict, buffers: list[tuple[int, int, int]]) -> "Placed":
    """The placed program (``Placed``): threadblocks in the order their rank lists them (merged pairs, sends,
    receives, local), each with its instructions in program order. A dependency on an instruction of the same
    threadblock is dropped (program order keeps it); of those on another threadblock only the latest step is kept;
    a step that waits for more than one threadblock gets ``nop`` steps in front, one for each but the last (the
    runtime reads one dependency per step). ``header``: the ``Algo`` fields besides ``gpus`` and ``nchannels``;
    ``buffers``: each rank's (i, o, s) chunks."""
    sbuf, soff, dbuf, doff, cnt = ins.sbuf, ins.soff, ins.dbuf, ins.doff, ins.cnt
    if keep is not None and not keep.all():
        sbuf, soff, dbuf, doff, cnt = sbuf[keep], soff[keep], dbuf[keep], doff[keep], cnt[keep]
    m = len(node)
    codes, first, tb = np.unique(_tb_code(node, role, speer, rpeer, chan, n), return_index=True,
                                 return_inverse=True)
    ntb = len(codes)
    t_node = node[first]
    local_id = np.arange(ntb) - np.searchsorted(t_node, t_node)     # codes sort by rank, then as the rank lists
    order = np.argsort(tb, kind="stable")                            # by threadblock, program order inside
    by_tb = tb[order]
    tb_first_op = np.searchsorted(by_tb, np.arange(ntb))
    position = np.empty(m, np.int64)
    position[order] = np.arange(m) - tb_first_op[by_tb]
    # one dependency per other threadblock: its latest step
    other = tb[src] != tb[dst]
    src, dst = src[other], dst[other]
    src_tb = tb[src]
    pick = np.lexsort((position[src], src_tb, dst))
    src, dst, src_tb = src[pick], dst[pick], src_tb[pick]
    last = np.ones(len(dst), dtype=bool)
    last[:-1] = (dst[1:] != dst[:-1]) | (src_tb[1:] != src_tb[:-1])
    src, dst, src_tb = src[last], dst[last], src_tb[last]
    extra = np.maximum(np.bincount(dst, minlength=m) - 1, 0)          # nop steps in front
    rows = (1 + extra)[order]
    row_end = np.cumsum(rows)
    row_start = np.empty(m, np.int64)
    row_start[order] = row_end - rows
    total = int(row_end[-1]) if m else 0
    tb_first_row = row_start[order[tb_first_op]] if m else np.empty(0, np.int64)
    own = row_start + extra
    index = own - tb_first_row[tb]                                    # the step number of each instruction
    r_kind = np.full(total, NOP, np.int64)
    r_sbuf, r_soff = np.full(total, I_BUF, np.int64), np.full(total, -1, np.int64)
    r_dbuf, r_doff = np.full(total, O_BUF, np.int64), np.full(total, -1, np.int64)
    r_cnt, r_depid, r_deps = np.zeros(total, np.int64), np.full(total, -1, np.int64), np.full(total, -1, np.int64)
    r_hasdep = np.zeros(total, np.int64)
    r_kind[own], r_sbuf[own], r_soff[own], r_dbuf[own], r_doff[own], r_cnt[own] = kind, sbuf, soff, dbuf, doff, cnt
    r_hasdep[own[src]] = 1
    # the j-th of a step's k dependencies (in threadblock order) goes to its j-th nop, the last to the step itself
    j = np.arange(len(dst)) - np.searchsorted(dst, dst)
    at = row_start[dst] + j
    r_depid[at], r_deps[at] = local_id[src_tb], index[src]
    t_chan = np.where(role[first] == LOCAL, 0, chan[first])
    return Placed(header, buffers, t_node, local_id, speer[first], rpeer[first], t_chan,
                  np.append(tb_first_row, total), (r_kind, r_sbuf, r_soff, r_dbuf, r_doff, r_cnt, r_depid, r_deps,
                                                   r_hasdep))


@dataclass
class Placed:
    """A program placed on threadblocks, as columns: ``header`` the ``Algo`` fields besides ``gpus`` and
    ``nchannels``, ``buffers`` each rank's (i, o, s) chunks; per threadblock in the order the ranks list them
    ``tb_node``, ``tb_id``, ``tb_send``, ``tb_recv``, ``tb_chan`` and ``tb_start`` (its first step's row;
    ``tb_start[-1]`` is the number of steps); per step ``rows``: type (``KINDS``), source and destination
    buffer (``BUFS``) and offset, count, depid, deps, hasdep. ``algo()`` is the program IR, ``text(dialect)``
    the file ``msccl_xml.to_xml`` writes for it, written straight from the columns."""

    header: dict
    buffers: list
    tb_node: np.ndarray
    tb_id: np.ndarray
    tb_send: np.ndarray
    tb_recv: np.ndarray
    tb_chan: np.ndarray
    tb_start: np.ndarray
    rows: tuple

    @property
    def nchannels(self) -> int:
        return 1 + int(self.tb_chan.max(initial=0))

    @property
    def tbs_per_rank(self) -> int:
        return int(np.bincount(self.tb_node, minlength=1).max()) if len(self.tb_node) else 0

    @property
    def steps_per_tb(self) -> int:
        return int(np.diff(self.tb_start).max(initial=0))

    @property
    def max_offset(self) -> int:
        """The largest srcoff or dstoff of any step (the readers keep them in int16, ``program.MAX_OFFSET``)."""
        soff, doff = self.rows[2], self.rows[4]
        return int(max(soff.max(initial=0), doff.max(initial=0)))

    @property
    def nodes_per_rank(self) -> int:
        """The most XML nodes the runtime parser reads for one rank: the ``<algo>``, every ``<gpu>``, and the rank's
        threadblocks and steps (``program.MAX_NODES_PER_RANK``)."""
        if not len(self.tb_node):
            return 1 + len(self.buffers)
        n = max(len(self.buffers), int(self.tb_node.max()) + 1)
        per = np.bincount(self.tb_node, minlength=n) + np.bincount(self.tb_node, weights=np.diff(self.tb_start),
                                                                   minlength=n).astype(np.int64)
        return 1 + len(self.buffers) + int(per.max())

    def _numbers(self) -> np.ndarray:
        """Each step's number on its threadblock."""
        return np.arange(int(self.tb_start[-1])) - np.repeat(self.tb_start[:-1], np.diff(self.tb_start))

    def _step_fields(self) -> list[list]:
        kind, sbuf, soff, dbuf, doff, cnt, depid, deps, hasdep = self.rows
        return [self._numbers().tolist(), _KIND_NAMES[kind].tolist(), _BUF_NAMES[sbuf].tolist(), soff.tolist(),
                _BUF_NAMES[dbuf].tolist(), doff.tolist(), cnt.tolist(), depid.tolist(), deps.tolist(),
                hasdep.tolist()]

    def _threadblocks(self):
        """(rank, [(id, send, recv, chan, first step row, end row), ...]) for every rank, threadblocks in order."""
        per_rank: list[list] = [[] for _ in self.buffers]
        bounds = self.tb_start.tolist()
        for t, row in enumerate(zip(self.tb_node.tolist(), self.tb_id.tolist(), self.tb_send.tolist(),
                                    self.tb_recv.tolist(), self.tb_chan.tolist())):
            per_rank[row[0]].append((*row[1:], bounds[t], bounds[t + 1]))
        return enumerate(per_rank)

    def _algo_head(self) -> Algo:
        return Algo(nchannels=self.nchannels, gpus=[], **self.header)

    def algo(self) -> Algo:
        """The program IR (``Algo``/``Gpu``/``Tb``/``Step``)."""
        steps = list(map(Step, *self._step_fields()))
        algo = self._algo_head()
        for r, tbs in self._threadblocks():
            gpu = Gpu(r, *self.buffers[r])
            gpu.tbs = [Tb(ident, send, recv, chan, steps[a:b]) for ident, send, recv, chan, a, b in tbs]
            algo.gpus.append(gpu)
        return algo

    def text(self, dialect: str = "executor") -> str:
        """The file's text, byte for byte ``to_xml(self.algo(), dialect)``; the step lines written from the
        columns at once (``line_writer``)."""
        kind, sbuf, soff, dbuf, doff, cnt, depid, deps, hasdep = self.rows
        blob, ends = write_lines(STEP_LINE, [self._numbers(), (kind, KINDS), (sbuf, BUFS), soff, (dbuf, BUFS), doff,
                                             cnt, depid, deps, hasdep])
        steps = blob.decode("ascii")
        at = [0, *ends.tolist()]                       # where each step's line starts, and the end
        out = [algo_tag(self._algo_head(), dialect), "\n"]
        for r, tbs in self._threadblocks():
            i, o, s = self.buffers[r]
            out.append(GPU_LINE % (r, i, o, s) + "\n")
            for ident, send, recv, chan, a, b in tbs:
                out.append(TB_LINE % (ident, send, recv, chan) + "\n")
                out.append(steps[at[a]:at[b]])
                out.append("    </tb>\n")
            out.append("  </gpu>\n")
        out.append("</algo>\n")
        return "".join(out)
