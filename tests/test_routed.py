"""Ring, Direct and TACCL-like on fabrics that are neither complete nor Hamiltonian (issue 56, first part): a mesh
with two failed NPUs (TACOS Table III) and the 10x10 mesh (Table I, Fig. 21)."""
import pytest
from hypothesis import given, settings

from solvers import synthesize
from solvers.baselines.rooted import first_receipts
from solvers.baselines.routed import phased, ring_order, routed_ring_allgather, tree_allgather
from solvers.core.schedule import Collective
from solvers.core.verify import verify
from topologies import load

from .helpers import strongly_connected_topologies

FAILED = "fail(mesh(4,4),gpus=[5,10])"


def test_ring_order_snakes_a_grid():
    assert ring_order(load("mesh(3,3)")) == [0, 1, 2, 5, 4, 3, 6, 7, 8]
    topo = load(FAILED)
    assert sorted(ring_order(topo)) == sorted(topo.compute_nodes)


@pytest.mark.parametrize("algo", ["ring", "direct", "taccl_like"])
@pytest.mark.parametrize("coll", ["allgather", "reduce_scatter", "allreduce"])
def test_baselines_on_a_mesh_with_failed_npus(algo, coll):
    r = synthesize(load(FAILED), algo, coll, total_bytes=1 << 20)
    assert r.verification.ok and r.schedule.collective.value == coll
    if algo == "ring":
        assert "no Hamiltonian cycle" in r.detail.search


@pytest.mark.parametrize("algo", ["direct", "taccl_like"])
def test_baselines_on_the_10x10_mesh(algo):
    r = synthesize(load("mesh(10,10)"), algo, "allreduce", total_bytes=1 << 20)
    assert r.verification.ok
    if algo == "taccl_like":
        # too large for the ILP: its optimum's form, every chunk at its distance (2 D(G) steps for the allreduce)
        assert r.cost.steps == r.cost.steps_lower_bound == 36 and r.detail.status.startswith("shortest-path trees")


def test_ring_on_the_10x10_mesh():
    r = synthesize(load("mesh(10,10)"), "ring", "allgather", total_bytes=1 << 20)
    assert r.verification.ok and r.schedule.collective is Collective.ALLGATHER
    assert r.detail.rings == 1 and r.detail.ring_busbw_gbs > 0


@settings(max_examples=30, deadline=None)
@given(strongly_connected_topologies(max_nodes=8, switches=True))
def test_routed_schedules_verify_on_random_digraphs(topo):
    """On any strongly connected digraph, switches included, the routed ring, the trees and Direct give every
    phased collective, and the repeated receipts left out (with the switches' matching arrivals) make the
    reduce-scatter add each contribution once."""
    from solvers.baselines.rooted import direct_allgather

    if topo.n < 2:
        return
    for build in (routed_ring_allgather, tree_allgather, direct_allgather):
        for coll in (Collective.ALLGATHER, Collective.REDUCE_SCATTER, Collective.ALLREDUCE):
            assert verify(topo, phased(topo, coll, build)).ok
        once = first_receipts(topo, build(topo))
        got = [(topo.links[t.link].dst, t.shard, t.lo, t.hi) for t in once.transfers
               if topo.is_compute(topo.links[t.link].dst)]
        assert len(got) == len(set(got)) and all(w != s for w, s, _, _ in got)


def test_table_iii_mesh_with_npus_7_and_9_failed():
    """TACOS Table III: on a 4x4 mesh without NPUs 7 and 9, All-Reduce, TACOS-ILP, the greedy and TACCL-like all
    reach 1.00 (the runtime model without pipelining, one chunk per NPU); Ring and Direct are slower. (The paper's
    Ring is 5.38 and Direct 5.08: its ring follows NPU ids and its Direct relays every contribution unreduced,
    where ours snakes the ring and sums on the way; bench/RESULTS.md.)"""
    from solvers.runtime import Execution, simulate

    topo = load("fail(mesh(4,4),gpus=[7,9])")
    size = topo.n << 20
    times, built = {}, {}
    for algo in ("tacos_ilp", "tacos", "taccl_like", "ring", "direct"):
        r = built[algo] = synthesize(topo, algo, "allreduce", total_bytes=size)
        assert r.verification.ok
        times[algo] = simulate(r.topology, r.schedule, size, Execution(slices=1)).time_us
    assert built["tacos_ilp"].detail.status == "optimal"
    assert times["tacos"] == pytest.approx(times["tacos_ilp"]) == pytest.approx(times["taccl_like"])
    assert times["ring"] > 1.2 * times["tacos_ilp"] and times["direct"] > 1.2 * times["tacos_ilp"]


@pytest.mark.parametrize("expr", ["gkautz(3,10)", "circulant(12,[1,5])"])
def test_chunked_bfb_on_the_cli_within_theorem_20(expr, capsys):
    """Direct-connect App. E.2: BFB's shares rounded to P whole chunks verify, never beat the exact schedule, and
    lose at most d (d^D - 1) / ((d - 1) P N) of M/B (Theorem 20)."""
    import json
    from fractions import Fraction

    from studio.cli import main
    from topologies.properties import degree, diameter

    topo = load(expr)
    exact = synthesize(topo, "bfb", "allgather").cost.tb_factor
    d, big_d, n = degree(topo), diameter(topo), topo.n
    for chunks in (1, 2, 5):
        code = main(["schedule", expr, "--algo", "bfb", "--chunks", str(chunks), "--json", "--no-cache"])
        out = json.loads(capsys.readouterr().out)
        tb = Fraction(out["tb_factor_exact"])
        assert code == 0 and out["verified"]
        assert exact <= tb <= exact + Fraction(d * (d ** big_d - 1), (d - 1) * chunks * n)


def test_npu_order_ring_is_tacos_naive_baseline():
    """``ring --ring-order npu``: one ring over NPU ids, each edge on a shortest path (TACOS Tables I, III). On a
    4x4 mesh edges 3->4, 7->8 and 11->12 cross a row (4 hops) and 15->0 the grid (6 hops), so it is slower than
    NCCL's ring there, a Hamiltonian cycle of one-hop edges."""
    from solvers.runtime import Execution, simulate

    topo = load("mesh(4,4)")
    naive = synthesize(topo, "ring", "allreduce", total_bytes=16 << 20, options={"order": "npu"})
    snake = synthesize(topo, "ring", "allreduce", total_bytes=16 << 20)
    assert naive.verification.ok and snake.verification.ok
    assert naive.detail.search.startswith("NPU-index ring order, 6 hop(s)")
    once = Execution(slices=1)
    assert (simulate(naive.topology, naive.schedule, 16 << 20, once).time_us
            > 1.2 * simulate(snake.topology, snake.schedule, 16 << 20, once).time_us)


@settings(max_examples=15, deadline=None)
@given(strongly_connected_topologies(max_nodes=12))
def test_npu_order_ring_verifies_on_any_fabric(topo):
    for coll in ("allgather", "reduce_scatter", "allreduce"):
        assert synthesize(topo, "ring", coll, options={"order": "npu"}).verification.ok
