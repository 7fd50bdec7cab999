"""Spanning-tree packing: k out-trees rooted at every compute node of the switch-free graph D*, within its
integer capacities, built in batches of identical trees (ForestColl Algorithm 5, digest section 2.4, Theorems
9-12).

A batch is (root, multiplicity m, edges in the order they were added, so a parent always precedes its child).
Theorem 10 guarantees the packing exists when min over v of F(s, v; D⃗*_k) >= N k.

* ``exact``: Algorithm 5. An edge (x, y) leaving batch R_1 is added to μ copies of it, where (eq. (5))
  μ = min(g(x, y), m(R_1), F(x, y; D̄) - Σ_{i≠1} m(R_i)) and D̄ is the residual graph plus a node s_i per
  other unfinished batch (x -> s_i of capacity m(R_i), s_i -> every node of R_i unbounded). If μ < m(R_1) the
  batch splits. One max-flow per edge tried.
* ``greedy`` (the default first try): grow each batch by the widest residual edge leaving it (Prim's order:
  a tree fills a box over its wide internal links before it takes the next narrow link out), adding it to
  min(g, m) copies and splitting the batch when g < m. No max-flows; if some batch cannot grow any further the
  greedy run is abandoned and Algorithm 5 runs instead (``method="auto"``).

Either way ``check_packing`` confirms the result: Σ m = k per root, every batch a spanning arborescence of its
root, every edge's load within its capacity.
"""
from __future__ import annotations

import heapq
from collections import deque
from dataclasses import dataclass, field

from ..maxflow import Network


@dataclass
class Batch:
    """``mult`` identical out-trees rooted at ``root``; ``edges`` in the order they were added."""

    root: int
    mult: int
    edges: list = field(default_factory=list)

    def nodes(self) -> set:
        return {self.root, *(y for _, y in self.edges)}


class PackingError(AssertionError):
    """A packing that breaks ForestColl's guarantees (a bug, never bad input)."""


def check_packing(nodes, arcs: dict, k: int, batches: list[Batch]) -> None:
    """Raise PackingError unless ``batches`` are k spanning out-trees per root within the capacities."""
    nodes = set(nodes)
    per_root = {v: 0 for v in nodes}
    load: dict = {}
    for b in batches:
        if b.mult <= 0:
            raise PackingError(f"a batch of root {b.root} has multiplicity {b.mult}")
        per_root[b.root] += b.mult
        have = {b.root}
        for x, y in b.edges:
            if x not in have or y in have:
                raise PackingError(f"batch of root {b.root}: edge {x}->{y} is not a tree edge in order")
            have.add(y)
            load[(x, y)] = load.get((x, y), 0) + b.mult
        if have != nodes:
            raise PackingError(f"batch of root {b.root} does not span all {len(nodes)} compute nodes")
    bad = [v for v, m in per_root.items() if m != k]
    if bad:
        raise PackingError(f"root {bad[0]} has {per_root[bad[0]]} trees, not k = {k}")
    over = [(a, x) for a, x in load.items() if x > arcs.get(a, 0)]
    if over:
        (a, x), = over[:1]
        raise PackingError(f"edge {a[0]}->{a[1]} carries {x} trees over its capacity {arcs.get(a, 0)}")


