"""Spanning-tree packing: k out-trees rooted at every compute node of the switch-free graph D*, within its
integer capacities, built in batches of identical trees (ForestColl Algorithm 5, digest section 2.4, Theorems
9-12).

A batch is (root, multiplicity m, edges in the order they were added, so a parent always precedes its child).
Theorem 10 guarantees the packing exists when min over v of F(s, v; D⃗*_k) >= N k.

* ``exact``: Algorithm 5. An edge (x, y) leaving batch R_1 is added to μ copies of it, where (eq. (5))
  μ = min(g(x, y), m(R_1), F(x, y; D̄) - Σ_{i≠1} m(R_i)) and D̄ is the residual graph plus a node s_i per
  other unfinished batch (x -> s_i of capacity m(R_i), s_i -> every node of R_i unbounded). If μ < m(R_1) the
  batch splits. One max-flow per edge tried.
* ``greedy`` (the default first try): grow each batch by the widest edge leaving it, by capacity, then from
  the shallowest node of the tree, then by what is left of the edge (Prim's order: a tree fills a box over its
  wide internal links before it takes the next narrow link out, does not leave early once the internal links
  are partly used, and enters every other box straight from its root's box, where the links to that box were
  sized for exactly the root box's trees), adding it to
  min(g, m) copies and splitting the batch when g < m. No max-flows. If some batch R cannot grow any further,
  R is a set whose condition (3), g(δ⁺(R)) >= p(R) = Σ{m(R_i) : R_i ⊆ R}, the run broke: the greedy starts
  again with R watched. For a watched set S the run keeps its slack g(δ⁺(S)) - p(S) and adds an edge (x, y)
  with x in S, y outside and R_1 ⊄ S to at most that many copies (eq. (4) restricted to the watched sets), so
  the condition of a watched set never breaks. After ``MAX_RESTARTS`` restarts, ``PATIENCE`` restarts in a row
  that finish no more batches than the best run, or when a batch gets stuck on a set already watched (its way
  out held back by other watched sets), Algorithm 5 takes over (``method="auto"``): not from the start but
  from the last point of the last run where condition (3) still holds for every set (``resumed_packing``),
  keeping the batches the greedy finished before it.

* ``boxes`` (tried first on fabrics made of boxes): ``boxes.box_packing`` assembles the trees from a packing
  inside each box and one over the boxes.
* ``cyclic`` (circulants and rings, where one greedy run gets stuck): ``cyclic.cyclic_packing`` grows the k
  trees of root 0 within per-offset budgets and shifts them to every other root (that module says why the
  greedy stalls on these fabrics).

Whichever way, ``check_packing`` confirms the result: Σ m = k per root, every batch a spanning arborescence of its
root, every edge's load within its capacity.
"""
from __future__ import annotations

import heapq
from collections import deque
from dataclasses import dataclass
from typing import Callable

from ..core.maxflow import FlowGraph, Network
from .batches import Batch
from .boxes import box_packing
from .cyclic import cyclic_budgets, cyclic_packing

MAX_RESTARTS = 64
SNAP_EVERY = 16       # a greedy run keeps its state every 16 finished batches (``Trace``)
PATIENCE = 8          # restarts in a row that finish no more batches than the best run before the greedy gives up


class PackingError(AssertionError):
    """A packing that breaks ForestColl's guarantees (a bug, never bad input)."""


def root_counts(nodes, k: int | dict) -> dict:
    """Trees wanted per root: ``k`` for every node, or the mapping ``k`` itself (roots it omits want none)."""
    if isinstance(k, dict):
        return {v: int(k.get(v, 0)) for v in nodes}
    return {v: k for v in nodes}


def check_packing(nodes, arcs: dict, k: int | dict, batches: list[Batch]) -> None:
    """Raise PackingError unless ``batches`` are k spanning out-trees per root (``k[v]`` at v when k is a
    mapping) within the capacities."""
    nodes = set(nodes)
    want = root_counts(nodes, k)
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
    bad = [v for v, m in per_root.items() if m != want[v]]
    if bad:
        raise PackingError(f"root {bad[0]} has {per_root[bad[0]]} trees, not k = {want[bad[0]]}")
    over = [(a, x) for a, x in load.items() if x > arcs.get(a, 0)]
    if over:
        (a, x), = over[:1]
        raise PackingError(f"edge {a[0]}->{a[1]} carries {x} trees over its capacity {arcs.get(a, 0)}")


