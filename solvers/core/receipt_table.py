"""A memory-lean proof that one phase of a schedule is a correct allgather: the receipt table.

Cut [0, 1) at every chunk bound the phase uses (G cells, the same cuts on every shard) and keep one entry per
(node, shard, cell): the step in which the node received that cell. The phase's copies form a correct allgather
on a switch-free topology, with no piece received twice, when

1. no node receives a piece of its own shard, every entry of a node for a foreign shard is written, and the
   transfers cover n(n-1)G cells in all, so each entry is written exactly once (a node's receipts of a foreign
   shard tile [0, 1)): every node ends with every shard;
2. every transfer whose sender does not own the shard sends cells its sender received in an earlier step
   (causality: the sender holds them at the end of the previous step).

This is the verifier's partition check (``verify._fast_partition_phase``) with a dense table in place of a sort
of all transfers: the transfers are read in fixed-size batches, twice, so the memory is the table (n^2 G entries
of one or two bytes) and one batch. On gkautz(4,16384), 268M transfers, that is a quarter of a gigabyte, where
sorting them takes ten.
"""
from __future__ import annotations

import numpy as np

from topologies.model import Topology

from .schedule import Columns

TABLE_MAX_BYTES = 1 << 30
MAX_ONE = 1 << 20          # a common denominator beyond this has too many possible bounds for a presence array
BATCH = 1 << 22


def _batches(cols: Columns, select: bool | None):
    """(start, end, mask or None) over the rows; the mask keeps the rows whose ``reduce`` equals ``select``."""
    total = len(cols.step)
    for a in range(0, total, BATCH):
        b = min(a + BATCH, total)
        yield a, b, None if select is None else cols.reduce[a:b] == select


def _take(column: np.ndarray, a: int, b: int, mask) -> np.ndarray:
    part = column[a:b]
    return (part if mask is None else part[mask]).astype(np.int64)


def receipt_table_proves(topo: Topology, cols: Columns, select: bool | None = None, last: int | None = None) -> bool:
    """True when the transfers of ``cols`` (those with ``reduce == select`` when ``select`` is given) are proven a
    correct allgather on the switch-free ``topo`` with no piece received twice; False when this check cannot
    prove it (the table would not fit, bounds are not small integers, or a condition above fails), and the
    caller's other checks decide. ``last``: read step t as last + 1 - t (a reduce-scatter phase as its time
    reverse on the transposed topology, Theorem 1)."""
    n, one = topo.num_nodes, cols.one
    if cols.lo.dtype == object or one > MAX_ONE or not len(cols.step):
        return False
    present = np.zeros(one + 1, dtype=bool)
    present[[0, one]] = True
    top = 0
    for a, b, mask in _batches(cols, select):
        present[_take(cols.lo, a, b, mask)] = True
        present[_take(cols.hi, a, b, mask)] = True
        steps = _take(cols.step, a, b, mask)
        if len(steps):
            top = max(top, int(steps.max()) if last is None else last + 1 - int(steps.min()))
    cuts = np.flatnonzero(present)
    g = len(cuts) - 1
    kind = np.uint8 if top < 255 else np.uint16 if top < 65535 else None
    if kind is None or n * n * g * np.dtype(kind).itemsize > TABLE_MAX_BYTES:
        return False
    cell_of = np.zeros(one + 1, dtype=np.int64)
    cell_of[cuts] = np.arange(g + 1)
    link_src = np.array([l.src for l in topo.links], dtype=np.int64)
    link_dst = np.array([l.dst for l in topo.links], dtype=np.int64)
    table = np.zeros(n * n * g, dtype=kind)

    def rows(a, b, mask, ends):
        shard = _take(cols.shard, a, b, mask)
        node = ends[_take(cols.link, a, b, mask)]
        step = _take(cols.step, a, b, mask)
        if last is not None:
            step = last + 1 - step
        c0, c1 = cell_of[_take(cols.lo, a, b, mask)], cell_of[_take(cols.hi, a, b, mask)]
        return shard, node, step, c0, c1 - c0

    covered = 0
    for a, b, mask in _batches(cols, select):
        shard, dst, step, c0, span = rows(a, b, mask, link_dst)
        if (dst == shard).any():
            return False
        covered += int(span.sum())
        base = (dst * n + shard) * g + c0
        for offset in range(int(span.max(initial=0))):
            keep = span > offset
            table[base[keep] + offset] = step[keep]
    if covered != n * (n - 1) * g or np.count_nonzero(table) != n * (n - 1) * g:
        return False
    for a, b, mask in _batches(cols, select):
        shard, src, step, c0, span = rows(a, b, mask, link_src)
        relay = src != shard
        base = (src * n + shard) * g + c0
        for offset in range(int(span.max(initial=0))):
            keep = relay & (span > offset)
            if (table[base[keep] + offset] >= step[keep]).any():
                return False
    return True
