"""Scale as the user runs it (issue 43): whole commands, each ``python -m studio ...`` in a new process with a
fresh results cache, timed from start to exit (interpreter, imports, synthesis, verification, pricing, output),
with the peak resident memory of the process and every process it starts (sampled by psutil), then the same
command again (answered from the results cache).

    python -m bench.scale                      # the ForestColl cases
    python -m bench.scale --only bfb           # cases whose label contains "bfb"
    python -m bench.scale --all                # every case, TE-CCL and BFB at 16384 nodes included (about 30 min)
    python -m bench.scale --breakdown "dgx_a100(boxes=128)"     # where forestcoll's time goes, stage by stage

Beside them, ``topo "ring(8)"``: the cost of starting the CLI at all, measured in the same run.
"""
from __future__ import annotations

import argparse
import os
import subprocess
import sys
import tempfile
import threading
import time
from pathlib import Path

import psutil

ROOT = Path(__file__).resolve().parents[1]

# (label, arguments, target seconds or None, target GB or None, in the default set)
CASES = [
    ("reference: topo ring(8)", ["topo", "ring(8)", "--json"], None, None, True),
    ("forestcoll dgx_a100(boxes=128)", ["forestcoll", "dgx_a100(boxes=128)", "--max-nodes", "5000", "--json"],
     20, 1.5, True),
    ("schedule forestcoll allgather dgx_a100(boxes=128)",
     ["schedule", "dgx_a100(boxes=128)", "--algo", "forestcoll", "--collective", "allgather", "--max-nodes", "5000",
      "--json"], 30, 1.5, True),
    ("forestcoll gkautz(4,1024)", ["forestcoll", "gkautz(4,1024)", "--json"], 60, None, True),
    ("schedule forestcoll allgather gkautz(4,1024)",
     ["schedule", "gkautz(4,1024)", "--algo", "forestcoll", "--collective", "allgather", "--json"], 60, None, True),
    ("forestcoll circulant(1024,[1,2,4,8])", ["forestcoll", "circulant(1024,[1,2,4,8])", "--json"], 60, None, True),
    ("forestcoll line(gkautz(4,256))", ["forestcoll", "line(gkautz(4,256))", "--json"], 60, None, True),
    ("schedule teccl allgather ndv2(chassis=8) 1 GB",
     ["schedule", "ndv2(chassis=8)", "--algo", "teccl", "--collective", "allgather", "--bytes", "1e9", "--json"],
     600, None, False),
    ("schedule teccl alltoall ndv2(chassis=4) 1 GB",
     ["schedule", "ndv2(chassis=4)", "--algo", "teccl", "--collective", "alltoall", "--bytes", "1e9", "--json"],
     600, None, False),
    ("schedule bfb allreduce gkautz(4,16384)",
     ["schedule", "gkautz(4,16384)", "--algo", "bfb", "--collective", "allreduce", "--max-nodes", "20000", "--json"],
     None, 8, False),
]


class Tree:
    """The peak RSS sum of a process and its descendants, sampled every ``interval`` seconds, and the peak PSS
    sum every ``pss_every`` samples (proportional set size: a page that a forked worker shares with its parent
    counted once, what the machine holds; RSS counts it in both)."""

    def __init__(self, pid: int, interval: float = 0.05, pss_every: int = 10):
        self.proc, self.interval, self.peak, self.pss = psutil.Process(pid), interval, 0, 0
        self.pss_every, self.samples = pss_every, 0
        self._stop = threading.Event()
        self._thread = threading.Thread(target=self._run, daemon=True)
        self._thread.start()

    def _run(self) -> None:
        while not self._stop.is_set():
            total = shared = 0
            self.samples += 1
            with_pss = self.samples % self.pss_every == 1
            try:
                for p in [self.proc] + self.proc.children(recursive=True):
                    try:
                        total += p.memory_info().rss
                        if with_pss:
                            shared += p.memory_full_info().pss
                    except psutil.Error:
                        pass
            except psutil.Error:
                break
            self.peak = max(self.peak, total)
            self.pss = max(self.pss, shared)
            self._stop.wait(self.interval)

    def stop(self) -> tuple[float, float]:
        self._stop.set()
        self._thread.join()
        return self.peak / 2 ** 30, self.pss / 2 ** 30


