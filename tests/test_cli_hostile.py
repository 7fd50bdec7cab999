"""Issue 39, the CLI under hostile paths, numbers and environments: every output path is checked before any work
runs and written whole or not at all with the umask's mode (``studio.cli.common.check_output``,
``write_atomically``); the environment and every number are checked at start; a repeated ``--param`` or expression
keyword is refused. Each refusal is exit code 2 and exactly one line on stderr, and nothing is written or
replaced."""
import errno
import os
import stat
import subprocess
import sys
from contextlib import contextmanager

import pytest

from studio.cli import main

from .conftest import ROOT

EXPORT = ["export", "ring(4)", "--algo", "ring"]
SWEEP = ["sweep", "ring({N})", "--param", "N=4", "--algos", "ring", "--collectives", "allgather", "--bytes", "1e6"]


@pytest.fixture(autouse=True)
def never_replace_a_device(monkeypatch):
    """A guard for the machine running these tests as root: no rename may land on a device node (the old writer
    renamed its temporary file over ``-o /dev/null``)."""
    real_replace, real_rename = os.replace, os.rename

    def guarded(real):
        def move(src, dst, *args, **kwargs):
            if str(os.path.realpath(dst)).startswith("/dev/"):
                raise AssertionError(f"a file was renamed over {dst}")
            return real(src, dst, *args, **kwargs)
        return move

    monkeypatch.setattr(os, "replace", guarded(real_replace))
    monkeypatch.setattr(os, "rename", guarded(real_rename))


def refused(capsys, args, *words) -> str:
    """Run the CLI; it must exit 2 with one line on stderr holding ``words``."""
    assert main(args) == 2
    err = capsys.readouterr().err
    assert err.count("\n") == 1 and "Traceback" not in err, err
    for word in words:
        assert word in err, err
    return err


@pytest.fixture
def no_work(monkeypatch):
    """Fail the test if an export or a sweep starts its work (the output path must be refused first)."""
    import studio.cli.export_input as export_input
    import studio.cli.schedules as schedules
    import studio.cluster as cluster

    def work(*_args, **_kwargs):
        raise AssertionError("the work ran before the output path was checked")

    monkeypatch.setattr(schedules, "schedule_for_export", work)
    monkeypatch.setattr(export_input, "schedule_for_export", work)
    monkeypatch.setattr(schedules, "load", work)
    monkeypatch.setattr(export_input, "load", work)
    monkeypatch.setattr(cluster, "executor", work)


def is_device(path: str) -> bool:
    return stat.S_ISCHR(os.stat(path).st_mode)


# -- writing ---------------------------------------------------------------------------------------------------

def test_export_onto_a_missing_folder(tmp_path, capsys, no_work):
    refused(capsys, EXPORT + ["-o", str(tmp_path / "nowhere" / "x.xml")], "does not exist")
    assert list(tmp_path.iterdir()) == []


def test_export_onto_a_folder(tmp_path, capsys, no_work):
    (tmp_path / "d").mkdir()
    refused(capsys, EXPORT + ["-o", str(tmp_path / "d")], "is a folder")
    assert [p.name for p in tmp_path.iterdir()] == ["d"] and list((tmp_path / "d").iterdir()) == []


@pytest.mark.parametrize("device", ["/dev/null", "/dev/full"])
def test_export_onto_a_device_is_refused_without_force(device, capsys, no_work):
    if not os.path.exists(device):
        pytest.skip(f"no {device} here")
    refused(capsys, EXPORT + ["-o", device], "device", "--force")
    assert is_device(device)


def test_export_onto_a_fifo_is_refused_without_force(tmp_path, capsys, no_work):
    fifo = tmp_path / "pipe"
    os.mkfifo(fifo)
    refused(capsys, EXPORT + ["-o", str(fifo)], "FIFO", "--force")
    assert stat.S_ISFIFO(os.stat(fifo).st_mode) and [p.name for p in tmp_path.iterdir()] == ["pipe"]


