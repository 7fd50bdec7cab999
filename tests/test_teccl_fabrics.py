"""TE-CCL's public evaluation topologies (notes te-ccl.md 8.1-8.2): counts vs Table 2, bandwidths, alphas, the
inter-chassis links, size functions and expressions."""
from fractions import Fraction

import pytest

from topologies import COMPUTE, SWITCH, ExpressionError, TopologyError, parse_topology
from topologies import clusters as cl
from topologies import teccl_fabrics as tf
from topologies.expression import FAMILIES
from topologies.properties import is_strongly_connected

# expression, nodes, compute, switches, links (Table 2: DGX1 8/32, NDv2 8/32, DGX2 17/32, AMD 16/56 per chassis)
COUNTS = [
    ("dgx1()", 8, 8, 0, 32),
    ("ndv2()", 8, 8, 0, 32),
    ("ndv2(chassis=2)", 16, 16, 0, 2 * 32 + 2),
    ("ndv2(chassis=3)", 25, 24, 1, 3 * 32 + 6),
    ("ndv2(chassis=4)", 33, 32, 1, 4 * 32 + 8),
    ("dgx2(chassis=1)", 17, 16, 1, 32),
    ("dgx2()", 34, 32, 2, 2 * 32 + 16),
    ("dgx2(chassis=3)", 51, 48, 3, 3 * 32 + 6 * 8),
    ("mi250_teccl()", 16, 16, 0, 56),
    ("mi250_teccl(chassis=2)", 49, 32, 17, 2 * 56 + 2 * 32 + 2 * 16),
    ("mi250_teccl(chassis=3)", 73, 48, 25, 3 * (56 + 32 + 16)),
]

BUILDERS = [
    (tf.dgx1, dict()), (tf.dgx1, dict(alpha=0)),
    (tf.ndv2, dict(chassis=1)), (tf.ndv2, dict(chassis=2)), (tf.ndv2, dict(chassis=3)),
    (tf.ndv2, dict(chassis=5, alpha=Fraction(1, 2), inter_alpha=2)),
    (tf.dgx2, dict(chassis=1)), (tf.dgx2, dict(chassis=2)), (tf.dgx2, dict(chassis=4, alpha=0.1)),
    (tf.mi250_teccl, dict(chassis=1)), (tf.mi250_teccl, dict(chassis=2, alpha=0.6, switch_alpha="0.75")),
    (tf.mi250_teccl, dict(chassis=3)),
]
IDS = [f"{b.__name__}({','.join(f'{k}={v}' for k, v in kw.items())})" for b, kw in BUILDERS]
SIZES = {"dgx1": tf.dgx1_size, "ndv2": tf.ndv2_size, "dgx2": tf.dgx2_size, "mi250_teccl": tf.mi250_teccl_size}

# NDv2's intra-chassis table as the notes print it (GB/s), transcribed independently of CUBE_MESH
NDV2_TABLE = {
    0: {1: 50, 2: 25, 3: 25, 4: 50}, 1: {0: 50, 2: 25, 3: 50, 5: 25}, 2: {0: 25, 1: 25, 3: 50, 6: 50},
    3: {0: 25, 1: 50, 2: 50, 7: 25}, 4: {0: 50, 5: 50, 6: 25, 7: 25}, 5: {1: 25, 4: 50, 6: 25, 7: 50},
    6: {2: 50, 4: 25, 5: 25, 7: 50}, 7: {3: 25, 4: 25, 5: 50, 6: 50},
}


def between(topo, a, b):
    """The links a -> b (node ids) as (bandwidth, alpha), sorted."""
    u, v = topo.index(a), topo.index(b)
    return sorted((l.bandwidth, l.alpha) for l in topo.links if (l.src, l.dst) == (u, v))


def egress(topo, node):
    return sum(topo.links[i].bandwidth for i in topo.out_links[node])


