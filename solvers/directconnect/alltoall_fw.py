"""A first-order solver for the all-to-all MCF LP (3) (``alltoall.py``) that answers on any fabric size within a
time limit: the Frank-Wolfe method on a smoothed maximum link load, over routings of every source's unit demand to
every other node, with a certified bracket lower <= f* <= upper read off every iteration.

The problem, in routing form: every source s sends one unit to every t != s; a routing's link loads x_l (the flow
on link l summed over all sources) have congestion lambda = max_l x_l / c_l, and f* = 1 / min lambda over routings
(a routing scaled by 1 / lambda is a feasible point of LP (3) with f = 1 / lambda). Each iteration

1. takes link lengths w_l = the gradient of the smoothed maximum  Phi(x) = log(sum_l exp(beta x_l / c_l)) / beta
   at the current loads (a softmax over the links' utilisations, divided by c_l);
2. computes all-pairs shortest paths under w (``scipy.sparse.csgraph.dijkstra``, all sources in one call, with
   predecessors) and routes every source's demand along its shortest-path tree: the flow on the tree link into v
   is the size of v's subtree, accumulated for all sources at once by walking the nodes from the farthest in;
3. mixes that routing with the previous step's target so that the new direction is conjugate to the previous one
   under Phi's Hessian (the conjugate Frank-Wolfe method of traffic assignment, Mitradjieva and Lindberg 2013),
   then moves the current routing toward it by the step that minimises Phi on the segment (exact line search:
   Phi is convex along it);
4. reads both bounds: lower = 1 / lambda of the current routing, upper = sum_l c_l w_l / sum_{s != t} dist_w(s, t)
   (weak duality of the maximum concurrent flow, valid for any w >= 0; the shortest-path routing's cost is that
   sum).

The first routing is on hop lengths with every node's demand split evenly over its shortest in-links
(``dag_flows``, ECMP): on edge-transitive fabrics (tori, circulants) that is already optimal and meets the hop
bound, so the bracket closes at once. The smoothing eps = log(m) / (beta lambda) (the most it can cost in
lambda) starts at 10 and only decreases: to 8 times the current gap (smoothing more than the gap measured better
than less, 8 the best factor of 0.5 .. 16 on gkautz and de Bruijn graphs), and by half after 30 iterations in a row
that did not narrow the bracket (else a fabric whose routing is already optimal, such as the DBT graph, keeps a
smooth w and a loose upper end). The best lower and upper over all iterations are kept; it stops when
(upper - lower) / upper <= the target gap or at the time limit.

The lower end is certified by the flow itself, not by the loads' bookkeeping: the source-aggregated flow y[s, l]
of the best routing is kept (N x m floats) and ``certify`` checks it against LP (3) (scaled to fit every capacity,
the least net inflow of any (source, node) pair is a feasible f), the check the PDLP path uses.

Measured (two shared cores): an iteration costs about 0.26 s at N = 1024 and 1 ms at N = 64. gkautz(4,64) comes
within 0.5 % of the interior point optimum in 0.3 s; ``python -m studio alltoall "gkautz(4,1024)"`` answers in
56 s and 290 MB with f in [7.955e-4, 8.066e-4] (a 1.4 % bracket, both ends within 0.7 % of Table 7's 8.01e-4),
where PDLP had it within 1.7 % after 600 s and 3.6 GB. The interior point and PDLP solves (``alltoall.py``) stay
the exact references.
"""
from __future__ import annotations

import math
import time
from dataclasses import dataclass, field
from typing import Callable

import numpy as np

SMOOTHING = 8.0     # beta = log(m) / (SMOOTHING * gap * lambda): measured best of 0.5 .. 16 on gkautz, de Bruijn
SMOOTHING_CAP = 10.0    # ... never smoother than log(m) / (SMOOTHING_CAP * lambda)
STALLED = 30            # ... and half as smooth after this many iterations in a row that did not narrow the bracket


@dataclass
class Bracket:
    """lower <= f* <= upper, certified (module docstring); ``flow`` is y[s, l] of the routing behind ``lower``
    (rows: sources, columns: the merged links ``src``, ``dst``, ``cap``), scaled so that it is feasible."""

    lower: float
    upper: float
    seconds: float
    iterations: int
    reached: bool                  # the target gap was met (else the time limit stopped it)
    flow: np.ndarray | None = field(default=None, repr=False)

    @property
    def gap(self) -> float:
        return (self.upper - self.lower) / self.upper


