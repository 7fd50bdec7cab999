"""ForestColl where its packing used to stall (issue 60): the two whole commands, each in a fresh process with
--no-cache, timed beside their targets.

    python -m bench.forestcoll_scale                   # flows on igraph where installed
    python -m bench.forestcoll_scale --backend scipy   # the same with SciPy's max-flow (STUDIO_MAXFLOW=scipy)
    python -m bench.forestcoll_scale --limit 900       # kill a command after 900 s (default 600)

"wall s" is the whole command (interpreter start, search, switch removal, packing, map back and the verifier
the command runs on the allgather); "target s" is issue 60's limit. k, U, 1/x* and the packing come from the
command's --json reply, "verified" is its verifier's word. Before issue 60 (SciPy flows, no translation):
gkautz(4,512) 164 s on a busy machine, 94 s on a quiet one (23 greedy runs, 96,929 max-flows, the same 600
batches as now), circulant(1024,[1,2,4,8]) killed after 780 s (circulant(256,[1,2,4,8]): 149 s, 76,688 flows).
"""
import argparse
import json
import os
import subprocess
import sys
import time

CASES = [("gkautz(4,512)", 30.0), ("circulant(1024,[1,2,4,8])", 120.0)]


def run(expr: str, limit: float, env: dict) -> tuple[float, dict | None, str]:
    cmd = [sys.executable, "-m", "studio", "forestcoll", expr, "--no-cache", "--json"]
    t0 = time.perf_counter()
    try:
        done = subprocess.run(cmd, capture_output=True, text=True, timeout=limit, env=env)
    except subprocess.TimeoutExpired:
        return time.perf_counter() - t0, None, f"killed after {limit:.0f} s"
    wall = time.perf_counter() - t0
    if done.returncode != 0:
        return wall, None, (done.stderr.strip().splitlines() or ["failed"])[-1][:60]
    return wall, json.loads(done.stdout), ""


def main() -> None:
    ap = argparse.ArgumentParser(description=__doc__.splitlines()[0])
    ap.add_argument("--backend", choices=("default", "scipy"), default="default")
    ap.add_argument("--limit", type=float, default=600.0)
    args = ap.parse_args()
    env = dict(os.environ)
    if args.backend == "scipy":
        env["STUDIO_MAXFLOW"] = "scipy"
    print(f"{'command':<40} {'wall s':>7} {'target s':>8} {'ratio':>6} {'k':>3} {'U':>6} {'1/x*':>9} "
          f"{'packing':>13} {'verified':>8}")
    for expr, target in CASES:
        wall, out, why = run(expr, args.limit, env)
        name = f'forestcoll "{expr}"'
        if out is None:
            print(f"{name:<40} {wall:>7.1f} {target:>8.0f} {wall / target:>6.2f}  {why}", flush=True)
            continue
        print(f"{name:<40} {wall:>7.1f} {target:>8.0f} {wall / target:>6.2f} {out['k']:>3} {out['U']:>6} "
              f"{out['inv_x_star']:>9} {out['packing']:>13} {str(out['verified']):>8}", flush=True)


if __name__ == "__main__":
    main()
