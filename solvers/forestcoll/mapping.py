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

from dataclasses import dataclass
from itertools import chain
from fractions import Fraction

import numpy as np

from topologies.model import Topology

from ..core.schedule import Collective, Columns, Schedule, Transfer, narrowest
from ..core.sorted_unique import sorted_unique
from .batches import Batch, UnitPool


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
            for kind, what, units in self.pools.get((u, t), ()):
                if kind == "link":
                    known.add([what], units)
                    continue
                first = self._expanded(u, what).take(units)
                second = self._expanded(what, t).take(units)
                if len(first) == 1 and len(second) == 1:        # one path each way: the common case
                    known.add(first[0][0] + second[0][0], units)
                    continue
                for a, path in _zip_paths([(a, p) for p, a in first], [(a, p) for p, a in second]):
                    known.add(path, a)
            self.paths[(u, t)] = known
        return known

    def route(self, u: int, t: int, amount) -> list[tuple[Fraction, list[int]]]:
        """``amount`` units from u to t as [(units, [link indices of the path]), ...]."""
        return [(a, path) for path, a in self._expanded(u, t).take(amount)]


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


@dataclass
class Routes:
    """The routes of every tree edge as numpy arrays (whole pieces only). Edges are numbered in the batches'
    order, each batch's edges in their order; ``edge_x``/``edge_y`` are their ends and ``edge_batch`` their
    batch. Each edge's pieces are consecutive segments, in the order the pool handed them out: segment j carries
    ``units[j]`` pieces of edge ``edge[j]`` over the link path ``links[path_start[j]:path_start[j] + hops[j]]``."""

    edge_batch: np.ndarray
    edge_x: np.ndarray
    edge_y: np.ndarray
    edge: np.ndarray
    units: np.ndarray
    path_start: np.ndarray
    hops: np.ndarray
    links: np.ndarray


def physical_routes(router: Router, batches: list[Batch]):
    """For every batch and every one of its edges, the routes of its pieces: ``Routes`` when every pool holds
    whole units, else lists per batch and edge of [(units, link path), ...] (``listed_routes``).

    The pools of two compute nodes are drawn on only by tree edges (a split record joins a node to a switch), so
    each such pool hands its units to its edges in edge order: the edges of one pool take consecutive ranges of
    its units, found for all edges at once by sorting. The pools are expanded in the order of their first edge,
    as ``Router.route`` would."""
    mult = np.array([b.mult for b in batches], dtype=np.int64)
    count = np.array([len(b.edges) for b in batches], dtype=np.int64)
    ends = np.fromiter(chain.from_iterable(chain.from_iterable(b.edges for b in batches)), dtype=np.int64,
                       count=2 * int(count.sum())).reshape(-1, 2)
    edge_batch = np.repeat(np.arange(len(batches)), count)
    x, y = ends[:, 0].copy(), ends[:, 1].copy()
    demand = mult[edge_batch]
    span = int(ends.max(initial=0)) + 1
    pair_key = x * span + y
    by_pair = np.argsort(pair_key, kind="stable")
    sorted_key = pair_key[by_pair]
    new = np.ones(len(sorted_key), dtype=bool)
    new[1:] = sorted_key[1:] != sorted_key[:-1]
    first_of_pair = by_pair[new]                       # each pool's first edge (stable: the earliest)
    pair_of_sorted = np.cumsum(new) - 1
    item_pair, item_amount, item_path, paths = [], [], [], []
    for p in np.argsort(first_of_pair, kind="stable").tolist():     # expansion in order of first use
        e = int(first_of_pair[p])
        for path, amount in router._expanded(int(x[e]), int(y[e])).items:
            if type(amount) is not int:
                return listed_routes(router, batches)
            item_pair.append(p)
            item_amount.append(amount)
            item_path.append(len(paths))
            paths.append(path)
    n_pairs = int(new.sum())
    item_pair = np.array(item_pair, dtype=np.int64)
    order = np.argsort(item_pair, kind="stable")       # items grouped by pool, each pool's in its own order
    item_pair, item_amount = item_pair[order], np.array(item_amount, dtype=np.int64)[order]
    item_path = np.array(item_path, dtype=np.int64)[order]
    supply = np.bincount(item_pair, weights=item_amount, minlength=n_pairs).astype(np.int64)
    need = np.bincount(pair_of_sorted, weights=demand[by_pair], minlength=n_pairs).astype(np.int64)
    if (need > supply).any():
        raise AssertionError("a pool ran dry")         # the capacities behind every pool rule it out
    base = np.concatenate([[0], np.cumsum(supply)[:-1]])
    d_end = np.cumsum(demand[by_pair])
    d_start = d_end - demand[by_pair]
    pair_first_demand = d_start[new]
    d_start = d_start - pair_first_demand[pair_of_sorted] + base[pair_of_sorted]
    d_end = d_start + demand[by_pair]
    i_end = np.cumsum(item_amount)
    i_start = i_end - item_amount
    i_start = i_start - i_start[np.searchsorted(item_pair, np.arange(n_pairs))][item_pair] + base[item_pair]
    cuts = sorted_unique(np.concatenate([d_start, d_end, i_start]))
    a = cuts[:-1]
    which = np.searchsorted(d_start, a, side="right") - 1
    keep = (which >= 0) & (a < d_end[np.maximum(which, 0)])
    a, which = a[keep], which[keep]
    b = np.minimum(cuts[1:][keep], d_end[which])
    item = np.searchsorted(i_start, a, side="right") - 1
    edge = by_pair[which]
    in_edge_order = np.argsort(edge, kind="stable")
    edge, item = edge[in_edge_order], item[in_edge_order]
    units = (b - a)[in_edge_order]
    lengths = np.array([len(path) for path in paths], dtype=np.int64)
    starts = np.concatenate([[0], np.cumsum(lengths)[:-1]])
    links = np.fromiter((link for path in paths for link in path), dtype=np.int64, count=int(lengths.sum()))
    return Routes(edge_batch, x, y, edge, units, starts[item_path[item]], lengths[item_path[item]], links)