def _nested(others: list[tuple[Batch, set]]):
    """(i, j, nodes) per open batch i: s_i's unbounded arcs go to s_j and to ``nodes`` = R_i minus R_j, where R_j
    is the next smaller open set of the same root when it lies inside R_i (j None otherwise: all of R_i). The
    batches split off one growing batch are prefixes of its growth, so they nest, and a chain s_i -> s_j ->
    R_j reaches the same nodes as s_i -> R_i (a cut keeping s_i keeps s_j and R_j for free): the same flow
    values on a graph with far fewer arcs."""
    by_root: dict[int, list[int]] = {}
    for i, (b, _) in enumerate(others):
        by_root.setdefault(b.root, []).append(i)
    for group in by_root.values():
        group.sort(key=lambda i: len(others[i][1]))
        prev = None
        for i in group:
            members = others[i][1]
            if prev is not None and len(others[prev][1]) < len(members) and others[prev][1] <= members:
                yield i, prev, members - others[prev][1]
            else:
                yield i, None, members
            prev = i


class _MuOracle:
    """Eq. (5) for the batch being grown while the other open batches stay fixed: D̄ as one ``FlowGraph`` whose
    residual capacities are updated in place. The arcs x -> s_i of eq. (5) become σ -> s_i from a fixed node σ
    joined to x by an unbounded arc for the query (σ and x then act as one node), and the flow goes to a node τ
    joined from y. Two reductions keep the flow values and shrink the graph (Algorithm 5's flows are its cost):

    * nested open sets share their arcs (``_nested``);
    * s_i -> v is left out for an *interior* v of R_i, one whose residual arcs all stay inside R_i. In a
      minimum cut that keeps s_i on σ's side, the interior nodes left on τ's side can join σ's side at no cost
      (their arcs lead into R_i, all of whose other nodes are then on σ's side), so the value is that of D̄,
      except where y itself is interior: then the arcs s_i -> τ of the R_i holding it stand in for s_i -> y
      for that query. R_i stays fixed and g only falls while the oracle lives, so interior nodes stay so."""

    def __init__(self, nodes: list[int], g: dict, others: list[tuple[Batch, set]]):
        self.pos = {v: i for i, v in enumerate(nodes)}
        n, nb = len(nodes), len(others)
        self.sigma, self.tau = n + nb, n + nb + 1
        self.base = sum(b.mult for b, _ in others)
        self.inf = sum(g.values()) + self.base + 1
        pos, sigma, tau, inf = self.pos, self.sigma, self.tau, self.inf
        arcs = {(pos[x], pos[y]): c for (x, y), c in g.items() if c > 0}     # g never rises again
        out: dict[int, list[int]] = {}
        for (x, y), c in g.items():
            if c > 0:
                out.setdefault(x, []).append(y)
        self.inside: dict[int, list[int]] = {}          # node -> the s_i whose arc to it was left out
        for i, (b, _) in enumerate(others):
            arcs[(sigma, n + i)] = b.mult
            arcs[(n + i, tau)] = 0
        for i, inner, members in _nested(others):
            if inner is not None:
                arcs[(n + i, n + inner)] = inf
            whole = others[i][1]
            for v in members:
                if all(w in whole for w in out.get(v, ())):
                    self.inside.setdefault(v, []).append(n + i)
                else:
                    arcs[(n + i, pos[v])] = inf
        for v in nodes:
            arcs[(sigma, pos[v])] = 0
            arcs[(pos[v], tau)] = 0
        self.graph = FlowGraph(n + nb + 2, arcs, 2 * inf)

    def set(self, x: int, y: int, value: int) -> None:
        self.graph.set(self.pos[x], self.pos[y], value)

    def flow(self, x: int, y: int) -> int:
        graph, inf = self.graph, self.inf
        j, t = self.pos[x], self.pos[y]
        held = self.inside.get(y, ())
        graph.set(self.sigma, j, inf)
        graph.set(t, self.tau, inf)
        for s in held:
            graph.set(s, self.tau, inf)
        try:
            return graph.flow(self.sigma, self.tau)
        finally:
            graph.set(self.sigma, j, 0)
            graph.set(t, self.tau, 0)
            for s in held:
                graph.set(s, self.tau, 0)

    def mu(self, x: int, y: int, cap: int) -> int:
        """min(cap, F(x, y; D̄) - Σ_{i≠1} m(R_i)), at least 0."""
        return max(0, min(cap, self.flow(x, y) - self.base))


