"""The multi-ring (``ring``): link-disjoint Hamiltonian ring sets, NCCL's rings on switched fabrics, and the
runtime model against the rings' analytic bandwidth."""
from __future__ import annotations

from fractions import Fraction

import pytest
from hypothesis import given, settings
from hypothesis import strategies as st

from solvers import synthesize
from solvers.baselines.fabric import Fabric
from solvers.baselines.multiring import multiring_allgather, nccl_ring_orders
from solvers.baselines.ringset import degree_bound, ring_set
from solvers.core.errors import NotApplicable
from solvers.core.verify import verify
from solvers.runtime import Execution, bound_time_us, simulate
from topologies import load
from topologies.model import Topology, TopologyError


def assert_ring_set(topo, found):
    """Every ring visits every compute node once over its own links, and no link is in two rings."""
    comp = set(topo.compute_nodes)
    used = set()
    for order, links in zip(found.rings, found.links):
        assert set(order) == comp and len(order) == len(comp)
        for i, li in enumerate(links):
            link = topo.links[li]
            assert (link.src, link.dst) == (order[i], order[(i + 1) % len(order)])
            assert li not in used
            used.add(li)
    assert len(found.rings) <= found.bound == degree_bound(topo)


@pytest.mark.parametrize("expr, rings", [("hypercube(6)", 6), ("hypercube(10)", 10), ("torus(8,8)", 4),
                                         ("torus(4,4,4)", 6), ("circulant(16,[1,3])", 4), ("torus(3,5)", 4),
                                         ("torus(2,4)", 4), ("biring(8)", 2), ("ring(5)", 1),
                                         ("gkautz(4,64)", 3), ("complete(8)", 7)])
def test_ring_sets_reach_the_degree(expr, rings):
    topo = load(expr)
    found = ring_set(topo)
    assert_ring_set(topo, found)
    assert len(found.rings) == rings == found.bound and found.complete
    assert "the most there can be" in found.describe()


def test_a_ring_set_that_stops_short_says_so():
    # the symmetric Q3 (out-degree 3): the search finds two rings and reports the bound it missed
    topo = load("hypercube(3)")
    found = ring_set(topo, budget=20_000)
    assert_ring_set(topo, found)
    assert 1 <= len(found.rings) < 3 and not found.complete and "of at most 3" in found.describe()


@pytest.mark.parametrize("expr", ["torus(8,8)", "hypercube(6)", "torus(4,4,4)", "circulant(16,[1,3])"])
def test_the_multiring_allgather_is_bandwidth_optimal(expr):
    result = synthesize(load(expr), "ring", "allgather")
    assert result.verification.ok
    c = result.cost
    assert c.tb_factor / c.tb_lower_bound <= Fraction(105, 100)
    assert c.tb_factor == c.tb_lower_bound          # d rings on a d-regular unit graph: (N-1)/N exactly
    assert result.detail.rings == result.detail.max_rings


@settings(max_examples=15, deadline=None)
@given(n=st.integers(5, 24), jumps=st.sets(st.integers(1, 11), min_size=1, max_size=3))
def test_ring_sets_on_random_circulants_are_disjoint_rings(n, jumps):
    jumps = sorted({j % n for j in jumps} - {0})
    if not jumps:
        return
    try:
        topo = load(f"circulant({n},[{','.join(map(str, jumps))}])")
    except TopologyError:
        return                                       # the jumps do not connect the nodes: no circulant
    found = ring_set(topo, budget=5_000)
    assert_ring_set(topo, found)
    schedule = multiring_allgather(topo)
    assert verify(topo, schedule).ok


@settings(max_examples=12, deadline=None)
@given(dims=st.lists(st.integers(2, 7), min_size=1, max_size=2))
def test_one_and_two_dimensional_tori_get_every_ring(dims):
    """C_n x C_n splits into four directed rings by levels (g = n, r = 1; ringset docstring); other sizes get
    disjoint rings and say how many (C_2 x C_3, coprime, has no level split and the search finds two)."""
    topo = load(f"torus({','.join(map(str, dims))})")
    found = ring_set(topo)
    assert_ring_set(topo, found)
    if len(set(dims)) == 1:
        assert found.complete, (dims, found.describe())
    assert found.rings and str(len(found.rings)) in found.describe()


@settings(max_examples=4, deadline=None)
@given(dims=st.lists(st.integers(2, 4), min_size=3, max_size=3))
def test_three_dimensional_tori_get_disjoint_rings_and_say_how_many(dims):
    topo = load(f"torus({','.join(map(str, dims))})")
    found = ring_set(topo)
    assert_ring_set(topo, found)
    assert found.rings and (found.complete == (len(found.rings) == found.bound))
    assert str(len(found.rings)) in found.describe()


