"""The runtime model (``solvers.runtime``): its consistency with the papers' closed forms and with each synthesizer's
own clock (issue 21, (a)-(f)), its steady-state shortcut against a full simulation, and properties on random
graphs. Times are floats: "equal" means a relative difference below 1e-9."""
from fractions import Fraction

import numpy as np
import pytest
from hypothesis import HealthCheck, given, settings
from hypothesis import strategies as st

from solvers.core.cost import alpha_beta_us, step_model_us
from solvers.core.errors import NotApplicable
from solvers.core.schedule import Collective
from solvers.runtime import Execution, Model, bound_time_us, busbw_factor, message_graph, simulate
from solvers.synthesize import synthesize
from topologies import load
from topologies.catalogue import BASES
from topologies.model import Topology

RTOL = 1e-9
AB = Execution.alpha_beta(10.0, 12.5)


# ---------------------------------------------------------------------------------------------- (a) the ring
@pytest.mark.parametrize("n", [3, 4, 8, 16])
@pytest.mark.parametrize("alpha,bw", [(2.0, 10.0), (0.0, 25.0), (7.5, 1.0)])
def test_a_ring_allreduce_is_the_closed_form(n, alpha, bw):
    """Ring allreduce on a uniform (directed) ring at P = 1: exactly 2(N-1)(alpha + M/(N B))."""
    r = synthesize(load(f"uniring(1,{n})"), "ring", "allreduce")
    for m in (1e3, 1e6, 1e9):
        got = simulate(r.topology, r.schedule, m, Execution.alpha_beta(alpha, bw, slices=1)).time_us
        want = 2 * (n - 1) * (alpha + m / (n * bw * 1e3))
        assert got == pytest.approx(want, rel=RTOL)
    # pipelining cannot help a ring: every link is busy in every step, so the search keeps P = 1
    assert simulate(r.topology, r.schedule, 1e9, Execution.alpha_beta(alpha, bw)).slices == 1 or alpha == 0


# ------------------------------------------------------------------------------------- (b) ForestColl's trees
@pytest.mark.parametrize("expr", ["dgx_a100(boxes=2)", "mi250(clusters=2)"])
def test_b_forestcoll_pipelines_to_its_proven_rate(expr):
    """At M = 1 GB the pipelined trees come within 2 % of M / (N x*) (allgather) and twice that (allreduce),
    and never beat it."""
    topo = load(expr)
    m = 1e9
    for coll, phases in (("allgather", 1), ("allreduce", 2)):
        r = synthesize(topo, "forestcoll", coll, total_bytes=m)
        optimum = phases * m / float(r.detail.optimal_algbw) / 1e3         # M / (N x*) in us, per phase
        got = simulate(r.topology, r.schedule, m)
        assert optimum * (1 - RTOL) <= got.time_us <= 1.02 * optimum, (coll, got.time_us, optimum, got.slices)
        assert got.slices > 1
        assert got.time_us >= bound_time_us(topo, Collective.parse(coll), m) * (1 - RTOL)


# ------------------------------------------------------------------------------------------- (c) TACOS's clock
@pytest.mark.parametrize("expr", ["dgx_a100(boxes=2)", "mesh(3,3,bw=50,alpha_ns=500)", "torus(4,4)",
                                  "mi250(clusters=2)", "ring_fc_switch(4)"])
@pytest.mark.parametrize("coll", ["allgather", "reduce_scatter", "allreduce"])
def test_c_tacos_chunking_gives_tacos_time(expr, coll):
    """TACOS's own chunking (P = 1, its buffer) takes exactly the collective time TACOS reports."""
    r = synthesize(load(expr), "tacos", coll, total_bytes=1e8)
    d = r.detail
    buffer = d.chunk_bytes * d.chunks * r.topology.n
    got = simulate(r.topology, r.schedule, buffer, Execution(slices=1)).time_us
    assert got == pytest.approx(d.time_us, rel=RTOL)


# ------------------------------------------------------------------------------------------ (d) TE-CCL's epochs
@pytest.mark.parametrize("expr,coll", [("ring(4)", "allgather"), ("ring(4)", "allreduce"), ("dgx1()", "allgather"),
                                       ("cluster(2,2,10,1)", "allgather"),
                                       ("mesh(3,3,bw=50,alpha_ns=500)", "allgather")])
