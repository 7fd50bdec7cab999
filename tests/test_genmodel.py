"""GenModel (Xiong et al.; digest notes/genmodel-gentree.md): Table 2 costs and the corrected HCPS row, the paper's
optimality claims (Theorems 1 and 2, 61 %, 66.7 %, 200 %), the per-N optimum and Table 6 single-switch choices,
the Table 7 single-switch rows, fitting from CPS runs, the schedule cost, and the ``genmodel`` CLI."""
import argparse
import json
from fractions import Fraction

import pytest

from solvers import synthesize
from solvers.core.cost import step_model_us
from solvers.genmodel import (CPU_TESTBED, TABLE5, FitError, GenModelParams, ModelOptions, ParamsError, badges,
                              best_plan, classic_cost, cps_cost, fit, genmodel_time_us, hcps_cost,
                              memory_lower_bound, ordered_factorizations, plan_cost, read_measurements, rhd_cost,
                              ring_cost, single_switch, synthesize_measurements, to_csv, to_topology,
                              traffic_lower_bound)
from solvers.genmodel.plans import candidate_plans, hierarchical_cost, ps_cost
from studio.cli import genmodel as genmodel_cli
from topologies import load
from topologies.model import Link, Topology

MID = TABLE5["middle_sw+server"]          # Table 5 Middle-SW link row + Server row
SIZES = (1e7, 3.2e7, 1e8)                  # the simulation sizes of §5.3 (floats)


# ------------------------------------------------------------------------------------------ Table 2 and HCPS
def test_table5_presets_are_the_paper_values():
    assert (MID.alpha, MID.beta, MID.gamma, MID.delta, MID.epsilon, MID.w_t) == (6.58e-3, 6.4e-9, 6e-10, 1.87e-10,
                                                                                  1.22e-10, 9)
    assert TABLE5["root_sw"].beta == 6.4e-10 and TABLE5["cross_dc"].alpha == 3e-2 and CPU_TESTBED.w_t == 9


@pytest.mark.parametrize("n", [2, 5, 9, 12, 24, 32])
@pytest.mark.parametrize("fan_in", ["group", "senders"])
def test_one_step_hcps_is_cps(n, fan_in):
    o = ModelOptions(fan_in=fan_in, alpha_steps=3)
    assert hcps_cost((n,), 1e8, MID, o).terms() == pytest.approx(cps_cost(n, 1e8, MID, o).terms())


def test_cps_row_of_table2_written_out():
    n, s, p = 12, 1e8, MID
    expected = (2 * p.alpha + 2 * 11 / 12 * s * p.beta + 11 / 12 * s * p.gamma + 13 / 12 * s * p.delta
                + 2 * 11 / 12 * s * (12 - 9) * p.epsilon)
    assert cps_cost(n, s, p).total == pytest.approx(expected)


def test_hcps_6x2_memory_is_17_over_12_and_printed_formula_gives_25_over_12():
    # digest §1.4.2: step 0 costs 7 S/6 = 14 S/12 and step 1 costs 3 S/12
    assert hcps_cost((6, 2), 1.0, MID).coef["D"] * 12 == pytest.approx(17)
    assert hcps_cost((6, 2), 1.0, MID, ModelOptions(hcps="printed")).coef["D"] * 12 == pytest.approx(25)
    assert hcps_cost((2, 6), 1.0, MID).coef["D"] * 12 == pytest.approx(25)   # the printed row = the reversed order


def test_ordered_factorizations():
    assert sorted(ordered_factorizations(12)) == sorted([(12,), (2, 6), (6, 2), (3, 4), (4, 3), (2, 2, 3),
                                                          (2, 3, 2), (3, 2, 2)])
    assert ordered_factorizations(13) == [(13,)]
    assert len(ordered_factorizations(32)) == 16 and len(ordered_factorizations(24)) == 20


def test_rhd_chi_and_ps_gamma():
    assert rhd_cost(8, 1.0, MID).steps == 6 and rhd_cost(12, 1.0, MID).steps == 8
    assert rhd_cost(12, 1.0, MID).coef["B"] == pytest.approx(2 * 11 / 12 + 2)
    assert ps_cost(8, 1.0, MID).coef["C"] == 7                      # Table 2 (P2)
    assert classic_cost("ps", 8, 1.0, MID).coef["C"] == 14           # Table 1


