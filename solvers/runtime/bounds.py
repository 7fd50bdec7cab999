"""The tightest lower bound we can prove on the runtime model's time of any schedule, with the name of the bound
that sets it (issue 59). Compare's bound row and its curve read it.

Every term below holds for every schedule the verifier accepts, timed by the runtime model (``solvers.runtime``:
a message holds its link for alpha_l + bytes / bandwidth_l, one message at a time per link; switches relay and
never combine). The argument behind the bandwidth terms is one: if at least X bytes must cross a set C of links,
some link l of C carries bytes_l with bytes_l / bandwidth_l >= X / (the bandwidth of C), and it carries them in
at least one message, so the schedule lasts at least min_{l in C} alpha_l + X / bandwidth(C). The terms:

* latency: the largest alpha distance d(u, v) between two GPUs (data of u reaches v, or u's contribution does,
  through a chain of messages; ``latency.latency_us``: from or to the root for rooted collectives);
* ForestColl's cut bound (allgather; Zhao et al., arXiv:2402.06787, Sec. 3.1, eq. (1)): for a node set S that
  leaves out a GPU, the shards of the GPUs in S cross the links out of S, (M/N) |S ∩ V_c| bytes, so
  T >= alpha + (M/N) |S ∩ V_c| / B⁺(S); the largest ratio is 1/x*, found by ``solvers.forestcoll.search``, and
  (M/N)/x* is the time of ForestColl's own trees in the flow model: the optimum, reached as M grows;
* reduce-scatter: the same on the links into S (each GPU of S receives its reduced shard, which holds the
  contributions outside S): 1/x* of the transpose, equal to the allgather's where ingress = egress everywhere;
* allreduce: every byte of the result at a GPU outside S holds contributions from inside, so at least M bytes
  cross out of every S with GPUs on both sides: T >= alpha + M / lambda, lambda the smallest such cut (max-flow
  between two GPUs). ForestColl's RS + AG time 2 (M/N)/x* is NOT a bound for allreduce: it bounds only the
  schedules that run a reduce-scatter and then an allgather (App. E's LP optimises over more); the row says so
  beside it. Beside them the per-node phase bounds ((N-1)/N M over a GPU's ingress and over its egress) and the
  volume bound (2 (N-1) M over the GPUs' total ingress, and egress), all without self-loops;
* all-to-all: (N-1)/N^2 M over a GPU's ingress and egress; rooted collectives: the rooted T_B* of
  ``solvers.core.cost.tb_lower_bound`` with the least alpha of the fabric's links.

The bound is the largest term. It is not latency + bandwidth: a pipeline hides one under the other, and a
verified schedule beats that sum (``tests/test_compare_bound.py``: a chain whose last link is slow, 750020 us
against 750030; two GPUs exchanging their whole vectors, 90 against 100 us). In the papers' step model, where
every step lasts alpha plus its busiest link, D(G) alpha + T_B* M/B does hold: Compare shows it as the bound
row's ``step_model_us``.

Prices: the runtime model's (``Execution.link_prices``): with the alpha-beta model every bandwidth is scaled so
that the slowest GPU's egress is B, and the cut terms are divided by that scale. The cut terms are exact
(``fractions.Fraction`` in the fabric's units) and computed up to ``MAX_CUT_NODES`` nodes, kept in the
topology's ``_meta``, as are the terms of each collective and price list (they do not depend on M).

``bound_time_us`` is the one lower bound every page and command shows (Schedule, ``Workload.price``, the sweep,
Compare's bound row): ``tightest_bound(...).time_us``.
"""
from __future__ import annotations

from dataclasses import dataclass
from fractions import Fraction

import numpy as np

from topologies.model import Topology

from ..core.cost import node_bandwidth, tb_lower_bound
from ..core.errors import NotApplicable
from ..core.schedule import Collective
from .latency import latency_us
from .model import Execution

MAX_CUT_NODES = 2048          # ForestColl's search and the allreduce min cut: max-flows on the whole fabric
LATENCY = "latency bound (the farthest alpha distance)"

__all__ = ["Bound", "CutBound", "MAX_CUT_NODES", "Terms", "bound_terms", "bound_time_us", "cut_bound",
           "design_bound_us", "schedule_bound", "tightest_bound"]


@dataclass(frozen=True)
class CutBound:
    """A cut term, exact: the bandwidth part is ``per_byte`` x M seconds per GB (M in GB), i.e. per_byte =
    1/(N x*) for allgather and reduce-scatter, 1/lambda for allreduce, on the fabric's own bandwidths; ``side``
    the node set S whose links out of (allgather, allreduce) or into (reduce-scatter) it counts."""

    per_byte: Fraction
    side: frozenset
    inward: bool
    name: str
    rs_ag_per_byte: Fraction | None = None      # allreduce: ForestColl's RS + AG, 2/(N x*): not a bound


