"""Balanced steps for a forest: the same trees, the same pieces on the same links, given steps by list scheduling
instead of by depth (the finite-M lowering of ``finite``).

ForestColl's own lowering (``mapping.lower_allgather``) sends a hop in the step after its tail got the batch: the
step is the hop's depth. Every link then carries its U b_e units (ForestColl section 3.2: U per unit of bandwidth)
in as many steps as the trees are deep, unevenly: a link that is busy in step 3 may idle in step 4. A runtime
that runs the steps one after another (``solvers.runtime``: a send starts when its data arrived and its link is
free, sends on one link in step order) can only hide that by cutting the buffer into many slices, and each slice
pays every link's alpha once per step it is busy in.

Here every piece's hop is a unit of work on its link (``hop_units``; the pieces are the forest's: root u's shard
in k equal pieces, piece i carried by the i-th of u's trees). Steps are slots: in slot t a link carries up to c_e
units (c_e = ``per_slot`` times its bandwidth over the narrowest used link's, at least one), chosen among the
units whose piece its tail already holds (received in an earlier slot, or the tail is the piece's root), highest
first by the number of hops still below them on their tree (the longest chain left: Hu's critical-path rule),
then by the units that wait on them. On a fabric of equal links every link then carries one piece per slot and,
where the trees allow, is busy in every slot from the first to its last: U slots of one piece each, the flow
model's time plus U alphas without any pipelining (the ring's shape, which reaches the bound at large M).

The result carries exactly the pieces the depth lowering carries, over exactly the same links (the link loads,
so the flow-model time (M/(N k)) U, are unchanged); only the steps differ, and every hop's step is after the
step that brought its piece to its tail, so the verifier accepts it whenever it accepts the depth lowering.
"""
from __future__ import annotations

import heapq
from fractions import Fraction
from itertools import groupby

import numpy as np

from topologies.model import Topology

from ..core.schedule import Collective, Columns, Schedule, narrowest
from .mapping import Routes

MAX_UNITS = 60_000           # piece hops a retiming takes on (a Python loop: about 1 s per 50k on a busy machine)


def edge_routes(batches, routes) -> list[list[list[tuple[int, list[int]]]]]:
    """Per batch and edge, [(pieces, link path), ...] in the order the pieces are cut, from either form of
    ``mapping.physical_routes`` (``Routes`` arrays or the listed form)."""
    if not isinstance(routes, Routes):
        return routes
    out = [[[] for _ in b.edges] for b in batches]
    local = np.zeros(len(routes.edge_x), dtype=np.int64)
    seen: dict[int, int] = {}
    for e, b in enumerate(routes.edge_batch.tolist()):
        local[e] = seen.get(b, 0)
        seen[b] = local[e] + 1
    for seg in range(len(routes.edge)):
        e = int(routes.edge[seg])
        start = int(routes.path_start[seg])
        path = routes.links[start:start + int(routes.hops[seg])].tolist()
        out[int(routes.edge_batch[e])][int(local[e])].append((int(routes.units[seg]), path))
    return out


def unit_count(batches, routes) -> int:
    """Piece hops of the forest (what ``hop_units`` lists), without listing them."""
    if isinstance(routes, Routes):
        return int((routes.units * routes.hops).sum())
    return sum(int(u) * len(p) for per_batch in routes for per_edge in per_batch for u, p in per_edge)


def hop_units(batches, routes) -> tuple[list[int], list[int], list[int], list[int]]:
    """Every hop of every piece: (root, piece, link, the unit that brought the piece to the hop's tail, -1 at the
    root), parents before children. Pieces are numbered per root as ``mapping`` numbers them (batch after batch,
    a batch of m trees taking the next m). A piece cut between parallel links at a fraction is not whole:
    ValueError (the caller keeps the depth lowering)."""
    roots, pieces, links, preds = [], [], [], []
    taken: dict[int, int] = {}
    for b, b_routes in zip(batches, edge_routes(batches, routes)):
        first = taken.get(b.root, 0)
        taken[b.root] = first + b.mult
        held: dict[tuple[int, int], int] = {}          # (node, piece) -> the unit that brought it there
        for (x, y), segments in zip(b.edges, b_routes):
            p = first
            for units, path in segments:
                if not isinstance(units, int) and getattr(units, "denominator", 1) != 1:
                    raise ValueError("a piece is cut between parallel links")
                for piece in range(p, p + int(units)):
                    pred = -1 if x == b.root else held[(x, piece)]
                    for link in path:
                        roots.append(b.root)
                        pieces.append(piece)
                        links.append(link)
                        preds.append(pred)
                        pred = len(links) - 1
                    held[(y, piece)] = pred
                p += int(units)
    return roots, pieces, links, preds