@dataclass
class Growth:
    """Where a packing run stands: the residual capacities ``g``, the batches still growing (each with its node
    set) in the order they will be grown, and the finished batches."""

    g: dict
    queue: deque
    done: list

    @classmethod
    def fresh(cls, nodes, arcs: dict, k: int | dict) -> "Growth":
        want = root_counts(nodes, k)
        return cls({a: c for a, c in arcs.items() if c > 0},
                   deque((Batch(v, want[v]), {v}) for v in sorted(nodes) if want[v] > 0), [])

    def copy(self) -> "Growth":
        """An independent copy: the growing batches are copied (a run extends them in place), the finished
        ones shared (nothing changes them)."""
        return Growth(dict(self.g), deque((Batch(b.root, b.mult, list(b.edges)), set(have))
                                          for b, have in self.queue), list(self.done))


def _packing(nodes, arcs: dict, k: int | dict, exact: bool, progress=None,
             watched: list[frozenset] = (), growth: Growth | None = None,
             stop_after: int | None = None, trace: "Trace | None" = None
             ) -> tuple[list[Batch] | None, frozenset | None]:
    """Grow the batches one at a time in Prim's order (module docstring). With ``exact`` every edge is added to
    μ copies (eq. (5)), so the growth never gets stuck (Theorem 11/12); without, to min(g, m, the slack of
    every ``watched`` set it crosses) copies, and the run returns (None, the node set of the batch that could
    not grow) if one gets stuck. Otherwise (batches, None). The run starts from ``growth`` (default: every root
    alone, k copies each) and keeps it up to date; with ``stop_after`` it returns (None, None) once that many
    batches are finished."""
    nodes = sorted(nodes)
    total = len(nodes)
    if growth is None:
        growth = Growth.fresh(nodes, arcs, k)
    g, queue, done = growth.g, growth.queue, growth.done
    out: dict[int, list[int]] = {v: [] for v in nodes}
    for (x, y) in sorted((a for a, c in arcs.items() if c > 0), key=lambda a: (-arcs[a], a)):
        out[x].append(y)
    member: dict[int, list[int]] = {v: [] for v in nodes}
    slack = []
    for i, side in enumerate(watched):
        for v in side:
            member[v].append(i)
        slack.append(sum(c for (x, y), c in g.items() if x in side and y not in side)
                     - sum(b.mult for b, have in queue if have <= side))
    while queue:
        if stop_after is not None and len(done) >= stop_after:
            return None, None
        if trace is not None:
            trace.boundary(growth)
        b, have = queue.popleft()
        if trace is not None:
            trace.events.append(frozenset(have))
        oracle = _MuOracle(nodes, g, list(queue)) if exact and queue else None
        ptr: dict[int, int] = {}
        depth = {b.root: 0}
        for x, y in b.edges:
            depth[y] = depth[x] + 1
        inside: dict[int, int] = {}            # watched set -> how many of the batch's nodes it holds
        for v in have:
            for i in member[v]:
                inside[i] = inside.get(i, 0) + 1
        dead: set = set()
        heap: list = []

        def offer(x: int) -> None:
            lst, i = out[x], ptr.get(x, 0)
            while i < len(lst) and (lst[i] in have or g[(x, lst[i])] == 0 or (x, lst[i]) in dead):
                i += 1
            ptr[x] = i
            if i < len(lst):
                y = lst[i]
                heapq.heappush(heap, (-arcs[(x, y)], depth[x], -g[(x, y)], x, y))

        for x in have:
            offer(x)
        while len(have) < total:
            if not heap:
                if exact:
                    raise PackingError(f"Algorithm 5 found no edge to grow the batch of root {b.root}: the input "
                                       "breaks Theorem 10's condition")
                return None, frozenset(have)
            _, _, neg, x, y = heapq.heappop(heap)
            if y in have or g[(x, y)] != -neg or (x, y) in dead:
                offer(x)                      # stale entry: look again from x
                continue
            cap = min(-neg, b.mult)
            crossing = [i for i in member[x] if i not in member[y] and inside.get(i, 0) < len(have)]
            for i in crossing:
                cap = min(cap, slack[i])
            mu = oracle.mu(x, y, cap) if oracle is not None else cap
            if trace is not None:
                trace.events.append((x, y, cap))
            if mu == 0:                       # μ only falls while this batch grows: never try (x, y) again
                dead.add((x, y))
                offer(x)
                continue
            if mu < b.mult:
                queue.append((Batch(b.root, b.mult - mu, list(b.edges)), set(have)))
                b.mult = mu
                if exact:
                    oracle = _MuOracle(nodes, g, list(queue))
            for i in crossing:
                slack[i] -= mu
            b.edges.append((x, y))
            have.add(y)
            for i in member[y]:
                inside[i] = inside.get(i, 0) + 1
            depth[y] = depth[x] + 1
            g[(x, y)] -= mu
            if oracle is not None:
                oracle.set(x, y, g[(x, y)])
            offer(x)
            offer(y)
        done.append(b)
        if progress and (exact or len(done) % 64 == 0):
            progress("tree packing" + (" (Algorithm 5)" if exact else ""),
                     min(0.99, len(done) / (len(done) + len(queue) + 1)))
    return done, None


