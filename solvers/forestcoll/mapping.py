"""Logical trees back onto physical links, and into the schedule IR (ForestColl App. C.3, digest section 2.5).

Every unit of a logical edge (u, t) of D* is either one unit of a physical link u -> t or, when the split record
says (u, t) took γ units through switch w, one unit of (u, w) followed by one unit of (w, t), each of which
resolves the same way (recursively: a switch next to a switch). ``Router`` hands out these units first come,
first served, so two trees never get the same unit and every physical link carries at most its capacity. A
batch of m trees may thus reach a child over several physical routes, each carrying a sub-range of the
batch's pieces; the physical image of a tree can revisit a switch (Fig. 13d).

Lowering (``lower_allgather``): root u's shard is cut into k equal pieces; the i-th batch of u carries pieces
[a, a + m) (a = the multiplicities of u's earlier batches). Along an edge (x, y) the pieces cross each hop of
their route in consecutive steps, starting when x holds the whole batch; y holds it once its slowest route has
arrived. Switches only forward, each piece once per route, as the verifier demands.
"""
from __future__ import annotations

from collections import deque
from fractions import Fraction

import numpy as np

from topologies.model import Topology

from ..core.schedule import Collective, Columns, Schedule, Transfer, narrowest
from .packing import Batch


class Router:
    """Capacity pools per ordered node pair: physical links (``("link", index)``) and split records
    (``("via", w)``), each with the units not yet handed out. A link's units are U times its own bandwidth
    (integer units): an exact Fraction, since with parallel links (merged into one arc for the search) and a
    fixed k only the merged arc's capacity ⌊U c_e⌋ is sure to be whole; a range of pieces may then be cut
    between two parallel links at a fraction of a piece (whole units are kept as ints, which are faster).

    A pool is expanded into whole physical paths the first time a route asks for it: all of its units at once,
    each split record resolved through the pools of its two halves. That hands out the same capacity as
    resolving unit by unit (the splits through a switch never take more of (u, w) than it has), with one
    recursion per pool instead of one per tree edge."""

    def __init__(self, topo: Topology, link_units: dict[int, Fraction], via: dict):
        self.pools: dict[tuple[int, int], list[list]] = {}
        for i, units in sorted(link_units.items()):
            if units > 0:
                l = topo.links[i]
                units = int(units) if units.denominator == 1 else units
                self.pools.setdefault((l.src, l.dst), []).append(["link", i, units])
        for (u, t), entries in via.items():
            pool = self.pools.setdefault((u, t), [])
            for w, amount in entries:
                pool.append(["via", w, amount])
        self.paths: dict[tuple[int, int], UnitPool] = {}

    def _expanded(self, u: int, t: int) -> "UnitPool":
        """The pool of (u, t) as whole link paths (expanded on first use)."""
        known = self.paths.get((u, t))
        if known is None:
            known = UnitPool(f"no capacity left from node {u} to node {t}")
            for kind, what, units in self.pools.get((u, t), []):
                if kind == "link":
                    known.add([what], units)
                else:
                    for a, path in _zip_paths(self.route(u, what, units), self.route(what, t, units)):
                        known.add(path, a)
            self.paths[(u, t)] = known
        return known

    def route(self, u: int, t: int, amount) -> list[tuple[Fraction, list[int]]]:
        """``amount`` units from u to t as [(units, [link indices of the path]), ...]."""
        return [(a, path) for path, a in self._expanded(u, t).take(amount)]


class UnitPool:
    """Units to hand out first come, first served: ``add(item, amount)``, then ``take(m)`` -> [(item, amount),
    ...] summing to m, the items in the order added (also the box packing's pools of trees and inter arcs)."""

    def __init__(self, dry: str = "a pool ran dry"):
        self.items: deque = deque()
        self.dry = dry

    def add(self, item, amount) -> None:
        if amount > 0:
            self.items.append([item, amount])

    def take(self, m) -> list:
        out = []
        while m > 0:
            if not self.items:
                raise AssertionError(self.dry)             # the capacities behind every pool rule it out
            entry = self.items[0]
            a = min(m, entry[1])
            out.append((entry[0], a))
            entry[1] -= a
            m -= a
            if entry[1] == 0:
                self.items.popleft()
        return out


