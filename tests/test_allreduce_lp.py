"""ForestColl's allreduce LP (6) (App. E): it equals RS+AG (N x*/2) where RS+AG is optimal, and always lies
between RS+AG and the least compute-separating cut."""
import json
from fractions import Fraction

import pytest
from hypothesis import given, settings
from hypothesis import strategies as st

from solvers.directconnect.allreduce_lp import allreduce_lp, allreduce_lp_model, model_size
from solvers.core.errors import NotApplicable
from topologies import COMPUTE, SWITCH, Link, Topology, parse_topology

from .helpers import compute_cuts


def cut_bounds(topo: Topology) -> tuple[Fraction, Fraction]:
    """(x*, lambda) by brute force over every node subset S (switches included; at most 12 nodes).

    1/x* = max over S not containing all compute nodes of |S ∩ V_c| / B_out(S) (ForestColl eq. (1));
    lambda = min over S holding some but not all compute nodes of B_out(S). Every allreduce rate is at most lambda:
    the LP's broadcast flows give B^BC_out(S) >= x(S) and its reduce flows B^RE_out(S) >= x(V_c - S).
    """
    assert topo.num_nodes <= 12
    cuts = list(compute_cuts(topo))
    assert all(b_out > 0 for _, b_out in cuts), "not strongly connected"
    return 1 / max(Fraction(k) / b_out for k, b_out in cuts), min(b_out for _, b_out in cuts)


def switched(groups: list[tuple[str, list[str], Fraction]], gpus: list[str]) -> Topology:
    """GPUs plus switches: each (switch, its GPUs, bandwidth) links the switch and each GPU both ways."""
    names = gpus + [s for s, _, _ in groups]
    kinds = [COMPUTE] * len(gpus) + [SWITCH] * len(groups)
    idx = {x: i for i, x in enumerate(names)}
    links = []
    for s, members, bw in groups:
        for g in members:
            links += [Link(idx[g], idx[s], bw), Link(idx[s], idx[g], bw)]
    return Topology(tuple(names), tuple(kinds), tuple(links), name="hand-built")


STAR = switched([("sw", ["g0", "g1", "g2", "g3"], Fraction(10))], ["g0", "g1", "g2", "g3"])
TWO_CLUSTERS = switched([("w1", ["a0", "a1"], Fraction(10)), ("w2", ["b0", "b1"], Fraction(10)),
                         ("w0", ["a0", "a1", "b0", "b1"], Fraction(1))], ["a0", "a1", "b0", "b1"])


@pytest.mark.parametrize("topo, rs_ag", [
    (parse_topology("biring(4)"), Fraction(4, 3)),      # 1/x* = 3/2 (all but one node), N x*/2 = 4/3
    (parse_topology("complete(4)"), Fraction(2)),       # 1/x* = 3/3
    (STAR, Fraction(20, 3)),                            # 1/x* = 3/10 (three GPUs and the switch)
    (TWO_CLUSTERS, Fraction(2)),                        # 1/x* = 2/2 (one cluster with its switch)
], ids=["biring4", "complete4", "star4", "two-clusters"])
def test_lp_equals_rs_ag_where_rs_ag_is_optimal(topo, rs_ag):
    x_star, _ = cut_bounds(topo)
    assert topo.n * x_star / 2 == rs_ag
    r = allreduce_lp(topo)
    assert r.total_rate == pytest.approx(float(rs_ag), rel=1e-6)
    assert sum(r.x.values()) == pytest.approx(r.total_rate, rel=1e-9)
    assert set(r.x) == {topo.names[v] for v in topo.compute_nodes}      # switches are never roots
    assert r.variables == model_size(topo)
    assert r.switched == bool(topo.switch_nodes)


@st.composite
def small_bidirectional(draw):
    """A connected bidirectional graph on 3-5 compute nodes: a random spanning tree plus random extra cables."""
    n = draw(st.integers(3, 5))
    cables = {(draw(st.integers(0, v - 1)), v) for v in range(1, n)}
    extra = [(u, v) for u in range(n) for v in range(u + 1, n) if (u, v) not in cables]
    cables |= {e for e in extra if draw(st.booleans())}
    links = []
    for u, v in sorted(cables):
        bw = Fraction(draw(st.integers(1, 3)))
        links += [Link(u, v, bw), Link(v, u, bw)]
    return Topology(tuple(str(i) for i in range(n)), (COMPUTE,) * n, tuple(links))


@settings(max_examples=15, deadline=None)
@given(small_bidirectional())
def test_lp_between_rs_ag_and_the_separating_cut(topo):
    x_star, lam = cut_bounds(topo)
    rate = allreduce_lp(topo).total_rate
    assert rate >= float(topo.n * x_star / 2) * (1 - 1e-6)     # RS+AG is a feasible point of LP (6)
    assert rate <= float(lam) * (1 + 1e-6)                      # and lambda <= N x* caps every allreduce
    assert lam <= topo.n * x_star