@dataclass(frozen=True)
class Bound:
    """The tightest bound: ``time_us``, the ``name`` of the term that sets it, ``tb`` its bandwidth part in
    units of M/B (B = the fabric's node bandwidth, as ``tb_lower_bound``), every term as (name, us) and a
    ``note`` (what is not a bound, what was not computed)."""

    time_us: float
    name: str
    tb: Fraction
    terms: tuple[tuple[str, float], ...]
    note: str = ""


def _fraction_text(x: Fraction) -> str:
    return str(x) if x.denominator < 10_000 else f"{float(x):.6g}"


def cut_bound(topo: Topology, collective: Collective | str) -> CutBound | None:
    """The cut term of the module docstring for allgather, reduce-scatter and allreduce; None for the other
    collectives, above ``MAX_CUT_NODES`` nodes, or where ForestColl's fabric does not apply (fewer than two
    GPUs, a GPU that cannot reach another). Kept in ``topo._meta``."""
    if not isinstance(collective, Collective):
        collective = Collective.parse(collective)
    if collective not in (Collective.ALLGATHER, Collective.REDUCE_SCATTER, Collective.ALLREDUCE):
        return None
    if topo.num_nodes > MAX_CUT_NODES:
        return None
    key = ("cut bound", collective.value)
    if key not in topo._meta:
        try:
            topo._meta[key] = (_allreduce_cut(topo) if collective is Collective.ALLREDUCE
                               else _forestcoll_cut(topo, collective is Collective.REDUCE_SCATTER))
        except NotApplicable:
            topo._meta[key] = None
    return topo._meta[key]


def _inverse_x_star(topo: Topology) -> tuple[Fraction, frozenset]:
    """1/x* (seconds per GB) and a cut S* attaining it, by ForestColl's search (Sec. 3.1, eq. (1))."""
    from ..forestcoll.search import fabric, optimal_ratio

    fab = fabric(topo)
    opt = optimal_ratio(fab)
    return opt.ratio * fab.scale, frozenset(opt.cut)


def _eulerian(topo: Topology) -> bool:
    inn, out = [Fraction(0)] * topo.num_nodes, [Fraction(0)] * topo.num_nodes
    for l in topo.links:
        if l.src != l.dst:
            out[l.src] += l.bandwidth
            inn[l.dst] += l.bandwidth
    return inn == out


def _forestcoll_cut(topo: Topology, reduce_scatter: bool) -> CutBound:
    n = topo.n
    if not reduce_scatter:
        inv, side = _inverse_x_star(topo)
        return CutBound(inv / n, side, False, f"ForestColl optimum (cut bound, 1/x* = {_fraction_text(inv)} s/GB: "
                                              "(M/N)/x*)")
    inv, side = _inverse_x_star(topo if _eulerian(topo) else topo.transpose())
    return CutBound(inv / n, side, True, f"ForestColl optimum, reversed (cut bound into S, 1/x* = "
                                         f"{_fraction_text(inv)} s/GB: (M/N)/x*)")


def _allreduce_cut(topo: Topology) -> CutBound:
    """lambda = the least max-flow between two GPUs, in either direction from the first (any S with GPUs on both
    sides separates it from some GPU one way or the other), with the source side of a minimum cut."""
    from ..core.maxflow import Network
    from ..forestcoll.search import fabric

    fab = fabric(topo)
    net = Network(fab.n, fab.arcs)
    first, others = fab.compute[0], fab.compute[1:]
    pairs = [(first, v) for v in others] + [(v, first) for v in others]
    s, t = min(pairs, key=lambda p: net.flow(*p))
    value, side = net.cut(s, t)
    lam = Fraction(value, fab.scale)
    allgather = cut_bound(topo, Collective.ALLGATHER)           # (M/N)/x*, kept: RS + AG is twice it
    return CutBound(1 / lam, frozenset(side), False,
                    f"allreduce cut bound (M/lambda, lambda = {_fraction_text(lam)} GB/s as declared: every byte "
                    "of M crosses the smallest cut between GPUs)",
                    None if allgather is None else 2 * allgather.per_byte)


def _cut_alpha(topo: Topology, alpha: np.ndarray, side: frozenset, inward: bool) -> float:
    """The least alpha of a link leaving ``side`` (entering it, ``inward``)."""
    best = np.inf
    for i, l in enumerate(topo.links):
        crosses = (l.src in side) != (l.dst in side) and (l.dst in side if inward else l.src in side)
        if crosses and l.bandwidth > 0:
            best = min(best, float(alpha[i]))
    return 0.0 if best == np.inf else best


