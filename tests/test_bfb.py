"""BFB (direct-connect paper section 6.1, App. E): the exact fast path against the paper's numbers and against the
Pyomo LPs, reduce-scatter and allreduce, chunked and heterogeneous variants, the bottleneck report."""
import importlib
import json
from fractions import Fraction

import pytest
from hypothesis import HealthCheck, given, settings
from hypothesis import strategies as st

from solvers.directconnect.bfb import (bfb_allgather, bfb_chunked, bfb_timed, chunk_counts, receiver_problems,
                                       solve_problem)
from solvers.directconnect.bfb_assignment import assign_sources
from solvers.directconnect.bfb_lp import lp1_model, lp14_solve, lp_allgather, solve, write_lp
from solvers.core.cost import cost, step_model_us
from solvers.core.schedule import Collective
from solvers.synthesize import synthesize
from solvers.core.verify import verify
from studio.cli import main
from topologies import parse_topology
from topologies.model import Link, Topology
from topologies.properties import degree, diameter

from .helpers import strongly_connected_topologies

bfb_module = importlib.import_module("solvers.directconnect.bfb")


def run(expr):
    topo = parse_topology(expr)
    schedule = bfb_allgather(topo)
    assert verify(topo, schedule).ok
    return topo, schedule, cost(topo, schedule)


@pytest.mark.parametrize("expr", ["torus(3,4,5)", "torus(4,6)", "torus(5,5)", "biring(2,8)", "biring(2,7)",
                                  "hypercube(6)", "complete(5)", "bipartite(4)", "hamming(2,3)",
                                  "circulant(16,[3,4])"])
def test_bw_optimal_families(expr):
    topo, schedule, c = run(expr)
    assert c.tb_factor == Fraction(topo.n - 1, topo.n) == c.tb_lower_bound
    assert c.steps == diameter(topo)
    assert all(r.balanced for r in schedule.notes["report"])


@pytest.mark.parametrize("expr, steps, tau", [
    ("gkautz(4,64)", 3, Fraction(21, 16)),                  # 1.3125
    ("gkautz(4,1024)", 5, Fraction(341, 256)),              # 1.33203125
    ("debruijn(4,4)", 4, Fraction(85, 64)),                 # 1.328125
    ("line(circulant(16,[3,4]),3)", 6, Fraction(261, 256)),  # 1.01953125
])
def test_paper_values(expr, steps, tau):
    _, _, c = run(expr)
    assert (c.steps, c.tb_factor) == (steps, tau)


def test_report_names_the_bottleneck_of_a_non_optimal_graph():
    topo, schedule, c = run("gkautz(4,64)")
    report = schedule.notes["report"]
    assert sum(r.u for r in report) * degree(topo) / topo.n == c.tb_factor
    assert any(not r.balanced or r.tight_sources < r.sources for r in report)
    worst = max(report, key=lambda r: r.u)
    assert worst.u == Fraction(worst.tight_sources, worst.tight_links)


def figure5():
    """App. E's Figure 5: receiver u2 with in-neighbours w1, w2, w3; source v1 may use w1 or w2, v2 w2 or w3."""
    names = ("v1", "v2", "w1", "w2", "w3", "u2")
    ix = {n: i for i, n in enumerate(names)}
    edges = [("v1", "w1"), ("v1", "w2"), ("v2", "w2"), ("v2", "w3"), ("w1", "u2"), ("w2", "u2"), ("w3", "u2"),
             ("u2", "v1"), ("u2", "v2")]
    return Topology.from_edges(6, [(ix[a], ix[b]) for a, b in edges], node_names=names)