def test_parallel_links_add_up():
    one = Topology.from_edges(3, [(0, 1), (1, 0), (1, 2), (2, 1), (2, 0), (0, 2)], bandwidth=2)
    two = Topology.from_edges(3, [(0, 1), (1, 0), (1, 2), (2, 1), (2, 0), (0, 2)] * 2)
    assert allreduce_lp(one).total_rate == pytest.approx(allreduce_lp(two).total_rate, rel=1e-9)
    assert allreduce_lp(two).total_rate == pytest.approx(3.0, rel=1e-6)    # complete(3) at 2: N x*/2 = 3*2/2


def test_not_strongly_connected_is_refused():
    with pytest.raises(NotApplicable, match="reach"):
        allreduce_lp(Topology.from_edges(3, [(0, 1), (1, 2)]))        # a directed path
    cut_off = Topology(("g0", "g1", "sw"), (COMPUTE, COMPUTE, SWITCH),
                       (Link(0, 2, Fraction(1)), Link(2, 1, Fraction(1))))  # g1 cannot reach g0
    with pytest.raises(NotApplicable, match="reach"):
        allreduce_lp(cut_off)


def test_too_large_is_refused_without_building():
    big = switched([("sw", [f"g{i}" for i in range(48)], Fraction(1))], [f"g{i}" for i in range(48)])
    assert model_size(big) > 300_000
    with pytest.raises(NotApplicable, match="variables"):
        allreduce_lp(big)


@pytest.mark.parametrize("topo", [STAR, TWO_CLUSTERS], ids=["star4", "two-clusters"])
def test_routing_by_source_has_the_same_optimum(topo):
    by_pair, by_source = allreduce_lp(topo), allreduce_lp(topo, routing="source")
    assert by_source.total_rate == pytest.approx(by_pair.total_rate, rel=1e-6)
    assert by_source.variables == model_size(topo, "source") < model_size(topo)
    with pytest.raises(ValueError, match="routing"):
        allreduce_lp_model(topo, routing="path")


def test_model_indices_use_node_names():
    m = allreduce_lp_model(TWO_CLUSTERS)
    assert set(m.x) == {"a0", "a1", "b0", "b1"}
    assert ("a0", "b1") in m.bp and ("a0", "b1", "a0", "w0") in m.h and ("a0", "b1", "b1", "w0") not in m.h


@st.composite
def small_directed(draw):
    """A strongly connected digraph on 3-5 compute nodes: a unit directed ring plus random one-way links."""
    n = draw(st.integers(3, 5))
    links = [Link(u, (u + 1) % n, Fraction(1)) for u in range(n)]
    links += [Link(u, v, Fraction(draw(st.integers(1, 3)))) for u in range(n) for v in range(n)
              if u != v and draw(st.booleans())]
    return Topology(tuple(str(i) for i in range(n)), (COMPUTE,) * n, tuple(links))


def test_directed_ring_and_one_sided_chord():
    # unidirectional ring of 3: RS+AG along the ring, 2 (N-1)/N M / 1 -> rate 3/4
    assert allreduce_lp(Topology.from_edges(3, [(0, 1), (1, 2), (2, 0)])).total_rate == pytest.approx(0.75, rel=1e-6)
    # ring of 4 plus a one-way chord 2 -> 1 of bandwidth 2; its transpose has the same optimum (2/3)
    topo = Topology(tuple("0123"), (COMPUTE,) * 4, (Link(0, 1, Fraction(1)), Link(1, 2, Fraction(1)),
                    Link(2, 3, Fraction(1)), Link(3, 0, Fraction(1)), Link(2, 1, Fraction(2))))
    assert allreduce_lp(topo).total_rate == pytest.approx(2 / 3, rel=1e-6)
    assert allreduce_lp(topo.transpose()).total_rate == pytest.approx(2 / 3, rel=1e-6)


@settings(max_examples=10, deadline=None)
@given(small_directed())
def test_transpose_has_the_same_optimum(topo):
    # reversing every link swaps the reduce in-trees and the broadcast out-trees: LP(G) = LP(G^T). This holds only
    # when the reduce flow runs along the links' own direction, as in-trees must.
    assert allreduce_lp(topo).total_rate == pytest.approx(allreduce_lp(topo.transpose()).total_rate, rel=1e-6)


def test_lp_beats_rs_ag_on_a_heterogeneous_triangle():
    # cables 0-1 and 1-2 at 1, 0-2 at 4: RS+AG is held to N x*/2 = 3/2 by node 1 (1/x* = 2/2 for S = {0, 2});
    # with node 1 no root (x_1 = 0) it only sends M and receives M over 2 each way: rate 2 = lambda (S = {1})
    topo = Topology.from_edges(3, [(0, 1), (1, 0), (1, 2), (2, 1)] + [(0, 2), (2, 0)] * 4)
    x_star, lam = cut_bounds(topo)
    assert (topo.n * x_star / 2, lam) == (Fraction(3, 2), 2)
    r = allreduce_lp(topo)
    assert r.total_rate == pytest.approx(2.0, rel=1e-6)
    assert r.x["1"] == pytest.approx(0.0, abs=1e-6)