def _node_terms(topo: Topology, coll: Collective, alpha: np.ndarray) -> list[tuple[str, float, Fraction]]:
    """(name, alpha, tb in units of M/B) of the per-GPU and volume terms, self-loops left out."""
    n, big_b = topo.n, node_bandwidth(topo)

    def sums(links_of, v) -> tuple[Fraction, float]:
        ls = [i for i in links_of[v] if topo.links[i].src != topo.links[i].dst and topo.links[i].bandwidth > 0]
        return (sum((topo.links[i].bandwidth for i in ls), Fraction(0)),
                min((float(alpha[i]) for i in ls), default=0.0))

    ins = [sums(topo.in_links, v) for v in topo.compute_nodes]
    outs = [sums(topo.out_links, v) for v in topo.compute_nodes]
    share = Fraction(n - 1, n)
    per_node = {Collective.ALLGATHER: [("ingress", share, ins)], Collective.REDUCE_SCATTER: [("egress", share, outs)],
                Collective.ALLTOALL: [("ingress", share / n, ins), ("egress", share / n, outs)],
                Collective.ALLREDUCE: [("ingress", share, ins), ("egress", share, outs)]}.get(coll, [])
    terms = []
    for label, need, sides in per_node:
        for bw, a in sides:
            if bw > 0:
                terms.append((f"per-GPU {label} bound (what one GPU must move, over its {label})", a,
                              need * big_b / bw))
    if coll is Collective.ALLREDUCE:
        for label, sides in (("ingress", ins), ("egress", outs)):
            total = sum((bw for bw, _ in sides), Fraction(0))
            if total > 0:
                terms.append((f"allreduce volume bound (2 (N-1) M over the GPUs' total {label})",
                              min(a for _, a in sides), 2 * (n - 1) * big_b / total))
    return terms


@dataclass(frozen=True)
class Terms:
    """Every term of one fabric, collective and price list as (name, alpha us, us per byte of M): a term's
    time is alpha + M x slope. ``tb``: the largest bandwidth part in units of M/B; ``rs_ag``: ForestColl's
    RS + AG us per byte (allreduce; not a bound); ``skipped``: why no cut term."""

    terms: tuple[tuple[str, float, float], ...]
    tb: Fraction
    rs_ag: float | None = None
    skipped: str = ""

    def at(self, total_bytes: float) -> Bound:
        """The bound for a vector of ``total_bytes``: the largest term, a tie to the one listed first."""
        times = tuple((name, a + slope * total_bytes) for name, a, slope in self.terms)
        best = max(t for _, t in times)
        name = next(n for n, t in times if t >= best * (1 - 1e-12))
        note = self.skipped
        if self.rs_ag is not None:
            note = (f"ForestColl's RS+AG optimum 2(M/N)/x* = {self.rs_ag * total_bytes:.6g} us (flow model, no "
                    "alpha) bounds only schedules that run a reduce-scatter then an allgather, not every allreduce")
        return Bound(best, name, self.tb, times, note)


def bound_terms(topo: Topology, collective: Collective | str, execution: Execution | None = None,
                root: int | None = None) -> Terms:
    """The module docstring's terms under ``execution``'s prices (``root``: a rooted collective's root), kept in
    ``topo._meta`` per collective, prices and root."""
    if not isinstance(collective, Collective):
        collective = Collective.parse(collective)
    ex = execution or Execution()
    if collective is Collective.CUSTOM:
        return Terms((("no bound without the demand", 0.0, 0.0),), Fraction(0))
    if isolated(topo):           # no schedule exists; every price below would divide by a zero bandwidth
        return Terms((("no bound: a GPU of this fabric cannot send or receive", 0.0, 0.0),), Fraction(0))
    key = ("bound terms", collective.value, ex.alpha_us, ex.bandwidth_gbs, root if collective.rooted else None)
    if key not in topo._meta:
        topo._meta[key] = _terms(topo, collective, ex, root)
    return topo._meta[key]


def isolated(topo: Topology) -> bool:
    """Whether some compute node has no ingress or no egress bandwidth (links to itself aside)."""
    for links in (topo.out_links, topo.in_links):
        for u in topo.compute_nodes:
            if not any(topo.links[i].bandwidth > 0 and topo.links[i].src != topo.links[i].dst for i in links[u]):
                return True
    return False


