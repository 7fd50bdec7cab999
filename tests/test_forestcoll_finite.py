"""ForestColl at finite sizes (issue 60): the allgather kept for M is the runtime model's fastest of verified
candidate forests (``solvers.forestcoll.finite``); at 1 GB on torus(4,4) it comes within 1 % of the bound, no
single-cable failure of the Failures page's default designs makes the 1 MB time better than the healthy design's,
the optimum (1/x*, k, U) is ForestColl's as before, and the package's modules import one another without a
circle."""
from __future__ import annotations

import ast
from collections import Counter
from pathlib import Path

import pytest

from solvers.core.cost import node_bandwidth
from solvers.core.schedule import Collective, columns
from solvers.core.verify import verify
from solvers.failures import FailureTask, analyse, failure_sets
from solvers.forestcoll import collective_schedule, forestcoll
from solvers.forestcoll.finite import candidates, choose
from solvers.forestcoll.flood import flood_allgather, shortest_allgather, slot_lower_bound
from solvers.forestcoll.retime import hop_units, retimed_allgather
from solvers.runtime import Workload
from solvers.synthesize import synthesize
from topologies import load

PAGE_DESIGNS = ("torus(4,4)", "circulant(16,[1,4])")      # the Failures page's default designs


def _pieces(schedule, k: int):
    """(step, shard, piece, link) of every piece sent, pieces numbered 0 .. k-1 (bounds are over ``one``)."""
    c = columns(schedule)
    for st, sh, lo, hi, li in zip(c.step.tolist(), c.shard.tolist(), c.lo.tolist(), c.hi.tolist(),
                                  c.link.tolist()):
        assert (lo * k) % c.one == 0 and (hi * k) % c.one == 0
        for p in range(lo * k // c.one, hi * k // c.one):
            yield st, sh, p, li


def _loads(schedule, k: int) -> Counter:
    """(shard, piece, link) -> how often it is sent: what a lowering must keep."""
    return Counter((sh, p, li) for _, sh, p, li in _pieces(schedule, k))


def _optimum_us(topo, m: float, work: Workload) -> float:
    """ForestColl's optimum (M/N)/x* (eq. (1)) in the workload's uniform prices: the links' GB/s scaled so that
    the slowest node's egress is B."""
    f = forestcoll(topo)
    scale = work.bandwidth_gbs / float(node_bandwidth(topo))
    return m / (float(f.optimal_algbw) * scale) / 1e3


def test_torus_at_1gb_is_within_one_percent_of_the_optimum():
    """The issue's figure: 94.5 % of the optimum before (the depth lowering, 32 slices); now >= 99 % of both
    ForestColl's optimum (M/N)/x* and the bound the CLI prints, verified, and the detail still gives the optimum's
    1/x*, k and U."""
    topo = load("torus(4,4)")
    work = Workload(1e9)
    r = synthesize(topo, "forestcoll", "allgather", total_bytes=1e9)
    assert r.verification.ok
    priced = work.price_result(r)
    assert _optimum_us(topo, 1e9, work) == pytest.approx(75000.0)          # 15/16 GB at 12.5 GB/s
    assert _optimum_us(topo, 1e9, work) / priced.time_us >= 0.99, (priced.time_us, r.schedule.notes)
    assert priced.bound_us / priced.time_us >= 0.99
    f = forestcoll(topo)
    assert (r.detail.k, r.detail.u, r.detail.inv_x_star) == (f.k, f.u, f.inv_x_star)
    assert f.algbw == f.optimal_algbw                                 # the packing meets 1/x*


@pytest.mark.parametrize("expr", PAGE_DESIGNS)
def test_no_single_cable_failure_is_faster_at_1mb(expr):
    """Every set the Failures page enumerates by default (K = 1 cable, allgather, 1 MB, default prices): the
    degraded fabric's ForestColl time is never below the healthy design's."""
    work = Workload(1e6).key
    healthy = analyse(FailureTask(expr, "links", (), ("forestcoll",), "allgather", work, refresh=True))
    assert healthy["forestcoll_status"] == "ok" and healthy["forestcoll_verified"]
    base = healthy["forestcoll_time_us"]
    sets = failure_sets(load(expr), "links", 1)
    assert len(sets) == 32
    worse = []
    for s in sets:
        row = analyse(FailureTask(expr, "links", tuple(e.name for e in s), ("forestcoll",), "allgather", work,
                                  refresh=True))
        assert row["forestcoll_status"] == "ok" and row["forestcoll_verified"], row
        if row["forestcoll_time_us"] < base * (1 - 1e-9):
            worse.append((row["failed"], row["forestcoll_time_us"]))
    assert not worse, (base, worse)


@pytest.mark.parametrize("expr", ["torus(4,4)", "circulant(16,[1,4])", "ring(8)", "dgx_a100(boxes=2)"])
@pytest.mark.parametrize("m", [1e6, 1e9])
def test_the_kept_allgather_is_the_fastest_verified_candidate(expr, m):
    """Never slower than ForestColl's own lowering nor any other candidate an export can read (on a switched
    fabric: switches forward pieces whole); every candidate verified."""
    from solvers.forestcoll.finite import _forwards_whole

    topo = load(expr)
    f = forestcoll(topo)
    chosen = choose(topo, f, m)
    assert verify(topo, chosen.schedule).ok
    readable = {label for label, _, s in candidates(topo, f) if label == "depth" or _forwards_whole(topo, s)}
    assert chosen.time_us == min(t for label, t in chosen.priced.items() if label in readable)
    assert chosen.time_us <= chosen.priced["depth"]
    assert all(verify(topo, s).ok for _, _, s in candidates(topo, f))


def test_without_m_the_schedule_is_forestcolls_own_lowering():
    """No M: the depth lowering as before (the forestcoll command, exports that do not name a size)."""
    topo = load("torus(4,4)")
    f = forestcoll(topo)
    assert _loads(collective_schedule(topo, Collective.ALLGATHER), f.k) == _loads(f.allgather(), f.k)
    r = synthesize(topo, "forestcoll", "allgather")
    assert "finite_choice" not in r.schedule.notes and r.schedule.steps == f.allgather().steps


@pytest.mark.parametrize("expr", ["torus(4,4)", "dgx_a100(boxes=2)", "mi250(clusters=2)"])
def test_balanced_steps_keep_the_trees_and_their_links(expr):
    """The list-scheduled steps carry exactly the depth lowering's pieces over the same links, and a hop comes
    after the one that brought its piece."""
    topo = load(expr)
    f = forestcoll(topo)
    for per_slot in (1, 2):
        s = retimed_allgather(topo, f.batches, f.routes, f.k, per_slot)
        assert _loads(s, f.k) == _loads(f.allgather(), f.k)
        assert verify(topo, s).ok
    roots, pieces, links, preds = hop_units(f.batches, f.routes)
    assert all(p < u for u, p in enumerate(preds))


@pytest.mark.parametrize("expr,k", [("torus(4,4)", 4), ("torus(4,4)", 1), ("hypercube(4)", 2),
                                    ("circulant(16,[1,4])", 4), ("mesh(3,3)", 2), ("gkautz(2,16)", 3)])
def test_a_flood_is_a_forest_of_k_trees_per_root(expr, k):
    """Every node gets every piece exactly once (so piece i of root u spans a tree), a link's sender holds what
    it sends, and no flood beats the ingress bound on slots."""
    topo = load(expr)
    s = flood_allgather(topo, k)
    assert verify(topo, s).ok
    got = Counter((sh, p, topo.links[li].dst) for _, sh, p, li in _pieces(s, k))
    n = topo.n
    assert len(got) == n * (n - 1) * k and set(got.values()) == {1}
    assert s.steps >= slot_lower_bound(topo, k)


@pytest.mark.parametrize("expr,k", [("torus(4,4)", 4), ("torus(4,4)", 1), ("hypercube(4)", 2),
                                    ("circulant(16,[1,4])", 3), ("mesh(3,3)", 2), ("gkautz(2,16)", 3)])
def test_shortest_path_trees_are_a_forest_in_diameter_steps(expr, k):
    """Every node gets every piece exactly once, in step d(root, node): as many steps as the diameter."""
    from topologies.properties import compute_distances

    topo = load(expr)
    s = shortest_allgather(topo, k)
    assert verify(topo, s).ok
    dist = compute_distances(topo)
    comp = list(topo.compute_nodes)
    got = Counter()
    for st, sh, p, li in _pieces(s, k):
        v = topo.links[li].dst
        assert st == dist[comp.index(sh), comp.index(v)]
        got[(sh, p, v)] += 1
    assert len(got) == topo.n * (topo.n - 1) * k and set(got.values()) == {1}
    assert s.steps == int(dist.max())


@pytest.mark.parametrize("expr", ["torus(4,4)", "hypercube(4)", "circulant(16,[1,4])"])
@pytest.mark.parametrize("m", [1e6, 1e9])
def test_balanced_shortest_trees_take_the_alpha_beta_optimum(expr, m):
    """On these vertex-transitive fabrics the kept allgather takes D alpha + (N-1)/N M/B, the alpha-beta model's
    optimum (direct-connect paper: T_L = D alpha with D the diameter, T_B = (N-1)/N M/B), at every M."""
    from topologies.properties import compute_distances

    topo = load(expr)
    work = Workload(m)
    r = synthesize(topo, "forestcoll", "allgather", total_bytes=m)
    priced = work.price_result(r)
    n, diameter = topo.n, int(compute_distances(topo).max())
    optimum = diameter * work.alpha_us + (n - 1) / n * m / (work.bandwidth_gbs * 1e3)
    assert priced.time_us == pytest.approx(optimum, rel=1e-9)


def test_a_flood_refuses_switches():
    with pytest.raises(ValueError, match="switch-free"):
        flood_allgather(load("dgx_a100(boxes=2)"), 1)
    with pytest.raises(ValueError, match="switch-free"):
        shortest_allgather(load("dgx_a100(boxes=2)"), 1)


def test_the_flood_meets_the_optimum_on_torus():
    """k = 4 pieces per root in U = 15 slots on torus(4,4): every link one piece per slot, the optimum's link
    load (1/x* = 15/4 = U / k) reached without pipelining."""
    topo = load("torus(4,4)")
    best = min((flood_allgather(topo, 4, 1, seed) for seed in range(4)), key=lambda s: s.steps)
    assert best.steps == 15 == slot_lower_bound(topo, 4)
    per_link = Counter(li for _, _, _, li in _pieces(best, 4))
    assert set(per_link.values()) == {15}


def test_no_import_circle_and_small_modules():
    """The package's modules import one another (at the top or inside a function) without a circle, and each
    stays under 600 lines."""
    pkg = Path(__file__).resolve().parents[1] / "solvers" / "forestcoll"
    graph: dict[str, set[str]] = {}
    for path in pkg.glob("*.py"):
        text = path.read_text(encoding="utf-8")
        assert len(text.splitlines()) <= 600, path.name
        deps = set()
        for node in ast.walk(ast.parse(text)):
            if isinstance(node, ast.ImportFrom) and node.level == 1:
                if node.module:
                    deps.add(node.module.split(".")[0])
                else:
                    deps.update(a.name for a in node.names if (pkg / f"{a.name}.py").exists())
                    deps.add("__init__")
        graph[path.stem] = deps - {path.stem}
    state: dict[str, int] = {}

    def visit(m: str, trail: list[str]) -> None:
        state[m] = 1
        for d in graph.get(m, ()):
            assert state.get(d) != 1, " -> ".join(trail + [m, d])
            if d not in state:
                visit(d, trail + [m])
        state[m] = 2

    for m in graph:
        if m not in state:
            visit(m, [])
    assert "packing" not in graph["boxes"] and "mapping" not in graph["boxes"] and "packing" not in graph["mapping"]


@pytest.mark.parametrize("expr", ["dgx_a100(boxes=2)", "mi250(clusters=2,gpus_per_cluster=8)"])
@pytest.mark.parametrize("collective", ["allgather", "reduce_scatter", "allreduce"])
def test_a_switched_fabric_keeps_a_schedule_its_exports_can_read(expr, collective):
    """The candidate kept at M on a switched fabric forwards every piece whole through the switches, as the export's
    GPU-to-GPU view needs: a balanced lowering of dgx_a100(boxes=2) that did not made its allreduce export fail."""
    from solvers.core.switch_paths import network_view
    from solvers.synthesize import synthesize as build

    for total in (1e6, 1e9):
        result = build(load(expr), "forestcoll", collective, total_bytes=total)
        assert result.verification.ok
        network_view(result.topology, result.schedule)          # raises where a switch splits a piece
