"""All-to-all MCF LP (3) solve times against Table 7's rates, in one run.

    python bench/alltoall.py            # N = 32 .. 128
    python bench/alltoall.py --large    # also N = 256 (minutes)
"""
import argparse
import sys
from pathlib import Path

sys.path.insert(0, str(Path(__file__).resolve().parents[1]))

from solvers.alltoall import mcf_rate  # noqa: E402
from topologies import parse_topology  # noqa: E402

# expression, Table 7's f
CASES = [("line(bipartite(4))", 5.71e-2), ("ag24()", 5.26e-2), ("gkautz(4,64)", 2.17e-2),
         ("line(dbjmod(4,2))", 2.21e-2), ("power(diamond(),2)", 1.87e-2), ("line(bipartite(4),2)", 9.89e-3),
         ("line(ag24())", 9.26e-3), ("product(biring(2,8),power(uniring(1,4),2))", 5.21e-3)]
LARGE = [("debruijn(4,4)", 4.04e-3), ("line(power(diamond(),2))", 3.62e-3)]


def main() -> None:
    ap = argparse.ArgumentParser(description=__doc__.splitlines()[0])
    ap.add_argument("--large", action="store_true")
    args = ap.parse_args()
    print(f"{'topology':<45} {'N':>5} {'f':>11} {'Table 7':>9} {'seconds':>8}")
    for expr, paper in CASES + (LARGE if args.large else []):
        topo = parse_topology(expr)
        r = mcf_rate(topo)
        print(f"{expr:<45} {topo.n:>5} {r.f:>11.4e} {paper:>9.2e} {r.seconds:>8.1f}", flush=True)


if __name__ == "__main__":
    main()
