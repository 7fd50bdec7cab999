"""Blink+Switch: the single-root tree baseline of ForestColl's evaluation (ForestColl section 5.2, digest
notes/forestcoll.md section 6).

What the paper says it is. Blink (Wang et al., MLSys 2020) packs spanning trees that are all rooted at one
node, and its packing has no switches. ForestColl's authors "implemented an optimal single-root spanning tree
packing according to Blink's paper" and "augmented Blink with our switch removal technique to create
Blink+Switch, which applies Blink's tree packing to ForestColl's switch-free logical topology". Blink's
allreduce is single-root reduce then broadcast; Blink does allgather "as allreduce without reduction", so the
paper measures Blink+Switch for allreduce only. The paper gives Blink+Switch measured algbws (Table 2) and no
formula of its own.

What this module builds, in those terms:

1. ForestColl's switch-free logical topology D* (``forestcoll``: capacities in units of 1/U GB/s, and the split
   record that maps every logical unit back onto a physical path);
2. for a root r, the most out-trees D* holds: K = min over v of F(r, v; D*) (Edmonds' branching theorem; a
   fractional packing cannot do better, so this is the optimal single-root packing), packed by ForestColl's
   Algorithm 5 with K trees wanted at r and none elsewhere (``packing.pack_trees``); the root is the one with
   the largest K unless one is given (ties: the lowest index; above ``ROOT_SCAN_MAX`` GPUs the first GPU);
3. the trees mapped back to physical paths as ForestColl's are (``mapping.Router``).

Tree i carries the i-th of K equal pieces of every shard, so the broadcast moves M at rate R = K / U GB/s:
every link carries at most U b_e trees of M/K bytes each. The reduce runs the same trees reversed onto the
opposite links (the fabric must pair every link with an equal reverse link), at the same rate. The schedules:

* allreduce: reduce every shard to r up the reversed trees, then broadcast it from r down the trees. In the
  flow model (ForestColl section 3.2) each phase takes M / R, so algbw = R / 2 (``allreduce_algbw``), the
  figure beside ForestColl's RS+AG at N x* / 2;
* allgather: Blink's allreduce without reduction, less the zeros: each shard goes up the reversed trees to r
  (an edge into parent p from child c carries the shards of c's subtree), then down (the edge p -> c carries
  every shard outside c's subtree, which is what c's subtree lacks);
* reduce-scatter: that allgather reversed onto the opposite links (direct-connect paper Theorem 1, as
  ForestColl's own reduce-scatter).

Steps: a hop of a tree edge in the broadcast leaves one step after its tail holds the batch (as ForestColl's
lowering, ``mapping``); the upward phase is the broadcast's step order reversed, so a node sends up only
after everything below it has arrived.
"""
from __future__ import annotations

from dataclasses import dataclass
from fractions import Fraction
from math import lcm

import numpy as np

from topologies.model import Topology

from ..core.errors import NotApplicable
from ..core.maxflow import Network
from ..core.schedule import Collective, Columns, Schedule, concat, narrowest
from . import Forest, Progress, _kept_forest
from .mapping import Router, listed_routes
from .packing import Batch, pack_trees


@dataclass
class BlinkTrees:
    """A Blink+Switch packing: ``trees`` (K) out-trees of ``root`` in ForestColl's logical topology, as
    ``batches`` of identical trees whose edges ``routes`` map onto physical paths. ``rate`` = K / U GB/s is the
    single-root broadcast (or reduce) rate; ``rates`` holds K / U for every root tried (``root_rates``)."""

    topo: Topology
    forest: Forest
    root: int
    trees: int
    batches: list[Batch]
    routes: list
    rates: dict

    @property
    def rate(self) -> Fraction:
        """R = K / U (GB/s): the broadcast moves M bytes in M / R."""
        return self.trees / self.forest.u

    @property
    def allreduce_algbw(self) -> Fraction:
        """R / 2 (GB/s): reduce then broadcast, each phase moving M at rate R (flow model)."""
        return self.rate / 2

    @property
    def forestcoll_allreduce_algbw(self) -> Fraction:
        """ForestColl's RS+AG on the same fabric, N x* / 2 = N k / (2 U) (GB/s), for comparison."""
        return self.forest.algbw / 2

    def notes(self) -> dict:
        return {"root": self.root, "trees": self.trees, "U": self.forest.u, "rate_GBps": self.rate,
                "allreduce_algbw_GBps": self.allreduce_algbw, "batches": len(self.batches)}


ROOT_SCAN_MAX = 64     # GPUs up to which every root is tried (N (N - 1) max-flows on D*)