@pytest.mark.parametrize("expr, nodes, compute, switches, links", COUNTS)
def test_counts(expr, nodes, compute, switches, links):
    t = parse_topology(expr)
    assert (t.num_nodes, t.n, len(t.switch_nodes), len(t.links)) == (nodes, compute, switches, links)


@pytest.mark.parametrize("builder, kw", BUILDERS, ids=IDS)
def test_structure(builder, kw):
    t = builder(**kw)
    assert t.compute_nodes == tuple(range(t.n))                          # GPUs first, then switches
    assert all(k == SWITCH for k in t.kinds[t.n:])
    pairs = [(l.src, l.dst) for l in t.links]
    assert len(set(pairs)) == len(pairs)                                 # one link per ordered pair (T_ij)
    assert all(l.src != l.dst and isinstance(l.bandwidth, Fraction) and isinstance(l.alpha, Fraction)
               for l in t.links)
    assert is_strongly_connected(t)
    assert SIZES[builder.__name__](**kw) == (t.num_nodes, len(t.links))  # the size function is exact
    assert t.name and t.expr.startswith(builder.__name__ + "(") and "alpha_ns=" in t.expr
    again = parse_topology(t.expr)                                        # expr rebuilds it exactly
    assert again.expr == t.expr and again.names == t.names and again.kinds == t.kinds
    assert again.links == t.links
    assert FAMILIES[builder.__name__].build is getattr(tf, builder.__name__ + "_ns")


@pytest.mark.parametrize("name, size, args", [
    ("ndv2", tf.ndv2_size, [1, 2, 3, 7]), ("dgx2", tf.dgx2_size, [1, 2, 3, 5]),
    ("mi250_teccl", tf.mi250_teccl_size, [1, 2, 4]),
])
def test_size_functions(name, size, args):
    for c in args:
        t = parse_topology(f"{name}({c})")
        assert size(c) == size(c, 5, 6) == size(c, alpha_ns=1) == (t.num_nodes, len(t.links))
    assert tf.dgx1_size() == tf.dgx1_size(alpha=3) == (8, 32)
    with pytest.raises(TypeError):
        size(1.5)


def test_dgx1_cube_mesh():
    t = tf.dgx1()
    assert t.names == tuple(f"g{j}" for j in range(8))
    assert all(egress(t, g) == 150 for g in t.compute_nodes)            # 6 units of 25 GB/s out of every GPU
    assert all(len(t.out_links[g]) == len(t.in_links[g]) == 4 for g in t.compute_nodes)
    assert all(l.alpha == Fraction(7, 10) for l in t.links)
    assert t.is_bidirectional                                             # the cube-mesh is symmetric
    assert between(t, "g0", "g1") == [(50, Fraction(7, 10))]              # weight 2 = ONE 50 GB/s link
    assert between(t, "g0", "g2") == [(25, Fraction(7, 10))] and between(t, "g0", "g5") == []
    assert {l.bandwidth for l in tf.dgx1(alpha=0).links} == {25, 50}
    assert all(l.alpha == 0 for l in tf.dgx1(alpha=0).links)


def test_ndv2_intra_chassis_is_the_notes_table():
    t = tf.ndv2(chassis=3)
    for c in range(3):
        got = {}
        for l in t.links:
            a, b = t.names[l.src], t.names[l.dst]
            if a.startswith(f"c{c}.") and b.startswith(f"c{c}."):
                got.setdefault(int(a.split(".g")[1]), {})[int(b.split(".g")[1])] = l.bandwidth
                assert l.alpha == Fraction(7, 10)
        assert got == NDV2_TABLE
    # DGX1 is "similar to a single chassis NDv2": the same links
    one = tf.ndv2(chassis=1)
    assert [(l.src, l.dst, l.bandwidth, l.alpha) for l in one.links] == \
           [(l.src, l.dst, l.bandwidth, l.alpha) for l in tf.dgx1().links]


