"""The textbook baselines (solvers.baselines): every schedule verifies, its cost equals the closed form, pinned
textbook values, NotApplicable with a reason that names the problem, MSCCL export, and the baseline fabrics."""
from fractions import Fraction

import pytest
from hypothesis import given, settings, strategies as st

from solvers.baselines import BASELINES, baseline
from solvers.core.cost import cost, tb_lower_bound
from solvers.core.errors import NotApplicable
from solvers.export import check_xml, export
from solvers.core.schedule import Collective
from solvers.core.verify import verify
from tests.helpers import star, strongly_connected_topologies
from topologies.baseline_fabrics import dbt_graph, nccl_double_binary_tree, shifted_ring, shifted_ring_stride
from topologies.clusters import cluster, dgx_a100
from topologies.families import biring, circulant, complete, hypercube, ring
from topologies import load
from topologies.model import Topology, TopologyError

COLLECTIVES = [Collective.ALLGATHER, Collective.REDUCE_SCATTER, Collective.ALLREDUCE]

TOPOLOGIES = {
    "ring(8)": lambda: ring(8), "biring(8)": lambda: biring(8), "complete(5)": lambda: complete(5),
    "complete(6)": lambda: complete(6), "complete(7)": lambda: complete(7), "complete(8)": lambda: complete(8),
    "hypercube(3)": lambda: hypercube(3), "circulant(12,[1,5])": lambda: circulant(12, [1, 5]),
    "shifted_ring(12)": lambda: shifted_ring(12), "dbt_graph(8)": lambda: dbt_graph(8),
    "path(4)": lambda: Topology.from_edges(4, [(0, 1), (1, 0), (1, 2), (2, 1), (2, 3), (3, 2)], name="P_4"),
    "star(8)": lambda: star(8), "star(6)": lambda: star(6), "dgx_a100(1)": lambda: dgx_a100(boxes=1),
    "dgx_a100(2)": lambda: dgx_a100(boxes=2), "cluster(2,4,10,1)": lambda: cluster(2, 4, 10, 1),
}
_CACHE = {}


def topo_of(key):
    if key not in _CACHE:
        _CACHE[key] = TOPOLOGIES[key]()
    return _CACHE[key]


FITTING = [
    ("ring_uni", "ring(8)"), ("ring_uni", "biring(8)"), ("ring_uni", "star(8)"), ("ring_uni", "star(6)"),
    ("ring_bi", "biring(8)"), ("ring_bi", "ring(8)"), ("ring_bi", "complete(5)"), ("ring_bi", "star(6)"),
    ("ring_bi", "dgx_a100(1)"),
    ("shifted_ring", "circulant(12,[1,5])"), ("shifted_ring", "shifted_ring(12)"), ("shifted_ring", "complete(7)"),
    ("shifted_ring", "star(8)"), ("shifted_ring", "star(6)"),
    ("dbt", "dbt_graph(8)"), ("dbt", "complete(7)"), ("dbt", "star(8)"), ("dbt", "star(6)"),
    ("dbt", "dgx_a100(2)"), ("dbt", "cluster(2,4,10,1)"),
    ("rhd", "hypercube(3)"), ("rhd", "complete(8)"), ("rhd", "complete(6)"), ("rhd", "star(8)"), ("rhd", "star(6)"),
    ("rhd", "dgx_a100(1)"),
    ("direct", "complete(8)"), ("direct", "star(8)"), ("direct", "star(6)"), ("direct", "dgx_a100(1)"),
]


def check(name, topo, collective, **options):
    """Build, verify, and compare the cost with the closed form; return the cost."""
    b = BASELINES[name]
    schedule = b.build(topo, collective, **options)
    assert schedule.collective is collective and schedule.algo == name
    result = verify(topo, schedule)
    assert result.ok, result.errors[:3]
    c = cost(topo, schedule)
    assert (c.steps, c.tb_factor) == b.closed_form(topo, collective, **options)
    assert c.tb_factor >= tb_lower_bound(topo, collective)
    return c


@pytest.mark.parametrize("name, key", FITTING)
@pytest.mark.parametrize("collective", COLLECTIVES, ids=lambda c: c.value)
def test_baseline_verifies_and_matches_closed_form(name, key, collective):
    check(name, topo_of(key), collective)


