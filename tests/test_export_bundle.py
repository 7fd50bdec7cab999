"""Performance-grade exports (issue 22): copies and instances in the lowering, the per-channel threadblock limit,
out-of-place programs that leave the input alone, the protocol/copies plan of ``solvers.export.tuning`` and the
checked bundles of ``solvers.export.bundle``."""
from __future__ import annotations

import io
import zipfile

import numpy as np

import pytest
from hypothesis import HealthCheck, given, settings
from hypothesis import strategies as st

from solvers import synthesize
from solvers.export import TARGETS, check_xml, export, parse_xml, simulate, to_xml, validate
from solvers.export.bundle import export_bundle
from solvers.export.lower import lower
from solvers.export.tuning import PROTOCOL_COSTS, TOLERANCE, candidate_model, plan
from solvers.runtime import Execution, Model
from studio.cli import main
from topologies import load

NVLINK = Execution.alpha_beta(0.7, 100.0)


def _schedule(expr: str, algo: str, coll: str):
    topo = load(expr)
    return topo, synthesize(topo, algo, coll).schedule


@pytest.mark.parametrize("coll", ["allgather", "reduce_scatter", "allreduce"])
@pytest.mark.parametrize("copies,instances", [(2, 1), (1, 3), (2, 2)])
def test_copies_and_instances_simulate_in_and_out_of_place(coll, copies, instances):
    topo, schedule = _schedule("gkautz(2,8)", "bfb", coll)
    one = lower(topo, schedule)
    for in_place in (True, False):
        for full_ops, runtime in ((True, "msccl-executor"), (False, "rccl")):
            algo = lower(topo, schedule, copies=copies, instances=instances, in_place=in_place, full_ops=full_ops,
                         ops_per_tb=20)           # an r and an re per reduction: within RCCL's 64 steps
            assert simulate(algo) == [], (coll, copies, instances, in_place)
            assert algo.nchunksperloop == one.nchunksperloop * copies * instances
            assert check_xml(to_xml(algo), runtime=runtime).ok
    # copies run on threadblocks of their own: c times the send/receive threadblocks of one copy
    both = lower(topo, schedule, copies=copies, instances=instances)
    peers = sum(1 for g in one.gpus for t in g.tbs if t.send >= 0 or t.recv >= 0)
    assert sum(1 for g in both.gpus for t in g.tbs if t.send >= 0 or t.recv >= 0) == copies * peers


@settings(max_examples=12, deadline=None, suppress_health_check=[HealthCheck.too_slow])
@given(n=st.integers(5, 11), jumps=st.sets(st.integers(2, 4), max_size=1),
       coll=st.sampled_from(["allgather", "reduce_scatter", "allreduce"]), copies=st.integers(1, 3),
       instances=st.integers(1, 2), in_place=st.booleans(), full_ops=st.booleans())
def test_random_circulants_lower_to_programs_that_do_the_collective(n, jumps, coll, copies, instances, in_place,
                                                                    full_ops):
    topo = load(f"circulant({n},[{','.join(map(str, sorted(jumps | {1})))}])")     # jump 1: connected
    schedule = synthesize(topo, "bfb", coll).schedule
    algo = lower(topo, schedule, copies=copies, instances=instances, in_place=in_place, full_ops=full_ops)
    assert simulate(algo) == []


def test_out_of_place_allgather_uses_distinct_buffers():
    topo, schedule = _schedule("gkautz(2,16)", "bfb", "allgather")
    text, report = export(topo, schedule, in_place=False)
    assert report.ok
    algo, _ = parse_xml(text)
    per = algo.nchunksperloop // algo.ngpus
    assert algo.outofplace == 1 and algo.inplace == 0
    assert all(g.i_chunks == per and g.o_chunks == algo.nchunksperloop for g in algo.gpus)
    writes = [st for g in algo.gpus for t in g.tbs for st in t.steps if st.type in ("r", "cpy", "rrc")]
    assert writes and all(st.dstbuf == "o" for st in writes)
    assert any(st.type == "cpy" and st.srcbuf == "i" for st in writes)     # the rank's own shard, copied over
    # a program that writes into the caller's send buffer is caught
    bad = next(st for g in algo.gpus for t in g.tbs for st in t.steps if st.type == "r")
    bad.dstbuf = "i"
    bad.dstoff = 0
    assert any("writes into the input buffer" in p for p in simulate(algo))


