"""TE-CCL: collectives as a time-expanded multi-commodity flow (Liu et al., SIGCOMM 2024; digest
notes/te-ccl.md), solved with HiGHS.

``teccl(topo, collective, ...)`` cuts time into epochs and data into chunks (``instance``), solves

* the MILP with copy (``milp``, section 3) for demands that copy helps (allgather, any demand that sends one chunk
  to several nodes), or
* the LP (``lp``, section 4.1) for demands copy cannot help (all-to-all, a demand matrix), optimal for them,

with the smallest number of epochs K that admits a schedule when K is not given (probes at increasing K from a
lower bound, then a bisection; a probe stops at the first feasible point), then optimises early delivery at that K
under the time limit and gap. The lower bound comes from cuts (``bounds``: a node's ingress, a source's egress,
a chassis behind slow cross links), so K - 1 needs no solve to be ruled out when the bound is met; a greedy
schedule in the same epochs (``greedy``) bounds the search from above and starts HiGHS, which then often only
has to prove it optimal: when the LP relaxation already meets the start's objective, no branch and bound runs
(``search.start_proven``; the MILP's entry cuts make that bound tight). Both go to HiGHS through highspy as
arrays (``linear``). At the paper's largest fabrics (section 6.3, Table 4) ``method="auto"`` coarsens the LP's
epochs (the epoch multiplier) and hands a MILP too large to build to the greedy, the MILP over the schedules
the fabric's symmetries keep (``orbits``) and the LP relaxation's bound on K (``relaxation``) (``teccl``'s
docstring). It keeps only the flows that serve a demand (reverse DFS), lowers them to the schedule IR and
verifies the result. Reduce-scatter is the reverse of an allgather on the transposed topology and
allreduce is reduce-scatter then allgather (``collective_schedule``).

Transfer time = the epoch at whose start the last demand is met, times τ; algbw = output buffer / transfer time
(the paper's metrics, section 6).
"""
from __future__ import annotations

import math
import time
from fractions import Fraction
from typing import Callable

from topologies.model import Topology
from topologies.properties import is_strongly_connected

from ..core.errors import NotApplicable
from ..core.schedule import Collective
from ..core.verify import check
from . import lower as lowering
from .bounds import cut_epoch_bound, fluid_epoch_bound
from .instance import (ALPHA_THRESHOLD, Demand, Timing, allgather_demand, alltoall_demand, lag_distances,
                       matrix_demand, read_demand_matrix, timing)
from .lp import build_lp, decompose, finish_epoch, fluid_values, lower_paths, lp_size
from .greedy import greedy_flows
from .milp import MAX_BINARIES, build_milp, chosen_flows, milp_size, start_vector
from .alternatives import astar_result, greedy_only
from .outcome import FEASIBLE, INFEASIBLE, TIMEOUT
from .relaxation import relaxation_epoch_bound
from .result import Composed, Probe, TecclResult
from .search import optimise, search
from .solve import solve
from .switches import SWITCH_MODELS, HyperEdges, buffer_limit, switch_notes

__all__ = ["teccl", "collective_schedule", "TecclResult", "read_demand_matrix", "DEFAULT_TIME_LIMIT_S"]

DEFAULT_TIME_LIMIT_S = 60.0
DEFAULT_BUFFER_BYTES = 1_000_000
MAX_LP_VARIABLES = 400_000
MAX_AUTO_MULTIPLIER = 64
AUTO_MILP_BINARIES = 50_000         # auto's MILP limit: above it HiGHS overran a 60 s limit by minutes (NDv2 x 4)
RELAXATION_SECONDS = 60.0           # A*'s LP relaxation bound (relaxation.py) gets this long on top of its rounds
AUTO_LP_VARIABLES = 100_000          # what auto_multiplier aims the LP at: HiGHS's IPM solves it in ~30 s on 2 cores
Progress = Callable[[str, float], None]


