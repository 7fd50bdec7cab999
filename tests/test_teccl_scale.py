"""TE-CCL at the paper's largest fabrics (issue 43), on small fabrics here: the epoch multiplier (the paper's EM,
section 6 / Table 4), the fluid cut bound on K for the LP (solvers/teccl/bounds.py), the automatic choices of
``method="auto"`` beyond the size limits (coarser epochs for the LP, the greedy schedule for a MILP too large),
the lower bound in microseconds with the gap to it, and the array-built rows of ``linear.Linear``. Every schedule
is verified by solvers/core/verify.py; the speed at 32-64 GPUs is measured by bench/teccl.py --scale."""
import json
from fractions import Fraction

import numpy as np
import pytest

import solvers.teccl as teccl_module
from solvers.core.errors import NotApplicable
from solvers.core.verify import verify
from solvers.synthesize import synthesize
from solvers.teccl import epoch_lower_bound, make_demand, teccl
from solvers.teccl.bounds import fluid_epoch_bound
from solvers.teccl.instance import timing
from solvers.teccl.linear import Linear, solve_linear
from solvers.teccl.lp import build_lp
from solvers.teccl.solve import INFEASIBLE, OPTIMAL, solve
from studio.cli import main
from topologies import parse_topology
from topologies.model import COMPUTE, Link, Topology


def two_boxes(size: int = 3) -> Topology:
    """Two complete boxes of ``size`` GPUs (2 GB/s inside) joined by one 1 GB/s link each way (g0 -> g<size>,
    g<size> -> g0)."""
    links = []
    for base in (0, size):
        links += [Link(base + a, base + b, Fraction(2)) for a in range(size) for b in range(size) if a != b]
    links += [Link(0, size, Fraction(1)), Link(size, 0, Fraction(1))]
    return Topology(tuple(f"g{i}" for i in range(2 * size)), (COMPUTE,) * (2 * size), tuple(links))


# ------------------------------------------------------------------------------------------ the multiplier
def test_multiplier_scales_the_epoch_and_the_capacity():
    fine = timing(parse_topology("dgx1()"), 25_000)
    coarse = timing(parse_topology("dgx1()"), 25_000, multiplier=4)
    assert coarse.tau_us == 4 * fine.tau_us == 4
    assert coarse.window_cap == tuple(4 * c for c in fine.window_cap)
    assert set(coarse.kappa) == {1} and set(coarse.delay) == {1}     # 0.7 us of alpha is over 0.1 x 4 us
    assert set(timing(parse_topology("dgx1()"), 25_000, multiplier=8).delay) == {0}   # and under 0.1 x 8 us


@pytest.mark.parametrize("n", [3, 4])
def test_multiplier_on_a_ring_loses_nothing_when_it_divides_the_chunks(n):
    """A unidirectional ring, 2 chunks per GPU: (N - 1) 2 fine epochs; with m = 2 every link carries both chunks
    of a GPU in one coarse epoch, N - 1 of them: the same transfer time, at the lower bound (gap 0)."""
    topo = parse_topology(f"ring({n})")
    fine = teccl(topo, "allgather", chunks=2, chunk_bytes=1000)
    coarse = teccl(topo, "allgather", chunks=2, chunk_bytes=1000, multiplier=2)
    assert fine.multiplier == 1 and coarse.multiplier == 2
    assert coarse.epochs == n - 1 and fine.epochs == 2 * (n - 1)
    assert coarse.timing.tau_us == 2 * fine.timing.tau_us
    assert coarse.transfer_time_us == fine.transfer_time_us == fine.bound_us == coarse.bound_us
    assert coarse.lower_bound_gap == 0 and verify(topo, coarse.schedule).ok


def test_a_coarse_epoch_costs_a_hop_a_whole_epoch():
    """On a ring with one chunk per GPU, m = 2 leaves half of each link idle and a hop still takes one (coarse)
    epoch: twice the transfer time, reported as 100 % above the bound of the fine model."""
    topo = parse_topology("ring(4)")
    r = teccl(topo, "allgather", chunks=1, chunk_bytes=1000, multiplier=2)
    assert r.epochs == 3 and r.transfer_time_us == 2 * r.bound_us and r.lower_bound_gap == 1
    assert any("multiplier 2" in n for n in r.notes)


def test_multiplier_option_reaches_the_solver_through_the_registry():
    topo = parse_topology("ring(4)")
    res = synthesize(topo, "teccl", "allgather", total_bytes=8000, options={"chunks": 2, "multiplier": 2})
    assert res.detail.multiplier == 2 and res.detail.epochs == 3
    with pytest.raises(NotApplicable):
        synthesize(topo, "teccl", "allgather", total_bytes=8000, options={"multiplier": 0})


def test_multiplier_flag_on_the_command_line(capsys):
    code = main(["schedule", "ring(4)", "--algo", "teccl", "--chunks", "2", "--multiplier", "2", "--bytes", "8000",
                 "--json", "--no-cache"])
    out = json.loads(capsys.readouterr().out)
    assert code == 0 and out["verified"]
    t = out["teccl"]
    assert t["multiplier"] == 2 and t["epochs"] == 3 and t["lower_bound_gap"] == 0.0
    assert t["lower_bound_us"] == t["transfer_time_us"]