@pytest.mark.parametrize("expr,algo_name", [("biring(8)", "bfb"), ("gkautz(2,16)", "bfb"), ("hypercube(4)", "ring"),
                                            ("torus(4,4)", "forestcoll")])
def test_out_of_place_reduce_scatter_leaves_the_input_alone(expr, algo_name):
    topo, schedule = _schedule(expr, algo_name, "reduce_scatter")
    algo = lower(topo, schedule, in_place=False)
    assert simulate(algo) == []
    assert not [st for g in algo.gpus for t in g.tbs for st in t.steps
                if st.type in ("r", "rrc", "cpy", "re") and st.dstbuf == "i"]


def test_no_channel_carries_more_threadblocks_than_the_reader_holds():
    topo, schedule = _schedule("complete(40)", "direct", "allgather")
    text, report = export(topo, schedule)          # 39 peers: more than 32 send threadblocks on one channel before
    assert report.ok
    algo, _ = parse_xml(text)
    for g in algo.gpus:
        per_channel = {}
        for t in g.tbs:
            if t.send >= 0:
                per_channel[t.chan] = per_channel.get(t.chan, 0) + 1
        assert max(per_channel.values()) <= TARGETS["rccl"].max_tbs_per_channel
    crowded = lower(topo, schedule, tbs_per_channel=64)
    assert any("more than 32 send threadblocks on channel 0" in e for e in validate(crowded))


def test_the_readers_integer_widths_are_checked():
    topo, schedule = _schedule("ring(4)", "ring", "allgather")
    algo = lower(topo, schedule)
    assert validate(algo) == []
    algo.gpus[0].o_chunks = algo.gpus[0].i_chunks = 1 << 16
    step = next(st for t in algo.gpus[0].tbs for st in t.steps if st.type == "s")
    step.srcoff = 40000
    assert any("16-bit offsets" in e for e in validate(algo))
    step.srcoff, step.depid = 0, 200
    assert any("8-bit dependentBid" in e for e in validate(algo))


def test_max_bytes_zero_means_no_limit_only_in_the_executor_dialect():
    topo, schedule = _schedule("ring(4)", "ring", "allgather")
    algo = lower(topo, schedule, min_bytes=4096, max_bytes=0)
    assert check_xml(to_xml(algo, "executor"), runtime="rccl").ok
    algo.max_bytes = 1024
    assert "not a valid range" in check_xml(to_xml(algo, "executor"), runtime="rccl").first


def test_protocol_prices_follow_the_copies_and_the_share():
    topo, schedule = _schedule("gkautz(2,16)", "bfb", "allgather")
    base = Model(topo, schedule, NVLINK)           # 100 GB/s a node, 50 GB/s a link: above one Simple channel
    big = [1 << 30]
    one = candidate_model(base, PROTOCOL_COSTS["Simple"], 1).times(big)[0][0]
    two = candidate_model(base, PROTOCOL_COSTS["Simple"], 2).times(big)[0][0]
    assert two / one == pytest.approx(40 / 50, rel=0.02)         # 40 GB/s a channel, then the link's 50
    ll = candidate_model(base, PROTOCOL_COSTS["LL"], 8).times(big)[0][0]
    assert ll / two == pytest.approx(3.0, rel=0.02)                # LL carries a third of the bytes
    small = [1024]
    assert (candidate_model(base, PROTOCOL_COSTS["LL"], 1).times(small)[0][0]
            < candidate_model(base, PROTOCOL_COSTS["Simple"], 1).times(small)[0][0])


