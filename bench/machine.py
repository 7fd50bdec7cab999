"""What a user with a machine runs (issue 41), timed as whole commands: each is ``python -m studio ...`` in a new
process (interpreter start, imports, reading the files, the work and the output), the median of ``--repeat`` runs.

    python -m bench.machine                 # every command once
    python -m bench.machine --repeat 3

The commands: the three machine descriptions of examples/ imported (``topo FILE --json``), two sample boxes as a
two-box fabric under ForestColl, the sample log calibrated (uniform only, and with the per-class and protocol
fits), and ``compare --measured --plot`` (every synthesizer beside the log, a PNG through kaleido). Beside each
command: ``topo "ring(8)"``, the cost of starting the CLI at all, as the reference in the same run.
"""
from __future__ import annotations

import argparse
import os
import statistics
import subprocess
import sys
import tempfile
import time
from pathlib import Path

ROOT = Path(__file__).resolve().parents[1]
XML, SMI, ROCM = "examples/nccl-topo-dgx-a100.xml", "examples/nvidia-smi-topo-8gpu.txt", \
    "examples/rocm-smi-showtopo-8gpu.txt"
LOG = "examples/nccl-tests-allreduce-16.log"


def commands(out: str) -> list[tuple[str, list[str]]]:
    return [
        ("reference: topo ring(8)", ["topo", "ring(8)", "--json"]),
        ("topo NCCL XML (DGX A100-like)", ["topo", XML, "--json"]),
        ("topo nvidia-smi topo -m", ["topo", SMI, "--json"]),
        ("topo rocm-smi --showtopo", ["topo", ROCM, "--json"]),
        ("forestcoll two boxes (two XML files)", ["forestcoll", f"{XML},{XML}", "--json"]),
        ("calibrate sample log --uniform", ["calibrate", LOG, "--topo", "biring(16)", "--uniform", "--json"]),
        ("calibrate sample log (classes, protocols)", ["calibrate", LOG, "--topo", "biring(16)", "--json"]),
        ("compare --measured --plot", ["compare", "biring(16)", "--collective", "allreduce", "--measured", LOG,
                                       "--plot", os.path.join(out, "m.png"), "--force"]),
    ]


def main(argv=None) -> int:
    parser = argparse.ArgumentParser(description=__doc__.splitlines()[0])
    parser.add_argument("--repeat", type=int, default=1)
    args = parser.parse_args(argv)
    with tempfile.TemporaryDirectory() as out:
        rows = []
        for label, argv_ in commands(out):
            times = []
            for _ in range(max(1, args.repeat)):
                t = time.perf_counter()
                proc = subprocess.run([sys.executable, "-m", "studio", *argv_], cwd=ROOT, capture_output=True,
                                      text=True)
                times.append(time.perf_counter() - t)
                if proc.returncode:
                    label += f" (exit {proc.returncode}: {proc.stderr.strip()[:80]})"
                    break
            rows.append((label, statistics.median(times)))
    reference = rows[0][1]
    print(f"{'command (python -m studio ...)':<46} {'seconds':>8} {'x reference':>12}")
    for label, sec in rows:
        print(f"{label:<46} {sec:>8.2f} {sec / reference:>12.1f}")
    print(f"load average {os.getloadavg()[0]:.2f}; median of {max(1, args.repeat)} run(s); every command a new process")
    return 0


if __name__ == "__main__":
    raise SystemExit(main())
