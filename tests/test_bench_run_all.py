"""bench/run_all.py: runs the benchmark scripts and turns their printed tables into one Markdown report."""
import datetime as dt
import importlib.util
import subprocess
import sys

import pytest

from .conftest import ROOT

RUN_ALL = ROOT / "bench" / "run_all.py"


@pytest.fixture(scope="module")
def run_all():
    spec = importlib.util.spec_from_file_location("bench_run_all", RUN_ALL)
    module = importlib.util.module_from_spec(spec)
    sys.modules[spec.name] = module          # dataclasses look their module up
    spec.loader.exec_module(module)
    return module


def cli(*args, timeout=120):
    return subprocess.run([sys.executable, str(RUN_ALL), *args], cwd=ROOT, capture_output=True, text=True,
                          timeout=timeout)


# ------------------------------------------------------------------------------------------- end to end
def test_finder_into_markdown(tmp_path):
    out = tmp_path / "results.md"
    proc = cli("--only", "finder", "--args", "finder=--max-nodes 40 --degrees 2,4", "-o", str(out))
    assert proc.returncode == 0, proc.stderr
    md = out.read_text(encoding="utf-8")
    assert md.startswith("# Benchmark results")
    assert dt.date.today().isoformat() in md or (dt.date.today() - dt.timedelta(days=1)).isoformat() in md
    assert "- CPUs: " in md and f"- Python: {sys.version.split()[0]}" in md
    assert "\n## finder\n" in md and "## bfb" not in md
    assert "`python -m bench.finder --max-nodes 40 --degrees 2,4`" in md
    assert "- Wall time: " in md and "- Status: ok" in md
    lines = md.splitlines()
    head = lines.index("| d | targets | frontier pts | bidir pts | max pts | no Π row | seconds |")
    assert lines[head + 1] == "|---:|---:|---:|---:|---:|---:|---:|"
    rows = [l for l in lines[head + 2:head + 4]]
    assert [r.split("|")[1].strip() for r in rows] == ["2", "4"]
    assert all(r.split("|")[2].strip() == "25" for r in rows)          # N = 16..40
    # the totals the script prints after its table stay, as text after it
    assert "total " in md[md.index(lines[head]):] and "```text" in md[md.index(lines[head]):]


def test_list_names_every_script():
    proc = cli("--list", "--quick")
    assert proc.returncode == 0, proc.stderr
    names = [line.split()[0] for line in proc.stdout.splitlines()]
    expected = sorted(p.stem for p in (ROOT / "bench").glob("*.py") if p.name != "run_all.py"
                      and not p.name.startswith("_"))
    assert names == expected
    assert "python -m bench.finder --max-nodes 256" in proc.stdout


def test_unknown_name_is_one_line_error():
    proc = cli("--only", "nosuch", "--list")
    assert proc.returncode != 0
    assert "unknown benchmark" in proc.stderr and "Traceback" not in proc.stderr


# ------------------------------------------------------------------------------------------- tables
DIAMETER = """\
topology                     diameter   ours s  networkx s   ratio
biring(4096)                     2048    1.672       18.48     11x
random 4-regular, N=4096            8    1.661       10.96      7x
"""


def test_labels_and_values_with_spaces(run_all):
    t = run_all.parse_table(DIAMETER)
    assert t.header == ["topology", "diameter", "ours s", "networkx s", "ratio"]
    assert t.rows[1] == ["random 4-regular, N=4096", "8", "1.661", "10.96", "7x"]
    assert t.numeric == [False, True, True, True, True]
    md = run_all.table_markdown(t).splitlines()
    assert md[0] == "| topology | diameter | ours s | networkx s | ratio |"
    assert md[1] == "|:---|---:|---:|---:|---:|"


def test_remarks_notes_and_left_aligned_text(run_all):
    # printed the way the scripts print: fixed widths, one space apart, a left-aligned last column
    lines = [f"{'topology':<15} {'nodes':>5} {'steps':>5} {'tb_factor':>12} {'verify s':>8}  status"]
    for expr, n, steps, tb, ver, status, remark in [
            ("hypercube(10)", 1024, 10, 1.0, 1.2, "optimal", ""),
            ("torus(50,50)", 2500, 50, 0.99960016, 2.2, "feasible gap 3.0%", "  NOT VERIFIED"),
            ("gkautz(4,4096)", 4096, 6, 1.00390625, 3.0, "optimal", "")]:
        lines.append(f"{expr:<15} {n:>5} {steps:>5} {tb:>12.8f} {ver:>8.2f}  {status}{remark}")
        if steps == 50:
            lines.append("    a note printed between the rows")
    text = "\n".join(lines + ["total 12.3 s for 3 topologies"]) + "\n"
    t = run_all.parse_table(text)
    assert t.header == ["topology", "nodes", "steps", "tb_factor", "verify s", "status", ""]
    assert t.rows[1][-2:] == ["feasible gap 3.0%", "NOT VERIFIED"]
    assert [r[0] for r in t.rows] == ["hypercube(10)", "torus(50,50)", "gkautz(4,4096)"]
    assert t.after == ["    a note printed between the rows", "total 12.3 s for 3 topologies"]


def test_what_is_not_a_table_stays_verbatim(run_all):
    for text in ["just a sentence\nand another one\n", "Traceback (most recent call last):\n  File x\nError: y\n",
                 "topology  nodes\n"]:
        md = run_all.output_markdown(text)
        assert md.startswith("```text\n") and text.strip() in md and "|" not in md.replace(text, "")
    assert run_all.output_markdown("") == "_(no output)_"
    md = run_all.output_markdown(f"{'name':<5} {'value':>6}\n{'a|b':<5} {1:>6}\n")
    assert "| a\\|b | 1 |" in md


def test_timeout_keeps_partial_output(run_all, tmp_path):
    script = tmp_path / "slow.py"
    script.write_text("import time\nprint('topology  seconds')\nprint('ring(8)      0.10', flush=True)\n"
                      "time.sleep(60)\nprint('never')\n")
    s = run_all.Script("slow", script, "a slow one", False)
    run = run_all.run_script(s, [], timeout=5)
    assert run.returncode is None and run.seconds < 20
    assert "ring(8)" in run.stdout and "never" not in run.stdout
    assert run.status.startswith("timed out after 5 s")
    md = run_all.report([run], run_all._dt.datetime.now().astimezone(), quick=False)
    assert "| ring(8) | 0.10 |" in md and "timed out" in md
