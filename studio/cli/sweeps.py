"""``sweep``: a design sweep on Dask (``solvers.sweep`` on ``studio.cluster``), written to CSV or Parquet as rows
finish, resumed by running the same command again. The output path (and a Parquet output's rows file) is checked
before the grid runs (``common.check_output``); a row that cannot be written stops the sweep with one line."""
from __future__ import annotations

import math
import sys
import time

from .common import UsageError, add_output_arguments, cannot_write, check_output, progress_parent, write_atomically

DEFAULT_SIZES = "1e6,1e8"


def add_parser(sub) -> None:
    p = sub.add_parser("sweep", parents=[progress_parent()],
                       help="a grid of designs x synthesizers x collectives x sizes on Dask, to CSV or Parquet")
    p.add_argument("template", help="an expression with parameters in braces, e.g. 'gkautz(4,{N})'")
    p.add_argument("--param", action="append", default=[], metavar="NAME=VALUES",
                   help="values of a parameter: a list 8,16,32 or an inclusive range start:stop:step "
                        "(N=64:1024:64); repeat for several")
    p.add_argument("--algos", default="bfb,ring", help="synthesizers, comma-separated (default bfb,ring)")
    p.add_argument("--collectives", default="allgather,allreduce",
                   help="collectives, comma-separated (default allgather,allreduce)")
    p.add_argument("--bytes", default=DEFAULT_SIZES, dest="sizes",
                   help=f"vector sizes M in bytes, comma-separated (default {DEFAULT_SIZES})")
    add_output_arguments(p, "the table: FILE.csv (rows appended as they finish) or FILE.parquet (rows kept in "
                            "FILE.parquet.rows.csv until the sweep ends); an existing one is resumed", required=True)
    p.add_argument("--scheduler", default=None, metavar="tcp://HOST:8786",
                   help="run on this Dask cluster (default: an embedded LocalCluster)")
    p.add_argument("--workers", type=int, default=None,
                   help="worker processes of the embedded cluster (default: one per CPU)")
    p.add_argument("--max-nodes", type=int, default=None, help="refuse designs above this many nodes")
    p.add_argument("--time-limit", type=float, default=None, metavar="SECONDS",
                   help="stop a task's synthesis after this long (its rows say time-out; default: no limit)")


def _size(text: str) -> float:
    """One of --bytes' sizes: a finite positive number of bytes."""
    size = float(text)
    if not (math.isfinite(size) and size > 0):
        raise ValueError(f"'{text}' is not a finite positive number of bytes")
    return size


def _csv_list(text: str, what: str) -> list[str]:
    items = [x.strip() for x in text.split(",") if x.strip()]
    if not items:
        raise UsageError(f"--{what} needs at least one value")
    return items


def sweep(args) -> int:
    from solvers.registry import get
    from solvers.sweep import FIELDS, Journal, SweepError, grid, parse_param, run
    from studio.cluster import ClusterError, executor

    try:
        params: dict[str, list[int]] = {}
        for text in args.param:
            name, values = parse_param(text)
            if name in params:
                raise UsageError(f"--param {name} is given twice: give all its values in one --param {name}=...")
            params[name] = values
        sizes = [_size(s) for s in _csv_list(args.sizes, "bytes")]
    except ValueError as exc:
        raise UsageError(str(exc) if isinstance(exc, SweepError) else f"--bytes: {exc}") from None
    algos = _csv_list(args.algos, "algos")
    for algo in algos:
        get(algo)                       # an unknown name: NotApplicable with the known ones, before any work
    collectives = _csv_list(args.collectives, "collectives")
    try:
        tasks = grid(args.template, params, algos, collectives, sizes, args.max_nodes, args.time_limit)
    except SweepError as exc:
        raise UsageError(str(exc)) from None
    output = args.output
    parquet = output.lower().endswith(".parquet")
    if not (parquet or output.lower().endswith(".csv")):
        raise UsageError("--output must end in .csv or .parquet")
    if parquet:
        check_output(output + ".rows.csv", args.force)
    journal = Journal(output + ".rows.csv" if parquet else output, list(params) + list(FIELDS))
    try:
        if parquet and not journal.path.exists():
            _journal_from_parquet(output, journal)
        done = journal.done(sizes)
    except SweepError as exc:
        raise UsageError(str(exc)) from None
    keys = {t.key for t in tasks}
    resumed = len(done & keys)
    show = args.progress or sys.stderr.isatty()
    start = time.perf_counter()

    def on_rows(task, rows) -> None:
        try:
            journal.append(rows)
        except OSError as exc:          # a full or read-only disk: the rows before these are kept whole
            raise UsageError(str(cannot_write(str(journal.path), exc))) from None

    def progress(finished: int, total: int) -> None:
        if show:
            print(f"\rsweep: {finished}/{total} tasks, {time.perf_counter() - start:.0f} s", end="",
                  file=sys.stderr, flush=True)

    try:
        with executor(args.scheduler, args.workers) as (pool, where, count):
            print(f"sweep: {len(tasks)} tasks ({resumed} already in {journal.path}) on {where}", file=sys.stderr)
            solved = run(tasks, pool, on_rows, done=done, progress=progress, in_flight=2 * count)
    except ClusterError as exc:
        raise UsageError(str(exc)) from None
    except KeyboardInterrupt:
        print(f"\nsweep: stopped; the finished rows are in {journal.path} and the same command resumes",
              file=sys.stderr)
        return 130
    if show:
        print(file=sys.stderr)
    rows = journal.rows()
    if parquet:
        import io

        import pandas as pd

        buf = io.BytesIO()
        pd.DataFrame(rows, columns=journal.columns).to_parquet(buf, index=False)
        write_atomically(output, buf.getvalue())
        journal.path.unlink()
    ok = sum(1 for r in rows if r.get("status") == "ok")
    print(f"sweep: {solved} tasks solved now, {resumed} resumed; {len(rows)} rows ({ok} ok) in {output} "
          f"({time.perf_counter() - start:.1f} s)", file=sys.stderr)
    return 0


def _journal_from_parquet(output: str, journal) -> None:
    """A finished Parquet table asked for again: its rows seed the journal, so only new tasks are solved."""
    from pathlib import Path

    if not Path(output).exists():
        return
    import pandas as pd

    frame = pd.read_parquet(output)
    if list(frame.columns) != journal.columns:
        from solvers.sweep import SweepError

        raise SweepError(f"{output} holds rows of another sweep; name another output file")
    journal.append(frame.astype(object).where(frame.notna(), "").to_dict("records"))