def test_the_plan_covers_every_size_once_with_a_near_best_choice():
    topo, schedule = _schedule("gkautz(2,16)", "bfb", "allreduce")
    p = plan(topo, schedule, execution=NVLINK)
    assert p.choices[0].min_bytes == 0 and p.choices[-1].max_bytes is None
    for a, b in zip(p.choices, p.choices[1:]):
        assert b.min_bytes == a.max_bytes + 1 and a.max_bytes >= a.sizes[-1] and b.min_bytes <= b.sizes[0]
    best = p.best_us()
    won = [(c, s, t) for c in p.choices for s, t in zip(c.sizes, c.times_us)]
    assert [s for _, s, _ in won] == list(p.sizes)
    for (c, s, t), b in zip(won, best):
        assert t <= b * (1 + TOLERANCE)
    assert p.choices[0].proto == "LL" and p.choices[-1].proto == "Simple"
    # candidates are timed once per distinct set of link prices: every one still has its own model's times
    for (name, copies), times in p.times.items():
        alone = candidate_model(Model(topo, schedule, NVLINK), PROTOCOL_COSTS[name], copies).times(p.sizes)[0]
        assert list(times) == pytest.approx(list(alone + PROTOCOL_COSTS[name].launch_us), rel=1e-12)
    assert list(p.times[("LL", 1)]) != list(p.times[("Simple", 1)])


@pytest.fixture(scope="module")
def bundle():
    topo, schedule = _schedule("gkautz(2,16)", "bfb", "allreduce")
    return topo, schedule, export_bundle(topo, schedule, "rccl", execution=NVLINK)


def test_every_file_of_a_bundle_passes_each_executor(bundle):
    topo, schedule, b = bundle
    names = set()
    with zipfile.ZipFile(io.BytesIO(b.zip_bytes())) as z:
        files = [n for n in z.namelist() if n.endswith(".xml")]
        assert len(files) == len(b.files) == 2 * len(b.plan.choices)
        readme = z.read(f"{b.root}/README.md").decode()
        for n in files:
            assert n.startswith(f"{b.root}/msccl-algorithms/")
            text = z.read(n).decode()
            for runtime in ("rccl", "msccl-executor"):
                report = check_xml(text, runtime=runtime)
                assert report.ok, (n, runtime, report.first)
            algo, _ = parse_xml(text)
            names.add(n.rsplit("/", 1)[-1])
            assert (algo.inplace, algo.outofplace) in ((1, 0), (0, 1))
    assert "MSCCL_ALGO_DIR" in readme and "RCCL_MSCCL_FORCE_ENABLE" in readme
    assert all(name in readme for name in names)
    # the ranges of each placement cover 0 .. no limit without overlap
    for in_place in (True, False):
        spans = sorted((parse_xml(f.text)[0].min_bytes, parse_xml(f.text)[0].max_bytes) for f in b.files
                       if f.in_place == in_place)
        assert spans[0][0] == 0 and spans[-1][1] == 0
        for (lo1, hi1), (lo2, _) in zip(spans, spans[1:]):
            assert lo2 == hi1 + 1


def test_bundle_for_the_original_runtime_has_no_ranges():
    topo, schedule = _schedule("gkautz(2,8)", "bfb", "allgather")
    b = export_bundle(topo, schedule, "msccl", execution=NVLINK)
    assert len(b.files) == 2 and "MSCCL_XML_FILES" in b.readme
    assert all(f.path.endswith(".0-inf.xml") and f.choice.min_bytes == 0 for f in b.files)
    assert all(check_xml(f.text, runtime="msccl").ok for f in b.files)


def test_copies_the_target_cannot_hold_are_dropped_with_a_note():
    topo, schedule = _schedule("gkautz(2,16)", "bfb", "allgather")
    b = export_bundle(topo, schedule, "rccl", execution=NVLINK, sm_budget=6)
    assert {f.choice.copies for f in b.files} <= {1, 2}       # 2 copies fit once their threadblocks are merged
    assert any(n.startswith("4, 8 copies would need at least 8 threadblocks") for n in b.notes)
    assert all(f.report.tbs_per_rank <= 6 for f in b.files)


