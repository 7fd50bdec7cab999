"""Tree packing on circulant fabrics by translation: the k trees of root 0 built once, then shifted to every
other root (ForestColl section 4, Theorem 10's packing; a precursor to Algorithm 5 tried where the greedy gets
stuck, like ``boxes`` for boxed fabrics).

A logical graph D* on nodes 0..N-1 is *cyclic* when the capacity of every arc (u, u + d mod N) depends only on
its offset d and each offset present is present at every node: circulants C(N, {a_j}) (digest 1.3's example
fabrics), rings. Shifting a tree by r (every node x to x + r mod N) maps an arc of offset d to another arc of
offset d, so if the trees rooted at 0 use offset d in t_d of their arcs (counted with multiplicity), the N
shifted copies load *every* offset-d arc with exactly t_d trees. The packing of all N k trees therefore fits the
capacities exactly when the k trees of root 0 fit the per-offset budgets t_d <= c_d -- one root's problem instead
of N roots', in O(k N |D| log N) steps.

Why the greedy stalls there: at the optimum of a circulant every arc is saturated (Σ c_d = k (N - 1): the cut
around one node is the bottleneck, e.g. C(256, {1,2,4,8}) has 1/x* = 255/8, k = 8 and U c_d = 255 on every
arc), so a packing may waste no capacity at all, and c_d = 255 is no multiple of the batches' multiplicities:
batches grown one after another exhaust some arcs around the last roots long before their trees span, the
restarts chase one stuck set after another (30 runs on C(128, {1,2,4,8})) and Algorithm 5 finishes the rest,
one max-flow per edge on a graph with a node per open batch (76,688 flows, 131 s at N = 256).

The root-0 trees are grown as batches in Prim's order, like the greedy of ``packing``: a batch of multiplicity m
takes the frontier arc whose offset has the most budget left (then the shallowest tail, then the smaller offset)
and uses min(m, budget) of it, splitting when the budget is short. None where a batch finds no arc with budget
left (the caller goes on with the general packing); ``check_packing`` confirms whatever it returns.
"""
from __future__ import annotations

import heapq


def cyclic_budgets(nodes, arcs: dict) -> dict[int, int] | None:
    """The capacity c_d of each offset d when ``arcs`` on nodes 0..N-1 form a cyclic graph (module docstring),
    else None."""
    nodes = sorted(nodes)
    n = len(nodes)
    if n < 3 or nodes != list(range(n)):
        return None
    budget: dict[int, int] = {}
    count: dict[int, int] = {}
    for (u, v), c in arcs.items():
        if c <= 0:
            continue
        d = (v - u) % n
        if budget.setdefault(d, c) != c:
            return None
        count[d] = count.get(d, 0) + 1
    if not budget or any(x != n for x in count.values()):
        return None
    return budget


def root_shapes(n: int, budget: dict[int, int], k: int) -> list[tuple[int, list]] | None:
    """k out-trees rooted at 0 on Z_n within the per-offset ``budget``, as (multiplicity, edges in order)
    batches; None where the Prim growth of the module docstring gets stuck."""
    left = dict(budget)
    offsets = sorted(left)
    queue: list[tuple[int, list, dict]] = [(k, [], {0: 0})]          # (m, edges, node -> depth)
    shapes = []
    while queue:
        m, edges, depth = queue.pop(0)
        heaps: dict[int, list] = {d: [] for d in offsets}             # per offset: (depth, tail) candidates

        def offer(x: int) -> None:
            for d in offsets:
                if (x + d) % n not in depth:
                    heapq.heappush(heaps[d], (depth[x], x))

        for x in depth:
            offer(x)
        while len(depth) < n:
            best = None
            for d in offsets:
                h = heaps[d]
                while h and (h[0][1] + d) % n in depth:
                    heapq.heappop(h)
                if h and left[d] > 0:
                    key = (-left[d], h[0][0], d)
                    if best is None or key < best[0]:
                        best = (key, d)
            if best is None:
                return None
            d = best[1]
            _, x = heapq.heappop(heaps[d])
            y = (x + d) % n
            take = min(m, left[d])
            if take < m:
                queue.append((m - take, list(edges), dict(depth)))
                m = take
            left[d] -= take
            edges.append((x, y))
            depth[y] = depth[x] + 1
            offer(y)
        shapes.append((m, edges))
    return shapes


def cyclic_packing(nodes, arcs: dict, k: int) -> list[tuple[int, int, list]] | None:
    """k trees per root on a cyclic D* by translating root 0's trees (module docstring), as (root, multiplicity,
    edges) for ``packing.Batch``; None where the graph is not cyclic or the root-0 growth gets stuck."""
    budget = cyclic_budgets(nodes, arcs)
    if budget is None:
        return None
    n = len(list(nodes))
    shapes = root_shapes(n, budget, k)
    if shapes is None:
        return None
    return [(r, m, [((x + r) % n, (y + r) % n) for x, y in edges]) for r in range(n) for m, edges in shapes]