def test_figure5_lp_gives_two_thirds():
    topo = figure5()
    (p,) = [p for p in receiver_problems(topo) if topo.names[p.u] == "u2" and p.t == 2]
    assert [topo.names[v] for v in p.sources] == ["v1", "v2"]
    assert solve_problem(topo, p)[0] == Fraction(2, 3)
    u_val, x = solve(lp1_model(topo, p))
    assert abs(u_val - 2 / 3) < 1e-9
    assert assign_sources([1, 1], [(0, 1), (1, 2)], [Fraction(1)] * 3)[0] == Fraction(2, 3)
    text = write_lp(lp1_model(topo, p))
    assert "min" in text and "v1" in text and "w2" in text


@settings(max_examples=15, deadline=None, suppress_health_check=[HealthCheck.too_slow])
@given(strongly_connected_topologies(max_nodes=6, switches=False))
def test_exact_path_matches_the_pyomo_lp(topo):
    for p in receiver_problems(topo):
        exact, _ = solve_problem(topo, p)
        lp, _ = solve(lp1_model(topo, p))
        assert abs(float(exact) - lp) < 1e-9
    fast = bfb_allgather(topo)
    reference = lp_allgather(topo)
    assert verify(topo, fast).ok and verify(topo, reference).ok
    assert abs(float(cost(topo, fast).tb_factor) - float(cost(topo, reference).tb_factor)) < 1e-6
    assert max(fast.notes["U"].values()) == max(r.u for r in fast.notes["report"])


def test_parallel_and_serial_paths_agree(monkeypatch):
    topo = parse_topology("gkautz(3,40)")
    serial = bfb_allgather(topo)
    monkeypatch.setattr(bfb_module, "PARALLEL_MIN_NODES", 1)
    parallel = bfb_allgather(topo)
    assert verify(topo, parallel).ok
    assert cost(topo, parallel).tb_factor == cost(topo, serial).tb_factor
    assert parallel.count == serial.count


def test_an_allreduce_shares_one_pool_between_its_phases(monkeypatch):
    """BFB's allreduce forks one pool before its first phase and both phases use it (a pool forked for the second
    phase would inherit the first phase's columns); the schedule is the serial one, row for row."""
    import numpy as np

    from solvers.core.schedule import columns
    from solvers.synthesize import synthesize

    topo = parse_topology("gkautz(3,40)")
    serial = synthesize(topo, "bfb", Collective.ALLREDUCE).schedule
    monkeypatch.setattr(bfb_module, "PARALLEL_MIN_NODES", 1)
    pools = []
    real = bfb_module.shared_workers

    def watched(topos):
        pools.append(len(topos))
        return real(topos)

    monkeypatch.setattr("solvers.directconnect.synthesizers.shared_workers", watched)
    forked = []
    monkeypatch.setattr(bfb_module, "_solve_receivers", _counting(bfb_module._solve_receivers, forked))
    parallel = synthesize(topo, "bfb", Collective.ALLREDUCE)
    assert parallel.verification.ok and pools == [2] and len(forked) == 2 and not bfb_module._SHARED
    a, b = columns(serial), columns(parallel.schedule)
    assert all(np.array_equal(getattr(a, f), getattr(b, f)) for f in ("step", "link", "shard", "lo", "hi"))


def _counting(solve, calls):
    """``solve`` that records the calls made in this process (the parent's share of each phase)."""
    def counted(*args, **kwargs):
        calls.append(args[2])
        return solve(*args, **kwargs)
    return counted


def _bfb_in_a_daemon(queue) -> None:
    bfb_module.PARALLEL_MIN_NODES = 1          # would fork workers, which a daemon may not have
    try:
        topo = parse_topology("gkautz(3,40)")
        queue.put(("ok", bfb_allgather(topo).count, verify(topo, bfb_allgather(topo)).ok))
    except BaseException as exc:               # noqa: BLE001 - reported to the test
        queue.put(("error", repr(exc), False))


def test_bfb_inside_a_daemon_process_runs_serially():
    """Dask's worker processes are daemons: BFB on a large topology there (a sweep task) must not fork its pool
    (it raised 'daemonic processes are not allowed to have children')."""
    import multiprocessing

    ctx = multiprocessing.get_context("fork")
    queue = ctx.Queue()
    child = ctx.Process(target=_bfb_in_a_daemon, args=(queue,), daemon=True)
    child.start()
    status, count, ok = queue.get(timeout=120)
    child.join(30)
    assert status == "ok", count
    assert ok and count == bfb_allgather(parse_topology("gkautz(3,40)")).count