def test_worker_processes_build_the_same_bundle(bundle, monkeypatch):
    """Programs built in worker processes give the same files as built here, and workers that die without an
    answer leave the bundle to be built here, with a progress line saying so."""
    import multiprocessing
    import os
    import types

    import solvers.export.bundle as bundle_module

    topo, schedule, here = bundle
    said = []
    there = export_bundle(topo, schedule, "rccl", execution=NVLINK, jobs=2, progress=said.append)
    assert [(f.path, f.text) for f in there.files] == [(f.path, f.text) for f in here.files]
    assert any("in a worker process" in line for line in said)
    assert not multiprocessing.active_children()

    def dies(connection, *args):
        os._exit(3)

    original = bundle_module._worker
    bundle_module._worker = dies              # a forked worker runs this module as it is here
    # a plain fork even if other tests left threads running (a fork server would need ``dies`` by name)
    monkeypatch.setattr(bundle_module, "threading", types.SimpleNamespace(active_count=lambda: 1))
    try:
        said.clear()
        fallback = export_bundle(topo, schedule, "rccl", execution=NVLINK, jobs=2, progress=said.append)
    finally:
        bundle_module._worker = original
    assert [f.text for f in fallback.files] == [f.text for f in here.files]
    assert any("worker processes failed" in line for line in said)
    assert not multiprocessing.active_children()


def test_a_program_no_longer_needed_is_not_waited_for():
    """When one placement of a copy count does not fit, the other is stopped (or never started): the bundle is
    the one built in a single process, and no worker is left running."""
    import multiprocessing

    topo, schedule = _schedule("gkautz(2,16)", "bfb", "allgather")
    here = export_bundle(topo, schedule, "rccl", execution=NVLINK, sm_budget=8, jobs=1)
    said = []
    there = export_bundle(topo, schedule, "rccl", execution=NVLINK, sm_budget=8, jobs=2, progress=said.append)
    assert [(f.path, f.text) for f in there.files] == [(f.path, f.text) for f in here.files]
    assert there.notes == here.notes and any(n.startswith("4 copies do not fit") for n in here.notes)
    assert not multiprocessing.active_children()


def test_a_copy_count_that_fails_while_planning_is_not_planned_with(monkeypatch):
    """The workers start on the likely copy count while the plan runs; when that program does not fit, no plan
    with it runs to its end, and the bundle holds one copy with a note naming the failure; the same bundle as
    built in one process, where the likely count is tried after the plan."""
    import multiprocessing
    import types

    import solvers.export.bundle as bundle_module
    from solvers.export import XmlError

    topo, schedule = _schedule("gkautz(2,16)", "ring", "allgather")
    original_job, original_plan, original_times = bundle_module._export_job, bundle_module.plan, Model.times

    def job(*args):
        if args[5][0] > 1:         # (copies, in place)
            return XmlError(f"{args[5][0]} copies refused by the test")
        return original_job(*args)

    planned = []

    def recorded_plan(*args, copies, **kwargs):
        planned.append([list(copies), False])
        out = original_plan(*args, copies=copies, **kwargs)
        planned[-1][1] = True
        return out

    def slow_times(self, sizes, between=None):           # time for a worker's answer to come in
        def wait():
            import time
            time.sleep(0.05)
            if between is not None:
                between()
        return original_times(self, sizes, wait)

    monkeypatch.setattr(bundle_module, "_export_job", job)         # the forked workers run it too
    monkeypatch.setattr(bundle_module, "plan", recorded_plan)
    monkeypatch.setattr(Model, "times", slow_times)
    monkeypatch.setattr(bundle_module, "threading", types.SimpleNamespace(active_count=lambda: 1))
    said = []
    b = export_bundle(topo, schedule, "rccl", execution=NVLINK, jobs=2, progress=said.append)
    assert any(line.startswith(("building 2 copies", "building 4 copies")) for line in said)
    assert {f.choice.copies for f in b.files} == {1}
    failed = [n for n in b.notes if "copies do not fit" in n]
    assert failed and "copies refused by the test" in failed[0]
    bad = int(failed[0].split()[0])
    assert all(not done for copies, done in planned if bad in copies)
    assert not multiprocessing.active_children()
    here = export_bundle(topo, schedule, "rccl", execution=NVLINK, jobs=1)
    assert [(f.path, f.text) for f in here.files] == [(f.path, f.text) for f in b.files] and here.notes == b.notes


