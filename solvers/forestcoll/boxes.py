"""Tree packing box by box: k spanning out-trees per root of the switch-free graph D* built from small packings,
for fabrics made of boxes (DGX A100 boxes, MI250 clusters) joined by narrower links. The third way to the
packing of ``packing`` (ForestColl section 4.4), tried first by ``pack_trees(method="auto")``.

The boxes are the weakly connected components of the arcs of D* wider than its narrowest arc (a fabric whose
arcs are all equally wide has none, and this method does not apply). An arc between two boxes is "inter", one
inside a box "internal". A global tree is then

    an internal tree of the root's box P rooted at the root,
    then for every edge P' -> C of a tree over the boxes (the quotient): one inter arc u -> v (u in P', v in C)
    and an internal tree of C rooted at v.

So it suffices to have (b) a packing of |P| k trees rooted at each box P in the quotient, whose arc P -> C has
the total inter capacity from P to C; then the quotient's load on each box pair is spread over that pair's inter
arcs, one unit at a time to the target with the fewest entries so far, which fixes e(v), the trees entering a box
at v (at most the inter capacity into v); and (a) in every box C a packing of k + e(v) internal trees rooted at
each v in C (k for the box's own roots, e(v) for the trees entering there). Every inter unit and every internal
tree is then used at most once, so the loads stay within the capacities of D*. Both packings are small (the
number of boxes; the box's nodes) and run with ``packing``'s own methods after a flow check of Theorem 10's
condition. Boxes with the same internal arcs and the same e(v) up to the order of their nodes (the identical
boxes of a cluster) are packed once.

(a) and (b) are sufficient, not necessary: where either fails, ``box_packing`` returns None and the caller goes
on with the other methods. Where the inter links are the bottleneck (they are on every cluster the paper
measures: each tree must enter every box exactly once), (a) follows from Theorem 10's condition on D* itself
for the sets (V minus a box) plus part of it. ``check_packing`` checks the result like any other.
"""
from __future__ import annotations

import heapq
from collections import defaultdict

from ..core.components import components
from .batches import Batch, UnitPool
from .search import first_shortfall

MIN_BOXES = 2
DRY = "a box packing pool ran dry"      # the counts of the module docstring rule it out


def find_boxes(nodes, arcs: dict) -> list[list[int]] | None:
    """The boxes of the module docstring (each sorted, in order of their least node), or None when D* has fewer
    than two, or every box is a single node."""
    nodes = sorted(nodes)
    live = [c for c in arcs.values() if c > 0]
    if not live:
        return None
    narrowest = min(live)
    boxes = components(nodes, [a for a, c in arcs.items() if c > narrowest])
    if len(boxes) < MIN_BOXES or all(len(b) == 1 for b in boxes):
        return None
    return boxes


def _small_packing(nodes, arcs: dict, counts: dict, flat) -> list[Batch] | None:
    """``counts[v]`` trees rooted at each v of ``nodes`` (0 .. n-1) by ``flat``, or None when Theorem 10's
    condition fails."""
    if len(nodes) == 1:
        (v,) = nodes
        return [Batch(v, counts[v])]
    if first_shortfall(len(nodes), nodes, arcs, 1, counts, list(nodes)) is not None:    # Theorem 10's condition
        return None
    return flat(nodes, arcs, counts)


def _entries(quotient_load: dict, crossing: dict) -> tuple[dict, dict]:
    """Which inter arcs carry the quotient's load: for each box pair (P, C), ``load`` units spread over the
    arcs P -> C so that the trees entering each node v of C, e(v), stay as even as the arcs allow (one unit at a
    time to the node with the fewest so far). Returns (pair -> UnitPool of arcs, e)."""
    entries: dict[int, int] = defaultdict(int)
    pools: dict[tuple[int, int], UnitPool] = {}
    for pair in sorted(quotient_load):
        need = quotient_load[pair]
        by_target: dict[int, list] = defaultdict(list)
        for (u, v), c in crossing[pair]:
            by_target[v].append([u, c])
        room = {v: sum(c for _, c in arcs) for v, arcs in by_target.items()}
        heap = [(entries[v], v) for v in by_target]
        heapq.heapify(heap)
        given: dict[int, int] = defaultdict(int)
        while need > 0:
            e, v = heapq.heappop(heap)
            given[v] += 1
            entries[v] += 1
            need -= 1
            room[v] -= 1
            if room[v] > 0:
                heapq.heappush(heap, (e + 1, v))
        pool = pools[pair] = UnitPool(DRY)
        for v in sorted(given):
            left = given[v]
            for arc in by_target[v]:
                a = min(left, arc[1])
                pool.add((arc[0], v), a)
                left -= a
                if left == 0:
                    break
    return pools, entries


