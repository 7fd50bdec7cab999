"""Exports that each runtime's kernels run (issue 38): RCCL's kernels have no fused receive steps, so its files
reduce through scratch (``r`` then ``re``); the checkers refuse a step type the target's kernels lack; scratch
is sized as the runtime reads it; the runtime model prices the extra local pass; each fabric's vendor picks the
default runtime."""
from __future__ import annotations

import json
import re

import numpy as np
import pytest
from hypothesis import given, settings
from hypothesis import strategies as st

from solvers import synthesize
from solvers.export import TARGETS, check_xml, default_runtime, export, parse_xml, simulate, to_xml, validate
from solvers.export.lower import _reduce_slots
from solvers.export.program import FULL_OPS, Algo, Gpu, Step, Tb
from solvers.runtime import Execution, Model
from studio.cli import main
from topologies import load

RCCL_STEPS = {"s", "r", "re", "cpy", "nop"}
# (hierarchical builds allreduce only)
CASES = [("ring(8)", "ring"), ("hypercube(4)", "bfb"), ("torus(4,4)", "forestcoll"), ("hypercube(3)", "tacos"),
         ("dgx_a100(boxes=2)", "forestcoll"), ("dgx_a100(boxes=2)", "hierarchical"),
         ("mi250(clusters=2)", "forestcoll"), ("dbt_graph(8)", "dbt")]


def _types(text: str) -> set[str]:
    return set(re.findall(r' type="(\w+)"', text))


@pytest.mark.parametrize("expr, algo, collective", [(e, a, c) for e, a in CASES for c in ("allreduce", "reduce_scatter")
                                                     if a != "hierarchical" or c == "allreduce"])
def test_rccl_files_use_only_the_steps_its_kernels_run(expr, algo, collective):
    topo = load(expr)
    result = synthesize(topo, algo, collective)
    for in_place in (True, False):
        text, report = export(result.topology, result.schedule, runtime="rccl", in_place=in_place)
        assert report.ok and report.runtime == "rccl"
        assert _types(text) <= RCCL_STEPS and set(report.step_types) == _types(text)
        assert "re" in report.step_types                  # the reductions are local steps of their own
        again = check_xml(text, runtime="rccl")
        assert again.ok and again.step_types == report.step_types
        algo_ir, _ = parse_xml(text)
        assert validate(algo_ir, runtime="rccl") == [] and simulate(algo_ir) == []
    full, report = export(result.topology, result.schedule, runtime="msccl-executor")
    assert report.ok and "rrc" in report.step_types      # the same schedule with fused steps, for comparison
    refused = check_xml(full, runtime="rccl")
    assert not refused.ok and any("kernels do not run it" in p for p in refused.problems)


def test_scratch_holds_one_slot_per_chunk_a_rank_reduces_into():
    topo = load("hypercube(3)")
    text, _ = export(topo, synthesize(topo, "bfb", "allreduce").schedule, runtime="rccl")
    algo, _ = parse_xml(text)
    for g in algo.gpus:
        into = {(s.dstbuf, s.dstoff + k) for t in g.tbs for s in t.steps if s.type == "re" for k in range(s.cnt)}
        landed = {s.dstoff + k for t in g.tbs for s in t.steps if s.type == "r" and s.dstbuf == "s"
                  for k in range(s.cnt)}
        assert g.s_chunks == len(into) == len(landed) > 0
        assert landed == set(range(g.s_chunks))
        for t in g.tbs:            # every re right after the r that filled its slots, on the same threadblock
            for k, s in enumerate(t.steps):
                if s.type == "re":
                    before = t.steps[k - 1]
                    assert before.type == "r" and (before.dstbuf, before.dstoff, before.cnt) == \
                        (s.srcbuf, s.srcoff, s.cnt)


@settings(max_examples=200, deadline=None)
@given(st.lists(st.tuples(st.integers(0, 3), st.integers(0, 30), st.integers(1, 5), st.booleans()), min_size=1,
                max_size=40))
def test_reduce_slots_are_runs_of_one_slot_per_chunk(rows):
    dst = np.array([r for r, _, _, _ in rows], np.int64)
    items = {"first": np.array([f for _, f, _, _ in rows], np.int64), "cnt": np.array([c for _, _, c, _ in rows],
                                                                                       np.int64),
             "reduce": np.array([red for *_, red in rows])}
    slot, size = _reduce_slots(dst, items, 4)
    seen: dict = {}
    for (rank, first, cnt, red), s in zip(rows, slot.tolist()):
        if not red:
            assert s == -1
            continue
        for k in range(cnt):       # the same chunk, the same slot; slots of one rank inside its size
            assert seen.setdefault((rank, first + k), s + k) == s + k
            assert 0 <= s + k < size[rank]
    for rank in range(4):          # as many slots as distinct chunks, no two chunks sharing one
        mine = {c: s for (r, c), s in seen.items() if r == rank}
        assert size[rank] == len(mine) == len(set(mine.values()))


def test_a_wrong_local_step_fails_the_simulation():
    topo = load("ring(4)")
    text, _ = export(topo, synthesize(topo, "ring", "allreduce").schedule, runtime="rccl")
    bad = text.replace(' type="re" ', ' type="cpy" ', 1)      # the received partial sum replaces the own one
    assert bad != text
    report = check_xml(bad, runtime="rccl")
    assert not report.ok and "expected chunk" in report.first


