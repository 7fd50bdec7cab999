"""BFB allgather generation time against the direct-connect paper's Table 6, in one run.

    python -m bench.bfb            # the acceptance cases
    python -m bench.bfb --small    # also the small Table 6 rows
    python -m bench.bfb --lp       # also the Pyomo reference (one LP per (u, t)) on the small cases
    python -m bench.bfb --large    # issue 24's scale cases instead, each once in a fresh process, with peak memory
    python -m bench.bfb --allreduce gkautz(4,8192) [--price GB]   # issue 43: the allreduce's stages, peak each

"bfb s" is the exact fast path (topology distances, every (u, t) problem, the schedule as columns); "verify s"
and "cost s" are the simulator and the exact cost on that schedule, reported apart. "paper s" is Table 6's BFB
time; "ratio" is paper s / bfb s. Timings are the best of ``--repeat`` runs (default 3) on this machine.

``--large`` runs gkautz(4,16384) (issue 24: at most 60 s and 8 GB) and torus(100,100), each once in a fresh
process: "peak GB" is the largest sampled RSS of that process and its forked workers together
(``bench.peak_memory``), during synthesis and then over synthesis, verification and cost; "kernel GB" is the
kernel's peak of the process plus its worker's (``ru_maxrss``), an upper bound that a sample cannot miss.
``--allreduce EXPR`` runs what ``python -m studio schedule EXPR --algo bfb --collective allreduce`` runs, once in a
fresh process, stage by stage: the two allgathers (on G^T, reversed, and on G), their join, verification, cost, the
JSON of the result (without the runtime model) and the results cache's size check; per stage its seconds, the
largest sampled RSS of the process and its forked worker together ("rss GB": pages they share counted in each) and
the largest sampled proportional set size ("pss GB": a shared page split between its sharers, so counted once).
``--price GB`` adds the runtime model's figures (``Workload.price``, which the command prints) with the process's
address space capped at GB gigabytes: past it the stage reports the MemoryError instead of taking the machine.
torus(100,100)'s exact chunk bounds need a common denominator near 3e21, beyond int64: its columns keep positions
in a table of the 119 exact values (``Columns.bounds``), which the verifier reads as ranks and the cost sums.
"""
import argparse
import time
from queue import Empty

from solvers.directconnect.bfb import bfb_allgather
from solvers.core.cost import cost
from solvers.core.schedule import Collective
from solvers.core.verify import verify
from topologies import parse_topology

# expression, Table 6 BFB seconds (None: not in the paper's table)
CASES = [("hypercube(10)", 52.7), ("torus(50,50)", 61.1), ("gkautz(4,4096)", None)]
LARGE = [("gkautz(4,16384)", 60.0, 8.0), ("torus(100,100)", None, None)]   # expression, target s, target GB
SMALL = [("hypercube(5)", 0.03), ("hypercube(6)", 0.17), ("torus(5,5)", 0.01), ("torus(6,6)", 0.03),
         ("circulant(16,[3,4])", None), ("line(circulant(16,[3,4]),3)", None)]


def best_of(repeat, fn):
    best, value = float("inf"), None
    for _ in range(repeat):
        start = time.perf_counter()
        value = fn()
        best = min(best, time.perf_counter() - start)
    return best, value


def verified_cost(topo, schedule):
    """(verified, verify s, cost, cost s)."""
    start = time.perf_counter()
    ok = verify(topo, schedule).ok
    verify_s = time.perf_counter() - start
    start = time.perf_counter()
    c = cost(topo, schedule)
    return ok, verify_s, c, time.perf_counter() - start


def _kernel_peak_gb() -> float:
    """ru_maxrss of this process plus that of its largest finished child (Linux: KiB), an upper bound on what
    they held at once."""
    import resource

    return sum(resource.getrusage(who).ru_maxrss for who in (resource.RUSAGE_SELF, resource.RUSAGE_CHILDREN)) / 2 ** 20


def _large_case(expr: str, queue) -> None:
    from bench.peak_memory import PeakMemory

    topo = parse_topology(expr, max_nodes=10 ** 5)
    with PeakMemory() as whole:
        with PeakMemory() as synthesis:
            start = time.perf_counter()
            schedule = bfb_allgather(topo)
            seconds = time.perf_counter() - start
        kernel = _kernel_peak_gb()
        ok, verify_s, c, cost_s = verified_cost(topo, schedule)
    queue.put((topo.n, schedule.count, c.steps, float(c.tb_factor), seconds, synthesis.gb, kernel, verify_s, cost_s,
               whole.gb, _kernel_peak_gb(), ok))