def in_table(n: int, src: np.ndarray, dst: np.ndarray) -> tuple[np.ndarray, np.ndarray]:
    """Every node's in-links padded to the largest in-degree: (links, tails), -1 where there is none."""
    deg = np.bincount(dst, minlength=n)
    links = np.full((n, max(int(deg.max()), 1)), -1, dtype=np.int64)
    order = np.argsort(dst, kind="stable")
    slot = np.arange(len(dst)) - np.repeat(np.cumsum(deg) - deg, deg)
    links[dst[order], slot] = order
    tails = np.where(links >= 0, src[np.maximum(links, 0)], -1)
    return links, tails


def dag_flows(dist: np.ndarray, w: np.ndarray, links: np.ndarray, tails: np.ndarray,
              tol: float = 1e-9) -> np.ndarray:
    """Every source's unit demand to every other node routed on its shortest paths, split evenly where they tie:
    node v's in-links (u, v) with dist(s, u) < dist(s, v) and dist(s, u) + w_uv <= (1 + tol) dist(s, v) share
    equally what v takes in (its own unit and all it passes on), walked for all sources at once from the farthest
    node in. Returns amounts[s, v, j], the flow from s on v's j-th in-link (``in_table``)."""
    n = dist.shape[0]
    rows = np.arange(n)
    real = (links >= 0)[None]
    du = dist[:, np.maximum(tails, 0)]                                      # [s, v, j]
    cost = np.where(real, du + w[np.maximum(links, 0)][None], np.inf)
    dv = dist[:, :, None]
    tight = real & (du < dv) & (cost <= dv * (1 + tol))
    best = np.argmin(cost, axis=2)[:, :, None]
    np.put_along_axis(tight, best, True, axis=2)                            # the shortest in-link always
    tight[rows, rows] = False
    frac = tight / np.maximum(tight.sum(axis=2, keepdims=True), 1)
    order = np.argsort(dist, axis=1, kind="stable")
    need = np.ones((n, n))
    need[rows, rows] = 0.0
    t = np.maximum(tails, 0)
    for k in range(n - 1, 0, -1):       # farthest first: all that v passes on is known before v shares it out
        v = order[:, k]
        share = frac[rows, v] * need[rows, v][:, None]                      # [s, j]
        for j in range(links.shape[1]):
            need[rows, t[v, j]] += share[:, j]
    return frac * need[:, :, None]


def tree_flows(dist: np.ndarray, pred: np.ndarray, eid: np.ndarray) -> tuple[np.ndarray, np.ndarray]:
    """Every source's unit demand to every other node routed on its shortest-path tree: (columns, sizes), where
    row s's tree link into v is link ``columns[s, v]`` and carries ``sizes[s, v]`` (v's subtree size); the
    diagonal is a dummy (size 0 on column m, one past the last link)."""
    n = dist.shape[0]
    rows = np.arange(n)
    order = np.argsort(dist, axis=1, kind="stable")
    size = np.ones((n, n))
    for k in range(n - 1, 0, -1):       # farthest first: a node's subtree is complete before its parent reads it
        v = order[:, k]
        size[rows, pred[rows, v]] += size[rows, v]
    size[rows, rows] = 0.0
    parent = np.where(pred < 0, 0, pred)
    columns = eid[parent, np.arange(n)[None, :]]
    columns[rows, rows] = eid.max() + 1
    return columns, size


def _line_search(u: np.ndarray, ut: np.ndarray, beta: float) -> float:
    """The gamma in [0, 1] minimising the smoothed max of (1 - gamma) u + gamma ut (bisection on the slope)."""
    d = ut - u

    def slope(g: float) -> float:
        z = beta * (u + g * d)
        p = np.exp(z - z.max())
        return float(np.dot(p, d) / p.sum())

    if slope(0.0) >= 0:
        return 0.0
    if slope(1.0) <= 0:
        return 1.0
    lo, hi = 0.0, 1.0
    for _ in range(40):
        mid = (lo + hi) / 2
        if slope(mid) < 0:
            lo = mid
        else:
            hi = mid
    return (lo + hi) / 2


def certify(flow: np.ndarray, src: np.ndarray, dst: np.ndarray, cap: np.ndarray) -> float:
    """The f that the source-aggregated flow y[s, l] certifies for LP (3): scaled to fit every capacity, the
    least net inflow over (source, node != source) pairs (0 if some pair gets nothing)."""
    n = flow.shape[0]
    y = np.maximum(flow, 0.0)
    load = y.sum(axis=0)
    scale = min(1.0, float(np.min(cap / np.maximum(load, 1e-300))))
    net = np.zeros((n, n))
    for s in range(n):                   # row s: inflow minus outflow at every node
        net[s] = np.bincount(dst, y[s], n) - np.bincount(src, y[s], n)
    np.fill_diagonal(net, np.inf)
    return scale * float(net.min())