def root_rates(topo: Topology, forest: Forest, roots=None) -> dict[int, int]:
    """K_r = min over v of F(r, v; D*) for every compute node r in ``roots`` (default: all of them up to
    ``ROOT_SCAN_MAX`` GPUs, else the first): how many unit trees D* holds at root r."""
    net = Network(topo.num_nodes, forest.logical.arcs)
    compute = list(forest.fabric.compute)
    if roots is None:
        roots = compute if len(compute) <= ROOT_SCAN_MAX else compute[:1]
    return {r: min(net.flow(r, v) for v in compute if v != r) for r in roots}


def check_fabric(topo: Topology) -> None:
    """NotApplicable (one line) where Blink+Switch does not apply: no switches (Blink's own setting, not the
    switch-augmented baseline) or a link without an equal opposite link (the reduce runs the trees backwards)."""
    if not topo.switch_nodes:
        raise NotApplicable("blink_switch is Blink's single-root packing on ForestColl's switch-free logical "
                            "topology of a switched fabric; this one has no switches (try forestcoll)")
    if not topo.is_bidirectional:
        raise NotApplicable("blink_switch reduces up its broadcast trees on the opposite links, so every link "
                            "needs a reverse link of equal bandwidth; this fabric has a one-way link")


def blink_trees(topo: Topology, root: int | None = None, *, progress: Progress | None = None) -> BlinkTrees:
    """The packing of the module docstring (steps 1-3). ``root``: a compute node's index, or None for the one
    with the most trees."""
    check_fabric(topo)
    forest = _kept_forest(topo, None, progress)
    if root is not None and root not in forest.fabric.compute:
        raise NotApplicable(f"the Blink+Switch root must be a GPU of the fabric (0 to {topo.num_nodes - 1}, a "
                            f"compute node), not {root}")
    rates = root_rates(topo, forest, None if root is None else [root])
    if root is None:
        root = max(sorted(rates), key=lambda r: rates[r])
    trees = rates[root]
    if trees <= 0:
        raise NotApplicable(f"root {topo.names[root]} reaches no other GPU in the logical topology")
    if progress:
        progress("blink_switch: single-root packing", 0.5)
    batches, _ = pack_trees(forest.fabric.compute, forest.logical.arcs, {root: trees}, "flat", progress)
    units = {i: forest.u * l.bandwidth for i, l in enumerate(topo.links) if l.src != l.dst}
    routes = listed_routes(Router(topo, units, forest.logical.via), batches)
    return BlinkTrees(topo, forest, root, trees, batches, routes, {r: Fraction(k) / forest.u
                                                                  for r, k in rates.items()})


# --------------------------------------------------------------------------------------------- lowering

def _hops(packing: BlinkTrees):
    """Every hop of the broadcast: rows (batch, edge, first piece, end piece, link, step), pieces as exact
    numbers of the K pieces of a shard; a hop leaves one step after its tail holds the batch."""
    rows = []
    first = 0
    for bi, (b, b_routes) in enumerate(zip(packing.batches, packing.routes)):
        ready = {b.root: 0}
        for ei, ((x, y), pieces) in enumerate(zip(b.edges, b_routes)):
            t0, lo, arrive = ready[x], Fraction(first), ready[x]
            for units, path in pieces:
                hi = lo + units
                for hop, link in enumerate(path, start=1):
                    rows.append((bi, ei, lo, hi, link, t0 + hop))
                arrive = max(arrive, t0 + len(path))
                lo = hi
            ready[y] = arrive
        first += b.mult
    return rows


def _below(packing: BlinkTrees, pos: dict) -> list[np.ndarray]:
    """For every batch, a boolean matrix: row e marks the compute nodes in the subtree of edge e's head."""
    out = []
    n = len(pos)
    for b in packing.batches:
        children: dict[int, list[int]] = {}
        for e, (x, _) in enumerate(b.edges):
            children.setdefault(x, []).append(e)
        sub = np.zeros((len(b.edges), n), dtype=bool)
        for e in range(len(b.edges) - 1, -1, -1):             # a child's edges come after its parent's
            y = b.edges[e][1]
            sub[e, pos[y]] = True
            for c in children.get(y, ()):
                sub[e] |= sub[c]
        out.append(sub)
    return out


