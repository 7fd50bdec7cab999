"""ForestColl: throughput-optimal allgather, reduce-scatter and allreduce on any fabric, switches, mixed
bandwidths and parallel links included (Zhao et al., arXiv:2402.06787; digest notes/forestcoll.md).

``forestcoll(topo)`` runs the whole pipeline (digest section 2.0) with exact integer arithmetic:

1. the optimum 1/x* = max_S |S ∩ V_c| / B⁺(S) and a cut that attains it (``search.optimal_ratio``), then
   k and U by Prop 3 -- or, with ``fixed_k``, the least U for which k trees per root fit in G({⌊U b_e⌋})
   (Algorithm 3);
2. switch removal by edge splitting (``splitting``), keeping min_v F(s, v; D⃗_k) >= N k;
3. k spanning out-trees per root in batches (``packing``);
4. the logical edges mapped back to physical paths and lowered into the schedule IR (``mapping``).

The allgather broadcasts root u's shard as k pieces of M/(N k), one per tree; the trees run concurrently as
pipelined flows, so the time is (M/(N k)) U = (M/N)/x* at the optimum and algbw = N k / U GB/s. Reduce-scatter
runs the same trees reversed (on the transpose where links are one-way); allreduce is reduce-scatter then
allgather (section 2.7).

At a finite size M (``allgather_for``, ``finite_choice``; the synthesizer is told M) the allgather is the runtime
model's fastest of several forests and lowerings (``finite``): the optimal forest as lowered here, the same
trees with balanced steps (``retime``), Algorithm 3's forests with fewer trees, and forests grown step by step
(``flood``). The optimum's 1/x*, k and U are reported as before. Module layering (no circle): ``batches`` <-
``mapping``, ``boxes`` <- ``packing``; ``search`` <- ``splitting``; ``retime``, ``flood`` <- ``finite``.
"""
from __future__ import annotations

import time
from dataclasses import dataclass, field
from fractions import Fraction
from typing import Callable

from topologies.model import Topology

from ..core.errors import NotApplicable
from ..core.schedule import Collective, Schedule, Transfer
from ..core.transform import compose_allreduce, reverse
from . import finite
from .mapping import Router, lower_allgather, physical_routes
from .packing import Batch, pack_trees
from .search import Fabric, check_eulerian, fabric, fixed_k_search, floored, optimal_ratio
from .splitting import Logical, meets_invariant, remove_switches

MAX_FIXED_K = 64
Progress = Callable[[str, float], None]


@dataclass
class Forest:
    """A ForestColl result. ``inv_x_star`` and ``u`` are in seconds per GB (x in GB/s); ``bottleneck`` is the
    node set S* of a cut attaining 1/x*; ``batches`` are over the topology's node indices."""

    topo: Topology
    fabric: Fabric
    inv_x_star: Fraction
    bottleneck: frozenset
    k: int
    u: Fraction
    fixed_k: bool
    batches: list[Batch]
    routes: list
    logical: Logical
    packing_method: str
    seconds: dict = field(default_factory=dict)

    @property
    def n(self) -> int:
        return self.topo.n

    @property
    def optimal_algbw(self) -> Fraction:
        """N x* (GB/s): the allgather algbw no schedule can beat (eq. (1))."""
        return self.n / self.inv_x_star

    @property
    def algbw(self) -> Fraction:
        """N k / U (GB/s): this forest's allgather algbw in the flow model."""
        return self.n * self.k / self.u

    @property
    def trees(self) -> int:
        return sum(b.mult for b in self.batches)

    def bottleneck_summary(self) -> dict:
        """The limiting cut: its compute nodes, switches, bandwidth out, and the ratio |S ∩ V_c| / B⁺(S)."""
        side = self.bottleneck
        names = self.topo.names
        out_bw = sum((l.bandwidth for l in self.topo.links if l.src in side and l.dst not in side), Fraction(0))
        return {"compute": [names[v] for v in self.topo.compute_nodes if v in side],
                "switches": [names[v] for v in self.topo.switch_nodes if v in side],
                "outside": [names[v] for v in self.topo.compute_nodes if v not in side],
                "egress_GBps": out_bw, "ratio": self.inv_x_star}

    def allgather(self) -> Schedule:
        """The allgather in the schedule IR, on the physical links (switch hops included); not yet verified."""
        sched = lower_allgather(self.batches, self.routes, self.k)
        sched.notes.update(self.notes())
        return sched

    def notes(self) -> dict:
        return {"k": self.k, "U": self.u, "inv_x_star": self.inv_x_star, "algbw_GBps": self.algbw,
                "optimal_algbw_GBps": self.optimal_algbw, "fixed_k": self.fixed_k, "trees": self.trees,
                "batches": len(self.batches)}

    def as_dict(self) -> dict:
        b = self.bottleneck_summary()
        return {"topology": self.topo.expr, "nodes": self.n, "k": self.k, "fixed_k": self.fixed_k,
                "U": str(self.u), "inv_x_star": str(self.inv_x_star),
                "algbw_GBps": float(self.algbw), "optimal_algbw_GBps": float(self.optimal_algbw),
                "algbw_exact": str(self.algbw), "trees": self.trees, "batches": len(self.batches),
                "bottleneck": {"compute": b["compute"], "switches": b["switches"], "outside": b["outside"],
                               "egress_GBps": float(b["egress_GBps"]), "ratio": str(b["ratio"])},
                "switch_removal": self.logical.method, "packing": self.packing_method,
                "logical_edges": len(self.logical.arcs),
                "seconds": {key: round(v, 4) for key, v in self.seconds.items()}}


