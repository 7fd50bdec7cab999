"""TACOS: the reference implementation's twelve All-Gather regression values, the ingress bound, the ILP beside
the greedy, switch unwinding, lowering into the IR (verified and exported), and random topologies."""
from fractions import Fraction

import pytest
import numpy as np
from hypothesis import HealthCheck, given, settings, strategies as st

from solvers.core.cost import step_model_us
from solvers.core.errors import NotApplicable
from solvers.export import check_xml, export
from solvers.core.schedule import Collective
from solvers.synthesize import synthesize
from solvers.tacos import chunk_size, tacos
from solvers.tacos.greedy import best_of, greedy_allgather, ingress_bound_us, nth_set_bit
from solvers.tacos.ilp import tacos_ilp
from solvers.core.verify import verify
from tests.helpers import star, strongly_connected_topologies
from topologies.expression import parse_topology
from topologies.families import ring
from topologies.model import Link, Topology
from topologies.tacos_fabrics import gib, hetero_mesh, mesh, ring_fc_switch, tacos_torus
from topologies.unwind import unwind

MIB = 1 << 20

# notes tacos.md 2.14: (name, topology, chunks per NPU, buffer, expected us) - All-Gather, chunk = buffer // (N k),
# bandwidths in GiB/s, latencies in us; the reference's tests allow 1 %.
REGRESSION = [
    ("Mesh5x5", lambda: mesh(5, 5, bw=50, alpha_ns=500, gib=1), 1, 1024 * MIB, 9606.0),
    ("Mesh10x10", lambda: mesh(10, 10, bw=100, alpha_ns=1000, gib=1), 2, 1024 * MIB, 5049.0),
    ("Mesh7x12", lambda: mesh(7, 12, bw=100, alpha_ns=1000, gib=1), 3, 4096 * MIB, 19966.27),
    ("Hypercube3x3x3", lambda: mesh(3, 3, 3, bw=50, alpha_ns=500, gib=1), 1, 1024 * MIB, 6671.17),
    ("Hypercube3x4x5", lambda: mesh(3, 4, 5, bw=50, alpha_ns=500, gib=1), 2, 2048 * MIB, 13353.33),
    ("Hypercube4x2x3", lambda: mesh(4, 2, 3, bw=50, alpha_ns=500, gib=1), 3, 3072 * MIB, 19178.17),
    ("Torus3x3x3", lambda: tacos_torus(3, 3, 3, bw=50, alpha_ns=500, gib=1), 1, 1024 * MIB, 3706.20),
    ("Torus3x4x5", lambda: tacos_torus(3, 4, 5, bw=50, alpha_ns=500, gib=1), 2, 2048 * MIB, 6676.67),
    ("Torus4x2x3", lambda: tacos_torus(4, 2, 3, bw=50, alpha_ns=500, gib=1), 3, 3072 * MIB, 11673.67),
    ("Mesh2DHetero5x5", lambda: hetero_mesh(5, 5, bw=50, bw_y=75, alpha_ns=500, gib=1), 1, 1024 * MIB, 8005.0),
    ("Mesh2DHetero8x5", lambda: hetero_mesh(8, 5, bw=80, bw_y=35, alpha_ns=1000, gib=1), 2, 1024 * MIB, 8595.43),
    ("Mesh2DHetero7x10", lambda: hetero_mesh(7, 10, bw=16, bw_y=73, alpha_ns=1500, gib=1), 3, 4096 * MIB,
     44612.47),
]


@pytest.mark.parametrize("engine", ["python", "numpy"])
@pytest.mark.parametrize("name,build,chunks,buffer,expected", REGRESSION, ids=[r[0] for r in REGRESSION])
def test_reference_regression_values(name, build, chunks, buffer, expected, engine):
    topo = build()
    size = chunk_size(buffer, topo.n, chunks)
    bound = ingress_bound_us(topo, chunks, size)
    assert bound == pytest.approx(expected, rel=1e-6, abs=0.006)        # each value is the ingress bound
    run, spread = best_of(topo, chunks, size, restarts=20, target_us=bound, engine=engine)
    assert run.time_us == pytest.approx(expected, rel=0.01)
    assert run.time_us == pytest.approx(bound, rel=1e-9)                # and the greedy meets it
    assert len(spread) <= 20


def test_mesh5x5_full_pipeline_verifies_and_matches_the_ir_clock():
    topo = mesh(5, 5, bw=50, alpha_ns=500, gib=1)
    found = tacos(topo, "allgather", buffer_bytes=1024 * MIB, restarts=4)
    assert found.time_us == pytest.approx(9606.0, rel=1e-6)
    assert verify(found.topology, found.schedule).ok
    # homogeneous links: every step is one chunk time, so the IR's step model agrees with the greedy's clock
    assert step_model_us(found.topology, found.schedule, 1024 * MIB) == pytest.approx(found.time_us, rel=1e-6)
    assert found.schedule.steps == 12 and found.schedule.count == 24 * 25


