"""The topology finder (direct-connect §5.4, A.3, A.6): paper frontiers, predictions against constructions."""
import csv
import json
import random
from dataclasses import replace
from fractions import Fraction

import pytest
from hypothesis import given, settings
from hypothesis import strategies as st

from solvers.directconnect import base_table
from solvers.directconnect.bfb import bfb_allgather, bfb_values
from solvers.core.cost import tb_factor
from solvers.core.errors import NotApplicable
from solvers.directconnect.finder import Candidate, Finder, bound, build_candidate, find, pareto
from solvers.core.cost import alpha_beta_us
from solvers.directconnect.pricing import (RUNTIME_MAX_NODES, RUNTIME_MODEL, STEP_MODEL, design_model, price,
                                           price_frontier, runtime_priced)
from solvers.directconnect.selection import SizeMix, step_model_mix_us, step_model_time_us
from solvers.runtime import Execution, simulate
from solvers.synthesize import synthesize
from studio.cli import main
from topologies import parse_topology
from topologies.families import gkautz

F = Fraction

# Table 4 / Table 7 (appendix), d = 4: (steps, tb) of every frontier entry
TABLE7 = {
    32: [(3, F(1)), (4, F(31, 32))],
    64: [(3, F("1.3125")), (4, F(1)), (6, F(63, 64))],
    128: [(4, F("1.03125")), (5, F(1)), (10, F(127, 128))],
    256: [(4, F("1.328125")), (5, F("1.015625")), (7, F(1)), (10, F(255, 256))],
    512: [(5, F("1.0390625")), (6, F("1.0078125")), (11, F(1)), (16, F(511, 512))],
    1024: [(5, F("1.33203125")), (6, F("1.01953125")), (8, F("1.00390625")), (11, F(1)), (20, F(1023, 1024))],
}


def points(frontier):
    return [(c.steps, c.tb) for c in frontier]


@pytest.fixture(scope="module")
def finder():
    return Finder()


def test_table4_frontier_at_1024(finder):
    front = finder.frontier(1024, 4)
    assert points(front) == TABLE7[1024]
    assert [round(float(c.tb), 3) for c in front] == [1.332, 1.020, 1.004, 1.000, 0.999]


@pytest.mark.parametrize("n", [32, 64, 256, 1024])
def test_table7_rows_are_the_frontier(finder, n):
    assert points(finder.frontier(n, 4)) == TABLE7[n]


@pytest.mark.parametrize("n", [128, 512])
def test_table7_with_circulants_beaten_and_reproduced_without_them(finder, n):
    """At 128 and 512 the Theorem 22 circulant beats the paper's entries: C(128,{8,9}) takes 8 steps at
    tb 127/128 where Table 7 lists BiRing(2,8)□UniRing(1,4)^{□2} at 10, and L(C(128,{8,9})) 9 steps at tb 1
    where it lists an 11-step entry. Every paper point is covered, and without circulant bases the finder
    returns Table 7 exactly."""
    front = finder.frontier(n, 4)
    for steps, tb in TABLE7[n]:
        assert any(c.steps <= steps and c.tb <= tb for c in front)
    assert points(front) != TABLE7[n]
    assert points(Finder(exclude=["circulant"]).frontier(n, 4)) == TABLE7[n]


def test_the_circulant_that_beats_table7_at_128_is_real(finder):
    (c,) = [c for c in finder.frontier(128, 4) if c.steps == 8]
    built = build_candidate(c)
    assert built.agrees and (built.steps, built.tb) == (8, F(127, 128)) and built.diameter == 8


@pytest.mark.parametrize("n", range(5, 13))
def test_table5_designs(finder, n):
    """Table 5: one BW-optimal design per N = 5..12 at d = 4, with Moore-optimal diameter (1 at N = 5, else 2)."""
    assert points(finder.frontier(n, 4)) == [(1 if n == 5 else 2, F(n - 1, n))]