def test_ndv2_two_chassis_links():
    t = parse_topology("ndv2(chassis=2)")
    slow = [(l.src, l.dst, l.bandwidth, l.alpha) for l in t.links if l.bandwidth < 25]
    assert sorted(slow) == [(0, 9, Fraction(25, 2), Fraction(13, 10)), (8, 1, Fraction(25, 2), Fraction(13, 10))]
    assert t.names[9] == "c1.g1" and t.names[8] == "c1.g0"
    assert not t.switch_nodes and not t.is_bidirectional                 # 9 -> 0 does not exist
    assert all(l.alpha == Fraction(7, 10) for l in t.links if l.bandwidth >= 25)
    custom = parse_topology("ndv2(2,alpha_ns=0,inter_alpha_ns=2500)")
    assert {l.alpha for l in custom.links} == {0, Fraction(5, 2)}


def test_ndv2_switch_for_three_or_more():
    t = tf.ndv2(chassis=4)
    assert t.names[-1] == "sw" and t.switch_nodes == (32,)
    inter = Fraction(25, 2), Fraction(13, 10)
    for c in range(4):
        assert between(t, f"c{c}.g0", "sw") == [inter] and between(t, "sw", f"c{c}.g1") == [inter]
        assert between(t, "sw", f"c{c}.g0") == [] and between(t, f"c{c}.g1", "sw") == []
    assert len(t.out_links[32]) == len(t.in_links[32]) == 4


def test_dgx2_wiring():
    t = parse_topology("dgx2()")
    assert t.names[32:] == ("c0.nvs", "c1.nvs")
    fast = Fraction(125), Fraction(35, 100)
    for c in range(2):
        for j in range(16):
            assert between(t, f"c{c}.g{j}", f"c{c}.nvs") == [fast] == between(t, f"c{c}.nvs", f"c{c}.g{j}")
            assert between(t, f"c{c}.g{j}", f"c{1 - c}.nvs") == []
    slow = Fraction(25, 2), Fraction(26, 10)
    inter = sorted((t.names[l.src], t.names[l.dst]) for l in t.links if l.bandwidth == Fraction(25, 2))
    assert inter == sorted((f"c{i}.g{2 * k + 1}", f"c{1 - i}.g{2 * k}") for i in range(2) for k in range(8))
    assert between(t, "c0.g1", "c1.g0") == [slow] and between(t, "c1.g15", "c0.g14") == [slow]
    for c in range(2):                                                    # 8 senders and 8 receivers per chassis
        senders = {t.names[l.src] for l in t.links if l.bandwidth == Fraction(25, 2) and t.names[l.src][1] == str(c)}
        assert senders == {f"c{c}.g{j}" for j in range(1, 16, 2)}
    three = tf.dgx2(chassis=3)
    assert between(three, "c2.g5", "c0.g4") == [slow] == between(three, "c2.g5", "c1.g4")
    assert between(three, "c2.g5", "c2.g4") == [] and between(three, "c0.g4", "c1.g5") == []
    assert not any(l.bandwidth == Fraction(25, 2) for l in tf.dgx2(chassis=1).links)


def test_mi250_teccl_wiring():
    one = tf.mi250_teccl()
    assert not one.switch_nodes and one.is_bidirectional
    assert all(egress(one, g) == 350 for g in one.compute_nodes)
    assert {l.bandwidth for l in one.links} == {50, 100, 200}
    for i in range(16):                                                   # the same machine as ForestColl's MI250
        for j in range(16):
            assert tf.AMD_XGMI[i].get(j, 0) == cl.MI250_XGMI[i][j]
    t = tf.mi250_teccl(chassis=2, alpha=0.6, switch_alpha=0.75)
    assert t.names[32:40] == tuple(f"c0.sw{i}" for i in range(8)) and t.names[-1] == "sw"
    sw = Fraction(25), Fraction(3, 4)
    assert between(t, "c1.g0", "c1.g1") == [(200, Fraction(3, 5))]       # weight 4 = ONE 200 GB/s link
    assert between(t, "c0.g0", "c0.sw0") == [sw] == between(t, "c0.sw0", "c0.g1")   # no 50 GB/s bug on sw 16
    assert between(t, "c1.g7", "c1.sw3") == [sw] and between(t, "c1.g7", "c1.sw2") == []
    assert between(t, "c0.sw7", "sw") == [sw] == between(t, "sw", "c1.sw0")
    assert all(l.bandwidth == 25 for l in t.links if SWITCH in (t.kinds[l.src], t.kinds[l.dst]))
    assert between(t, "c0.g0", "c1.g0") == []                             # chassis meet only at the global switch
    assert t.kinds.count(COMPUTE) == 32 and len(t.in_links[t.index("sw")]) == 16


