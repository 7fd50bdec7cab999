"""How long one bundle takes for a 256-rank fabric (issue 22: at most 10 s), built in one process and in worker
processes, on the same machine in the same run.

    python -m bench.export_speed            # 256-rank cases
    python -m bench.export_speed --quick    # 128-rank cases

A case is (topology, synthesizer, collective), exported for RCCL as a bundle (``solvers.export.bundle``: one file
per size range and placement, protocol and copies chosen by the runtime model at 0.7 us and 100 GB/s a node; every
program lowered, written, read back, validated and simulated). Synthesis is not timed. Columns: the files and
megabytes of the bundle, the steps of its programs (every distinct program once), the seconds built in one
process (``jobs=1``), the seconds with one worker process per CPU (the default for schedules this long), their
ratio, and the microseconds per step of the one-process build.
"""
from __future__ import annotations

import argparse
import os
import time

from solvers.export.bundle import export_bundle
from solvers.runtime import Execution
from solvers.synthesize import synthesize
from topologies import parse_topology

PRICES = Execution.alpha_beta(0.7, 100.0)
TARGET_S = 10.0
CASES = [("gkautz(4,256)", "bfb", "allgather"), ("gkautz(4,256)", "bfb", "reduce_scatter"),
         ("gkautz(4,256)", "bfb", "allreduce"), ("gkautz(4,256)", "forestcoll", "allgather"),
         ("gkautz(2,256)", "bfb", "allgather"), ("gkautz(2,256)", "bfb", "allreduce"),
         ("gkautz(4,256)", "ring", "allgather"), ("gkautz(2,256)", "ring", "allgather"),
         ("gkautz(2,256)", "tacos", "allreduce")]
QUICK = [("gkautz(4,128)", "bfb", "allgather"), ("gkautz(2,128)", "ring", "allgather"),
         ("gkautz(2,128)", "bfb", "allreduce")]


def machine_speed() -> float:
    """Seconds for 10^7 additions in a Python loop: the machine's speed, printed so runs on different machines
    can be compared (the 10 s target is absolute; the same code measured 2.7 times slower on one 2-CPU machine of
    this project than on another)."""
    start = time.perf_counter()
    total = 0
    for i in range(10 ** 7):
        total += i
    return time.perf_counter() - start


def timed(topo, schedule, jobs):
    start = time.perf_counter()
    b = export_bundle(topo, schedule, "rccl", execution=PRICES, jobs=jobs)
    return b, time.perf_counter() - start


def main() -> None:
    parser = argparse.ArgumentParser(description=__doc__.splitlines()[0])
    parser.add_argument("--quick", action="store_true", help="128-rank cases")
    args = parser.parse_args()
    cpus = os.cpu_count() or 1
    print(f"machine: {cpus} CPUs, 10^7 Python additions in {machine_speed():.2f} s")
    print(f"{'topology':<15} {'algo':<11} {'collective':<15} {'files':>5} {'MB':>6} {'steps':>9} {'1 process s':>11} "
          f"{f'{cpus} workers s':>12} {'ratio':>6} {'us/step':>8}")
    within = total = 0
    for expr, algo, coll in (QUICK if args.quick else CASES):
        result = synthesize(parse_topology(expr), algo, coll, total_bytes=1e6)
        one, serial = timed(result.topology, result.schedule, 1)
        many, parallel = timed(result.topology, result.schedule, None)
        assert [f.text for f in one.files] == [f.text for f in many.files]
        programs = {(f.choice.copies, f.in_place): f.report.steps for f in one.files}
        steps = sum(programs.values())
        mb = sum(len(f.text) for f in one.files) / 1e6
        total += 1
        within += parallel <= TARGET_S
        print(f"{expr:<15} {algo:<11} {coll:<15} {len(one.files):>5} {mb:>6.0f} {steps:>9} {serial:>11.2f} "
              f"{parallel:>12.2f} {serial / parallel:>6.2f} {serial / steps * 1e6:>8.2f}", flush=True)
    print(f"{within} of {total} bundles within {TARGET_S:.0f} s with {cpus} workers")


if __name__ == "__main__":
    main()
