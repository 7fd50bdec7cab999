"""A vectorized proof that a copy phase is a correct allgather on a fabric with switches (store and forward).

The simulator (``solvers.core.verify``) walks every transfer in Python: 2.4M of them (ForestColl on
dgx_a100(boxes=128)) take about a minute. This proof reads the same rules from numpy columns and either
confirms the phase or declines, and the simulator then decides and explains. It confirms when

1. forwarding: every piece a switch sends is a piece of the same shard with the same [lo, hi) that the switch
   received in an earlier step, and every piece it receives is sent on exactly once. Per (switch, shard, lo, hi)
   the receipts and sends, read in step order with a send before a receipt of the same step, never leave more
   sends than receipts and end with as many of each (the condition for a matching of each send to its own
   earlier receipt, using every receipt). In a copy-only phase every piece in a switch is final data, so pieces
   of one key are interchangeable, and this is what the simulator's switch buffers allow for pieces that are
   forwarded whole. A switch that cuts a piece it received, or keeps one, makes the proof decline. With every
   receipt used the condition reads the same on the time reverse (a prefix of one is the complement of a prefix
   of the other), which is what makes the reverse below sound;
2. delivery: on the compute nodes alone, every node's receipts of every foreign shard tile [0, 1) exactly once
   and it never receives its own (so it ends with every shard and no piece twice);
3. causality: every send by a compute node of a shard it does not own covers only points it received in an
   earlier step (it holds a point from the step of the one receipt that covers it).

Switches receive only from senders whose sends rule 3 checks (compute nodes) or from switches (rule 1), so
rules 1-3 are the simulator's rules for a copy phase. A reduce-scatter phase is proven as the allgather of its
time reverse on the transposed fabric (direct-connect paper Theorem 1, as ``verify._fast_verify`` does): a switch
that forwards a partial sum whole is a switch that forwards a piece in the reverse.
"""
from __future__ import annotations

import numpy as np

from topologies.model import Topology

from .receipt_table import tiles_ok
from .schedule import Columns

_INT63 = 2 ** 63 - 1


def _packed(columns: list[np.ndarray], tops: list[int]) -> np.ndarray | None:
    """The rows' keys as one int64 each, ordered as the columns' lexicographic order (first column most
    significant), or None when ``prod(top + 1)`` passes 63 bits."""
    size = 1
    for top in tops:
        size *= top + 1
    if size > _INT63:
        return None
    key = np.zeros(len(columns[0]), dtype=np.int64)
    for column, top in zip(columns, tops):
        key *= top + 1
        key += column
    return key


def _order(columns: list[np.ndarray]) -> np.ndarray:
    """Row order sorting the columns lexicographically (first column most significant)."""
    tops = [int(c.max(initial=0)) for c in columns]
    key = _packed(columns, tops)
    if key is not None:
        return np.argsort(key, kind="stable")
    return np.lexsort(columns[::-1])


def forwarding_ok(is_switch: np.ndarray, src, dst, shard, lo, hi, step) -> bool:
    """Rule 1 of the module docstring for the transfers given as int64 arrays (``is_switch`` per node)."""
    into, out = np.flatnonzero(is_switch[dst]), np.flatnonzero(is_switch[src])
    if not len(out):
        return True
    node = np.concatenate([dst[into], src[out]])
    received = np.concatenate([np.ones(len(into), dtype=np.int64), np.zeros(len(out), dtype=np.int64)])
    keys = [node, np.concatenate([shard[into], shard[out]]), np.concatenate([lo[into], lo[out]]),
            np.concatenate([hi[into], hi[out]])]
    order = _order(keys + [np.concatenate([step[into], step[out]]), received])
    keys = [k[order] for k in keys]
    new = np.zeros(len(order), dtype=bool)
    new[0] = True
    for k in keys:
        new[1:] |= k[1:] != k[:-1]
    delta = np.where(received[order] == 1, 1, -1)
    running = np.cumsum(delta)
    firsts = np.flatnonzero(new)
    before = (running - delta)[firsts]              # the running sum before each key's first event
    in_key = running - np.repeat(before, np.diff(np.append(firsts, len(order))))
    lasts = np.append(firsts[1:], len(order)) - 1
    return bool((in_key >= 0).all() and (in_key[lasts] == 0).all())


def delivery_ok(n: int, one: int, receipts: tuple, sends: tuple) -> bool:
    """Rules 2 and 3 on compute positions 0..n-1: ``receipts`` and ``sends`` are (node, shard, lo, hi, step)
    int64 arrays, the receiving node of each receipt and the sending node of each send whose node is not the
    shard's owner (``receipt_table.tiles_ok`` over every shard)."""
    return tiles_ok(n, 0, n, one, receipts, sends, order=_order)


def switched_copy_proves(topo: Topology, cols: Columns, rows: np.ndarray | None = None,
                         last: int | None = None) -> bool:
    """True when the transfers ``rows`` of ``cols`` (all when None; int bounds over ``cols.one``, no bounds
    table) are proven a correct allgather on ``topo`` with no piece received twice (rules 1-3 above); False when
    not proven. ``last``: read step t as last + 1 - t (a reduce-scatter phase as its time reverse, on the
    transposed fabric, which the caller passes)."""
    if cols.bounds is not None or cols.lo.dtype == object:
        return False

    def take(field: str) -> np.ndarray:
        a = getattr(cols, field)
        return (a if rows is None else a[rows]).astype(np.int64)

    link, shard, lo, hi, step = take("link"), take("shard"), take("lo"), take("hi"), take("step")
    if last is not None:
        step = last + 1 - step
    link_src, link_dst = topo.link_ends
    src, dst = link_src[link], link_dst[link]
    is_switch = np.zeros(topo.num_nodes, dtype=bool)
    is_switch[list(topo.switch_nodes)] = True
    position = np.full(topo.num_nodes, -1, dtype=np.int64)
    position[list(topo.compute_nodes)] = np.arange(topo.n)
    if (position[shard] < 0).any() or not forwarding_ok(is_switch, src, dst, shard, lo, hi, step):
        return False
    into = np.flatnonzero(~is_switch[dst])
    relay = np.flatnonzero(~is_switch[src] & (src != shard))
    return delivery_ok(topo.n, cols.one,
                       (position[dst[into]], position[shard[into]], lo[into], hi[into], step[into]),
                       (position[src[relay]], position[shard[relay]], lo[relay], hi[relay], step[relay]))
