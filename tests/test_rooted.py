"""Rooted collectives (broadcast, reduce, gather, scatter): the verifier's pre- and postconditions, the bounds, the
synthesizers that serve them, TACOS Table IV on the 6x6 mesh, and the CLI's --root."""
import json
from fractions import Fraction

import pytest
from hypothesis import given, settings, strategies as st

from solvers import synthesize
from solvers.core.cost import steps_lower_bound, tb_lower_bound
from solvers.core.errors import NotApplicable
from solvers.core.schedule import ONE, ZERO, Collective, Schedule, Transfer
from solvers.core.transform import reverse
from solvers.core.verify import verify
from solvers.runtime import Execution, simulate
from studio.cli import main
from topologies import load
from topologies.model import COMPUTE, Link, Topology
from topologies.properties import eccentricity

from .helpers import star

ROOTED = ("broadcast", "reduce", "gather", "scatter")


def _link(topo, a, b):
    return next(i for i, l in enumerate(topo.links) if l.src == a and l.dst == b)


def _line(n: int) -> Topology:
    links = []
    for i in range(n - 1):
        links += [Link(i, i + 1, Fraction(1)), Link(i + 1, i, Fraction(1))]
    return Topology(tuple(str(i) for i in range(n)), (COMPUTE,) * n, tuple(links), name=f"line{n}")


# ------------------------------------------------------------------------------------------------- the verifier
def test_broadcast_on_a_line_verifies_and_a_missing_hop_fails():
    topo = _line(3)
    hops = [(0, 1, 1), (1, 2, 2)]
    full = [Transfer(s, ZERO, ONE, _link(topo, a, b), t) for a, b, t in hops for s in range(3)]
    assert verify(topo, Schedule(Collective.BROADCAST, full, root=0)).ok
    short = verify(topo, Schedule(Collective.BROADCAST, full[:3], root=0))
    assert not short.ok and "broadcast not complete: 2 ends without shard 0" in short.errors[0]
    # the same transfers from another root: node 1 does not hold what it forwards in step 1
    wrong = verify(topo, Schedule(Collective.BROADCAST, full, root=2))
    assert not wrong.ok and "does not hold" in wrong.errors[0]


def test_reduce_counts_every_contribution_exactly_once():
    topo = _line(3)
    up = [Transfer(s, ZERO, ONE, _link(topo, 2, 1), 1, True) for s in range(3)]
    up += [Transfer(s, ZERO, ONE, _link(topo, 1, 0), 2, True) for s in range(3)]
    assert verify(topo, Schedule(Collective.REDUCE, up, root=0)).ok
    twice = up + [Transfer(0, ZERO, ONE, _link(topo, 1, 0), 3, True)]
    bad = verify(topo, Schedule(Collective.REDUCE, twice, root=0))
    assert not bad.ok and "twice" in bad.errors[0]
    partial = verify(topo, Schedule(Collective.REDUCE, up[3:], root=0))
    assert not partial.ok and "missing the contributions of {2}" in partial.errors[0]


def test_gather_and_scatter_postconditions():
    topo = _line(3)
    gather = [Transfer(1, ZERO, ONE, _link(topo, 1, 0), 1), Transfer(2, ZERO, ONE, _link(topo, 2, 1), 1),
              Transfer(2, ZERO, ONE, _link(topo, 1, 0), 2)]
    assert verify(topo, Schedule(Collective.GATHER, gather, root=0)).ok
    missing = verify(topo, Schedule(Collective.GATHER, gather[:2], root=0))
    assert not missing.ok and "gather not complete: 0 ends without shard 2" in missing.errors[0]
    # a gather reversed on the transpose is a scatter from the same root, copies both ways
    scatter = reverse(Schedule(Collective.GATHER, gather, root=0))
    assert scatter.collective is Collective.SCATTER and not any(t.reduce for t in scatter.transfers)
    assert verify(topo.transpose(), scatter).ok