def test_table4_allreduce_column():
    """alpha = 10 us, M/B = 2^20 bytes / 100 Gb/s; the bound is the Moore diameter 5 with tb 1023/1024."""
    front = find(1024, 4)
    times = [step_model_time_us(c.steps, c.tb, 10.0, 2 ** 20, 12.5) for c in front]
    assert [round(t, 1) for t in times] == pytest.approx([323.5, 291.0, 328.4, 387.8, 567.6], abs=0.051)
    steps, tb = bound(1024, 4)
    assert round(step_model_time_us(steps, tb, 10.0, 2 ** 20, 12.5), 1) == 267.6


def test_step_model_helpers_are_alpha_beta_us():
    """The step model is written once (core.cost.alpha_beta_us): a collective doubles it for allreduce, a mix is
    the weighted sum."""
    tb = F(21, 16)
    assert step_model_time_us(3, tb, 10.0, 1e6, 12.5, "allgather") == alpha_beta_us(3, tb, 1e6, 10.0, 12.5)
    assert step_model_time_us(3, tb, 10.0, 1e6, 12.5) == 2 * alpha_beta_us(3, tb, 1e6, 10.0, 12.5)
    mix = SizeMix.of([1e6, 1e8], [3, 1])
    assert step_model_mix_us(3, tb, 10.0, mix, 12.5, "reduce_scatter") == pytest.approx(
        3 * alpha_beta_us(3, tb, 1e6, 10.0, 12.5) + alpha_beta_us(3, tb, 1e8, 10.0, 12.5))
    with pytest.raises(ValueError, match="unknown collective"):
        step_model_time_us(3, tb, 10.0, 1e6, 12.5, "alltoall")


@pytest.mark.parametrize("collective", ["allreduce", "allgather", "reduce_scatter"])
def test_runtime_price_is_simulate_of_the_verified_schedule(collective):
    """A frontier design's runtime price is ``simulate`` of the schedule its synthesizer builds (verified by
    ``synthesize``), summed over the mix with its weights; the recommendation is the least of those prices and
    the step model stays beside it."""
    rows = [c.as_dict() for c in find(64, 4)]
    mix = SizeMix.of([1e5, 3e6, 2e8], [5, 2, 1])
    prices, best = price_frontier(rows, collective, mix, 7.0, 25.0)
    ex = Execution.alpha_beta(7.0, 25.0)
    for row, p in zip(rows, prices):
        assert p.model == RUNTIME_MODEL and p.time_us == p.runtime_us and p.algo in ("expansion", "bfb")
        built = synthesize(parse_topology(row["expr"]), p.algo, collective)
        expected = sum(w * simulate(built.topology, built.schedule, m, ex).time_us
                       for m, w in zip(mix.sizes, mix.weights))
        assert p.runtime_us == pytest.approx(expected, rel=1e-12)
        assert p.step_model_us == step_model_mix_us(row["steps"], row["tb_factor"], 7.0, mix, 25.0, collective)
    assert best == min(range(len(rows)), key=lambda i: (prices[i].runtime_us, i))


def test_runtime_price_falls_back_to_bfb_without_a_reverse_symmetry():
    """line(diamond(),3) has an expansion allgather but no expansion reduce-scatter (no reverse symmetry): its
    allreduce is priced on BFB's verified schedule."""
    assert design_model("line(diamond(),3)", "allgather").algo == "expansion"
    built = design_model("line(diamond(),3)", "allreduce")
    assert built.algo == "bfb" and built.model.schedule.collective.value == "allreduce"


def test_step_model_above_the_cap_and_for_alltoall():
    (row, *_) = [c.as_dict() for c in find(1024, 4)]
    assert row["nodes"] > RUNTIME_MAX_NODES and not runtime_priced(row["nodes"], "allreduce")
    p = price(row, "allreduce", SizeMix.single(2 ** 20), 10.0, 12.5)
    assert p.model == STEP_MODEL and p.runtime_us is None and p.time_us == p.step_model_us
    assert round(p.step_model_us, 1) == 323.5                                        # Table 4
    assert not runtime_priced(64, "alltoall")
    with pytest.raises(NotApplicable, match="runtime model prices"):
        design_model("gkautz(4,64)", "alltoall")


