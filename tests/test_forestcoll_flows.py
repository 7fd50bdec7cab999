"""ForestColl's max-flow backends (issue 60): flow values on igraph's push-relabel where it is installed, on
SciPy's Dinic otherwise, and Algorithm 5's residual graph D̄ kept as one ``FlowGraph`` updated in place. Whichever
runs, the flow values are the same exact integers, so the optimum 1/x*, k, U and the packing are the same, and
the schedules verify (digest notes/forestcoll.md sections 2.1 and 2.4). The oracles are networkx's preflow-push on
Python integers and the brute-force cut enumeration of test_forestcoll."""
import random
from fractions import Fraction

import networkx as nx
import pytest
from hypothesis import HealthCheck, given, settings, strategies as st

from solvers.core.maxflow import FlowGraph, Network, backend, use_backend
from solvers.forestcoll import forestcoll
from solvers.forestcoll.packing import Batch
from topologies import parse_topology

from tests.test_forestcoll import assert_sound, brute_inv_x, fabrics

BACKENDS = ["scipy"] + (["igraph"] if backend() == "igraph" else [])


def nx_value(n, arcs, s, t) -> int:
    g = nx.DiGraph()
    g.add_nodes_from(range(n))
    for (u, v), c in arcs.items():
        g.add_edge(u, v, capacity=c)
    return int(nx.maximum_flow_value(g, s, t))


@pytest.mark.parametrize("name", BACKENDS)
def test_flow_graph_matches_networkx_as_capacities_change(name):
    rng = random.Random(60)
    n = 12
    arcs = {(u, v): rng.randint(0, 9) for u in range(n) for v in range(n) if u != v and rng.random() < 0.4}
    with use_backend(name):
        graph = FlowGraph(n, dict(arcs), 10 * len(arcs))
        assert graph.kind == name
        for _ in range(40):
            a = rng.choice(list(arcs))
            arcs[a] = rng.randint(0, 9)
            graph.set(*a, arcs[a])
            s, t = rng.sample(range(n), 2)
            assert graph.flow(s, t) == nx_value(n, arcs, s, t)
            assert Network(n, arcs).flow(s, t) == nx_value(n, arcs, s, t)


def test_flow_graph_beyond_doubles_runs_on_python_integers():
    big = 2 ** 60 + 1                     # not a double: igraph would round it, so the exact path must run
    arcs = {(0, 1): big, (1, 2): big + 2, (0, 2): 3}
    graph = FlowGraph(3, arcs, 4 * big)
    assert graph.kind == "exact"
    assert graph.flow(0, 2) == big + 3
    assert Network(3, arcs).flow(0, 2) == big + 3


def test_unknown_backend_is_refused():
    with pytest.raises(ValueError, match="unknown max-flow backend"):
        with use_backend("gurobi"):
            pass


def run(expr_or_topo, name, **kw):
    topo = parse_topology(expr_or_topo) if isinstance(expr_or_topo, str) else expr_or_topo
    with use_backend(name):
        return topo, forestcoll(topo, **kw)


@pytest.mark.skipif(len(BACKENDS) < 2, reason="igraph is not installed: only SciPy's flows run")
@pytest.mark.parametrize("expr", ["gkautz(2,12)", "circulant(16,[1,2,4])", "torus(3,3)", "dgx_a100(boxes=2)",
                                  "mi250(clusters=2)"])
def test_backends_give_the_same_forest(expr):
    results = [run(expr, name) for name in BACKENDS]
    (topo, a), (_, b) = results
    assert (a.inv_x_star, a.k, a.u, a.packing_method) == (b.inv_x_star, b.k, b.u, b.packing_method)
    assert a.bottleneck == b.bottleneck
    assert [(x.root, x.mult, x.edges) for x in a.batches] == [(x.root, x.mult, x.edges) for x in b.batches]
    assert a.algbw == a.optimal_algbw
    assert_sound(topo, b)


@pytest.mark.parametrize("name", BACKENDS)
def test_algorithm_5_alone_on_each_backend(name):
    topo, f = run("circulant(12,[1,3])", name, pack_method="exact")
    assert f.packing_method == "exact" and f.algbw == f.optimal_algbw
    assert f.inv_x_star == Fraction(11, 4)          # a 4-regular fabric of 1 GB/s links: (N-1)/B⁻(v)
    assert_sound(topo, f)


@settings(max_examples=25, deadline=None, suppress_health_check=[HealthCheck.too_slow])
@given(fabrics(), st.sampled_from([None, 2]))
def test_random_fabrics_same_optimum_on_every_backend(topo, k):
    forests = [run(topo, name, fixed_k=k)[1] for name in BACKENDS]
    first = forests[0]
    if k is None:
        assert first.inv_x_star == brute_inv_x(topo) and first.algbw == first.optimal_algbw
    for f in forests:
        assert (f.inv_x_star, f.k, f.u) == (first.inv_x_star, first.k, first.u)
        assert_sound(topo, f)
    with use_backend(BACKENDS[-1]):
        again = forestcoll(topo, k, pack_method="exact")
    assert (again.k, again.u) == (first.k, first.u)
    assert_sound(topo, again)


