"""TACOS's greedy All-Gather with every destination matched at once in numpy (the same algorithm as
``greedy.greedy_allgather``; TACOS section VI, notes tacos.md 1.9-1.10), for thousands of NPUs.

The event loop is the same: at each time ``now`` deliver what ends (replacing a chunk that already arrived by
another path with one the sender held when the transfer started, or dropping the transfer), then match every
unsatisfied destination's free in-links. The matching of destination d is the lazy form of a uniformly random
order over its requests, done for all destinations together: draw a chunk uniformly from the union of what d's
free links can still deliver, give it to the holder link that delivers soonest (ties uniformly at random), take
that link and chunk away, and repeat while some link can deliver. Destinations never interact within one
matching (each draws over its own links), so this is the same distribution as the one-destination-at-a-time loop;
the random numbers come from numpy's generator, so a seed gives a different run than the Python engine's.

State: chunk sets as rows of 64-bit words (bit c of row v: v holds chunk c), each node's in-links padded to the
largest in-degree, and every arrival time (for the "held at the start" test of a replacement). Memory is
O(N * N k) bits plus the sends, linear in the number of transfers. A destination that sees a conflicting
delivery in an event (already held, or delivered twice) has all its deliveries of that event handled one by one
in link order, exactly as the Python engine does.
"""
from __future__ import annotations

import heapq

import numpy as np

from topologies.model import Topology

from ..core.errors import NotApplicable
from .greedy_run import TIE, GreedyRun, link_times

_ONE = np.uint64(1)
_POP8 = np.array([bin(b).count("1") for b in range(256)], dtype=np.int64)
_SELECT8 = np.full((256, 8), 0, dtype=np.int64)        # _SELECT8[byte, r]: the r-th set bit of byte
for _b in range(256):
    for _r, _bit in enumerate(i for i in range(8) if _b >> i & 1):
        _SELECT8[_b, _r] = _bit


def select_bit(words: np.ndarray, r: np.ndarray) -> np.ndarray:
    """For each 64-bit word, the index of its r-th (0-based) set bit (r below the word's popcount)."""
    octets = words.astype(np.uint64).view(np.uint8).reshape(-1, 8)      # little-endian: byte 0 = bits 0-7
    counts = _POP8[octets]
    upto = np.cumsum(counts, axis=1)
    byte = (upto > r[:, None]).argmax(axis=1)
    rows = np.arange(len(words))
    rest = r - (upto[rows, byte] - counts[rows, byte])
    return byte * 8 + _SELECT8[octets[rows, byte], rest]


def _bits(row: np.ndarray, total: int) -> np.ndarray:
    """A chunk-set row as a bool vector of ``total`` entries."""
    return np.unpackbits(row.view(np.uint8), bitorder="little")[:total].astype(bool)