# every degree up to 192 nodes; at 256 degree 2 only: degrees 4 and 8 there took 17 of the test's 40 s (their 13
# entries built, verified and agreed when the suite was trimmed, 2026-11-28)
PREDICTION_TARGETS = [(n, d) for d in (2, 4, 8) for n in list(range(5, 17)) + [24, 32, 48, 64, 96, 128, 192]] + [
    (256, 2)]


def test_every_frontier_entry_up_to_256_builds_verifies_and_matches(finder):
    """Every frontier entry (directed and bidirectional) with N <= 192 at d = 2, 4, 8, and N = 256 at d = 2: the expansion schedule is
    built, verified by the simulator, and has exactly the predicted steps and tb."""
    seen = {}
    for n, d in PREDICTION_TARGETS:
        for bidirectional in (False, True):
            for c in finder.frontier(n, d, bidirectional):
                if c.expr not in seen:
                    built = build_candidate(c)
                    seen[c.expr] = built
                    assert built.agrees, (c.expr, (c.steps, c.tb), (built.steps, built.tb))
                    assert built.topology.n == n and max(map(len, built.topology.out_links)) == d
                    if bidirectional:
                        pairs = sorted((l.src, l.dst) for l in built.topology.links)
                        assert pairs == sorted((l.dst, l.src) for l in built.topology.links)
    assert len(seen) > 100


@settings(max_examples=15, deadline=None)
@given(st.integers(3, 40), st.integers(2, 6), st.booleans())
def test_random_targets_build_as_predicted(n, d, bidirectional):
    for c in Finder().frontier(n, d, bidirectional):
        assert build_candidate(c).agrees, c.expr


@pytest.mark.parametrize("n", [7, 8, 11, 16, 23, 40, 64, 97, 128, 150])
def test_theorem22_circulant_seed_values(n):
    """The circulant seed's predicted values (diameter g, BW-optimal) against BFB on the built graph."""
    (c,) = [c for c in Finder().seeds(n, 4) if "circulant" in c.families]
    topo = parse_topology(c.expr)
    assert bfb_values(topo) == (c.steps, c.tb)


@pytest.mark.parametrize("expr, k, n", [("biring(2,7)", 2, 7), ("biring(4,6)", 4, 6), ("uniring(2,5)", 2, 5),
                                        ("uniring(1,9)", 1, 9), ("complete(6)", 5, 6), ("bipartite(3)", 3, 6),
                                        ("dcirculant(4)", 4, 6)])
def test_formula_seeds_match_bfb(expr, k, n):
    (c,) = [c for c in Finder().seeds(n, k) if c.expr.split("(")[0] == expr.split("(")[0]]
    assert bfb_values(parse_topology(expr)) == (c.steps, c.tb)


def test_line_of_gkautz_is_gkautz():
    """L(Π_{4,256}) is Π_{4,1024}: Thm 10's prediction from the smaller table row equals the larger one."""
    small, large = base_table.gkautz_values(4, 64), base_table.gkautz_values(4, 256)
    assert (small[0] + 1, small[1] + F(1, 64)) == large


# ------------------------------------------------------------------------------------------------ base table
@pytest.mark.parametrize("expr", ["gkautz(4,50)", "circulant(16,[3,4])", "uniring(2,5)", "biring(4,6)",
                                  "hypercube(4)", "gkautz(2,30)", "diamond()"])
def test_bfb_values_equal_the_full_schedule(expr):
    topo = parse_topology(expr)
    sched = bfb_allgather(topo)
    assert bfb_values(topo) == (sched.steps, tb_factor(topo, sched))


