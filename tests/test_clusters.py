"""Switched GPU clusters (ForestColl section 5) and the k-ary fat-tree: counts, cables, bandwidths, expressions."""
from collections import Counter
from fractions import Fraction

import pytest

from studio.figures.topology import choose_layout
from topologies import COMPUTE, SWITCH, ExpressionError, TopologyError, parse_topology
from topologies import clusters as cl
from topologies.expression import FAMILIES
from topologies.properties import is_strongly_connected

# expression, nodes, compute, switches, links
COUNTS = [
    ("dgx_a100()", 9, 8, 1, 16),
    ("dgx_a100(boxes=2)", 16 + 2 + 16 + 2, 16, 20, 2 * (16 + 16 + 16)),
    ("dgx_a100(boxes=3)", 24 + 3 + 24 + 2, 24, 29, 2 * 3 * 24),
    ("mi250()", 16, 16, 0, 112),
    ("mi250(clusters=2)", 33, 32, 1, 2 * 112 + 64),
    ("mi250(clusters=1,gpus_per_cluster=8)", 8, 8, 0, 50),
    ("mi250(clusters=2,gpus_per_cluster=8)", 17, 16, 1, 2 * 50 + 32),
    ("mi250(clusters=3,gpus_per_cluster=16)", 49, 48, 1, 3 * 112 + 96),
    ("cluster(2,4,10,1)", 11, 8, 3, 32),
    ("cluster(1,4,10,1)", 5, 4, 1, 8),
    ("cluster(3,2,5,7)", 10, 6, 4, 24),
    ("fat_tree(2)", 2 + 5, 2, 5, 12),
    ("fat_tree(4)", 36, 16, 20, 96),
    ("fat_tree(6,bw=10)", 54 + 45, 54, 45, 3 * 216 // 2),
]

BUILDERS = [
    (cl.dgx_a100, dict(boxes=1)), (cl.dgx_a100, dict(boxes=2)), (cl.dgx_a100, dict(boxes=4)),
    (cl.mi250, dict(clusters=1)), (cl.mi250, dict(clusters=2)), (cl.mi250, dict(clusters=2, gpus_per_cluster=8)),
    (cl.mi250, dict(clusters=1, gpus_per_cluster=8)), (cl.mi250, dict(clusters=3)),
    (cl.cluster, dict(boxes=2, gpus=4, box_bw=10, spine_bw=1)), (cl.cluster, dict(boxes=1, gpus=3, box_bw=2,
                                                                                  spine_bw=9)),
    (cl.cluster, dict(boxes=5, gpus=1, box_bw=3, spine_bw=2)),
    (cl.fat_tree, dict(k=2)), (cl.fat_tree, dict(k=4)), (cl.fat_tree, dict(k=6, bw=40)), (cl.fat_tree, dict(k=8)),
]
IDS = [f"{b.__name__}({','.join(f'{k}={v}' for k, v in kw.items())})" for b, kw in BUILDERS]
SIZES = {"dgx_a100": cl.dgx_a100_size, "mi250": cl.mi250_size, "cluster": cl.cluster_size,
         "fat_tree": cl.fat_tree_size}


def ingress(topo, node):
    return sum(topo.links[i].bandwidth for i in topo.in_links[node])


def between(topo, a, b):
    """The bandwidths of the links a -> b (node ids), sorted."""
    u, v = topo.index(a), topo.index(b)
    return sorted(l.bandwidth for l in topo.links if (l.src, l.dst) == (u, v))


@pytest.mark.parametrize("expr, nodes, compute, switches, links", COUNTS)
def test_counts(expr, nodes, compute, switches, links):
    t = parse_topology(expr)
    assert (t.num_nodes, t.n, len(t.switch_nodes), len(t.links)) == (nodes, compute, switches, links)


@pytest.mark.parametrize("builder, kw", BUILDERS, ids=IDS)
def test_structure(builder, kw):
    t = builder(**kw)
    assert t.is_bidirectional
    assert t.compute_nodes == tuple(range(t.n))                          # GPUs first, then switches
    assert all(k == SWITCH for k in t.kinds[t.n:])
    assert all(l.alpha == 0 and l.bandwidth.denominator == 1 and l.src != l.dst for l in t.links)
    assert is_strongly_connected(t)
    assert SIZES[builder.__name__](**kw) == (t.num_nodes, len(t.links))  # the size function is exact
    assert t.name and t.expr.startswith(builder.__name__ + "(") and "=" in t.expr
    again = parse_topology(t.expr)                                        # expr rebuilds it exactly
    assert again.expr == t.expr and again.names == t.names and again.kinds == t.kinds
    assert again.links == t.links
    assert FAMILIES[builder.__name__].build is builder


@pytest.mark.parametrize("builder, kw", BUILDERS, ids=IDS)
def test_layered_layout(builder, kw):
    t = builder(**kw)
    name, pos = choose_layout(t)
    assert len(pos) == t.num_nodes
    if t.switch_nodes:
        assert name == "layered"
        assert {pos[u][1] for u in t.compute_nodes} == {0.0}             # the GPUs on the bottom row
        assert all(pos[u][1] > 0 for u in t.switch_nodes)
    else:                                                                  # a single MI250 cluster has no switch
        assert builder is cl.mi250 and kw["clusters"] == 1


def test_expressions_are_canonical():
    assert cl.dgx_a100(2).expr == "dgx_a100(boxes=2)" and cl.dgx_a100(2).name == "DGX A100 x2"
    assert cl.dgx_a100().name == "DGX A100"
    assert cl.mi250(2, 8).expr == "mi250(clusters=2,gpus_per_cluster=8)"
    assert cl.mi250().expr == "mi250(clusters=1,gpus_per_cluster=16)"
    assert cl.cluster(2, 4, 10, 1).expr == "cluster(boxes=2,gpus=4,box_bw=10,spine_bw=1)"
    assert cl.fat_tree(4).expr == "fat_tree(k=4,bw=25)"
    assert parse_topology("dgx_a100(2)").links == parse_topology("dgx_a100(boxes=2)").links


def test_mi250_adjacency():
    m = cl.MI250_XGMI
    assert len(m) == 16 and all(len(row) == 16 for row in m)
    assert all(m[i][j] == m[j][i] for i in range(16) for j in range(16))
    assert all(m[i][i] == 0 for i in range(16)) and all(sum(row) == 7 for row in m)
    assert all(3 <= sum(1 for x in row if x) <= 4 for row in m)           # "three or four other GPUs"
    t = cl.mi250(clusters=2)
    for g in t.compute_nodes:
        xgmi = [t.links[i] for i in t.out_links[g] if t.is_compute(t.links[i].dst)]
        assert len(xgmi) == 7 and all(l.bandwidth == 50 for l in xgmi)   # 7 separate 50 GB/s links
        assert sum(l.bandwidth for l in xgmi) == 350
    assert between(t, "c1.g0", "c1.g1") == [50] * 4 and between(t, "c1.g1", "c1.g0") == [50] * 4
    assert between(t, "c0.g0", "c0.g8") == [50] and between(t, "c0.g0", "c0.g2") == []
    assert between(t, "c0.g0", "c1.g1") == []                                # clusters meet only at the IB switch
    assert between(t, "c1.g15", "ib") == [16]


def test_mi250_eight_plus_eight_is_the_induced_subgraph():
    half, full = cl.mi250(2, 8), cl.mi250(2, 16)
    for c in range(2):
        for i in range(8):
            for j in range(8):
                a, b = f"c{c}.g{i}", f"c{c}.g{j}"
                assert between(half, a, b) == between(full, a, b) == [50] * cl.MI250_XGMI[i][j]
    assert Counter(half.kinds) == {COMPUTE: 16, SWITCH: 1}


@pytest.mark.parametrize("expr, per_gpu", [
    ("dgx_a100(boxes=1)", 300), ("dgx_a100(boxes=2)", 325), ("dgx_a100(boxes=5)", 325),
    ("mi250(clusters=1)", 350), ("mi250(clusters=2)", 366),
    ("cluster(2,4,10,1)", 11), ("cluster(1,4,10,1)", 10), ("fat_tree(4,bw=7)", 7),
])
def test_per_gpu_ingress(expr, per_gpu):
    t = parse_topology(expr)
    assert {ingress(t, g) for g in t.compute_nodes} == {Fraction(per_gpu)}


def test_dgx_a100_wiring():
    t = cl.dgx_a100(boxes=2)
    assert t.names[:9] == tuple(f"b0.g{j}" for j in range(8)) + ("b1.g0",)
    assert between(t, "b1.g3", "b1.nvs") == [300] and between(t, "b1.g3", "b0.nvs") == []
    assert between(t, "b1.g3", "b1.nic3") == [25] and between(t, "b1.nic3", "b1.g3") == [25]
    assert between(t, "b1.nic3", "ib1") == [25] and between(t, "b1.nic3", "ib0") == []
    assert between(t, "b0.nic4", "ib0") == [25]
    assert ingress(t, t.index("ib0")) == ingress(t, t.index("ib1")) == 8 * 25
    single = cl.dgx_a100()
    assert "ib0" not in single.names and not any("nic" in n for n in single.names)


def test_cluster_is_forestcoll_figure_2():
    t = cl.cluster(2, 4, 10, 1)
    assert t.names[8:] == ("b0.sw", "b1.sw", "spine")
    for b in range(2):
        for j in range(4):
            g = f"b{b}.g{j}"
            assert between(t, g, f"b{b}.sw") == [10] and between(t, g, f"b{1 - b}.sw") == []
            assert between(t, g, "spine") == [1] and between(t, "spine", g) == [1]
    # cut S* = one box and its switch: 4 GPUs leave only through the spine, 4b = 4 GB/s out
    side = {t.index(f"b0.g{j}") for j in range(4)} | {t.index("b0.sw")}
    assert sum(l.bandwidth for l in t.links if l.src in side and l.dst not in side) == 4


def test_fat_tree_wiring():
    t = cl.fat_tree(4)
    assert t.n == 16 and len(t.switch_nodes) == 20
    names = Counter(n.split(".")[-1][0] if "core" not in n else "core" for n in t.names[16:])
    assert names == {"e": 8, "a": 8, "core": 4}
    deg = Counter()
    for l in t.links:
        deg[t.names[l.src]] += 1
    assert all(deg[t.names[s]] == 4 for s in t.switch_nodes)           # every switch has k ports
    assert all(deg[t.names[h]] == 1 for h in t.compute_nodes)
    assert between(t, "p2.a0", "core0") == [25] and between(t, "p2.a0", "core1") == [25]
    assert between(t, "p2.a0", "core2") == [] and between(t, "p3.a1", "core3") == [25]
    assert between(t, "p1.e0.h1", "p1.e0") == [25] and between(t, "p1.e1", "p1.a0") == [25]
    assert between(t, "p1.e1", "p2.a0") == []


@pytest.mark.parametrize("expr, words", [
    ("dgx_a100(boxes=0)", "boxes must be at least 1"),
    ("mi250(gpus_per_cluster=12)", "gpus_per_cluster must be 16 or 8, got 12"),
    ("mi250(clusters=0)", "clusters must be at least 1"),
    ("cluster(2,0,10,1)", "gpus must be at least 1"),
    ("cluster(2,4,0,1)", "box_bw must be at least 1"),
    ("fat_tree(3)", "even k"),
    ("fat_tree(0)", "k must be at least 2"),
    ("fat_tree(4,bw=0)", "bw must be at least 1"),
])
def test_bad_parameters(expr, words):
    with pytest.raises(ExpressionError) as e:
        parse_topology(expr)
    assert words in str(e.value) and "\n" not in str(e.value)


def test_bad_parameters_direct():
    with pytest.raises(TopologyError, match="boxes must be at least 1"):
        cl.dgx_a100(boxes=0)
    with pytest.raises(TopologyError, match="16 or 8"):
        cl.mi250(gpus_per_cluster=12)
    with pytest.raises(TopologyError, match="even k"):
        cl.fat_tree(3)
    with pytest.raises(TopologyError, match="must be an integer"):
        cl.cluster(2, 4, 1.5, 1)


def test_size_limit_and_wrong_arguments():
    with pytest.raises(ExpressionError, match="above the limit"):
        parse_topology("fat_tree(40)")                                   # 16000 hosts, refused before building
    with pytest.raises(ExpressionError, match="usage: cluster"):
        parse_topology("cluster(2,4)")
    with pytest.raises(ExpressionError, match="usage: mi250"):
        parse_topology("mi250([1,2])")
    with pytest.raises(ExpressionError, match="usage: fat_tree"):
        parse_topology("fat_tree(k=ring(3))")