@pytest.mark.parametrize("engine", ["python", "numpy"])
def test_sends_are_causal_and_one_chunk_per_link_at_a_time(engine):
    """Mixed link times: transfers end at different times, chunks arrive twice and are replaced or dropped
    (both engines do both here), and still every send forwards what its sender held when it started."""
    topo = hetero_mesh(4, 3, bw=50, bw_y=20, alpha_ns=700)
    run = greedy_allgather(topo, 2, 1e6, seed=3, engine=engine)
    assert (run.columns is not None) == (engine == "numpy") and run.replaced > 0 and run.dropped > 0
    sends = list(run.send_rows())
    assert len(sends) == run.count
    n = topo.n
    arrived = {(c, c % n): 0.0 for c in range(2 * n)}    # chunk c starts on node c mod n
    for start, end, c, link in sorted(sends, key=lambda s: (s[1], s[3])):
        s, d = topo.links[link].src, topo.links[link].dst
        assert arrived[(c, s)] <= start + 1e-9, "a node forwarded a chunk before it arrived"
        assert end == pytest.approx(start + run.link_time_us[link])
        arrived.setdefault((c, d), end)
    assert len(arrived) == 2 * n * n                                     # everything everywhere
    busy: dict[int, list[tuple[float, float]]] = {}
    for start, end, _c, link in sends:
        busy.setdefault(link, []).append((start, end))
    for spans in busy.values():
        spans.sort()
        assert all(a[1] <= b[0] + 1e-9 for a, b in zip(spans, spans[1:]))
    assert run.time_us == max(end for _s, end, _c, _l in sends)


@settings(max_examples=200, deadline=None)
@given(st.integers(1, 2 ** 64 - 1), st.data())
def test_select_bit_finds_the_rth_set_bit(word, data):
    from solvers.tacos.vector import select_bit

    r = data.draw(st.integers(0, word.bit_count() - 1))
    got = select_bit(np.array([word], dtype=np.uint64), np.array([r]))
    assert int(got[0]) == nth_set_bit(word, r)


def test_the_numpy_engine_takes_over_at_scale_and_its_columns_lower_verify_and_export(monkeypatch):
    """From VECTOR_CHUNKS chunks on, the greedy runs in numpy and its sends go straight into schedule columns
    (no tuple per send); the three collectives verify and export as the Python engine's do."""
    from solvers.tacos import greedy as greedy_module

    topo = parse_topology("tacos_torus(4,4,bw=50,alpha_ns=500)")
    assert greedy_allgather(topo, 2, 1e6).columns is None                    # 32 chunks: Python
    monkeypatch.setattr(greedy_module, "VECTOR_CHUNKS", 32)
    assert greedy_allgather(topo, 2, 1e6).columns is not None
    for collective in ("allgather", "reduce_scatter", "allreduce"):
        found = tacos(topo, collective, chunks=2, buffer_bytes=float(1 << 24), restarts=2)
        assert found.schedule.stored_columns() is not None
        assert verify(found.topology, found.schedule).ok
        assert found.time_us >= found.bound_us * (1 - 1e-9)
        assert sum(p.sends for p in found.phases) == found.schedule.count
        rows = found.timeline()
        assert len(rows) == found.schedule.count and max(r["end_us"] for r in rows) == pytest.approx(found.time_us)
    text, report = export(found.topology, found.schedule)
    assert report.ok and check_xml(text).ok


@pytest.mark.parametrize("collective", ["allgather", "reduce_scatter", "allreduce"])
@pytest.mark.parametrize("expr", ["hetero_mesh(3,4,bw=50,bw_y=20)", "dgx_a100(boxes=2)", "ring_fc_switch(2)",
                                  "mesh(2,2,2,bw=10,alpha_ns=1000)"])
def test_collectives_verify_export_and_sit_above_their_bound(expr, collective):
    topo = parse_topology(expr)
    result = synthesize(topo, "tacos", collective, total_bytes=float(1 << 24), options={"chunks": 2})
    assert result.verification.ok
    out = result.as_dict(float(1 << 24))
    assert out["synthesizer_time_us"] >= out["synthesizer_bound_us"] * (1 - 1e-9)
    phases = out["tacos"]["phases"]
    assert len(phases) == (2 if collective == "allreduce" else 1)
    text, report = export(result.topology, result.schedule)
    assert report.ok and check_xml(text).ok


def test_allreduce_is_reduce_scatter_then_allgather():
    topo = parse_topology("mesh(3,3,bw=50,alpha_ns=500)")
    ar = tacos(topo, "allreduce", buffer_bytes=1 << 24)
    rs = tacos(topo, "reduce_scatter", buffer_bytes=1 << 24)
    ag = tacos(topo, "allgather", buffer_bytes=1 << 24)
    assert ar.time_us == pytest.approx(rs.time_us + ag.time_us)
    assert [p.collective for p in ar.phases] == ["reduce_scatter", "allgather"]
    assert ar.schedule.collective is Collective.ALLREDUCE and verify(ar.topology, ar.schedule).ok


@pytest.mark.parametrize("build,chunks", [(lambda: mesh(3, 3), 1), (lambda: mesh(2, 4), 1),
                                          (lambda: hetero_mesh(3, 3, bw=1, bw_y=2), 1), (lambda: ring(5), 2)],
                         ids=["mesh3x3", "mesh2x4", "hetero3x3", "ring5-k2"])
