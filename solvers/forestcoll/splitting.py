"""Switch removal by edge splitting: ForestColl Algorithms 2 and 4 (digest section 2.3, Theorems 6-8).

Input: integer capacities ``arcs`` on all nodes (scaled so that one unit carries one tree) and k trees per root,
with the invariant of Theorem 5,

    min over compute v of F(s, v; D⃗_k) >= N k    (s -> every compute node with capacity k),

equivalently B⁺(S) >= k |S ∩ V_c| for every S ⊉ V_c. Splitting γ units of (u, w) and (w, t) into (u, t) only
lowers the cuts that hold u and t but not w, so it keeps the invariant up to the γ of Theorem 8, computed from
2N max-flows (``gamma``). Output: the compute-only logical graph D* with the same invariant, and the record
``via[(u, t)] = [(w, amount), ...]`` of every split, which maps logical edges back to physical paths.

Two ways to the same guarantee:

* ``exact``: Algorithm 4 as written, γ for every (ingress, egress) pair of every switch;
* ``greedy`` (the default first try): split each switch at once by a transportation flow that spreads every
  ingress arc over the egress arcs of the farthest other nodes first (distance avoiding the switch, an arc of
  capacity c counting 1/c: across boxes before within a box, as the paper's Fig. 13 order does), over the
  target groups (boxes) in proportion first and then evenly within each, and never into a self-loop unless
  nothing else is left; then check the invariant once on the result (N max-flows). The check is exactly the
  condition the tree packing needs (Theorems 5 and 10), so a result that passes is as good as Algorithm 4's.
  If it fails, the removal falls back to ``exact`` (``method="auto"``).
"""
from __future__ import annotations

from collections import defaultdict
from dataclasses import dataclass, field
from itertools import chain

import numpy as np

from ..core.maxflow import Network
from .search import first_shortfall, with_source

BAND = 2 / 3


@dataclass
class Logical:
    """The result of switch removal: compute-only ``arcs`` (D*), the split record ``via``, the capacity lost
    to self-loops, and the method that produced it."""

    arcs: dict
    via: dict = field(default_factory=dict)
    discarded: int = 0
    method: str = "none"


def meets_invariant(n: int, compute, arcs: dict, k: int) -> bool:
    """min over compute v of F(s, v; D⃗_k) >= N k (Theorem 5's condition)."""
    return first_shortfall(n, compute, arcs, 1, k, list(compute)) is None


