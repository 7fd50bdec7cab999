"""The results cache (issue 24): the first solve against the second request, answered from the cache.

    python -m bench.cache            # a few solves, each in a fresh cache folder

For each solve: the first CLI run (``python -m studio schedule ... --json``, solving and storing), the second CLI
run (answered from the cache: the whole command, Python start-up and imports included), the cache lookup alone
in this process (read, HMAC check, decoding the data-only entry, verifying the schedule and costing it again),
the stored file's size, and first / second as the ratio.
"""
from __future__ import annotations

import argparse
import os
import subprocess
import sys
import tempfile
import time
from pathlib import Path

ROOT = Path(__file__).resolve().parents[1]
CASES = [
    ("gkautz(4,256)", "bfb", "allreduce", []),
    ("dgx_a100(boxes=4)", "forestcoll", "allreduce", []),
    ("torus(8,8)", "tacos", "allgather", ["--bytes", "1e6"]),
    ("dgx1()", "teccl", "allgather", ["--bytes", "1e6"]),
    ("hypercube(8)", "ring", "allreduce", []),
]
QUICK = CASES[:2]


def _cli(args: list[str], env: dict) -> tuple[float, str]:
    start = time.perf_counter()
    done = subprocess.run([sys.executable, "-m", "studio", "schedule", *args, "--json"], cwd=ROOT, env=env,
                          capture_output=True, text=True)
    if done.returncode != 0:
        raise RuntimeError(done.stderr.strip().splitlines()[-1] if done.stderr.strip() else "failed")
    return time.perf_counter() - start, done.stderr


def main() -> None:
    ap = argparse.ArgumentParser(description=__doc__.splitlines()[0])
    ap.add_argument("--quick", action="store_true", help="the first two solves only")
    args = ap.parse_args()
    from solvers.results_cache import ResultsCache

    print(f"{'solve':<44} {'first_s':>8} {'second_s':>9} {'lookup_s':>9} {'file_MiB':>9} {'ratio':>7} {'hit':>4}")
    for expr, algo, coll, extra in QUICK if args.quick else CASES:
        with tempfile.TemporaryDirectory() as folder:
            env = {**os.environ, "TOPOLOGY_STUDIO_CACHE": folder}
            request = [expr, "--algo", algo, "--collective", coll, *extra]
            first, _ = _cli(request, env)
            second, err = _cli(request, env)
            store = ResultsCache(folder)
            (path,) = store.entries()
            start = time.perf_counter()
            hit = store.get(path.stem)
            lookup = time.perf_counter() - start
            label = f"{algo} {coll} {expr}"
            print(f"{label:<44} {first:>8.2f} {second:>9.2f} {lookup:>9.3f} {path.stat().st_size / 2 ** 20:>9.2f} "
                  f"{first / second:>7.1f} {'yes' if hit and 'results cache' in err else 'no':>4}")
    print("second_s: the whole second CLI command (start-up and imports included); lookup_s: the cache read alone")


if __name__ == "__main__":
    main()