def test_greedy_against_the_ilp_optimum(build, chunks):
    topo = build()
    ilp = tacos_ilp(topo, chunks, 1000.0, time_limit=60)
    assert ilp.status == "optimal"
    greedy, _ = best_of(topo, chunks, 1000.0, restarts=10)
    # the ILP counts whole quanta (ceil(t / f) per link), so it is an upper bound on its own schedule's real time
    # only up to rounding; on these instances every link time is a whole number of quanta, so they compare exactly
    assert all(abs(t / ilp.quantum_us - round(t / ilp.quantum_us)) < 1e-9 for t in greedy.link_time_us)
    assert greedy.time_us >= ilp.time_us - 1e-6              # nothing beats the proven optimum
    assert greedy.time_us == pytest.approx(ilp.time_us)       # and the greedy reaches it here
    # the ILP's own schedule delivers everything and respects its horizon
    delivered = {(c, topo.links[e].dst) for _t, c, e in ilp.sends}
    assert len(delivered) == chunks * topo.n * (topo.n - 1)
    assert max(t + ilp.link_steps[e] for t, _c, e in ilp.sends) == ilp.steps


def test_ilp_beats_a_bad_greedy_run_on_a_line():
    """On a 4-node line with 3 chunks per node the greedy's random choices can waste the middle links; the
    ILP's horizon is a floor under every run."""
    topo = mesh(4)
    ilp = tacos_ilp(topo, 3, 1000.0, time_limit=60)
    assert ilp.status == "optimal"
    worst = max(greedy_allgather(topo, 3, 1000.0, seed).time_us for seed in range(10))
    assert worst >= ilp.time_us
    assert ilp.steps >= 9                                          # an end node needs 9 chunks over one link


def test_unwinding_degrees():
    s = star(4, bandwidth=12)
    ring_ = unwind(s, 1)
    assert ring_.n == 4 and not ring_.switch_nodes
    assert sorted((l.src, l.dst) for l in ring_.links) == [(0, 1), (1, 2), (2, 3), (3, 0)]
    assert {l.bandwidth for l in ring_.links} == {Fraction(12)}
    full = unwind(s, "max")
    assert len(full.links) == 12 and {l.bandwidth for l in full.links} == {Fraction(4)}
    two = unwind(s, 2)
    assert len(two.links) == 8 and {l.bandwidth for l in two.links} == {Fraction(6)}
    assert unwind(s, "auto").links == full.links                 # one switch: scale-up, full mesh
    boxes = parse_topology("dgx_a100(boxes=2)")
    flat = unwind(boxes)
    assert flat.n == 16
    # 7 NVSwitch links (300/7 GB/s) and one IB ring link (25 GB/s) into every GPU
    for d in range(16):
        bws = sorted(flat.links[i].bandwidth for i in flat.in_links[d])
        assert bws == [Fraction(25)] + [Fraction(300, 7)] * 7
    assert parse_topology(flat.expr).links == flat.links


def test_tacos_fabrics_shapes():
    assert mesh(4, 2, 3).n == 24 and min(len(x) for x in mesh(4, 2, 3).in_links) == 3
    assert max(len(x) for x in tacos_torus(4, 2, 3).in_links) == 5     # a 2-wide dimension: one link each way
    assert parse_topology("torus(4,2,3)").links != tacos_torus(4, 2, 3).links
    assert gib(1) == Fraction(2 ** 30, 10 ** 9)
    sys = ring_fc_switch(4)
    assert sys.n == 32 and all(len(x) == 5 for x in sys.in_links)
    assert sorted({l.bandwidth for l in sys.links}) == [50, 100, 200]


def test_bad_input_is_refused_with_a_reason():
    two = Topology(("a", "b"), ("compute", "compute"), (Link(0, 1),), name="one-way")
    with pytest.raises(NotApplicable, match="not strongly connected"):
        tacos(two, "allgather")
    with pytest.raises(NotApplicable, match="alltoall"):
        tacos(ring(4), "alltoall")
    with pytest.raises(NotApplicable, match="chunks"):
        tacos(ring(4), "allgather", chunks=0)
    with pytest.raises(NotApplicable, match="smaller than"):
        tacos(ring(4), "allgather", buffer_bytes=3)


def test_nth_set_bit():
    x = (1 << 3) | (1 << 70) | (1 << 200) | (1 << 201)
    assert [nth_set_bit(x, r) for r in range(4)] == [3, 70, 200, 201]


@settings(max_examples=25, deadline=None, suppress_health_check=[HealthCheck.too_slow])
@given(strongly_connected_topologies(max_nodes=7))
def test_random_topologies_verify_and_respect_the_bound(topo):
    found = tacos(topo, "allgather", chunks=2, buffer_bytes=1 << 20, restarts=2)
    assert verify(found.topology, found.schedule).ok
    assert found.time_us >= found.bound_us * (1 - 1e-9)
    ar = tacos(topo, "allreduce", buffer_bytes=1 << 20, restarts=1)
    assert verify(ar.topology, ar.schedule).ok
