"""Issue 58, hostile input round two, share B: the failures command and the one-GPU design.

Each door answers in one line on stderr (``error: ...`` naming the file or argument) with a non-zero exit, or, for
a valid input, answers; hostile files run in a child process under a time limit and an address-space limit, so a
hang or a runaway read fails the test instead of the machine. FIFOs and links are made in ``tmp_path`` only."""
from __future__ import annotations

import contextlib
import csv
import errno
import io
import json
import os
import resource
import signal
import subprocess
import sys
import time

import pytest

from solvers.core.errors import NotApplicable
from solvers.failures import FailureError, FailureTask, analyse, read_rows_file, row_columns
from solvers.registry import ALGORITHMS
from solvers.runtime import Workload
from solvers.sweep import FIELDS, Journal, SweepError, read_rows
from topologies import TopologyError, load

from .conftest import ROOT

LIMIT_S = 20
MEMORY = 1536 * 2**20                     # 1.5 GiB of address space for a child
ROWS = ["failures", "biring(4)", "--algo", "ring", "--collective", "allgather", "--links", "1", "--in-process"]


def _cli(*argv):
    from studio.cli import main

    out, err = io.StringIO(), io.StringIO()
    with contextlib.redirect_stdout(out), contextlib.redirect_stderr(err):
        code = main(list(argv))
    return code, out.getvalue(), err.getvalue()


def _child(args, tmp_path, fsize=None, cache="off"):
    """``python -m studio ARGS`` in a child under LIMIT_S seconds and MEMORY bytes of address space (and, with
    ``fsize``, files of at most that many bytes, the write then failing as on a full disk): (code, out, err, s)."""
    def limits():
        resource.setrlimit(resource.RLIMIT_AS, (MEMORY, MEMORY))
        if fsize is not None:
            signal.signal(signal.SIGXFSZ, signal.SIG_IGN)      # the write fails with EFBIG instead of a kill
            resource.setrlimit(resource.RLIMIT_FSIZE, (fsize, fsize))

    env = {**os.environ, "TOPOLOGY_STUDIO_CACHE": cache if cache == "off" else str(tmp_path / cache),
           "PYTHONDONTWRITEBYTECODE": "1", "OPENBLAS_NUM_THREADS": "1", "OMP_NUM_THREADS": "1",
           "MKL_NUM_THREADS": "1"}
    start = time.monotonic()
    p = subprocess.run([sys.executable, "-m", "studio", *args], cwd=ROOT, env=env, capture_output=True, text=True,
                       timeout=LIMIT_S, preexec_fn=limits)
    return p.returncode, p.stdout, p.stderr, time.monotonic() - start


def _one_line(code: int, err: str, *words) -> str:
    """The refusal: exit 2, the last stderr line ``error: ...`` with every word, no traceback."""
    assert code == 2 and "Traceback" not in err, err
    last = err.strip().splitlines()[-1]
    assert last.startswith("error: "), err
    for w in words:
        assert w in last, (w, last)
    return last


# ------------------------------------------------------------------------------------------------ one GPU left
@pytest.mark.parametrize("argv", [["schedule", "--algo", "ring"], ["compare"],
                                  ["export", "--algo", "ring", "--format", "msccl"]])
def test_a_fail_design_that_leaves_one_gpu_is_refused_at_the_door(argv, tmp_path):
    """The old code: ZeroDivisionError (Fraction(0, 0)) in the bounds of compare, and the same in schedule and
    export wherever they reach them. Now the expression itself refuses it, so every command says the same."""
    code, _, err, seconds = _child([argv[0], "fail(ring(2),gpus=[0])", *argv[1:]], tmp_path)
    line = _one_line(code, err, "keeps 1 of its 2 GPUs", "two or more")
    assert err.strip() == line and seconds < LIMIT_S