@pytest.mark.parametrize("mu", [1, 3])
def test_per_n_optimum_at_1e8_floats(mu):
    # digest §3.9 [C]: N=8 -> CPS; 12 -> 6x2; 15 -> 5x3; 24 -> 8x3; 32 -> 8x4 (and the runners-up)
    o = ModelOptions(alpha_steps=mu)
    expected = {8: ("CPS", "4 × 2"), 12: ("6 × 2", "4 × 3"), 15: ("5 × 3", "3 × 5"), 24: ("8 × 3", "6 × 4"),
                32: ("8 × 4", "4 × 8")}
    for n, (best, second) in expected.items():
        r = best_plan(n, 1e8, MID, o)
        assert (r.best.label, r.costs[1].label) == (best, second)


def test_printed_hcps_formula_picks_the_reversed_orders():
    picks = [best_plan(n, 1e8, MID, ModelOptions(hcps="printed")).best.label for n in (12, 15, 24, 32)]
    assert picks == ["2 × 6", "3 × 5", "3 × 8", "4 × 8"]


@pytest.mark.parametrize("fan_in", ["group", "senders"])
def test_table6_single_switch_choices_with_mu_3(fan_in):
    o = ModelOptions(alpha_steps=3, fan_in=fan_in)
    assert [best_plan(24, s, MID, o).best.label for s in SIZES] == ["CPS", "8 × 3", "8 × 3"]
    assert [best_plan(32, s, MID, o).best.label for s in SIZES] == ["8 × 4", "8 × 4", "8 × 4"]


def test_classic_model_picks_differently_at_n12():
    r = best_plan(12, 1e8, MID)
    assert r.best.label == "6 × 2" and r.classic_best.label == "CPS"   # (α, β, γ) misses the optimum (§5.1)


# -------------------------------------------------------------------------------------- optimality claims
@pytest.mark.parametrize("n", range(3, 33))
def test_theorem1_cps_attains_the_memory_bound_and_every_other_plan_is_above(n):
    bound = memory_lower_bound(n, 1.0)
    assert cps_cost(n, 1.0, MID).coef["D"] == pytest.approx(bound)
    for plan in candidate_plans(n):
        c = plan_cost(plan, n, 1.0, MID)
        if c.kind != "cps":
            assert c.coef["D"] > bound + 1e-12, c.label
        assert c.coef["B"] >= traffic_lower_bound(n, 1.0) - 1e-12


@pytest.mark.parametrize("fan_in,first", [("group", 10), ("senders", 11)])
def test_theorem2_no_factorization_is_both_epsilon_and_delta_optimal(fan_in, first):
    o = ModelOptions(fan_in=fan_in)
    for n in range(first, 33):                                     # N > w_t (one more with w = senders)
        for f in ordered_factorizations(n):
            b = badges(hcps_cost(f, 1e8, MID, o))
            assert not (b["epsilon"] and b["delta"]), (n, f)
    # the knee: with w = senders, CPS of 10 is still incast-free (P3 moves it by one)
    assert badges(cps_cost(10, 1.0, MID, ModelOptions(fan_in="senders")))["epsilon"]


def test_badges_of_the_basic_plans():
    assert badges(cps_cost(12, 1.0, MID)) == {"latency": True, "bandwidth": True, "epsilon": False, "delta": True}
    assert badges(ring_cost(12, 1.0, MID)) == {"latency": False, "bandwidth": True, "epsilon": True,
                                              "delta": False}
    assert not badges(rhd_cost(12, 1.0, MID))["bandwidth"] and badges(rhd_cost(16, 1.0, MID))["bandwidth"]