def _phase(packing: BlinkTrees, rows, select: str, up: bool, reduce: bool, shift: int) -> Columns:
    """The hops of ``rows`` for the shards ``select`` names per edge ("all", "below": the head's subtree,
    "above": the rest), going down the trees (as the rows are) or ``up`` (reversed in time, on the opposite
    links), steps moved by ``shift``."""
    topo = packing.topo
    compute = list(topo.compute_nodes)
    pos = {v: i for i, v in enumerate(compute)}
    n = len(compute)
    last = max(r[5] for r in rows)
    one = packing.trees * lcm(*(Fraction(x).denominator for r in rows for x in r[2:4]))
    batch = np.array([r[0] for r in rows], dtype=np.int64)
    edge = np.array([r[1] for r in rows], dtype=np.int64)
    lo = np.array([int(r[2] * one / packing.trees) for r in rows], dtype=np.int64)
    hi = np.array([int(r[3] * one / packing.trees) for r in rows], dtype=np.int64)
    link = np.array([r[4] for r in rows], dtype=np.int64)
    step = np.array([r[5] for r in rows], dtype=np.int64)
    if select == "all":
        mask = np.ones((len(rows), n), dtype=bool)
    else:
        below = _below(packing, pos)
        mask = np.stack([below[b][e] for b, e in zip(batch.tolist(), edge.tolist())]) if rows else \
            np.zeros((0, n), dtype=bool)
        if select == "above":
            mask = ~mask
    row, col = np.nonzero(mask)
    if up:
        pair = np.asarray(topo.reverse_link, dtype=np.int64)
        link, step = pair[link], last + 1 - step
    step = step + shift
    shard = np.asarray(compute, dtype=np.int64)[col]

    def narrow(a: np.ndarray) -> np.ndarray:
        return a.astype(narrowest(int(a.max(initial=0))))

    return Columns(narrow(step[row]), narrow(link[row]), narrow(shard), lo[row], hi[row],
                   np.full(len(row), reduce), one)


MAX_TRANSFERS = 16_000_000        # the verifier's simulation limit (core.verify.SIMULATE_MAX_TRANSFERS)


def lower(packing: BlinkTrees, collective: Collective) -> Schedule:
    """The Blink+Switch schedule of ``collective`` (module docstring), not yet verified. Every hop of a tree
    carries a piece of every shard (allreduce) or of about half of them (allgather, reduce-scatter), so the
    schedule has about N times as many transfers as the trees have hops; NotApplicable beyond MAX_TRANSFERS."""
    rows = _hops(packing)
    size = 2 * len(rows) * packing.topo.n if collective is Collective.ALLREDUCE else len(rows) * packing.topo.n
    if size > MAX_TRANSFERS:
        raise NotApplicable(f"the Blink+Switch {collective.value} would have about {size:,} transfers (every tree hop "
                            f"carries every shard), more than the {MAX_TRANSFERS:,} the verifier simulates")
    depth = max(r[5] for r in rows)
    notes = packing.notes()
    if collective is Collective.ALLREDUCE:
        cols = concat([_phase(packing, rows, "all", True, True, 0), _phase(packing, rows, "all", False, False, depth)])
        return Schedule(Collective.ALLREDUCE, algo="blink_switch", notes={**notes, "rs_steps": depth}, cols=cols)
    if collective not in (Collective.ALLGATHER, Collective.REDUCE_SCATTER):
        raise NotApplicable(f"blink_switch builds allgather, reduce-scatter and allreduce, not {collective.value}")
    gather = concat([_phase(packing, rows, "below", True, False, 0),
                     _phase(packing, rows, "above", False, False, depth)])
    if collective is Collective.ALLGATHER:
        return Schedule(Collective.ALLGATHER, algo="blink_switch", notes=notes, cols=gather)
    pair = np.asarray(packing.topo.reverse_link, dtype=np.int64)
    total = 2 * depth
    step = (total + 1 - gather.step.astype(np.int64))
    cols = Columns(step.astype(narrowest(total)), pair[gather.link.astype(np.int64)].astype(gather.link.dtype),
                   gather.shard, gather.lo, gather.hi, np.ones(len(step), dtype=bool), gather.one)
    return Schedule(Collective.REDUCE_SCATTER, algo="blink_switch", notes=notes, cols=cols)


def blink_schedule(topo: Topology, collective: Collective, root: int | None = None, *,
                   progress: Progress | None = None) -> tuple[Schedule, BlinkTrees]:
    """(the schedule, the packing) of Blink+Switch for ``collective`` on ``topo``; the packing is kept in
    ``topo._meta`` per root, so the three collectives pack once."""
    if collective not in (Collective.ALLGATHER, Collective.REDUCE_SCATTER, Collective.ALLREDUCE):
        raise NotApplicable(f"blink_switch builds allgather, reduce-scatter and allreduce, not {collective.value}")
    key = ("blink_switch", root)
    packing = topo._meta.get(key)
    if packing is None:
        packing = topo._meta[key] = blink_trees(topo, root, progress=progress)
    return lower(packing, collective), packing


__all__ = ["MAX_TRANSFERS", "ROOT_SCAN_MAX", "BlinkTrees", "blink_trees", "blink_schedule", "root_rates",
           "check_fabric", "lower"]