def _in_child(target, *args):
    """``target(*args, queue)`` in a spawned process: the one row it puts on the queue, or None when the process
    ended without one (killed for memory, crashed), with its exit code."""
    import multiprocessing

    ctx = multiprocessing.get_context("spawn")
    queue = ctx.Queue()
    proc = ctx.Process(target=target, args=(*args, queue))
    proc.start()
    row = None
    while row is None:
        try:
            row = queue.get(timeout=5)
        except Empty:
            if not proc.is_alive():          # say so instead of waiting for ever
                break
    proc.join()
    return row, proc.exitcode


def large() -> None:
    print(f"{'topology':<18} {'nodes':>6} {'transfers':>11} {'steps':>5} {'tb_factor':>10} {'bfb s':>7} "
          f"{'target s':>8} {'peak GB':>7} {'kernel GB':>9} {'target GB':>9} {'verify s':>8} {'cost s':>7} "
          f"{'peak GB all':>11} {'kernel GB all':>13}")
    for expr, target_s, target_gb in LARGE:
        row, exitcode = _in_child(_large_case, expr)
        if row is None:
            print(f"{expr:<18} its process ended with exit code {exitcode} before reporting", flush=True)
            continue
        n, count, steps, tb, seconds, gb, kernel, verify_s, cost_s, gb_all, kernel_all, ok = row
        print(f"{expr:<18} {n:>6} {count:>11} {steps:>5} {tb:>10.6f} {seconds:>7.2f} {target_s or '-':>8} "
              f"{gb:>7.2f} {kernel:>9.2f} {target_gb or '-':>9} {verify_s:>8.2f} {cost_s:>7.2f} {gb_all:>11.2f} "
              f"{kernel_all:>13.2f}" + ("" if ok else "  NOT VERIFIED"), flush=True)


class Stages:
    """The largest RSS and PSS sums of this process and its children, sampled, per named stage (``mark``)."""

    def __init__(self, interval: float = 0.05, pss_every: int = 5):
        import threading

        import psutil

        self.me, self.interval, self.pss_every = psutil.Process(), interval, pss_every
        self.rows: list[list] = []          # [name, start, end, rss peak, pss peak]
        self.lock, self.stop = threading.Lock(), threading.Event()
        self.thread = threading.Thread(target=self._run, daemon=True)

    def _pss(self, pid: int) -> int:
        try:
            with open(f"/proc/{pid}/smaps_rollup") as fh:
                for line in fh:
                    if line.startswith("Pss:"):
                        return int(line.split()[1]) * 1024
        except OSError:
            pass
        return 0

    def _sample(self, with_pss: bool) -> None:
        import psutil

        rss = pss = 0
        for proc in [self.me] + self.me.children(recursive=True):
            try:
                rss += proc.memory_info().rss
                if with_pss:
                    pss += self._pss(proc.pid)
            except psutil.Error:
                pass
        with self.lock:
            if self.rows:
                row = self.rows[-1]
                row[3] = max(row[3], rss)
                row[4] = max(row[4], pss)

    def _run(self) -> None:
        k = 0
        while not self.stop.wait(self.interval):
            self._sample(k % self.pss_every == 0)
            k += 1

    def mark(self, name: str) -> None:
        self._sample(True)
        with self.lock:
            now = time.perf_counter()
            if self.rows:
                self.rows[-1][2] = now
            self.rows.append([name, now, None, 0, 0])
        self._sample(True)
        if not self.thread.is_alive() and not self.stop.is_set():
            self.thread.start()

    def close(self) -> list[tuple[str, float, float, float]]:
        self._sample(True)
        self.stop.set()
        self.thread.join()
        end = time.perf_counter()
        return [(name, (stop or end) - start, rss / 2 ** 30, pss / 2 ** 30) for name, start, stop, rss, pss in self.rows]