def test_memory_claims_61_percent_66_7_limit_and_200_percent():
    ring, cps = ring_cost(12, 1.0, MID).coef["D"], cps_cost(12, 1.0, MID).coef["D"]
    assert (ring - cps) / ring == pytest.approx(20 / 33) and round((ring - cps) / ring * 100) == 61   # Fig. 9
    saving = [1 - (x + 1) / (3 * (x - 1)) for x in range(2, 100_000, 997)]          # Eq. 5 per add vs a chain
    assert max(saving) < 2 / 3 and saving[-1] == pytest.approx(2 / 3, abs=1e-4)
    gap = [(ring_cost(n, 1.0, MID).coef["D"] - cps_cost(n, 1.0, MID).coef["D"]) / cps_cost(n, 1.0, MID).coef["D"]
           for n in (10, 100, 10_000)]
    assert gap == sorted(gap) and gap[-1] < 2 and gap[-1] == pytest.approx(2, abs=1e-3)             # "200 %"


# ------------------------------------------------------------------------------------- Table 7 single switch
T7 = {("SS24", "GenTree"): (0.203, 0.503, 1.404), ("SS24", "Ring"): (1.082, 1.376, 2.288),
      ("SS24", "CPS"): (0.203, 0.562, 1.673), ("SS32", "GenTree"): (0.213, 0.507, 1.417),
      ("SS32", "RHD"): (0.337, 0.644, 1.593), ("SS32", "Ring"): (1.399, 1.697, 2.617),
      ("SS32", "CPS"): (0.223, 0.628, 1.879)}
# The simulator charges 3 alpha per step inside one switch and its ring takes 2N steps (the Table 7 intercepts
# are 6 alpha for CPS and 6 N alpha for Ring: digest §3.9); w = senders fits the CPS slopes to 0.15 %.
SIM = ModelOptions(alpha_steps=3, fan_in="senders", ring_steps="simulator")


def _t7(algo, n, s):
    if algo == "GenTree":
        return best_plan(n, s, MID, SIM).best.total
    return {"Ring": ring_cost, "CPS": cps_cost, "RHD": rhd_cost}[algo](n, s, MID, SIM).total


@pytest.mark.parametrize("row", sorted(T7))
def test_table7_single_switch_rows_within_2_percent(row):
    net, algo = row
    n = int(net[2:])
    for s, paper in zip(SIZES, T7[row]):
        model = _t7(algo, n, s)
        if row == ("SS32", "RHD") and s > 1e7:
            # does not reproduce: the model is 2.1 % and 2.7 % below (slope 1.3525e-8 vs 1.3956e-8 s/float)
            assert -0.03 < (model - paper) / paper < -0.02
            continue
        assert model == pytest.approx(paper, rel=0.02), (row, s, model)


# --------------------------------------------------------------------------------------------------- fitting
def test_fit_recovers_parameters_exactly_without_noise():
    rows = synthesize_measurements(CPU_TESTBED, range(2, 16), [1e6, 1e7, 1e8])
    r = fit(rows)
    assert r.w_t == 9 and r.max_relative < 1e-9
    assert r.alpha == pytest.approx(CPU_TESTBED.alpha, rel=1e-6)
    assert r.beta2_gamma == pytest.approx(2 * CPU_TESTBED.beta + CPU_TESTBED.gamma, rel=1e-6)
    assert r.delta == pytest.approx(CPU_TESTBED.delta, rel=1e-5)
    assert r.epsilon == pytest.approx(CPU_TESTBED.epsilon, rel=1e-6)
    assert any("2β+γ" in w for w in r.warnings)
    p = r.params(beta=CPU_TESTBED.beta)
    assert p.gamma == pytest.approx(CPU_TESTBED.gamma, rel=1e-4)


def test_fit_with_noise_and_other_thresholds():
    truth = GenModelParams(alpha=1e-3, beta=2e-9, gamma=3e-10, delta=2e-10, epsilon=5e-11, w_t=6)
    r = fit(to_csv(synthesize_measurements(truth, range(2, 16), [1e6, 1e7, 1e8], noise=0.002, seed=3)))
    assert r.w_t == 6
    assert r.alpha == pytest.approx(truth.alpha, rel=0.05)
    assert r.beta2_gamma == pytest.approx(2 * truth.beta + truth.gamma, rel=0.02)
    assert r.epsilon == pytest.approx(truth.epsilon, rel=0.1)
    assert r.max_relative < 0.02


def test_fit_reads_bytes():
    rows = synthesize_measurements(CPU_TESTBED, range(2, 12), [1e7, 1e8])
    text = "servers,bytes,time\n" + "".join(f"{r.servers},{r.size * 4!r},{r.time!r}\n" for r in rows)
    assert read_measurements(text)[0].size == pytest.approx(1e7)