def test_d_teccl_runs_no_slower_than_its_epochs(expr, coll):
    m = 1e6
    r = synthesize(load(expr), "teccl", coll, total_bytes=m)
    epochs = float(r.detail.transfer_time_us)
    for ex in (Execution(slices=1), Execution()):
        assert simulate(r.topology, r.schedule, m, ex).time_us <= epochs * (1 + RTOL)


# -------------------------------------------------------------------------------------- (e) BFB's step model
@pytest.mark.parametrize("expr", ["circulant(8,[2,3])", "hypercube(4)", "gkautz(2,8)", "gkautz(4,64)",
                                  "torus(4,4)", "kautz(2,2)", "complete(5)", "biring(2,5)"])
def test_e_bfb_on_a_regular_unit_graph_is_the_step_model(expr):
    r = synthesize(load(expr), "bfb", "allgather")
    model = Model(r.topology, r.schedule, Execution.alpha_beta(10.0, 12.5, slices=1))
    for m in (1e3, 1e6, 1e9):
        want = alpha_beta_us(r.cost.steps, r.cost.tb_factor, m, 10.0, 12.5)
        assert model.run(m).time_us == pytest.approx(want, rel=RTOL)


# ------------------------------------------------------------------------------------ (f) nothing beats a bound
def _schedules(topo: Topology):
    for algo in ("ring", "ring_uni", "shifted_ring", "dbt", "rhd", "direct", "hierarchical", "sptree", "bfb",
                 "tacos", "forestcoll"):
        for coll in ("allgather", "reduce_scatter", "allreduce"):
            try:
                yield algo, coll, synthesize(topo, algo, coll, total_bytes=1e6)
            except NotApplicable:
                continue


FABRICS = sorted(BASES) + ["dgx1()", "dgx_a100(boxes=2)", "mi250(clusters=2,gpus_per_cluster=8)",
                           "cluster(2,4,10,1)", "ndv2(chassis=2)", "ring_fc_switch(4)"]


@pytest.mark.parametrize("expr", FABRICS)
def test_f_no_modelled_time_beats_the_lower_bound(expr):
    topo = load(expr)
    sizes = [1e3, 1e5, 1e7, 1e9]
    for algo, coll, r in _schedules(topo):
        c = Collective.parse(coll)
        for ex in (Execution(), AB):
            times, _ = Model(r.topology, r.schedule, ex).times(sizes)
            for m, t in zip(sizes, times):
                assert t >= bound_time_us(topo, c, m, ex) * (1 - RTOL), (algo, coll, ex.label, m)


# ------------------------------------------------------------------------------- the model's own machinery
@pytest.mark.parametrize("expr,algo,coll", [("dgx_a100(boxes=2)", "forestcoll", "allreduce"),
                                            ("torus(4,4)", "tacos", "allgather"),
                                            ("circulant(8,[2,3])", "bfb", "allreduce"),
                                            ("cluster(2,4,10,1)", "sptree", "allreduce")])
@pytest.mark.parametrize("slices", [3, 16, 64])
def test_steady_state_shortcut_equals_the_full_simulation(expr, algo, coll, slices):
    r = synthesize(load(expr), algo, coll, total_bytes=1e8)
    for ex in (Execution(slices=slices), AB.fixed(slices)):
        model = Model(r.topology, r.schedule, ex)
        short = model.run(1e8)
        full = model.run(1e8, record=True)
        assert short.time_us == pytest.approx(full.time_us, rel=RTOL)
        assert short.rank_finish_us == pytest.approx(full.rank_finish_us, rel=RTOL)
        # the timeline: every send holds its link alone, in order, and after what it waits for
        rows = full.timeline
        assert len(rows) == slices * model.graph.size == full.events
        by_link: dict = {}
        for row in rows:
            by_link.setdefault(row["link"], []).append((row["start_us"], row["end_us"]))
        for spans in by_link.values():
            spans.sort()
            assert all(a[1] <= b[0] * (1 + 1e-12) + 1e-9 for a, b in zip(spans, spans[1:]))
        g = model.graph
        end = {(row["slice"], row["message"]): row["end_us"] for row in rows}
        for row in rows:
            i = row["message"]
            for d in g.deps[g.ptr[i]:g.ptr[i + 1]].tolist():
                assert end[(row["slice"], d)] <= row["start_us"] * (1 + 1e-12) + 1e-9