def test_export_onto_a_full_disk(capsys):
    """``--force`` writes into the device itself: /dev/full answers ENOSPC, which is one line."""
    if not os.path.exists("/dev/full"):
        pytest.skip("no /dev/full here")
    refused(capsys, EXPORT + ["-o", "/dev/full", "--force"], "cannot write /dev/full", "No space left")
    assert is_device("/dev/full")


def test_export_onto_a_symlink_is_refused_without_force(tmp_path, capsys, no_work):
    (tmp_path / "target.xml").write_bytes(b"old")
    (tmp_path / "link.xml").symlink_to("target.xml")
    refused(capsys, EXPORT + ["-o", str(tmp_path / "link.xml")], "symbolic link", "--force")
    assert os.readlink(tmp_path / "link.xml") == "target.xml" and (tmp_path / "target.xml").read_bytes() == b"old"
    assert sorted(p.name for p in tmp_path.iterdir()) == ["link.xml", "target.xml"]


def test_export_through_a_symlink_with_force_keeps_the_link(tmp_path, capsys):
    (tmp_path / "target.xml").write_bytes(b"old")
    (tmp_path / "link.xml").symlink_to("target.xml")
    assert main(EXPORT + ["-o", str(tmp_path / "link.xml"), "--force"]) == 0
    assert os.readlink(tmp_path / "link.xml") == "target.xml"
    assert (tmp_path / "target.xml").read_text().startswith("<algo")
    assert sorted(p.name for p in tmp_path.iterdir()) == ["link.xml", "target.xml"]


@pytest.mark.parametrize("code", [errno.ENOSPC, errno.EACCES, errno.EROFS])
def test_a_failed_write_is_one_line_and_keeps_the_old_file(tmp_path, capsys, monkeypatch, code):
    """The disk fills (or turns read-only) while the file is written: one line, the old file whole, no
    temporary file left."""
    target = tmp_path / "out.xml"
    target.write_bytes(b"old")

    def fail(_fd):
        raise OSError(code, os.strerror(code))

    monkeypatch.setattr(os, "fsync", fail)
    refused(capsys, EXPORT + ["-o", str(target)], "cannot write", os.strerror(code))
    assert target.read_bytes() == b"old" and [p.name for p in tmp_path.iterdir()] == ["out.xml"]


@pytest.mark.skipif(not hasattr(os, "geteuid") or os.geteuid() == 0, reason="root writes into read-only folders")
def test_export_into_a_read_only_folder(tmp_path, capsys, no_work):
    folder = tmp_path / "ro"
    folder.mkdir()
    folder.chmod(0o555)
    try:
        refused(capsys, EXPORT + ["-o", str(folder / "x.xml")], "not writable")
        assert list(folder.iterdir()) == []
    finally:
        folder.chmod(0o755)


@pytest.mark.parametrize("umask, mode", [(0o022, 0o644), (0o077, 0o600), (0o002, 0o664)])
def test_exported_files_get_the_umask_mode(tmp_path, umask, mode):
    old = os.umask(umask)
    try:
        assert main(EXPORT + ["-o", str(tmp_path / "x.xml")]) == 0
    finally:
        os.umask(old)
    assert stat.S_IMODE(os.stat(tmp_path / "x.xml").st_mode) == mode


@pytest.fixture
def thread_executor(monkeypatch):
    """The sweep on a thread pool instead of a Dask cluster (what is tested here is the output, not Dask)."""
    from concurrent.futures import ThreadPoolExecutor

    import studio.cluster as cluster

    @contextmanager
    def executor(_scheduler, _workers):
        with ThreadPoolExecutor(1) as pool:
            yield pool, "a thread", 1

    monkeypatch.setattr(cluster, "executor", executor)