@settings(max_examples=40, deadline=None)
@given(st.integers(2, 9), st.integers(3, 60))
def test_self_loop_rule(k, n):
    if n <= k:
        return
    topo = gkautz(k, n)
    assert base_table.self_loops(k, n) == any(l.src == l.dst for l in topo.links)


def test_table_rows_recompute():
    with base_table.TABLE.open(newline="") as fh:
        rows = [r for r in csv.DictReader(fh) if int(r["n"]) <= 150]
    assert rows and list(rows[0]) == base_table.HEADER
    for row in random.Random(7).sample(rows, 6):
        k, n = int(row["k"]), int(row["n"])
        assert bfb_values(gkautz(k, n)) == (int(row["steps"]), F(int(row["tb_num"]), int(row["tb_den"])))


# -------------------------------------------------------------------------------------------------- pareto
def _cand(steps, tb, expr="x"):
    return Candidate(expr, expr, 4, 2, steps, F(tb), False, False, False, True, True)


@settings(max_examples=60)
@given(st.lists(st.tuples(st.integers(1, 6), st.integers(1, 8)), min_size=1, max_size=12))
def test_pareto_is_the_nondominated_set(pairs):
    cands = [_cand(s, F(t, 4), f"c{i}") for i, (s, t) in enumerate(pairs)]
    front = pareto(cands)
    for a in front:
        assert not any((b.steps <= a.steps and b.tb <= a.tb) and (b.steps, b.tb) != (a.steps, a.tb) for b in cands)
    assert {(c.steps, c.tb) for c in front} == {(c.steps, c.tb) for c in cands
                                               if not any(b.steps <= c.steps and b.tb <= c.tb and
                                                          (b.steps, b.tb) != (c.steps, c.tb) for b in cands)}
    assert [c.steps for c in front] == sorted(c.steps for c in front)


def test_bad_targets_are_refused():
    with pytest.raises(NotApplicable, match="N >= 2"):
        find(1, 4)
    with pytest.raises(NotApplicable, match="unknown family"):
        Finder(exclude=["hexagon"])
    with pytest.raises(NotApplicable, match="N <= "):
        find(10 ** 6, 4)


# ----------------------------------------------------------------------------------------------------- CLI
def test_cli_find_json(capsys):
    assert main(["find", "--nodes", "1024", "--degree", "4", "--bytes", str(2 ** 20), "--json"]) == 0   # Table 4's M
    rows = json.loads(capsys.readouterr().out)
    assert [r["steps"] for r in rows] == [5, 6, 8, 11, 20]
    assert [round(r["tb_factor"], 3) for r in rows] == [1.332, 1.020, 1.004, 1.000, 0.999]
    assert [r["diameter"] for r in rows] == [5, 6, 8, 9, 20]
    assert all(r["name"] and r["expr"] for r in rows)
    # above the runtime model's cap: the step model (Table 4's allreduce column) picks the recommendation
    assert all(r["runtime_us"] is None for r in rows)
    assert [round(r["step_model_us"], 1) for r in rows] == pytest.approx([323.5, 291.0, 328.4, 387.8, 567.6],
                                                                         abs=0.051)
    assert [i for i, r in enumerate(rows) if r.get("recommended")] == [1]


def test_cli_find_prices_with_the_runtime_model_up_to_the_cap(capsys):
    assert main(["find", "--nodes", "32", "--degree", "4", "--bytes", "4e7", "--alpha", "5", "--json"]) == 0
    rows = json.loads(capsys.readouterr().out)
    ex = Execution.alpha_beta(5.0, 12.5)
    for r in rows:
        built = synthesize(parse_topology(r["expr"]), r["runtime_algo"], "allreduce")
        assert r["runtime_us"] == pytest.approx(simulate(built.topology, built.schedule, 4e7, ex).time_us)
        assert r["step_model_us"] == pytest.approx(2 * alpha_beta_us(r["steps"], F(r["tb_exact"]), 4e7, 5.0, 12.5))
    times = [r["runtime_us"] for r in rows]
    assert [i for i, r in enumerate(rows) if r.get("recommended")] == [times.index(min(times))]
    assert main(["find", "--nodes", "32", "--degree", "4"]) == 0
    text = capsys.readouterr().out
    assert "runtime us" in text and "step model us" in text and "<- best allreduce (runtime model)" in text