def box_packing(nodes, arcs: dict, k: int, progress=None, flat=None) -> list[Batch] | None:
    """k spanning out-trees per root of D* (``arcs`` on ``nodes``) assembled box by box (module docstring);
    None when the fabric has no boxes or a box or the quotient cannot be packed this way. ``flat(nodes, arcs,
    counts)`` packs the small parts (``packing.flat_packing``, which ``packing.boxed_packing`` passes: this
    module does not import ``packing``)."""
    if flat is None:
        raise TypeError("box_packing needs the packer of its small parts (packing.boxed_packing passes it)")
    boxes = find_boxes(nodes, arcs)
    if boxes is None:
        return None
    box_of = {v: i for i, box in enumerate(boxes) for v in box}
    quotient: dict[tuple[int, int], int] = defaultdict(int)
    crossing: dict[tuple[int, int], list] = defaultdict(list)
    internal: list[dict] = [{} for _ in boxes]
    for (u, v), c in sorted(arcs.items()):
        if c <= 0:
            continue
        bu, bv = box_of[u], box_of[v]
        if bu == bv:
            internal[bu][(u, v)] = c
        else:
            quotient[(bu, bv)] += c
            crossing[(bu, bv)].append(((u, v), c))

    tops = _small_packing(list(range(len(boxes))), dict(quotient), {i: len(b) * k for i, b in enumerate(boxes)},
                          flat)
    if tops is None:
        return None
    load: dict[tuple[int, int], int] = defaultdict(int)
    for top in tops:
        for edge in top.edges:
            load[edge] += top.mult
    inter, entries = _entries(load, crossing)

    solved: dict = {}
    trees: dict[int, UnitPool] = {}              # node -> pool of internal trees rooted there (edge lists)
    for i, box in enumerate(boxes):
        rank = {v: r for r, v in enumerate(box)}
        local = tuple(sorted((rank[u], rank[v], c) for (u, v), c in internal[i].items()))
        counts = tuple(k + entries[v] for v in box)
        key = (local, counts)
        if key not in solved:
            solved[key] = _small_packing(list(range(len(box))), {(a, b): c for a, b, c in local},
                                         dict(enumerate(counts)), flat)
        found = solved[key]
        if found is None:
            return None
        for v in box:
            trees[v] = UnitPool(DRY)
        for b in found:
            trees[box[b.root]].add([(box[x], box[y]) for x, y in b.edges], b.mult)
        if progress:
            progress("tree packing (boxes)", 0.5 * (i + 1) / len(boxes))

    own = {i: UnitPool(DRY) for i in range(len(boxes))}     # the roots of each box, k trees each
    for i, box in enumerate(boxes):
        for v in box:
            own[i].add(v, k)
    batches: list[Batch] = []
    for t, top in enumerate(tops):
        # one group per (root, internal tree at the root), each walked down the quotient tree's edges
        work = []
        for root, m in own[top.root].take(top.mult):
            for edges, a in trees[root].take(m):
                work.append((root, a, list(edges), 0))
        while work:
            root, m, edges, step = work.pop()
            if step == len(top.edges):
                batches.append(Batch(root, m, edges))
                continue
            src, dst = top.edges[step]
            for (u, v), a in inter[(src, dst)].take(m):
                for inner, b in trees[v].take(a):
                    work.append((root, b, edges + [(u, v)] + inner, step + 1))
        if progress and t % 16 == 0:
            progress("tree packing (boxes)", 0.5 + 0.5 * (t + 1) / len(tops))
    return batches
