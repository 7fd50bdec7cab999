"""The topology finder over every N in 16..2000 and d in {2, 4, 8, 16} (the paper, §5.4: "under a minute"), in
one run, with the directed and the bidirectional frontier of each (N, d).

    python -m bench.finder                  # N = 16..2000, all of them
    python -m bench.finder --max-nodes 512  # a quicker run

One ``Finder`` serves every target, so cells are searched once (as the paper caches its search). Π_{d,N} comes
from ``solvers/directconnect/data/gkautz.csv``; a target whose Π row is missing is searched without it here (``compute=False``)
and counted in the 'no Π row' column, since solving it is one BFB run of seconds, not part of the search (the
same holds for the small rows that ``find`` would solve on demand: the count of absent ones is printed).
Reference in the same run: a fresh ``find`` of the Table 4 target (N = 1024, d = 4), which builds its cells from
nothing.
"""
import argparse
import time

from solvers.directconnect import base_table
from solvers.directconnect.finder import ON_DEMAND_GKAUTZ, Finder


def main() -> None:
    ap = argparse.ArgumentParser(description=__doc__.splitlines()[0])
    ap.add_argument("--min-nodes", type=int, default=16)
    ap.add_argument("--max-nodes", type=int, default=2000)
    ap.add_argument("--degrees", default="2,4,8,16")
    args = ap.parse_args()
    degrees = [int(x) for x in args.degrees.split(",")]

    start = time.perf_counter()
    Finder().frontier(1024, 4)
    reference = time.perf_counter() - start

    finder = Finder(on_demand=False)
    print(f"{'d':>3} {'targets':>8} {'frontier pts':>12} {'bidir pts':>10} {'max pts':>8} {'no Π row':>9} "
          f"{'seconds':>8}")
    total_start = time.perf_counter()
    for d in degrees:
        t0 = time.perf_counter()
        points = bidir = widest = missing = 0
        ns = range(max(args.min_nodes, 2), args.max_nodes + 1)
        for n in ns:
            front = finder.frontier(n, d, compute=False)
            points += len(front)
            widest = max(widest, len(front))
            bidir += len(finder.frontier(n, d, bidirectional=True, compute=False))
            missing += n >= d + 2 and base_table.tabulated(d, n) is None
        print(f"{d:>3} {len(ns):>8} {points:>12} {bidir:>10} {widest:>8} {missing:>9} "
              f"{time.perf_counter() - t0:>8.2f}", flush=True)
    total = time.perf_counter() - total_start
    absent = sum(1 for k in range(2, max(degrees) + 1) for n in range(k + 2, ON_DEMAND_GKAUTZ + 1)
                 if base_table.tabulated(k, n) is None)
    print(f"Π rows absent from the table among k <= {max(degrees)}, n <= {ON_DEMAND_GKAUTZ} (left out here): {absent}")
    print(f"total {total:.2f} s for {len(degrees)} degrees x N = {args.min_nodes}..{args.max_nodes} "
          f"(directed and bidirectional); cells searched: {len(finder._cells)}")
    print(f"reference: one fresh search for N = 1024, d = 4 took {reference:.3f} s "
          f"(ratio whole sweep / one target = {total / reference:.0f})")


if __name__ == "__main__":
    main()