@pytest.mark.parametrize("expr, words", [
    ("ndv2(chassis=0)", "chassis must be at least 1"),
    ("dgx2(chassis=0)", "chassis must be at least 1"),
    ("mi250_teccl(chassis=0)", "chassis must be at least 1"),
    ("dgx1(alpha_ns=-1)", "alpha_ns must be at least 0"),
    ("ndv2(2,inter_alpha_ns=-5)", "inter_alpha_ns must be at least 0"),
    ("dgx2(alpha_ns=[1,2])", "alpha_ns must be an integer"),
    ("ndv2(alpha=1)", "usage: ndv2"),
    ("dgx1(1,2)", "usage: dgx1"),
    ("ndv2(chassis=ring(3))", "usage: ndv2"),
    ("mi250_teccl(2,0,0,0)", "usage: mi250_teccl"),
])
def test_bad_expressions(expr, words):
    with pytest.raises(ExpressionError) as e:
        parse_topology(expr)
    assert words in str(e.value) and "\n" not in str(e.value)


@pytest.mark.parametrize("call, words", [
    (lambda: tf.ndv2(chassis=0), "chassis must be at least 1"),
    (lambda: tf.dgx2(chassis=1.5), "chassis must be an integer"),
    (lambda: tf.dgx1(alpha=-0.7), "alpha must be at least 0 us, got -0.7"),
    (lambda: tf.ndv2(2, inter_alpha=-1), "inter_alpha must be at least 0"),
    (lambda: tf.mi250_teccl(switch_alpha=Fraction(1, 3)), "whole number of nanoseconds"),
    (lambda: tf.dgx1(alpha=0.0015), "whole number of nanoseconds"),
    (lambda: tf.dgx2(alpha="fast"), "alpha must be a number"),
    (lambda: tf.dgx1(alpha=float("nan")), "alpha must be finite"),
])
def test_bad_arguments_direct(call, words):
    with pytest.raises(TopologyError) as e:
        call()
    assert words in str(e.value) and "\n" not in str(e.value)


def test_alphas_are_exact_and_canonical():
    t = tf.ndv2(2, alpha=0.7, inter_alpha=1.3)
    assert {l.alpha for l in t.links} == {Fraction(7, 10), Fraction(13, 10)}
    assert t.expr == "ndv2(chassis=2,alpha_ns=700,inter_alpha_ns=1300)" and t.name == "NDv2 x2"
    assert tf.dgx1().expr == "dgx1(alpha_ns=700)" and tf.dgx1(0.002).expr == "dgx1(alpha_ns=2)"
    assert tf.dgx2().expr == "dgx2(chassis=2,alpha_ns=350,inter_alpha_ns=2600)"
    assert tf.mi250_teccl().expr == "mi250_teccl(chassis=1,alpha_ns=0,switch_alpha_ns=0)"
    assert parse_topology("ndv2(2)").links == parse_topology("ndv2(chassis=2,alpha_ns=700)").links == t.links


def test_size_limit():
    with pytest.raises(ExpressionError, match="above the limit"):
        parse_topology("dgx2(chassis=300)")                              # 5100 nodes, refused before building