@pytest.mark.parametrize("expr", ["gkautz(2,7)", "circulant(8,[2,3])", "debruijn(2,3)", "torus(3,4)"])
@pytest.mark.parametrize("collective", ["reduce_scatter", "allreduce"])
def test_reduce_scatter_and_allreduce(expr, collective):
    topo = parse_topology(expr)
    result = synthesize(topo, "bfb", collective)
    ag_t = cost(topo.transpose(), bfb_allgather(topo.transpose()))
    ag = cost(topo, bfb_allgather(topo))
    assert result.verification.ok
    if collective == "reduce_scatter":
        assert (result.cost.steps, result.cost.tb_factor) == (ag_t.steps, ag_t.tb_factor)
    else:
        assert (result.cost.steps, result.cost.tb_factor) == (ag_t.steps + ag.steps, ag_t.tb_factor + ag.tb_factor)


def test_chunk_counts_are_whole_chunks():
    topo = parse_topology("circulant(16,[3,4])")
    schedule = bfb_allgather(topo)
    chunks, rows = chunk_counts(schedule)
    assert chunks == 4    # the digest's lcm for C(16,{3,4})
    cols = schedule.stored_columns()
    for (shard, first, count, link, step), lo, hi in zip(rows[:500], cols.lo.tolist(), cols.hi.tolist()):
        assert isinstance(first, int) and isinstance(count, int) and count >= 1
        assert Fraction(first, chunks) == Fraction(lo, cols.one) and Fraction(first + count, chunks) == Fraction(hi, cols.one)


@pytest.mark.parametrize("expr", ["gkautz(4,64)", "circulant(16,[3,4])", "gkautz(3,50)", "torus(3,5)"])
@pytest.mark.parametrize("chunks", [1, 2, 3, 5, 8])
def test_p_chunk_rounding_respects_theorem_20(expr, chunks):
    topo = parse_topology(expr)
    exact = cost(topo, bfb_allgather(topo)).tb_factor
    schedule = bfb_chunked(topo, chunks)
    assert verify(topo, schedule).ok
    c = cost(topo, schedule)
    assert all((t.lo * chunks).denominator == 1 and (t.hi * chunks).denominator == 1 for t in schedule.transfers)
    d, n, big_d = degree(topo), topo.n, diameter(topo)
    bound = Fraction(d * (d ** big_d - 1), (d - 1) * chunks * n)
    assert exact <= c.tb_factor <= exact + bound


def hetero(alpha_far=Fraction(200)):
    """A 4-node graph where receiver 3 hears from 1 (fast), 2 (slow, large alpha) and 0."""
    links = [Link(0, 1, Fraction(10), Fraction(1)), Link(0, 2, Fraction(10), Fraction(1)),
             Link(1, 3, Fraction(10), Fraction(1)), Link(2, 3, Fraction(5), alpha_far),
             Link(3, 0, Fraction(10), Fraction(1)), Link(1, 0, Fraction(10), Fraction(1)),
             Link(2, 0, Fraction(10), Fraction(1)), Link(3, 1, Fraction(10), Fraction(1)),
             Link(3, 2, Fraction(10), Fraction(1))]
    return Topology(("0", "1", "2", "3"), ("compute",) * 4, tuple(links))