def greedy_packing(nodes, arcs: dict, k: int, progress=None) -> list[Batch] | None:
    """The greedy of the module docstring; None when some batch gets stuck."""
    nodes = sorted(nodes)
    total = len(nodes)
    g = dict(arcs)
    out: dict[int, list[int]] = {v: [] for v in nodes}
    for (x, y) in sorted(arcs, key=lambda a: (-arcs[a], a)):
        out[x].append(y)
    queue = deque(Batch(v, k) for v in nodes)
    done: list[Batch] = []
    while queue:
        b = queue.popleft()
        have = b.nodes()
        ptr: dict[int, int] = {}
        heap: list = []

        def offer(x: int) -> None:
            lst, i = out[x], ptr.get(x, 0)
            while i < len(lst) and (lst[i] in have or g.get((x, lst[i]), 0) == 0):
                i += 1
            ptr[x] = i
            if i < len(lst):
                heapq.heappush(heap, (-g[(x, lst[i])], x))

        for x in have:
            offer(x)
        while len(have) < total:
            if not heap:
                return None
            neg, x = heapq.heappop(heap)
            i = ptr[x]
            y = out[x][i] if i < len(out[x]) else None
            if y is None or y in have or g.get((x, y), 0) != -neg:
                offer(x)                      # stale entry: look again from x
                continue
            mu = min(-neg, b.mult)
            if mu < b.mult:
                queue.append(Batch(b.root, b.mult - mu, list(b.edges)))
                b.mult = mu
            b.edges.append((x, y))
            have.add(y)
            g[(x, y)] -= mu
            offer(x)
            offer(y)
        done.append(b)
        if progress and len(done) % 64 == 0:
            progress("tree packing", min(0.99, len(done) / (len(done) + len(queue) + 1)))
    return done


def _mu(nodes, g: dict, batch: Batch, have: set, others: list[tuple[Batch, set]], x: int, y: int) -> int:
    """Eq. (5)."""
    cap = min(g.get((x, y), 0), batch.mult)
    if cap <= 0:
        return 0
    if not others:
        return cap
    n = max(nodes) + 1
    arcs = {a: c for a, c in g.items() if c > 0}
    inf = sum(arcs.values()) + sum(b.mult for b, _ in others) + 1
    for i, (other, members) in enumerate(others):
        si = n + i
        arcs[(x, si)] = other.mult
        for v in members:
            arcs[(si, v)] = inf
    flow = Network(n + len(others), arcs).flow(x, y)
    return max(0, min(cap, flow - sum(b.mult for b, _ in others)))


def exact_packing(nodes, arcs: dict, k: int, progress=None) -> list[Batch]:
    """Algorithm 5 (module docstring), batches grown breadth-first with successors in index order."""
    nodes = sorted(nodes)
    total = len(nodes)
    g = {a: c for a, c in arcs.items() if c > 0}
    succ: dict[int, list[int]] = {v: [] for v in nodes}
    for (x, y) in sorted(g):
        succ[x].append(y)
    open_batches: deque = deque((Batch(v, k), {v}) for v in nodes)
    done: list[Batch] = []
    while open_batches:
        batch, have = open_batches.popleft()
        while len(have) < total:
            others = [(b, h) for b, h in open_batches]
            grown = False
            for x in sorted(have):
                for y in succ[x]:
                    if y in have or g.get((x, y), 0) == 0:
                        continue
                    mu = _mu(nodes, g, batch, have, others, x, y)
                    if mu == 0:
                        continue
                    if mu < batch.mult:
                        open_batches.append((Batch(batch.root, batch.mult - mu, list(batch.edges)), set(have)))
                        batch.mult = mu
                    batch.edges.append((x, y))
                    have.add(y)
                    g[(x, y)] -= mu
                    grown = True
                    break
                if grown:
                    break
            if not grown:
                raise PackingError(f"Algorithm 5 found no edge to grow the batch of root {batch.root}: the "
                                   "input breaks Theorem 10's condition")
        done.append(batch)
        if progress:
            progress("tree packing (Algorithm 5)", len(done) / (len(done) + len(open_batches)))
    return done


def pack_trees(nodes, arcs: dict, k: int, method: str = "auto", progress=None) -> tuple[list[Batch], str]:
    """(batches, method used); ``method`` is "auto", "greedy" or "exact" (module docstring)."""
    if method not in ("auto", "greedy", "exact"):
        raise ValueError(f"unknown packing method {method!r}")
    batches, used = None, "exact"
    if method in ("auto", "greedy"):
        batches, used = greedy_packing(nodes, arcs, k, progress), "greedy"
        if batches is None and method == "greedy":
            raise PackingError("the greedy packing got stuck")
    if batches is None:
        batches, used = exact_packing(nodes, arcs, k, progress), "exact"
    check_packing(nodes, arcs, k, batches)
    return batches, used
