"""Golden CLI outputs: 24 commands whose stdout, stderr and exit code were recorded before the registry
refactor (issue 20) and must stay byte-identical. Re-recorded once for the runtime model (issue 21): every time,
algbw and winner now comes from ``solvers.runtime``, with busbw, slices and the step model beside it; ``find``
(17) once more when the Finder's pricing moved there (``runtime_us`` and ``runtime_algo`` beside
``step_model_us``, the former ``allreduce_us``); 03 and 20 when ``ring`` became NCCL's multi-ring (its detail:
rings, max_rings, ring_search, ring_busbw_GBps), 23 when ``hierarchical`` joined the synthesizers; 16 when check-xml named the runtime it checks against and the
largest threadblock counts (issue 22); 20 when compare's rows named the export's target and the limits it uses
(``export_limits``, issue 22); 17 when each frontier row said whose schedule its steps and tb are (``schedule``:
expansion or a BFB measurement, issue 23); 12 when TE-CCL's epoch search started at a cut lower bound
(``lower_bound_epochs``, the note that K - 1 is below it, one probe instead of two; issue 24); 14, 15, 16 and
20 when exports chose their runtime by the fabric's vendor and named the step types their kernels must run
(msccl-executor for direct-connect designs, a summary line on stderr, ``step_types`` in check-xml's JSON, compare's
``export_limits`` for msccl-executor; issue 38); 04-13, 17, 18 and 20 when every command priced with one workload
(issue 40: M 1e6 and uniform alpha 10 us, B 12.5 GB/s by default, as the app; ``schedule`` always prints the
runtime model's time, its bound and the prices it used; compare's rows say which synthesizer returned the same
schedule and why a bound is out of reach). 12 again when TE-CCL's detail gained its epoch
multiplier and its lower bound in microseconds with the gap to it (issue 43: ``multiplier``,
``lower_bound_us``, ``lower_bound_gap``). 18 when the all-to-all answer said whether its bracket reached the
gap target (issue 57: ``mcf_gap_reached``). 03-12 and 20 when one lower bound was shown everywhere (issue 59:
``bound_us`` is ``solvers.runtime.bounds.tightest_bound``'s time, no longer latency + bandwidth, which a pipeline
beats, and ``bound_name`` names its term; compare's bound row and its detail had moved to it already; 07 also
carries ForestColl's finite-M choice, ``finite_choice`` and ``finite_trees_per_root``), recorded with
``TOPOLOGY_STUDIO_CACHE=off``.

Wall-clock figures (synthesis and solver seconds) are the only fields that differ between two runs of the same
command; ``normalize`` replaces their values by ``<seconds>`` before comparing, and nothing else.

Record anew (only when an output is meant to change, and say why in the commit):
``python -m tests.test_cli_golden --record``.
"""
from __future__ import annotations

import contextlib
import io
import json
import re
import shlex
import sys
from pathlib import Path

import pytest

GOLDEN = Path(__file__).resolve().parent / "data" / "cli_golden"
EXAMPLE_XML = "tests/data/msccl-examples/rccl_allreduce-1step-4n-ll-1pass.xml"

