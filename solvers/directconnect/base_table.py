"""Tabulated BFB values of the generalized Kautz graphs Π_{k,n} (direct-connect paper App. F.2), for the finder.

The topology finder (``solvers.directconnect.finder``) predicts expanded topologies from their bases, but Π_{k,n} has no
formula for its BFB cost: Theorem 21 bounds its diameter by T_L* + 1 and Fig. 18 shows T_B within 2x of optimal,
nothing exact. Its (steps, tb_factor) therefore come from running the exact BFB solver once per (k, n); the
results for k in {2, 4, 8, 16} and n up to 2000 (the range of the paper's finder, §5.4) are kept in
``solvers/directconnect/data/gkautz.csv`` and anything missing is computed on demand.

Rebuild or extend the table (resumable; rows are appended as they are found):
    python -m solvers.directconnect.base_table --degrees 4,2,8,16 --max-nodes 2000
"""
from __future__ import annotations

import argparse
import csv
import sys
import time
from fractions import Fraction
from functools import lru_cache
from pathlib import Path

from topologies.families import gkautz

from .bfb import bfb_values

TABLE = Path(__file__).with_name("data") / "gkautz.csv"
HEADER = ["k", "n", "steps", "tb_num", "tb_den"]


@lru_cache(maxsize=1)
def _table() -> dict[tuple[int, int], tuple[int, Fraction]]:
    out: dict[tuple[int, int], tuple[int, Fraction]] = {}
    if TABLE.exists():
        with TABLE.open(newline="") as fh:
            for row in csv.DictReader(fh):
                out[int(row["k"]), int(row["n"])] = (int(row["steps"]), Fraction(int(row["tb_num"]), int(row["tb_den"])))
    return out


_computed: dict[tuple[int, int], tuple[int, Fraction]] = {}


def tabulated(k: int, n: int) -> tuple[int, Fraction] | None:
    """(steps, tb_factor) of BFB on Π_{k,n} if the table (or this process) already has it."""
    return _table().get((k, n)) or _computed.get((k, n))


def gkautz_values(k: int, n: int) -> tuple[int, Fraction]:
    """(steps, tb_factor) of the optimal BFB allgather on Π_{k,n}, from the table or computed now."""
    hit = tabulated(k, n)
    if hit is None:
        hit = _computed[k, n] = bfb_values(gkautz(k, n))
    return hit


def self_loops(k: int, n: int) -> bool:
    """Π_{k,n} has a loop x -> x iff (k+1) x + a = 0 (mod n) for some a in 1..k, i.e. iff some a <= k is a
    multiple of gcd(k+1, n): always, unless (k+1) divides n."""
    return n % (k + 1) != 0


def build(degrees: list[int], max_nodes: int, out=sys.stdout) -> int:
    """Append the missing rows of the table for ``degrees`` and n <= ``max_nodes``; returns rows added."""
    TABLE.parent.mkdir(exist_ok=True)
    have = set(_table())
    new = not TABLE.exists()
    added = 0
    with TABLE.open("a", newline="") as fh:
        writer = csv.writer(fh)
        if new:
            writer.writerow(HEADER)
        for k in degrees:
            start = time.perf_counter()
            for n in range(k + 1, max_nodes + 1):
                if (k, n) in have:
                    continue
                steps, tb = bfb_values(gkautz(k, n))
                writer.writerow([k, n, steps, tb.numerator, tb.denominator])
                fh.flush()
                added += 1
            print(f"k={k}: done up to n={max_nodes} in {time.perf_counter() - start:.0f} s", file=out, flush=True)
    _table.cache_clear()
    return added


def main(argv: list[str] | None = None) -> int:
    ap = argparse.ArgumentParser(description=__doc__.split("\n")[0])
    ap.add_argument("--degrees", default="4,2,8,16")
    ap.add_argument("--max-nodes", type=int, default=2000)
    args = ap.parse_args(argv)
    build([int(x) for x in args.degrees.split(",")], args.max_nodes)
    return 0


if __name__ == "__main__":
    raise SystemExit(main())
