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
                 "--prices", "links", "--json"]) == 0
    data = json.loads(capsys.readouterr().out)
    assert data["time_us"] == pytest.approx(400.0)        # 8/5 * 1e6 B / (4 GB/s)
    assert data["prices"] == "the fabric's own link prices"


def test_schedule_prices_with_the_apps_default_workload(capsys):
    """Without workload flags: M = 1e6 and uniform alpha 10 us, B 12.5 GB/s, as the app's sidebar."""
    from studio.workload import DEFAULTS

    assert main(["schedule", "complete(5)", "--algo", "sptree", "--collective", "allreduce", "--json"]) == 0
    plain = json.loads(capsys.readouterr().out)
    assert main(["schedule", "complete(5)", "--algo", "sptree", "--collective", "allreduce", "--bytes",
                 str(DEFAULTS["w_bytes"]), "--alpha", str(DEFAULTS["w_alpha"]), "--bandwidth",
                 str(DEFAULTS["w_bandwidth"]), "--json"]) == 0
    told = json.loads(capsys.readouterr().out)
    assert plain["time_us"] == told["time_us"] and plain["bytes"] == 1e6 and DEFAULTS["w_prices"] == "uniform"
    assert plain["prices"] == "uniform alpha 10 µs, B 12.5 GB/s per node"
    assert plain["time_us"] >= plain["bound_us"] > 0


@pytest.mark.parametrize("args, words", [
    (["--prices", "links", "--alpha", "3"], "--alpha set uniform prices"),
    (["--prices", "nosuch.json"], "is not uniform, links or a readable price file"),
    (["--alpha", "-1"], "must not be negative"),
    (["--bandwidth", "1e9"], "B must be between"),
])
def test_bad_workload_flags_are_one_line(capsys, args, words):
    assert main(["schedule", "ring(4)", "--algo", "ring", *args]) == 2
    err = capsys.readouterr().err
    assert words in err and len(err.strip().splitlines()) == 1


def test_a_calibrated_price_file_prices_every_command(tmp_path, capsys):
    good = tmp_path / "prices.json"
    good.write_text('{"alpha_us": 2.5, "bandwidth_gbs": 180, "source": "nccl-tests on 8 GPUs"}')
    assert main(["schedule", "ring(8)", "--algo", "ring", "--collective", "allreduce", "--prices", str(good),
                 "--json"]) == 0
    calibrated = json.loads(capsys.readouterr().out)
    assert main(["schedule", "ring(8)", "--algo", "ring", "--collective", "allreduce", "--alpha", "2.5",
                 "--bandwidth", "180", "--json"]) == 0
    uniform = json.loads(capsys.readouterr().out)
    assert calibrated["time_us"] == uniform["time_us"]
    assert calibrated["prices"] == "calibrated (nccl-tests on 8 GPUs): alpha 2.5 µs, B 180 GB/s per node"
    for text, words in (('{"alpha_us": 2.5}', "lacks bandwidth_gbs"), ('{"alpha_us": 1, "bandwidth_gbs": 1, '
                         '"alpha": 3}', "unknown keys: alpha"), ("[1, 2]", "JSON object"), ("{", "not JSON"),
                        ('{"alpha_us": NaN, "bandwidth_gbs": 1}', "not JSON")):
        bad = tmp_path / "bad.json"
        bad.write_text(text)
        assert main(["schedule", "ring(8)", "--algo", "ring", "--prices", str(bad)]) == 2
        err = capsys.readouterr().err
        assert words in err and len(err.strip().splitlines()) == 1, (text, err)


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
    (["schedule", "bipartite(3)", "--algo", "ring", "--bytes", "1e14"], "M must be above 0 and at most"),
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
