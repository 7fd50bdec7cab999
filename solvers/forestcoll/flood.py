"""Forests grown in time: k spanning out-trees per root whose edges are chosen step by step, two of the finite-M
candidates of ``finite`` (switch-free fabrics): ``flood_allgather``, where no link idles before its last slot,
and ``shortest_allgather``, shortest-path trees with each step's pieces spread over the in-links.

A ForestColl forest (sections 3-4) is a packing: k out-trees per root whose link loads meet the optimum's U b_e.
How it runs at a finite size is a second question the packing leaves open (``retime``): a packing can be optimal
as a flow and still hold a link idle at some step whatever the order of its sends, so that pipelining is the
only way to hide the gap, at one alpha per slice and step. This module builds the trees and their steps together.

Root u's shard is cut into k pieces; piece (u, i) is broadcast on the i-th tree of u. In slot t = 1, 2, ... every
link x -> y with capacity c_e pieces per slot (c_e = ``per_slot`` times its bandwidth over the narrowest link's,
at least one) carries up to c_e pieces that x holds and y neither holds nor gets in this slot over another
link, the rarest first (fewest holders: a piece few nodes hold is the one the others will wait for), the
in-links of y with the fewest such pieces choosing first. A node takes each piece once, so the first arrivals of
piece (u, i) form a spanning out-tree of u: the i-th tree. On a strongly connected fabric some node lacking a
piece has an in-neighbour holding it, so every slot makes progress and the run ends.

Slots are steps (a send in slot t carries what its sender held after slot t - 1), so the verifier checks the
result as any schedule. Its link loads are whatever the slots gave: on torus(4,4) with k = 4 every node
receives 4 new pieces in each of 15 slots, the optimum U = 15 (every link one piece per slot) -- the shape of a
ring schedule, which the runtime model prices at the bound plus U alphas without any pipelining. Where the
greedy does not meet the optimum the runtime model says so and another candidate wins.
"""
from __future__ import annotations

import math
from fractions import Fraction

import numpy as np

from topologies.model import Topology

from ..core.schedule import Collective, Columns, Schedule, narrowest

MAX_PIECES = 4096            # N k pieces a flood takes on (a slot costs about links x pieces)


def slot_capacities(topo: Topology, per_slot: int) -> np.ndarray:
    """Pieces each link carries per slot (module docstring); 0 for a self-loop."""
    bw = [Fraction(l.bandwidth) for l in topo.links if l.src != l.dst]
    narrow = min(bw) if bw else Fraction(1)
    return np.array([0 if l.src == l.dst else max(1, int(per_slot * Fraction(l.bandwidth) / narrow))
                     for l in topo.links], dtype=np.int64)


def _receivers(topo: Topology, k: int):
    """(compute nodes, their count n, rank of each, the in-links of each rank but self-loops) of a flood with k
    pieces per root; ValueError where a flood does not apply (switches, fewer than 2 or more than ``MAX_PIECES``
    pieces in all)."""
    if topo.switch_nodes:
        raise ValueError("a flood needs a switch-free fabric (a switch cannot hold a piece)")
    comp = list(topo.compute_nodes)
    n = len(comp)
    if n < 2 or n * k > MAX_PIECES:
        raise ValueError(f"a flood takes 2 to {MAX_PIECES} pieces in all, not {n * k}")
    rank = {v: i for i, v in enumerate(comp)}
    into: list[list[int]] = [[] for _ in range(n)]
    for i, l in enumerate(topo.links):
        if l.src != l.dst:
            into[rank[l.dst]].append(i)
    return comp, n, rank, into


