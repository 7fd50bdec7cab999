"""ForestColl: the paper's oracles (digest notes/forestcoll.md sections 5.1-5.3 and 8), brute force on random
small fabrics, and every schedule verified and exported."""
from fractions import Fraction

import pytest
from hypothesis import HealthCheck, given, settings, strategies as st

from solvers.core.cost import pipelined_factor
from solvers.core.errors import NotApplicable
from solvers.forestcoll import collective_schedule, forestcoll
from solvers.forestcoll.packing import check_packing
from solvers.forestcoll.search import (fabric, fixed_k_search, floored, optimal_ratio, optimal_ratio_bisect,
                                       simplest_between)
from solvers.forestcoll.splitting import meets_invariant
from solvers.export import check_xml, export
from solvers.core.schedule import Collective
from solvers.core.verify import verify
from topologies import parse_topology
from topologies.model import COMPUTE, SWITCH, Link, Topology

from .helpers import compute_cuts


def brute_inv_x(topo: Topology) -> Fraction:
    """max over S ⊂ V with S ⊉ V_c of |S ∩ V_c| / B⁺(S), by enumerating every subset."""
    return max(Fraction(inside) / out for inside, out in compute_cuts(topo))


def assert_sound(topo: Topology, forest) -> None:
    """The forest's allgather verifies, respects every link's capacity, and achieves N k / U exactly."""
    ag = forest.allgather()
    v = verify(topo, ag)
    assert v.ok, v.errors[:3]
    assert pipelined_factor(topo, ag) == forest.u / forest.k      # the busiest link, over all steps
    check_packing(topo.compute_nodes, forest.logical.arcs, forest.k, forest.batches)
    assert forest.trees == forest.k * topo.n


# ------------------------------------------------------------------------------------------- paper oracles
def test_dgx_a100_two_boxes():
    topo = parse_topology("dgx_a100(boxes=2)")
    f = forestcoll(topo)
    assert f.inv_x_star == Fraction(3, 65)
    assert f.k == 13 and f.u == Fraction(3, 5)
    assert f.algbw == f.optimal_algbw == Fraction(1040, 3)          # 346.67 GB/s
    assert round(float(f.algbw), 2) == 346.67
    assert_sound(topo, f)
    # the bottleneck: everything but one GPU (its ingress 300 + 25 GB/s)
    b = f.bottleneck_summary()
    assert len(b["outside"]) == 1 and b["egress_GBps"] == 325
    f1 = forestcoll(topo, fixed_k=1)
    assert f1.u == Fraction(7, 150) and round(float(f1.algbw), 3) == 342.857
    assert_sound(topo, f1)


def test_mi250_two_clusters():
    topo = parse_topology("mi250(clusters=2)")
    fab = fabric(topo)
    opt = optimal_ratio(fab)
    assert opt.ratio == Fraction(15, 166) and opt.k == 83 and opt.u == Fraction(15, 2)
    assert round(32 / float(opt.ratio), 2) == 354.13
    algbw = {k: Fraction(32 * k) / fixed_k_search(fab, k)[0] for k in (1, 2, 3, 4, 5)}
    assert algbw[1] == 320 and round(float(algbw[2]), 2) == 341.33
    assert [round(float(algbw[k]), 2) for k in (3, 4, 5)] == [342.86, 341.33, 347.83]   # not monotone in k
    f2 = forestcoll(topo, fixed_k=2)
    assert f2.u == Fraction(3, 16)
    assert_sound(topo, f2)


def test_mi250_two_clusters_optimal_forest():
    """The plain greedy gets stuck on a set whose condition (3) it broke; restarted with the broken sets
    watched it packs the optimum without Algorithm 5's max-flows."""
    from solvers.forestcoll.packing import _packing, greedy_packing

    topo = parse_topology("mi250(clusters=2)")
    f = forestcoll(topo)
    assert f.k == 83 and round(float(f.algbw), 2) == 354.13 and f.packing_method == "greedy"
    assert_sound(topo, f)
    batches, stuck = _packing(topo.compute_nodes, f.logical.arcs, f.k, False)
    assert batches is None and 1 < len(stuck) < topo.n
    check_packing(topo.compute_nodes, f.logical.arcs, f.k, greedy_packing(topo.compute_nodes, f.logical.arcs, f.k))


def test_mi250_eight_plus_eight():
    topo = parse_topology("mi250(clusters=2,gpus_per_cluster=8)")
    f = forestcoll(topo)
    assert f.inv_x_star == Fraction(1, 13) and f.k == 13 and f.algbw == 208
    assert_sound(topo, f)
    assert forestcoll(topo, fixed_k=1).algbw == 200