def forestcoll(topo: Topology, fixed_k: int | None = None, *, progress: Progress | None = None,
               split_method: str = "auto", pack_method: str = "auto") -> Forest:
    """The ForestColl pipeline of the module docstring. NotApplicable (one line) for inputs it cannot take:
    fewer than two compute nodes, not strongly connected, switches on a fabric whose nodes do not have equal
    ingress and egress, a bad k."""
    if fixed_k is not None and (isinstance(fixed_k, bool) or not isinstance(fixed_k, int)
                                or not 1 <= fixed_k <= MAX_FIXED_K):
        raise NotApplicable(f"fixed k must be an integer from 1 to {MAX_FIXED_K}, got {fixed_k!r}")
    seconds: dict[str, float] = {}
    clock = time.perf_counter()

    def lap(name: str) -> None:
        nonlocal clock
        now = time.perf_counter()
        seconds[name] = now - clock
        clock = now

    fab = fabric(topo)
    has_switches = len(fab.compute) < fab.n
    if has_switches:
        try:
            check_eulerian(fab)
        except NotApplicable as exc:
            raise NotApplicable(f"{exc}; {cut_bound_line(topo, optimal_ratio(fab, progress), fab)}") from None
    opt = optimal_ratio(fab, progress)
    lap("optimality search")
    if fixed_k is None:
        k, u_int = opt.k, opt.u
        caps = {a: int(u_int * c) for a, c in fab.arcs.items()}
    else:
        k = fixed_k
        u_int, _ = fixed_k_search(fab, k, progress)
        caps = floored(fab, u_int)
        if has_switches:
            check_eulerian(fab, caps, f" once capacities are floored for k = {k}")
        lap("fixed-k search")
    # The greedy split is checked by the packing itself where one is found without Algorithm 5 (k trees per
    # root in D* carry N k units to every node: Theorem 5's invariant); only otherwise is it checked by flows.
    deferred = split_method == "auto" and pack_method in ("auto", "flat")
    logical = remove_switches(fab.n, fab.compute, caps, k, "unchecked" if deferred else split_method, progress)
    lap("switch removal")
    ready = (lambda arcs=logical.arcs: meets_invariant(fab.n, fab.compute, arcs, k)) if deferred else None
    batches, used = pack_trees(fab.compute, logical.arcs, k, pack_method, progress, ready)
    lap("tree packing")
    if batches is None:                          # the unchecked split broke the invariant: split with checks
        logical = remove_switches(fab.n, fab.compute, caps, k, "auto", progress)
        seconds["switch removal"] += time.perf_counter() - clock
        clock = time.perf_counter()
        batches, used = pack_trees(fab.compute, logical.arcs, k, pack_method, progress)
        seconds["tree packing"] += time.perf_counter() - clock
        clock = time.perf_counter()
    units = {i: u_int * l.bandwidth * fab.scale for i, l in enumerate(topo.links) if l.src != l.dst}
    routes = physical_routes(Router(topo, units, logical.via), batches)
    lap("map back")
    if progress:
        progress("done", 1.0)
    return Forest(topo, fab, opt.ratio * fab.scale, opt.cut, k, u_int * fab.scale, fixed_k is not None,
                  batches, routes, logical, used, seconds)


def cut_bound_line(topo: Topology, opt, fab) -> str:
    """The optimality bound ForestColl finds on any fabric, in one line: 1/x* (eq. (1), integer units times the
    fabric's scale), the allgather algbw N x* that no schedule beats, and the compute nodes of the cut S*
    (a fabric it cannot pack still gets its bound)."""
    inv = opt.ratio * fab.scale
    inside = [topo.names[v] for v in topo.compute_nodes if v in opt.cut]
    shown = ", ".join(inside[:6]) + (" ..." if len(inside) > 6 else "")
    return (f"the cut bound still holds: 1/x* = {inv}, so no allgather beats an algbw of "
            f"{float(topo.n / inv):.6g} GB/s (bottleneck cut around {shown})")


