"""The CLI contract: JSON keys and values, one-line errors with non-zero exit, files as well as expressions."""
import json
import subprocess
import sys

import pytest

from studio.cli import main
from topologies.families import biring
from topologies.files import to_json

from .conftest import ROOT


def run_cli(*args):
    proc = subprocess.run([sys.executable, "-m", "studio", *args], cwd=ROOT, capture_output=True, text=True,
                          timeout=120)
    return proc.returncode, proc.stdout, proc.stderr


def test_topo_ring_json():
    rc, out, err = run_cli("topo", "ring(8)", "--json")
    assert rc == 0, err
    data = json.loads(out)
    assert {k: data[k] for k in ("nodes", "degree", "diameter", "moore_diameter")} == \
        {"nodes": 8, "degree": 1, "diameter": 7, "moore_diameter": 7}
    assert {"expr", "name", "nodes", "degree", "directed", "diameter", "moore_diameter"} <= set(data)


def test_topo_biring(capsys):
    assert main(["topo", "biring(8)", "--json"]) == 0
    data = json.loads(capsys.readouterr().out)
    assert (data["degree"], data["diameter"], data["directed"]) == (2, 4, False)


def test_schedule_ring_allreduce_json():
    rc, out, err = run_cli("schedule", "ring(8)", "--algo", "ring", "--collective", "allreduce", "--json")
    assert rc == 0, err
    data = json.loads(out)
    assert (data["steps"], data["tb_factor"], data["verified"]) == (14, 1.75, True)
    assert {"algo", "collective", "steps", "tb_factor", "tb_lower_bound", "verified"} <= set(data)


def test_schedule_with_bytes_reports_time(capsys):
    assert main(["schedule", "complete(5)", "--algo", "sptree", "--collective", "allreduce", "--bytes", "1e6",
                 "--json"]) == 0
    data = json.loads(capsys.readouterr().out)
    assert data["time_us"] == pytest.approx(400.0)        # 8/5 * 1e6 B / (4 GB/s)


def test_nonsense_is_one_line_without_traceback():
    rc, out, err = run_cli("topo", "nonsense(")
    assert rc != 0 and out == ""
    assert len(err.strip().splitlines()) == 1 and "Traceback" not in err and "column 10" in err


@pytest.mark.parametrize("args, words", [
    (["topo", "ring(100000)"], "above the limit"),
    (["topo", "ring(9)", "--max-nodes", "4"], "above the limit of 4"),
    (["schedule", "ring(8)", "--algo", "bogus"], "invalid choice"),
    (["schedule", "ring(8)", "--algo", "ring", "--collective", "gossip"], "unknown collective"),
    (["schedule", "bipartite(3)", "--algo", "ring", "--bytes", "-5"], "--bytes must be positive"),
    (["topo", "missing.json"], "cannot read"),
    (["frobnicate"], "invalid choice"),
])
def test_bad_input_gives_one_line(capsys, args, words):
    assert main(args) == 2
    err = capsys.readouterr().err
    assert len(err.strip().splitlines()) == 1 and words in err


def test_not_strongly_connected_is_a_clear_error(tmp_path, capsys):
    path = tmp_path / "two.json"
    path.write_text(json.dumps({"nodes": ["a", "b"], "links": [{"src": "a", "dst": "b"}]}))
    assert main(["topo", str(path), "--json"]) == 0
    assert json.loads(capsys.readouterr().out)["strongly_connected"] is False
    assert main(["schedule", str(path), "--algo", "sptree"]) == 2
    assert "not strongly connected" in capsys.readouterr().err


def test_schedule_reads_a_topology_file(tmp_path, capsys):
    path = tmp_path / "ring.json"
    path.write_text(to_json(biring(6)))
    assert main(["schedule", str(path), "--algo", "ring", "--collective", "allgather", "--json"]) == 0
    data = json.loads(capsys.readouterr().out)
    assert data["steps"] == 5 and data["tb_factor"] == pytest.approx(5 / 6)


def test_human_output_has_the_ratio(capsys):
    assert main(["schedule", "biring(8)", "--algo", "sptree"]) == 0
    out = capsys.readouterr().out
    assert "tb_factor / bound" in out and "verified" in out


@pytest.mark.parametrize("expr, wanted", [
    ("kautz(2,3)", {"nodes": 24, "degree": 2, "diameter": 4}),
    ("gkautz(4,1024)", {"nodes": 1024, "diameter": 5}),
    ("circulant(16,[3,4])", {"degree": 4, "diameter": 3}),
    ("line(circulant(16,[3,4]),3)", {"nodes": 1024, "diameter": 6}),
    ("torus(3,4,5)", {"nodes": 60, "degree": 6, "diameter": 5}),
])
def test_issue3_topo_acceptance(expr, wanted, capsys):
    assert main(["topo", expr, "--json"]) == 0
    out = json.loads(capsys.readouterr().out)
    assert {k: out[k] for k in wanted} == wanted


def test_an_interrupted_write_leaves_the_old_file_or_nothing(tmp_path, monkeypatch):
    """Issue 23: every file the CLI writes goes to a temporary name first (``write_atomically``); a write cut off
    halfway (Ctrl-C) leaves the previous file whole and no temporary file behind."""
    import os

    from studio.cli.schedules import write_atomically

    target = tmp_path / "out.xml"
    target.write_bytes(b"old")
    real_fdopen = os.fdopen

    class HalfThenInterrupt:
        def __init__(self, fh):
            self.fh = fh

        def __enter__(self):
            return self

        def __exit__(self, *exc):
            self.fh.close()

        def write(self, data):
            self.fh.write(data[:len(data) // 2])
            raise KeyboardInterrupt

    monkeypatch.setattr(os, "fdopen", lambda fd, mode: HalfThenInterrupt(real_fdopen(fd, mode)))
    with pytest.raises(KeyboardInterrupt):
        write_atomically(str(target), b"x" * 1000)
    assert target.read_bytes() == b"old" and sorted(p.name for p in tmp_path.iterdir()) == ["out.xml"]
    monkeypatch.setattr(os, "fdopen", real_fdopen)
    write_atomically(str(tmp_path / "new.xml"), b"whole")
    assert (tmp_path / "new.xml").read_bytes() == b"whole"