def test_sweep_onto_a_folder_before_any_work(tmp_path, capsys, no_work):
    (tmp_path / "grid.csv").mkdir()
    refused(capsys, SWEEP + ["-o", str(tmp_path / "grid.csv")], "is a folder")
    assert list((tmp_path / "grid.csv").iterdir()) == []


def test_sweep_onto_a_missing_folder_before_any_work(tmp_path, capsys, no_work):
    refused(capsys, SWEEP + ["-o", str(tmp_path / "nowhere" / "grid.csv")], "does not exist")
    assert list(tmp_path.iterdir()) == []


def test_sweep_parquet_rows_file_is_checked_too(tmp_path, capsys, no_work):
    (tmp_path / "grid.parquet.rows.csv").mkdir()
    refused(capsys, SWEEP + ["-o", str(tmp_path / "grid.parquet")], "grid.parquet.rows.csv is a folder")
    assert [p.name for p in tmp_path.iterdir()] == ["grid.parquet.rows.csv"]


def test_sweep_onto_a_symlink_is_refused_without_force(tmp_path, capsys, no_work):
    (tmp_path / "real.csv").write_bytes(b"")
    (tmp_path / "grid.csv").symlink_to("real.csv")
    refused(capsys, SWEEP + ["-o", str(tmp_path / "grid.csv")], "symbolic link")


def test_sweep_check_keeps_resuming(tmp_path, capsys, thread_executor):
    """An existing table is a regular file, which the check lets through: the same command resumes it."""
    out = tmp_path / "grid.csv"
    assert main(SWEEP + ["-o", str(out)]) == 0
    first = out.read_text()
    capsys.readouterr()
    assert main(SWEEP + ["-o", str(out)]) == 0
    assert "1 already in" in capsys.readouterr().err and out.read_text() == first


def test_sweep_a_full_disk_while_rows_are_written(tmp_path, capsys, monkeypatch, thread_executor):
    """The disk fills once the grid runs (after the sweep's line saying what it runs): the error is one line."""
    def fail(_fd):
        raise OSError(errno.ENOSPC, os.strerror(errno.ENOSPC))

    monkeypatch.setattr(os, "fsync", fail)
    assert main(SWEEP + ["-o", str(tmp_path / "grid.csv")]) == 2
    start, error = capsys.readouterr().err.splitlines()
    assert start.startswith("sweep: 1 tasks") and error.startswith("error: cannot write") and "No space" in error


# -- the environment and the numbers ---------------------------------------------------------------------------

def test_bad_studio_max_nodes_is_one_line_before_any_command():
    env = {**os.environ, "STUDIO_MAX_NODES": "abc", "PYTHONPATH": str(ROOT)}
    proc = subprocess.run([sys.executable, "-m", "studio", "topo", "ring(4)"], cwd=ROOT, env=env,
                          capture_output=True, text=True, timeout=120)
    assert proc.returncode == 2 and proc.stdout == "", proc.stderr
    assert proc.stderr.count("\n") == 1 and "STUDIO_MAX_NODES" in proc.stderr, proc.stderr


@pytest.mark.parametrize("value", ["abc", "-5", "0", "1e3", "٣", "4096x"])
def test_bad_studio_max_nodes_through_main(capsys, monkeypatch, value):
    monkeypatch.setenv("STUDIO_MAX_NODES", value)
    refused(capsys, ["topo", "ring(4)"], "STUDIO_MAX_NODES")


def test_cache_folder_that_is_a_file(tmp_path, capsys, monkeypatch):
    (tmp_path / "f").write_bytes(b"x")
    monkeypatch.setenv("TOPOLOGY_STUDIO_CACHE", str(tmp_path / "f"))
    refused(capsys, ["cache", "info"], "TOPOLOGY_STUDIO_CACHE", "not a folder")
    assert (tmp_path / "f").read_bytes() == b"x"