# ------------------------------------------------------------------------ circulants: root 0's trees translated
def test_cyclic_budgets_read_circulants_and_refuse_other_fabrics():
    from solvers.forestcoll.cyclic import cyclic_budgets

    ring = {(i, (i + 1) % 5): 2 for i in range(5)} | {(i, (i - 1) % 5): 2 for i in range(5)}
    assert cyclic_budgets(range(5), ring) == {1: 2, 4: 2}
    uneven = dict(ring)
    uneven[(0, 1)] = 3                          # one arc of offset 1 wider than the others
    assert cyclic_budgets(range(5), uneven) is None
    missing = dict(ring)
    del missing[(0, 1)]
    assert cyclic_budgets(range(5), missing) is None
    assert cyclic_budgets([1, 2, 3, 4, 5], ring) is None          # not numbered 0..N-1


@pytest.mark.parametrize("expr, inv_x", [("circulant(64,[1,2,4,8])", Fraction(63, 8)),
                                         ("circulant(40,[1,3,9])", Fraction(39, 6)),
                                         ("circulant(24,[1,5])", Fraction(23, 4))])
def test_circulants_pack_by_translation_at_the_optimum(expr, inv_x):
    """The single-node cut (N-1)/B⁻(v) is the bottleneck of these circulants (1 GB/s links), so every arc is
    saturated at the optimum; the translated trees reach it exactly and the schedule verifies."""
    topo = parse_topology(expr)
    f = forestcoll(topo)
    assert f.inv_x_star == inv_x and f.algbw == f.optimal_algbw
    assert f.packing_method in ("cyclic", "greedy")
    assert_sound(topo, f)
    again = forestcoll(topo, pack_method="cyclic")
    assert again.packing_method == "cyclic" and (again.k, again.u) == (f.k, f.u)
    assert len(again.batches) <= 4 * topo.n                 # a few shapes per root, shifted
    assert_sound(topo, again)


def test_cyclic_packing_matches_algorithm_5_on_small_circulants():
    """Same k, U as Algorithm 5 from the start (the oracle: Theorems 10-12 guarantee Algorithm 5's packing)."""
    for expr in ("circulant(12,[1,3])", "circulant(16,[1,2,4])", "ring(7)"):
        topo = parse_topology(expr)
        exact = forestcoll(topo, pack_method="exact")
        cyc = forestcoll(topo, pack_method="cyclic")
        assert (cyc.inv_x_star, cyc.k, cyc.u) == (exact.inv_x_star, exact.k, exact.u)
        assert_sound(topo, cyc)


def test_cyclic_method_refuses_a_fabric_that_is_not_cyclic():
    from solvers.forestcoll.packing import PackingError

    with pytest.raises(PackingError, match="not cyclic"):
        forestcoll(parse_topology("gkautz(2,12)"), pack_method="cyclic")


@settings(max_examples=25, deadline=None, suppress_health_check=[HealthCheck.too_slow])
@given(st.integers(5, 24), st.lists(st.integers(1, 11), min_size=1, max_size=3, unique=True))
def test_random_circulants_by_translation(n, gens):
    """Random connected circulants: where the translation packs (it may decline), k, U are the optimum's and the
    schedule verifies; the default pipeline always reaches the optimum."""
    from math import gcd

    from solvers.forestcoll.packing import PackingError

    gens = sorted({g % n for g in gens} - {0})
    if not gens or gcd(n, *gens) != 1:
        return
    topo = parse_topology(f"circulant({n},[{','.join(map(str, gens))}])")
    f = forestcoll(topo)
    assert f.algbw == f.optimal_algbw
    assert_sound(topo, f)
    try:
        cyc = forestcoll(topo, pack_method="cyclic")
    except PackingError:
        return
    assert (cyc.inv_x_star, cyc.k, cyc.u) == (f.inv_x_star, f.k, f.u)
    assert_sound(topo, cyc)


# --------------------------------------------------------- greedy restarts resumed from the last run's trace
def restarts_from_nothing(nodes, arcs, k):
    """``packing._greedy`` as it was before the traces: every restart from a fresh state."""
    from solvers.forestcoll.packing import MAX_RESTARTS, PATIENCE, Growth, _packing

    watched, best, idle = [], -1, 0
    for _ in range(MAX_RESTARTS + 1):
        ran_with = list(watched)
        growth = Growth.fresh(nodes, arcs, k)
        batches, stuck = _packing(nodes, arcs, k, False, None, ran_with, growth)
        if batches is not None:
            return batches, ran_with, len(batches)
        best, idle = (len(growth.done), 0) if len(growth.done) > best else (best, idle + 1)
        if stuck in watched or idle >= PATIENCE:
            break
        watched.append(stuck)
    return None, ran_with, len(growth.done)