def test_the_step_limit_counts_every_step_element_nops_included():
    steps = [Step(k, "nop", "i", -1, "o", -1, 0, 1, 0) for k in range(64)] + [Step(63, "nop", "i", -1, "o", -1, 0)]
    tbs = [Tb(0, -1, -1, 0, steps), Tb(1, -1, -1, 0, [Step(0, "nop", "i", -1, "o", -1, 0, -1, -1, 1)])]
    algo = Algo("long", "Simple", 1, 2, 2, "allreduce", 1, 0, 0, 1 << 30,
                [Gpu(r, 2, 0, 0, [Tb(t.id, t.send, t.recv, t.chan, list(t.steps)) for t in tbs]) for r in range(2)])
    problems = validate(algo, runtime="rccl")
    assert any("65 steps, 1 above the 64 per threadblock that rccl reads" in p for p in problems), problems
    assert not check_xml(to_xml(algo), runtime="rccl").ok


def test_check_xml_defaults_to_a_runtime_whose_kernels_run_the_file():
    topo = load("ring(4)")
    schedule = synthesize(topo, "ring", "allreduce").schedule
    fused, _ = export(topo, schedule, runtime="msccl-executor")
    plain, _ = export(topo, schedule, runtime="rccl")
    assert check_xml(fused).runtime == "msccl-executor" and check_xml(fused).ok
    assert check_xml(plain).runtime == "rccl" and check_xml(plain).ok
    assert set(FULL_OPS).isdisjoint(TARGETS["rccl"].kernel_steps)
    assert set(FULL_OPS) <= TARGETS["msccl-executor"].kernel_steps and TARGETS["msccl-executor"].full_ops


def test_the_model_prices_the_local_reductions():
    """Ring allreduce on ring(4), one slice, unit links: each reduce-scatter step reduces one shard, so the
    local pass adds (N - 1) shards / rate to the time, and nothing to an allgather."""
    topo = load("ring(4)")
    ex = Execution(slices=1)
    total = 4e9
    for collective, reduced_shards in (("allreduce", 3), ("allgather", 0)):
        model = Model(topo, synthesize(topo, "ring", collective).schedule, ex)
        plain = model.run(total).time_us
        local = model.with_local_reductions(40.0)
        extra = reduced_shards * (total / 4) / 40e3
        assert local.run(total).time_us == pytest.approx(plain + extra, rel=1e-9)
        again = local.with_link_prices(*ex.link_prices(topo))       # kept when links are repriced
        assert again.run(total).time_us == pytest.approx(plain + extra, rel=1e-9)
    with pytest.raises(ValueError):
        model.with_local_reductions(0)


def test_an_rccl_bundle_is_planned_with_the_local_reductions():
    from solvers.export.bundle import export_bundle

    topo = load("ring(8)")
    schedule = synthesize(topo, "ring", "allreduce").schedule
    prices = Execution.alpha_beta(0.7, 100.0)
    rccl = export_bundle(topo, schedule, "rccl", execution=prices, jobs=1)
    full = export_bundle(topo, schedule, "msccl-executor", execution=prices, jobs=1)
    for f in rccl.files:
        assert set(f.report.step_types) <= RCCL_STEPS and "re" in f.report.step_types
    assert "Step types used: s r cpy re nop (the kernels of rccl run s r cpy re nop)" in rccl.readme
    assert "Step types used: s r rrc" in full.readme
    big = rccl.plan.sizes.index(1 << 30)
    assert rccl.plan.best_us()[big] > full.plan.best_us()[big] * 1.05      # the extra pass shows at 1 GiB
    assert np.all(rccl.plan.best_us() >= full.plan.best_us() - 1e-9)


@pytest.mark.parametrize("expr, runtime", [("dgx_a100(boxes=2)", "msccl-executor"), ("ndv2(2)", "msccl-executor"),
                                           ("mi250(clusters=2)", "rccl"), ("ring(8)", "msccl-executor"),
                                           ("line(ring(4),2)", "msccl-executor")])
def test_the_default_runtime_follows_the_fabrics_vendor(expr, runtime):
    name, why = default_runtime(load(expr))
    assert name == runtime and why
    assert ("is an AMD fabric" in why) == (runtime == "rccl")
    assert ("is an NVIDIA fabric" in why) == expr.startswith(("dgx", "ndv2"))


def test_the_cli_says_which_runtime_and_why(tmp_path, capsys):
    out = tmp_path / "f.xml"
    for expr, runtime, vendor in (("dgx_a100(boxes=2)", "msccl-executor", "NVIDIA"), ("mi250(clusters=2)", "rccl",
                                                                                      "AMD")):
        assert main(["export", expr, "--algo", "forestcoll", "--collective", "allreduce", "-o", str(out),
                     "--json"]) == 0
        captured = capsys.readouterr()
        summary = json.loads(captured.out)
        assert summary["runtime"] == runtime and vendor in summary["runtime_note"]
        assert f"validated and simulated for {runtime} (" in captured.err and vendor in captured.err
        assert set(summary["step_types"]) <= TARGETS[runtime].kernel_steps
    assert main(["export", "ring(4)", "--algo", "ring", "--json"]) == 2          # a summary needs -o


def test_header_integers_the_runtime_would_misread_are_refused():
    topo = load("ring(4)")
    text, _ = export(topo, synthesize(topo, "ring", "allgather").schedule, runtime="rccl")
    for bad, why in (('nchannels="0"', "nchannels must be positive"),
                     ('nchannels="4294967297"', "outside -2147483648..2147483647")):
        report = check_xml(re.sub(r'nchannels="\d+"', bad, text, count=1))
        assert not report.ok and why in report.first, report.first