@pytest.mark.parametrize("bad", [0, -1, 1.5, True])
def test_bad_multiplier_is_refused(bad):
    with pytest.raises(NotApplicable, match="multiplier"):
        teccl(parse_topology("ring(4)"), "allgather", chunk_bytes=1000, multiplier=bad)


def test_astar_reports_its_multiplier_and_the_bound():
    topo = parse_topology("ring(4)")
    r = teccl(topo, "allgather", chunks=2, chunk_bytes=1000, method="astar", multiplier=2)
    assert r.method == "astar" and r.multiplier == 2
    assert r.bound_us == 6 * timing(topo, 1000).tau_us
    assert r.transfer_time_us >= r.bound_us and verify(topo, r.schedule).ok


# -------------------------------------------------------------------------------------- the fluid bound
def test_fluid_bound_sees_the_box_cut_and_is_tight_for_the_lp():
    """Two boxes of 3: 9 chunks cross one 1-chunk-per-epoch link each way; the per-node bounds say far less.
    The LP finishes at the fluid bound, and at one epoch fewer it is infeasible."""
    topo = two_boxes()
    demand = make_demand(topo, "alltoall", 1)
    t = timing(topo, Fraction(1000))
    plain = epoch_lower_bound(topo, demand, t, False, cuts=False)
    bound = fluid_epoch_bound(topo, demand, t, plain)
    assert plain < 9 <= bound == epoch_lower_bound(topo, demand, t, False)
    r = teccl(topo, "alltoall", chunk_bytes=1000)
    assert r.method == "lp" and r.lower_bound == bound and r.finish >= bound
    fm = build_lp(topo, demand, t, r.finish - 1)
    assert solve(fm.model, 60).status == INFEASIBLE
    assert r.bound_us == bound * t.tau_us and r.lower_bound_gap == Fraction(r.finish, bound) - 1


@pytest.mark.parametrize("expr", ["two_boxes(2)", "cluster(2,2,10,1)", "cluster(3,2,10,1)"])
def test_fluid_bound_never_exceeds_what_the_lp_reaches(expr):
    topo = two_boxes(2) if expr == "two_boxes(2)" else parse_topology(expr)
    r = teccl(topo, "alltoall", buffer_bytes=10 ** 6, multiplier=1, time_limit=60)
    assert r.lower_bound <= r.finish and verify(topo, r.schedule).ok


# ------------------------------------------------------------------------------------ auto beyond the limits
def test_auto_takes_coarser_epochs_for_an_lp_over_its_target(monkeypatch):
    topo = two_boxes()
    monkeypatch.setattr(teccl_module, "AUTO_LP_VARIABLES", 200)
    r = teccl(topo, "alltoall", chunk_bytes=1000)
    assert r.method == "lp" and r.multiplier > 1 and (r.multiplier & (r.multiplier - 1)) == 0
    assert verify(topo, r.schedule).ok and r.transfer_time_us >= r.bound_us
    fixed = teccl(topo, "alltoall", chunk_bytes=1000, multiplier=1)     # a given multiplier is kept
    assert fixed.multiplier == 1 and fixed.transfer_time_us <= r.transfer_time_us


def test_auto_falls_back_to_the_greedy_for_a_milp_too_large(monkeypatch):
    """Above AUTO_MILP_BINARIES at the lower bound, auto returns the greedy schedule (verified, not optimised)
    with its gap to the cut bound; an explicit MILP is refused above MAX_BINARIES, as before."""
    topo = parse_topology("ndv2(chassis=3)")
    monkeypatch.setattr(teccl_module, "AUTO_MILP_BINARIES", 1000)
    monkeypatch.setattr(teccl_module, "MAX_BINARIES", 1000)
    r = teccl(topo, "allgather", buffer_bytes=10 ** 9)
    assert r.method == "greedy" and r.status == "feasible" and r.gap is None
    assert verify(topo, r.schedule).ok
    assert r.finish >= r.lower_bound and r.transfer_time_us >= r.bound_us >= 0
    assert r.lower_bound_gap == Fraction(r.finish, r.lower_bound) - 1
    assert r.as_dict()["method"] == "greedy" and r.as_dict()["verified"]
    with pytest.raises(NotApplicable, match="flow variables"):
        teccl(topo, "allgather", buffer_bytes=10 ** 9, method="milp")


# ----------------------------------------------------------------------------------------- array rows
def test_add_rows_equals_add_row_and_merges_repeats():
    """Triplets in any order, a repeated (row, column) adding up, give the same rows as one add_row each."""
    a, b = Linear(maximize=True), Linear(maximize=True)
    for m in (a, b):
        m.add_vars(3, upper=10.0)
        m.cost[:] = [1.0, 2.0, 3.0]
    a.add_row([0, 1], [1.0, 1.0], -np.inf, 4.0)
    a.add_row([1, 2], [2.0, 1.0], -np.inf, 6.0)
    b.add_rows([1, 0, 1, 0, 1], [2, 1, 1, 0, 1], [1.0, 1.0, 1.0, 1.0, 1.0], [-np.inf, -np.inf], [4.0, 6.0])
    for m in (a, b):
        assert list(m.starts) == [0, 2, 4] and m.nconstraints() == 2
    assert list(a.index) == list(b.index) and list(a.coef) == list(b.coef)
    oa, ob = solve_linear(a, 10), solve_linear(b, 10)
    assert oa.status == ob.status == OPTIMAL and oa.objective == pytest.approx(ob.objective) == pytest.approx(22)