def greedy_allgather_vec(topo: Topology, chunks: int, chunk_bytes: float, seed: int = 0) -> GreedyRun:
    """One greedy All-Gather run (module docstring); the sends come back as columns (``GreedyRun.columns``)."""
    if topo.switch_nodes:
        raise NotApplicable("the TACOS greedy runs on point-to-point links: unwind the switches first")
    n = topo.n
    rng = np.random.default_rng(seed)
    times_list = link_times(topo, chunk_bytes)
    times = np.array(times_list, dtype=np.float64)
    src, dst = topo.link_ends
    total = chunks * n
    words = (total + 63) // 64
    degree = max(len(topo.in_links[d]) for d in range(n))
    into = np.full((n, degree), -1, dtype=np.int64)
    slot_of = np.zeros(len(times), dtype=np.int64)
    for d in range(n):
        for j, link in enumerate(topo.in_links[d]):
            into[d, j] = link
            slot_of[link] = j
    valid = into >= 0
    sender = np.where(valid, src[np.maximum(into, 0)], 0)
    in_time = np.where(valid, times[np.maximum(into, 0)], np.inf)

    has = np.zeros((n, words), dtype=np.uint64)
    every = np.arange(total, dtype=np.int64)
    np.bitwise_or.at(has, (every % n, every >> 6), _ONE << (every & 63).astype(np.uint64))
    arrived = np.zeros((n, total), dtype=np.float64)     # arrival time of what a node holds (0: its own)
    got = np.full(n, chunks, dtype=np.int64)
    free = valid.copy()
    carrying = np.full(len(times), -1, dtype=np.int64)
    started = np.zeros(len(times), dtype=np.float64)
    ending: dict[float, list[np.ndarray]] = {}
    events: list[float] = [0.0]
    queued = {0.0}
    out_start: list[np.ndarray] = []
    out_end: list[np.ndarray] = []
    out_chunk: list[np.ndarray] = []
    out_link: list[np.ndarray] = []
    collective_time, count, replaced, dropped = 0.0, 0, 0, 0

    def record(links: np.ndarray, cs: np.ndarray, now: float) -> None:
        out_start.append(started[links].copy())
        out_end.append(np.full(len(links), now))
        out_chunk.append(cs)
        out_link.append(links)

    while events:
        now = heapq.heappop(events)
        queued.discard(now)
        count += 1
        delivered = False
        if now in ending:
            links = np.sort(np.concatenate(ending.pop(now)))
            cs, ds = carrying[links], dst[links]
            carrying[links] = -1
            free[ds, slot_of[links]] = True
            word, bit = cs >> 6, _ONE << (cs & 63).astype(np.uint64)
            clash = (has[ds, word] & bit) != 0
            key = ds * total + cs
            _, first = np.unique(key, return_index=True)
            twice = np.ones(len(links), dtype=bool)
            twice[first] = False
            one_by_one = np.isin(ds, np.unique(ds[clash | twice]))
            bulk = ~one_by_one
            if bulk.any():
                np.bitwise_or.at(has, (ds[bulk], word[bulk]), bit[bulk])
                arrived[ds[bulk], cs[bulk]] = now
                np.add.at(got, ds[bulk], 1)
                record(links[bulk], cs[bulk], now)
                delivered = True
            for i in np.flatnonzero(one_by_one).tolist():
                link, c, d = int(links[i]), int(cs[i]), int(ds[i])
                s = int(src[link])
                if int(has[d, c >> 6]) >> (c & 63) & 1:
                    held = _bits(has[s], total) & (arrived[s] <= started[link])
                    options = np.flatnonzero(held & ~_bits(has[d], total))
                    if not len(options):
                        dropped += 1
                        continue
                    c = int(options[rng.integers(len(options))])
                    replaced += 1
                has[d, c >> 6] |= _ONE << np.uint64(c & 63)
                arrived[d, c] = now
                got[d] += 1
                record(np.array([link]), np.array([c]), now)
                delivered = True
        if delivered:
            collective_time = now
        active = np.flatnonzero((got < total) & free.any(axis=1))
        if not len(active):
            continue
        options = has[sender[active]]
        np.bitwise_and(options, np.invert(has[active])[:, None, :], out=options)
        options[~free[active]] = 0
        while len(active):
            pool = np.bitwise_or.reduce(options, axis=1)
            counts = np.bitwise_count(pool).astype(np.int64)
            size = counts.sum(axis=1)
            keep = size > 0
            if not keep.all():
                active, options, pool, counts, size = (active[keep], options[keep], pool[keep], counts[keep],
                                                       size[keep])
                if not len(active):
                    break
            rows = np.arange(len(active))
            r = rng.integers(0, size)
            upto = np.cumsum(counts, axis=1)
            word = (upto > r[:, None]).argmax(axis=1)
            within = r - (upto[rows, word] - counts[rows, word])
            bitpos = select_bit(pool[rows, word], within)
            chunk = word * 64 + bitpos
            mask = _ONE << bitpos.astype(np.uint64)
            holders = (options[rows, :, word] & mask[:, None]) != 0
            t = np.where(holders, in_time[active], np.inf)
            best = t.min(axis=1)
            ties = t - best[:, None] < TIE
            slot = np.where(ties, rng.random(ties.shape), 2.0).argmin(axis=1)
            link = into[active, slot]
            carrying[link] = chunk
            started[link] = now
            free[active, slot] = False
            end = now + times[link]
            for e in np.unique(end).tolist():
                ending.setdefault(e, []).append(link[end == e])
                if e not in queued:
                    queued.add(e)
                    heapq.heappush(events, e)
            options[rows, slot, :] = 0
            options[rows, :, word] &= ~mask[:, None]
    if (got < total).any():
        d = int(np.flatnonzero(got < total)[0])
        raise NotApplicable(f"the TACOS greedy could not deliver every chunk to {topo.names[d]}: the topology is "
                            f"not strongly connected")
    start = np.concatenate(out_start) if out_start else np.zeros(0)
    end_ = np.concatenate(out_end) if out_end else np.zeros(0)
    chunk_ = np.concatenate(out_chunk).astype(np.int64) if out_chunk else np.zeros(0, dtype=np.int64)
    link_ = np.concatenate(out_link).astype(np.int64) if out_link else np.zeros(0, dtype=np.int64)
    # in delivery order (sorting 16 million sends by four keys took a fifth of the run; nothing needs it)
    return GreedyRun(collective_time, [], count, replaced, dropped, seed, times_list,
                     columns=(start, end_, chunk_, link_))
