"""Exports no reader refuses (issue 60): a program over a runtime reader's limit is coarsened (merged, then its
shares rounded to fewer chunks per shard), verified, priced and written with its loss stated; refused only when
nothing fits, naming the limit and the least count reached (``solvers.export.coarsen``)."""
from __future__ import annotations

from fractions import Fraction

import pytest

from bench.diameter import random_regular_digraph   # the random 3-regular fabric, as the bench builds it
from solvers import synthesize
from solvers.core.schedule import Collective, Schedule, Transfer, columns
from solvers.core.verify import verify
from solvers.export import TARGETS, OverLimit, Target, XmlError, check_xml, export, parse_xml
from solvers.export.coarsen import merged, quantized
from solvers.runtime import DEFAULT_WORKLOAD
from studio.cli import main
from topologies import load
from topologies.files import write_topology


@pytest.fixture(scope="module")
def mi250_ring():
    topo = load("mi250(clusters=2)")
    return {coll: synthesize(topo, "ring", coll) for coll in ("allreduce", "reduce_scatter")}


@pytest.fixture(scope="module")
def random_bfb():
    """BFB's allreduce on the random 3-regular 40-rank digraph (seed 0): LP shares over 7,560 chunks per shard."""
    topo = random_regular_digraph(40, 3, 0)
    return synthesize(topo, "bfb", "allreduce")


def _written(result, runtime: str):
    """Export ``result`` for ``runtime``: the text, its report, and the check-xml report of the text."""
    text, report = export(result.topology, result.schedule, runtime=runtime)
    return text, report, check_xml(text, runtime=runtime)


def _stated(report, what: str, limit: int) -> None:
    """The report says the coarsening: the limit, the count it has now, the chunks, transfers and the loss."""
    c = report.coarsened
    assert c is not None and c.what == what and c.limit == limit and c.now <= limit
    note = report.runtime_note
    assert f"coarsened to fit {report.runtime}'s limit of {limit:,} {what}" in note
    assert f"{c.now:,} {what} (limit {limit:,})" in note
    assert f"time {100 * c.loss:+.1f} % against the unrefined schedule" in note
    assert c.times_us[0] > 0 and c.times_us[1] >= c.times_us[0] * (1 - 1e-9)    # a coarser schedule is no faster


@pytest.mark.parametrize("coll, what", [("allreduce", "XML nodes per rank"), ("reduce_scatter", "channels")])
def test_mi250_ring_exports_for_rccl_merged_without_loss(mi250_ring, coll, what):
    """NCCL's 16 rings on mi250(clusters=2) for RCCL: the allreduce needs 6,202 XML nodes on a rank, the
    reduce-scatter more than 32 channels; merging the touching pieces that cross a link in one step fits both
    and costs nothing in the runtime model (one message per link and step either way)."""
    result = mi250_ring[coll]
    with pytest.raises(OverLimit) as refused:
        export(result.topology, result.schedule, runtime="rccl", coarsen=False)
    assert refused.value.what == what
    text, report, back = _written(result, "rccl")
    assert report.ok and back.ok and back.runtime == "rccl"
    _stated(report, what, 4096 if what == "XML nodes per rank" else 32)
    assert report.coarsened.loss == pytest.approx(0.0, abs=1e-12)
    assert report.coarsened.chunks == (64, 64) and report.coarsened.transfers[1] < report.coarsened.transfers[0]
    algo, dialect = parse_xml(text)
    assert dialect == "executor" and algo.ngpus == 32 and algo.coll == {"allreduce": "allreduce"}.get(coll, "reducescatter")


@pytest.mark.parametrize("runtime", list(TARGETS))
def test_bfb_on_a_random_3_regular_fabric_exports_for_every_runtime(random_bfb, runtime):
    """The issue's first case: refused for every runtime before (more than 4,096 XML nodes per rank), now the
    shares are rounded to fewer chunks per shard and the file passes check-xml, its loss stated."""
    result = random_bfb
    assert columns(result.schedule).one == 7560
    with pytest.raises(OverLimit, match="XML nodes per rank"):
        export(result.topology, result.schedule, runtime=runtime, coarsen=False)
    text, report, back = _written(result, runtime)
    assert report.ok and back.ok
    _stated(report, "XML nodes per rank", 4096)
    before, after = report.coarsened.chunks
    assert before == 7560 and after < before and algo_chunks(text) == 40 * after
    assert report.coarsened.loss < 0.05           # rounding hundreds of chunks per shard moves little


def algo_chunks(text: str) -> int:
    algo, _ = parse_xml(text)
    return algo.nchunksperloop


def test_the_cli_prints_the_coarsening_and_the_file_checks(mi250_ring, tmp_path, capsys):
    out = tmp_path / "ring.xml"
    assert main(["export", "mi250(clusters=2)", "--algo", "ring", "--collective", "allreduce", "--runtime", "rccl",
                 "-o", str(out)]) == 0
    said = capsys.readouterr().err
    assert "validated and simulated for rccl (coarsened to fit rccl's limit of 4,096 XML nodes per rank" in said
    assert "time +0.0 % against the unrefined schedule" in said
    assert main(["check-xml", str(out), "--runtime", "rccl"]) == 0


