"""Which exports the real runtimes would load: cases x runtime targets -> a bundle of checked files, or refused
with the limit it cannot meet (issue 22).

    python -m bench.export_matrix            # every case of the issue's acceptance list (N up to 256)
    python -m bench.export_matrix --quick    # N up to 64, no dgx_a100(boxes=4)
    python -m bench.export_matrix --jobs 2   # cases in parallel processes (default: one per CPU)
    python -m bench.export_matrix --kernels  # issue 38's list: six designs x six synthesizers, allreduce and
                                             # reduce-scatter, RCCL (whose kernels run only s, r, re, cpy, nop)
    python -m bench.export_matrix --coarsen  # issue 60's refused exports: before (the exact program's refusal),
                                             # now (the coarsened file), chunks, the limit's count and the loss

A case is (topology, synthesizer, collective); one that the synthesizer does not build is left out (its reason is
not an export matter). TE-CCL (``--algos teccl``) is tried up to 16 nodes with a 60 s solver limit. Each case is
exported as a bundle (``solvers.export.bundle``: one file per size range
and call placement, protocol and copies chosen by the runtime model at 0.7 us and 100 GB/s a node) for each
target; every file of an "ok" bundle passed ``check_xml`` for that target (the parser's rules, the target's
limits from ``solvers.export.TARGETS``, and the symbolic simulation). Columns: files in the bundle, the ranges
as protocol x copies, the largest threadblocks per rank and steps per threadblock of any file, the bundle's
size, the step types its files use (every one among the target's kernel steps, or check_xml would have refused
the file), whether the single-file export in place and out of place passed (``export``, checked the same
way), and the seconds to plan, lower, write, validate and simulate the bundle (retries included); "refused"
names the limit and by how much. Each bundle is built in one process (``jobs=1``; the cases run in parallel
instead); bench/export_speed.py times bundles built in worker processes.
"""
from __future__ import annotations

import argparse
import os
import time
from multiprocessing import Pool

from solvers.core.errors import NotApplicable, ScheduleError
from solvers.export import XmlError
from solvers.export.bundle import export_bundle
from solvers.export.program import STEP_TYPES as STEP_ORDER
from solvers.runtime import Execution
from solvers.synthesize import synthesize
from topologies import parse_topology

TARGETS = ("rccl", "msccl-executor")
ALGOS = ("ring", "bfb", "expansion", "forestcoll", "tacos", "ring_uni", "shifted_ring", "dbt", "rhd", "direct",
         "hierarchical")
COLLECTIVES = ("allgather", "reduce_scatter", "allreduce")
TECCL_MAX_NODES = 16            # TE-CCL "where it solves": its MILP within TECCL_TIME_S on these sizes
TECCL_TIME_S = 60.0
PRICES = Execution.alpha_beta(0.7, 100.0)
KERNEL_DESIGNS = ("ring(8)", "hypercube(4)", "gkautz(2,64)", "torus(8,8)", "dgx_a100(boxes=2)", "mi250(clusters=2)")
KERNEL_ALGOS = ("ring", "bfb", "forestcoll", "tacos", "hierarchical", "dbt")


def designs(quick: bool) -> list[str]:
    sizes = (8, 16, 32, 64) if quick else (8, 16, 32, 64, 128, 256)
    out = [f"gkautz({d},{n})" for d in (2, 4) for n in sizes if n > d]
    out += ["torus(8,8)", "hypercube(6)", "dgx_a100(boxes=2)", "mi250(clusters=2)"]
    if not quick:
        out.append("dgx_a100(boxes=4)")
    return out


def _single(topo, schedule, runtime: str) -> str:
    """The single-file export in place and out of place for ``runtime``: "ok/ok", or the first refusal."""
    from solvers.export import export

    out = []
    for in_place in (True, False):
        try:
            _, report = export(topo, schedule, runtime=runtime, in_place=in_place)
            out.append("ok" if report.ok else "FAILED")
        except (XmlError, NotApplicable) as exc:
            out.append(f"refused ({str(exc).splitlines()[0][:40]})")
    return "/".join(out)