def listed_routes(router: Router, batches: list[Batch]) -> list[list[list[tuple[int, list[int]]]]]:
    """For every batch and every one of its edges, the routes of its pieces: [(units, link path), ...]."""
    return [[router.route(x, y, b.mult) for x, y in b.edges] for b in batches]


def lower_allgather(batches: list[Batch], routes, k: int) -> Schedule:
    """The schedule IR of the forest (module docstring): as numpy columns over ``one = k`` from ``Routes``, else
    as exact transfers (a piece cut between parallel links)."""
    if isinstance(routes, Routes):
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


def _lowered_columns(batches: list[Batch], routes: Routes, k: int) -> Schedule:
    """``lower_allgather`` from ``Routes``: the same rows in the same order, built with numpy. An edge's pieces
    leave when its tail holds the batch (``ready``: the sum of the slowest route's hops along the tree path from
    the root, by pointer jumping over parent edges) and cross a hop per step; bounds are piece numbers over
    ``one = k``."""
    r = routes
    n_edges = len(r.edge_x)
    roots = np.array([b.root for b in batches], dtype=np.int64)
    first = np.zeros(len(batches), dtype=np.int64)
    taken: dict[int, int] = {}
    for i, b in enumerate(batches):
        first[i] = taken.get(b.root, 0)
        taken[b.root] = first[i] + b.mult
    seg_first = np.searchsorted(r.edge, np.arange(n_edges))
    slowest = np.maximum.reduceat(r.hops, seg_first) if n_edges else np.zeros(0, dtype=np.int64)
    span = int(max(r.edge_x.max(initial=0), r.edge_y.max(initial=0))) + 1
    head_key = r.edge_batch * span + r.edge_y
    by_head = np.argsort(head_key, kind="stable")
    tail_key = r.edge_batch * span + r.edge_x
    at = np.minimum(np.searchsorted(head_key[by_head], tail_key), max(n_edges - 1, 0))
    parent = np.where(head_key[by_head][at] == tail_key, by_head[at], -1) if n_edges else at
    if ((parent < 0) != (r.edge_x == roots[r.edge_batch])).any() or (parent >= np.arange(n_edges)).any():
        raise AssertionError("a tree edge leaves a node its batch has not reached")
    ready, up = slowest.copy(), parent.copy()
    while (up >= 0).any():                             # ready[e] = the hops of e and of every edge above it
        has = up >= 0
        safe = np.where(has, up, 0)
        ready, up = ready + np.where(has, ready[safe], 0), np.where(has, up[safe], -1)
    t0 = ready - slowest
    before = np.cumsum(r.units) - r.units              # each segment's first piece within its edge
    lo = first[r.edge_batch[r.edge]] + before - before[seg_first][r.edge]
    hi = lo + r.units
    hops = r.hops
    row_seg = np.repeat(np.arange(len(hops)), hops)
    hop = np.arange(len(row_seg)) - np.repeat(np.cumsum(hops) - hops, hops)
    step = t0[r.edge][row_seg] + hop + 1
    link = r.links[r.path_start[row_seg] + hop]
    shard = roots[r.edge_batch[r.edge]][row_seg]

    def narrow(a: np.ndarray) -> np.ndarray:
        return a.astype(narrowest(int(a.max(initial=0))))

    cols = Columns(narrow(step), narrow(link), narrow(shard), lo[row_seg].astype(narrowest(k)),
                   hi[row_seg].astype(narrowest(k)), np.zeros(len(step), dtype=bool), k)
    return Schedule(Collective.ALLGATHER, algo="forestcoll", cols=cols)