def test_root_is_required_and_must_be_a_compute_node():
    with pytest.raises(ValueError, match="needs a root"):
        Schedule(Collective.BROADCAST, [])
    with pytest.raises(ValueError, match="has no root"):
        Schedule(Collective.ALLGATHER, [], root=0)
    topo = star(3)
    bad = verify(topo, Schedule(Collective.BROADCAST, [], root=3))
    assert not bad.ok and "root that is a compute node" in bad.errors[0]


# ------------------------------------------------------------------------------------------------- the bounds
def test_bounds_are_the_roots_eccentricity_and_its_links():
    topo = load("mesh(6,6)")
    assert steps_lower_bound(topo, Collective.BROADCAST, 14) == 6 == eccentricity(topo, 14)
    assert steps_lower_bound(topo, Collective.REDUCE, 0) == 10
    # a gather's root takes in 35 of 36 shards over its 4 links of 1 (B = 2, the corners' egress)
    assert tb_lower_bound(topo, Collective.GATHER, 14) == Fraction(35, 36) * 2 / 4
    # a broadcast's corner receiver has 2 links in: all of M through them
    assert tb_lower_bound(topo, Collective.BROADCAST, 14) == 1
    with pytest.raises(ValueError, match="needs the root"):
        tb_lower_bound(topo, Collective.SCATTER)


@settings(max_examples=25, deadline=None)
@given(st.integers(2, 64), st.data())
def test_one_chunk_tacos_broadcast_takes_the_roots_eccentricity(n, data):
    """On a random strongly connected digraph with equal links, TACOS's one-chunk broadcast takes exactly the
    root's eccentricity in steps, and its reduce the eccentricity on the transposed graph."""
    order = data.draw(st.permutations(range(n)))
    edges = {(order[i], order[(i + 1) % n]) for i in range(n)}
    edges |= set(data.draw(st.lists(st.tuples(st.integers(0, n - 1), st.integers(0, n - 1)), max_size=2 * n)))
    links = tuple(Link(a, b, Fraction(1)) for a, b in sorted(edges) if a != b)
    topo = Topology(tuple(str(i) for i in range(n)), (COMPUTE,) * n, links, name="random")
    root = data.draw(st.integers(0, n - 1))
    out = synthesize(topo, "tacos", "broadcast", root=root, total_bytes=1e6)
    assert out.verification.ok and out.schedule.steps == eccentricity(topo, root) == out.cost.steps_lower_bound
    back = synthesize(topo, "tacos", "reduce", root=root, total_bytes=1e6)
    assert back.verification.ok and back.schedule.steps == eccentricity(topo, root, inward=True)


# --------------------------------------------------------------------------------------------- the synthesizers
@pytest.mark.parametrize("algo,colls", [("tacos", ROOTED), ("tacos_ilp", ROOTED), ("taccl_like", ROOTED),
                                        ("sptree", ("broadcast", "reduce")), ("chain", ("broadcast", "reduce")),
                                        ("binomial", ("broadcast", "reduce")),
                                        ("direct", ("broadcast", "gather", "scatter")),
                                        ("teccl", ROOTED)])
def test_every_rooted_synthesizer_verifies(algo, colls):
    for expr, root in (("mesh(3,3)", 4), ("ring(5)", 2), ("dgx_a100(boxes=1)", 3)):
        if algo in ("tacos_ilp", "taccl_like", "teccl") and expr.startswith("dgx"):
            continue
        topo = load(expr)
        for coll in colls:
            r = synthesize(topo, algo, coll, root=root, total_bytes=1 << 20)
            assert r.verification.ok and r.schedule.collective.value == coll
            assert r.schedule.root is not None and r.cost.steps >= r.cost.steps_lower_bound > 0


