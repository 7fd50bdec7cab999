"""Runtime targets of the MSCCL export (issue 22): each reader's limits, enforced by ``check-xml --runtime`` and by
every export, and a lowering that spreads long threadblock programs over more channels instead of failing."""
from __future__ import annotations

import json

import pytest

from solvers import synthesize
from solvers.export import TARGETS, XmlError, check_xml, export, parse_xml, target
from studio.cli import main
from topologies import load


def test_the_targets_carry_the_readers_limits():
    assert (TARGETS["rccl"].max_steps, TARGETS["rccl"].max_tbs) == (64, 64)
    assert (TARGETS["msccl-executor"].max_steps, TARGETS["msccl-executor"].max_tbs) == (64, 1024)
    assert (TARGETS["msccl"].max_steps, TARGETS["msccl"].max_tbs) == (256, 216)
    assert {t.dialect for t in TARGETS.values()} == {"executor", "msccl"}
    assert all("msccl_struct.h" in t.source or "msccl.h" in t.source for t in TARGETS.values())
    with pytest.raises(ValueError, match="unknown runtime 'nccl'"):
        target("nccl")


@pytest.fixture(scope="module")
def long_ring():
    """126 ring steps on gkautz(2,64): one threadblock per link would hold 126 steps, over RCCL's 64."""
    topo = load("gkautz(2,64)")
    return topo, synthesize(topo, "ring", "allreduce").schedule


def test_a_long_program_is_spread_until_it_fits_each_runtime(long_ring):
    topo, schedule = long_ring
    for name, limits in TARGETS.items():
        text, report = export(topo, schedule, runtime=name)
        assert report.ok and report.runtime == name
        assert report.steps_per_tb <= limits.max_steps and report.tbs_per_rank <= limits.max_tbs
        algo, dialect = parse_xml(text)
        assert dialect == limits.dialect
        assert max(len(t.steps) for g in algo.gpus for t in g.tbs) == report.steps_per_tb
    # the permissive reader's file is one that RCCL would refuse, and check-xml says why, by how much
    text, report = export(topo, schedule, runtime="msccl")
    assert report.steps_per_tb > 64
    text_ex, _ = export(topo, schedule, runtime="msccl", dialect="msccl")
    assert check_xml(text_ex, runtime="msccl").ok


def test_check_xml_enforces_the_runtime(long_ring, tmp_path, capsys):
    topo, schedule = long_ring
    loose, _ = export(topo, schedule, dialect="executor", runtime="msccl-executor")
    assert check_xml(loose, runtime="msccl-executor").ok
    refused = check_xml(loose, runtime="rccl")           # within RCCL's reader limits, but its kernels lack rrc
    assert not refused.ok and "type rrc is read by rccl's parser but its kernels do not run it" in refused.first
    from solvers.export.lower import lower
    from solvers.export.msccl_xml import to_xml
    one_block = to_xml(lower(topo, schedule, ops_per_tb=1000, full_ops=False), "executor")   # a link, one block
    report = check_xml(one_block, runtime="rccl")
    assert not report.ok and "above the 64 per threadblock that rccl reads" in report.first
    assert check_xml(one_block, runtime="msccl-executor").ok is False
    path = tmp_path / "one_block.xml"
    path.write_text(one_block)
    assert main(["check-xml", str(path), "--runtime", "rccl", "--json"]) == 1
    out = json.loads(capsys.readouterr().out)
    assert out["runtime"] == "rccl" and out["steps_per_tb"] > 64 and not out["ok"]
    bad = check_xml(one_block, dialect="executor", runtime="msccl")
    assert not bad.ok and "reads the msccl dialect" in bad.first


def test_threadblocks_over_the_limit_are_merged_then_refused_with_the_limit():
    from solvers.export import Target

    topo = load("hypercube(4)")                  # 4 rings: a send and a receive threadblock per ring and rank
    schedule = synthesize(topo, "ring", "allgather").schedule
    _, report = export(topo, schedule, runtime="rccl")
    assert report.ok and report.tbs_per_rank == 8
    four = Target("four", "executor", 64, 4, 32, 32, 72, "a reader that takes 4 threadblocks per rank")
    text, report = export(topo, schedule, runtime=four)
    assert report.ok and report.tbs_per_rank == 4             # send/receive pairs share a threadblock
    algo, _ = parse_xml(text)
    assert all(t.send >= 0 and t.recv >= 0 for g in algo.gpus for t in g.tbs)
    three = Target("three", "executor", 64, 3, 32, 32, 72, "a reader that takes 3 threadblocks per rank")
    with pytest.raises(XmlError, match=r"4 threadblocks, 1 above the 3 per rank that three reads"):
        export(topo, schedule, runtime=three, coarsen=False)
    # coarsened instead (issue 60): the four rings' quarters rounded to halves fit (two rings carry everything) at
    # a loss, so the grid between is tried: on thirds one quarter vanishes and three rings fit the 3 threadblocks
    text, report = export(topo, schedule, runtime=three)
    assert report.ok and report.tbs_per_rank == 3 and report.coarsened.what == "threadblocks per rank"
    assert report.coarsened.chunks == (4, 3) and report.coarsened.loss > 0
    assert "coarsened to fit three's limit of 3 threadblocks per rank (the unrefined program: at least 4)" in report.runtime_note
    assert check_xml(text, runtime=three).ok


