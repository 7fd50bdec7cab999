"""BFB allgather generation time against the direct-connect paper's Table 6, in one run.

    python -m bench.bfb            # the acceptance cases
    python -m bench.bfb --small    # also the small Table 6 rows
    python -m bench.bfb --lp       # also the Pyomo reference (one LP per (u, t)) on the small cases
    python -m bench.bfb --large    # issue 24's scale cases instead, each once in a fresh process, with peak memory

"bfb s" is the exact fast path (topology distances, every (u, t) problem, the schedule as columns); "verify s"
and "cost s" are the simulator and the exact cost on that schedule, reported apart. "paper s" is Table 6's BFB
time; "ratio" is paper s / bfb s. Timings are the best of ``--repeat`` runs (default 3) on this machine.

``--large`` runs gkautz(4,16384) (issue 24: at most 60 s and 8 GB) and torus(100,100), each once in a fresh
process: "peak GB" is the largest sampled RSS of that process and its forked workers together
(``bench.peak_memory``), during synthesis and then over synthesis, verification and cost; "kernel GB" is the
kernel's peak of the process plus its worker's (``ru_maxrss``), an upper bound that a sample cannot miss.
torus(100,100)'s exact chunk bounds need a common denominator near 3e21, beyond int64: its columns keep positions
in a table of the 119 exact values (``Columns.bounds``), which the verifier reads as ranks and the cost sums.
"""
import argparse
import time
from queue import Empty

from solvers.directconnect.bfb import bfb_allgather
from solvers.core.cost import cost
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


def large() -> None:
    import multiprocessing

    ctx = multiprocessing.get_context("spawn")
    print(f"{'topology':<18} {'nodes':>6} {'transfers':>11} {'steps':>5} {'tb_factor':>10} {'bfb s':>7} "
          f"{'target s':>8} {'peak GB':>7} {'kernel GB':>9} {'target GB':>9} {'verify s':>8} {'cost s':>7} "
          f"{'peak GB all':>11} {'kernel GB all':>13}")
    for expr, target_s, target_gb in LARGE:
        queue = ctx.Queue()
        proc = ctx.Process(target=_large_case, args=(expr, queue))
        proc.start()
        row = None
        while row is None:
            try:
                row = queue.get(timeout=5)
            except Empty:
                if not proc.is_alive():          # killed (out of memory) or crashed: say so instead of waiting
                    break
        proc.join()
        if row is None:
            print(f"{expr:<18} its process ended with exit code {proc.exitcode} before reporting", flush=True)
            continue
        n, count, steps, tb, seconds, gb, kernel, verify_s, cost_s, gb_all, kernel_all, ok = row
        print(f"{expr:<18} {n:>6} {count:>11} {steps:>5} {tb:>10.6f} {seconds:>7.2f} {target_s or '-':>8} "
              f"{gb:>7.2f} {kernel:>9.2f} {target_gb or '-':>9} {verify_s:>8.2f} {cost_s:>7.2f} {gb_all:>11.2f} "
              f"{kernel_all:>13.2f}" + ("" if ok else "  NOT VERIFIED"), flush=True)


def main() -> None:
    ap = argparse.ArgumentParser(description=__doc__.splitlines()[0])
    ap.add_argument("--small", action="store_true")
    ap.add_argument("--lp", action="store_true")
    ap.add_argument("--large", action="store_true")
    ap.add_argument("--repeat", type=int, default=3)
    args = ap.parse_args()
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
