"""TE-CCL at scale (issue 60): the MILP over the schedules a fabric's symmetries keep (solvers/teccl/orbits.py),
the lower bound on K from the MILP's LP relaxation (solvers/teccl/relaxation.py), and the LP relaxation that
proves a MIP start optimal without a branch and bound (search.start_proven). The bound must never exceed a K
that a MILP proven minimal reaches, the reduced relaxation must agree with the full one (the averaging argument),
every symmetric schedule is checked by the verifier, and on DGX2 x 4 allgather the result is within 10 % of the
bound (issue 60's acceptance)."""
from fractions import Fraction

import numpy as np
import pytest

from solvers.core.verify import verify
from solvers.teccl import epoch_lower_bound, make_demand, teccl
from solvers.teccl import lower as lowering
from solvers.teccl.astar import astar_flows
from solvers.teccl.greedy import greedy_flows
from solvers.teccl.instance import timing
from solvers.teccl.milp import build_milp, start_vector
from solvers.teccl.orbits import link_map, name_shifts, orbit_search, symmetry_group
from solvers.teccl.outcome import INFEASIBLE, OPTIMAL
from solvers.teccl.relaxation import relaxation_epoch_bound, relaxation_feasible
from solvers.teccl.search import start_proven
from solvers.teccl.solve import solve
from topologies import parse_topology
from topologies.model import COMPUTE, SWITCH, Link, Topology

GB = 10 ** 9