def test_a_rooted_collective_needs_a_synthesizer_that_builds_it():
    topo = load("ring(4)")
    with pytest.raises(NotApplicable, match="ring does not build broadcast"):
        synthesize(topo, "ring", "broadcast")
    with pytest.raises(NotApplicable, match="direct reduce needs relays"):
        synthesize(topo, "direct", "reduce")
    with pytest.raises(NotApplicable, match="has no root"):
        synthesize(topo, "ring", "allgather", root=1)
    with pytest.raises(NotApplicable, match="is not a rank"):
        synthesize(topo, "tacos", "broadcast", root=9)


# ------------------------------------------------------------------------------------------ TACOS Table IV (6x6)
def _time(r) -> float:
    return simulate(r.topology, r.schedule, 1 << 20, Execution(slices=1)).time_us


@pytest.fixture(scope="module")
def table_iv():
    """Table IV's set-up: a 6x6 mesh, one chunk; the root is not stated in the paper: a corner (NPU 0)."""
    topo = load("mesh(6,6)")
    out = {}
    for coll in ROOTED:
        for algo in ("tacos_ilp", "taccl_like", "direct"):
            if (algo, coll) == ("direct", "reduce"):
                # TACOS prices Direct's reduce as its broadcast reversed (one row of Table IV); the IR has no
                # unreduced relays, so it is that broadcast on the transpose, which prices the same
                r = synthesize(topo.transpose(), "direct", "broadcast", root=0, total_bytes=1 << 20)
            else:
                r = synthesize(topo, algo, coll, root=0, total_bytes=1 << 20)
            assert r.verification.ok
            out[algo, coll] = r
    return topo, out


def test_table_iv_broadcast_reduce(table_iv):
    topo, out = table_iv
    for coll in ("broadcast", "reduce"):
        ilp = out["tacos_ilp", coll]
        assert ilp.detail.status == "optimal" and ilp.schedule.steps == 10 == ilp.cost.steps_lower_bound
        assert _time(out["taccl_like", coll]) / _time(ilp) == pytest.approx(1.00)          # paper: 1.00
        # Direct: every destination's copy on its own shortest path; the root's busier link carries 30 of the 35
        # copies, one chunk time each, against the tree's 10 hops (paper 3.90 from its own simulator)
        direct = out["direct", coll]
        busiest = max(sum(1 for t in direct.schedule.transfers if t.link == i and t.shard == 0)
                      for i in direct.topology.out_links[0])
        assert busiest == 30 and _time(direct) / _time(ilp) == pytest.approx(busiest / 10, rel=0.01)


def test_table_iv_gather_scatter(table_iv):
    topo, out = table_iv
    for coll in ("gather", "scatter"):
        ilp = out["tacos_ilp", coll]
        # the corner root takes in (sends) 35 chunks over 2 links: 18 steps, proven by the ILP
        assert ilp.detail.status == "optimal" and ilp.schedule.steps == 18
        direct = _time(out["direct", coll]) / _time(ilp)
        assert direct == pytest.approx(1.67, rel=0.10)                                          # paper: 1.67
        assert _time(out["taccl_like", coll]) / _time(ilp) > 1.0        # paper 1.11: routes blind to congestion


# ----------------------------------------------------------------------------------------------------- the CLI
def test_cli_broadcast_with_a_root(capsys):
    code = main(["schedule", "mesh(6,6)", "--algo", "tacos", "--collective", "broadcast", "--root", "14", "--json",
                 "--no-cache"])
    out = json.loads(capsys.readouterr().out)
    assert code == 0 and out["root"] == "14" and out["steps"] == out["steps_lower_bound"] == 6 and out["verified"]


@pytest.mark.parametrize("argv,text", [
    (["--collective", "allgather", "--root", "2"], "--root goes with broadcast"),
    (["--collective", "gather", "--root", "nosuch"], "is not a GPU of"),
    (["--collective", "gather", "--root", "99"], "is not a rank"),
])
def test_cli_root_errors_are_one_line(capsys, argv, text):
    code = main(["schedule", "ring(4)", "--algo", "tacos", "--no-cache", *argv])
    err = capsys.readouterr().err
    assert code == 2 and text in err and err.count("\n") == 1, err