def flood_allgather(topo: Topology, k: int, per_slot: int = 1, seed: int = 0) -> Schedule:
    """The allgather of the module docstring with k pieces per root. ValueError where it does not apply (switch
    nodes, more than ``MAX_PIECES`` pieces, a fabric whose compute nodes are not strongly connected)."""
    comp, n, rank, into = _receivers(topo, k)
    cap = slot_capacities(topo, per_slot)
    src_rank = np.array([rank.get(l.src, -1) for l in topo.links], dtype=np.int64)
    pieces = n * k
    holds = np.zeros((n, pieces), dtype=bool)
    for r in range(n):
        holds[r, r * k:(r + 1) * k] = True
    count = holds.sum(axis=0).astype(np.int64)
    # ties among the rarest: a seeded order, then one that differs per receiver (the piece's root counted from
    # y), so that the in-links of different nodes do not all reach for the same piece
    root_of = np.arange(pieces) // k
    shuffle = np.random.default_rng(seed).permutation(pieces) if seed else np.zeros(pieces, dtype=np.int64)
    rows: list[tuple[int, int, int, int]] = []          # (slot, link, root rank, piece)
    own = (root_of * k + np.arange(pieces) % k).astype(np.int64)
    slot = 0
    while not holds.all():
        slot += 1
        got = np.zeros((n, pieces), dtype=bool)
        rarity = count * (2 * pieces * pieces) + shuffle * pieces     # rarest first, then the tie order
        for y in range(n):
            need = ~holds[y]
            if not need.any():
                continue
            offers = holds[src_rank[into[y]]] & need                  # one row per in-link of y
            sizes = offers.sum(axis=1)
            key = rarity + (own - y * k) % pieces
            taken = got[y]
            for row in np.argsort(sizes, kind="stable").tolist():
                if sizes[row] == 0:
                    continue
                l = into[y][row]
                idx = np.flatnonzero(offers[row] & ~taken)
                m = min(int(cap[l]), len(idx))
                if m == 0:
                    continue
                chosen = idx[np.argsort(key[idx], kind="stable")[:m]]
                taken[chosen] = True
                rows.extend((slot, l, int(p // k), int(p % k)) for p in chosen.tolist())
        if not got.any():
            raise ValueError("the compute nodes are not strongly connected")
        holds |= got
        count += got.sum(axis=0)
    return _columns(rows, comp, k)


def slot_lower_bound(topo: Topology, k: int, per_slot: int = 1) -> int:
    """Slots no flood of k pieces per root can beat: every node receives (N - 1) k pieces, at most the sum of
    its in-links' capacities per slot."""
    cap = slot_capacities(topo, per_slot)
    comp = list(topo.compute_nodes)
    inflow = {v: 0 for v in comp}
    for i, l in enumerate(topo.links):
        if l.dst in inflow:
            inflow[l.dst] += int(cap[i])
    need = (len(comp) - 1) * k
    return max(-(-need // max(1, c)) for c in inflow.values())


def shortest_allgather(topo: Topology, k: int) -> Schedule:
    """Shortest-path trees, balanced: piece (u, i) reaches every node v in step d(u, v) (hops), over an in-link
    from a node at distance d(u, v) - 1 from u; among those in-links, each piece goes to the one whose load in that
    step (pieces over its bandwidth) is least, the pieces with the fewest such in-links placed first. The i-th
    pieces' first arrivals are again a spanning out-tree of u, now a shortest-path one: as few steps as any
    allgather (the diameter), each link's sends of a step in one message (the breadth-first broadcast's shape,
    direct-connect paper section 5, in whole pieces). ValueError where ``flood_allgather`` refuses."""
    comp, n, rank, into = _receivers(topo, k)
    dist = _hops(topo, comp, rank)
    if (dist < 0).any():
        raise ValueError("the compute nodes are not strongly connected")
    cost = _integer_costs(topo)
    rows: list[tuple[int, int, int, int]] = []
    for y in range(n):
        by_step: dict[int, list[tuple[int, list[int]]]] = {}
        for r in range(n):
            d = int(dist[r, y])
            if d == 0:
                continue
            ways = [l for l in into[y] if dist[r, rank[topo.links[l].src]] == d - 1]
            by_step.setdefault(d, []).append((r, ways))
        for d, roots in by_step.items():
            for l, r, i in _balanced(roots, k, cost):
                rows.append((d, l, r, i))
    return _columns(rows, comp, k)


def _balanced(roots: list[tuple[int, list[int]]], k: int, cost: list) -> list[tuple[int, int, int]]:
    """k pieces of every root onto its in-links (``ways``), the busiest link's load (pieces x cost) kept low: each
    piece goes where an alternating path (a piece moved from a link to another of its root's links, and so on)
    ends at the link that would be least loaded after taking it; with equal costs that is a least-makespan
    assignment of unit jobs to their allowed machines. Returns (link, root, piece)."""
    from collections import deque

    ways = dict(roots)
    on: dict[int, dict[int, int]] = {}                # link -> root -> pieces
    load: dict[int, int] = {}
    for r, _ in sorted(roots, key=lambda rw: (len(rw[1]), rw[0])):
        for _ in range(k):
            came: dict[int, tuple[int, int] | None] = {w: None for w in ways[r]}
            queue = deque(ways[r])
            while queue:
                a = queue.popleft()
                for r2, m in on.get(a, {}).items():
                    if m:
                        for b in ways[r2]:
                            if b not in came:
                                came[b] = (a, r2)
                                queue.append(b)
            end = min(came, key=lambda w: (load.get(w, 0) + cost[w], w))
            load[end] = load.get(end, 0) + cost[end]
            at = end
            while came[at] is not None:               # shift one piece back along the path
                a, r2 = came[at]
                on.setdefault(at, {})[r2] = on.get(at, {}).get(r2, 0) + 1
                on[a][r2] -= 1
                at = a
            on.setdefault(at, {})[r] = on.get(at, {}).get(r, 0) + 1
    out = []
    for l in sorted(on):
        for r in sorted(on[l]):
            out.extend((l, r, i) for i in range(on[l][r]))
    return _numbered(out, k)


def _numbered(rows: list[tuple[int, int, int]], k: int) -> list[tuple[int, int, int]]:
    """(link, root, i): the i-th piece of each root on its links in order, so a root's pieces 0..k-1 each once."""
    seen: dict[int, int] = {}
    out = []
    for l, r, _ in rows:
        i = seen.get(r, 0)
        seen[r] = i + 1
        out.append((l, r, i))
    return out


def _integer_costs(topo: Topology) -> list[int]:
    """Each link's time per piece, 1 / bandwidth, as integers in one common unit (exact and fast to add)."""
    bw = [Fraction(l.bandwidth) for l in topo.links]
    unit = math.lcm(*[b.numerator for b in bw if b > 0]) if any(b > 0 for b in bw) else 1
    return [int(unit * b.denominator // b.numerator) if b > 0 else 0 for b in bw]


def _hops(topo: Topology, comp: list[int], rank: dict) -> np.ndarray:
    """Hop distances between compute nodes (rows: from), -1 where none."""
    from collections import deque

    out_of: list[list[int]] = [[] for _ in comp]
    for l in topo.links:
        if l.src != l.dst:
            out_of[rank[l.src]].append(rank[l.dst])
    dist = np.full((len(comp), len(comp)), -1, dtype=np.int64)
    for s in range(len(comp)):
        dist[s, s] = 0
        queue = deque([s])
        while queue:
            u = queue.popleft()
            for v in out_of[u]:
                if dist[s, v] < 0:
                    dist[s, v] = dist[s, u] + 1
                    queue.append(v)
    return dist


def _columns(rows, comp: list[int], k: int) -> Schedule:
    """One transfer per run of consecutive pieces of one root on one link in one slot."""
    rows.sort()
    merged: list[list[int]] = []
    for s, l, r, p in rows:
        last = merged[-1] if merged else None
        if last is not None and last[0] == s and last[1] == l and last[2] == r and last[4] == p:
            last[4] = p + 1
        else:
            merged.append([s, l, r, p, p + 1])
    arr = np.array(merged, dtype=np.int64).reshape(-1, 5)
    shard = np.array(comp, dtype=np.int64)[arr[:, 2]]

    def narrow(a: np.ndarray) -> np.ndarray:
        return a.astype(narrowest(int(a.max(initial=0))))

    cols = Columns(narrow(arr[:, 0]), narrow(arr[:, 1]), narrow(shard), arr[:, 3].astype(narrowest(k)),
                   arr[:, 4].astype(narrowest(k)), np.zeros(len(arr), dtype=bool), k)
    return Schedule(Collective.ALLGATHER, algo="forestcoll", cols=cols)