def solve(n: int, src: np.ndarray, dst: np.ndarray, cap: np.ndarray, target_gap: float = 5e-3,
          time_limit: float = 60.0, progress: Callable[[str], None] | None = None) -> Bracket:
    """The bracket of LP (3) on n nodes and merged links (src, dst, cap) (module docstring)."""
    from scipy.sparse import csr_matrix
    from scipy.sparse.csgraph import dijkstra

    start = time.perf_counter()
    m = len(cap)
    links, tails = in_table(n, src, dst)
    eid = np.zeros((n, n), dtype=np.int64)
    eid[src, dst] = np.arange(m)
    column = np.broadcast_to(np.where(links >= 0, links, m)[None], (n,) + links.shape)   # m: padding
    rows = np.arange(n)[:, None, None]
    log_m = math.log(max(m, 2))

    def route(w: np.ndarray, ecmp: bool):
        """(sum of distances, the routing's y[s, l] with a padding column m, its loads)."""
        y = np.zeros((n, m + 1))
        if ecmp:
            dist = dijkstra(csr_matrix((w, (src, dst)), shape=(n, n)))
            y[rows, column] = dag_flows(dist, w, links, tails)     # each (source, link) once; padding gets 0
        else:
            dist, pred = dijkstra(csr_matrix((w, (src, dst)), shape=(n, n)), return_predecessors=True)
            columns, size = tree_flows(dist, pred, eid)
            y[rows[:, :, 0], columns] = size                        # each (source, tree link) once
        return float(dist.sum()), y, y[:, :m].sum(axis=0)

    total, flow, x = route(1.0 / cap, True)             # hop lengths, shortest paths split evenly
    upper = float(np.dot(cap, 1.0 / cap) / total)
    best_lower = 1.0 / float(np.max(x / cap))
    best_flow = flow.copy()
    it, previous, smooth, last_gap, stalled = 1, None, SMOOTHING_CAP, 1.0, 0
    while True:
        gap = (upper - best_lower) / upper
        if gap <= target_gap or time.perf_counter() - start > time_limit:
            break
        u = x / cap
        stalled = stalled + 1 if gap >= last_gap else 0
        if stalled >= STALLED:
            smooth, stalled = smooth / 2, 0
        smooth, last_gap = min(SMOOTHING * gap, smooth), gap
        beta = log_m / (max(smooth, target_gap / 4) * float(u.max()))
        z = beta * u
        p = np.exp(z - z.max())
        p /= p.sum()
        w = np.maximum(p / cap, 1e-12 * float(np.max(p / cap)))
        total, target, xt = route(w, False)
        upper = min(upper, float(np.dot(cap, w) / total))
        if previous is not None:        # conjugate direction: mix in the last target, Hessian-conjugate to d
            old, xold, d = previous
            hd = beta * (p * (d / cap) - p * float(np.dot(p, d / cap))) / cap
            num, den = float(np.dot(hd, xt - x)), float(np.dot(hd, xt - xold))
            mix = min(max(num / den, 0.0), 0.99) if den != 0 else 0.0
            if mix > 0:
                target = mix * old + (1 - mix) * target
                xt = mix * xold + (1 - mix) * xt
        gamma = _line_search(u, xt / cap, beta)
        previous = (target, xt, xt - x)
        x = (1 - gamma) * x + gamma * xt
        flow *= 1 - gamma
        flow += gamma * target
        if 1.0 / float(np.max(x / cap)) > best_lower:
            best_lower = 1.0 / float(np.max(x / cap))
            best_flow = flow.copy()
        it += 1
        if progress and it % 25 == 0:
            progress(f"Frank-Wolfe iteration {it}: f in [{best_lower:.5g}, {upper:.5g}], gap {gap:.2%}, "
                     f"{time.perf_counter() - start:.0f} s")
    best_flow = best_flow[:, :m] * best_lower   # the lower end is what the kept flow certifies against LP (3)
    best_lower = certify(best_flow, src, dst, cap)
    reached = (upper - best_lower) / upper <= target_gap
    return Bracket(best_lower, upper, time.perf_counter() - start, it, reached, best_flow)