def case_rows(case: tuple) -> list[tuple]:
    """Every collective and target of one (design, synthesizer[, collectives, targets])."""
    expr, algo, *rest = case
    collectives, targets = rest if rest else (COLLECTIVES, TARGETS)
    topo = parse_topology(expr)
    out = []
    if algo == "teccl" and topo.n > TECCL_MAX_NODES:
        return out
    for coll in collectives:
        try:
            options = {"time_limit": TECCL_TIME_S} if algo == "teccl" else None
            result = synthesize(topo, algo, coll, total_bytes=1e6, options=options)
        except (NotApplicable, ScheduleError):
            continue
        for runtime in targets:
            start = time.perf_counter()
            try:
                b = export_bundle(result.topology, result.schedule, runtime, execution=PRICES, jobs=1)
                ranges = "/".join(f"{c.proto}x{c.copies}" for c in b.plan.choices) if runtime != "msccl" else "-"
                used = {t for f in b.files for t in f.report.step_types}
                row = (len(b.files), ranges, max(f.report.tbs_per_rank for f in b.files),
                       max(f.report.steps_per_tb for f in b.files), sum(len(f.text) for f in b.files) / 1e3,
                       " ".join(t for t in STEP_ORDER if t in used), "ok")
            except (XmlError, NotApplicable) as exc:
                row = ("-", "-", "-", "-", "-", "-", f"refused: {str(exc).splitlines()[0]}")
            seconds = time.perf_counter() - start
            single = _single(result.topology, result.schedule, runtime)
            out.append((expr, algo, coll, runtime, topo.n, *row[:6], single, seconds, row[6]))
    return out


COARSEN_CASES = (("mi250(clusters=2)", "ring", "allreduce", ("rccl",)),
                 ("mi250(clusters=2)", "ring", "reduce_scatter", ("rccl",)),
                 ("random_regular_digraph(40, 3, seed 0)", "bfb", "allreduce", ("rccl", "msccl-executor", "msccl")))
COARSEN_BYTES = (1e6, 1e9)      # the studio's default M, and one where bandwidth dominates


def coarsen_rows() -> list[tuple]:
    """Issue 60's cases: (case, runtime, before, now, chunks, transfers, count / limit, loss at each of
    ``COARSEN_BYTES``, seconds of the coarsened export). ``before`` is the refusal of the exact program
    (``export(coarsen=False)``), ``now`` what ``export`` writes, checked again by ``check_xml``."""
    from bench.diameter import random_regular_digraph
    from solvers.export import OverLimit, check_xml, export
    from solvers.runtime import Workload

    out = []
    for expr, algo, coll, runtimes in COARSEN_CASES:
        topo = random_regular_digraph(40, 3, 0) if expr.startswith("random") else parse_topology(expr)
        result = synthesize(topo, algo, coll, total_bytes=1e6)
        for runtime in runtimes:
            try:
                export(result.topology, result.schedule, runtime=runtime, coarsen=False)
                before = "ok"
            except OverLimit as exc:
                before = f"refused: {f'{exc.reached:,}' if exc.reached else 'more than'} {exc.what} > {exc.limit:,}"
            start = time.perf_counter()
            try:
                text, report = export(result.topology, result.schedule, runtime=runtime)
            except OverLimit as exc:
                out.append((f"{expr} {algo} {coll}", runtime, before, f"refused: {exc}", "-", "-", "-", "-", 0.0))
                continue
            seconds = time.perf_counter() - start
            done = report.coarsened
            now = "ok" if check_xml(text, runtime=runtime).ok else "FAILED check-xml"
            if done is None:
                out.append((f"{expr} {algo} {coll}", runtime, before, now, "-", "-", "-", "-", seconds))
                continue
            from solvers.export.coarsen import merged, quantized

            coarse = (merged(result.schedule) if done.chunks[0] == done.chunks[1]
                      else quantized(result.schedule, done.chunks[1]))
            losses = []
            for m in COARSEN_BYTES:
                work = Workload(total_bytes=m)
                base = work.price(result.topology, result.schedule).time_us
                losses.append(f"{100 * (work.price(result.topology, coarse).time_us / base - 1):+.1f} %")
            out.append((f"{expr} {algo} {coll}", runtime, before, now, "{:,} -> {:,}".format(*done.chunks),
                        "{:,} -> {:,}".format(*done.transfers), f"{done.now:,} {done.what} / {done.limit:,}",
                        " / ".join(losses), seconds))
    return out