def run(argv: list[str], env: dict, timeout: float) -> tuple[float, tuple[float, float], int, str]:
    """(wall seconds, (peak RSS GiB, peak PSS GiB), exit code, last line of stderr) of one whole command."""
    start = time.perf_counter()
    proc = subprocess.Popen([sys.executable, "-m", "studio", *argv], cwd=ROOT, env=env, stdout=subprocess.DEVNULL,
                            stderr=subprocess.PIPE, text=True)
    tree = Tree(proc.pid)
    try:
        _, err = proc.communicate(timeout=timeout)
    except subprocess.TimeoutExpired:
        proc.kill()
        _, err = proc.communicate()
    wall = time.perf_counter() - start
    lines = [line for line in (err or "").splitlines() if line.strip()]
    return wall, tree.stop(), proc.returncode, lines[-1] if lines else ""


def breakdown(expr: str, max_nodes: int = 5000) -> list[tuple[str, float]]:
    """The stages of ``forestcoll EXPR --json`` in this process: (stage, seconds)."""
    import json

    stages = []
    clock = time.perf_counter()

    def lap(name: str) -> None:
        nonlocal clock
        now = time.perf_counter()
        stages.append((name, now - clock))
        clock = now

    from solvers.core.verify import verify
    from solvers.forestcoll import forestcoll
    from topologies import load

    lap("imports")
    topo = load(expr, max_nodes=max_nodes)
    lap("load")
    forest = forestcoll(topo)
    stages.extend((f"  {name}", seconds) for name, seconds in forest.seconds.items())
    lap("forestcoll (the four stages above)")
    schedule = forest.allgather()
    lap(f"lower to the IR ({schedule.count} transfers)")
    verify(topo, schedule).raise_if_failed()
    lap("verify")
    json.dumps(forest.as_dict())
    lap("as_dict and JSON")
    return stages


def main(argv=None) -> int:
    parser = argparse.ArgumentParser(description=__doc__.splitlines()[0])
    parser.add_argument("--breakdown", default=None, metavar="EXPR",
                        help="only the stages of forestcoll EXPR in this process (e.g. dgx_a100(boxes=128))")
    parser.add_argument("--only", default=None, help="cases whose label contains this text")
    parser.add_argument("--all", action="store_true", help="every case, the long ones included")
    parser.add_argument("--timeout", type=float, default=1200.0, help="seconds per command (default 1200)")
    args = parser.parse_args(argv)
    if args.breakdown:
        stages = breakdown(args.breakdown)
        print(f"| stage of forestcoll {args.breakdown} | s |\n|:---|---:|")
        for name, seconds in stages:
            print(f"| {name} | {seconds:.2f} |")
        print(f"| total | {sum(s for n, s in stages if not n.startswith('  ')):.2f} |")
        return 0
    chosen = [c for c in CASES if c[0].startswith("reference") or (
        (args.only in c[0]) if args.only else (args.all or c[4]))]
    rows = []
    with tempfile.TemporaryDirectory() as folder:
        for label, command, target_s, target_gb, _ in chosen:
            env = {**os.environ, "TOPOLOGY_STUDIO_CACHE": os.path.join(folder, label.replace(" ", "_")[:60])}
            wall, gb, code, last = run(command, env, args.timeout)
            again, _, code2, _ = run(command, env, args.timeout) if code == 0 else (None, None, None, None)
            rows.append((label, wall, target_s, gb, target_gb, again, code, last if code else ""))
            print(f"  {label}: {wall:.2f} s, {gb[0]:.2f} GB RSS, {gb[1]:.2f} GB PSS, again "
                  f"{again if again is None else round(again, 2)} s", file=sys.stderr, flush=True)
    reference = rows[0][1]
    print("| command | wall s | target s | ratio | peak RSS GB | peak PSS GB | target GB | second run s | "
          "vs topo ring(8) | exit |")
    print("|:---|---:|---:|---:|---:|---:|---:|---:|---:|:---|")
    for label, wall, target_s, (gb, pss), target_gb, again, code, last in rows:
        ratio = f"{wall / target_s:.2f}" if target_s else "-"
        print(f"| {label} | {wall:.2f} | {target_s or '-'} | {ratio} | {gb:.2f} | {pss:.2f} | {target_gb or '-'} | "
              f"{'-' if again is None else f'{again:.2f}'} | {wall / reference:.1f}x | "
              f"{code}{(': ' + last[:60]) if last else ''} |")
    return 0


if __name__ == "__main__":
    sys.exit(main())