def test_an_unused_switch_changes_nothing():
    names = TWO_CLUSTERS.names + ("spare",)
    idle = Topology(names, TWO_CLUSTERS.kinds + (SWITCH,), TWO_CLUSTERS.links)
    for routing in ("pair", "source"):
        assert allreduce_lp(idle, routing=routing).total_rate == pytest.approx(2.0, rel=1e-6)


# ---------------------------------------------------------------------------- the doors: CLI and Clusters page
def test_cli_prints_the_lp_beside_rs_ag(capsys):
    """``allreduce-lp``: the LP's rate, every GPU's root share and RS+AG's N x*/2. On two boxes of two GPUs
    (Fig. 2's shape) the box cut bounds every allreduce at 2, which RS+AG reaches (1/x* = 1 by brute force)."""
    from studio.cli import main

    expr = "cluster(2,2,10,1)"
    assert main(["allreduce-lp", expr, "--json"]) == 0
    out = json.loads(capsys.readouterr().out)
    x_star, lam = cut_bounds(parse_topology(expr))
    assert Fraction(out["rs_ag_rate_exact"]) == 4 * x_star / 2 == lam == 2
    assert out["lp_rate_GBps"] == pytest.approx(2, rel=1e-6) and out["lp_over_rs_ag"] == pytest.approx(1, rel=1e-6)
    assert sum(out["root_shares"].values()) == pytest.approx(1) and min(out["root_shares"].values()) >= 0
    assert out["switched"] and out["routing"] == "source"
    assert main(["allreduce-lp", expr]) == 0
    text = capsys.readouterr().out
    assert "lp_rate_GBps" in text and "root shares" in text and "b1.g1" in text


def test_cli_refuses_too_large_and_time_outs_in_one_line(capsys):
    from studio.cli import main

    assert model_size(parse_topology("cluster(1,64,1,1)"), "source") > 300_000
    assert main(["allreduce-lp", "cluster(1,64,1,1)"]) == 2
    err = capsys.readouterr()
    assert not err.out and err.err.count("\n") == 1 and "variables" in err.err
    assert main(["allreduce-lp", "dgx_a100(boxes=2)", "--time-limit", "0.001"]) == 2
    err = capsys.readouterr()
    assert not err.out and err.err.count("\n") == 1 and "time limit of 0.001 s" in err.err
    assert main(["allreduce-lp", "cluster(2,2,10,1)", "--time-limit", "0"]) == 2
    assert "positive" in capsys.readouterr().err


def test_clusters_page_solves_the_lp_on_request():
    from streamlit.testing.v1 import AppTest

    from .conftest import ROOT, shown_metrics, switch_page

    at = switch_page(AppTest.from_file(str(ROOT / "app.py"), default_timeout=180).run(), "clusters").run()
    at.radio(key="c_source").set_value("expression").run()
    at.text_input(key="c_expr").set_value("cluster(2,2,10,1)").run()
    at.segmented_control(key="c_view").set_value("Allreduce LP").run()
    assert not at.exception and not at.error and not at.dataframe        # solved only on request
    at.button(key="c_lp_solve").click().run()
    assert not at.exception and not at.error
    shown = {m.label: m.value for m in shown_metrics(at)}
    assert float(shown["LP rate (GB/s)"]) == pytest.approx(2) and shown["RS+AG rate (GB/s)"] == "2.00"
    shares = at.dataframe[0].value
    assert len(shares) == 4 and shares["share of M"].sum() == pytest.approx(1)


def test_cli_answers_a_repeated_question_from_the_results_cache(capsys, monkeypatch, tmp_path):
    """The LP takes 10-130 s on real clusters, so ``allreduce-lp`` keeps its whole reply as the other solving
    commands do: the same question again is answered word for word from the cache, ``--no-cache`` solves again."""
    from studio.cli import main

    monkeypatch.setenv("TOPOLOGY_STUDIO_CACHE", str(tmp_path / "cache"))
    argv = ["allreduce-lp", "cluster(2,2,10,1)", "--json"]
    assert main(argv) == 0
    first = capsys.readouterr()
    assert "answered from the results cache" not in first.err
    assert main(argv) == 0
    again = capsys.readouterr()
    assert again.out == first.out and "answered from the results cache" in again.err
    assert main(argv + ["--no-cache"]) == 0
    fresh = capsys.readouterr()
    assert "answered from the results cache" not in fresh.err
    assert json.loads(fresh.out)["lp_rate_GBps"] == json.loads(first.out)["lp_rate_GBps"]