COMMANDS = [
    "topo biring(8)",
    "topo line(circulant(16,[3,4]),3) --json",
    "topo dgx_a100(boxes=2) --json",
    "schedule ring(8) --algo ring --collective allreduce --json",
    "schedule gkautz(4,64) --algo bfb --collective allgather --bytes 1e6 --json",
    "schedule line(circulant(16,[3,4])) --algo expansion --collective allreduce",
    "schedule hypercube(4) --algo sptree --collective reduce_scatter --json",
    "schedule dgx_a100(boxes=2) --algo forestcoll --collective allreduce --bytes 1e9 --json",
    "schedule mesh(3,3) --algo tacos --collective allgather --bytes 1e6 --json",
    "schedule complete(12) --algo direct --collective allreduce --bytes 4e8 --cost genmodel --json",
    "schedule complete(12) --algo gentree --collective allreduce --bytes 4e8 --json",
    "schedule dbt_graph(8) --algo dbt --collective allreduce --bytes 1e6",
    "schedule biring(6) --algo teccl --collective allgather --chunks 1 --json",
    "schedule biring(8) --algo rhd --collective reduce_scatter --fixed-k 2",
    "export ring(8) --algo ring --collective allreduce",
    "export circulant(8,[1,3]) --algo bfb --collective allgather --dialect msccl --proto LL",
    f"check-xml {EXAMPLE_XML} --json",
    "find --nodes 64 --degree 4 --json",
    "alltoall gkautz(2,16) --json",
    "forestcoll dgx_a100(boxes=2) --scan 3 --json",
    "compare ring(16) gkautz(2,16) --collective allreduce --algos ring,bfb,sptree --json",
    "genmodel plans --servers 12 --size 1e8 --alpha-steps 3 --json",
    "schedule bogus( --algo ring",
    "schedule ring(8) --algo nosuch",
]

_SECONDS_KEYS = ("synthesis_s", "solve_seconds", "solver_seconds", "elapsed_s", "seconds")


def _seconds(value):
    if isinstance(value, dict):                  # e.g. ForestColl's seconds per phase
        return {k: _seconds(v) for k, v in value.items()}
    return "<seconds>" if isinstance(value, (int, float)) else value


def _scrub(value):
    if isinstance(value, dict):
        return {k: (_seconds(v) if k in _SECONDS_KEYS else _scrub(v)) for k, v in value.items()}
    if isinstance(value, list):
        return [_scrub(v) for v in value]
    return value


def normalize(text: str) -> str:
    """Replace wall-clock seconds in JSON lines and in the text tables; leave every other byte as it is."""
    out = []
    for line in text.splitlines(keepends=True):
        stripped = line.strip()
        if stripped.startswith(("{", "[")):
            try:
                out.append(json.dumps(_scrub(json.loads(stripped))) + "\n")
                continue
            except ValueError:
                pass
        line = re.sub(r"^((?:tacos |teccl )?(?:synthesis_s|solver_seconds|solve_seconds)\s+)\S+", r"\1<seconds>",
                      line)
        out.append(line)
    return "".join(out)


def run(command: str) -> str:
    """Run one CLI command in this process; its exit code, stdout and stderr as one text."""
    from studio.cli import main

    out, err = io.StringIO(), io.StringIO()
    with contextlib.redirect_stdout(out), contextlib.redirect_stderr(err):
        code = main(shlex.split(command))
    return f"$ {command}\nexit {code}\n--- stdout\n{normalize(out.getvalue())}--- stderr\n{normalize(err.getvalue())}"


def _path(i: int) -> Path:
    return GOLDEN / f"{i:02d}.txt"


@pytest.mark.parametrize("i", range(len(COMMANDS)), ids=[c.split()[0] + f"-{i}" for i, c in enumerate(COMMANDS)])
def test_cli_output_is_unchanged(i, monkeypatch):
    monkeypatch.chdir(Path(__file__).resolve().parents[1])
    expected = _path(i).read_text(encoding="utf-8")
    assert run(COMMANDS[i]) == expected


def test_normalize_touches_only_seconds():
    line = json.dumps({"synthesis_s": 1.5, "steps": 3, "tacos": {"synthesis_s": 0.2, "gap": 0.0}})
    assert json.loads(normalize(line)) == {"synthesis_s": "<seconds>", "steps": 3,
                                           "tacos": {"synthesis_s": "<seconds>", "gap": 0.0}}
    assert normalize("tacos synthesis_s   0.123\nsteps  4\n") == "tacos synthesis_s   <seconds>\nsteps  4\n"


if __name__ == "__main__" and "--record" in sys.argv:
    GOLDEN.mkdir(parents=True, exist_ok=True)
    for i, command in enumerate(COMMANDS):
        _path(i).write_text(run(command), encoding="utf-8")
        print(f"recorded {_path(i).name}: {command}")