def schedule_bound(topo: Topology, schedule, total_bytes: float, execution: Execution | None = None) -> Bound:
    """``tightest_bound`` for a verified ``schedule``'s own collective and root; a schedule among a group of the
    GPUs (``Schedule.group``: shards of M/|group|, the other GPUs free to relay) gets none, because the terms
    above count every GPU and no relay (0, named so)."""
    group = getattr(schedule, "group", None)
    if group is not None and len(set(group)) < len(topo.compute_nodes):
        return Bound(0.0, "no bound for a schedule among a group of the GPUs (the others may relay)", Fraction(0),
                     ())
    return tightest_bound(topo, schedule.collective, total_bytes, execution, schedule.root)


def _terms(topo: Topology, collective: Collective, ex: Execution, root: int | None) -> Terms:
    big_b = node_bandwidth(topo)
    alpha, _ = ex.link_prices(topo)
    scale = 1.0 if ex.alpha_us is None else ex.bandwidth_gbs / float(big_b)
    per_tb = 1.0 / (float(big_b) * scale * 1e3)          # us per byte of M for one unit of M/B
    latency = latency_us(topo, collective, ex, root)
    terms: list[tuple[str, float, float]] = [(LATENCY, latency, 0.0)]
    tb, rs_ag, skipped = Fraction(0), None, ""
    if collective.rooted:
        tb = tb_lower_bound(topo, collective, root)
        least = min((float(alpha[i]) for i, l in enumerate(topo.links) if l.src != l.dst and l.bandwidth > 0),
                    default=0.0)
        terms.append(("rooted bandwidth bound (T_B* M/B)", least, float(tb) * per_tb))
        return Terms(tuple(terms), tb)
    cut = cut_bound(topo, collective)
    if cut is not None:
        terms.append((cut.name, _cut_alpha(topo, alpha, cut.side, cut.inward), float(cut.per_byte) / scale / 1e3))
        tb = cut.per_byte * big_b
        if cut.rs_ag_per_byte is not None:
            rs_ag = float(cut.rs_ag_per_byte) / scale / 1e3
    elif collective in (Collective.ALLGATHER, Collective.REDUCE_SCATTER, Collective.ALLREDUCE) \
            and topo.num_nodes > MAX_CUT_NODES:
        skipped = f"cut bound not computed above {MAX_CUT_NODES} nodes"
    for name, a, node_tb in _node_terms(topo, collective, alpha):
        terms.append((name, a, float(node_tb) * per_tb))
        tb = max(tb, node_tb)
    return Terms(tuple(terms), tb, rs_ag, skipped)


def tightest_bound(topo: Topology, collective: Collective | str, total_bytes: float,
                   execution: Execution | None = None, root: int | None = None) -> Bound:
    """The largest of the module docstring's terms for a vector of ``total_bytes`` under ``execution``'s prices
    (``root``: a rooted collective's root)."""
    return bound_terms(topo, collective, execution, root).at(total_bytes)


def bound_time_us(topo: Topology, collective: Collective | str, total_bytes: float,
                  execution: Execution | None = None, root: int | None = None) -> float:
    """The lower bound every page and command shows: ``tightest_bound(...).time_us`` (no schedule of
    ``collective`` that the verifier accepts takes less in the runtime model with ``execution``'s prices; 0 for a
    custom collective). Its name: ``tightest_bound(...).name``."""
    return tightest_bound(topo, collective, total_bytes, execution, root).time_us


def design_bound_us(diameter: int, n: int, collective: str, sizes, weights, alpha_us: float,
                    bandwidth_gbs: float) -> float:
    """A lower bound on the runtime model's time, summed over a size mix (``sizes`` with ``weights``), of any
    schedule on any design of ``n`` GPUs whose diameter is at least ``diameter`` (the Finder's Moore bound),
    whose links are alike and every GPU's egress equal, in uniform prices (alpha per send, a GPU's egress B).
    Per size the largest of: diameter x alpha (latency), and alpha + (N-1)/N M/B (allgather: a GPU's ingress;
    reduce-scatter: its egress), alpha + 2 (N-1)/N M/B (allreduce: the volume bound over the GPUs' total
    ingress, N B). Not their sum: a pipeline overlaps latency and bandwidth (module docstring)."""
    share = {"allreduce": 2.0, "allgather": 1.0, "reduce_scatter": 1.0}.get(collective)
    if share is None:
        raise ValueError(f"no design bound for {collective!r}: allreduce, allgather or reduce_scatter")
    total = 0.0
    for m, w in zip(sizes, weights):
        bandwidth = share * (n - 1) / n * m / (bandwidth_gbs * 1e3)
        total += w * max(diameter * alpha_us, alpha_us + bandwidth)
    return total