@pytest.mark.parametrize("args, words", [
    (["topo", "ring(40)", "--max-nodes", "-5"], "--max-nodes must be at least 1"),
    (["topo", "ring(40)", "--max-nodes", "0"], "--max-nodes must be at least 1"),
    (["schedule", "ring(4)", "--algo", "ring", "--bytes", "inf"], "--bytes must be a finite number"),
    (["schedule", "ring(4)", "--algo", "ring", "--bytes", "nan"], "--bytes must be a finite number"),
    (["compare", "ring(4)", "--bytes", "inf"], "--bytes must be a finite number"),
    (["compare", "ring(4)", "--alpha", "1", "--bandwidth", "inf"], "--bandwidth must be a finite number"),
    (["compare", "ring(4)", "--alpha", "-1", "--bandwidth", "10"], "--alpha must not be negative"),
    (["compare", "ring(4)", "--budget", "-1"], "--budget must be positive"),
    (["alltoall", "ring(4)", "--bytes", "1e999"], "--bytes must be a finite number"),
    (EXPORT + ["--sm-budget", "0"], "--sm-budget must be at least 1"),
    (EXPORT + ["--copies", "-1"], "--copies must be at least 1"),
    (EXPORT + ["--format", "bundle", "--alpha", "nan", "--bandwidth", "1", "-o", "x.zip"],
     "--alpha must be a finite number"),
    (["schedule", "ring(4)", "--algo", "teccl", "--time-limit", "inf"], "--time-limit must be a finite number"),
    (SWEEP + ["--workers", "-3", "-o", "grid.csv"], "--workers must be at least 1"),
    (SWEEP + ["--workers", "0", "-o", "grid.csv"], "--workers must be at least 1"),
    (SWEEP + ["--max-nodes", "-5", "-o", "grid.csv"], "--max-nodes must be at least 1"),
    (SWEEP + ["--time-limit", "inf", "-o", "grid.csv"], "--time-limit must be a finite number"),
    (SWEEP[:-1] + ["inf", "-o", "grid.csv"], "'inf' is not a finite positive number"),
    (SWEEP[:-1] + ["1e6,nan", "-o", "grid.csv"], "'nan' is not a finite positive number"),
])
def test_bad_numbers_are_one_line_before_any_work(tmp_path, capsys, monkeypatch, no_work, args, words):
    monkeypatch.chdir(tmp_path)
    refused(capsys, args, words)
    assert list(tmp_path.iterdir()) == []


def test_repeated_param_is_refused_naming_it(tmp_path, capsys, no_work):
    args = ["sweep", "ring({N})", "--param", "N=4", "--param", "N=5", "-o", str(tmp_path / "grid.csv")]
    refused(capsys, args, "--param N", "twice")
    assert list(tmp_path.iterdir()) == []


def test_repeated_keyword_is_refused_with_its_column(capsys):
    from topologies.expression import ExpressionError, parse

    with pytest.raises(ExpressionError, match="keyword bw twice") as info:
        parse("mesh(4,4,bw=1,bw=2)")
    assert info.value.column == 15
    with pytest.raises(ExpressionError, match="keyword boxes twice"):
        parse("line(dgx_a100(boxes=1, boxes=2))")
    refused(capsys, ["topo", "mesh(4,4,bw=1,bw=2)"], "bw twice", "column 15")
    assert parse("mesh(4,4,bw=1,alpha_ns=2)").kwargs == (("bw", 1), ("alpha_ns", 2))


def test_json_output_never_holds_nan_or_infinity():
    """Issue 39: Python writes NaN and Infinity into JSON, which no JSON reader takes; the CLI's one JSON
    writer refuses a result holding one, in one line."""
    from studio.cli.common import UsageError, json_text

    assert json_text({"a": 1.5, "b": [0, None]}) == '{"a": 1.5, "b": [0, null]}'
    for bad in (float("nan"), float("inf"), -float("inf")):
        with pytest.raises(UsageError, match="not finite"):
            json_text({"time_us": bad})