def test_every_gpu_failed_and_the_synthesize_entry_refuse_too():
    with pytest.raises(TopologyError, match="keeps 1 of its 3 GPUs"):
        load("fail(ring(3),gpus=[0,2])")
    with pytest.raises(TopologyError, match="at least one node"):
        load("fail(ring(3),gpus=[0,1,2])")
    assert load("fail(ring(3),links=[0])").n == 3                  # a fail(...) keeping its GPUs still loads
    from solvers.synthesize import synthesize
    from topologies.failures import degrade, elements

    four = load("biring(4)")
    one = degrade(four, elements(four, "gpus")[:3])
    with pytest.raises(NotApplicable, match="has 1 GPU: a collective needs two or more"):
        synthesize(one, "ring", "allreduce")


def test_a_failure_set_that_leaves_one_gpu_offers_no_design_to_open():
    row = analyse(FailureTask("ring(2)", "gpus", ("0",), ("ring",), "allreduce", Workload().key))
    assert row["gpus"] == 1 and row["connected"] is False and row["expr"] == "" and row["ring_status"] == "disconnected"


# ------------------------------------------------------------------------------------------------ --collective
@pytest.mark.parametrize("coll, words", [("bogus", "unknown collective 'bogus'"), ("custom", "not custom"),
                                         ("allreduce@1", "allreduce has no root"),
                                         ("broadcast@9", "root 9 is not a rank")])
def test_the_collective_is_checked_before_any_set_runs(coll, words, tmp_path, monkeypatch):
    """The old code ran every set and exited 0 with rows of errors for ``--collective bogus``."""
    monkeypatch.setenv("TOPOLOGY_STUDIO_CACHE", str(tmp_path / "cache"))
    code, out, err = _cli("failures", "biring(4)", "--algo", "ring", "--collective", coll, "--links", "1",
                          "--in-process")
    assert out == "" and err.count("\n") == 1 and "sets of" not in err
    _one_line(code, err, "--collective", words)


COLLECTIVES = ["allgather", "reduce_scatter", "allreduce", "alltoall", "broadcast", "reduce", "gather", "scatter@2"]


@pytest.mark.parametrize("coll", COLLECTIVES)
def test_every_synthesizer_and_collective_answers_in_text_and_json(coll, tmp_path, monkeypatch):
    """Every synthesizer the command accepts on every collective it accepts, on a small design with one cable and
    one GPU failed: text and JSON both answer (the old text output raised TypeError where a synthesizer had no
    healthy algbw but a set disconnected), each synthesizer with its summary line, each ok schedule verified."""
    monkeypatch.setenv("TOPOLOGY_STUDIO_CACHE", str(tmp_path / "cache"))
    algos = [a for name in ALGORITHMS for a in ("--algo", name)]
    for kind in ("--links", "--gpus"):
        argv = ["failures", "biring(4)", *algos, "--collective", coll, kind, "1", "--samples", "1", "--in-process"]
        code, text, err = _cli(*argv)
        assert code == 0 and "Traceback" not in err, err
        lines = text.splitlines()
        assert lines[-1].startswith("algbw: the runtime model")
        for name in ALGORITHMS:
            assert sum(1 for line in lines if line.startswith(f"{name}: ")) == 1, name
        code, out, err = _cli(*argv, "--json")
        assert code == 0, err
        doc = json.loads(out)
        assert doc["collective"] == coll and len(doc["rows"]) == 1
        for row in [doc["healthy"], *doc["rows"]]:
            assert row["connected"] is not None, row                    # no lost worker
            for name in ALGORITHMS:
                assert row[f"{name}_status"] in ("ok", "not applicable", "error", "disconnected")
                assert row[f"{name}_status"] != "ok" or row[f"{name}_verified"] is True
        assert any(doc["healthy"][f"{name}_status"] == "ok" for name in ALGORITHMS)


