"""All-to-all MCF LP (3) solve times against Tables 4 and 7, in one run: the default PDLP solve with its
certified bracket, beside the interior point reference (IPM) where that finishes in reasonable time.

    python -m bench.alltoall            # N = 32 .. 128, with the IPM reference and the speed ratio
    python -m bench.alltoall --large    # also N = 256 (PDLP only)
    python -m bench.alltoall --n1024    # also Table 4's N = 1024 rows (minutes each)
    python -m bench.alltoall --table7   # Frank-Wolfe brackets of Table 7's N = 256, 512, 1024 designs, ShiftedRing
                                        # and tori (--time-limit S each, default 55; about ten minutes in all)

"f" is the certified lower end, "gap" the relative width of [f, upper]; "paper" is the table's value.
"""
import argparse
import time

from solvers.directconnect.alltoall import mcf_rate
from topologies import parse_topology

# expression, the table's f
CASES = [("line(bipartite(4))", 5.71e-2), ("ag24()", 5.26e-2), ("gkautz(4,64)", 2.17e-2),
         ("line(dbjmod(4,2))", 2.21e-2), ("power(diamond(),2)", 1.87e-2), ("line(bipartite(4),2)", 9.89e-3),
         ("line(ag24())", 9.26e-3), ("product(biring(2,8),power(uniring(1,4),2))", 5.21e-3)]
LARGE = [("debruijn(4,4)", 4.04e-3), ("line(dbjmod(4,2),2)", 4.10e-3), ("line(power(diamond(),2))", 3.62e-3),
         ("power(dbjmod(2,4),2)", 2.94e-3)]
N1024 = [("gkautz(4,1024)", 8.01e-4), ("line(circulant(16,[3,4]),3)", 8.12e-4),
         ("line(power(diamond(),2),2)", 7.34e-4), ("line(power(dbjmod(2,4),2))", 6.18e-4),
         ("power(product(uniring(1,4),uniring(1,8)),2)", 2.79e-4)]


def table7_cases() -> list[tuple[str, float | None]]:
    """Table 7's N = 256, 512 and 1024 designs with their printed f, then ShiftedRing (Table 4 prints its
    all-to-all time at N = 1024: 10738 us, so f = (M/B) d / (N T)) and the 16 x 16 and 32 x 32 tori (no paper f)."""
    from bench.papers.directconnect import GBS, MB, TABLE7

    cases: list[tuple[str, float | None]] = [(expr, float(f)) for n, _, expr, *_, f, _, _ in TABLE7 if n >= 256]
    cases += [("shifted_ring(256)", None), ("shifted_ring(512)", None),
              ("shifted_ring(1024)", MB / (GBS * 1e3) * 4 / (1024 * 10738)), ("torus(16,16)", None),
              ("torus(32,32)", None)]
    return cases


def table7(time_limit: float) -> None:
    print(f"{'topology':<52} {'N':>5} {'lower':>10} {'upper':>10} {'gap':>7} {'s':>6} {'whole s':>7} {'paper':>9} "
          f"{'lo/paper':>8} {'up/paper':>8}")
    for expr, paper in table7_cases():
        start = time.perf_counter()
        topo = parse_topology(expr, max_nodes=4096)
        r = mcf_rate(topo, time_limit=time_limit, method="fw")
        whole = time.perf_counter() - start
        ratios = f"{r.f / paper:>8.4f} {r.upper / paper:>8.4f}" if paper else f"{'-':>8} {'-':>8}"
        print(f"{expr:<52} {topo.n:>5} {r.f:>10.4e} {r.upper:>10.4e} {r.gap:>7.2%} {r.seconds:>6.1f} {whole:>7.1f} "
              f"{f'{paper:.3g}' if paper else '-':>9} {ratios}", flush=True)


def main() -> None:
    ap = argparse.ArgumentParser(description=__doc__.splitlines()[0])
    ap.add_argument("--large", action="store_true")
    ap.add_argument("--n1024", action="store_true")
    ap.add_argument("--table7", action="store_true")
    ap.add_argument("--time-limit", type=float, default=55.0)
    args = ap.parse_args()
    if args.table7:
        table7(args.time_limit)
        return
    print(f"{'topology':<45} {'N':>5} {'f':>11} {'gap':>8} {'paper':>9} {'pdlp s':>7} {'ipm s':>7} {'ratio':>6}")
    cases = CASES + (LARGE if args.large else []) + (N1024 if args.n1024 else [])
    for expr, paper in cases:
        topo = parse_topology(expr)
        r = mcf_rate(topo)
        ipm = mcf_rate(topo, method="ipm") if topo.n <= 128 else None
        ref = f"{ipm.seconds:>7.1f} {ipm.seconds / r.seconds:>6.1f}" if ipm else f"{'-':>7} {'-':>6}"
        print(f"{expr:<45} {topo.n:>5} {r.f:>11.4e} {r.gap:>8.1e} {paper:>9.2e} {r.seconds:>7.1f} {ref}",
              flush=True)
        if ipm and abs(ipm.f - r.f) > 1e-6 * ipm.f + 1e-12:
            print(f"    IPM gives {ipm.f:.7e}", flush=True)


if __name__ == "__main__":
    main()