@pytest.mark.parametrize("text,needle", [
    ("", "empty"),
    ("servers,time\n2,1\n3,1\n4,1\n5,1\n", "missing column 'size'"),
    ("servers,size\n2,1\n", "missing column 'time'"),
    ("servers,size,time\n2,1e6,abc\n3,1e6,1\n4,1e6,1\n5,1e6,1\n", "line 2: time is not a number"),
    ("servers,size,time\n2,-1e6,1\n3,1e6,1\n4,1e6,1\n5,1e6,1\n", "line 2: size must not be negative"),
    ("servers,size,time\n2,1e6,0.1\n3,1e6,0.2\n", "at least 4"),
    ("servers,size,time\n1.5,1e6,0.1\n3,1e6,0.2\n4,1e6,1\n5,1e6,1\n", "whole number"),
])
def test_malformed_csv_gives_one_line(text, needle):
    with pytest.raises(FitError) as exc:
        read_measurements(text)
    assert needle in str(exc.value) and "\n" not in str(exc.value)


# --------------------------------------------------------------------------------------------- schedule cost
def _ring8(bw=50, alpha=2):
    topo = load("ring(8)")
    return Topology(topo.names, topo.kinds, tuple(Link(l.src, l.dst, Fraction(bw), Fraction(alpha))
                                                  for l in topo.links))


def test_schedule_cost_without_new_terms_is_alpha_beta_time():
    topo = _ring8()
    sched = synthesize(topo, "ring", "allreduce").schedule
    zero = GenModelParams(w_t=9)
    for m in (1e3, 4e8):
        assert genmodel_time_us(topo, sched, m, zero)["total_us"] == pytest.approx(step_model_us(topo, sched, m))
    star = to_topology(single_switch(6))
    sched = synthesize(star, "sptree", "allreduce").schedule
    assert genmodel_time_us(star, sched, 4e8, zero)["total_us"] == pytest.approx(step_model_us(star, sched, 4e8))


def test_schedule_cost_ring_gamma_delta_and_star_incast():
    topo, m = _ring8(), 4e8
    s = m / 4
    g = genmodel_time_us(topo, synthesize(topo, "ring", "allreduce").schedule, m, MID)
    assert g["gamma_us"] == pytest.approx(7 / 8 * s * MID.gamma * 1e6)          # Table 2 ring row
    assert g["delta_us"] == pytest.approx(3 * 7 / 8 * s * MID.delta * 1e6)
    assert g["epsilon_us"] == 0
    star = to_topology(single_switch(12))                                        # sptree on a star is a CPS
    g = genmodel_time_us(star, synthesize(star, "sptree", "allreduce").schedule, m, MID)
    assert g["traced_through_switches"]
    assert g["epsilon_us"] == pytest.approx(2 * (12 - 9) * 11 / 12 * s * MID.epsilon * 1e6)
    assert g["delta_us"] == pytest.approx(13 / 12 * s * MID.delta * 1e6)


def test_tree_topology_units():
    topo = to_topology(single_switch(4))
    assert topo.n == 4 and len(topo.switch_nodes) == 1 and len(topo.links) == 8
    assert topo.links[0].bandwidth == Fraction(5, 8) and topo.links[0].alpha == 6580     # 4/6.4e-9/1e9 GB/s, us


def test_hierarchical_gpu_plan_adds_its_parts():
    h = hierarchical_cost(8, 4, 1e8, MID, TABLE5["root_sw"])
    assert h.steps == 2 * 7 + 2 and h.label == "8 × 4 hier"
    assert h.total == pytest.approx(ring_cost(8, 1e8, MID).total + cps_cost(4, 1e8 / 8, TABLE5["root_sw"]).total)


def test_bad_inputs_raise_params_error():
    with pytest.raises(ParamsError):
        GenModelParams(alpha=-1)
    with pytest.raises(ParamsError):
        ModelOptions(fan_in="everyone")
    with pytest.raises(ParamsError):
        best_plan(1, 1e8, MID)
    with pytest.raises(ParamsError):
        hcps_cost((1, 4), 1.0, MID)