def test_the_issue_case_rhd_allreduce_on_ring5_prints_its_text(tmp_path, monkeypatch):
    monkeypatch.setenv("TOPOLOGY_STUDIO_CACHE", str(tmp_path / "cache"))
    code, text, err = _cli("failures", "ring(5)", "--algo", "rhd", "--algo", "ring", "--collective", "allreduce",
                           "--links", "1", "--in-process")
    assert code == 0, err
    assert "rhd: no algbw on the healthy design (not applicable)" in text
    assert "100.0% disconnect the GPUs" in text                        # a one-way ring: every cut disconnects
    code, out, _ = _cli("failures", "ring(5)", "--algo", "rhd", "--collective", "allreduce", "--links", "1",
                        "--in-process", "--json")
    rhd = json.loads(out)["summary"]["per_synthesizer"]["rhd"]
    assert rhd["healthy_algbw_GBps"] is None and rhd["median_algbw_fraction"] is None
    assert rhd["healthy_status"] == "not applicable"


# ------------------------------------------------------------------------------------------------ the rows file
@pytest.fixture
def rows_file(tmp_path, monkeypatch):
    """A rows file of a real run (the healthy design and the 4 cables of biring(4)): header and 5 rows."""
    monkeypatch.setenv("TOPOLOGY_STUDIO_CACHE", str(tmp_path / "cache"))
    path = tmp_path / "rows.csv"
    code, _, err = _cli(*ROWS, "-o", str(path))
    assert code == 0 and path.read_text().count("\n") == 6, err
    return path


def _edit(path, line: int, **values) -> None:
    with path.open(newline="") as fh:
        table = list(csv.reader(fh))
    for key, value in values.items():
        table[line - 1][table[0].index(key)] = value
    with path.open("w", newline="") as fh:
        csv.writer(fh).writerows(table)


@pytest.mark.parametrize("line, values, words", [
    (2, {"ring_algbw_GBps": "nan"}, "ring_algbw_GBps 'nan' is not a number"),
    (2, {"ring_algbw_GBps": "1e308"}, "ring_algbw_GBps 1e308 is outside"),
    (3, {"ring_time_us": "inf"}, "ring_time_us 'inf' is not a number"),
    (3, {"optimum_algbw_GBps": "-1.5"}, "optimum_algbw_GBps -1.5 is outside"),
    (4, {"ring_algbw_GBps": "7.5"}, "is not the bytes over ring_time_us"),
    (4, {"gpus": "9" * 400}, "gpus"),
    (5, {"connected": "maybe"}, "connected 'maybe' is not True or False"),
    (5, {"ring_verified": "False"}, "ring_verified is False on an ok schedule"),
    (6, {"ring_status": "fine"}, "ring_status 'fine'"),
    (6, {"tb_bound": "1/0"}, "tb_bound '1/0'"),
    (2, {"kind": "gpus"}, "kind 'gpus' is not this run's links"),
    (2, {"expr": "ring(9)"}, "is not the design biring(4)"),
    (3, {"expr": "fail(ring(9),links=[0])"}, "is not the design biring(4)"),
    (3, {"cached": "-1"}, "cached"),
])
def test_a_hand_edited_row_is_refused_naming_the_file_and_the_line(rows_file, line, values, words):
    """The old code resumed such rows into ``healthy nan GB/s``, a negative optimum, 1e308 GB/s."""
    _edit(rows_file, line, **values)
    before = rows_file.read_bytes()
    code, out, err = _cli(*ROWS, "-o", str(rows_file))
    assert out == "" and err.count("\n") == 1
    _one_line(code, err, str(rows_file), f"line {line}", words)
    assert rows_file.read_bytes() == before


def test_another_runs_rows_or_columns_are_refused(rows_file):
    code, _, err = _cli(*ROWS[:5], "allreduce", *ROWS[6:], "-o", str(rows_file))
    _one_line(code, err, str(rows_file), "line 2 holds another run's rows (allgather")
    code, _, err = _cli(*ROWS[:3], "bfb", *ROWS[4:], "-o", str(rows_file))
    _one_line(code, err, str(rows_file), "holds rows of another sweep or failures run")
    _edit(rows_file, 3, prices="uniform\n\x1b[31mred")                 # a quoted field across lines, a control
    code, _, err = _cli(*ROWS, "-o", str(rows_file))
    assert err.count("\n") == 1 and "\x1b" not in err
    _one_line(code, err, str(rows_file), "line 4 holds another run's rows (allgather, 1000000.0 bytes, "
                                         "uniform??[31mred")