@pytest.mark.parametrize("name, key, collective, steps, tb", [
    # the ring allreduce on a ring of unit links: 2(N-1) steps, 2(N-1)/N
    ("ring_uni", "ring(8)", "allreduce", 14, Fraction(14, 8)),
    ("ring_bi", "biring(8)", "allreduce", 14, Fraction(14, 8)),
    ("ring_uni", "biring(8)", "allgather", 7, Fraction(14, 8)),             # one direction of a B = 2 ring
    # ShiftedRing on C(12,{1,5}): 2(N-1) steps, BW-optimal 2(N-1)/N (digest 10.2)
    ("shifted_ring", "shifted_ring(12)", "allreduce", 22, Fraction(22, 12)),
    # RHD: 2 log2 N steps on Q_3 (tb 2m(N-1)/N with B = m); 2 ceil(log2 N) = 2 log2 p + 2 on N = 6
    ("rhd", "hypercube(3)", "allreduce", 6, Fraction(2 * 3 * 7, 8)),
    ("rhd", "hypercube(3)", "allgather", 3, Fraction(3 * 7, 8)),
    ("rhd", "complete(6)", "allreduce", 6, 5 * (Fraction(2 * 3, 4) + 2)),
    ("rhd", "complete(8)", "reduce_scatter", 3, Fraction(7 * 7, 8)),
    # direct = co-located PS: 1 step per phase, (N-1)/N each on complete(N)
    ("direct", "complete(8)", "allgather", 1, Fraction(7, 8)),
    ("direct", "complete(8)", "allreduce", 2, Fraction(14, 8)),
    # DBT: 2(h + c - 1) steps, tb (h + c - 1)/c * B/b (h = 3 for N = 8; B = 2 on DBT(8), 7 on K_8)
    ("dbt", "dbt_graph(8)", "allreduce", 6, Fraction(6)),
    ("dbt", "complete(7)", "allreduce", 6, Fraction(3 * 6)),
    # one switch: every logical step is two IR steps and loads the uplink and the downlink
    ("direct", "star(8)", "allgather", 2, Fraction(14, 8)),
    ("ring_bi", "star(8)", "allreduce", 28, Fraction(28, 8)),
    ("rhd", "star(8)", "allreduce", 12, Fraction(28, 8)),
    ("ring_uni", "dgx_a100(1)", "allgather", 14, Fraction(14, 8)),
])
def test_textbook_values(name, key, collective, steps, tb):
    coll = Collective.parse(collective)
    assert BASELINES[name].closed_form(topo_of(key), coll) == (steps, tb)
    c = check(name, topo_of(key), coll)
    assert (c.steps, c.tb_factor) == (steps, tb)


def test_dbt_pipelining_trades_steps_for_bandwidth():
    topo = topo_of("complete(8)")
    costs = [check("dbt", topo, Collective.ALLREDUCE, chunks=c) for c in (1, 2, 4)]
    assert [c.steps for c in costs] == [6, 8, 12]                  # 2(h + c - 1), h = 3
    assert [c.tb_factor for c in costs] == [Fraction(3 + c - 1, c) * 7 for c in (1, 2, 4)]
    check("dbt", topo, Collective.ALLGATHER, chunks=3)
    check("dbt", topo_of("star(6)"), Collective.REDUCE_SCATTER, chunks=2)


def test_ring_bi_is_solvers_ring():
    from solvers.baselines.hamiltonian import ring_allgather
    topo = topo_of("biring(8)")
    ours = BASELINES["ring_bi"].build(topo, "allgather")
    assert sorted(ours.transfers) == sorted(ring_allgather(topo).transfers)


