"""ASTRA-sim beside the studio's runtime model, on our own Chakra traces (issue 57).

    ASTRA_SIM_BIN=/path/to/AstraSim_Analytical_Congestion_Aware python -m bench.astra_sim [--alpha US] [--bandwidth GBS]

For each case (a ring allreduce on ring(8) and biring(8), the ring allreduce on one DGX A100 box, whose NVSwitch
is ASTRA-sim's Switch dimension) and each size (1 MiB, 64 MiB) the schedule is synthesized and verified, exported
with ``solvers.export.chakra`` (traces, network YAML, system JSON, workload) into a temporary folder, and run by
ASTRA-sim's analytical backend (congestion-aware, and congestion-unaware for the switch). ASTRA-sim's time (the
largest ``sys[i] finished, T cycles``; cycles are ns) is set beside the runtime model's in the same prices
(``solvers.runtime.workload.Workload``, alpha and B per node; ASTRA-sim's GB/s is 2^30 bytes, which the exported
YAML already accounts for). The model is read with one slice (``Execution.slices = 1``: each transfer one message,
as the traces send it) and, as a second figure, at the pipelining depth it picks itself.

Without ``ASTRA_SIM_BIN`` it prints how to build ASTRA-sim (``bench/astra_sim_build.sh``) and exits 0.
"""
from __future__ import annotations

import argparse
import os
import re
import subprocess
import sys
import tempfile
import time

from solvers import Collective, synthesize
from solvers.export.chakra import check_traces, iteration_traces, read_traces, schedule_traces, write_traces
from solvers.export.chakra_astra import astra_inputs
from solvers.runtime import Execution, Model
from solvers.runtime.workload import Workload
from topologies import load

CASES = [("ring(8)", "ring"), ("biring(8)", "ring"), ("dgx_a100(boxes=1)", "ring")]
SIZES = [2 ** 20, 2 ** 26]
FINISHED = re.compile(r"sys\[(\d+)\] finished, (\d+) cycles")
BUILD_HELP = """ASTRA_SIM_BIN is not set: nothing to compare.
Build ASTRA-sim's analytical backend outside the repository (about 10 minutes with -j2; needs cmake, g++,
libprotobuf-dev, protobuf-compiler):
    ASTRA_SOURCES=<folder with git copies of astra-sim and its submodules, or ASTRA_ONLINE=1> \\
    ASTRA_BUILD=<empty folder> bash bench/astra_sim_build.sh
then run
    ASTRA_SIM_BIN=<ASTRA_BUILD>/astra-sim/build/astra_analytical/build/bin/AstraSim_Analytical_Congestion_Aware \\
    python -m bench.astra_sim"""


def run_astra(binary: str, folder: str) -> tuple[int, float]:
    """(ASTRA-sim's time in ns: the last rank to finish, seconds it ran) for the inputs in ``folder``."""
    start = time.perf_counter()
    proc = subprocess.run([binary, "--workload-configuration=workload", "--system-configuration=system.json",
                           "--remote-memory-configuration=memory.json", "--network-configuration=network.yml"],
                          cwd=folder, capture_output=True, text=True, timeout=600)
    took = time.perf_counter() - start
    done = [int(c) for _, c in FINISHED.findall(proc.stdout + proc.stderr)]
    if proc.returncode != 0 or not done:
        tail = (proc.stdout + proc.stderr).strip().splitlines()[-3:]
        raise RuntimeError(f"ASTRA-sim failed (exit {proc.returncode}) in {folder}: {' | '.join(tail)}")
    return max(done), took


def compare(binary: str, alpha_us: float, bandwidth_gbs: float) -> list[dict]:
    unaware = os.path.join(os.path.dirname(binary), "AstraSim_Analytical_Congestion_Unaware")
    rows = []
    for expr, algo in CASES:
        topo = load(expr)
        for size in SIZES:
            work = Workload(total_bytes=size, alpha_us=alpha_us, bandwidth_gbs=bandwidth_gbs)
            result = synthesize(topo, algo, Collective.ALLREDUCE, total_bytes=size)
            one = Model(result.topology, result.schedule, Execution.alpha_beta(alpha_us, bandwidth_gbs, slices=1))
            model_ns = one.run(size).time_us * 1e3
            best = work.price(result.topology, result.schedule).run
            with tempfile.TemporaryDirectory(prefix="astra-") as folder:
                traces = schedule_traces(result.topology, result.schedule, size)
                write_traces(folder, "coll", traces)
                report = check_traces(read_traces(folder, "coll"))
                inputs = astra_inputs(result.topology, folder, "coll", "allreduce", size, work.execution)
                backends = [("aware", binary)]
                if inputs["dims"][0]["topology"] == "Switch" and os.access(unaware, os.X_OK):
                    backends.append(("unaware", unaware))
                for label, exe in backends:
                    astra_ns, took = run_astra(exe, folder)
                    rows.append({"fabric": expr, "algo": algo, "bytes": size, "backend": label,
                                 "network": inputs["note"].split(":")[0], "sends": report["sends"],
                                 "astra_ns": astra_ns, "model_ns": model_ns, "ratio": astra_ns / model_ns,
                                 "model_best_ns": best.time_us * 1e3, "model_best_slices": best.slices,
                                 "astra_s": took})
    return rows