def make_demand(topo: Topology, collective, chunks: int = 1, matrix=None) -> Demand:
    """The demand of ``collective`` (allgather, alltoall or custom with ``matrix``)."""
    coll = collective if isinstance(collective, Collective) else Collective.parse(str(collective))
    if matrix is not None:
        return matrix_demand(topo, matrix)
    if coll is Collective.ALLGATHER:
        return allgather_demand(topo, chunks)
    if coll is Collective.ALLTOALL:
        return alltoall_demand(topo, chunks)
    if coll is Collective.CUSTOM:
        raise NotApplicable("a custom collective needs a demand matrix")
    raise NotApplicable(f"TE-CCL solves allgather, alltoall and custom demands directly; {coll.value} is composed "
                        "by collective_schedule")


def epoch_lower_bound(topo: Topology, demand: Demand, t: Timing, whole_chunks: bool, cuts: bool = True) -> int:
    """No schedule finishes before the farthest demand's lag distance, nor before every destination's ingress
    links (at most ⌈K / κ_e⌉ windows of capacity each) could carry what it wants; with ``cuts``, nor before the
    chunks wanted in a node, a source's complement or a box could have crossed into it in time: as whole chunks
    (the MILP, ``bounds.cut_epoch_bound``) or split (the LP, ``bounds.fluid_epoch_bound``: the boxes and their
    complements)."""
    dist = lag_distances(topo, t.lag)
    far = max(dist[s, d] for s, _, d in demand.wants)
    if not math.isfinite(far):
        raise NotApplicable("some destination cannot be reached from its source")
    need: dict[int, int] = {}
    for _, _, d in demand.wants:
        need[d] = need.get(d, 0) + 1
    k = int(far)
    for d, n in need.items():
        ins = [(t.kappa[i], math.floor(t.window_cap[i]) if whole_chunks else t.window_cap[i])
               for i, l in enumerate(topo.links) if l.dst == d and l.src != d]
        while sum(-(-k // kap) * cap for kap, cap in ins) < n:
            k += 1
    k = max(k, 1)
    if not cuts:
        return k
    return cut_epoch_bound(topo, demand, t, k) if whole_chunks else fluid_epoch_bound(topo, demand, t, k)


def teccl(topo: Topology, collective="allgather", *, chunks: int = 1, chunk_bytes=None,
          buffer_bytes=DEFAULT_BUFFER_BYTES, epoch="slowest", multiplier: int | None = None,
          epochs: int | None = None, method: str = "auto", switch_copy: bool = False,
          time_limit: float = DEFAULT_TIME_LIMIT_S, gap: float = 1e-4, alpha_threshold=ALPHA_THRESHOLD,
          matrix=None, round_epochs: int | None = None, progress: Progress | None = None,
          demand: Demand | None = None, switch_buffer=0, switch_model: str = "node") -> TecclResult:
    """Solve one TE-CCL instance (module docstring). ``chunk_bytes`` defaults to the output ``buffer_bytes`` of
    one GPU over the chunks it ends with (the paper's chunk = buffer / #GPUs for one chunk per GPU).
    ``method="astar"`` solves rounds of ``round_epochs`` epochs (default twice the longest link lag, at least 4)
    one after another (``astar``).

    ``method="auto"``: the LP for copy-free demands; for demands copy helps, the MILP while it has at most
    ``AUTO_MILP_BINARIES`` flow binaries at the lower bound on K, and beyond that the greedy schedule in epochs
    (``greedy``, switches included), then, above the lower bound, the bound raised by the LP relaxation
    (``relaxation``) and the MILP restricted to the schedules the fabric's symmetries keep (``orbits``, method
    ``symmetric``) at fewer epochs, with the gap to the bound reported (on NDv2 x 8 allgather the MILP would have
    941,048 binaries and A* rounds took minutes each; on NDv2 x 4, 117k binaries, HiGHS ran minutes past a 60 s
    limit without a schedule, where the symmetric MILP, a quarter of it, meets the cut bound of 27 epochs; on
    DGX2 x 4 the greedy needs 12 epochs, the relaxation proves 9 and the symmetric MILP, 1/32 of it, meets 9).
    ``method="milp"`` builds the MILP up to ``MAX_BINARIES``.

    ``multiplier``: the epoch multiplier m (the paper's EM, section 6 and Table 4: coarser epochs to shrink the
    model on large fabrics), τ = m x the policy's epoch, so every link carries m times the chunks per epoch and
    K shrinks about m-fold; a hop still costs at least a whole (longer) epoch, which is what a schedule loses.
    None (the default) is 1, except for the LP when its model at the lower bound would have more than
    ``MAX_LP_VARIABLES`` flow variables: then the smallest power of two at which it has no more (``auto_multiplier``).

    ``method="lp"`` on a demand copy helps (allgather) is the no-copy variant of Fig. 9: each destination's copy
    a commodity of its own. ``switch_buffer`` (chunks, "none", "unlimited") and ``switch_model`` ("node" or
    "hyperedge") choose the MILP's switch (``switches``: Appendices B and C).

    ``demand``: a ``Demand`` made elsewhere (the rooted collectives and tenants of ``rooted``), used instead of
    ``collective``, ``chunks`` and ``matrix``.

    Every result carries ``bound_us``: the lower bound on K at multiplier 1 (``epoch_lower_bound`` with the cuts
    for whole chunks, ``bounds.fluid_epoch_bound`` for the LP; for auto's symmetric or greedy result and for A*
    raised by the LP relaxation, ``relaxation``) times that epoch, and its gap to it."""
    if topo.n < 2:
        raise NotApplicable("TE-CCL needs at least two compute nodes")
    if not is_strongly_connected(topo):
        raise NotApplicable("TE-CCL needs every compute node to reach every other one")
    if not (isinstance(time_limit, (int, float)) and 0 < time_limit <= 24 * 3600):
        raise NotApplicable(f"the time limit must be between 0 and 86400 s, got {time_limit!r}")
    if not (isinstance(gap, (int, float)) and 0 <= gap < 1):
        raise NotApplicable(f"the gap must be in [0, 1), got {gap!r}")
    if method not in ("auto", "milp", "lp", "astar"):
        raise NotApplicable(f"unknown TE-CCL method {method!r} (auto, milp, lp or astar)")
    demand = demand if demand is not None else make_demand(topo, collective, chunks, matrix)
    switch_buffer, hyper = buffer_limit(switch_buffer), None
    if switch_model not in SWITCH_MODELS:
        raise NotApplicable(f"unknown switch model {switch_model!r} (node or hyperedge)")
    special = bool(topo.switch_nodes) and (switch_buffer != 0 or switch_model != "node")
    auto = method == "auto"
    if auto:
        method = "milp" if demand.copy or special else "lp"
    if special and method in ("lp", "astar"):
        raise NotApplicable(f"switch buffers and hyper-edges are modelled in the MILP, not the {method.upper()} "
                            "(the LP's switches never copy, TE-CCL App. C)")
    if switch_model == "hyperedge" and (switch_copy or switch_buffer != 0):
        raise NotApplicable("hyper-edge switches neither copy nor buffer (TE-CCL App. C)")
    if chunk_bytes is None:
        # allgather: N C chunks end up at each GPU; all-to-all and matrices: the shard's own chunk count
        ends_with = demand.chunks * topo.n if demand.collective is Collective.ALLGATHER else demand.chunks
        chunk_bytes = Fraction(buffer_bytes) / ends_with
    threshold = Fraction(alpha_threshold)
    fine = timing(topo, chunk_bytes, epoch, 1, threshold)
    if multiplier is not None:
        timing(topo, chunk_bytes, epoch, multiplier, threshold)      # refuses a bad multiplier first
    whole = method != "lp"
    start = time.perf_counter()
    bound_k = epoch_lower_bound(topo, demand, fine, whole)
    bound_us = bound_k * fine.tau_us
    if method == "astar":
        t = timing(topo, chunk_bytes, epoch, multiplier or 1, threshold)
        found = astar_result(topo, demand, t, round_epochs, switch_copy, time_limit, gap, progress)
        found.bound_us, found.multiplier = bound_us, multiplier or 1
        if (multiplier or 1) == 1 and found.finish > bound_k:        # the same bound as auto's (relaxation)
            ends = time.perf_counter() + RELAXATION_SECONDS
            tighter = relaxation_epoch_bound(topo, demand, fine, bound_k, found.finish,
                                             lambda: max(0.0, ends - time.perf_counter()), switch_copy)
            found.bound_us = tighter * fine.tau_us
        return found
    if multiplier is None:
        multiplier = 1 if whole else auto_multiplier(topo, demand, chunk_bytes, epoch, threshold)
    t = fine if multiplier == 1 else timing(topo, chunk_bytes, epoch, multiplier, threshold)
    if switch_model == "hyperedge" and topo.switch_nodes:
        hyper = HyperEdges.of(topo, t)
    mt, mtm = (hyper.topo, hyper.timing) if hyper else (topo, t)     # the graph and timing the MILP sees
    if epochs is not None and (isinstance(epochs, bool) or not isinstance(epochs, int) or epochs < 1):
        raise NotApplicable(f"the number of epochs must be a positive integer, got {epochs!r}")
    deadline = start + time_limit

    def size(k: int) -> int:
        return milp_size(mt, demand, mtm, k) if whole else lp_size(topo, demand, t, k)

    def fits(k: int) -> None:
        limit = MAX_BINARIES if whole else MAX_LP_VARIABLES
        n = size(k)
        if n > limit:
            raise NotApplicable(f"the TE-CCL {method.upper()} at {k} epochs would have {n:,} flow variables "
                                f"(more than {limit:,}); use fewer chunks, slowest-link epochs or a multiplier")

    def build(k: int):
        fits(k)
        if not whole:
            return build_lp(topo, demand, t, k)
        fm = build_milp(mt, demand, mtm, k, switch_copy, switch_buffer=switch_buffer)
        if hyper:
            hyper.add_rows(fm)
        return fm

    if multiplier == 1:
        lower_bound = bound_k
    else:
        lower_bound = epoch_lower_bound(topo, demand, t, whole, cuts=False)
        fits(lower_bound)                        # a model too large is refused before the cuts
        lower_bound = epoch_lower_bound(topo, demand, t, whole)
    if whole and auto and not special and size(lower_bound) > AUTO_MILP_BINARIES:
        return greedy_only(topo, demand, t, lower_bound, epochs, start, bound_us, multiplier, progress,
                           AUTO_MILP_BINARIES, MAX_BINARIES, lambda: max(0.0, start + time_limit - time.perf_counter()),
                           gap, switch_copy)
    fits(lower_bound)
    greedy = greedy_flows(topo, demand, t, max(epochs or 0, 2 * lower_bound + 8)) if whole and not hyper else None
    upper = greedy[1] if greedy else None        # a schedule is known to fit in this many epochs

    def left() -> float:
        return max(0.0, deadline - time.perf_counter())

    def tell(text: str, frac: float) -> None:
        if progress:
            progress(text, min(0.99, frac))

    probes: list[Probe] = []
    notes: list[str] = []
    if epochs is not None:
        if epochs < lower_bound:
            raise NotApplicable(f"no schedule fits in {epochs} epochs: at least {lower_bound} are needed "
                                "(the farthest demand's lag or the capacity into a node or a box)")
        tell(f"solving at K = {epochs}", 0.1)
        fm = build(epochs)
        if greedy and upper <= epochs:
            fm.model.start = start_vector(fm, greedy[0])
        rest = left()          # read once: a second reading may find the limit spent
        if rest <= 0:
            raise NotApplicable(f"the {time_limit:g} s time limit ran out while the model was built")
        out = solve(fm.model, rest, gap)
        probes.append(Probe(epochs, out.status, out.seconds))
        if out.status == INFEASIBLE:
            raise NotApplicable(f"no schedule fits in {epochs} epochs (proven infeasible); allow more epochs")
        if not out.has_solution:
            raise NotApplicable(f"the solver found no schedule in {time_limit:g} s at {epochs} epochs; raise the "
                                "time limit or the number of epochs")
        best = (epochs, fm, out)
        minimal = False
    else:
        hi, lo, found, unknown = search(build, left, tell, probes, whole, gap, lower_bound, upper)
        if found is None:
            raise NotApplicable(f"no schedule found within the {time_limit:g} s limit (last K tried "
                                f"{probes[-1].epochs if probes else lower_bound}); raise the time limit")
        minimal = hi - lo == 1 and not unknown and all(p.status != TIMEOUT for p in probes if p.epochs < hi)
        if hi - lo > 1 or unknown:
            notes.append(f"K = {hi} is the smallest feasible number of epochs found, not proven minimal")
        elif hi == lower_bound:
            notes.append(f"K = {hi} is minimal: K - 1 is below the lower bound from cuts (no solve needed)")
        best = found
        if whole:   # the probe stopped at its first point (or the greedy gave one): now optimise early delivery
            best = optimise(build, left, tell, probes, gap, hi, found, greedy)
    k, fm, out = best
    tell("extracting the schedule", 0.9)
    if whole:
        kept = lowering.prune(mt, demand, mtm.lag, chosen_flows(fm), buffered=switch_buffer != 0)
        finish = max(f[3] + mtm.lag[f[2]] for f, _ in kept)
        sched = hyper.lower(demand, kept) if hyper else lowering.lower(topo, demand, t.lag, kept, "teccl")
    else:
        flows, stock, reads = fluid_values(fm)
        finish = finish_epoch(reads)
        paths = decompose(topo, demand, t.lag, flows, stock, reads)
        sched = lower_paths(topo, demand, t.lag, paths, "teccl")
        finish = max(finish, max((tr.step for tr in sched.transfers), default=0))
    status = out.status
    notes.extend(switch_notes(topo, method, demand.copy, switch_copy, switch_buffer, switch_model))
    if status == FEASIBLE and out.gap is not None:
        notes.append(f"stopped at the time limit {out.gap:.1%} from the proven bound on the delivery objective")
    sched.notes.update({"epoch_us": t.tau_us, "epochs": k, "finish_epochs": finish})
    check(topo, sched)
    if progress:
        progress("done", 1.0)
    if multiplier != 1:
        notes.append(f"epochs {multiplier} x the {epoch if isinstance(epoch, str) else 'given'} epoch "
                     f"(multiplier {multiplier}): K and its lower bound count these epochs")
    return TecclResult(topo, demand, t, method, k, finish, status, out.gap, minimal, probes,
                       time.perf_counter() - start, out.variables, out.constraints, sched, notes, lower_bound,
                       multiplier, bound_us)


def auto_multiplier(topo: Topology, demand: Demand, chunk_bytes, epoch, threshold: Fraction) -> int:
    """The epoch multiplier the LP takes when none is given: 1 while its model at the lower bound on K has at most
    ``AUTO_LP_VARIABLES`` flow variables, else the smallest power of two (up to ``MAX_AUTO_MULTIPLIER``) at which
    it has no more (the paper's EM, section 6 / Table 4, 1-4 on its largest fabrics). The LP needs no whole
    chunks, so coarser epochs cost it only the lag of each hop rounded up to a longer epoch: NDv2 x 4 all-to-all
    at 1 GB takes m = 8, 25 epochs (200 of the finer ones, where its lower bound is 193), solved in about 30 s
    on 2 cores, where m = 4 took 134 s and m = 1 (799k variables) is refused."""
    m = 1
    while True:
        t = timing(topo, chunk_bytes, epoch, m, threshold)
        if lp_size(topo, demand, t, epoch_lower_bound(topo, demand, t, False)) <= AUTO_LP_VARIABLES \
                or m >= MAX_AUTO_MULTIPLIER:
            return m
        m *= 2


def collective_schedule(topo: Topology, collective, progress: Progress | None = None, **options):
    """Any collective: allgather, alltoall and custom directly (a TecclResult); reduce-scatter as the reverse of
    the allgather on the transposed topology and allreduce as reduce-scatter then allgather (a Composed, whose
    transfer time is the sum of its parts'). ``options`` go to ``teccl``; the time limit applies to each part."""
    from ..core.transform import compose_allreduce, reverse

    coll = collective if isinstance(collective, Collective) else Collective.parse(str(collective))
    if coll not in (Collective.REDUCE_SCATTER, Collective.ALLREDUCE):
        return teccl(topo, coll, progress=progress, **options)

    def part(name: str, g: Topology) -> TecclResult:
        hear = (lambda text, f: progress(f"{name}: {text}", f)) if progress else None
        return teccl(g, Collective.ALLGATHER, progress=hear, **options)

    rs_part = part("reduce-scatter", topo.transpose())
    rs = reverse(rs_part.schedule)
    if coll is Collective.REDUCE_SCATTER:
        check(topo, rs)
        return Composed(rs, [rs_part])
    ag_part = part("allgather", topo)
    ar = compose_allreduce(rs, ag_part.schedule)
    ar.algo = "teccl"
    check(topo, ar)
    return Composed(ar, [rs_part, ag_part])