def test_heterogeneous_bfb_skips_a_link_whose_alpha_alone_dominates():
    topo = hetero()
    schedule = bfb_timed(topo, 4e6)
    assert verify(topo, schedule).ok
    used = {t.link for t in schedule.transfers if t.step == 2}
    # shard = 1e6 bytes; link 1->3 (10 GB/s, 1 us) carries node 0's shard in 101 us, and the alpha-200 link
    # 2->3 cannot help: it would cost 200 us even empty. LP (14) as written charges it anyway; the re-solve not.
    assert 3 not in used and schedule.notes["U"][2] == 101
    (p,) = [p for p in receiver_problems(topo) if p.u == 3 and p.t == 2]
    from solvers.directconnect.bfb_lp import lp14_model
    naive, _ = solve(lp14_model(topo, p, 1000.0))
    repaired, _, dropped = lp14_solve(topo, p, 1000.0)
    assert abs(naive - 200) < 1e-9 and abs(repaired - 101) < 1e-9 and dropped
    assert schedule.notes["time_us"] == Fraction(sum(schedule.notes["U"].values()))
    assert abs(step_model_us(topo, schedule, 4e6) - float(schedule.notes["time_us"])) < 1e-9


@settings(max_examples=12, deadline=None, suppress_health_check=[HealthCheck.too_slow])
@given(strongly_connected_topologies(max_nodes=5, switches=False), st.lists(st.integers(0, 20), min_size=30,
                                                                             max_size=30))
def test_heterogeneous_exact_path_matches_lp14_with_its_resolve(topo, alphas):
    links = tuple(Link(l.src, l.dst, l.bandwidth, Fraction(a)) for l, a in zip(topo.links, alphas * 4))
    topo = Topology(topo.names, topo.kinds, links)
    total = 1e5
    schedule = bfb_timed(topo, total)
    assert verify(topo, schedule).ok
    shard_us = total / topo.n / 1000
    by_t = {}
    for p in receiver_problems(topo):
        u_val, _, _ = lp14_solve(topo, p, shard_us)
        by_t[p.t] = max(by_t.get(p.t, 0.0), u_val)
    assert all(abs(float(schedule.notes["U"][t]) - by_t[t]) < 1e-7 * max(1.0, by_t[t]) for t in by_t)


def test_product_of_distinct_graphs_is_bw_optimal_by_bfb():
    topo, _, c = run("product(biring(2,5),complete(3))")
    assert c.tb_factor == Fraction(14, 15) and c.steps == 2 + 1


@pytest.mark.parametrize("collective", ["allgather", "reduce_scatter", "allreduce"])
def test_cli_bfb_every_collective(collective, capsys):
    assert main(["schedule", "torus(4,6)", "--algo", "bfb", "--collective", collective, "--json"]) == 0
    out = json.loads(capsys.readouterr().out)
    factor = 2 if collective == "allreduce" else 1
    assert out["verified"] and out["bw_optimal"] and out["steps"] == factor * 5
    assert Fraction(out["tb_factor_exact"]) == factor * Fraction(23, 24)


def test_cli_progress_goes_to_stderr(capsys):
    assert main(["schedule", "hypercube(6)", "--algo", "bfb", "--progress", "--json"]) == 0
    captured = capsys.readouterr()
    assert json.loads(captured.out)["steps_report"][0]["balanced"] is True
    assert "bfb: 100%" in captured.err and "verify" in captured.err


def test_cli_bfb_with_bytes_uses_lp14_on_links_with_alpha(tmp_path, capsys):
    from topologies.files import write_topology

    path = tmp_path / "hetero.json"
    write_topology(hetero(), path)
    assert main(["schedule", str(path), "--algo", "bfb", "--bytes", "4e6", "--prices", "links", "--json"]) == 0
    out = json.loads(capsys.readouterr().out)
    expected = bfb_timed(hetero(), 4e6).notes["time_us"]
    assert out["verified"] and abs(out["step_model_us"] - float(expected)) < 1e-9
    # the runtime model lets a link start as soon as its data is there: never slower than the step model
    assert out["time_us"] <= out["step_model_us"] * (1 + 1e-12)
    assert main(["schedule", str(path), "--algo", "bfb", "--json"]) == 0     # without M: LP (1) on bandwidths
    assert json.loads(capsys.readouterr().out)["verified"]