def greedy_packing(nodes, arcs: dict, k: int | dict, progress=None) -> list[Batch] | None:
    """The greedy of the module docstring, restarted with each set that breaks watched; None when it still
    gets stuck."""
    return _greedy(nodes, arcs, k, progress)[0]


class Trace:
    """What one greedy run decided, so that the next run, which watches one set more, can start where it first
    decides otherwise (``_greedy``). ``events``, in order: the node set of each batch as the run takes it up, and
    (x, y, copies allowed) for each edge it tries; ``snaps``: (events before it, batches finished, the run's
    state) at a batch boundary every ``SNAP_EVERY`` finished batches or more."""

    def __init__(self, events: list | None = None, snaps: list | None = None):
        self.events = [] if events is None else events
        self.snaps = [] if snaps is None else snaps

    def boundary(self, growth: Growth) -> None:
        if not self.snaps or len(growth.done) - self.snaps[-1][1] >= SNAP_EVERY:
            self.snaps.append((len(self.events), len(growth.done), growth.copy()))

    def first_difference(self, side: frozenset, slack: int) -> int:
        """The first event at which a run that also watches ``side`` (whose slack starts at ``slack``) allows
        fewer copies: until then the two runs are the same step for step (len(events) where it never does)."""
        outside = False                      # the growing batch already holds a node outside side
        for i, event in enumerate(self.events):
            if isinstance(event, frozenset):
                outside = not event <= side
                continue
            x, y, cap = event
            if cap == 0 or y in side:
                continue
            if x in side and outside:
                if slack < cap:
                    return i
                slack -= cap
            outside = True
        return len(self.events)

    def resume(self, side: frozenset, growth: Growth) -> tuple[Growth, "Trace"]:
        """The state at the last snapshot before the first difference (module docstring of ``_greedy``) and the
        trace up to it; ``growth`` is the fresh state the new run would start from."""
        slack = (sum(c for (x, y), c in growth.g.items() if x in side and y not in side)
                 - sum(b.mult for b, have in growth.queue if have <= side))
        at = self.first_difference(side, slack)
        kept = [snap for snap in self.snaps if snap[0] <= at]
        if not kept:
            return growth, Trace()
        count, _, state = kept[-1]
        return state, Trace(self.events[:count], kept[:-1])