def slot_capacity(topo: Topology, used_links, per_slot: int) -> dict[int, int]:
    """Pieces a link carries per slot: ``per_slot`` times its bandwidth over the narrowest used link's (floor, at
    least one)."""
    narrow = min(topo.links[l].bandwidth for l in used_links)
    return {l: max(1, int(per_slot * Fraction(topo.links[l].bandwidth) / Fraction(narrow))) for l in used_links}


def balanced_steps(topo: Topology, links: list[int], preds: list[int], per_slot: int = 1) -> list[int]:
    """The slot (step, from 1) of every unit by list scheduling (module docstring)."""
    n = len(links)
    height = [1] * n
    below = [0] * n
    for u in range(n - 1, -1, -1):                     # children come after their parents
        p = preds[u]
        if p >= 0:
            if height[u] + 1 > height[p]:
                height[p] = height[u] + 1
            below[p] += below[u] + 1
    children: list[list[int]] = [[] for _ in range(n)]
    ready: dict[int, list] = {}
    for u in range(n):
        p = preds[u]
        if p >= 0:
            children[p].append(u)
        else:
            heapq.heappush(ready.setdefault(links[u], []), (-height[u], -below[u], u))
    cap = slot_capacity(topo, set(links), per_slot)
    step = [0] * n
    t = 0
    done = 0
    while done < n:
        t += 1
        freed = []
        for link in list(ready):
            heap = ready[link]
            for _ in range(cap[link]):
                if not heap:
                    break
                u = heapq.heappop(heap)[2]
                step[u] = t
                done += 1
                freed.extend(children[u])
            if not heap:
                del ready[link]
        for u in freed:
            heapq.heappush(ready.setdefault(links[u], []), (-height[u], -below[u], u))
        if not freed and not ready and done < n:
            raise AssertionError("a unit waits on one that was never scheduled")
    return step


def retimed_allgather(topo: Topology, batches, routes, k: int, per_slot: int = 1, units=None) -> Schedule:
    """The forest's allgather with balanced steps (module docstring): one transfer per run of consecutive pieces
    of one root on one link in one slot; bounds are piece numbers over ``one = k``. ``units``: ``hop_units``
    already listed."""
    roots, pieces, links, preds = units if units is not None else hop_units(batches, routes)
    steps = balanced_steps(topo, links, preds, per_slot)
    order = sorted(range(len(links)), key=lambda u: (steps[u], links[u], roots[u], pieces[u]))
    rows = []
    for (s, l, r), grp in groupby(order, key=lambda u: (steps[u], links[u], roots[u])):
        run_lo = run_hi = None
        for u in grp:
            p = pieces[u]
            if run_hi == p:
                run_hi = p + 1
                continue
            if run_lo is not None:
                rows.append((s, l, r, run_lo, run_hi))
            run_lo, run_hi = p, p + 1
        rows.append((s, l, r, run_lo, run_hi))
    arr = np.array(rows, dtype=np.int64).reshape(-1, 5)

    def narrow(a: np.ndarray) -> np.ndarray:
        return a.astype(narrowest(int(a.max(initial=0))))

    cols = Columns(narrow(arr[:, 0]), narrow(arr[:, 1]), narrow(arr[:, 2]), arr[:, 3].astype(narrowest(k)),
                   arr[:, 4].astype(narrowest(k)), np.zeros(len(arr), dtype=bool), k)
    return Schedule(Collective.ALLGATHER, algo="forestcoll", cols=cols)
