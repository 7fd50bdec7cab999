"""All-to-all throughput by the multi-commodity-flow LP (3) (direct-connect App. A.5)."""
import json
from fractions import Fraction

import pytest
from hypothesis import given, settings

from solvers.directconnect.alltoall import mcf_model, mcf_rate, moore_rate_bound
from solvers.directconnect.bfb_lp import write_lp
from studio.cli import main
from topologies import parse_topology

from .helpers import strongly_connected_topologies


@pytest.mark.parametrize("expr, f", [("line(bipartite(4))", 0.057143), ("gkautz(4,64)", 0.021708)])
def test_issue_oracles(expr, f):
    assert mcf_rate(parse_topology(expr)).f == pytest.approx(f, abs=1e-5)


def test_complete_graph_rate_is_one_and_the_bound_holds():
    assert mcf_rate(parse_topology("complete(5)")).f == pytest.approx(1.0, abs=1e-9)
    for expr in ["circulant(16,[3,4])", "kautz(2,3)", "torus(4,4)"]:
        topo = parse_topology(expr)
        r = mcf_rate(topo)
        assert r.f <= float(moore_rate_bound(topo.n, 4 if "kautz" not in expr else 2)) + 1e-9


def test_moore_bound_matches_the_paper_rows():
    assert moore_rate_bound(32, 4) == Fraction(4, 69)        # Table 7 prints 5.80e-2
    assert round(float(moore_rate_bound(1024, 4)), 7) == 8.571e-4


def test_time_conversion_matches_table_4_units():
    # Π_{4,1024}: f = 8.01e-4 -> 409.1 us for 2^20 bytes at 100 Gb/s (A.5.3)
    from solvers.directconnect.alltoall import AllToAll

    assert AllToAll(8.01e-4, 1024, 4, 0.0).time_us(2 ** 20, 12.5) == pytest.approx(409.09, abs=0.01)


def test_pyomo_model_agrees_and_writes_lp():
    from pyomo.contrib.solver.common.factory import SolverFactory
    import pyomo.environ as pyo

    topo = parse_topology("circulant(8,[2,3])")
    model = mcf_model(topo)
    SolverFactory("highs").solve(model)
    assert pyo.value(model.f) == pytest.approx(mcf_rate(topo).f, abs=1e-7)
    text = write_lp(model)
    assert "max" in text and "capacity" in text


def test_cli_alltoall(capsys):
    assert main(["alltoall", "line(bipartite(4))", "--bytes", str(2 ** 20), "--json"]) == 0
    out = json.loads(capsys.readouterr().out)
    assert out["mcf_rate"] == pytest.approx(0.057143, abs=1e-5)
    assert out["alltoall_time_us"] == pytest.approx(2 ** 20 / 12.5e3 * 4 / (32 * out["mcf_rate"]))
    assert main(["alltoall", "ring(4)", "--bytes", "0"]) == 2


@pytest.mark.parametrize("expr, f, tolerance", [
    ("ag24()", 5.26e-2, 5e-5),                 # Table 7: DistReg(4,32)
    ("power(diamond(),2)", 1.87e-2, 1e-4),     # Table 7: Diamond^{□2} (our reconstruction gives 0.01875)
])
def test_table7_rates(expr, f, tolerance):
    assert mcf_rate(parse_topology(expr)).f == pytest.approx(f, abs=tolerance)


@settings(max_examples=40, deadline=None)
@given(strongly_connected_topologies(max_nodes=10, switches=False))
def test_pdlp_bracket_holds_the_interior_point_optimum(topo):
    """PDLP's certified bracket [f, upper] contains the IPM optimum of LP (3) and is tight, on random multigraphs
    with self-loops, parallel links and bandwidths 1..3."""
    if topo.num_nodes < 2:
        return
    fast, ref = mcf_rate(topo), mcf_rate(topo, method="ipm")
    assert fast.method == "pdlp" and fast.f <= ref.f + 1e-9 and ref.f <= fast.upper + 1e-9
    assert fast.gap <= 1e-5 and fast.f == pytest.approx(ref.f, rel=1e-5)


def test_table7_at_256_and_the_reference_method():
    r = mcf_rate(parse_topology("debruijn(4,4)"))
    assert r.f == pytest.approx(4.04e-3, abs=5e-6) and r.gap < 1e-4          # Table 7: DBJ(4,4) 4.04e-3
    with pytest.raises(ValueError, match="unknown MCF method"):
        mcf_rate(parse_topology("ring(3)"), method="simplex")


def test_links_of_one_bandwidth_give_the_unit_rate_and_time(capsys):
    """Issue 23: the rate is in units of the fastest link, so a fabric written with 12 GB/s links has the rate, the
    time and the Moore bound of the same graph with unit links (before: 12 times the rate, above its own bound);
    links of two bandwidths give a rate between the slow and the fast link's unit rates (in IPM and PDLP)."""
    outs = []
    for expr in ("mesh(4,4)", "mesh(4,4,bw=12)"):
        assert main(["alltoall", expr, "--json"]) == 0
        outs.append(json.loads(capsys.readouterr().out))
    unit, fast = outs
    assert fast["mcf_rate"] == pytest.approx(unit["mcf_rate"], abs=1e-6) and unit["mcf_rate"] == pytest.approx(
        0.0625, abs=1e-6)
    assert fast["alltoall_time_us"] == pytest.approx(unit["alltoall_time_us"], rel=1e-5)
    assert fast["mcf_rate"] <= fast["mcf_rate_bound"]
    mixed = parse_topology("hetero_mesh(4,4,bw=12,bw_y=3)")
    for method in ("pdlp", "ipm"):
        f = mcf_rate(mixed, method=method).f
        assert 0.0625 * 3 / 12 - 1e-6 <= f <= 0.0625 + 1e-6 and f < 0.0625 * 0.99