# ----------------------------------------------------------------------------------------------------- CLI
def _cli(argv, capsys):
    parser = argparse.ArgumentParser(prog="studio")
    sub = parser.add_subparsers(dest="command", required=True)
    genmodel_cli.add_parser(sub)
    rc = genmodel_cli.run(parser.parse_args(argv))
    out = capsys.readouterr()
    return rc, out.out, out.err


def test_cli_plans_json_and_table(capsys):
    rc, out, _ = _cli(["genmodel", "plans", "--servers", "12", "--size", "1e8", "--json"], capsys)
    data = json.loads(out)
    assert rc == 0 and data["best"] == "6 × 2" and data["classic_best"] == "CPS"
    assert data["plans"][0]["total"] == pytest.approx(hcps_cost((6, 2), 1e8, MID).total)
    rc, out, _ = _cli(["genmodel", "plans", "--servers", "24", "--size", "1e7", "--alpha-steps", "3",
                       "--fan-in", "senders"], capsys)
    assert rc == 0 and "best: CPS" in out


def test_cli_gentree_and_fit(capsys, tmp_path):
    rc, out, _ = _cli(["genmodel", "gentree", "ss24", "--size", "1e8", "--alpha-steps", "3", "--json"], capsys)
    data = json.loads(out)
    assert rc == 0 and data["decisions"][0]["algorithm"] == "8 × 3" and data["servers"] == 24
    assert data["total_s"] <= min(b["total_s"] for b in data["baselines"].values())
    f = tmp_path / "runs.csv"
    f.write_text(to_csv(synthesize_measurements(CPU_TESTBED, range(2, 16), [1e7, 1e8])))
    rc, out, _ = _cli(["genmodel", "fit", str(f), "--json"], capsys)
    assert rc == 0 and json.loads(out)["w_t"] == 9
    rc, out, _ = _cli(["genmodel", "fit", str(f)], capsys)
    assert rc == 0 and "w_t        9" in out


def test_cli_gentree_paper_selection_and_simulator(capsys):
    """--select table2 gives Table 6's root plan on SYM384 (8 × 2 at 1e8); --paper-sim adds the Table 7
    reconstruction, whose Ring on SYM384 is the printed 5.742 s within 2 %."""
    rc, out, _ = _cli(["genmodel", "gentree", "sym384", "--size", "1e8", "--select", "table2", "--no-flatten",
                       "--paper-sim", "--json"], capsys)
    data = json.loads(out)
    assert rc == 0 and next(d for d in data["decisions"] if d["switch"] == "root")["algorithm"] == "8 × 2"
    assert data["paper_sim"]["Ring"]["total_s"] == pytest.approx(5.742, rel=0.02)
    rc, out, _ = _cli(["genmodel", "gentree", "ss32", "--size", "1e7", "--paper-sim"], capsys)
    assert rc == 0 and "paper simulator (Table 7 reconstruction): GenTree" in out and "RHD" in out


@pytest.mark.parametrize("argv,needle", [
    (["genmodel", "gentree", "tree(0x4)", "--size", "1e8"], "positive"),
    (["genmodel", "gentree", "ss24", "--size", "-1", "--paper-sim"], "positive number of floats"),
    (["genmodel", "gentree", "__import__('os')", "--size", "1e8"], "unknown tree kind"),
    (["genmodel", "gentree", "ss24; rm", "--size", "1e8"], "cannot read tree spec"),
    (["genmodel", "plans", "--servers", "1", "--size", "1e8"], "servers"),
    (["genmodel", "plans", "--servers", "8", "--size", "1e8", "--preset", "nope"], "unknown preset"),
    (["genmodel", "fit", "/nonexistent/runs.csv"], "cannot read"),
])
def test_cli_bad_input_is_one_line_exit_2(argv, needle, capsys):
    rc, out, err = _cli(argv, capsys)
    assert rc == 2 and needle in err and err.count("\n") == 1 and "Traceback" not in err


def test_cli_bad_csv(capsys, tmp_path):
    f = tmp_path / "bad.csv"
    f.write_text("servers,size\n2,1\n")
    rc, _, err = _cli(["genmodel", "fit", str(f)], capsys)
    assert rc == 2 and "missing column 'time'" in err and err.count("\n") == 1