def test_cli_find_bidirectional_and_errors(capsys):
    assert main(["find", "--nodes", "64", "--degree", "4", "--bidirectional", "--json"]) == 0
    rows = json.loads(capsys.readouterr().out)
    assert rows and all(r["bidirectional"] for r in rows)
    assert main(["find", "--nodes", "0", "--degree", "4"]) == 2
    assert "N >= 2" in capsys.readouterr().err
    assert main(["find", "--nodes", "64", "--degree", "4", "--exclude", "hexagon"]) == 2


# ------------------------------------------------------------------------------------------ BFB measured
@pytest.mark.parametrize("n, d, expr, point", [
    (128, 2, "line(power(uniring(1,8),2),1)", (15, F(127, 128))),     # the line expansion gives tb 1
    (128, 2, "line(power(uniring(1,4),2),3)", (9, F(65, 64))),        # and 67/64
    (32, 8, "degree(circulant(16,[3,4]),2)", (3, F(31, 32))),         # the degree expansion takes 4 steps
])
def test_frontier_lists_the_bfb_point_where_it_beats_the_expansion(n, d, expr, point):
    """A design whose BFB schedule beats its expansion schedule is listed at BFB's point, marked schedule 'bfb',
    and building it (BFB's verified schedule) gives exactly that point."""
    front = find(n, d)
    (c,) = [c for c in front if c.expr == expr]
    assert (c.steps, c.tb) == point and c.schedule == "bfb" and c.as_dict()["schedule"] == "bfb"
    built = build_candidate(c)
    assert built.agrees
    expansion = build_candidate(replace(c, schedule="expansion"))
    assert (expansion.steps, expansion.tb) != point and expansion.steps >= point[0] and expansion.tb >= point[1]


@settings(max_examples=10, deadline=None)
@given(st.integers(4, 48), st.integers(2, 6))
def test_no_frontier_point_is_beaten_by_bfb_on_its_own_graph(n, d):
    """The frontier's points are never worse than BFB run on the listed graph (up to MEASURE_MAX_NODES)."""
    for c in Finder().frontier(n, d):
        steps, tb = bfb_values(parse_topology(c.expr))
        assert not (steps <= c.steps and tb <= c.tb and (steps, tb) != (c.steps, c.tb)), c.expr


def test_sweeps_keep_the_predictions_only():
    """Without ``compute`` (sweeps) nothing is measured: the BFB entries appear only at a computed target."""
    finder = Finder()
    assert all(c.schedule == "expansion" for c in finder.frontier(128, 2, compute=False))
    assert any(c.schedule == "bfb" for c in finder.frontier(128, 2))


def test_price_is_the_least_over_the_synthesizers():
    """A design both synthesizers build is priced by the faster one for the workload; ``algo`` names it."""
    row = next(c.as_dict() for c in find(128, 2) if c.expr == "line(power(uniring(1,8),2),1)")
    mix = SizeMix.of([1e4, 1e8], [1, 1])
    for collective in ("allgather", "allreduce"):
        p = price(row, collective, mix, 2.0, 50.0)
        times = {}
        for algo in ("expansion", "bfb"):
            try:
                times[algo] = design_model(row["expr"], collective, algo).mix_us(mix, 2.0, 50.0)
            except NotApplicable:
                pass
        assert len(times) == 2 or collective == "allreduce"
        assert p.algo == min(times, key=times.get) and p.runtime_us == min(times.values())