def same_greedy(topo) -> int:
    from solvers.forestcoll.packing import _greedy
    from solvers.forestcoll.search import fabric, optimal_ratio
    from solvers.forestcoll.splitting import remove_switches

    fab = fabric(topo)
    opt = optimal_ratio(fab)
    caps = {a: int(opt.u * c) for a, c in fab.arcs.items()}
    arcs = remove_switches(fab.n, fab.compute, caps, opt.k, "unchecked").arcs
    old = restarts_from_nothing(fab.compute, arcs, opt.k)
    new = _greedy(fab.compute, arcs, opt.k)
    shape = lambda r: (None if r[0] is None else [(b.root, b.mult, b.edges) for b in r[0]], r[1], r[2])
    assert shape(new) == shape(old)
    return len(old[1])


@pytest.mark.parametrize("expr, restarts", [("gkautz(4,128)", 11), ("mi250(clusters=2)", 11),
                                            ("circulant(64,[1,2,4,8])", 4)])
def test_restarts_from_the_trace_take_the_same_steps(expr, restarts):
    """The restarts run from the last snapshot before the new watched set first binds; the batches, the watched
    sets and the count finished are those of restarts from nothing."""
    assert same_greedy(parse_topology(expr)) == restarts


@settings(max_examples=20, deadline=None, suppress_health_check=[HealthCheck.too_slow])
@given(fabrics())
def test_random_fabrics_restarts_from_the_trace(topo):
    same_greedy(topo)


# ------------------------------------------------------------------ eq. (5)'s oracle against D̄ built literally
@st.composite
def open_batches(draw):
    """Residual capacities on 3-7 nodes and 0-5 open batches with random node sets and multiplicities (some of
    one root and nested, as splits make them)."""
    n = draw(st.integers(3, 7))
    nodes = list(range(n))
    g = {(x, y): draw(st.integers(0, 3)) for x in nodes for y in nodes if x != y and draw(st.booleans())}
    others = []
    for _ in range(draw(st.integers(0, 5))):
        members = set(draw(st.lists(st.sampled_from(nodes), min_size=1, max_size=n)))
        root = min(members)
        others.append((Batch(root, draw(st.integers(1, 3))), members))
        if draw(st.booleans()):                       # a nested split of the same root
            inner = {root} | set(draw(st.lists(st.sampled_from(sorted(members)), max_size=len(members))))
            others.append((Batch(root, draw(st.integers(1, 3))), inner))
    return nodes, g, others


@settings(max_examples=150, deadline=None)
@given(open_batches())
def test_mu_oracle_matches_the_literal_d_bar(case):
    """F(x, y; D̄) with D̄ = the residual graph plus s_i per other batch (x -> s_i of capacity m(R_i), s_i -> every
    node of R_i unbounded), built as written and solved by networkx, on every pair (x, y), after lowering one
    capacity as the growth does."""
    from solvers.forestcoll.packing import _MuOracle

    nodes, g, others = case
    n = len(nodes)

    def literal(x, y):
        arcs = {a: c for a, c in g.items() if c > 0}
        for i, (b, members) in enumerate(others):
            arcs[(x, n + i)] = arcs.get((x, n + i), 0) + b.mult
            for v in members:
                arcs[(n + i, v)] = 10 ** 6
        return nx_value(n + len(others), arcs, x, y)

    for name in BACKENDS:
        with use_backend(name):
            oracle = _MuOracle(nodes, g, others)
            for x in nodes:
                for y in nodes:
                    if x != y:
                        assert oracle.flow(x, y) == literal(x, y), (name, x, y)
            lowered = [a for a, c in g.items() if c > 0][:1]
            for a in lowered:
                g[a] -= 1
                oracle.set(*a, g[a])
                assert all(oracle.flow(x, y) == literal(x, y) for x in nodes for y in nodes if x != y)
                g[a] += 1


@settings(max_examples=60, deadline=None, suppress_health_check=[HealthCheck.too_slow])
@given(st.integers(2, 9), st.lists(st.tuples(st.integers(0, 8), st.integers(0, 8), st.integers(1, 40)), max_size=40),
       st.integers(0, 8), st.integers(0, 8))
def test_min_cut_sides_agree_on_both_backends(n, arcs, s, t):
    """``Network.cut`` on igraph's flow (no SciPy import) gives SciPy's value and the same source side: the nodes the
    residual graph reaches from s, which every maximum flow shares."""
    s, t = s % n, t % n
    if s == t:
        t = (s + 1) % n
    caps = {}
    for u, v, c in arcs:
        if u % n != v % n:
            caps[(u % n, v % n)] = caps.get((u % n, v % n), 0) + c
    with use_backend("scipy"):
        want = Network(n, caps).cut(s, t)
    with use_backend("igraph"):
        got = Network(n, caps).cut(s, t)
    assert got == want
