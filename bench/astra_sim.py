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

Two checks follow: a small iteration written with ``iteration_traces`` (its collective as sends and receives in
the workload) takes its compute plus the allreduce alone; and BFB on biring(8), which sends to both neighbours at
once, takes twice its time as sends in the workload (``serial_sends_check``: ASTRA-sim's workload layer holds a
rank to one communication node in flight), which is why ``--iteration`` writes collectives as custom ones.

``--iteration``: one training iteration instead (``ITERATIONS``: gpt2-small dp on biring(8), switch-base-128 ep
on complete(8) and on torus(4,4); the training's prices, alpha 10 us and B 12.5 GB/s per node).
``solvers.training.simulate_iteration`` gives ours (App. A.4's two streams; every collective by the step model,
all-to-alls by the MCF rate); ``chakra_astra.write_iteration`` writes its ``trace_ops`` as ASTRA-sim's workload,
every collective one node run as the studio's verified schedule (per-node custom collectives), and ASTRA-sim runs
it (congestion-aware on one dimension, unaware on a torus). Beside them, ours again with every collective priced
as what the traces send: the same schedules under the runtime model with one slice (all-to-all: the
shortest-path schedule ``direct_alltoall`` at N x the bytes, not the MCF rate). The check is ASTRA-sim against that
second figure, within 1 %.

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
STATS = re.compile(r"sys\[(\d+)\],? (Wall time|Comm time|GPU time): (\d+)")
ITERATIONS = [("gpt2-small", "biring(8)", "dp"), ("switch-base-128", "complete(8)", "ep"),
              ("switch-base-128", "torus(4,4)", "ep")]
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


class _AsExported:
    """A ``DesignPrices`` whose collectives cost what the exported traces send: an allreduce the step model's
    cheapest schedule (the same choice) under the runtime model with one slice, an all-to-all the verified
    shortest-path schedule at N x the bytes (each rank sends the bytes in all) under the same model."""

    def __init__(self, prices, topo, alpha_us: float):
        from solvers.directconnect.direct_alltoall import direct_alltoall
        self._p, self._topo, self._alpha = prices, topo, alpha_us
        self._models: dict = {}
        self._a2a = direct_alltoall(topo) if prices.mcf is not None else None

    def __getattr__(self, name):
        return getattr(self._p, name)

    def _model(self, key, schedule, bandwidth_gbs):
        if key not in self._models:
            self._models[key] = Model(self._topo, schedule, Execution.alpha_beta(self._alpha, bandwidth_gbs, slices=1))
        return self._models[key]

    def allreduce_us(self, total_bytes, alpha_us, bandwidth_gbs):
        _, algo = self._p.allreduce_us(total_bytes, alpha_us, bandwidth_gbs)
        schedule = synthesize(self._topo, algo, Collective.ALLREDUCE).schedule
        return self._model(algo, schedule, bandwidth_gbs).run(total_bytes).time_us, algo

    def alltoall_us(self, total_bytes, bandwidth_gbs):
        return self._model("alltoall", self._a2a, bandwidth_gbs).run(total_bytes * self._topo.n).time_us


def iteration_rows(aware: str, cases=ITERATIONS) -> list[dict]:
    """One row per (model, design, parallelism): ours, ours as exported, ASTRA-sim's (module docstring)."""
    from solvers.export.chakra_astra import iteration_schedules, write_iteration
    from solvers.training.pricing import design_prices
    from solvers.training.simulate import simulate_iteration
    from topologies import parse_topology

    unaware = os.path.join(os.path.dirname(aware), "AstraSim_Analytical_Congestion_Unaware")
    work = Workload(1.0, "uniform", 10.0, 12.5)
    rows = []
    for model, expr, parallel in cases:
        topo = parse_topology(expr)
        prices = design_prices(topo, alltoall=parallel == "ep")
        ours = simulate_iteration(model, topo, parallel, workload=work, prices=prices)
        exported = simulate_iteration(model, topo, parallel, workload=work,
                                      prices=_AsExported(prices, topo, work.alpha_us), bucket=ours.bucket_bytes)
        with tempfile.TemporaryDirectory(prefix="astra-it-") as folder:
            out = write_iteration(topo, folder, ours.trace_ops(), iteration_schedules(topo, ours.collectives),
                                  work.execution)
            exe = aware if len(out["dims"]) == 1 else unaware
            astra_ns, took, stats = run_astra_stats(exe, folder)
        rows.append({"model": model, "design": expr, "parallel": parallel, "network": out["note"],
                     "backend": "aware" if exe == aware else "unaware", "ours": ours, "exported": exported,
                     "astra_ms": astra_ns / 1e6, "astra_gpu_ms": stats.get("GPU time", 0) / 1e6,
                     "astra_comm_ms": stats.get("Comm time", 0) / 1e6, "collectives": len(out["per_node"]),
                     "astra_s": took})
    return rows


def run_astra_stats(binary: str, folder: str) -> tuple[int, float, dict]:
    """``run_astra`` plus rank 0's Wall, Comm and GPU time (ns)."""
    start = time.perf_counter()
    proc = subprocess.run([binary, "--workload-configuration=workload", "--system-configuration=system.json",
                           "--remote-memory-configuration=memory.json", "--network-configuration=network.yml"],
                          cwd=folder, capture_output=True, text=True, timeout=600)
    took = time.perf_counter() - start
    text = proc.stdout + proc.stderr
    done = [int(c) for _, c in FINISHED.findall(text)]
    if proc.returncode != 0 or not done:
        tail = text.strip().splitlines()[-3:]
        raise RuntimeError(f"ASTRA-sim failed (exit {proc.returncode}) in {folder}: {' | '.join(tail)}")
    return max(done), took, {k: int(v) for r, k, v in STATS.findall(text) if r == "0"}


def print_iterations(rows: list[dict]) -> float:
    """The ``--iteration`` table; returns the largest |ASTRA-sim / ours as exported - 1|."""
    print("One training iteration: ours (App. A.4 two streams) beside ASTRA-sim running its Chakra workload "
          "(alpha 10 us, B 12.5 GB/s per node; ms)")
    head = (f"{'model':<16} {'design':<12} {'par':<3} {'network':<22} {'ours':>9} {'compute':>8} {'ar exp':>7} "
            f"{'a2a':>8} {'as exported':>11} {'ASTRA-sim':>10} {'GPU':>8} {'Comm':>8} {'/ours':>6} {'/exported':>9}")
    print(head)
    print("-" * len(head))
    worst = 0.0
    for r in rows:
        o, e = r["ours"], r["exported"]
        ratio, vs = r["astra_ms"] / o.iteration_ms, r["astra_ms"] / e.iteration_ms
        worst = max(worst, abs(vs - 1))
        print(f"{r['model']:<16} {r['design']:<12} {r['parallel']:<3} {r['network'] + ' ' + r['backend'][:2]:<22} "
              f"{o.iteration_ms:>9.3f} {o.compute_ms:>8.3f} {o.allreduce_exposed_ms:>7.3f} {o.alltoall_ms:>8.3f} "
              f"{e.iteration_ms:>11.3f} {r['astra_ms']:>10.3f} {r['astra_gpu_ms']:>8.3f} {r['astra_comm_ms']:>8.3f} "
              f"{ratio:>6.3f} {vs:>9.5f}")
    print("ours: compute + exposed allreduce (ar exp) + all-to-all (a2a, MCF rate) = iteration; as exported: every "
          "collective at the runtime model's one-slice price of the schedule the traces send; ASTRA-sim: Wall "
          "time, its GPU (compute) and Comm (collectives' busy) time")
    print(f"largest |ASTRA-sim / as exported - 1| = {worst:.2e} ({'within' if worst <= 0.01 else 'OUTSIDE'} 1 %)")
    return worst


def serial_sends_check(binary: str) -> dict:
    """Why an iteration's collectives are per-node custom collectives, not sends in the workload: ASTRA-sim's
    workload layer (``HardwareResource``) lets a rank have one GPU communication node in flight, so BFB on
    biring(8), which sends to both neighbours at once, takes twice as long as sends in the workload as it does as a
    custom collective (the runtime model's time). 13.5 MiB, alpha 10 us, B 12.5 GB/s per node."""
    size = int(13.5 * 2 ** 20)
    topo = load("biring(8)")
    result = synthesize(topo, "bfb", Collective.ALLREDUCE, total_bytes=size)
    work = Workload(total_bytes=size, alpha_us=10.0, bandwidth_gbs=12.5)
    model_ns = Model(result.topology, result.schedule, Execution.alpha_beta(10.0, 12.5, slices=1)).run(size).time_us
    ops = [{"kind": "allreduce", "bytes": size, "label": "gradients", "deps": []}]
    with tempfile.TemporaryDirectory(prefix="astra-") as folder:
        write_traces(folder, "coll", schedule_traces(result.topology, result.schedule, size))
        astra_inputs(result.topology, folder, "coll", "allreduce", size, work.execution)
        custom, _ = run_astra(binary, folder)
        write_traces(folder, "workload", iteration_traces(8, ops, {("allreduce", size): (topo, result.schedule)}))
        sends, _ = run_astra(binary, folder)
    return {"model_ns": model_ns * 1e3, "custom_ns": custom, "workload_sends_ns": sends}


def main(argv=None) -> int:
    ap = argparse.ArgumentParser(description=__doc__.splitlines()[0])
    ap.add_argument("--alpha", type=float, default=0.5, help="alpha in microseconds (default 0.5)")
    ap.add_argument("--bandwidth", type=float, default=50.0, help="B in GB/s of 10^9 bytes per node (default 50)")
    ap.add_argument("--iteration", action="store_true",
                    help="one training iteration per case of ITERATIONS instead of single collectives")
    args = ap.parse_args(argv)
    binary = os.environ.get("ASTRA_SIM_BIN", "")
    if not binary or not os.access(binary, os.X_OK):
        print(BUILD_HELP if not binary else f"ASTRA_SIM_BIN={binary} is not an executable file.\n{BUILD_HELP}")
        return 0
    if args.iteration:
        return 0 if print_iterations(iteration_rows(binary)) <= 0.01 else 1
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
    ser = serial_sends_check(binary)
    print(f"BFB allreduce on biring(8), 13.5 MiB: runtime model {ser['model_ns']:,.0f} ns; ASTRA-sim as a custom "
          f"collective {ser['custom_ns']:,} ns; the same sends as workload nodes {ser['workload_sends_ns']:,} ns "
          f"(x{ser['workload_sends_ns'] / ser['custom_ns']:.3f}: one send in flight per rank)")
    return 0 if worst <= 0.02 and it["iteration_ns"] == it["expected_ns"] else 1


if __name__ == "__main__":
    sys.exit(main())