def _greedy(nodes, arcs: dict, k: int | dict, progress=None) -> tuple[list[Batch] | None, list, int]:
    """(batches or None, the sets the last run watched, how many batches it finished before it got stuck). The
    restarts stop after ``MAX_RESTARTS``, on a set already watched, or after ``PATIENCE`` runs in a row that
    finish no more batches than the best before them (gkautz(4,128): 33 restarts all stuck at 101-109 of the
    ~140 batches, 4.3 s; where the restarts do help, mi250 with 2 and 3 clusters, the best count rose at least
    every fifth run; mi250(clusters=3) packed all its 1002 batches at the 19th run).

    A restart watches one set more than the run before, and until that set's slack first limits an edge the
    two runs take the same steps; so each run keeps a ``Trace`` and the next starts from its last snapshot
    before that point instead of from nothing (the same batches as a run from the start: the tests compare;
    gkautz(4,512)'s 14 runs then cost about a third)."""
    watched: list[frozenset] = []
    best, idle = -1, 0
    trace = None
    for _ in range(MAX_RESTARTS + 1):
        ran_with = list(watched)
        growth = Growth.fresh(nodes, arcs, k)
        if trace is None:
            trace = Trace()
        else:                                # the same run as the last one until the new set first binds
            growth, trace = trace.resume(ran_with[-1], growth)
        batches, stuck = _packing(nodes, arcs, k, False, progress, ran_with, growth, trace=trace)
        if batches is not None:
            return batches, ran_with, len(batches)
        best, idle = (len(growth.done), 0) if len(growth.done) > best else (best, idle + 1)
        if stuck in watched or idle >= PATIENCE:
            break
        watched.append(stuck)
    return None, ran_with, len(growth.done)


def condition_holds(nodes, growth: Growth) -> bool:
    """Condition (3) of Theorem 9 for the batches still growing: g(δ⁺(S)) >= p(S) for every S ≠ V, where p(S)
    sums the multiplicities of the batches whose node set lies in S (digest 2.4). One max-flow per node v, from a
    source s joined to each batch's node set R (an arc of capacity m(R) to a node for R, unbounded arcs on to R's
    nodes): a cut that keeps X ∌ v on the source's side costs Σ{m(R) : R ⊄ X} + g(δ⁺(X)), which is at least
    Σ m(R) for every such X exactly when g(δ⁺(X)) >= p(X). Finished batches (R = V) lie in no such S."""
    nodes = sorted(nodes)
    index = {v: i for i, v in enumerate(nodes)}
    sides: dict[frozenset, int] = {}
    for b, have in growth.queue:
        sides[frozenset(have)] = sides.get(frozenset(have), 0) + b.mult
    total = sum(sides.values())
    unbounded = sum(growth.g.values()) + total + 1
    source, size = len(nodes), len(nodes) + 1
    net: dict = {(index[x], index[y]): c for (x, y), c in growth.g.items() if c > 0}
    for side, m in sides.items():
        if len(side) == 1:                  # a root alone: its arc goes straight to it
            (v,) = side
            net[(source, index[v])] = net.get((source, index[v]), 0) + m
            continue
        net[(source, size)] = m
        for v in side:
            net[(size, index[v])] = unbounded
        size += 1
    flows = Network(size, net)
    return all(flows.flow(source, index[v]) >= total for v in nodes)


def resumed_packing(nodes, arcs: dict, k: int | dict, watched: list, stuck_after: int,
                    progress=None) -> tuple[list[Batch], int]:
    """Algorithm 5 from the last point of a stuck greedy run where condition (3) still holds: (batches, how many
    of them the greedy finished). The greedy run (with the same ``watched`` sets) is replayed up to j finished
    batches; j is bisected between 0 (condition (3) holds there by Theorem 10: the caller checked the invariant)
    and ``stuck_after`` + 1 (where it got stuck). A greedy step never raises the slack g(δ⁺(S)) - p(S) of any
    set (an edge leaving S lowers g(δ⁺(S)) by what it takes; a batch leaving S lowers both sides alike), so
    once the condition fails it stays failed and the bisection is sound. Algorithm 5 then finishes the packing
    one max-flow per edge, for the batches the greedy had not finished only. Each probe goes on from a copy of
    the last point known to hold, so the replays add up to about twice the greedy run, not a run per probe."""
    held = Growth.fresh(nodes, arcs, k)
    lo, hi = 0, stuck_after + 1
    while hi - lo > 1:
        mid = (lo + hi) // 2
        if progress:
            progress(f"tree packing: keeping greedy batches, bisecting ({lo}, {hi})", 0.1)
        probe = held.copy()
        _, stuck = _packing(nodes, arcs, k, False, None, watched, probe, stop_after=mid)
        if stuck is None and condition_holds(nodes, probe):      # a replay never sticks sooner; if it did: no
            lo, held = mid, probe
        else:
            hi = mid
    batches, _ = _packing(nodes, arcs, k, True, progress, (), held)
    return batches, lo