class _Splitter:
    def __init__(self, n: int, compute, arcs: dict, k: int):
        self.n, self.compute, self.k = n, tuple(compute), k
        self.set_arcs({a: c for a, c in arcs.items() if c > 0 and a[0] != a[1]})
        self.via: dict = defaultdict(list)
        self.discarded = 0

    def set_arcs(self, arcs: dict) -> None:
        """Take ``arcs`` as the current graph, with the neighbour index that ``ins``/``outs`` read."""
        self.arcs = arcs
        self.succ: dict[int, set] = defaultdict(set)
        self.pred: dict[int, set] = defaultdict(set)
        for u, v in arcs:
            self.succ[u].add(v)
            self.pred[v].add(u)

    def ins(self, w: int) -> dict[int, int]:
        return {u: self.arcs[(u, w)] for u in self.pred[w]}

    def outs(self, w: int) -> dict[int, int]:
        return {t: self.arcs[(w, t)] for t in self.succ[w]}

    def split(self, u: int, w: int, t: int, amount: int) -> None:
        if amount <= 0:
            return
        for a in ((u, w), (w, t)):
            self.arcs[a] -= amount
            assert self.arcs[a] >= 0
            if self.arcs[a] == 0:
                del self.arcs[a]
                self.succ[a[0]].discard(a[1])
                self.pred[a[1]].discard(a[0])
        if u == t:
            self.discarded += amount
        else:
            self.arcs[(u, t)] = self.arcs.get((u, t), 0) + amount
            self.succ[u].add(t)
            self.pred[t].add(u)
            self.via[(u, t)].append((w, amount))

    def distances(self, w: int, sources: list[int]) -> np.ndarray:
        """Distances from ``sources`` avoiding w, an arc of capacity c counting 1/c (inf where unreachable): two
        hops over wide NVLink inside a box stay far shorter than one narrow hop to another box."""
        ends = np.fromiter(chain.from_iterable(self.arcs), dtype=np.int64, count=2 * len(self.arcs)).reshape(-1, 2)
        keep = (ends[:, 0] != w) & (ends[:, 1] != w)
        if not keep.any():
            return np.full((len(sources), self.n), np.inf)
        from scipy.sparse import csr_matrix
        from scipy.sparse.csgraph import shortest_path

        caps = np.fromiter(self.arcs.values(), dtype=np.float64, count=len(self.arcs))
        m = csr_matrix((1.0 / caps[keep], (ends[keep, 0], ends[keep, 1])), shape=(self.n, self.n))
        return shortest_path(m, directed=True, indices=sources)

    def pair_order(self, w: int, ins: dict, outs: dict) -> list[tuple[float, list[tuple[int, int]]]]:
        """The (u, t) pairs of switch w in bands, farthest first by the distance from u to t avoiding w
        (``distances``), self-loop pairs last, each band with its largest distance (0 for the self-loops).
        Distances within a factor BAND of a band's largest share it (1.2 and 1.0 are one band; 0.2, inside a box
        over wide links, is not 1.2, across boxes), so a band spreads evenly over comparable pairs rather than
        pouring everything into the single farthest one."""
        us = sorted(ins)
        dist = self.distances(w, us)
        tiers: dict[float, list[tuple[int, int]]] = defaultdict(list)
        loops = []
        for i, u in enumerate(us):
            for t in sorted(outs):
                if t == u:
                    loops.append((u, t))
                else:
                    tiers[float(dist[i, t])].append((u, t))
        bands: list[tuple[float, list[tuple[int, int]]]] = []
        for d in sorted(tiers, reverse=True):
            if not bands or d < BAND * bands[-1][0]:
                bands.append((d, []))
            bands[-1][1].extend(tiers[d])
        return bands + ([(0.0, loops)] if loops else [])

    def target_groups(self, w: int, targets: list[int], far: float) -> dict[int, int]:
        """Group label of each target: targets closer to each other (avoiding w) than BAND * ``far`` share one,
        transitively. Behind a spine switch these are the boxes, whatever the builder called them."""
        dist = self.distances(w, targets)[:, targets]
        close = (dist < BAND * far) | (dist.T < BAND * far)
        from scipy.sparse import csr_matrix
        from scipy.sparse.csgraph import connected_components

        _, label = connected_components(csr_matrix(close), directed=False)
        return {t: int(g) for t, g in zip(targets, label)}

    # ------------------------------------------------------------------------------------------------ greedy
    def greedy_switch(self, w: int) -> None:
        ins, outs = self.ins(w), self.outs(w)
        assert sum(ins.values()) == sum(outs.values()), "switch removal needs ingress = egress"
        if len(set(ins) | set(outs)) <= 2:
            self._relay(w, ins, outs)
            return
        for far, band in self.pair_order(w, ins, outs):
            if not any(ins.values()):
                break
            if far > 0:
                self._spread_over_groups(w, band, far, ins, outs)
            self._transport(w, band, ins, outs, even=True)
            self._transport(w, band, ins, outs, even=False)
        assert not any(ins.values()) and not any(outs.values()), "a switch kept capacity after splitting"

    def _relay(self, w: int, ins: dict, outs: dict) -> None:
        """A switch with at most two neighbours (a NIC between its GPU and the network): every split is
        forced, as much as possible to the other neighbour, the rest into self-loops (what the bands below
        give, without their distances and flows)."""
        for same in (False, True):
            for u in sorted(ins):
                for t in sorted(outs):
                    if (t == u) == same:
                        amount = min(ins[u], outs[t])
                        ins[u] -= amount
                        outs[t] -= amount
                        self.split(u, w, t, amount)
        assert not any(ins.values()) and not any(outs.values()), "a relay kept capacity after splitting"

    def _spread_over_groups(self, w: int, pairs, far: float, ins: dict, outs: dict) -> None:
        """Split every ingress arc over the target groups of the band in proportion to what each group can take
        (a max-flow with those shares as capacities), then within each group as ``_transport`` does. A GPU
        behind an IB switch then reaches every other box by its own links, so a tree rooted there can enter
        each box straight from its root (what the greedy packing needs on a tight box cut)."""
        pairs = [(u, t) for u, t in pairs if ins[u] > 0 and outs[t] > 0]
        if not pairs:
            return
        group = self.target_groups(w, sorted({t for _, t in pairs}), far)
        if len(set(group.values())) < 2:
            return
        reach: dict[int, dict[int, int]] = defaultdict(lambda: defaultdict(int))
        for u, t in pairs:
            reach[u][group[t]] += outs[t]
        room: dict[int, int] = defaultdict(int)
        for t, g in group.items():
            room[g] += outs[t]
        us, gs = sorted(reach), sorted(room)
        iu = {u: 1 + i for i, u in enumerate(us)}
        ig = {g: 1 + len(us) + i for i, g in enumerate(gs)}
        sink = 1 + len(us) + len(gs)
        arcs = {(0, iu[u]): ins[u] for u in us}
        arcs.update({(ig[g], sink): room[g] for g in gs})
        for u in us:
            total = sum(reach[u].values())
            for g, r in reach[u].items():
                arcs[(iu[u], ig[g])] = -(-ins[u] * r // total)
        flows = Network(sink + 1, arcs).arc_flows(0, sink)
        by_group: dict[int, list[tuple[int, int]]] = defaultdict(list)
        for u, t in pairs:
            by_group[group[t]].append((u, t))
        node_u = {i: u for u, i in iu.items()}
        node_g = {i: g for g, i in ig.items()}
        shares: dict[int, dict[int, int]] = defaultdict(dict)
        for (a, b), amount in flows.items():
            if a in node_u and b in node_g and amount:
                shares[node_g[b]][node_u[a]] = amount
        for g in gs:
            supply = shares[g]
            inner = [(u, t) for u, t in by_group[g] if u in supply]
            before = dict(supply)
            self._transport(w, inner, supply, outs, even=True)
            self._transport(w, inner, supply, outs, even=False)
            for u, a in before.items():
                ins[u] -= a - supply[u]

    def _transport(self, w: int, pairs, ins: dict, outs: dict, even: bool) -> None:
        """Split as much as a max-flow can route from the ingress to the egress arcs over ``pairs``; with
        ``even`` each pair gets at most its proportional share ceil(a_u b_t / Σ b_t') over the t' paired with u."""
        pairs = [(u, t) for u, t in pairs if ins[u] > 0 and outs[t] > 0]
        if not pairs:
            return
        us = sorted({u for u, _ in pairs})
        ts = sorted({t for _, t in pairs})
        iu = {u: 1 + i for i, u in enumerate(us)}
        it = {t: 1 + len(us) + i for i, t in enumerate(ts)}
        sink = 1 + len(us) + len(ts)
        arcs = {(0, iu[u]): ins[u] for u in us}
        arcs.update({(it[t], sink): outs[t] for t in ts})
        big = max(sum(ins[u] for u in us), sum(outs[t] for t in ts))
        reach: dict[int, int] = defaultdict(int)         # the egress u can spread over within these pairs
        for u, t in pairs:
            reach[u] += outs[t]
        for u, t in pairs:
            arcs[(iu[u], it[t])] = -(-ins[u] * outs[t] // reach[u]) if even else big
        flows = Network(sink + 1, arcs).arc_flows(0, sink)
        for u, t in pairs:
            amount = flows.get((iu[u], it[t]), 0)
            if amount:
                ins[u] -= amount
                outs[t] -= amount
                self.split(u, w, t, amount)

    # ------------------------------------------------------------------------------------------------- exact
    def gamma(self, u: int, w: int, t: int) -> int:
        """Theorem 8: the largest amount of (u, w), (w, t) that can be split into (u, t) keeping the invariant:
        min(c(u, w), c(w, t), min_v F(u, w; D̂_(u,w),v) - N k, min_v F(w, t; D̂_(w,t),v) - N k), each D̂ being
        D⃗_k with three unbounded arcs."""
        nk = len(self.compute) * self.k
        best = min(self.arcs.get((u, w), 0), self.arcs.get((w, t), 0))
        if best <= 0:
            return 0
        s = self.n
        base = with_source(self.n, self.compute, self.arcs, 1, self.k)
        inf = sum(base.values()) + nk + 1

        def surplus(unbounded, source: int, sink: int) -> int:
            arcs = dict(base)
            arcs.update((e, inf) for e in unbounded)
            return Network(self.n + 1, arcs).flow(source, sink) - nk

        for v in self.compute:
            if v not in (u, t):            # v = u or t joins u to w unboundedly: no limit from this network
                best = min(best, surplus(((u, s), (u, t), (v, w)), u, w))
            if best > 0:
                best = min(best, surplus(((w, s), (u, t), (v, t)), w, t))
            if best <= 0:
                return 0
        return best

    def exact_switch(self, w: int) -> None:
        """Algorithm 4 on one switch: for every egress arc, split with ingress arcs (in tier order) by γ."""
        ins, outs = self.ins(w), self.outs(w)
        order = [p for _, band in self.pair_order(w, ins, outs) for p in band]
        for t in sorted(outs):
            for u, t2 in order:
                if t2 != t:
                    continue
                if self.arcs.get((w, t), 0) == 0:
                    break
                if self.arcs.get((u, w), 0) == 0:
                    continue
                self.split(u, w, t, self.gamma(u, w, t))
            assert self.arcs.get((w, t), 0) == 0, "Theorem 7: some split must clear every egress arc"
        assert not self.ins(w), "an Eulerian switch has no ingress left once its egress is gone"


def switch_order(n: int, compute, arcs: dict) -> list[int]:
    """Switches by increasing number of neighbours, then by index: relays such as NICs (two neighbours, so every
    split is forced: GPU <-> network) first, the box and spine switches after, once their neighbours are GPUs."""
    comp = set(compute)
    nbrs: dict[int, set] = defaultdict(set)
    for u, v in arcs:
        nbrs[u].add(v)
        nbrs[v].add(u)
    switches = [v for v in range(n) if v not in comp]
    return sorted(switches, key=lambda v: (len(nbrs[v]), v))


def remove_switches(n: int, compute, arcs: dict, k: int, method: str = "auto", progress=None) -> Logical:
    """D* and the split record (module docstring). ``method``:

    * "greedy": every switch split greedily, the invariant checked once at the end (AssertionError if broken);
    * "exact": Algorithm 4 on every switch;
    * "auto": greedy with one check at the end; if that fails, again switch by switch with a check after each
      (N max-flows) and Algorithm 4 for any switch whose greedy split breaks the invariant;
    * "unchecked": greedy with no check; the caller must establish the invariant (a packing of k trees per
      root in the result proves it: k trees from every root carry N k units to every node).
    """
    if method not in ("auto", "greedy", "exact", "unchecked"):
        raise ValueError(f"unknown switch-removal method {method!r}")
    order = switch_order(n, compute, arcs)
    if not order:
        return Logical(dict(arcs), {}, 0, "none")

    def tell(text: str, i: int) -> None:
        if progress:
            progress(text, i / len(order))

    if method in ("auto", "greedy", "unchecked"):
        sp = _Splitter(n, compute, arcs, k)
        for i, w in enumerate(order):
            tell("switch removal", i)
            sp.greedy_switch(w)
        if method == "unchecked" or meets_invariant(n, compute, sp.arcs, k):
            return Logical(sp.arcs, dict(sp.via), sp.discarded, "greedy")
        if method == "greedy":
            raise AssertionError("the greedy splitting broke the invariant of Theorem 5")
    sp = _Splitter(n, compute, arcs, k)
    exact = 0
    for i, w in enumerate(order):
        tell("switch removal (checked)", i)
        if method == "auto":
            saved = (dict(sp.arcs), {a: list(x) for a, x in sp.via.items()}, sp.discarded)
            sp.greedy_switch(w)
            if meets_invariant(n, compute, sp.arcs, k):
                continue
            sp.set_arcs(saved[0])
            sp.discarded = saved[2]
            sp.via = defaultdict(list, saved[1])
        sp.exact_switch(w)
        exact += 1
    assert meets_invariant(n, compute, sp.arcs, k), "Algorithm 4 broke the invariant of Theorem 5"
    return Logical(sp.arcs, dict(sp.via), sp.discarded,
                   "exact" if exact == len(order) else f"greedy, Algorithm 4 on {exact} of {len(order)} switches")