@pytest.mark.parametrize("clusters, ratio, k", [(4, Fraction(3, 16), 8), (5, Fraction(1, 4), 2)])
def test_mi250_clusters_are_packed_box_by_box(clusters, ratio, k):
    """From 4 clusters the IB cut binds (1/x* = (clusters - 1)/16, k by Prop 3: each tree enters every other
    cluster once) and the box packing applies; the forest reaches the optimum."""
    topo = parse_topology(f"mi250(clusters={clusters})")
    f = forestcoll(topo)
    assert f.packing_method == "boxes" and f.inv_x_star == ratio and f.k == k
    assert f.algbw == f.optimal_algbw
    assert_sound(topo, f)


def test_box_packing_declines_where_the_boxes_are_not_the_bottleneck():
    """Two MI250 clusters: the optimum (1/x* = 15/166) needs trees that leave a cluster and come back, so the
    box-by-box packing (each tree enters a box once) declines and Algorithm 5 packs it; fabrics of equal arcs
    have no boxes."""
    from solvers.forestcoll.boxes import find_boxes
    from solvers.forestcoll.packing import boxed_packing as box_packing
    from solvers.forestcoll.splitting import remove_switches

    topo = parse_topology("mi250(clusters=2)")
    fab = fabric(topo)
    opt = optimal_ratio(fab)
    logical = remove_switches(fab.n, fab.compute, {a: int(opt.u * c) for a, c in fab.arcs.items()}, opt.k)
    assert [len(b) for b in find_boxes(fab.compute, logical.arcs)] == [16, 16]
    assert box_packing(fab.compute, logical.arcs, opt.k) is None
    ring = parse_topology("ring(6)")
    assert find_boxes(ring.compute_nodes, fabric(ring).arcs) is None


@st.composite
def boxed_fabrics(draw):
    """2-4 boxes of 2-4 GPUs; inside a box a random strongly connected set of wide links (4..8 GB/s), between
    boxes narrow links (1..2 GB/s) either through one switch (every GPU cabled to it) or direct."""
    n_boxes, size = draw(st.integers(2, 4)), draw(st.integers(2, 4))
    n_c = n_boxes * size
    switched = draw(st.booleans())
    n = n_c + (1 if switched else 0)
    links = []

    def cable(a, b, bw):
        links.extend([Link(a, b, Fraction(bw)), Link(b, a, Fraction(bw))])

    for box in range(n_boxes):
        gpus = list(range(box * size, (box + 1) * size))
        for i in range(1, size):
            cable(gpus[draw(st.integers(0, i - 1))], gpus[i], draw(st.integers(4, 8)))
        for a, b in draw(st.lists(st.tuples(st.sampled_from(gpus), st.sampled_from(gpus)), max_size=3)):
            if a != b:
                cable(a, b, draw(st.integers(4, 8)))
    narrow = draw(st.integers(1, 2))
    if switched:
        for g in range(n_c):
            cable(g, n_c, narrow)
    else:
        for box in range(n_boxes - 1):
            cable(box * size, (box + 1) * size, narrow)
        for a, b in draw(st.lists(st.tuples(st.integers(0, n_c - 1), st.integers(0, n_c - 1)), max_size=4)):
            if a // size != b // size:
                cable(a, b, narrow)
    kinds = (COMPUTE,) * n_c + ((SWITCH,) if switched else ())
    return Topology(tuple(f"v{i}" for i in range(n)), kinds, tuple(links))


@settings(max_examples=28, deadline=None, suppress_health_check=[HealthCheck.too_slow])
@given(boxed_fabrics())
def test_random_boxed_fabrics_pack_to_the_optimum_whichever_method_packs(topo):
    """Whether the boxes pack it or it falls back, the forest is sound and optimal, and the box method, where
    it applies, gives a packing as valid as the flat one's on the same logical graph."""
    from solvers.forestcoll.packing import boxed_packing as box_packing

    f = forestcoll(topo)
    assert f.algbw == f.optimal_algbw and f.inv_x_star == brute_inv_x(topo)
    assert_sound(topo, f)
    boxed = box_packing(topo.compute_nodes, f.logical.arcs, f.k)
    if boxed is not None:
        check_packing(topo.compute_nodes, f.logical.arcs, f.k, boxed)
        assert f.packing_method == "boxes"


def test_figure2_example():
    topo = parse_topology("cluster(2,4,10,1)")
    f = forestcoll(topo)
    assert f.inv_x_star == 1 and f.k == 1 and f.u == 1 and f.algbw == 8
    assert len(f.batches) == 8 and all(b.mult == 1 and len(b.edges) == 7 for b in f.batches)
    assert sorted(b.root for b in f.batches) == list(topo.compute_nodes)
    b = f.bottleneck_summary()
    assert len(b["compute"]) == 4 and b["egress_GBps"] == 4     # one cluster and its switch
    assert_sound(topo, f)