def iteration_check(binary: str, alpha_us: float, bandwidth_gbs: float) -> dict:
    """One iteration's trace (``iteration_traces``) as ASTRA-sim's workload: 10 us of compute, the ring(8) ring
    allreduce of 1 MiB expanded into its sends and receives, then 5 us of compute. The ops run in sequence, so
    ASTRA-sim's time should be 15 us plus the allreduce alone."""
    size = 2 ** 20
    topo = load("ring(8)")
    result = synthesize(topo, "ring", Collective.ALLREDUCE, total_bytes=size)
    ops = [{"kind": "compute", "ns": 10_000.0, "label": "forward", "deps": []},
           {"kind": "allreduce", "bytes": size, "label": "gradients", "deps": [0]},
           {"kind": "compute", "ns": 5_000.0, "label": "optimizer", "deps": [1]}]
    work = Workload(total_bytes=size, alpha_us=alpha_us, bandwidth_gbs=bandwidth_gbs)
    with tempfile.TemporaryDirectory(prefix="astra-") as folder:
        write_traces(folder, "coll", schedule_traces(result.topology, result.schedule, size))
        astra_inputs(result.topology, folder, "coll", "allreduce", size, work.execution)
        alone, _ = run_astra(binary, folder)
        write_traces(folder, "workload", iteration_traces(8, ops, {("allreduce", size): (topo, result.schedule)}))
        whole, _ = run_astra(binary, folder)
    return {"alone_ns": alone, "iteration_ns": whole, "expected_ns": alone + 15_000}


def main(argv=None) -> int:
    ap = argparse.ArgumentParser(description=__doc__.splitlines()[0])
    ap.add_argument("--alpha", type=float, default=0.5, help="alpha in microseconds (default 0.5)")
    ap.add_argument("--bandwidth", type=float, default=50.0, help="B in GB/s of 10^9 bytes per node (default 50)")
    args = ap.parse_args(argv)
    binary = os.environ.get("ASTRA_SIM_BIN", "")
    if not binary or not os.access(binary, os.X_OK):
        print(BUILD_HELP if not binary else f"ASTRA_SIM_BIN={binary} is not an executable file.\n{BUILD_HELP}")
        return 0
    rows = compare(binary, args.alpha, args.bandwidth)
    print(f"ASTRA-sim analytical vs the runtime model: ring allreduce, alpha {args.alpha:g} us, "
          f"B {args.bandwidth:g} GB/s per node (ASTRA-sim YAML: {args.bandwidth * 1e9 / 2 ** 30:.4f} GiB/s)")
    head = (f"{'fabric':<18} {'network':<10} {'backend':<8} {'bytes':>9} {'sends':>6} {'ASTRA-sim ns':>13} "
            f"{'model ns (P=1)':>15} {'ratio':>7} {'model best ns (P)':>20} {'sim s':>6}")
    print(head)
    print("-" * len(head))
    for r in rows:
        print(f"{r['fabric']:<18} {r['network']:<10} {r['backend']:<8} {r['bytes']:>9} {r['sends']:>6} "
              f"{r['astra_ns']:>13,} {r['model_ns']:>15,.0f} {r['ratio']:>7.4f} "
              f"{r['model_best_ns']:>14,.0f} ({r['model_best_slices']}) {r['astra_s']:>6.2f}")
    ring = [r for r in rows if r["network"].startswith("Ring")]
    worst = max(abs(r["ratio"] - 1) for r in ring)
    print(f"rings: largest |ratio - 1| = {worst:.2e} ({'within' if worst <= 0.02 else 'OUTSIDE'} 2 %)")
    it = iteration_check(binary, args.alpha, args.bandwidth)
    print(f"iteration trace (10 us compute, ring(8) allreduce 1 MiB as sends/receives, 5 us compute) as the "
          f"workload: {it['iteration_ns']:,} ns; the allreduce alone {it['alone_ns']:,} ns + 15,000 = "
          f"{it['expected_ns']:,} ns")
    return 0 if worst <= 0.02 and it["iteration_ns"] == it["expected_ns"] else 1


if __name__ == "__main__":
    sys.exit(main())
