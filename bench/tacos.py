"""TACOS greedy synthesis time against the number of NPUs, with the collective time beside its ingress bound.

    python -m bench.tacos                  # Table I: Ring_FC_Switch, 1..64 nodes (8..512 NPUs), All-Reduce
    python -m bench.tacos --shapes         # also 2D/3D tori, meshes and binary hypercubes up to 512 NPUs
    python -m bench.tacos --verify         # also lower into the IR and run the verifier (not counted)
    python -m bench.tacos --large          # issue 24: tacos_torus(16,16,16), 4096 NPUs, beside its 120 s target

Every row is one greedy run per phase (restarts = 1, seed 0) of an All-Reduce (reduce-scatter on the transpose,
then All-Gather), one chunk per NPU, a 64 MiB buffer and the fabric's own link bandwidths and 0.5 us alphas.
"synth s" is the wall time of the synthesis alone (greedy runs, the bound and the lowering into the IR);
"paper" is TACOS Table I's synthesis time for the same system (C++ reference, hardware not stated) and
"ratio" this run / paper. "time/bound" is the greedy's collective time over the ingress lower bound, and
"ring/tacos" the ring All-Reduce's runtime-model time on the same fabric (where a Hamiltonian cycle exists) over
TACOS's, both from this run.
"""
import argparse
import resource
import time

from solvers.core.errors import NotApplicable
from solvers.baselines.hamiltonian import ring_allgather
from solvers.runtime import simulate
from solvers.tacos import tacos
from solvers.core.transform import build_collective
from solvers.core.schedule import Collective
from solvers.core.verify import verify
from topologies import parse_topology

BUFFER = 1 << 26
PAPER_S = {8: 0.29e-3, 16: 0.63e-3, 32: 8.90e-3, 64: 97.92e-3, 128: 1.08, 256: 16.50, 512: 6.09 * 60}


def ring_time(topo) -> float | None:
    try:
        return simulate(topo, build_collective(topo, Collective.ALLREDUCE, ring_allgather), BUFFER).time_us
    except NotApplicable:
        return None


def row(expr: str, check: bool) -> None:
    topo = parse_topology(expr)
    t0 = time.perf_counter()
    found = tacos(topo, "allreduce", buffer_bytes=BUFFER, restarts=1)
    synth = time.perf_counter() - t0
    paper = PAPER_S.get(topo.n) if expr.startswith("ring_fc_switch") else None
    ring = ring_time(found.topology) if topo.n <= 128 else None
    verified = "-"
    if check:
        verified = "yes" if verify(found.topology, found.schedule).ok else "NO"
    print(f"{expr:<34} {topo.n:>5} {synth:>9.3f} {(f'{paper:.4g}' if paper else '-'):>9} "
          f"{(f'{synth / paper:.3g}' if paper else '-'):>9} {found.time_us:>11.1f} {found.bound_us:>11.1f} "
          f"{found.time_us / found.bound_us:>10.3f} {(f'{ring / found.time_us:.2f}' if ring else '-'):>10} "
          f"{found.schedule.count:>9} {verified:>8}", flush=True)


TARGET_S = 120.0


def large(check: bool) -> None:
    """One greedy run per phase on the 4096-NPU 3-D torus, 1 chunk per NPU, for All-Gather and All-Reduce: the
    synthesis time beside issue 24's target, the greedy's time beside its ingress bound, the peak RSS so far."""
    expr = "tacos_torus(16,16,16,bw=50,alpha_ns=500)"
    topo = parse_topology(expr)
    print(f"{'topology':<40} {'collective':<10} {'NPUs':>5} {'synth s':>8} {'target s':>8} {'ratio':>6} "
          f"{'time us':>9} {'bound us':>9} {'transfers':>10} {'verify s':>8} {'peak RSS GB':>11}")
    for collective in ("allgather", "allreduce"):
        t0 = time.perf_counter()
        found = tacos(topo, collective, buffer_bytes=BUFFER, restarts=1)
        synth = time.perf_counter() - t0
        ver = "-"
        if check:
            t1 = time.perf_counter()
            ok = verify(found.topology, found.schedule).ok
            ver = f"{time.perf_counter() - t1:.1f}" + ("" if ok else " NO")
        rss = resource.getrusage(resource.RUSAGE_SELF).ru_maxrss / 2 ** 20
        print(f"{expr:<40} {collective:<10} {topo.n:>5} {synth:>8.1f} {TARGET_S:>8.0f} {synth / TARGET_S:>6.2f} "
              f"{found.time_us:>9.1f} {found.bound_us:>9.1f} {found.schedule.count:>10} {ver:>8} {rss:>11.2f}",
              flush=True)
        del found


def main() -> None:
    ap = argparse.ArgumentParser(description=__doc__.splitlines()[0])
    ap.add_argument("--shapes", action="store_true")
    ap.add_argument("--verify", action="store_true")
    ap.add_argument("--large", action="store_true")
    args = ap.parse_args()
    if args.large:
        large(args.verify)
        return
    cases = [f"ring_fc_switch({n})" for n in (1, 2, 4, 8, 16, 32, 64)]
    if args.shapes:
        cases += [f"tacos_torus({a},{a},bw=50,alpha_ns=500)" for a in (4, 8, 16)] + \
                 ["tacos_torus(16,32,bw=50,alpha_ns=500)"] + \
                 [f"tacos_torus({a},{a},{a},bw=50,alpha_ns=500)" for a in (4, 8)] + \
                 [f"mesh({a},{a},bw=50,alpha_ns=500)" for a in (8, 16)] + ["mesh(16,32,bw=50,alpha_ns=500)"] + \
                 [f"mesh({a},{a},{a},bw=50,alpha_ns=500)" for a in (4, 8)] + \
                 [f"hypercube({d})" for d in (6, 8, 9)]
    print(f"{'topology':<34} {'NPUs':>5} {'synth s':>9} {'paper s':>9} {'ratio':>9} {'time us':>11} "
          f"{'bound us':>11} {'time/bound':>10} {'ring/tacos':>10} {'transfers':>9} {'verified':>8}")
    for expr in cases:
        row(expr, args.verify)


if __name__ == "__main__":
    main()
