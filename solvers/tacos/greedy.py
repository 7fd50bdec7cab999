"""TACOS's greedy link-chunk matching for All-Gather (TACOS section VI; notes tacos.md 1.9-1.10, the event-driven
form of the authors' reference code).

Model. Every directed link l carries one chunk at a time and takes t_l = alpha_l + chunk_bytes / bandwidth_l
per chunk (store-and-forward: a chunk can be forwarded only once it has fully arrived); a node may use all its
links at once. Time is continuous: an event happens whenever some link finishes a transfer.

At every event time ``now`` (starting at 0):

1. deliver the chunks whose transfer ends now. A chunk that already reached the destination by a faster path
   is *replaced* (section VI-B) by another chunk that the destination still lacks and that the sender held when
   the transfer started - the reference code takes any chunk the sender holds at arrival time, which can break
   causality in an exported schedule (pitfall T11), so this port checks the start time; with no such chunk the
   transfer is dropped;
2. match: every (chunk c, destination d) pair still unsatisfied - in uniformly random order - takes the free
   link into d whose sender holds c and that delivers soonest (ties broken at random), if there is one.

The collective time is the last event that delivered a chunk. Per destination the random order over all
requests is simulated lazily: the next matched request is uniform over the chunks that some free link into d can
still deliver, which has the same distribution and touches only as many chunks as there are free links.

Chunk sets are Python integers used as bitsets (bit c = chunk c), chunk c = j * N + source for the j-th of the
k chunks of each source, as in the reference code. Results vary with the random choices; ``synthesize_allgather``
keeps the best of several seeded restarts (the reference's tests take the best of 20).
"""
from __future__ import annotations

import heapq
import random

from topologies.model import Topology

from ..core.errors import NotApplicable
from .greedy_run import TIE, GreedyRun, link_times

VECTOR_CHUNKS = 1024


def nth_set_bit(x: int, r: int) -> int:
    """The index of the r-th (0-based) set bit of ``x``, by halving."""
    base, width = 0, x.bit_length()
    while width > 16:
        half = width >> 1
        low = x & ((1 << half) - 1)
        count = low.bit_count()
        if r < count:
            x, width = low, half
        else:
            r -= count
            x >>= half
            base += half
            width -= half
    while True:
        if x & 1:
            if r == 0:
                return base
            r -= 1
        x >>= 1
        base += 1


def _random_bit(x: int, rng: random.Random) -> int:
    return nth_set_bit(x, rng.randrange(x.bit_count()))


def greedy_allgather(topo: Topology, chunks: int, chunk_bytes: float, seed: int = 0,
                     engine: str = "auto") -> GreedyRun:
    """One greedy All-Gather run over the compute-only topology ``topo`` (module docstring). ``engine``:
    "python" (this loop), "numpy" (``vector.greedy_allgather_vec``: every destination matched at once, for
    thousands of NPUs) or "auto" (numpy from ``VECTOR_CHUNKS`` chunks, N k, on)."""
    if engine not in ("auto", "python", "numpy"):
        raise ValueError(f"unknown greedy engine {engine!r}")
    if engine == "numpy" or (engine == "auto" and chunks * topo.n >= VECTOR_CHUNKS):
        from .vector import greedy_allgather_vec

        return greedy_allgather_vec(topo, chunks, chunk_bytes, seed)
    n = topo.n
    total = chunks * n
    everything = (1 << total) - 1
    has = [0] * n
    for c in range(total):
        has[c % n] |= 1 << c
    return greedy_demands(topo, has, [everything & ~has[d] for d in range(n)], chunk_bytes, seed)