def test_a_topology_file_exports_through_the_cli(tmp_path, capsys):
    path = tmp_path / "rr40.json"
    write_topology(random_regular_digraph(40, 3, 0), path)
    out = tmp_path / "bfb.xml"
    assert main(["export", str(path), "--algo", "bfb", "--collective", "allreduce", "--runtime", "msccl-executor",
                 "-o", str(out)]) == 0
    assert "coarsened to fit msccl-executor's limit of 4,096 XML nodes per rank" in capsys.readouterr().err
    assert main(["check-xml", str(out), "--runtime", "msccl-executor"]) == 0


def test_nothing_fits_refuses_naming_the_limit_and_the_least_count():
    """A reader of 2 steps per threadblock and 1 channel: the ring allgather of hypercube(4) needs more channels
    than that at every grid, one chunk per shard included, so the export is refused naming the limit."""
    topo = load("hypercube(4)")
    schedule = synthesize(topo, "ring", "allgather").schedule
    narrow = Target("narrow", "executor", 2, 64, 32, 1, 72, "a reader of 2 steps per threadblock and 1 channel")
    with pytest.raises(OverLimit) as refused:
        export(topo, schedule, runtime=narrow)
    message = str(refused.value)
    assert message.startswith("no coarsening fits narrow's limit of 1 channels: the fewest any try reached is ")
    assert "down to 1 chunk per shard" in message
    assert isinstance(refused.value, XmlError) and refused.value.limit == 1 and refused.value.reached > 1
    assert f"reached is {refused.value.reached:,} (" in message


def test_merging_is_lossless_and_verified(mi250_ring):
    result = mi250_ring["allreduce"]
    topo, schedule = result.topology, result.schedule
    joined = merged(schedule)
    assert joined.count < schedule.count
    verify(topo, joined).raise_if_failed()
    assert DEFAULT_WORKLOAD.price(topo, joined).time_us == pytest.approx(DEFAULT_WORKLOAD.price(topo, schedule).time_us,
                                                                         rel=1e-12)
    assert merged(joined).count == joined.count                     # nothing left to join


def test_rounding_keeps_the_schedule_valid_on_every_grid(random_bfb):
    topo, schedule = random_bfb.topology, random_bfb.schedule
    for grid in (1, 2, 7, 60, 540):
        coarse = quantized(schedule, grid)
        verify(topo, coarse).raise_if_failed()
        cols = columns(coarse)
        assert grid % cols.one == 0
        assert cols.one <= grid and (cols.hi > cols.lo).all()


def test_rounding_is_exact_and_drops_what_vanishes():
    """Bounds x -> floor(x G + 1/2) / G, the same for every transfer of a shard. On K_3 each shard s goes whole
    to s+1, its first third straight to s+2 and the rest to s+2 through s+1: on halves the split moves to 1/2, on
    one chunk per shard the direct piece vanishes and the relay carries everything, and both still verify."""
    topo = load("complete(3)")
    link = {(l.src, l.dst): i for i, l in enumerate(topo.links)}
    third = Fraction(1, 3)

    def plan(split):
        out = []
        for s in range(3):
            a, b = (s + 1) % 3, (s + 2) % 3
            out += [Transfer(s, Fraction(0), Fraction(1), link[(s, a)], 1), Transfer(s, split, Fraction(1), link[(a, b)], 2)]
            if split > 0:
                out.append(Transfer(s, Fraction(0), split, link[(s, b)], 1))
        return sorted(out)

    schedule = Schedule(Collective.ALLGATHER, plan(third), algo="test")
    verify(topo, schedule).raise_if_failed()
    for grid, split in ((2, Fraction(1, 2)), (1, Fraction(0)), (3, third)):
        coarse = quantized(schedule, grid)
        verify(topo, coarse).raise_if_failed()
        assert sorted(coarse.transfers) == plan(split)
        assert columns(coarse).one == grid


def test_a_bundle_is_coarsened_the_same_way(mi250_ring):
    """The bundle of the reduce-scatter for RCCL (refused before: more than 32 channels for one copy) is built from
    the merged schedule, its line among the notes, and every file checks."""
    from solvers.export.bundle import export_bundle

    result = mi250_ring["reduce_scatter"]
    with pytest.raises(OverLimit, match="channels"):
        export_bundle(result.topology, result.schedule, "rccl", coarsen=False, jobs=1)
    bundle = export_bundle(result.topology, result.schedule, "rccl", jobs=1)
    assert bundle.files and all(check_xml(f.text, runtime="rccl").ok for f in bundle.files)
    assert any(n.startswith("coarsened to fit rccl's limit of 32 channels") and "time +0.0 %" in n
               for n in bundle.notes)


def test_the_cli_prices_the_coarsening_for_its_workload_and_says_it_in_json(tmp_path, capsys):
    """The export command hands its workload to the coarsening (the loss priced at the user's M and prices) and
    --json carries the coarsening's line; the file passes check-xml for its runtime."""
    import json

    out = tmp_path / "ring.xml"
    code = main(["export", "mi250(clusters=2)", "--algo", "ring", "--collective", "allreduce", "--runtime", "rccl",
                 "--bytes", "1e9", "-o", str(out), "--json"])
    captured = capsys.readouterr()
    assert code == 0, captured.err
    summary = json.loads(captured.out)
    assert summary["coarsened"].startswith("coarsened to fit rccl's limit of 4,096 XML nodes per rank")
    assert "M 1e+09 bytes" in summary["coarsened"] and summary["coarsened"] in summary["runtime_note"]
    assert main(["check-xml", str(out), "--runtime", "rccl"]) == 0