def _zip_paths(first: list, second: list) -> list[tuple[int, list[int]]]:
    """Concatenate two route lists of equal total, unit by unit."""
    out, i, j = [], 0, 0
    a = list(first)
    b = list(second)
    while i < len(a) and j < len(b):
        take = min(a[i][0], b[j][0])
        out.append((take, a[i][1] + b[j][1]))
        a[i] = (a[i][0] - take, a[i][1])
        b[j] = (b[j][0] - take, b[j][1])
        if a[i][0] == 0:
            i += 1
        if b[j][0] == 0:
            j += 1
    return out


def physical_routes(router: Router, batches: list[Batch]) -> list[list[list[tuple[int, list[int]]]]]:
    """For every batch and every one of its edges, the routes of its pieces: [(units, link path), ...]."""
    return [[router.route(x, y, b.mult) for x, y in b.edges] for b in batches]


def lower_allgather(batches: list[Batch], routes, k: int) -> Schedule:
    """The schedule IR of the forest (module docstring): as numpy columns over ``one = k`` when every route
    carries whole pieces (the common case, and the only one at scale), else as exact transfers."""
    if all(type(units) is int for b_routes in routes for pieces in b_routes for units, _ in pieces):
        return _lowered_columns(batches, routes, k)
    transfers: list[Transfer] = []
    for root, lo, hi, link, step in _lowered(batches, routes):
        transfers.append(Transfer(root, Fraction(lo) / k, Fraction(hi) / k, link, step))
    return Schedule(Collective.ALLGATHER, transfers, "forestcoll")


def _lowered(batches: list[Batch], routes):
    """(root, first piece, end piece, link, step) of every hop of every tree edge, in the batches' order."""
    start: dict[int, int] = {}
    for b, b_routes in zip(batches, routes):
        first = start.get(b.root, 0)
        start[b.root] = first + b.mult
        ready = {b.root: 0}
        root = b.root
        for (x, y), pieces in zip(b.edges, b_routes):
            t0 = ready[x]
            lo = first
            arrive = t0
            for units, path in pieces:
                hi = lo + units
                for hop, link in enumerate(path, start=1):
                    yield root, lo, hi, link, t0 + hop
                if t0 + len(path) > arrive:
                    arrive = t0 + len(path)
                lo = hi
            ready[y] = arrive


def _lowered_columns(batches: list[Batch], routes, k: int) -> Schedule:
    """``lower_allgather`` with whole pieces: the bounds are piece numbers over ``one = k``, in narrow types.
    One Python pass per route (its root, pieces and first step); the hops are spread with numpy."""
    roots, los, his, starts, lengths, links = [], [], [], [], [], []
    start: dict[int, int] = {}
    for b, b_routes in zip(batches, routes):
        root = b.root
        first = start.get(root, 0)
        start[root] = first + b.mult
        ready = {root: 0}
        for (x, y), pieces in zip(b.edges, b_routes):
            t0 = ready[x]
            lo = first
            arrive = t0
            for units, path in pieces:
                hops = len(path)
                roots.append(root)
                los.append(lo)
                lo += units
                his.append(lo)
                starts.append(t0)
                lengths.append(hops)
                links.extend(path)
                if t0 + hops > arrive:
                    arrive = t0 + hops
            ready[y] = arrive
    hops = np.array(lengths, dtype=np.int64)
    step = np.repeat(np.array(starts, dtype=np.int64), hops)
    step += np.arange(1, len(step) + 1) - np.repeat(np.cumsum(hops) - hops, hops)

    def narrow(values, top=None) -> np.ndarray:
        a = np.repeat(np.array(values, dtype=np.int64), hops) if top is None else values
        return a.astype(narrowest(int(a.max(initial=0)) if top is None else top))

    link = np.array(links, dtype=np.int64)
    cols = Columns(narrow(step, int(step.max(initial=0))), narrow(link, int(link.max(initial=0))), narrow(roots),
                   narrow(los), narrow(his), np.zeros(len(step), dtype=bool), k)
    return Schedule(Collective.ALLGATHER, algo="forestcoll", cols=cols)
