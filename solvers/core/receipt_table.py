"""Memory-lean proofs that one phase of a schedule is a correct allgather with no piece received twice.

The phase's copies form such an allgather on a switch-free topology when

1. no node receives a piece of its own shard, and every node's receipts of every foreign shard tile [0, 1)
   exactly once (so every node ends with every shard);
2. every transfer whose sender does not own the shard sends only what its sender received in an earlier step
   (causality: the sender holds it at the end of the previous step; a point of a shard arrives exactly once).

Two ways to check it, each reading the transfers in fixed-size batches so that memory stays linear in their
number with a small constant (the verifier's sort of every transfer takes about 40 bytes each on top):

* the receipt table, when the phase uses few distinct chunk bounds (at most TABLE_MAX_CELLS cells): cut [0, 1)
  at all of them (G cells, the same cuts on every shard) and keep the receiving step of every (node, shard, cell),
  n^2 G entries of one or two bytes, filled in one pass and read in a second. Condition 1 holds when every
  foreign entry is written and the transfers cover n(n-1)G cells in all. On gkautz(4,16384), 268M transfers, the
  table is a quarter of a gigabyte.
* shard batches otherwise (BFB on torus(100,100): 119 distinct bounds, 125M transfers): the transfers are grouped
  by shard with a counting sort (one 4-byte row index each), and each batch of shards, whose receipts and sends
  involve no other shard, is checked by sorting only its own transfers (``partition_ok``).

Both only compare bounds, so a bounds table (``Columns.bounds``) is read as ranks.
"""
from __future__ import annotations

import numpy as np

from topologies.model import Topology

from .schedule import Columns, ranked
from .sorted_unique import sorted_unique

TABLE_MAX_BYTES = 1 << 30
TABLE_MAX_CELLS = 4        # a transfer writes and reads one entry per cell it spans: few cells, or shard batches
MAX_ONE = 1 << 20          # bounds up to this are marked in a presence array; beyond it, found by sorting
BATCH = 1 << 22


def tiles_ok(nodes: int, first: int, count: int, one: int, receipts: tuple, sends: tuple,
             order=None) -> bool:
    """Conditions 1 and 2 for the shards first..first+count-1 on nodes 0..nodes-1. ``receipts`` and ``sends`` are
    (node, shard, lo, hi, step) int64 arrays: the receiving node of every receipt of those shards, and the sending
    node of every send whose node is not the shard's owner. Each node other than a shard's owner must receive that
    shard's pieces exactly once, tiling [0, one), and every send must carry only pieces its node received at an
    earlier step. ``order(columns)``: the row order sorting the columns lexicographically (``np.lexsort``'s by
    default; a faster one may be passed). Shared by this module's shard windows and ``switched_proof``."""
    r_node, r_shard, r_lo, r_hi, r_step = receipts
    if (r_node == r_shard).any() or len(r_node) < (nodes - 1) * count:
        return False
    key = r_node * count + (r_shard - first)
    rows = order([key, r_lo]) if order is not None else np.lexsort((r_lo, key))
    key, lo_r, hi_r, step_r = key[rows], r_lo[rows], r_hi[rows], r_step[rows]
    new = np.ones(len(key), dtype=bool)
    new[1:] = key[1:] != key[:-1]
    end = np.ones(len(key), dtype=bool)
    end[:-1] = new[1:]
    if (lo_r[new] != 0).any() or (hi_r[end] != one).any() or (lo_r[1:][~new[1:]] != hi_r[:-1][~new[1:]]).any():
        return False
    if int(new.sum()) != (nodes - 1) * count:
        return False
    s_node, s_shard, s_lo, s_hi, s_step = sends
    if len(s_node) == 0:
        return True
    starts = np.concatenate([[0], np.cumsum(np.bincount(key, minlength=nodes * count))])   # pair p: its tiles
    pair = s_node * count + (s_shard - first)
    begin, stop = starts[pair], starts[pair + 1]
    for offset in range(int((starts[1:] - starts[:-1]).max())):   # the pair's tiles in order, few per pair
        j = begin + offset
        live = j < stop
        j = np.where(live, j, 0)
        overlaps = live & (lo_r[j] < s_hi) & (hi_r[j] > s_lo)
        if (step_r[j][overlaps] >= s_step[overlaps]).any():
            return False
    return True


def partition_ok(n: int, first: int, count: int, one: int, shard, src, dst, lo, hi, step) -> bool:
    """Conditions 1 and 2 (``tiles_ok``) for the shards first..first+count-1, given every transfer of those shards
    as int64 arrays (shard ids global, bounds over ``one``, steps positive)."""
    if n * count * (one + 1) >= 2 ** 62:
        return False
    relays = np.flatnonzero(src != shard)
    return tiles_ok(n, first, count, one, (dst, shard, lo, hi, step),
                    (src[relays], shard[relays], lo[relays], hi[relays], step[relays]))


