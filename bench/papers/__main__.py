"""``python -m bench.papers [--slow] [--json] [--paper NAME]``: one table per paper, one row per reproducible number.

Columns: the table or figure, the row, the paper's value, ours, ours / paper, the tolerance and whether it holds.
``--json`` prints a list of objects with exactly the keys ``paper, table, row, paper_value, ours, ratio,
tolerance, ok``. Rows whose difference is explained print the explanation under the table. Progress (each row and
its seconds) goes to stderr.
"""
from __future__ import annotations

import argparse
import json
import sys
import time

from bench.papers import PAPERS, Row, evaluate, specs


def _fmt(value: float | None) -> str:
    if value is None:
        return "-"
    return f"{value:.6g}"


def table(paper: str, rows: list[Row]) -> str:
    """One paper's rows as a Markdown table, with the explanations of known differences below it."""
    lines = [f"### {paper}", "", "| table | row | paper | ours | ours/paper | tolerance | ok |",
             "|---|---|---:|---:|---:|---:|---|"]
    notes: dict[str, list[str]] = {}
    for r in rows:
        mark = "yes" if r.ok else ("explained" if r.known else "NO")
        lines.append(f"| {r.table} | {r.row} | {_fmt(r.paper_value)} | {_fmt(r.ours)} | {_fmt(r.ratio)} | "
                     f"{r.tolerance:g} | {mark} |")
        if r.known and not r.ok:
            notes.setdefault(r.known, []).append(f"{r.table}, {r.row}")
        if r.error:
            notes.setdefault(f"error: {r.error}", []).append(f"{r.table}, {r.row}")
    text = [f"- {'; '.join(where)}: {why}" for why, where in notes.items()]
    return "\n".join(lines + ([""] + text if text else []))


def main(argv: list[str] | None = None) -> int:
    parser = argparse.ArgumentParser(prog="python -m bench.papers", description=__doc__.splitlines()[0])
    parser.add_argument("--slow", action="store_true", help="also the rows too slow for the test suite")
    parser.add_argument("--json", action="store_true", help="print a JSON list of rows")
    parser.add_argument("--paper", choices=PAPERS, help="one paper only")
    args = parser.parse_args(argv)
    t0 = time.perf_counter()
    by_paper: dict[str, list[Row]] = {}
    for spec in specs(args.paper, slow=args.slow):
        t = time.perf_counter()
        row = evaluate(spec)
        by_paper.setdefault(spec.paper, []).append(row)
        print(f"[{time.perf_counter() - t0:6.1f} s] {spec.key}: {_fmt(row.ours)} vs {_fmt(row.paper_value)} "
              f"({time.perf_counter() - t:.1f} s){'' if row.ok else ' (explained)' if row.known else ' NOT OK'}",
              file=sys.stderr, flush=True)
    if args.json:
        print(json.dumps([r.as_dict() for rows in by_paper.values() for r in rows], indent=1))
    else:
        for paper, rows in by_paper.items():
            print(table(paper, rows) + "\n")
        total = sum(len(r) for r in by_paper.values())
        held = sum(r.ok for rows in by_paper.values() for r in rows)
        known = sum(r.known != "" and not r.ok for rows in by_paper.values() for r in rows)
        print(f"{held} of {total} rows hold, {known} differ with an explanation, "
              f"{total - held - known} differ unexplained; {time.perf_counter() - t0:.0f} s")
    bad = [r for rows in by_paper.values() for r in rows if not r.ok and not r.known]
    return 1 if bad else 0


if __name__ == "__main__":
    sys.exit(main())