def mini_dgx2(chassis: int, gpus: int, fast: int = 4) -> Topology:
    """DGX2's wiring (topologies/teccl_fabrics.py: every GPU on its chassis's switch, odd GPU 2k+1 of each chassis
    to even GPU 2k of every other) with ``gpus`` GPUs per chassis, ``fast`` GB/s to the switch and 1 GB/s across:
    small enough for the full MILP to prove its minimal K, and one where the LP relaxation beats the cuts."""
    names, kinds, links = [], [], []
    for c in range(chassis):
        names += [f"c{c}.g{j}" for j in range(gpus)]
        kinds += [COMPUTE] * gpus
    for c in range(chassis):
        names.append(f"c{c}.nvs")
        kinds.append(SWITCH)
        w = chassis * gpus + c
        for j in range(gpus):
            links += [Link(c * gpus + j, w, Fraction(fast)), Link(w, c * gpus + j, Fraction(fast))]
    for a in range(chassis):
        for b in range(chassis):
            if a != b:
                links += [Link(a * gpus + 2 * k + 1, b * gpus + 2 * k, Fraction(1)) for k in range(gpus // 2)]
    return Topology(tuple(names), tuple(kinds), tuple(links))


def setting(topo, chunk_bytes=1000):
    demand = make_demand(topo, "allgather", 1)
    return demand, timing(topo, Fraction(chunk_bytes))


def forever():
    return 120.0


# ------------------------------------------------------------------------------------------------ the group
@pytest.mark.parametrize("expr, size, reps", [("dgx2(chassis=4)", 32, 2), ("dgx2(chassis=2)", 16, 2),
                                              ("ndv2(chassis=4)", 4, 8), ("ndv2(chassis=8)", 8, 8)])
def test_group_is_free_automorphisms_of_the_fabric(expr, size, reps):
    """Every element maps links onto links of the same bandwidth and alpha, moves every GPU (free), and the orbits
    of the sources have |G| members each: DGX2 x 4 has two sources to model (an odd and an even GPU)."""
    topo = parse_topology(expr)
    demand = make_demand(topo, "allgather", 1)
    group = symmetry_group(topo, demand)
    assert group.size == size and len(group.reps(topo.compute_nodes)) == reps
    for g, lm in zip(group.elements[1:], group.links[1:]):
        assert lm is not None and lm == link_map(topo, g)
        assert all(g[v] != v for v in topo.compute_nodes)
        for i, l in enumerate(topo.links):
            m = topo.links[lm[i]]
            assert (m.src, m.dst, m.bandwidth, m.alpha) == (g[l.src], g[l.dst], l.bandwidth, l.alpha)


def test_no_shift_that_breaks_a_link_is_kept():
    """DGX2's GPU index shifted by 1 would send odd GPUs' cross links to even ones: only the shift by 2 is kept;
    NDv2's cube mesh and its GPU 0 -> switch -> GPU 1 links admit no GPU shift, only the chassis rotation."""
    dgx2 = parse_topology("dgx2(chassis=2)")
    orders = sorted(order for _, order in name_shifts(dgx2))
    assert orders == [2, 8]
    assert [order for _, order in name_shifts(parse_topology("ndv2(chassis=4)"))] == [4]
    swap = list(range(len(dgx2.names)))
    swap[0], swap[1] = 1, 0
    assert link_map(dgx2, tuple(swap)) is None


# -------------------------------------------------------------------------------- the relaxation bound
@pytest.mark.parametrize("chassis, gpus, fast", [(2, 4, 4), (3, 4, 4), (2, 6, 10), (4, 2, 4)])
def test_relaxation_bound_is_valid_and_tighter_than_the_cuts(chassis, gpus, fast):
    """The full MILP (method milp) proves its minimal K; the relaxation bound never exceeds it, and on the
    DGX2-like fabrics with 4 or more GPUs per chassis it is one epoch above the cut bound and meets it. The
    symmetric relaxation decides every K the same way as the full one."""
    topo = mini_dgx2(chassis, gpus, fast)
    demand, t = setting(topo)
    cut = epoch_lower_bound(topo, demand, t, True)
    exact = teccl(topo, "allgather", chunk_bytes=1000, method="milp", time_limit=120)
    assert exact.minimal and verify(topo, exact.schedule).ok
    full = relaxation_epoch_bound(topo, demand, t, cut, cut + 6, forever, group=None)
    group = symmetry_group(topo, demand)
    assert group is not None and group.size == chassis * gpus // 2
    reduced = relaxation_epoch_bound(topo, demand, t, cut, cut + 6, forever, group=group)
    assert full == reduced <= exact.finish
    for k in range(cut, exact.finish + 1):
        assert relaxation_feasible(topo, demand, t, k, 60) == relaxation_feasible(topo, demand, t, k, 60, group)
    if gpus >= 4:
        assert cut < full == exact.finish


@pytest.mark.parametrize("expr, chunk_bytes", [("ring(4)", 1000), ("dgx1()", 25_000), ("ndv2(chassis=2)", GB // 16)])
def test_relaxation_bound_never_passes_a_proven_minimal_k(expr, chunk_bytes):
    topo = parse_topology(expr)
    demand, t = setting(topo, chunk_bytes)
    exact = teccl(topo, "allgather", chunk_bytes=chunk_bytes, method="milp", time_limit=120)
    assert exact.minimal
    cut = epoch_lower_bound(topo, demand, t, True)
    assert cut <= relaxation_epoch_bound(topo, demand, t, cut, exact.finish + 3, forever) <= exact.finish


# ------------------------------------------------------------------------------------- symmetric schedules
@pytest.mark.parametrize("chassis, gpus", [(2, 4), (3, 4)])
def test_symmetric_schedule_is_verified_and_meets_the_full_milp(chassis, gpus):
    """The representatives' MILP with the orbit capacities, expanded to every source, is a schedule the verifier
    accepts, invariant under the group, and (here) as fast as the full MILP's."""
    topo = mini_dgx2(chassis, gpus)
    demand, t = setting(topo)
    cut = epoch_lower_bound(topo, demand, t, True)
    k, flows, out, probes, order = orbit_search(topo, demand, t, cut, None, forever, 1e-4, 10 ** 6)
    group = symmetry_group(topo, demand)
    assert order == group.size and out.has_solution and probes[-1][0] == k
    assert set(flows) == set(group.expand(f for f in flows if f[0] in group.reps(topo.compute_nodes)))
    kept = lowering.prune(topo, demand, t.lag, flows)
    sched = lowering.lower(topo, demand, t.lag, kept, "teccl")
    assert verify(topo, sched).ok
    exact = teccl(topo, "allgather", chunk_bytes=1000, method="milp", time_limit=120)
    assert k == exact.finish == max(f[3] + t.lag[f[2]] for f, _ in kept)


def test_capacity_rows_count_every_source_on_a_link():
    """On a ring of 4, one chunk per GPU: the orbit of one source under the rotation loads every link once per
    epoch, so the representative's model at the minimal K = 3 is feasible and at K = 2 infeasible; a model
    that forgot the other sources' loads (capacity of its own flows only) would still be."""
    topo = parse_topology("ring(4)")
    demand, t = setting(topo)
    group = symmetry_group(topo, demand)
    assert group.size == 4
    reduced = group.reduced(demand)
    assert solve(build_milp(topo, reduced, t, 3, capacity=group.capacity_sources()).model, 30).status == OPTIMAL
    assert solve(build_milp(topo, reduced, t, 2, capacity=group.capacity_sources()).model, 30).status == INFEASIBLE


# -------------------------------------------------------------------------------- the acceptance instances
def test_dgx2_x4_allgather_within_10_percent_of_its_bound():
    """Issue 60: DGX2 x 4 allgather at 1 GB was 12 epochs (greedy) against a cut bound of 8. The relaxation
    proves K >= 9 (the full relaxation at 8 epochs is infeasible too; bench/teccl.py --scale measures it) and
    the symmetric MILP meets 9."""
    topo = parse_topology("dgx2(chassis=4)")
    demand, t = setting(topo, Fraction(GB, 64))
    r = teccl(topo, "allgather", buffer_bytes=GB)
    assert r.method == "symmetric" and verify(topo, r.schedule).ok
    assert epoch_lower_bound(topo, demand, t, True) == 8 < r.lower_bound
    assert r.bound_us == r.lower_bound * t.tau_us
    assert r.transfer_time_us <= Fraction(11, 10) * r.bound_us
    greedy = greedy_flows(topo, demand, t, 30)
    assert greedy[1] * t.tau_us >= r.bound_us                      # the greedy, against the same bound


def test_ndv2_x2_start_proven_by_the_relaxation():
    """The greedy start on NDv2 x 2 (K = 10) is optimal: the LP relaxation meets its objective, and HiGHS's own
    branch and bound finds the same optimum."""
    topo = parse_topology("ndv2(chassis=2)")
    demand, t = setting(topo, Fraction(GB, 16))
    fm = build_milp(topo, demand, t, 10)
    flows, finish = greedy_flows(topo, demand, t, 28)
    assert finish == 10
    fm.model.start = start_vector(fm, flows)
    proof = start_proven(fm.model, 60, 1e-4)
    assert proof is not None and proof.status == OPTIMAL
    full = solve(fm.model, 60)
    assert full.status == OPTIMAL and full.objective == pytest.approx(proof.objective, rel=1e-6)
    assert float(np.dot(fm.model.cost, fm.model.start)) == pytest.approx(proof.objective)
    r = teccl(topo, "allgather", buffer_bytes=GB)
    assert r.epochs == 10 and r.minimal and r.status == OPTIMAL and len(r.probes) == 1


def test_a_start_below_the_relaxation_is_not_proven():
    """The greedy schedule shifted two epochs late, in a model of 12 epochs, delivers later than the greedy itself
    would: the relaxation's optimum is above it, so start_proven does not call it optimal."""
    topo = parse_topology("ndv2(chassis=2)")
    demand, t = setting(topo, Fraction(GB, 16))
    flows, _ = greedy_flows(topo, demand, t, 28)
    late = [(s, c, i, k + 2) for s, c, i, k in flows]
    fm = build_milp(topo, demand, t, 12)
    fm.model.start = start_vector(fm, late)
    assert fm.model.start is not None
    assert start_proven(fm.model, 60, 1e-4) is None


def test_every_method_on_dgx2_x4_against_the_same_bound():
    """A* (rounds over the symmetric schedules, the released code's 15 epochs per round) and the greedy are
    reported against the bound auto proves (the relaxation's 9 epochs, not the cuts' 8); none of them beats it,
    and A* is within 10 % of it too (rounds of 4 epochs: 12 epochs, a third above)."""
    topo = parse_topology("dgx2(chassis=4)")
    auto = teccl(topo, "allgather", buffer_bytes=GB)
    astar = teccl(topo, "allgather", buffer_bytes=GB, method="astar")
    assert astar.bound_us == auto.bound_us == 9 * auto.timing.tau_us
    assert astar.transfer_time_us >= astar.bound_us and verify(topo, astar.schedule).ok
    assert any("symmetries" in n for n in astar.notes) and "rounds of 15 epochs" in astar.notes[0]
    assert astar.transfer_time_us <= Fraction(11, 10) * astar.bound_us
    short = teccl(topo, "allgather", buffer_bytes=GB, method="astar", round_epochs=4)
    assert short.bound_us == auto.bound_us <= short.transfer_time_us and verify(topo, short.schedule).ok
    demand, t = setting(topo, Fraction(GB, 64))
    assert greedy_flows(topo, demand, t, 30)[1] >= 9


def test_astar_rounds_with_the_symmetry_stay_invariant():
    """On DGX2 x 2 the A* rounds over the representatives give a schedule the group maps onto itself."""
    topo = parse_topology("dgx2(chassis=2)")
    demand, t = setting(topo, Fraction(GB, 32))
    group = symmetry_group(topo, demand)
    flows, rounds, _, _ = astar_flows(topo, demand, t, 4, False, 120, 1e-4, None, group)
    assert rounds and set(flows) == set(group.expand([f for f in flows if f[0] in group.reps(topo.compute_nodes)]))
    kept = lowering.prune(topo, demand, t.lag, flows)
    assert verify(topo, lowering.lower(topo, demand, t.lag, kept, "teccl")).ok