def test_result_figures_and_busbw():
    r = synthesize(load("hypercube(3)"), "bfb", "allreduce")
    res = simulate(r.topology, r.schedule, 1e8, AB)
    assert res.algbw_gbs == pytest.approx(1e8 / res.time_us / 1e3)
    assert res.busbw_gbs == pytest.approx(res.algbw_gbs * 2 * 7 / 8)
    assert max(res.rank_finish_us) == pytest.approx(res.time_us) and len(res.rank_finish_us) == 8
    assert all(0 < u <= 1 + 1e-12 for u in res.utilisation().values())
    assert res.events == res.messages * res.slices
    assert busbw_factor(Collective.ALLGATHER, 8) == 7 / 8 and busbw_factor(Collective.ALLREDUCE, 1) == 1.0


def test_message_graph_dependencies():
    """A ring allgather: step t's send forwards what arrived in step t-1; reductions wait for every partial."""
    r = synthesize(load("uniring(1,4)"), "ring", "allreduce")
    g = message_graph(r.topology, r.schedule)
    assert g.size == 4 * 6 and g.transfers == 24
    for i in range(g.size):
        deps = g.deps[g.ptr[i]:g.ptr[i + 1]].tolist()
        if g.step[i] == 1:
            assert deps == []
        else:
            assert len(deps) == 1 and g.step[deps[0]] == g.step[i] - 1 and g.dst[deps[0]] == g.src[i]


def test_execution_rejects_bad_values():
    for kw, text in [({"alpha_us": 1.0}, "together"), ({"alpha_us": -1.0, "bandwidth_gbs": 1.0}, "non-negative"),
                     ({"slices": 0}, "positive integer"), ({"max_slices": 0}, "positive integer")]:
        with pytest.raises(ValueError, match=text):
            Execution(**kw)
    r = synthesize(load("ring(4)"), "ring", "allgather")
    with pytest.raises(ValueError, match="positive"):
        Model(r.topology, r.schedule).times([0.0])


@st.composite
def strongly_connected(draw):
    """A random strongly connected digraph: a Hamiltonian cycle plus random chords, random bandwidths."""
    n = draw(st.integers(3, 9))
    edges = {(i, (i + 1) % n) for i in range(n)}
    edges |= set(draw(st.lists(st.tuples(st.integers(0, n - 1), st.integers(0, n - 1)), max_size=2 * n)))
    edges = sorted((u, v) for u, v in edges if u != v)
    bws = draw(st.lists(st.sampled_from([1, 2, 3]), min_size=len(edges), max_size=len(edges)))
    topo = Topology.from_edges(n, edges, name="random")
    links = tuple(type(l)(l.src, l.dst, Fraction(b), l.alpha) for l, b in zip(topo.links, bws))
    return Topology(topo.names, topo.kinds, links, "random", "random")


@settings(max_examples=25, deadline=None, suppress_health_check=[HealthCheck.too_slow])
@given(strongly_connected(), st.sampled_from(["sptree", "bfb", "tacos"]),
       st.sampled_from(["allgather", "reduce_scatter", "allreduce"]))
def test_random_graphs_bound_and_step_model(topo, algo, coll):
    """On random fabrics: above the bound, never slower than the step model at P = 1, and pipelining only
    chosen when it helps."""
    try:
        r = synthesize(topo, algo, coll, total_bytes=1e6)
    except NotApplicable:
        return
    for m in (1e4, 1e8):
        one = simulate(r.topology, r.schedule, m, Execution(slices=1)).time_us
        assert one <= step_model_us(r.topology, r.schedule, m) * (1 + 1e-12)
        best = simulate(r.topology, r.schedule, m)
        assert best.time_us <= one * (1 + 1e-12)
        assert best.time_us >= bound_time_us(r.topology, r.schedule.collective, m) * (1 - RTOL)


@pytest.mark.parametrize("expr,algo,coll", [("torus(4,4)", "tacos", "allreduce"),
                                            ("gkautz(2,16)", "ring", "allgather"),
                                            ("dgx_a100(boxes=2)", "forestcoll", "allreduce")])
