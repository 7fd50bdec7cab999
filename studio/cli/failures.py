"""``failures EXPR --algo A [--algo B] --collective C --links K [--samples S]``: what failed links, GPUs, NICs,
switches or boxes do to a design and to each synthesizer's schedule on it (``solvers.failures``): one row per
failure set and a summary, the sets run as tasks on the sweep machinery (an embedded Dask LocalCluster, or
``--scheduler``), every synthesis through the results cache (a second run of the same command reads them back);
with ``-o FILE.csv`` the rows are also appended as they finish and the same command resumes."""
from __future__ import annotations

import sys
import time

from .common import UsageError, add_output_arguments, cache_parent, cannot_write, design_parent, json_parent, json_text, \
    progress_parent, workload_from, workload_parent

KIND_FLAGS = {"links": "links", "directed_links": "directed-links", "nodes": "gpus", "gpus": "gpus",
              "nics": "nics", "switches": "switches", "boxes": "boxes"}


def add_parser(sub) -> None:
    p = sub.add_parser("failures", parents=[design_parent(), json_parent(), progress_parent(), workload_parent(),
                                            cache_parent()],
                       help="what failed links, GPUs, NICs, switches or boxes do to a design and its schedules")
    p.add_argument("--algo", action="append", default=[], help="a synthesizer to run on every degraded fabric "
                   "(repeat for several; default ring and forestcoll)")
    p.add_argument("--collective", default="allreduce",
                   help="the collective (default allreduce); a rooted one may name its root: broadcast@3 or "
                        "broadcast@b0.g1 (default rank 0)")
    kinds = p.add_mutually_exclusive_group(required=True)
    kinds.add_argument("--links", type=int, metavar="K", help="K cables (both directions of a link) fail")
    kinds.add_argument("--directed-links", type=int, metavar="K", help="K links fail, one direction each")
    kinds.add_argument("--nodes", "--gpus", type=int, metavar="K", dest="gpus", help="K GPUs (compute nodes) fail")
    kinds.add_argument("--nics", type=int, metavar="K", help="K NICs fail (switch nodes joined to one GPU)")
    kinds.add_argument("--switches", type=int, metavar="K", help="K switch nodes fail (NVSwitches, NICs, ...)")
    kinds.add_argument("--boxes", type=int, metavar="K", help="K boxes fail (all nodes named prefix.*)")
    p.add_argument("--samples", type=int, default=None, metavar="S",
                   help="S random sets of K (default: every set of K, up to 10,000)")
    p.add_argument("--seed", type=int, default=0, help="the random sets' seed (default 0: the same sets each run)")
    p.add_argument("--scheduler", default=None, metavar="tcp://HOST:8786",
                   help="run on this Dask cluster (default: an embedded LocalCluster)")
    p.add_argument("--workers", type=int, default=None, help="worker processes of the embedded cluster")
    p.add_argument("--in-process", action="store_true",
                   help="no cluster: analyse the sets one after another in this process (small runs)")
    add_output_arguments(p, "also append the rows to FILE.csv as they finish (the same command resumes)")


def _kind(args) -> tuple[str, int]:
    for flag, kind in KIND_FLAGS.items():
        k = getattr(args, flag, None)
        if k is not None:
            return kind, k
    raise UsageError("give one failure model: --links K, --directed-links K, --nodes K, --nics K, --switches K "
                     "or --boxes K")


def columns(algos) -> list[str]:
    """The columns of the rows file (``solvers.failures.row_columns``)."""
    from solvers.failures import row_columns

    return row_columns(algos)