def exact_packing(nodes, arcs: dict, k: int | dict, progress=None) -> list[Batch]:
    """Algorithm 5 (module docstring), each batch grown in Prim's order with μ from eq. (5)."""
    batches, _ = _packing(nodes, arcs, k, True, progress)
    return batches


def _cyclic(nodes, arcs: dict, k, progress, greedy_first: bool) -> tuple[list[Batch] | None, str]:
    """On a cyclic D* (``cyclic``): one greedy run first where ``greedy_first`` (what the fabric got before the
    translation existed, kept where it packs), then root 0's trees translated to every root."""
    if greedy_first:
        batches, _ = _packing(nodes, arcs, k, False, progress)
        if batches is not None:
            return batches, "greedy"
    if isinstance(k, dict):
        return None, ""
    found = cyclic_packing(nodes, arcs, k)
    return (None, "") if found is None else ([Batch(r, m, edges) for r, m, edges in found], "cyclic")


def flat_packing(nodes, arcs: dict, counts: dict) -> list[Batch]:
    """``counts[v]`` trees rooted at each v by the "flat" method (greedy, then Algorithm 5): how the box
    packing packs its small parts (handed to ``boxes.box_packing``, which does not import this module)."""
    batches, _ = pack_trees(nodes, arcs, counts, "flat")
    return batches


def boxed_packing(nodes, arcs: dict, k: int, progress=None) -> list[Batch] | None:
    """``boxes.box_packing`` with its small parts packed by ``flat_packing``."""
    return box_packing(nodes, arcs, k, progress, flat_packing)


def pack_trees(nodes, arcs: dict, k: int | dict, method: str = "auto", progress=None,
               ready: Callable[[], bool] | None = None) -> tuple[list[Batch] | None, str]:
    """(batches, method used). ``method``: "auto" (boxes, then on a cyclic D* one greedy run and the
    translation of ``cyclic``, then greedy, then exact), "flat" (greedy, then exact), "boxes"
    (``boxes.box_packing``, an error where it does not apply), "cyclic" (``cyclic.cyclic_packing`` alone, an
    error where it does not apply), "greedy" or "exact" (module docstring). Where the greedy got stuck,
    Algorithm 5 takes over from the last point of its run that still meets condition (3) (``resumed_packing``;
    method "greedy+exact"). Algorithm 5 needs Theorem 10's condition: ``ready``, when given, is asked first,
    and (None, "") comes back where it says no (the caller then mends the graph). Whatever built them, the
    batches pass ``check_packing`` before they are returned."""
    if method not in ("auto", "flat", "boxes", "cyclic", "greedy", "exact"):
        raise ValueError(f"unknown packing method {method!r}")
    batches, used, stuck = None, "exact", None
    if method in ("auto", "boxes") and not isinstance(k, dict):
        batches, used = boxed_packing(nodes, arcs, k, progress), "boxes"
        if batches is None and method == "boxes":
            raise PackingError("the fabric has no boxes, or a box or the boxes' quotient could not be packed")
    if method == "cyclic" or (batches is None and method == "auto" and not isinstance(k, dict)
                              and cyclic_budgets(nodes, arcs) is not None):
        batches, used = _cyclic(nodes, arcs, k, progress, method == "auto")
        if batches is None and method == "cyclic":
            raise PackingError("the fabric is not cyclic, or root 0's trees could not be grown within the budgets")
    if batches is None and method in ("auto", "flat", "greedy"):
        batches, watched, finished = _greedy(nodes, arcs, k, progress)
        used, stuck = "greedy", (watched, finished)
        if batches is None and method == "greedy":
            raise PackingError("the greedy packing got stuck")
    if batches is None:
        if ready is not None and not ready():
            return None, ""
        if stuck is None:
            batches, used = exact_packing(nodes, arcs, k, progress), "exact"
        else:
            batches, _ = resumed_packing(nodes, arcs, k, *stuck, progress)
            used = "greedy+exact"
    check_packing(nodes, arcs, k, batches)
    return batches, used