def test_plan_candidates_timed_in_worker_processes_give_the_same_times(tmp_path, monkeypatch):
    """With CPUs free of programs, the plan's candidates are timed in processes of their own: the same times as
    timed here; and a plan stopped meanwhile (``between`` raising) leaves no process behind."""
    import multiprocessing
    import os
    import types

    import solvers.export.bundle as bundle_module
    from solvers.export.program import target
    from solvers.export.tuning import SIZE_GRID, candidate_prices

    topo, schedule = _schedule("gkautz(2,16)", "ring", "allreduce")
    model = Model(topo, schedule, NVLINK)
    models = {name: model.with_link_prices(*candidate_prices(model, PROTOCOL_COSTS[name], 1))
              for name in PROTOCOL_COSTS}
    here = {name: m.times(SIZE_GRID)[0] for name, m in models.items()}
    original = bundle_module._time_candidate

    def marked(connection, model, sizes):
        (tmp_path / str(os.getpid())).touch()
        original(connection, model, sizes)

    monkeypatch.setattr(bundle_module, "_time_candidate", marked)
    monkeypatch.setattr(bundle_module, "threading", types.SimpleNamespace(active_count=lambda: 1))
    with bundle_module._Builder(topo, schedule, 3, 108, target("rccl"), "x", lambda _m: None) as build:
        timed = {}
        build.time_many(models, SIZE_GRID, None, timed)
        assert set(timed) == set(here) and all(np.array_equal(timed[k], here[k]) for k in here)
        assert len(list(tmp_path.iterdir())) >= 1             # timed in other processes

        class Stop(Exception):
            pass

        def stop():
            raise Stop

        with pytest.raises(Stop):
            build.time_many(models, SIZE_GRID, stop, {})
    assert not multiprocessing.active_children()


def test_a_process_that_fails_to_start_is_tried_once_and_the_rest_timed_here(monkeypatch):
    """No process can start (say, the machine's process limit): time_many tries one start, not one per
    candidate and tick, and times every candidate here with the same results."""
    import multiprocessing
    import types

    import solvers.export.bundle as bundle_module
    from solvers.export.program import target
    from solvers.export.tuning import SIZE_GRID, candidate_prices

    topo, schedule = _schedule("gkautz(2,16)", "ring", "allreduce")
    model = Model(topo, schedule, NVLINK)
    models = {name: model.with_link_prices(*candidate_prices(model, PROTOCOL_COSTS[name], 1))
              for name in PROTOCOL_COSTS}
    here = {name: m.times(SIZE_GRID)[0] for name, m in models.items()}
    starts = []

    class NoStart:
        def __init__(self, *args, **kwargs):
            pass

        def start(self):
            starts.append(1)
            raise OSError("no more processes")

    monkeypatch.setattr(bundle_module, "threading", types.SimpleNamespace(active_count=lambda: 1))
    with bundle_module._Builder(topo, schedule, 3, 108, target("rccl"), "x", lambda _m: None) as build:
        build.context = types.SimpleNamespace(Pipe=multiprocessing.Pipe, Process=NoStart)
        timed = {}
        build.time_many(models, SIZE_GRID, None, timed)
    assert len(models) >= 3 and starts == [1]
    assert set(timed) == set(here) and all(np.array_equal(timed[k], here[k]) for k in here)


def test_worker_processes_start_from_a_fork_server_beside_other_threads(bundle, monkeypatch):
    """A web server runs the export on one of its threads: the workers then come from a fork server (never a fork
    of a process with other threads) and still give the same files."""
    import multiprocessing
    import threading
    import types

    import solvers.export.bundle as bundle_module

    asked = []

    def get_context(method):
        asked.append(method)
        return multiprocessing.get_context(method)

    monkeypatch.setattr(bundle_module, "multiprocessing", types.SimpleNamespace(
        get_context=get_context, current_process=multiprocessing.current_process))
    topo, schedule, here = bundle
    out = {}

    def run():
        said = []
        out["bundle"] = export_bundle(topo, schedule, "rccl", execution=NVLINK, jobs=2, progress=said.append)
        out["said"] = said

    thread = threading.Thread(target=run)
    thread.start()
    thread.join(timeout=120)
    assert not thread.is_alive()
    assert [f.text for f in out["bundle"].files] == [f.text for f in here.files]
    assert any("in a worker process" in line for line in out["said"])
    assert not any("failed" in line for line in out["said"])
    assert asked == ["forkserver"]


