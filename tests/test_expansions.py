"""Expansion schedules (direct-connect paper section 5, App. D, A.6): every constructed schedule verifies and
matches what Table 3's theorems predict from its base."""
import json
from fractions import Fraction

import pytest

from solvers.core.cost import cost
from solvers.core.errors import NotApplicable
from solvers.directconnect.expansion import expand
from solvers.synthesize import synthesize
from solvers.core.verify import verify
from studio.cli import main
from topologies import parse_topology
from topologies.catalogue import BASES
from topologies.expression import parse, predicted_size

ACCEPTANCE = [
    ("line(bipartite(2))", 3, Fraction(1)),
    ("line(bipartite(4))", 3, Fraction(1)),
    ("line(bipartite(4),2)", 4, Fraction(33, 32)),            # 1.03125
    ("degree(uniring(1,4),2)", 4, Fraction(7, 8)),
    ("power(diamond(),2)", 6, Fraction(63, 64)),
    ("line(power(diamond(),2),2)", 8, Fraction(257, 256)),     # 1.00390625
]


@pytest.mark.parametrize("expr, steps, tau", ACCEPTANCE)
def test_cli_expansion_schedules(expr, steps, tau, capsys):
    assert main(["schedule", expr, "--algo", "expansion", "--json"]) == 0
    out = json.loads(capsys.readouterr().out)
    assert out["verified"] is True
    assert (out["steps"], Fraction(out["tb_factor_exact"])) == (steps, tau)
    assert (out["predicted_steps"], Fraction(out["predicted_tb_factor_exact"])) == (steps, tau)


# App. D's worked cases (digest tables of D.1-D.3 and A.6)
@pytest.mark.parametrize("expr, n, steps, tau", [
    ("line(bipartite(2),2)", 16, 4, Fraction(9, 8)),
    ("line(circulant(16,[3,4]))", 64, 4, Fraction(1)),
    ("degree(complete(3),2)", 6, 2, Fraction(5, 6)),
    ("degree(biring(2,5),2)", 10, 3, Fraction(9, 10)),
    ("degree(bipartite(4),3)", 24, 3, Fraction(23, 24)),
    ("power(biring(2,5),2)", 25, 4, Fraction(24, 25)),
    ("power(uniring(1,4),3)", 64, 9, Fraction(63, 64)),
    ("power(bipartite(2),2)", 16, 4, Fraction(15, 16)),
    ("bidir(uniring(1,5))", 5, 4, Fraction(4, 5)),
    ("bidir(dcirculant(4))", 6, 2, Fraction(5, 6)),
    ("product(uniring(1,4),uniring(1,8))", 32, 10, Fraction(31, 32)),
])
def test_appendix_d_cases(expr, n, steps, tau):
    built = expand(expr)
    assert built.topology.n == n
    assert verify(built.topology, built.schedule).ok
    c = cost(built.topology, built.schedule)
    assert (c.steps, c.tb_factor) == (steps, tau) == (built.prediction.steps, built.prediction.tb_factor)


def _single_expansions():
    cases = []
    for base in BASES:
        if parse_topology(base).n > 16:
            continue
        for template in ("line({})", "line({},2)", "degree({},2)", "degree({},3)", "power({},2)", "power({},3)",
                         "bidir({})"):
            expr = template.format(base)
            if predicted_size(parse(expr), 10 ** 9) < 300:
                cases.append(expr)
    return cases


SINGLE = _single_expansions()


def test_the_sweep_covers_every_small_base_and_expansion():
    small = [b for b in BASES if parse_topology(b).n <= 16]
    assert len(small) >= 35 and len(SINGLE) >= 150
    for kind in ("line(", "degree(", "power(", "bidir("):
        assert sum(e.startswith(kind) for e in SINGLE) >= 20


@pytest.mark.parametrize("expr", SINGLE)
def test_every_single_expansion_of_every_small_base(expr):
    """Verified, with the predicted steps and tb_factor: exactly where the theorems state equality (Thm 10, 11,
    12, A.6), and as an upper bound where they give one (Thm 7: a line graph whose base schedule is not an
    optimal BFB one or has a node with a single distinct out-neighbour)."""
    try:
        built = expand(expr)
    except NotApplicable as exc:
        # the only refusals: degree expansion of a graph with self-loops, and A.6 without a reverse symmetry
        assert "self-loops" in str(exc) or "reverse symmetry" in str(exc)
        return
    assert verify(built.topology, built.schedule).ok
    c = cost(built.topology, built.schedule)
    assert c.steps == built.prediction.steps
    if built.prediction.exact:
        assert c.tb_factor == built.prediction.tb_factor
    else:
        assert c.tb_factor <= built.prediction.tb_factor
    assert c.tb_factor >= c.tb_lower_bound


@pytest.mark.parametrize("expr", ["line(bipartite(3))", "power(kautz(2,1),2)", "degree(dcirculant(2),2)",
                                  "bidir(kautz(2,2))"])
@pytest.mark.parametrize("collective", ["reduce_scatter", "allreduce"])
def test_reduce_scatter_and_allreduce_by_expansion(expr, collective):
    topo = parse_topology(expr)
    result = synthesize(topo, "expansion", collective)
    ag = synthesize(topo, "expansion", "allgather")
    factor = 2 if collective == "allreduce" else 1
    assert result.verification.ok
    assert (result.cost.steps, result.cost.tb_factor) == (factor * ag.cost.steps, factor * ag.cost.tb_factor)


def test_expansion_refusals_are_one_line(capsys):
    assert main(["schedule", "line(gkautz(2,7))", "--algo", "expansion", "--collective", "rs"]) == 2
    err = capsys.readouterr().err
    assert "not reverse-symmetric" in err and err.count("\n") == 1
    assert main(["schedule", "bidir(gkautz(2,7))", "--algo", "expansion"]) == 2
    assert "reverse symmetry" in capsys.readouterr().err


def test_expansion_needs_an_expression(tmp_path, capsys):
    from topologies.files import write_topology

    path = tmp_path / "k.json"
    write_topology(parse_topology("bipartite(2)"), path)
    assert main(["schedule", str(path), "--algo", "expansion"]) == 2
    assert "built from an expression" in capsys.readouterr().err