def main() -> None:
    parser = argparse.ArgumentParser(description=__doc__.splitlines()[0])
    parser.add_argument("--quick", action="store_true", help="N up to 64, no dgx_a100(boxes=4)")
    parser.add_argument("--jobs", type=int, default=os.cpu_count() or 1, help="parallel processes")
    parser.add_argument("--designs", default=None,
                        help="semicolon list of expressions instead of the acceptance list (e.g. to resume)")
    parser.add_argument("--kernels", action="store_true",
                        help="issue 38's list: " + "; ".join(KERNEL_DESIGNS) + " x " + ",".join(KERNEL_ALGOS)
                             + ", allreduce and reduce_scatter, rccl only")
    parser.add_argument("--algos", default=",".join(ALGOS),
                        help=f"comma list of synthesizers (default: {','.join(ALGOS)}; teccl runs up to "
                             f"{TECCL_MAX_NODES} nodes with a {TECCL_TIME_S:.0f} s limit)")
    parser.add_argument("--coarsen", action="store_true",
                        help="issue 60's refused exports, coarsened: before, now, chunks, count and loss")
    args = parser.parse_args()
    if args.coarsen:
        print("| case | runtime | before | now | chunks per shard | transfers | count / limit | loss at M = "
              + " / ".join(f"{m:g}" for m in COARSEN_BYTES) + " B | s |")
        print("|---|---|---|---|---|---|---|---|---|")
        for row in coarsen_rows():
            print("| " + " | ".join(str(x) for x in row[:-1]) + f" | {row[-1]:.1f} |", flush=True)
        return
    head = ("topology", "algo", "collective", "runtime", "N", "files", "ranges", "tbs/rank", "steps/tb", "KB",
            "step types", "single in/out", "bundle s", "status")
    print(f"{head[0]:<20} {head[1]:<13} {head[2]:<15} {head[3]:<15} {head[4]:>4} {head[5]:>5} {head[6]:<36} "
          f"{head[7]:>8} {head[8]:>8} {head[9]:>9} {head[10]:<16} {head[11]:<13} {head[12]:>8}  {head[13]}")
    algos = [a.strip() for a in args.algos.split(",") if a.strip()]
    chosen = designs(args.quick) if args.designs is None else [d.strip() for d in args.designs.split(";") if d.strip()]
    cases = [(expr, algo) for expr in chosen for algo in algos]
    if args.kernels:
        cases = [(expr, algo, ("allreduce", "reduce_scatter"), ("rccl",)) for expr in KERNEL_DESIGNS
                 for algo in KERNEL_ALGOS]
    counts = {"ok": 0, "refused": 0}
    files = 0
    slowest_256 = 0.0
    with Pool(max(1, args.jobs)) as pool:
        for rows in pool.imap(case_rows, cases):
            for expr, algo, coll, runtime, n, nfiles, ranges, tbs, steps, kb, types, single, seconds, status in rows:
                counts["ok" if status == "ok" else "refused"] += 1
                files += nfiles if status == "ok" else 0
                if n >= 256 and status == "ok":
                    slowest_256 = max(slowest_256, seconds)
                size = f"{kb:.0f}" if isinstance(kb, float) else kb
                print(f"{expr:<20} {algo:<13} {coll:<15} {runtime:<15} {n:>4} {nfiles!s:>5} {ranges:<36} "
                      f"{tbs!s:>8} {steps!s:>8} {size:>9} {types:<16} {single:<13} {seconds:>8.2f}  {status}",
                      flush=True)
    print(f"{counts['ok']} bundles ({files} files) load on their runtime, {counts['refused']} refused with the "
          "limit named")
    if slowest_256:
        print(f"slowest 256-rank bundle: {slowest_256:.1f} s")


if __name__ == "__main__":
    main()