def _allreduce_stages(expr: str, price_gb: float | None, queue) -> None:
    import json
    import resource

    from solvers.registry import Work, get
    from solvers.results_cache import MAX_ENTRY_BYTES, _columns_bytes
    from solvers.runtime import Workload
    from solvers.synthesize import Result

    topo = parse_topology(expr, max_nodes=10 ** 5)
    stages = Stages()
    seen = set()

    def progress(phase, fraction):        # "bfb allgather 1" (G^T), "bfb allgather 2" (G), each ends at 1.0
        if phase not in seen:
            seen.add(phase)
            stages.mark(phase.replace("bfb allgather 1", "allgather on G^T").replace("bfb allgather 2",
                                                                                      "allgather on G"))
        if fraction >= 1.0 and phase.endswith("2"):
            stages.mark("join")
        elif fraction >= 1.0:
            stages.mark("reverse, distances on G")

    start = time.perf_counter()
    stages.mark("distances, allgather on G^T")
    synth = get("bfb")
    built = synth().build(topo, Collective.ALLREDUCE, synth.options_from(None), Work(None, progress))
    schedule = built.schedule
    schedule.algo = synth.name
    stages.mark("verify")
    verification = verify(topo, schedule)
    stages.mark("cost")
    result = Result(topo, schedule, verification, cost(topo, schedule), built.detail, None)
    stages.mark("cache size check")
    kept = _columns_bytes(result) <= MAX_ENTRY_BYTES            # the cache's own rule (a list of transfers: 0)
    stages.mark("JSON (no runtime model)")
    text = json.dumps(result.as_dict())
    priced = None
    if price_gb is not None:
        stages.mark("runtime model")
        resource.setrlimit(resource.RLIMIT_AS, (int(price_gb * 2 ** 30), resource.RLIM_INFINITY))
        try:
            priced = f"{Workload().price_result(result).time_us:.1f} us"
        except MemoryError:
            priced = f"MemoryError past {price_gb:g} GB of address space"
    rows = stages.close()
    queue.put((topo.n, schedule.count, result.cost.steps, float(result.cost.tb_factor), verification.ok, kept,
               len(text), time.perf_counter() - start, rows, priced))


def allreduce(expr: str, price_gb: float | None) -> None:
    row, exitcode = _in_child(_allreduce_stages, expr, price_gb)
    if row is None:
        print(f"{expr}: its process ended with exit code {exitcode} before reporting")
        return
    n, count, steps, tb, ok, kept, chars, seconds, rows, priced = row
    print(f"{expr}: {n} nodes, {count} transfers, {steps} steps, tb_factor {tb:.6f}, "
          f"{'verified' if ok else 'NOT VERIFIED'}, {'kept' if kept else 'not kept'} by the results cache, "
          f"{chars} JSON characters, {seconds:.1f} s in all" + (f"; runtime model: {priced}" if priced else ""))
    print(f"| stage | s | rss GB | pss GB |\n|:---|---:|---:|---:|")
    for name, secs, rss, pss in rows:
        print(f"| {name} | {secs:.1f} | {rss:.2f} | {pss:.2f} |")
    print(f"| all | {seconds:.1f} | {max(r[2] for r in rows):.2f} | {max(r[3] for r in rows):.2f} |", flush=True)


def main() -> None:
    ap = argparse.ArgumentParser(description=__doc__.splitlines()[0])
    ap.add_argument("--small", action="store_true")
    ap.add_argument("--lp", action="store_true")
    ap.add_argument("--large", action="store_true")
    ap.add_argument("--repeat", type=int, default=3)
    ap.add_argument("--allreduce", metavar="EXPR", default=None, help="the allreduce's stages on EXPR, peak each")
    ap.add_argument("--price", metavar="GB", type=float, default=None,
                    help="with --allreduce: also the runtime model, its address space capped at GB")
    args = ap.parse_args()
    if args.allreduce:
        allreduce(args.allreduce, args.price)
        return
    if args.large:
        large()
        return
    cases = (SMALL if args.small or args.lp else []) + CASES
    print(f"{'topology':<30} {'nodes':>6} {'steps':>5} {'tb_factor':>12} {'bfb s':>7} {'paper s':>8} "
          f"{'ratio':>7} {'verify s':>8} {'cost s':>7}" + (f" {'pyomo s':>8}" if args.lp else ""))
    for expr, paper in cases:
        def build():
            return bfb_allgather(parse_topology(expr, max_nodes=10 ** 5))   # fresh: no cached distances
        seconds, schedule = best_of(args.repeat, build)
        topo = parse_topology(expr, max_nodes=10 ** 5)
        ok, verify_s, c, cost_s = verified_cost(topo, schedule)
        ratio = f"{paper / seconds:7.1f}" if paper else f"{'-':>7}"
        row = (f"{expr:<30} {topo.n:>6} {c.steps:>5} {float(c.tb_factor):>12.8f} {seconds:>7.2f} "
               f"{paper if paper else '-':>8} {ratio} {verify_s:>8.2f} {cost_s:>7.2f}")
        if args.lp and topo.n <= 64:
            from solvers.directconnect.bfb_lp import lp_allgather

            lp_s, _ = best_of(1, lambda: lp_allgather(topo))
            row += f" {lp_s:>8.2f}"
        print(row + ("" if ok else "  NOT VERIFIED"), flush=True)


if __name__ == "__main__":
    main()