def greedy_demands(topo: Topology, has: list[int], need: list[int], chunk_bytes: float, seed: int = 0,
                   busy: dict[int, list[tuple[float, float]]] | None = None) -> GreedyRun:
    """The greedy of the module docstring for any collective given as pre/postcondition (TACOS section II-A):
    ``has[v]`` the chunks node v holds at the start, ``need[v]`` those it must end holding, as bitsets; a
    chunk a node relays for others is in its ``need`` too (pitfall T4: the matching only pulls chunks that some
    node asks for). ``busy``: per link, time windows [a, b) it is taken by other traffic (another tenant's
    schedule), in which no send may start or run."""
    if topo.switch_nodes:
        raise NotApplicable("the TACOS greedy runs on point-to-point links: unwind the switches first")
    n = topo.n
    rng = random.Random(seed)
    times = link_times(topo, chunk_bytes)
    src = [l.src for l in topo.links]
    has = list(has)
    need = [need[d] & ~has[d] for d in range(n)]
    arrivals: list[list[tuple[float, int]]] = [[] for _ in range(n)]   # (time, chunk) per node, in time order
    free_in = [set(topo.in_links[d]) for d in range(n)]
    carrying = [-1] * len(times)
    started = [0.0] * len(times)
    ending: dict[float, list[int]] = {}
    events, queued = [0.0], {0.0}
    sends: list[tuple[float, float, int, int]] = []
    collective_time, count, replaced, dropped = 0.0, 0, 0, 0
    unsatisfied = {d for d in range(n) if need[d]}
    while events:
        now = heapq.heappop(events)
        queued.discard(now)
        count += 1
        delivered = False
        for link in sorted(ending.pop(now, ())):
            c, s, d = carrying[link], src[link], topo.links[link].dst
            carrying[link] = -1
            free_in[d].add(link)
            if has[d] >> c & 1:
                held = has[s]
                for when, x in reversed(arrivals[s]):       # what s held when the transfer started
                    if when <= started[link]:
                        break
                    held &= ~(1 << x)
                options = held & need[d]
                if not options:
                    dropped += 1
                    continue
                c = _random_bit(options, rng)
                replaced += 1
            has[d] |= 1 << c
            need[d] &= ~(1 << c)
            arrivals[d].append((now, c))
            sends.append((started[link], now, c, link))
            delivered = True
            if not need[d]:
                unsatisfied.discard(d)
        if delivered:
            collective_time = now
        for d in sorted(unsatisfied):
            free = free_in[d]
            if not free:
                continue
            cands = {}
            for link in free:
                options = has[src[link]] & need[d]
                if options:
                    if busy and link in busy:
                        clear = _clear_at(busy[link], now, times[link])
                        if clear > now:          # taken by other traffic: try again once it is over
                            if clear not in queued:
                                queued.add(clear)
                                heapq.heappush(events, clear)
                            continue
                    cands[link] = options
            while cands:
                pool = 0
                for options in cands.values():
                    pool |= options
                c = _random_bit(pool, rng)
                bit = 1 << c
                holders = [link for link, options in cands.items() if options & bit]
                best = min(times[link] for link in holders)
                ties = [link for link in holders if times[link] - best < TIE]
                link = ties[0] if len(ties) == 1 else rng.choice(sorted(ties))
                end = now + times[link]
                carrying[link], started[link] = c, now
                free.discard(link)
                ending.setdefault(end, []).append(link)
                if end not in queued:
                    queued.add(end)
                    heapq.heappush(events, end)
                del cands[link]
                for other in list(cands):
                    rest = cands[other] & ~bit
                    if rest:
                        cands[other] = rest
                    else:
                        del cands[other]
    if unsatisfied:
        d = min(unsatisfied)
        raise NotApplicable(f"the TACOS greedy could not deliver every chunk to {topo.names[d]}: no node that "
                            f"holds them reaches it (the topology is not strongly connected)")
    sends.sort()
    return GreedyRun(collective_time, sends, count, replaced, dropped, seed, times)


def _clear_at(windows: list[tuple[float, float]], now: float, length: float) -> float:
    """The first time from ``now`` at which a send of ``length`` overlaps none of ``windows`` ([a, b) pairs)."""
    t = now
    moved = True
    while moved:
        moved = False
        for a, b in windows:
            if a < t + length - TIE and t < b - TIE:
                t, moved = b, True
    return t


def best_of(topo: Topology, chunks: int, chunk_bytes: float, restarts: int = 8, seed: int = 0,
            progress=None, target_us: float | None = None, engine: str = "auto") -> tuple[GreedyRun, list[float]]:
    """The best of ``restarts`` runs with seeds seed, seed+1, ... (least time, then fewest sends), and every
    run's time (the jitter the paper's section VI-C mentions). With ``target_us`` (a lower bound) the restarts
    stop as soon as a run reaches it: no later run can be faster."""
    best, spread = None, []
    runs = max(1, restarts)
    for i in range(runs):
        run = greedy_allgather(topo, chunks, chunk_bytes, seed + i, engine)
        spread.append(run.time_us)
        if best is None or (run.time_us, run.count) < (best.time_us - TIE, best.count):
            best = run
        if progress is not None:
            progress((i + 1) / runs)
        if target_us is not None and best.time_us <= target_us * (1 + TIE):
            break
    return best, spread


def ingress_bound_us(topo: Topology, chunks: int, chunk_bytes: float) -> float:
    """The ingress lower bound of the All-Gather (notes tacos.md 1.13): node d must receive need_d = k(N-1)
    chunks, one at a time per in-link, so T >= max_d min{T : sum_l floor(T / t_l) >= need_d}. All twelve
    regression values of the reference implementation equal it."""
    times = link_times(topo, chunk_bytes)
    need = chunks * (topo.n - 1)
    best = 0.0
    for d in topo.compute_nodes:
        own = sorted(times[i] for i in topo.in_links[d])
        if not own:
            return float("inf")
        lo, hi = 0.0, need * own[0]

        def fits(t: float) -> bool:
            return sum(int(t / x + TIE) for x in own) >= need

        for _ in range(200):
            mid = (lo + hi) / 2
            if fits(mid):
                hi = mid
            else:
                lo = mid
        # snap to the transfer end that reaches the count: the largest multiple of some t_l not above hi
        best = max(best, max(int(hi / x + TIE) * x for x in own))
    return best