def failures(args) -> int:
    from solvers.core.errors import NotApplicable
    from solvers.core.schedule import rooted_request
    from solvers.failures import (KINDS, FailureError, FailureTask, connectivity, failure_sets, lost_failure,
                                  read_rows_file, solve_failure, summarize_rows)
    from solvers.registry import get
    from solvers.synthesize import resolve_root
    from solvers.sweep import Journal, run
    from studio.cluster import ClusterError, executor
    from topologies import load

    kind, k = _kind(args)
    algos = tuple(dict.fromkeys(a.strip() for a in (args.algo or ["ring", "forestcoll"]) if a.strip()))
    for algo in algos:
        get(algo)                        # an unknown name: one line naming the known ones, before any work
    try:                                 # the collective (and a root after @), before any set runs
        coll, root = rooted_request(args.collective)
    except ValueError as exc:
        raise UsageError(f"--collective: {exc}") from None
    if coll.value == "custom":
        raise UsageError("--collective: failures runs allgather, reduce_scatter, allreduce, alltoall, broadcast, "
                         "reduce, gather or scatter (a rooted one as broadcast@ROOT), not custom")
    work = workload_from(args)
    topo = load(args.expr, max_nodes=args.max_nodes)
    if coll.rooted:
        try:
            resolve_root(topo, root)
        except NotApplicable as exc:
            raise UsageError(f"--collective: {exc}") from None
    try:
        sets = failure_sets(topo, kind, k, args.samples, args.seed)
    except FailureError as exc:
        raise UsageError(str(exc)) from None
    collective = coll.value + ("" if root is None else f"@{root}")      # one spelling: one run's key
    make = lambda failed: FailureTask(args.expr, kind, failed, algos, collective, work.key,  # noqa: E731
                                      args.max_nodes, args.no_cache)
    healthy_task = make(())
    tasks = [healthy_task] + [make(tuple(e.name for e in s)) for s in sets]
    unique = list(dict.fromkeys(tasks))          # a sampled set drawn twice is analysed once
    stamp = {"collective": collective, "bytes": work.total_bytes, "prices": work.price_label}
    journal, done_rows = None, {}
    if args.output:
        if not args.output.lower().endswith(".csv"):
            raise UsageError("--output must end in .csv")
        journal = Journal(args.output, columns(algos))
        try:
            done_rows = read_rows_file(args.output, algos, stamp, args.expr, kind, topo.n)
        except FailureError as exc:
            raise UsageError(str(exc)) from None
    rows: dict[tuple, dict] = {}
    for task in unique:
        if task.label in done_rows:
            rows[task.key] = done_rows[task.label]
    show = args.progress or sys.stderr.isatty()
    start = time.perf_counter()

    def on_rows(task, got) -> None:
        rows[task.key] = got[0]
        if journal is not None:
            try:
                journal.append([{**got[0], **stamp}])
            except OSError as exc:
                raise UsageError(str(cannot_write(str(journal.path), exc))) from None

    def progress(finished: int, total: int) -> None:
        if show:
            print(f"\rfailures: {finished}/{total} sets, {time.perf_counter() - start:.0f} s", end="",
                  file=sys.stderr, flush=True)

    todo = [t for t in unique if t.key not in rows]
    try:
        if todo:
            with executor(args.scheduler, 0 if args.in_process else args.workers) as (pool, where, count):
                print(f"failures: {len(unique)} sets of {KINDS[kind]} ({len(unique) - len(todo)} already in "
                      f"{args.output}) on {where}" if args.output else
                      f"failures: {len(unique)} sets of {KINDS[kind]} on {where}", file=sys.stderr)
                run(todo, pool, on_rows, progress=progress, in_flight=2 * count, solve=solve_failure,
                    lost=lost_failure)
    except ClusterError as exc:
        raise UsageError(str(exc)) from None
    except KeyboardInterrupt:
        print("\nfailures: stopped" + (f"; the finished rows are in {args.output} and the same command resumes"
                                       if args.output else ""), file=sys.stderr)
        return 130
    if show:
        print(file=sys.stderr)
    healthy = rows[healthy_task.key]
    failed_rows = [rows[t.key] for t in tasks[1:]]
    summary = summarize_rows(healthy, failed_rows, algos)
    summary["seconds"] = round(time.perf_counter() - start, 2)
    summary["cached_syntheses"] = sum(int(r.get("cached") or 0) for r in [healthy] + failed_rows)
    summary["rows_from_cache"] = sum(1 for r in [healthy] + failed_rows if r.get("from_cache"))
    out = {"design": args.expr, "kind": kind, "k": k, "samples": args.samples, "seed": args.seed,
           "collective": collective, "algos": list(algos), "workload": work.as_dict(),
           "connectivity": connectivity(topo), "healthy": healthy, "rows": failed_rows, "summary": summary}
    if args.json:
        print(json_text(out))
        return 0
    _print(out, algos)
    return 0


def _print(out: dict, algos) -> None:
    healthy, rows = out["healthy"], out["rows"]
    head = f"{'failed':<34} {'conn':>4} {'optimum':>8} " + " ".join(f"{a[:10] + ' algbw':>17}" for a in algos)
    print(head)

    def line(r: dict) -> str:
        cells = []
        for a in algos:
            bw, base = r.get(f"{a}_algbw_GBps"), healthy.get(f"{a}_algbw_GBps")
            if bw is None:
                cells.append(f"{(r.get(f'{a}_status') or '-')[:17]:>17}")
            else:
                cells.append(f"{bw:>9.4g} ({bw / base:>5.0%})" if base else f"{bw:>17.4g}")
        opt = r.get("optimum_algbw_GBps")
        conn = {True: "yes", False: "NO"}.get(r["connected"], "err")
        return (f"{str(r['failed'])[:34]:<34} {conn:>4} "
                f"{'-' if opt is None else f'{opt:.4g}':>8} " + " ".join(cells))

    print(line(healthy))
    for r in rows:
        print(line(r))
        if r.get("what") and len(rows) <= 64:
            print(f"{'':<4}{r['what']}" + (f"; cuts off {r['cut_off']}" if r.get("cut_off") else ""))
    s = out["summary"]
    c = out["connectivity"]
    print(f"{s['sets']} failure sets of {out['k']} {out['kind']}; {s['disconnected']:.1%} disconnect the GPUs; the "
          f"design's node connectivity {c['node_connectivity']}, link connectivity {c['link_connectivity']}")
    exprs = {r["failed"]: r.get("expr") for r in rows}
    for a, v in s["per_synthesizer"].items():
        if v["healthy_algbw_GBps"] is None:
            print(f"{a}: no algbw on the healthy design ({v.get('healthy_status') or 'no row'}); {v['not_ok']} "
                  "connected sets it could not run")
            continue
        if v["median_algbw_fraction"] is None:
            print(f"{a}: healthy {v['healthy_algbw_GBps']:.4g} GB/s; no failure set it could run ({v['not_ok']} "
                  "connected sets it could not run)")
            continue
        print(f"{a}: healthy {v['healthy_algbw_GBps']:.4g} GB/s; median {v['median_algbw_fraction']:.1%}, worst "
              f"{v['worst_algbw_fraction']:.1%} of it ({v['worst_failure']}); {v['not_ok']} connected sets it "
              "could not run")
        if exprs.get(v["worst_failure"]):
            print(f"  the worst as a design (schedule, export): {exprs[v['worst_failure']]}")
    print(f"algbw: the runtime model at {out['workload']['label']} for M {out['workload']['bytes']:g} bytes, every "
          f"degraded fabric priced at the healthy design's scale; optimum: ForestColl's optimal allgather algbw "
          f"in the links' own GB/s; {s['rows_from_cache']} of {s['sets'] + 1} rows and {s['cached_syntheses']} "
          f"syntheses read from the results cache; {s['seconds']:.1f} s")