@pytest.mark.parametrize("expr, algo, collective", [("gkautz(2,16)", "ring", "allgather"),
                                                     ("hypercube(4)", "bfb", "allreduce")])
def test_workers_start_on_the_copies_the_plan_picks(expr, algo, collective):
    """While the plan runs, the workers start on the fewest copies that saturate the links for some protocol; here
    the plan picks them, so no program is built that the bundle does not hold."""
    import re

    topo, schedule = _schedule(expr, algo, collective)
    said = []
    b = export_bundle(topo, schedule, "rccl", execution=NVLINK, jobs=2, progress=said.append)
    built = {int(m.group(1)) for line in said if (m := re.match(r"building (\d+) cop", line))}
    assert built == {f.choice.copies for f in b.files} and max(built) > 1


def test_a_retitled_file_keeps_the_checked_body_and_a_valid_tag(bundle):
    """Each file is the program that was simulated with only its first line changed, and that line passes the
    tag rules; a tag the runtime would refuse is caught by them."""
    from solvers.export.check import validate_header

    _, _, b = bundle
    bodies = {}
    for f in b.files:
        head, body = f.text.split("\n", 1)
        assert bodies.setdefault((f.choice.copies, f.in_place), body) == body
        algo, _ = parse_xml(head + "\n</algo>\n")
        assert validate_header(algo) == [] and algo.proto == f.choice.proto
        assert check_xml(f.text, runtime="rccl").ok
    algo, _ = parse_xml(b.files[0].text)
    algo.proto, algo.min_bytes, algo.max_bytes = "ll", 10, 5
    problems = validate_header(algo)
    assert any("proto" in p for p in problems) and any("not a valid range" in p for p in problems)


def test_cli_writes_a_bundle(tmp_path, capsys):
    out = tmp_path / "b.zip"
    assert main(["export", "gkautz(2,8)", "--algo", "bfb", "--collective", "allgather", "--format", "bundle",
                 "--alpha", "0.7", "--bandwidth", "100", "-o", str(out)]) == 0
    err = capsys.readouterr().err
    assert "each validated and simulated" in err and "LL" in err
    with zipfile.ZipFile(out) as z:
        assert any(n.endswith("README.md") for n in z.namelist())
    assert main(["export", "gkautz(2,8)", "--algo", "bfb", "--format", "bundle"]) == 2
    assert "give -o FILE.zip" in capsys.readouterr().err
    assert main(["export", "gkautz(2,8)", "--algo", "bfb", "--format", "bundle", "--jobs", "0", "-o",
                 str(tmp_path / "c.zip")]) == 2
    assert "--jobs must be at least 1" in capsys.readouterr().err
    assert not list(tmp_path.glob(".partial-*"))


def test_merged_rings_forward_in_one_step():
    topo, schedule = _schedule("ring(8)", "ring", "allreduce")
    plain, fused = lower(topo, schedule), lower(topo, schedule, merge=True)
    kinds = [st.type for g in fused.gpus for t in g.tbs for st in t.steps]
    assert kinds.count("rcs") > 0 and kinds.count("rrcs") > 0
    assert simulate(fused) == []
    # one threadblock per rank instead of two, and about as many steps as one of the plain threadblocks
    assert max(len(g.tbs) for g in fused.gpus) == 1 and max(len(g.tbs) for g in plain.gpus) == 2
    assert max(len(t.steps) for g in fused.gpus for t in g.tbs) <= max(len(t.steps) for g in plain.gpus
                                                                       for t in g.tbs) + 1


@settings(max_examples=10, deadline=None, suppress_health_check=[HealthCheck.too_slow])
@given(n=st.integers(5, 10), jump=st.integers(2, 4), algo=st.sampled_from(["bfb", "ring", "sptree"]),
       coll=st.sampled_from(["allgather", "reduce_scatter", "allreduce"]), in_place=st.booleans())
def test_fused_programs_still_do_the_collective(n, jump, algo, coll, in_place):
    topo = load(f"circulant({n},[1,{jump}])")
    schedule = synthesize(topo, algo, coll).schedule
    assert simulate(lower(topo, schedule, merge=True, in_place=in_place)) == []
