"""Rooted collectives and tenants (issue 55): the whole commands a user runs, timed, beside the paper's tables.

    python -m bench.rooted            # the CLI commands, three runs each, and TACOS Tables IV and V on the 6x6 mesh

Part 1 times whole CLI commands in a fresh Python process each (interpreter start, imports, synthesis,
verification, runtime model, printing), with the results cache off (``--no-cache``): the command's wall time,
best and median of three, beside the target the issue names.

Part 2 reproduces TACOS Table IV (broadcast/reduce, gather/scatter, one chunk, a corner root: the paper does not
name one) and Table V (broadcast from 2, reduce to 17, allgather together): each schedule verified, timed by the
runtime model without pipelining (P = 1, TACOS's one chunk per link at a time) on the mesh's own links, normalized
to the TACOS-ILP in the same run, and set beside the paper's ratio.
"""
import json
import os
import statistics
import subprocess
import sys
import tempfile
import time

COMMANDS = [
    ("schedule mesh(6,6) --algo tacos --collective broadcast --root 14", 2.0),
    ("schedule mesh(6,6) --algo tacos_ilp --collective gather --root 0", None),
    ("schedule mesh(6,6) --algo tacos_ilp --tenants TABLE_V", 30.0),
    ("schedule mesh(6,6) --algo tacos --tenants TABLE_V", None),
    ("schedule ndv2(chassis=2) --algo teccl --tenants NDV2", None),
    ("compare mesh(6,6) --tenants TABLE_V", None),
]
TABLE_V = [{"name": "bcast", "collective": "broadcast", "root": 2, "bytes": 1 << 20},
           {"name": "reduce", "collective": "reduce", "root": 17, "bytes": 1 << 20},
           {"name": "ag", "collective": "allgather", "bytes": 36 << 20}]
NDV2 = [{"name": "weights", "collective": "broadcast", "root": 0, "bytes": 1 << 22},
        {"name": "results", "collective": "gather", "root": 9, "bytes": 1 << 22},
        {"name": "shards", "collective": "allgather", "bytes": 1 << 22}]
PAPER_IV = {("broadcast", "taccl_like"): 1.00, ("broadcast", "direct"): 3.90, ("gather", "taccl_like"): 1.11,
            ("gather", "direct"): 1.67}
PAPER_V = {"tacos": 1.25, "taccl_like": 1.50, "direct": 3.63}


def _commands(folder: str) -> None:
    files = {"TABLE_V": os.path.join(folder, "table_v.json"), "NDV2": os.path.join(folder, "ndv2.json")}
    for name, data in (("TABLE_V", TABLE_V), ("NDV2", NDV2)):
        with open(files[name], "w", encoding="utf-8") as fh:
            json.dump(data, fh)
    print(f"{'command':<66} {'best s':>7} {'median s':>8} {'target s':>8}")
    env = {**os.environ, "PYTHONPATH": os.getcwd()}
    for text, target in COMMANDS:
        argv = [files.get(w, w) for w in text.split()]
        times = []
        for _ in range(3):
            t0 = time.perf_counter()
            done = subprocess.run([sys.executable, "-m", "studio", *argv, "--no-cache"], capture_output=True,
                                  env=env, check=False)
            times.append(time.perf_counter() - t0)
            if done.returncode != 0:
                print(f"{text}: failed: {done.stderr.decode()[:200]}")
                break
        print(f"{text:<66} {min(times):>7.2f} {statistics.median(times):>8.2f} "
              f"{(f'{target:g}' if target else '-'):>8}", flush=True)


def _tables() -> None:
    from solvers import synthesize
    from solvers.runtime import Execution, simulate
    from solvers.tenants import read_tenants, synthesize_tenants
    from topologies import load

    topo = load("mesh(6,6)")
    once = Execution(slices=1)
    print("\nTACOS Table IV on mesh(6,6), root 0, one chunk of 1 MiB: time / TACOS-ILP's (runtime model, P = 1)")
    print(f"{'collective':<11} {'algo':<11} {'ratio':>6} {'paper':>6} {'synth s':>8}")
    for coll in ("broadcast", "reduce", "gather", "scatter"):
        base = None
        for algo in ("tacos_ilp", "taccl_like", "direct"):
            t0 = time.perf_counter()
            if (algo, coll) == ("direct", "reduce"):
                r = synthesize(topo.transpose(), "direct", "broadcast", root=0, total_bytes=1 << 20)
            else:
                r = synthesize(topo, algo, coll, root=0, total_bytes=1 << 20)
            seconds = time.perf_counter() - t0
            t = simulate(r.topology, r.schedule, 1 << 20, once).time_us
            base = base or t
            key = ({"reduce": "broadcast", "scatter": "gather"}.get(coll, coll), algo)
            paper = PAPER_IV.get(key, 1.0 if algo == "tacos_ilp" else None)
            print(f"{coll:<11} {algo:<11} {t / base:>6.2f} {(f'{paper:.2f}' if paper else '-'):>6} {seconds:>8.2f}")
    print("\nTACOS Table V on mesh(6,6): makespan / TACOS-ILP's (runtime model, the fabric's own links)")
    print(f"{'algo':<11} {'mode':<9} {'ratio':>6} {'paper':>6} {'synth s':>8}")
    tenants = read_tenants(json.dumps(TABLE_V))
    base = None
    for algo, mode in (("tacos_ilp", "joint"), ("tacos", "joint"), ("taccl_like", "joint"), ("direct", "separate")):
        r = synthesize_tenants(topo, tenants, algo, mode)
        base = base or r.makespan_us
        paper = PAPER_V.get(algo, 1.0)
        print(f"{algo:<11} {mode:<9} {r.makespan_us / base:>6.2f} {paper:>6.2f} {r.synthesis_s:>8.2f}")


def main() -> int:
    with tempfile.TemporaryDirectory() as folder:
        _commands(folder)
    _tables()
    return 0


if __name__ == "__main__":
    raise SystemExit(main())