def test_the_search_stops_when_merged_threadblocks_are_over_the_limit(long_ring, monkeypatch):
    """Fewer instructions per threadblock only make more threadblocks, so merged ones over the limit end the search
    (after the first merged guess, at the first such lowering); ``start_ops`` starts the search where a previous
    program ended."""
    import solvers.export as export_module
    from solvers.export import Target

    topo, schedule = long_ring
    tries = []
    made = []
    real, real_build = export_module.lowering, export_module.Lowering.place

    def counted(self, ops_per_tb, merge, *args):
        tries.append((ops_per_tb, merge))
        return real_build(self, ops_per_tb, merge, *args)

    monkeypatch.setattr(export_module, "lowering", lambda *a, **k: made.append(1) or real(*a, **k))
    monkeypatch.setattr(export_module.Lowering, "place", counted)
    two = Target("two", "executor", 64, 2, 32, 32, 72, "a reader that takes 2 threadblocks per rank")
    with pytest.raises(XmlError, match="above the 2 per rank that two reads"):
        export(topo, schedule, runtime=two, coarsen=False)
    merged = [ops for ops, m in tries if m]
    unmerged = [ops for ops, m in tries if not m]
    assert tries[-1][1] and tries[:len(unmerged)] == [(ops, False) for ops in unmerged]
    # the first merged try guesses fewer instructions per threadblock; over the limit there, at most one try with
    # more, then one where merging began, and the search ends (fewer instructions only make more threadblocks)
    assert 2 <= len(merged) <= 3 and merged[0] < min(merged[1:]) and merged[-1] == unmerged[-1]
    tries.clear()
    _, report = export(topo, schedule, runtime="rccl")
    first = list(tries)
    assert len(first) > 1 and report.ops_per_tb == first[-1][0] < first[0][0]
    assert len(made) == 2                 # the instructions are made once per export, whatever the number of tries
    tries.clear()
    _, again = export(topo, schedule, runtime="rccl", start_ops=report.ops_per_tb)
    assert tries == first[-1:] and again.ops_per_tb == report.ops_per_tb


def test_a_merged_guess_over_the_limit_does_not_end_the_search(monkeypatch):
    """The first merged try takes fewer instructions per threadblock than the search would reach; when its
    threadblocks are over the limit, the search goes on with more and finds the program that fits (hypercube(3)
    bfb allreduce, 8 steps and 6 threadblocks: the guess of 2 instructions per threadblock makes too many
    threadblocks; 3 fit)."""
    import solvers.export as export_module
    from solvers.export import Target

    topo = load("hypercube(3)")
    schedule = synthesize(topo, "bfb", "allreduce").schedule
    tries = []
    real_build = export_module.Lowering.place

    def counted(self, ops_per_tb, merge, *args):
        tries.append((ops_per_tb, merge))
        return real_build(self, ops_per_tb, merge, *args)

    monkeypatch.setattr(export_module.Lowering, "place", counted)
    small = Target("small", "executor", 8, 6, 32, 32, 72, "a reader of 8 steps and 6 threadblocks")
    _, report = export(topo, schedule, runtime=small)
    merged = [ops for ops, m in tries if m]
    assert report.ok and report.merged and report.tbs_per_rank <= 6 and report.steps_per_tb <= 8
    assert len(merged) >= 2 and report.ops_per_tb == merged[-1] > merged[0]


def test_cli_export_names_the_runtime(tmp_path, capsys):
    out = tmp_path / "ring.xml"
    assert main(["export", "gkautz(2,64)", "--algo", "ring", "--collective", "allreduce", "--runtime", "rccl",
                 "-o", str(out)]) == 0
    err = capsys.readouterr().err
    assert "validated and simulated for rccl; executor dialect" in err and "step types s r re nop" in err
    assert check_xml(out.read_text(), runtime="rccl").ok
    assert main(["export", "ring(4)", "--algo", "ring", "--runtime", "rccl", "--dialect", "msccl"]) == 2
    assert "reads the executor dialect, not msccl" in capsys.readouterr().err


def test_the_collector_is_paused_during_an_export_and_restored_after(monkeypatch):
    import gc

    import solvers.export as export_module

    topo = load("hypercube(3)")
    schedule = synthesize(topo, "ring", "allgather").schedule
    seen = []
    real = export_module.lowering
    monkeypatch.setattr(export_module, "lowering", lambda *a, **k: seen.append(gc.isenabled()) or real(*a, **k))
    assert gc.isenabled()
    export(topo, schedule)
    assert seen and not any(seen) and gc.isenabled()
    gc.disable()
    try:
        export(topo, schedule)
        assert not gc.isenabled()             # a caller that had paused it keeps it paused
    finally:
        gc.enable()


@pytest.mark.parametrize("expr, algo, collective, kwargs", [
    ("hypercube(4)", "bfb", "allreduce", {}), ("gkautz(2,16)", "bfb", "reduce_scatter", {"in_place": False}),
    ("torus(3,3)", "teccl", "alltoall", {}), ("gkautz(2,16)", "ring", "allgather", {"copies": 2, "in_place": False})])
def test_one_lowering_builds_every_try_as_a_fresh_lowering_would(expr, algo, collective, kwargs):
    """``export`` makes the instructions once and builds each try from them; a build must not change what the
    next one starts from (merging and fusing rewrite threadblocks and dependencies)."""
    from solvers.export import lower, lowering, to_xml

    topo = load(expr)
    schedule = synthesize(topo, algo, collective, total_bytes=1e6).schedule
    made = lowering(topo, schedule, **kwargs)
    for ops, merge in [(3, True), (40, False), (5, True), (3, True), (40, False)]:
        assert to_xml(made.build(ops, merge)) == to_xml(lower(topo, schedule, ops_per_tb=ops, merge=merge, **kwargs))
        for dialect in ("executor", "msccl"):     # the file written straight from the columns is the same
            assert made.place(ops, merge).text(dialect) == to_xml(made.build(ops, merge), dialect)
