"""What a failure study costs a user (issue 42), timed as whole commands: ``python -m studio failures ...`` in a new
process each (interpreter start, the embedded Dask cluster, the analysis, the output), with a fresh results cache
for the first run of each and the same cache for its repeat.

    python -m bench.failures              # the issue's commands
    python -m bench.failures --quick      # the small ones only

Beside each: the failure sets, the rows read back from the cache, and the seconds of the first and the repeated
run; ``topo torus(4,4)`` is the reference in the same run (the cost of starting the CLI at all).
"""
from __future__ import annotations

import argparse
import json
import os
import subprocess
import sys
import tempfile
import time
from pathlib import Path

ROOT = Path(__file__).resolve().parents[1]
COMMANDS = [
    ("torus(4,4): every cable, forestcoll + ring allgather",
     ["torus(4,4)", "--algo", "forestcoll", "--algo", "ring", "--collective", "allgather", "--links", "1"], True),
    ("dgx_a100(boxes=4): every switch, forestcoll allgather",
     ["dgx_a100(boxes=4)", "--algo", "forestcoll", "--collective", "allgather", "--switches", "1"], True),
    ("dgx_a100(boxes=4): every GPU, forestcoll allgather",
     ["dgx_a100(boxes=4)", "--algo", "forestcoll", "--collective", "allgather", "--nodes", "1"], True),
    ("gkautz(4,64): 3 cables x 200 samples, bfb + forestcoll allreduce",
     ["gkautz(4,64)", "--algo", "bfb", "--algo", "forestcoll", "--collective", "allreduce", "--links", "3",
      "--samples", "200", "--seed", "1"], False),
]


def _run(argv: list[str], env: dict) -> tuple[float, dict | None]:
    start = time.perf_counter()
    proc = subprocess.run([sys.executable, "-m", "studio", *argv], cwd=ROOT, env=env, capture_output=True, text=True)
    seconds = time.perf_counter() - start
    try:
        return seconds, json.loads(proc.stdout) if proc.returncode == 0 else None
    except ValueError:
        return seconds, None


def main(argv=None) -> int:
    parser = argparse.ArgumentParser(description=__doc__.splitlines()[0])
    parser.add_argument("--quick", action="store_true", help="the small commands only")
    args = parser.parse_args(argv)
    with tempfile.TemporaryDirectory() as cache:
        env = {**os.environ, "TOPOLOGY_STUDIO_CACHE": cache}
        reference, _ = _run(["topo", "torus(4,4)", "--json"], env)
        print(f"{'command (python -m studio failures ...)':<62} {'sets':>5} {'first s':>8} {'repeat s':>9} "
              f"{'cached rows':>12}")
        print(f"{'reference: topo torus(4,4)':<62} {'-':>5} {reference:>8.2f} {'-':>9} {'-':>12}")
        for label, cmd, small in COMMANDS:
            if args.quick and not small:
                continue
            first, doc = _run(["failures", *cmd, "--json"], env)
            again, doc2 = _run(["failures", *cmd, "--json"], env)
            if doc is None or doc2 is None:
                print(f"{label:<62} failed")
                continue
            rows = doc2["summary"].get("rows_from_cache", 0)
            print(f"{label:<62} {doc['summary']['sets']:>5} {first:>8.1f} {again:>9.1f} "
                  f"{rows:>6}/{doc['summary']['sets'] + 1:<5}")
    print(f"load average {os.getloadavg()[0]:.2f}; every command a new process with an embedded Dask cluster")
    return 0


if __name__ == "__main__":
    raise SystemExit(main())