@pytest.mark.parametrize("boxes", [3, 4, 8])
def test_dgx_a100_many_boxes_need_no_algorithm_5(boxes):
    """From 3 boxes on the box cut is tight (1/x* = (boxes - 1)/25, k = 1): every tree must enter every other
    box exactly once. The greedy split gives each GPU one IB unit to every other box; the packing is assembled
    box by box, and the flat greedy also succeeds, with no fall-back to Algorithms 4 and 5 (what makes 512 GPUs
    take seconds, bench/forestcoll.py)."""
    topo = parse_topology(f"dgx_a100(boxes={boxes})")
    f = forestcoll(topo)
    assert f.inv_x_star == Fraction(boxes - 1, 25) and f.k == 1
    assert f.logical.method == "greedy" and f.packing_method == "boxes"
    flat = forestcoll(topo, pack_method="flat")
    assert flat.packing_method == "greedy" and (flat.k, flat.u) == (f.k, f.u)
    assert_sound(topo, flat)
    box = {v: v // 8 for v in topo.compute_nodes}
    cross: dict = {}
    for (x, y), c in f.logical.arcs.items():
        if box[x] != box[y]:
            cross[(x, box[y])] = cross.get((x, box[y]), 0) + c
    assert set(cross.values()) == {1} and len(cross) == 8 * boxes * (boxes - 1)
    assert_sound(topo, f)


@pytest.mark.parametrize("expr, algbw", [("dgx_a100(boxes=1)", Fraction(2400, 7)),
                                         ("mi250(clusters=1)", Fraction(2400, 7))])
def test_single_box(expr, algbw):
    topo = parse_topology(expr)
    f = forestcoll(topo)
    assert f.optimal_algbw == algbw == f.algbw
    assert_sound(topo, f)


def test_mi250_single_cluster_fixed_k():
    fab = fabric(parse_topology("mi250(clusters=1)"))
    got = [round(float(16 * k / fixed_k_search(fab, k)[0]), 2) for k in (1, 2, 3, 4, 5)]
    assert got == [266.67, 320.0, 342.86, 320.0, 333.33]


def test_bisection_agrees_with_cut_iteration():
    for expr in ("dgx_a100(boxes=2)", "mi250(clusters=2)", "cluster(2,4,10,1)", "cluster(3,2,5,2)",
                 "fat_tree(4)", "torus(3,3)"):
        fab = fabric(parse_topology(expr))
        assert optimal_ratio_bisect(fab)[0] == optimal_ratio(fab).ratio, expr


def test_simplest_between():
    assert simplest_between(Fraction(3, 65), Fraction(3, 65)) == Fraction(3, 65)
    assert simplest_between(Fraction(1, 3) - Fraction(1, 1000), Fraction(1, 3) + Fraction(1, 1000)) == Fraction(1, 3)
    assert simplest_between(Fraction(2), Fraction(5, 2)) == 2
    assert simplest_between(Fraction(7, 10), Fraction(8, 10)) == Fraction(3, 4)


# ----------------------------------------------------------------------------- collectives, exact methods, export
@pytest.mark.parametrize("expr, k", [("cluster(2,4,10,1)", None), ("dgx_a100(boxes=2)", 1),
                                     ("mi250(clusters=2,gpus_per_cluster=8)", 2)])
def test_collectives_verify_and_export(expr, k):
    topo = parse_topology(expr)
    f = forestcoll(topo, k)
    for coll in Collective:
        sched = collective_schedule(topo, coll, forest=f)
        v = verify(topo, sched)
        assert v.ok, (coll, v.errors[:3])
        factor = pipelined_factor(topo, sched)
        assert factor == (2 if coll is Collective.ALLREDUCE else 1) * f.u / f.k
        text, report = export(topo, sched)
        assert report.ok and report.ranks == topo.n
        assert check_xml(text).ok


def test_exact_methods_match_the_theory():
    topo = parse_topology("cluster(2,4,10,1)")
    for k in (None, 2):
        f = forestcoll(topo, k, split_method="exact", pack_method="exact")
        assert f.logical.method == "exact" and f.packing_method == "exact"
        assert_sound(topo, f)


def test_a_greedy_split_that_breaks_the_invariant_is_caught_before_the_packing_trusts_it():
    """The greedy switch removal is checked by the packing (k trees per root prove Theorem 5's invariant) and
    otherwise by flows. Here the unchecked greedy split breaks it, no packing exists, and the checked removal
    (Algorithm 4 on the switch that broke it) gives the optimum."""
    from solvers.forestcoll.splitting import remove_switches

    links = []
    for a, b, bw in [(0, 1, 4), (0, 2, 4), (1, 3, 3), (0, 4, 2), (3, 4, 4), (0, 4, 1), (2, 3, 3), (1, 2, 4),
                     (1, 4, 2), (1, 3, 1)]:
        links += [Link(a, b, Fraction(bw)), Link(b, a, Fraction(bw))]
    topo = Topology(tuple(f"v{i}" for i in range(5)), (COMPUTE,) * 2 + (SWITCH,) * 3, tuple(links))
    fab = fabric(topo)
    opt = optimal_ratio(fab)
    caps = {a: int(opt.u * c) for a, c in fab.arcs.items()}
    broken = remove_switches(fab.n, fab.compute, caps, opt.k, "unchecked")
    assert not meets_invariant(fab.n, fab.compute, broken.arcs, opt.k)
    f = forestcoll(topo)
    assert f.logical.method.startswith("greedy, Algorithm 4 on") and f.algbw == f.optimal_algbw == 22
    assert_sound(topo, f)


def test_bad_input_is_refused_in_one_line():
    with pytest.raises(NotApplicable, match="strongly connected"):
        forestcoll(Topology.from_edges(3, [(0, 1), (1, 0)]))
    with pytest.raises(NotApplicable, match="fixed k"):
        forestcoll(parse_topology("ring(4)"), fixed_k=0)
    lopsided = Topology(("a", "b", "sw"), (COMPUTE, COMPUTE, SWITCH),
                        (Link(0, 2, Fraction(2)), Link(2, 0, Fraction(1)), Link(1, 2, Fraction(1)),
                         Link(2, 1, Fraction(2))))
    with pytest.raises(NotApplicable, match="ingress") as err:
        forestcoll(lopsided)
    # issue 23: the refusal still reports the cut bound, which holds on any fabric: here S = {b, switch}
    # sends 1 GB/s (switch -> a) and holds one GPU, so 1/x* = 1 and N x* = 2 GB/s
    from solvers.forestcoll.search import fabric, optimal_ratio

    assert optimal_ratio(fabric(lopsided)).ratio == 1
    assert "1/x* = 1, so no allgather beats an algbw of 2 GB/s (bottleneck cut around b)" in str(err.value)
    assert "\n" not in str(err.value)


# --------------------------------------------------------------------------------------- random small fabrics
@st.composite
def fabrics(draw):
    """Bidirectional fabrics of 2-6 GPUs and 0-4 switches (<= 10 nodes), bandwidths 1..4, parallel links."""
    n_c = draw(st.integers(2, 6))
    n_s = draw(st.integers(0, min(4, 10 - n_c)))
    n = n_c + n_s
    kinds = (COMPUTE,) * n_c + (SWITCH,) * n_s
    pairs = []
    order = list(range(n))
    for i in range(1, n):                                  # a random spanning tree keeps it connected
        pairs.append((order[draw(st.integers(0, i - 1))], order[i]))
    extra = draw(st.lists(st.tuples(st.integers(0, n - 1), st.integers(0, n - 1)), max_size=8))
    pairs += [(a, b) for a, b in extra if a != b]
    links = []
    for a, b in pairs:
        bw = Fraction(draw(st.integers(1, 4)))
        links += [Link(a, b, bw), Link(b, a, bw)]
    return Topology(tuple(f"v{i}" for i in range(n)), kinds, tuple(links))


@settings(max_examples=40, deadline=None, suppress_health_check=[HealthCheck.too_slow])
@given(fabrics(), st.sampled_from([None, 1, 2]))
def test_random_fabrics_against_brute_force(topo, k):
    f = forestcoll(topo, k)
    assert f.inv_x_star == brute_inv_x(topo)
    if k is None:
        assert f.algbw == f.optimal_algbw
    else:
        assert f.algbw <= f.optimal_algbw
        # Theorem 15: U*/k <= 1/x* + 1/(k min b_e)
        assert f.u / k <= f.inv_x_star + 1 / (k * min(l.bandwidth for l in topo.links))
    assert_sound(topo, f)
    fab = fabric(topo)
    assert meets_invariant(fab.n, fab.compute, floored(fab, f.u / fab.scale), f.k)


@settings(max_examples=15, deadline=None, suppress_health_check=[HealthCheck.too_slow])
@given(fabrics())
def test_random_fabrics_exact_methods(topo):
    f = forestcoll(topo, split_method="exact", pack_method="exact")
    assert f.algbw == f.optimal_algbw
    assert_sound(topo, f)
