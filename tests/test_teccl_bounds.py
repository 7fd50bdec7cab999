"""TE-CCL's epoch search helpers (issue 24): the cut lower bound on K (solvers/teccl/bounds.py), the entry cuts
of the MILP, the greedy schedule that starts HiGHS (solvers/teccl/greedy.py) and the highspy model
(solvers/teccl/linear.py). The bound must never exceed a K that has a schedule, the cuts must never cut one off,
and the greedy start must be a point of the model; where the bound is tight, the MILP at K - 1 is infeasible."""
from fractions import Fraction

import numpy as np
import pytest

from solvers.core.verify import verify
from solvers.teccl import epoch_lower_bound, make_demand, teccl
from solvers.teccl import lower as lowering
from solvers.teccl.bounds import b_matching, cut_epoch_bound
from solvers.teccl.greedy import greedy_flows
from solvers.teccl.instance import boxes, timing
from solvers.teccl.linear import Linear, solve_linear
from solvers.teccl.milp import build_milp, start_vector
from solvers.teccl.solve import INFEASIBLE, OPTIMAL, solve
from topologies import parse_topology
from topologies.model import COMPUTE, Link, Topology

KB25 = 25_000
GB = 10 ** 9


def two_boxes(size: int = 3) -> Topology:
    """Two complete boxes of ``size`` GPUs (2 GB/s inside) joined by one 1 GB/s link each way (0 -> size,
    size -> 0): the smallest fabric with boxes, so that the MILP without entry cuts still solves in a moment."""
    links = []
    for base in (0, size):
        links += [Link(base + a, base + b, Fraction(2)) for a in range(size) for b in range(size) if a != b]
    links += [Link(0, size, Fraction(1)), Link(size, 0, Fraction(1))]
    names = tuple(f"g{i}" for i in range(2 * size))
    return Topology(names, (COMPUTE,) * (2 * size), tuple(links))


def instance(topo, chunks=1, chunk_bytes=KB25, collective="allgather"):
    demand = make_demand(topo, collective, chunks)
    return demand, timing(topo, Fraction(chunk_bytes))


def rows_hold(lm: Linear, x: np.ndarray) -> bool:
    """Whether ``x`` satisfies every row and bound of ``lm`` (to 1e-9)."""
    x = np.asarray(x, dtype=float)
    if np.any(x < np.asarray(lm.lower) - 1e-9) or np.any(x > np.asarray(lm.upper) + 1e-9):
        return False
    for r in range(lm.nconstraints()):
        a, b = lm.starts[r], lm.starts[r + 1]
        v = sum(c * x[j] for j, c in zip(lm.index[a:b], lm.coef[a:b]))
        if v < lm.row_lo[r] - 1e-9 or v > lm.row_hi[r] + 1e-9:
            return False
    return True


# ---------------------------------------------------------------------------------------------- the bound
def test_b_matching_is_maximum_and_prefers_earlier_items():
    # item 0 can take slot 0 or 1, item 1 only slot 0: augmenting moves item 0 to slot 1
    assert b_matching([[0, 1], [0]], [1, 1]) == [1, 0]
    # one slot of capacity 1, two items: the earlier one keeps it
    assert b_matching([[0], [0]], [1]) == [0, None]
    assert b_matching([[0], [0], [0]], [2]) == [0, 0, None]


def test_boxes_are_the_chassis():
    assert [sorted(b) for b in boxes(parse_topology("ndv2(chassis=2)"))] == [list(range(8)), list(range(8, 16))]
    assert boxes(parse_topology("dgx1(alpha_ns=0)")) == [] and boxes(two_boxes()) != []


@pytest.mark.parametrize("expr, chunks, alpha", [("dgx1(alpha_ns=0)", 2, 0), ("dgx1(alpha_ns=0)", 4, 0),
                                                 ("dgx1()", 3, 1), ("ring(5)", 2, 0), ("complete(4)", 3, 0),
                                                 ("cluster(2,2,10,1)", 1, 0), ("two_boxes", 2, 0)])
def test_bound_never_exceeds_the_k_found(expr, chunks, alpha):
    """The lower bound on K is at most the smallest K the search finds (and proves) for the instance."""
    topo = two_boxes() if expr == "two_boxes" else parse_topology(expr)
    demand, t = instance(topo, chunks, 1000 if expr != "dgx1()" else KB25)
    r = teccl(topo, "allgather", chunks=chunks, chunk_bytes=1000 if expr != "dgx1()" else KB25)
    assert epoch_lower_bound(topo, demand, t, True) <= r.epochs and r.minimal
    assert verify(topo, r.schedule).ok