class _Phase:
    """The rows of one phase of ``cols`` read in batches, as int64 arrays, steps reversed when ``last`` is given."""

    def __init__(self, topo: Topology, cols: Columns, select: bool | None, last: int | None):
        self.cols, self.select, self.last = cols, select, last
        self.n, self.one = topo.num_nodes, cols.one
        self.link_src, self.link_dst = topo.link_ends

    def batches(self):
        """(start, end, mask or None): the mask keeps the rows whose ``reduce`` equals ``select``."""
        total = len(self.cols.step)
        for a in range(0, total, BATCH):
            b = min(a + BATCH, total)
            yield a, b, None if self.select is None else self.cols.reduce[a:b] == self.select

    def _read(self, field: str, part: np.ndarray) -> np.ndarray:
        part = part.astype(np.int64)
        if field == "step" and self.last is not None:
            part = self.last + 1 - part
        return part

    def take(self, field: str, a: int, b: int, mask) -> np.ndarray:
        """Column ``field`` of the batch's rows (those ``mask`` keeps)."""
        column = getattr(self.cols, field)[a:b]
        return self._read(field, column if mask is None else column[mask])

    def gather(self, field: str, rows: np.ndarray) -> np.ndarray:
        """Column ``field`` of the rows ``rows``."""
        return self._read(field, getattr(self.cols, field)[rows])

    def scan(self) -> tuple[np.ndarray, int]:
        """(every chunk bound the phase uses, with 0 and ``one``, ascending; the last step), in one pass."""
        top = 0
        small = self.one <= MAX_ONE
        if small:
            present = np.zeros(self.one + 1, dtype=bool)
            present[[0, self.one]] = True
        else:
            found = np.array([0, self.one], dtype=np.int64)
        for a, b, mask in self.batches():
            lo, hi, steps = self.take("lo", a, b, mask), self.take("hi", a, b, mask), self.take("step", a, b, mask)
            if small:
                present[lo] = True
                present[hi] = True
            else:
                found = sorted_unique(np.concatenate([found, lo, hi]))
            if len(steps):
                top = max(top, int(steps.max()))
        return (np.flatnonzero(present) if small else found), top


def _table_proves(ph: _Phase, cuts: np.ndarray, kind) -> bool:
    n, g = ph.n, len(cuts) - 1
    if ph.one <= MAX_ONE:
        lookup = np.zeros(ph.one + 1, dtype=np.int64)
        lookup[cuts] = np.arange(g + 1)
        cell_of = lookup.__getitem__
    else:
        cell_of = cuts.searchsorted
    table = np.zeros(n * n * g, dtype=kind)

    def rows(a, b, mask, ends):
        c0, c1 = cell_of(ph.take("lo", a, b, mask)), cell_of(ph.take("hi", a, b, mask))
        return (ph.take("shard", a, b, mask), ends[ph.take("link", a, b, mask)], ph.take("step", a, b, mask),
                c0, c1 - c0)

    covered = 0
    for a, b, mask in ph.batches():
        shard, dst, step, c0, span = rows(a, b, mask, ph.link_dst)
        if (dst == shard).any():
            return False
        covered += int(span.sum())
        base = (dst * n + shard) * g + c0
        for offset in range(int(span.max(initial=0))):
            keep = span > offset
            table[base[keep] + offset] = step[keep]
    if covered != n * (n - 1) * g or np.count_nonzero(table) != n * (n - 1) * g:
        return False
    for a, b, mask in ph.batches():
        shard, src, step, c0, span = rows(a, b, mask, ph.link_src)
        relay = src != shard
        base = (src * n + shard) * g + c0
        for offset in range(int(span.max(initial=0))):
            keep = relay & (span > offset)
            if (table[base[keep] + offset] >= step[keep]).any():
                return False
    return True


def _shard_batches_prove(ph: _Phase) -> bool:
    n = ph.n
    counts = np.zeros(n, dtype=np.int64)
    for a, b, mask in ph.batches():
        counts += np.bincount(ph.take("shard", a, b, mask), minlength=n)
    offsets = np.concatenate([[0], np.cumsum(counts)])
    order = np.empty(int(offsets[-1]), dtype=np.int32 if len(ph.cols.step) < 2 ** 31 else np.int64)
    fill = offsets[:-1].copy()
    for a, b, mask in ph.batches():           # a counting sort by shard, stable
        shard = ph.take("shard", a, b, mask)
        index = np.arange(a, b) if mask is None else np.flatnonzero(mask) + a
        by_shard = np.argsort(shard, kind="stable")
        sorted_shard = shard[by_shard]
        rank = np.arange(len(shard)) - np.searchsorted(sorted_shard, sorted_shard, side="left")
        order[fill[sorted_shard] + rank] = index[by_shard]
        fill += np.bincount(shard, minlength=n)
    first = 0
    while first < n:
        stop = int(np.searchsorted(offsets, offsets[first] + BATCH, side="right")) - 1
        stop = min(max(stop, first + 1), n)
        rows = order[offsets[first]:offsets[stop]]
        link = ph.gather("link", rows)
        if not partition_ok(n, first, stop - first, ph.one, ph.gather("shard", rows), ph.link_src[link],
                            ph.link_dst[link], ph.gather("lo", rows), ph.gather("hi", rows), ph.gather("step", rows)):
            return False
        first = stop
    return True


def receipt_table_proves(topo: Topology, cols: Columns, select: bool | None = None, last: int | None = None) -> bool:
    """True when the transfers of ``cols`` (those with ``reduce == select`` when ``select`` is given) are proven a
    correct allgather on the switch-free ``topo`` with no piece received twice (conditions 1 and 2 above: by the
    receipt table when its cells are few and it fits in TABLE_MAX_BYTES, else by shard batches; a bounds table is
    read as ranks); False when not proven (Python-int bounds, a condition that fails), and the caller's other
    checks decide. ``last``: read step t as last + 1 - t (a reduce-scatter phase as its time reverse on the
    transposed topology, Theorem 1)."""
    if cols.lo.dtype == object or not len(cols.step):
        return False
    try:
        cols = ranked(cols)
    except ValueError:
        return False
    ph = _Phase(topo, cols, select, last)
    cuts, top = ph.scan()
    kind = np.uint8 if top < 255 else np.uint16 if top < 65535 else None
    cells = len(cuts) - 1
    if (kind is not None and cells <= TABLE_MAX_CELLS
            and ph.n * ph.n * cells * np.dtype(kind).itemsize <= TABLE_MAX_BYTES):
        return _table_proves(ph, cuts, kind)
    return _shard_batches_prove(ph)
