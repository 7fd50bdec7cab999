"""The ``train`` command (issue 57): cold against cached, and the Fig. 9 breakdown per design.

    python -m bench.training            # the timing table, then the Fig. 9 table (slow: the MCF of every design)
    python -m bench.training --quick    # the timing table on small fabrics only

Timing: each case runs ``python -m studio train ... --json`` twice in a fresh results-cache folder, under
``/usr/bin/time -v`` where it exists (wall seconds and peak RSS): the first run prices the design (its verified
allreduce schedules and, for expert parallelism, LP (3)'s MCF rate) and keeps the prices and the reply; the second
is answered from the reply cache (Python start-up and imports included).

Fig. 9: every design of the direct-connect paper's Fig. 9 (Table 7's Pareto designs at N, ShiftedRing, the 2-D
torus) with iteration, compute, exposed allreduce and all-to-all time, the all-to-all share and the ratios to the
best (``bench.papers.training``).
"""
from __future__ import annotations

import argparse
import os
import re
import shutil
import subprocess
import sys
import tempfile
import time
from pathlib import Path

ROOT = Path(__file__).resolve().parents[1]
CASES = [
    ("switch-c-2048", "gkautz(4,1024)", "ep"),
    ("switch-base-256", "debruijn(4,4)", "ep"),
    ("gpt2-small", "circulant(12,[2,3])", "dp"),
    ("switch-base-128", "gkautz(2,16)", "ep"),
]
QUICK = CASES[2:]


def _run(model: str, expr: str, parallel: str, env: dict) -> tuple[float, float | None]:
    argv = [sys.executable, "-m", "studio", "train", model, "--topo", expr, "--parallel", parallel, "--json"]
    timer = shutil.which("time") or ("/usr/bin/time" if os.path.exists("/usr/bin/time") else None)
    if timer:
        argv = [timer, "-v", *argv]
    start = time.perf_counter()
    done = subprocess.run(argv, cwd=ROOT, env=env, capture_output=True, text=True)
    wall = time.perf_counter() - start
    if done.returncode != 0:
        lines = [l for l in done.stderr.splitlines() if l.strip() and not l.startswith("\t")]
        raise RuntimeError(lines[0] if lines else "failed")
    rss = re.search(r"Maximum resident set size \(kbytes\): (\d+)", done.stderr)
    return wall, (int(rss.group(1)) / 2 ** 20 if rss else None)


def timing(cases) -> None:
    print("| model | design | parallel | cold s | cached s | cold peak GB |")
    print("|---|---|---|---|---|---|")
    for model, expr, parallel in cases:
        with tempfile.TemporaryDirectory() as tmp:
            os.chmod(tmp, 0o700)
            env = {**os.environ, "TOPOLOGY_STUDIO_CACHE": os.path.join(tmp, "cache"), "PYTHONPATH": str(ROOT)}
            try:
                cold, rss = _run(model, expr, parallel, env)
                warm, _ = _run(model, expr, parallel, env)
            except RuntimeError as exc:
                print(f"| {model} | {expr} | {parallel} | failed: {exc} | | |")
                continue
        print(f"| {model} | {expr} | {parallel} | {cold:.1f} | {warm:.2f} | "
              f"{'-' if rss is None else f'{rss:.2f}'} |", flush=True)


def fig9_table() -> None:
    from bench.papers.training import FIG9, fig9

    print("| N | model | design | iteration ms | compute ms | exposed allreduce ms | all-to-all ms | all-to-all % | "
          "iteration / best | all-to-all / best | bucket |")
    print("|---|---|---|---|---|---|---|---|---|---|---|")
    for n, (model, _, _) in FIG9.items():
        start = time.perf_counter()
        f = fig9(n)
        best = f["best"]
        rows = list(f["designs"].values()) + [f["shifted_ring"], f["torus"]]
        for it in rows:
            mark = " (best)" if it is best else ""
            print(f"| {n} | {model} | {it.design}{mark} | {it.iteration_ms:.1f} | {it.compute_ms:.1f} | "
                  f"{it.allreduce_exposed_ms:.1f} | {it.alltoall_ms:.1f} | {100 * it.alltoall_share:.0f} | "
                  f"{it.iteration_ms / best.iteration_ms:.2f} | {it.alltoall_ms / best.alltoall_ms:.2f} | "
                  f"{(it.bucket_bytes or 0) / 2 ** 20:g} MB |", flush=True)
        print(f"(N = {n}: {time.perf_counter() - start:.0f} s)", file=sys.stderr)


def main() -> None:
    p = argparse.ArgumentParser(description=__doc__.splitlines()[0])
    p.add_argument("--quick", action="store_true", help="the timing table on small fabrics only")
    args = p.parse_args()
    timing(QUICK if args.quick else CASES)
    if not args.quick:
        print()
        fig9_table()


if __name__ == "__main__":
    main()