def test_root_by_name_on_a_switched_fabric(capsys):
    topo = load("dgx_a100(boxes=1)")
    name = topo.names[topo.compute_nodes[5]]
    code = main(["schedule", "dgx_a100(boxes=1)", "--algo", "sptree", "--collective", "reduce", "--root", name,
                 "--json", "--no-cache"])
    out = json.loads(capsys.readouterr().out)
    assert code == 0 and out["root"] == name and out["verified"]


def test_compare_rooted_rows_name_the_root(capsys):
    code = main(["compare", "mesh(3,3)", "--collective", "broadcast", "--root", "4", "--algos", "sptree,direct",
                 "--json", "--no-cache"])
    rows = json.loads(capsys.readouterr().out)["rows"]
    assert code == 0 and {r["root"] for r in rows} == {"4"}
    bound = next(r for r in rows if r["status"] == "bound")
    assert bound["steps"] == 2 and all(r["verified"] for r in rows if r["status"] == "ok")


def test_a_rooted_result_comes_back_through_the_cache(tmp_path):
    from solvers.results_cache import ResultsCache, cached_synthesize

    store = ResultsCache(tmp_path / "cache")
    topo = load("mesh(3,3)")
    first, hit = cached_synthesize(topo, "tacos", "scatter", cache=store, total_bytes=1e6, root=4, warn=None)
    assert hit is None
    again, hit = cached_synthesize(topo, "tacos", "scatter", cache=store, total_bytes=1e6, root=4, warn=None)
    assert hit is not None and again.schedule.root == 4 and again.as_dict(1e6) == first.as_dict(1e6)
    other, hit = cached_synthesize(topo, "tacos", "scatter", cache=store, total_bytes=1e6, root=0, warn=None)
    assert hit is None and other.schedule.root == 0


# ----------------------------------------------------------------------------------------------------- the page
def test_schedule_page_broadcast_with_a_root():
    from .test_teccl_page import open_schedule

    at = open_schedule("mesh(3,3)", algo="sptree")
    at.selectbox(key="coll").set_value("broadcast").run()
    assert not at.exception and not at.error
    at.selectbox(key="root").set_value("4").run()
    assert not at.exception and not at.error
    assert "a correct broadcast from 4" in at.success[0].value
    assert at.query_params["root"] in (["4"], "4")
    at.selectbox(key="coll").set_value("reduce").run()
    assert not at.exception and "a correct reduce to 4" in at.success[0].value


def test_schedule_page_tacos_gather():
    from .test_teccl_page import open_schedule

    at = open_schedule("mesh(3,3)", algo="tacos")
    at.selectbox(key="coll").set_value("gather").run()
    assert not at.exception and not at.error and "a correct gather to 0" in at.success[0].value


def test_compare_page_rooted_collectives_with_a_root():
    from streamlit.testing.v1 import AppTest

    from .conftest import ROOT, switch_page

    at = AppTest.from_file(str(ROOT / "app.py"), default_timeout=300).run()
    at = switch_page(at, "compare").run()
    at.text_area(key="cmp_exprs").set_value("ring(4)\nring(8)").run()
    at.multiselect(key="cmp_colls").set_value(["broadcast"]).run()
    at.multiselect(key="cmp_algos").set_value(["sptree", "direct"]).run()
    at.number_input(key="cmp_root").set_value(6).run()
    at.button(key="cmp_run").click().run()
    assert not at.exception
    page = next(d.value for d in at.dataframe if "status" in d.value.columns)
    assert not page["design"].str.contains("4").any()        # rows that do not apply are folded away
    at.toggle(key="cmp_show_na").set_value(True).run()
    page = next(d.value for d in at.dataframe if "status" in d.value.columns)
    small = page[page["design"].str.contains("4")]
    assert small["why"].str.contains("is not a rank").all() and len(small) == 3
    assert (page[~page["design"].str.contains("4")]["status"].isin(["ok", "bound"])).all()