def test_both_history_layouts_give_the_same_times(expr, algo, coll, monkeypatch):
    """Each message keeping its own last h slices (stride 1) or every message keeping H, slot-major: the same
    arithmetic on the same values, so bit-identical times, with and without the steady-state shortcut."""
    from solvers.runtime import engine
    r = synthesize(load(expr), algo, coll, total_bytes=1e8)
    got = {}
    for saving, stride_one in ((0, True), (10 ** 9, False)):
        monkeypatch.setattr(engine, "PER_MESSAGE_SAVING", saving)
        model = Model(r.topology, r.schedule, AB)
        assert (model.layout.stride == 1) == stride_one
        runs = [model._run(np.array([1e4, 1e8]), p) for p in (1, 7, 64, 300)]
        assert any(run.waves < 300 + model.layout.steps - 1 for run in runs[-1:])   # the shortcut was taken
        got[saving] = [np.concatenate([run.total_us, run.last_finish.ravel()]) for run in runs]
    assert all(np.array_equal(a, b) for a, b in zip(got[0], got[10 ** 9]))


@pytest.mark.parametrize("expr,algo,coll", [("torus(4,4)", "tacos", "allreduce"),
                                            ("hypercube(4)", "bfb", "allreduce"),
                                            ("dgx_a100(boxes=2)", "forestcoll", "allreduce")])
def test_keeping_only_p_slices_of_history_gives_the_same_times(expr, algo, coll, monkeypatch):
    """A run of P slices keeps min(h, P) finish times per message (``Layout.for_slices``): fewer cells, and
    bit-identical times to keeping h, in both history layouts; messages that wait on several others (allreduce)
    take the latest of them."""
    from solvers.runtime import engine
    r = synthesize(load(expr), algo, coll, total_bytes=1e8)
    for saving in (0, 10 ** 9):
        monkeypatch.setattr(engine, "PER_MESSAGE_SAVING", saving)
        model = Model(r.topology, r.schedule, AB)
        lay = model.layout
        assert np.diff(model.graph.ptr).max() >= 2 and lay.history >= 2
        assert lay.for_slices(1).cells == model.graph.size < lay.cells
        sizes = np.array([1e4, 1e6, 1e8])
        trimmed = [model._run(sizes, p) for p in (1, 2, 3, 7)]
        with monkeypatch.context() as m:
            m.setattr(engine.Layout, "for_slices", lambda self, slices: self)
            whole = [model._run(sizes, p) for p in (1, 2, 3, 7)]
        for a, b in zip(trimmed, whole):
            assert np.array_equal(a.total_us, b.total_us) and np.array_equal(a.last_finish, b.last_finish)


@pytest.mark.parametrize("expr,algo,coll,smallest", [("torus(4,4)", "tacos", "allreduce", 1e3),
                                                     ("dgx_a100(boxes=2)", "forestcoll", "allreduce", 3e8)])