def test_a_file_cut_inside_its_last_field_resumes_without_that_line(rows_file):
    """The README: a stopped run resumes. The old code read the cut row (its ``prices`` cut short) and refused
    the whole file as another run's."""
    data = rows_file.read_bytes()
    rows_file.write_bytes(data[:-12])                       # inside the last row's quoted prices
    code, out, err = _cli(*ROWS, "-o", str(rows_file), "--json")
    assert code == 0 and "(4 already in" in err, err
    assert len(json.loads(out)["rows"]) == 4
    again = rows_file.read_bytes()
    assert again.count(b"\n") == 6 and again.endswith(b"\n")
    stamp = {"collective": "allgather", "bytes": Workload().total_bytes, "prices": Workload().price_label}
    assert len(read_rows_file(rows_file, ["ring"], stamp, "biring(4)", "links", 4)) == 5


def test_a_lost_workers_row_is_solved_again(rows_file):
    _edit(rows_file, 4, connected="")
    code, _, err = _cli(*ROWS, "-o", str(rows_file))
    assert code == 0 and "(4 already in" in err, err


@pytest.mark.parametrize("tail, words", [
    (b"x" * 2_000_000 + b"\n", "line 7 is longer than 1,048,576 bytes"),
    (b"x" * 300_000 + b"\n", "line 7 is not CSV: field larger than field limit"),
    (b'"' + b"x" * 60_000 + b"\n" + b"y" * 60_000 + b"\n" + b"z" * 60_000 + b'"\n', "is not CSV"),
    (b"\xff\xfe\x81binary\n", "line 7 is not UTF-8 text"),
    (b"a,b\x00,c\n", "line 7 holds a NUL byte"),
    (b"a,b,c\n", "line 7 has 3 fields"),
])
def test_a_huge_binary_or_broken_line_is_refused_in_one_line(rows_file, tail, words):
    """The old code: ``_csv.Error: field larger than field limit`` as a traceback, a codec error without the
    file's name."""
    rows_file.write_bytes(rows_file.read_bytes() + tail)
    code, _, err = _cli(*ROWS, "-o", str(rows_file))
    _one_line(code, err, str(rows_file), words)


def test_a_binary_rows_file_is_refused_naming_it(tmp_path, monkeypatch):
    monkeypatch.setenv("TOPOLOGY_STUDIO_CACHE", str(tmp_path / "cache"))
    path = tmp_path / "rows.csv"
    path.write_bytes(bytes(range(256)) * 64 + b"\n")
    code, _, err = _cli(*ROWS, "-o", str(path))
    assert "\x00" not in err and "\x01" not in err
    _one_line(code, err, str(path), "line 1")
    with pytest.raises(SweepError, match="line 1"):
        read_rows(path, list(FIELDS))


# ------------------------------------------------------------------------------------------------ -o --force
@pytest.mark.parametrize("command", ["failures", "sweep"])
def test_force_onto_a_fifo_never_opens_it_for_reading(command, tmp_path):
    """The old code opened the FIFO to read the rows back and blocked for ever."""
    fifo = tmp_path / "rows.csv"
    os.mkfifo(fifo)
    argv = ([*ROWS, "-o", str(fifo), "--force"] if command == "failures" else
            ["sweep", "ring({N})", "--param", "N=4", "--algos", "ring", "--collectives", "allgather", "--bytes",
             "1e6", "-o", str(fifo), "--force", "--workers", "1"])
    code, _, err, seconds = _child(argv, tmp_path)
    _one_line(code, err, str(fifo), "is a FIFO", "regular file")
    assert seconds < LIMIT_S


def test_force_through_a_link_to_dev_full_reads_nothing(tmp_path):
    """The old code read the link's target (/dev/full: zeros without end) to find a cut last line: 12.5 GB."""
    if not os.path.exists("/dev/full"):
        pytest.skip("no /dev/full here")
    link = tmp_path / "rows.csv"
    link.symlink_to("/dev/full")
    code, _, err, seconds = _child([*ROWS, "-o", str(link), "--force"], tmp_path)
    _one_line(code, err, str(link), "is a device")
    assert seconds < LIMIT_S