@pytest.mark.parametrize("name, key, pattern", [
    ("rhd", "ring(8)", r"rhd needs partner i XOR 2\^k adjacent to i: there is no link 1 -> 0"),
    ("rhd", "biring(8)", r"rhd needs partner i XOR 2\^k adjacent to i: 0 and 2 are not linked"),
    ("rhd", "circulant(12,[1,5])", r"0 and 2 are not linked"),
    ("shifted_ring", "ring(8)", r"shifted_ring needs a Hamiltonian cycle .* both ways: none exists"),
    ("shifted_ring", "biring(8)", r"two edge-disjoint Hamiltonian cycles .* no second one"),
    ("shifted_ring", "hypercube(3)", r"no second one"),
    ("dbt", "ring(8)", r"dbt needs the NCCL tree 1 edge between ranks 1 and 2 .*: there is no link 2 -> 1"),
    ("dbt", "circulant(12,[1,5])", r"ranks 2 and 4 \(4 is 2's parent\) .*: 2 and 4 are not linked"),
    ("direct", "hypercube(3)", r"direct needs every pair of compute nodes adjacent: there is no link 0,0,0 -> 0,1,1"),
    ("ring_uni", "path(4)", r"ring_uni needs a Hamiltonian cycle of the compute nodes over links: none exists"),
    ("ring_bi", "path(4)", r"ring_bi needs a Hamiltonian cycle"),
])
@pytest.mark.parametrize("collective", COLLECTIVES, ids=lambda c: c.value)
def test_not_applicable_names_the_problem(name, key, pattern, collective):
    topo = topo_of(key)
    with pytest.raises(NotApplicable, match=pattern):
        BASELINES[name].build(topo, collective)
    with pytest.raises(NotApplicable, match=pattern):
        BASELINES[name].closed_form(topo, collective)


def test_multi_box_cluster_names_the_unreachable_pair():
    topo = dgx_a100(boxes=2)
    with pytest.raises(NotApplicable, match=r"no link b0.g0 -> b1.g1 \(directly or through switches only\)"):
        BASELINES["direct"].build(topo, "allgather")
    c = check("rhd", topo, Collective.ALLGATHER)          # partners reachable through NIC -> IB -> NIC paths
    # 4 rounds of H = 4 IR steps (GPU -> NIC -> IB -> NIC -> GPU), less the 2 idle steps before the first
    # round's 2-hop routes through the box's NVSwitch
    assert c.steps == 4 * 4 - 2


def test_registry_and_bad_requests():
    assert set(BASELINES) == {"ring_uni", "ring_bi", "shifted_ring", "dbt", "rhd", "direct", "hierarchical"}
    assert all(b.summary for b in BASELINES.values())
    assert baseline("rhd") is BASELINES["rhd"]
    with pytest.raises(NotApplicable, match="unknown baseline"):
        baseline("nope")
    with pytest.raises(NotApplicable, match="not alltoall"):
        BASELINES["direct"].build(topo_of("complete(5)"), "alltoall")
    with pytest.raises(NotApplicable, match="rhd takes no options, not chunks"):
        BASELINES["rhd"].build(topo_of("complete(5)"), "allreduce", chunks=2)
    with pytest.raises(NotApplicable, match="chunks to be a positive integer"):
        BASELINES["dbt"].build(topo_of("complete(5)"), "allreduce", chunks=0)


@settings(max_examples=25, deadline=None)
@given(n=st.integers(2, 12), collective=st.sampled_from(COLLECTIVES))
def test_rhd_and_direct_on_complete_graphs(n, collective):
    topo = complete(n)
    for name in ("rhd", "direct"):
        c = check(name, topo, collective)
        if name == "rhd" and collective is Collective.ALLREDUCE:
            m = n.bit_length() - 1
            assert c.steps == 2 * m + (2 if n & (n - 1) else 0)


@settings(max_examples=25, deadline=None)
@given(n=st.integers(2, 16), chunks=st.integers(1, 3), collective=st.sampled_from(COLLECTIVES))
def test_dbt_on_complete_graphs(n, chunks, collective):
    check("dbt", complete(n), collective, chunks=chunks)


@settings(max_examples=40, deadline=None)
@given(topo=strongly_connected_topologies(max_nodes=7))
def test_every_baseline_that_applies_to_a_random_fabric_verifies(topo):
    """Random multigraphs, switches and mixed bandwidths included: whatever builds verifies and costs what its
    closed form says; whatever does not raises NotApplicable."""
    for name in BASELINES:
        for collective in COLLECTIVES:
            try:
                BASELINES[name].build(topo, collective)
            except NotApplicable as exc:
                assert str(exc) and "\n" not in str(exc)
                with pytest.raises(NotApplicable):
                    BASELINES[name].closed_form(topo, collective)
                continue
            check(name, topo, collective)