def test_batches_run_together_give_the_times_of_batch_by_batch(expr, algo, coll, smallest, monkeypatch):
    """``Model.times`` in batches of 3 sizes: running the batches' sizes of one depth together (``_runs_at``, where
    no steady-state shortcut can happen) gives bit-identical times and depths to one run per batch, in fewer
    runs; depths where the shortcut can happen (forestcoll's large sizes, whose best depths reach 128 over 28
    steps) still run batch by batch."""
    import solvers.runtime.model as runtime
    r = synthesize(load(expr), algo, coll, total_bytes=1e8)
    model = Model(r.topology, r.schedule, AB)
    lay = model.layout
    per_size = lay.cells + 6 * model.graph.size + 3 * lay.rows * lay.cols
    monkeypatch.setattr(runtime, "MAX_CELLS", 4 * per_size - 1)      # batches of 3 sizes, more at small P
    sizes = np.geomspace(smallest, 4e9, 14)
    shapes = []
    original = Model._run

    def run(self, some, slices, *args):
        shapes.append((slices, len(some), {int(np.searchsorted(sizes, m)) // 3 for m in some}))    # its batches
        return original(self, some, slices, *args)

    monkeypatch.setattr(Model, "_run", run)
    together = model.times(sizes)
    merged = list(shapes)
    shapes.clear()
    monkeypatch.setattr(Model, "_runs_at", lambda self, p, takes: takes)
    apart = model.times(sizes)
    assert np.array_equal(together[0], apart[0]) and np.array_equal(together[1], apart[1])
    assert len(merged) < len(shapes) and max(n for _, n, _ in shapes) <= 3 < max(n for _, n, _ in merged)
    shortcut = [batches for p, _, batches in merged if p >= lay.steps + lay.history + 1]
    assert all(len(batches) == 1 for batches in shortcut) and (algo != "forestcoll" or len(shortcut) > 2)


@pytest.mark.parametrize("expr,algo,coll", [("gkautz(2,16)", "ring", "allgather"),
                                            ("torus(4,4)", "tacos", "allreduce"),
                                            ("dgx_a100(boxes=2)", "forestcoll", "allgather"),
                                            ("hypercube(4)", "bfb", "allreduce")])
def test_depths_skipped_by_the_link_busy_bound_could_not_be_faster(expr, algo, coll, monkeypatch):
    """Every link's busy time with P slices is below the modelled time at P, for every P and size; so skipping a
    depth whose bound is above a size's best time gives the times and depths of trying every depth, with fewer
    runs of the wave model (the ring gains nothing from pipelining: only P = 1 runs)."""
    r = synthesize(load(expr), algo, coll, total_bytes=1e8)
    model = Model(r.topology, r.schedule, AB)
    sizes = np.geomspace(1e3, 4e9, 12)
    alphas, per_byte = model._link_busy()
    for p in (1, 2, 8, 64):
        busy = (p * alphas[:, None] + per_byte[:, None] * (sizes / model.n)[None, :]).max(axis=0)
        assert np.all(busy <= model._run(sizes, p).total_us * (1 + 1e-12))
    counted = []
    original = Model._run

    def run(self, sizes, slices, *args):
        counted.append(len(sizes))
        return original(self, sizes, slices, *args)

    monkeypatch.setattr(Model, "_run", run)
    pruned = model.times(sizes)
    pruned_runs = sum(counted)
    counted.clear()
    monkeypatch.setattr(Model, "_link_busy", lambda self: (np.zeros(model.layout.rows),) * 2)
    every = model.times(sizes)
    np.testing.assert_allclose(pruned[0], every[0], rtol=1e-12)
    assert np.array_equal(pruned[1], every[1])
    assert pruned_runs < sum(counted)
    if algo == "ring":
        assert pruned_runs == len(sizes)


def _graph_both_ways(topo, schedule, monkeypatch):
    """The message graph with the dependencies found in columns, and found transfer by transfer."""
    from solvers.runtime import dag
    fast = message_graph(topo, schedule)
    with monkeypatch.context() as m:
        m.setattr(dag, "_dependencies_in_columns", dag._dependencies_by_piece)
        slow = message_graph(topo, schedule)
    return fast, slow


@pytest.mark.parametrize("expr,algo,coll", [("dgx_a100(boxes=2)", "ring", "allreduce"),
                                            ("dgx_a100(boxes=2)", "teccl", "alltoall"),
                                            ("mi250(clusters=2)", "forestcoll", "allgather"),
                                            ("dgx_a100(boxes=2)", "hierarchical", "allreduce"),
                                            ("torus(4,4)", "tacos", "allreduce"),
                                            ("gkautz(2,16)", "bfb", "reduce_scatter")])
def test_dependencies_in_columns_are_those_found_transfer_by_transfer(expr, algo, coll, monkeypatch):
    r = synthesize(load(expr), algo, coll)
    fast, slow = _graph_both_ways(r.topology, r.schedule, monkeypatch)
    assert np.array_equal(fast.ptr, slow.ptr) and np.array_equal(fast.deps, slow.deps)
    assert len(fast.deps) > 0


@settings(max_examples=60, deadline=None, suppress_health_check=[HealthCheck.too_slow,
                                                                 HealthCheck.function_scoped_fixture])
@given(rows=st.lists(st.tuples(st.integers(0, 3), st.integers(0, 3), st.integers(1, 4), st.integers(0, 5),
                               st.integers(0, 6), st.booleans()), min_size=1, max_size=60),
       coll=st.sampled_from(["allgather", "reduce_scatter", "allreduce"]))
def test_dependencies_of_any_transfers_agree_both_ways(rows, coll, monkeypatch):
    """Arbitrary transfers (not a schedule of anything) on a fabric with a switch: overlapping pieces, repeated
    arrivals, copies and reductions mixed, switch sends with and without an earlier arrival to forward."""
    from solvers.core.schedule import Schedule, Transfer
    topo = load("cluster(1,4,10,1)")
    links = len(topo.links)
    transfers = [Transfer(shard, Fraction(lo, 4), Fraction(lo + width, 4), link % links, step, red)
                 for shard, lo, width, link, step, red in rows]
    fast, slow = _graph_both_ways(topo, Schedule(Collective.parse(coll), transfers), monkeypatch)
    assert np.array_equal(fast.ptr, slow.ptr) and np.array_equal(fast.deps, slow.deps)


def test_an_infinite_or_missing_size_is_a_value_error():
    """Issue 39: an infinite size reached ``int(inf // ...)`` ("cannot convert float NaN to integer") through the
    library and the app; now one ValueError naming the rule."""
    from solvers import synthesize
    from solvers.runtime import simulate
    from topologies import load

    topo = load("ring(4)")
    schedule = synthesize(topo, "ring", "allgather").schedule
    for bad in (float("inf"), float("nan"), 0.0, -1.0):
        with pytest.raises(ValueError, match="positive and finite"):
            simulate(topo, schedule, bad)


def test_a_schedule_too_large_for_the_runtime_model_is_priced_by_its_bound_and_step_model(monkeypatch, capsys):
    """Above MODEL_MAX_TRANSFERS the message graph is not built: the command says so and keeps the bound and the
    step model (BFB's allreduce on gkautz(4,16384) would need about 160 GB for it)."""
    import json

    import solvers.runtime.workload as workload_module
    from studio.cli import main

    monkeypatch.setattr(workload_module, "MODEL_MAX_TRANSFERS", 10)
    argv = ["schedule", "gkautz(2,8)", "--algo", "bfb", "--collective", "allreduce"]
    assert main(argv + ["--json"]) == 0
    out = json.loads(capsys.readouterr().out)
    assert out["transfers"] > 10 and out["time_us"] is None and out["algbw_GBps"] is None
    assert "not priced by the runtime model" in out["runtime_note"] and out["step_model_us"] > out["bound_us"] > 0
    assert out["bound_name"].startswith("allreduce ")
    assert main(argv) == 0 and "not priced by the runtime model" in capsys.readouterr().out
    monkeypatch.setattr(workload_module, "MODEL_MAX_TRANSFERS", 10 ** 9)
    assert main(argv + ["--json"]) == 0
    priced = json.loads(capsys.readouterr().out)
    assert priced["time_us"] > 0 and (priced["bound_us"], priced["bound_name"]) == (out["bound_us"], out["bound_name"])


def test_one_bound_everywhere():
    """Issue 59: ``bound_time_us`` (Schedule, ``Workload.price``, the sweep) is the tightest bound's time, defined
    once (``solvers.runtime.bounds``), and priced figures name it. Pi_{2,16} = gkautz(2,16) allreduce at 1 MB with
    alpha 10 us and B 12.5 GB/s: two links out of each GPU, each priced at B/2, and two GPUs whose second link is a
    self-loop, which crosses no cut. Terms: latency D alpha; the cut between a looped GPU and the rest, one link,
    alpha + M/(B/2); the volume 2 (N-1) M over the 2N - 2 real links into GPUs; a looped GPU's ingress, alpha +
    (N-1)/N M/(B/2). The cut and the volume tie at 10 + 160 us; the step model's 2 D alpha + tb M/B is not one."""
    import solvers.runtime.model as model_module
    from solvers.runtime import Workload
    from solvers.runtime.bounds import tightest_bound
    from topologies.properties import compute_distances

    assert not hasattr(model_module, "bound_time_us")
    topo = load("gkautz(2,16)")
    r = synthesize(topo, "ring", "allreduce")
    work = Workload(1e6)
    priced = work.price(r.topology, r.schedule)
    want = tightest_bound(topo, "allreduce", 1e6, work.execution)
    assert (priced.bound_us, priced.bound_name) == (want.time_us, want.name)
    assert priced.bound_us == bound_time_us(topo, "allreduce", 1e6, work.execution)
    n, alpha, m, link = topo.n, 10.0, 1e6, 12.5e3 / 2                 # bytes per us
    loops = sum(l.src == l.dst for l in topo.links)
    assert loops == 2 and len(topo.links) == 2 * n
    terms = {"latency": float(compute_distances(topo).max()) * alpha, "cut": alpha + m / link,
             "volume": alpha + 2 * (n - 1) * m / ((2 * n - loops) * link), "ingress": alpha + (n - 1) / n * m / link}
    assert priced.bound_us == pytest.approx(max(terms.values())) == pytest.approx(terms["cut"])
    assert priced.bound_name.startswith("allreduce cut bound") and priced.time_us >= priced.bound_us