def test_ndv2_bound_is_table_8e_and_k_minus_1_is_infeasible():
    """NDv2 x 2, 1 GB, slowest-link epochs: 8 chunks cross one 12.5 GB/s link per direction, one an epoch, then
    two hops: K >= 10 (Table 8(e)), where the per-node bound gives 5. The MILP agrees: K = 9 is proven
    infeasible, and the search, starting at the bound, proves 10 minimal without solving K = 9."""
    topo = parse_topology("ndv2(chassis=2)")
    demand, t = instance(topo, 1, GB // 16)
    assert cut_epoch_bound(topo, demand, t) == 10
    fm = build_milp(topo, demand, t, 9)
    assert fm.extra["entry_cuts"] > 0
    assert solve(fm.model, 120, 1e-4, first_solution=True).status == INFEASIBLE
    r = teccl(topo, "allgather", chunks=1, buffer_bytes=GB, time_limit=120)
    assert r.finish == r.epochs == 10 and r.minimal and r.transfer_time_us == 50000
    assert all(p.epochs == 10 for p in r.probes) and r.status == OPTIMAL
    assert verify(topo, r.schedule).ok


# ------------------------------------------------------------------------------------------- entry cuts
def test_entry_cuts_keep_the_optimum():
    """The entry cuts are valid: the MILP at the same K has the same optimal objective with and without them."""
    topo = two_boxes()
    demand, t = instance(topo, 2, 1000)
    k = epoch_lower_bound(topo, demand, t, True) + 1
    with_cuts = build_milp(topo, demand, t, k)
    assert with_cuts.extra["entry_cuts"] > 0
    plain = build_milp(topo, demand, t, k, cuts=False)
    assert plain.extra["entry_cuts"] == 0
    a, b = solve_linear(with_cuts.model, 120), solve_linear(plain.model, 120)
    assert a.status == b.status == OPTIMAL and a.objective == pytest.approx(b.objective)


# --------------------------------------------------------------------------------------- the greedy start
@pytest.mark.parametrize("expr, chunks, chunk_bytes", [("dgx1(alpha_ns=0)", 5, KB25), ("dgx1()", 2, KB25),
                                                       ("ndv2(chassis=2)", 1, GB // 16), ("two_boxes", 3, 1000),
                                                       ("ring(4)", 2, 1000), ("cluster(2,2,10,1)", 1, 1000),
                                                       ("ndv2(chassis=3)", 1, GB // 24),
                                                       ("dgx2(chassis=1)", 2, GB // 32)])
def test_greedy_schedule_is_a_point_of_the_model(expr, chunks, chunk_bytes):
    """The greedy flows lower to a verified schedule, finish no earlier than the lower bound, and as a MIP start
    satisfy every row of the MILP at their finish epoch (entry cuts included); on fabrics with switches too, where
    a chunk crosses a switch as two sends in one go (the switch rows: out = arrivals)."""
    topo = two_boxes() if expr == "two_boxes" else parse_topology(expr)
    demand, t = instance(topo, chunks, chunk_bytes)
    bound = epoch_lower_bound(topo, demand, t, True)
    flows, finish = greedy_flows(topo, demand, t, 3 * bound)
    assert finish >= bound
    kept = lowering.prune(topo, demand, t.lag, flows)
    assert verify(topo, lowering.lower(topo, demand, t.lag, kept)).ok
    fm = build_milp(topo, demand, t, finish)
    x = start_vector(fm, flows)
    assert x is not None and rows_hold(fm.model, x)


def test_greedy_leaves_unicast_to_the_lp():
    ring = parse_topology("ring(4)")
    assert greedy_flows(ring, *instance(ring, collective="alltoall"), 20) is None


@pytest.mark.parametrize("chunks", [1, 2, 3, 4])
def test_warm_start_gives_the_same_transfer_time(chunks):
    """Table 7 (alpha = 0): C + 1 epochs, now reached from the greedy start, and the greedy's early-delivery
    objective is never above the optimum HiGHS proves from it."""
    topo = parse_topology("dgx1(alpha_ns=0)")
    demand, t = instance(topo, chunks)
    flows, finish = greedy_flows(topo, demand, t, 20)
    assert finish == chunks + 1
    fm = build_milp(topo, demand, t, finish)
    fm.model.start = start_vector(fm, flows)
    from_start = solve_linear(fm.model, 120)
    cold = solve_linear(build_milp(topo, demand, t, finish).model, 120)
    assert from_start.status == cold.status == OPTIMAL
    assert from_start.objective == pytest.approx(cold.objective)
    r = teccl(topo, "allgather", chunks=chunks, chunk_bytes=KB25)
    assert r.finish == chunks + 1 and r.minimal and r.status == OPTIMAL


# --------------------------------------------------------------------------------------- the highspy model
def test_linear_statuses_and_start():
    """A two-variable knapsack: optimal with its bound, an incumbent passed in is kept or improved, and an
    infeasible row is reported as such."""
    lm = Linear()
    x = lm.add_vars(2, integer=True)
    lm.cost[x[0]], lm.cost[x[1]] = 3.0, 2.0
    lm.add_row([x[0], x[1]], [1.0, 1.0], -np.inf, 1.0)
    lm.start = np.array([0.0, 1.0])
    out = solve_linear(lm, 10)
    assert out.status == OPTIMAL and out.objective == pytest.approx(3.0) and lm.value(x[0]) == 1.0
    lm.add_row([x[0], x[1]], [1.0, 1.0], 3.0, np.inf)
    lm.start = None
    assert solve_linear(lm, 10).status == INFEASIBLE and lm.values is None