@pytest.mark.parametrize("name, key, collective", [
    ("ring_uni", "ring(8)", "allreduce"), ("ring_bi", "biring(8)", "reduce_scatter"),
    ("shifted_ring", "shifted_ring(12)", "allgather"), ("dbt", "dbt_graph(8)", "allreduce"),
    ("rhd", "complete(6)", "allreduce"), ("direct", "complete(8)", "reduce_scatter"),
    ("rhd", "star(8)", "allreduce"),
])
def test_msccl_export_passes_the_checker(name, key, collective):
    topo = topo_of(key)
    schedule = BASELINES[name].build(topo, collective)
    text, report = export(topo, schedule)
    assert report.ok and report.ranks == topo.n
    assert check_xml(text).ok


# ------------------------------------------------------------------------------------------- baseline fabrics
def test_shifted_ring_family():
    assert [shifted_ring_stride(n) for n in (5, 7, 8, 9, 10, 12, 16)] == [2, 2, 3, 4, 3, 5, 7]
    topo = shifted_ring(12)
    assert topo.expr == "shifted_ring(12)" and topo.is_bidirectional
    assert sorted((l.src, l.dst) for l in topo.links) == sorted((l.src, l.dst) for l in circulant(12, [1, 5]).links)
    assert all(len(topo.out_links[u]) == 4 for u in range(12))
    for n in (3, 4, 6):
        with pytest.raises(TopologyError, match="ShiftedRing needs a second stride"):
            shifted_ring(n)


def test_dbt_graph_family():
    first, second = nccl_double_binary_tree(8)
    assert first == (-1, 2, 4, 2, 0, 6, 4, 6)                   # root 0 with the single child N/2
    assert second == (1, 3, 1, 7, 5, 3, 5, -1)                  # the mirror r -> 7 - r
    odd = nccl_double_binary_tree(7)
    assert odd[1].index(-1) == 1                                # odd N: shifted by one
    topo = dbt_graph(8)
    assert topo.expr == "dbt_graph(8)" and topo.is_bidirectional
    pairs = {frozenset((v, u)) for tree in (first, second) for v, u in enumerate(tree) if u >= 0}
    assert {frozenset((l.src, l.dst)) for l in topo.links} == pairs and len(topo.links) == 2 * len(pairs)
    for n in range(2, 20):
        for tree in nccl_double_binary_tree(n):
            assert tree.count(-1) == 1
            for v in range(n):                                  # every rank reaches the root
                seen = set()
                while tree[v] >= 0:
                    assert v not in seen
                    seen.add(v)
                    v = tree[v]
    with pytest.raises(TopologyError):
        dbt_graph(1)


def _renumbered(expr: str, seed: int):
    """``expr`` with its nodes listed in a shuffled order (a file upload numbers them its own way)."""
    import json
    import random

    from topologies.files import from_json, to_json

    data = json.loads(to_json(load(expr)))
    random.Random(seed).shuffle(data["nodes"])
    return from_json(json.dumps(data))


@pytest.mark.parametrize("expr", ["hypercube(6)", "hypercube(10)"])
def test_hypercubes_get_their_gray_code_cycle_in_any_numbering(expr):
    """Issue 23: hypercube(6) exhausted the search budget and hypercube(10) died in a RecursionError."""
    from solvers.baselines.hamiltonian import _is_cycle, hamiltonian_cycle

    for topo in (load(expr), _renumbered(expr, 2)):
        cycle = hamiltonian_cycle(topo)
        assert sorted(cycle) == list(topo.compute_nodes) and _is_cycle(topo, cycle)


def test_path_search_has_no_recursion_limit_and_falls_back_to_warnsdorff():
    from solvers.baselines.hamiltonian import _is_cycle, hamiltonian_cycle, search_path

    n = 5000                                   # a path of 5000 nodes: far deeper than Python's recursion limit
    succ = {u: [u + 1] if u + 1 < n else [] for u in range(n)}
    path, spent = search_path(succ, n, 0, lambda u: u == n - 1)
    assert path == list(range(n)) and not spent
    assert search_path(succ, n, 0, lambda u: False) == (None, False)        # searched through: none exists
    topo = _renumbered("torus(8,8)", 0)       # the plain search in node order spends its budget here
    comp = list(topo.compute_nodes)
    succ = {u: sorted({topo.links[i].dst for i in topo.out_links[u]} - {u}) for u in comp}
    assert search_path(succ, len(comp), comp[0], lambda u: comp[0] in succ[u]) == (None, True)
    cycle = hamiltonian_cycle(topo)
    assert sorted(cycle) == comp and _is_cycle(topo, cycle)