def test_a_full_disk_leaves_the_rows_file_as_it_was(tmp_path, monkeypatch):
    """A write that fails (here: the file size limit, EFBIG, as a full disk's ENOSPC) ends in one line and the
    rows before it whole: no half-written row, no temporary file; a file the run created is removed."""
    monkeypatch.setenv("TOPOLOGY_STUDIO_CACHE", "off")
    path = tmp_path / "rows.csv"
    code, _, err = _cli(*ROWS, "--samples", "1", "-o", str(path))
    assert code == 0, err
    before = path.read_bytes()
    code, _, err, _ = _child([*ROWS, "-o", str(path)], tmp_path, fsize=len(before) + 40)
    _one_line(code, err, f"cannot write {path}")
    assert path.read_bytes() == before and sorted(p.name for p in tmp_path.iterdir()) == ["rows.csv"]
    fresh = tmp_path / "fresh.csv"
    code, _, err, _ = _child([*ROWS, "-o", str(fresh)], tmp_path, fsize=100)
    _one_line(code, err, f"cannot write {fresh}")
    assert not fresh.exists()


def test_a_failed_append_is_undone_byte_for_byte(tmp_path, monkeypatch):
    journal = Journal(tmp_path / "rows.csv", ["N", *FIELDS])
    journal.append([{"N": 4, "expr": "ring(4)", "algo": "ring", "collective": "allgather", "bytes": 1e6}])
    before = journal.path.read_bytes()
    real = os.pwrite

    def half_then_full(fd, data, offset):
        real(fd, data[: len(data) // 2], offset)
        raise OSError(errno.ENOSPC, "No space left on device")

    monkeypatch.setattr(os, "pwrite", half_then_full)
    with pytest.raises(OSError, match="No space left"):
        journal.append([{"N": 5, "expr": "ring(5)", "algo": "ring", "collective": "allgather", "bytes": 1e6}])
    assert journal.path.read_bytes() == before
    assert [r["expr"] for r in journal.rows()] == ["ring(4)"]


def test_the_rows_reader_is_public_and_bounded(tmp_path):
    """``solvers.failures.read_rows_file`` (and ``solvers.sweep.read_rows`` under it): no file, no rows; a
    folder refused; columns are the run's."""
    stamp = {"collective": "allgather", "bytes": 1e6, "prices": "x"}
    assert read_rows_file(tmp_path / "none.csv", ["ring"], stamp, "ring(4)", "links", 4) == {}
    with pytest.raises(FailureError, match="is a folder"):
        read_rows_file(tmp_path, ["ring"], stamp, "ring(4)", "links", 4)
    assert row_columns(["a"])[:2] == ["failed", "kind"] and row_columns(["a"])[-3:] == ["collective", "bytes",
                                                                                         "prices"]


def test_a_rooted_collective_keeps_its_root_by_name_on_every_set(tmp_path, monkeypatch):
    """``reduce@3``: GPU 3 stays the root when GPU 0 fails (it is then rank 2 of 3, not rank 3: the old ranks
    would refuse it), and the set that fails GPU 3 itself is not applicable, with the reason."""
    monkeypatch.setenv("TOPOLOGY_STUDIO_CACHE", str(tmp_path / "cache"))
    code, out, err = _cli("failures", "biring(4)", "--algo", "chain", "--collective", "reduce@3", "--gpus", "1",
                          "--in-process", "--json")
    assert code == 0, err
    doc = json.loads(out)
    status = {r["failed"]: (r["chain_status"], r["chain_message"]) for r in doc["rows"]}
    assert [status[g][0] for g in "012"] == ["ok", "ok", "ok"] and status["3"] == ("not applicable",
                                                                                 "the root 3 failed")
    assert doc["healthy"]["chain_verified"] is True and all(r["chain_verified"] for r in doc["rows"][:3])