def test_the_ring_is_not_applicable_without_a_way_around():
    star_out = Topology.from_edges(3, [(0, 1), (1, 0), (0, 2), (2, 0)])   # node 0 only: no Hamiltonian cycle
    with pytest.raises(NotApplicable, match="Hamiltonian"):
        ring_set(star_out)


# ----------------------------------------------------------------------------------------- switched fabrics
def test_nccl_rings_on_two_dgx_boxes_use_one_ring_per_nic():
    topo = load("dgx_a100(boxes=2)")
    cycles = nccl_ring_orders(Fabric(topo))
    assert len(cycles) == 8
    for cycle in cycles:
        assert sorted(cycle) == sorted(topo.compute_nodes)
        crossings = [(a, b) for a, b in zip(cycle, cycle[1:] + cycle[:1])
                     if topo.names[a][:2] != topo.names[b][:2]]
        assert len(crossings) == 2                   # out of box 0 once, back once
    exits = [a for c in cycles for a, b in zip(c, c[1:] + c[:1]) if topo.names[a][:2] != topo.names[b][:2]]
    assert len(set(exits)) == 16                     # every GPU's NIC carries exactly one ring out of its box


@pytest.mark.parametrize("expr, collective, analytic", [
    ("dgx_a100(boxes=2)", "allgather", 200.0), ("dgx_a100(boxes=2)", "allreduce", 200.0),
    ("dgx_a100(boxes=1)", "allreduce", 300.0), ("cluster(2,4,10,1)", "allreduce", 4.0),
    ("torus(4,4)", "allreduce", 4.0), ("hypercube(4)", "allgather", 4.0)])
def test_the_model_reaches_the_ring_bandwidth(expr, collective, analytic):
    """busbw of the pipelined rings = the analytic ring bandwidth min_l K bw_l / load_l (multiring docstring):
    8 NICs x 25 GB/s on two DGX A100 boxes, the NVSwitch port in one box, d unit links on a d-regular graph."""
    topo = load(expr)
    result = synthesize(topo, "ring", collective)
    assert result.detail.ring_busbw_gbs == pytest.approx(analytic)
    run = simulate(topo, result.schedule, 1e9)
    assert run.busbw_gbs == pytest.approx(analytic, rel=0.10)
    assert run.busbw_gbs <= analytic * (1 + 1e-9)
    assert run.time_us >= bound_time_us(topo, collective, 1e9, Execution()) * (1 - 1e-9)


def test_the_ring_allreduce_on_a_uniform_ring_is_the_textbook_time():
    # one ring, alpha-beta prices: 2(N-1)(alpha + M/(N B)) at P = 1
    n, alpha, bw, m = 6, 3.0, 10.0, 6e5
    topo = load(f"ring({n})")
    schedule = synthesize(topo, "ring", "allreduce").schedule
    run = simulate(topo, schedule, m, Execution.alpha_beta(alpha, bw, slices=1))
    assert run.time_us == pytest.approx(2 * (n - 1) * (alpha + m / n / (bw * 1e3)))


# ------------------------------------------------------------------------------------- NCCL's tree across boxes
def test_the_dbt_across_boxes_is_a_chain_per_box_and_a_tree_pair_per_nic():
    topo = load("dgx_a100(boxes=2)")
    schedule = synthesize(topo, "dbt", "allreduce").schedule
    assert schedule.notes["trees"] == 16                       # 8 NICs x 2 trees over the two boxes
    from solvers.baselines.dbt import _box_parents
    layouts = _box_parents(Fabric(topo))
    for parents in layouts:
        roots = [r for r, p in enumerate(parents) if p < 0]
        assert len(roots) == 1
        crossing = [(r, p) for r, p in enumerate(parents) if p >= 0 and r // 8 != p // 8]
        assert len(crossing) == 1 and crossing[0][0] % 8 == crossing[0][1] % 8   # head to head, one NIC index
        assert sum(1 for p in parents if p >= 0) == 15


@pytest.mark.parametrize("expr, analytic", [("dgx_a100(boxes=2)", 160.0), ("dgx_a100(boxes=4)", 100.0),
                                            ("cluster(2,4,10,1)", 4.0), ("dgx_a100(boxes=1)", 150.0)])
def test_the_model_reaches_the_trees_pipelined_rate(expr, analytic):
    """M over the busiest link's time with every tree edge moving its share up and down (dbt docstring)."""
    topo = load(expr)
    schedule = synthesize(topo, "dbt", "allreduce").schedule
    assert schedule.notes["pipelined_algbw_gbs"] == pytest.approx(analytic)
    run = simulate(topo, schedule, 1e9)
    assert run.algbw_gbs == pytest.approx(analytic, rel=0.10) and run.algbw_gbs <= analytic * (1 + 1e-9)
    assert run.time_us >= bound_time_us(topo, "allreduce", 1e9) * (1 - 1e-9)
