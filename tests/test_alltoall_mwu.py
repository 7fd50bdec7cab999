"""The Frank-Wolfe bracket of the all-to-all MCF LP (3) (``solvers/directconnect/alltoall_fw.py``): it holds the
interior point optimum, its lower end is a flow that meets every capacity and keeps f of every source's flow at
every node, it stops at its target gap, and a time limit answers with the bracket it has."""
import json

import numpy as np
import pytest
from hypothesis import given, settings

from solvers.directconnect.alltoall import FW_MIN_NODES, _merged_links, mcf_rate
from solvers.directconnect.alltoall_fw import solve
from studio.cli import main
from topologies import parse_topology

from .helpers import strongly_connected_topologies

REL = 1e-9      # float round-off allowed on either end of the bracket


def check_flow(topo, lower: float, flow: np.ndarray) -> None:
    """The flow y[s, l] on the merged links is feasible for LP (3) at f = lower: y >= 0, every link within its
    capacity, and every node u != s takes in at least ``lower`` more of source s's flow than it sends on."""
    src, dst, cap = _merged_links(topo)
    n = topo.num_nodes
    assert flow.shape == (n, len(cap)) and flow.min() >= 0
    assert np.all(flow.sum(axis=0) <= cap * (1 + REL))
    for s in range(n):
        net = np.bincount(dst, flow[s], n) - np.bincount(src, flow[s], n)
        assert np.all(np.delete(net, s) >= lower * (1 - REL))


def bracket(topo, gap=1e-3, limit=20.0):
    src, dst, cap = _merged_links(topo)
    return solve(topo.num_nodes, src, dst, cap, gap, limit)


@settings(max_examples=25, deadline=None)
@given(strongly_connected_topologies(max_nodes=8, switches=False))
def test_bracket_holds_the_optimum_on_random_digraphs(topo):
    exact = mcf_rate(topo, method="ipm").f
    b = bracket(topo, gap=1e-2, limit=0.3)        # the bracket holds however far it got
    assert b.lower <= exact * (1 + REL) and exact <= b.upper * (1 + REL)
    check_flow(topo, b.lower, b.flow)


@pytest.mark.parametrize("expr, gap", [("circulant(16,[3,4])", 1e-3), ("kautz(2,3)", 1e-3), ("torus(4,4)", 1e-3),
                                       ("gkautz(3,32)", 5e-3), ("torus(8,8)", 1e-9), ("gkautz(4,64)", 1e-2)])
def test_bracket_meets_its_target_around_the_exact_optimum(expr, gap):
    topo = parse_topology(expr)
    exact = mcf_rate(topo, method="ipm").f
    b = bracket(topo, gap, limit=30.0)
    assert b.reached and b.gap <= gap
    assert b.lower <= exact * (1 + REL) and exact <= b.upper * (1 + REL)
    check_flow(topo, b.lower, b.flow)


def test_hop_lengths_give_the_table_7_bound_first():
    # one iteration: the upper end is |E| / sum of hop distances, the bound Table 7's KNOWN_MCF rows quote
    topo = parse_topology("circulant(16,[3,4])")
    b = bracket(topo, gap=0.999, limit=5.0)
    from topologies.properties import distance_matrix

    d = np.asarray(distance_matrix(topo), dtype=float)
    assert b.iterations == 1 and b.upper == pytest.approx(len(topo.links) / d.sum(), rel=1e-12)


def test_time_limit_answers_with_a_valid_bracket():
    topo = parse_topology("gkautz(4,64)")
    exact = mcf_rate(topo, method="ipm").f
    r = mcf_rate(topo, time_limit=0.05, method="fw", target_gap=1e-9)
    assert r.method == "fw" and not r.reached and r.gap > 1e-9 and r.seconds < 5
    assert r.f <= exact * (1 + REL) <= r.upper * (1 + 2 * REL)


def test_large_fabrics_default_to_frank_wolfe():
    topo = parse_topology("shifted_ring(1024)")
    assert topo.num_nodes >= FW_MIN_NODES
    r = mcf_rate(topo, time_limit=0.5)
    assert r.method == "fw" and 0 < r.f <= r.upper
    with pytest.raises(ValueError, match="target gap"):
        mcf_rate(parse_topology("ring(4)"), method="fw", target_gap=0)


def test_cli_time_limit_prints_the_bracket(capsys):
    assert main(["alltoall", "gkautz(4,64)", "--method", "fw", "--time-limit", "0.01", "--no-cache"]) == 0
    text = capsys.readouterr().out
    assert "bracket [" in text and "(time limit)" in text
    assert main(["alltoall", "gkautz(4,64)", "--method", "fw", "--time-limit", "0.01", "--json", "--no-cache"]) == 0
    out = json.loads(capsys.readouterr().out)
    assert out["method"] == "fw" and out["mcf_gap_reached"] is False
    assert out["mcf_rate"] <= 0.021708 <= out["mcf_rate_upper"]          # the LP optimum (test_alltoall's oracle)
    assert main(["alltoall", "ring(4)", "--time-limit", "-1"]) == 2


def test_pdlp_time_limit_answers_with_its_bracket():
    # issue 57: a time limit never raises once a positive lower end is certified; reached says the limit stopped it
    # (even when the bracket is already narrower than 1e-3). The bracket overlaps the unlimited solve's.
    from solvers.core.errors import NotApplicable

    topo = parse_topology("gkautz(4,128)")
    full = mcf_rate(topo, method="pdlp")
    assert full.reached and full.gap <= 1e-6
    answers = []
    for limit in (0.05, 0.2, 0.8):
        try:
            r = mcf_rate(topo, time_limit=limit, method="pdlp")
        except NotApplicable as exc:      # only when nothing feasible is certified yet: one line that says so
            assert "limit" in str(exc) and "\n" not in str(exc)
            continue
        answers.append(r)
        assert r.method == "pdlp" and 0 < r.f <= r.upper
        assert r.f <= full.upper * (1 + REL) and full.f <= r.upper * (1 + REL)
    assert answers and not answers[0].reached


def test_cli_pdlp_time_limit_prints_the_bracket(capsys):
    assert main(["alltoall", "gkautz(4,128)", "--method", "pdlp", "--time-limit", "0.3", "--no-cache"]) == 0
    text = capsys.readouterr().out
    assert "bracket [" in text and "(time limit)" in text
    assert main(["alltoall", "gkautz(4,128)", "--method", "pdlp", "--time-limit", "0.3", "--json",
                 "--no-cache"]) == 0
    out = json.loads(capsys.readouterr().out)
    assert out["method"] == "pdlp" and out["mcf_gap_reached"] is False and 0 < out["mcf_rate"] <= out["mcf_rate_upper"]