def _on_reverse_links(topo: Topology, schedule: Schedule) -> Schedule:
    """A schedule valid on topo^T, moved onto topo's paired reverse links (bidirectional topologies)."""
    pair = topo.reverse_link
    moved = [Transfer(t.shard, t.lo, t.hi, pair[t.link], t.step, t.reduce) for t in schedule.transfers]
    return Schedule(schedule.collective, moved, schedule.algo, dict(schedule.notes))


def _kept_forest(topo: Topology, fixed_k: int | None, progress: Progress | None) -> Forest:
    """``forestcoll(topo, fixed_k)``, kept in ``topo._meta``: the three collectives on one topology (Compare, the
    tests) pack it once."""
    key = ("forest", fixed_k)
    known = topo._meta.get(key)
    if known is None:
        known = topo._meta[key] = forestcoll(topo, fixed_k, progress=progress)
    return known


def finite_choice(topo: Topology, fixed_k: int | None, total_bytes: float, progress: Progress | None = None,
                  forest: Forest | None = None) -> "finite.Choice":
    """The runtime model's fastest candidate allgather for M = ``total_bytes`` (``finite``), kept in
    ``topo._meta`` per (k, M)."""
    key = ("forest finite", fixed_k, float(total_bytes))
    known = topo._meta.get(key)
    if known is None:
        forest = forest or _kept_forest(topo, fixed_k, progress)
        fewer = [] if fixed_k is not None else _fewer_trees(topo, forest, progress)
        known = topo._meta[key] = finite.choose(topo, forest, float(total_bytes), fewer=fewer)
    return known


def allgather_for(topo: Topology, fixed_k: int | None, total_bytes: float | None,
                  progress: Progress | None = None, forest: Forest | None = None) -> Schedule:
    """The allgather built for M = ``total_bytes``: the forest's depth lowering where M is not given or the
    fabric has more than ``finite.MAX_GPUS`` GPUs, else ``finite_choice``'s (a copy)."""
    if total_bytes is None or not finite.applies(topo):
        return (forest or _kept_forest(topo, fixed_k, progress)).allgather()
    sched = finite_choice(topo, fixed_k, total_bytes, progress, forest).schedule
    # a copy: callers add notes and may edit the transfers
    cols = sched.stored_columns()
    if cols is None:
        return Schedule(sched.collective, list(sched.transfers), sched.algo, dict(sched.notes))
    return Schedule(sched.collective, algo=sched.algo, notes=dict(sched.notes), cols=cols)


def _fewer_trees(topo: Topology, forest: Forest, progress: Progress | None) -> list[Forest]:
    """Algorithm 3's forests with ``finite.FEWER_KS`` trees per root, below the optimum's k (a fabric where
    flooring the capacities breaks what switch removal needs has none)."""
    out = []
    for k in finite.FEWER_KS:
        if k < forest.k:
            try:
                out.append(_kept_forest(topo, k, progress))
            except NotApplicable:
                pass
    return out


def collective_schedule(topo: Topology, collective: Collective, fixed_k: int | None = None, *,
                        progress: Progress | None = None, forest: Forest | None = None,
                        total_bytes: float | None = None) -> Schedule:
    """ForestColl's allgather, reduce-scatter (reversed trees) or allreduce (RS then AG) on ``topo``, not yet
    verified. On a bidirectional topology the reduce-scatter reverses the allgather's own trees onto the
    opposite links; otherwise it reverses a forest built on the transpose. With ``total_bytes`` each allgather
    is the one ``allgather_for`` keeps for that M (the reduce-scatter's chosen by the time of its allgather)."""
    if collective not in (Collective.ALLGATHER, Collective.REDUCE_SCATTER, Collective.ALLREDUCE):
        raise NotApplicable(f"ForestColl builds allgather, reduce-scatter and allreduce, not {collective.value}")
    forest = forest or _kept_forest(topo, fixed_k, progress)
    ag = allgather_for(topo, fixed_k, total_bytes, progress, forest)
    if collective is Collective.ALLGATHER:
        return ag
    if topo.is_bidirectional:
        rs = _on_reverse_links(topo, reverse(ag))
    else:
        rs = reverse(allgather_for(topo.transpose(), fixed_k, total_bytes, progress))
    rs.notes.update(ag.notes)
    if collective is Collective.REDUCE_SCATTER:
        return rs
    ar = compose_allreduce(rs, ag)
    ar.notes.update(ag.notes)
    return ar


__all__ = ["Forest", "forestcoll", "allgather_for", "finite_choice", "collective_schedule", "MAX_FIXED_K",
           "NotApplicable"]
