"""``topo``, ``alltoall``, ``find`` and ``forestcoll``: the commands about a design itself - its properties,
its all-to-all throughput, the Finder's frontier and ForestColl's optimal throughput."""
from __future__ import annotations


from topologies import load, summarize

from .common import (UsageError, cache_parent, design_parent, json_parent, json_text, print_table, progress_for,
                     progress_parent, workload_from, workload_parent)


def add_parsers(sub) -> None:
    design, as_json, progress, work = design_parent(), json_parent(), progress_parent(), workload_parent()

    sub.add_parser("topo", parents=[design, as_json], help="properties of a topology")

    a2a = sub.add_parser("alltoall", parents=[design, as_json, work, progress, cache_parent()],
                         help="all-to-all throughput: the multi-commodity-flow LP (3); its time for M (what every "
                              "node sends in total) at a node bandwidth B")
    a2a.add_argument("--time-limit", type=float, default=None, metavar="S",
                     help="seconds for the solve (default 600 for PDLP, 55 for Frank-Wolfe from 513 nodes); "
                          "either method answers with the certified bracket it has when they run out")
    a2a.add_argument("--method", choices=("auto", "fw", "pdlp", "ipm"), default="auto",
                     help="fw (Frank-Wolfe bracket), pdlp (HiGHS PDLP bracket) or ipm (exact, small fabrics); "
                          "auto: pdlp below 513 nodes, fw from there")

    fnd = sub.add_parser("find", parents=[as_json, work, cache_parent()],
                         help="the Pareto frontier of (steps, tb_factor) topologies for N nodes, degree d")
    fnd.add_argument("--nodes", type=int, required=True, help="N, the number of nodes")
    fnd.add_argument("--degree", type=int, required=True, help="d, links per node")
    fnd.add_argument("--bidirectional", action="store_true", help="only bidirectional topologies (A.6)")
    fnd.add_argument("--exclude", default="", help="comma-separated base families or expansions to leave out, "
                     "e.g. circulant (reproduces Table 7 at N = 128 and 512)")

    fc = sub.add_parser("forestcoll", parents=[design, as_json, progress, cache_parent()],
                        help="ForestColl: optimal allgather throughput, bottleneck cut, k and trees")
    fc.add_argument("--fixed-k", type=int, default=None, help="k trees per root (Algorithm 3) instead of the optimum")
    fc.add_argument("--scan", type=int, default=0, metavar="K",
                    help="also the algbw of every fixed k = 1..K (searches only, no trees)")


def topo(args) -> int:
    from topologies.expression import DEFAULT_MAX_NODES
    from topologies.imports import is_import, read_import

    imported = None
    if is_import(args.expr):        # a machine's own description: say what the import assumed and read past
        imported = read_import(args.expr, max_nodes=args.max_nodes or DEFAULT_MAX_NODES)
        summary = {**summarize(imported.topology).as_dict(), **imported.as_dict()}
    else:
        summary = summarize(load(args.expr, max_nodes=args.max_nodes)).as_dict()
    if args.json:
        print(json_text(summary))
        return 0
    extra = {k: summary.pop(k) for k in ("assumed", "notes") if k in summary}
    print_table(summary)
    for key, lines in extra.items():
        for line in lines:
            print(f"{key}: {line}")
    return 0


def alltoall(args) -> int:
    import sys

    from solvers.directconnect.alltoall import mcf_rate, moore_rate_bound

    work = workload_from(args)
    if work.prices == "links":
        raise UsageError("the all-to-all time is M / (rate x B): give uniform or calibrated prices, not links")
    if args.time_limit is not None and not 0 < args.time_limit <= 86400:
        raise UsageError("--time-limit must be between 0 and 86400 seconds")
    topology = load(args.expr, max_nodes=args.max_nodes)
    say = (lambda line: print(line, file=sys.stderr, flush=True)) if args.progress or sys.stderr.isatty() else None
    result = mcf_rate(topology, args.time_limit, None if args.method == "auto" else args.method, progress=say)
    bound = moore_rate_bound(result.nodes, result.degree) if not topology.switch_nodes else None
    out = {"topology": topology.expr, "nodes": result.nodes, "degree": result.degree, "mcf_rate": result.f,
           "mcf_rate_upper": result.upper, "mcf_gap": result.gap, "mcf_gap_reached": result.reached,
           "method": result.method, "mcf_rate_bound": float(bound) if bound else None,
           "alltoall_time_us": result.time_us(work.total_bytes, work.bandwidth_gbs), "bytes": work.total_bytes,
           "bandwidth_gbs": work.bandwidth_gbs, "prices": work.price_label, "solve_seconds": result.seconds}
    if args.json:
        print(json_text(out))
    else:
        print_table(out)
        if not result.reached:
            print(f"bracket [{result.f:.6g}, {result.upper:.6g}] after {result.seconds:.0f} s (time limit): "
                  f"mcf_rate is the certified lower end, the optimum is at most {result.upper:.6g}")
    return 0


def find(args) -> int:
    from solvers.directconnect.finder import Finder, bound, diameter_of
    from solvers.directconnect.pricing import RUNTIME_MAX_NODES, RUNTIME_MODEL, price_frontier
    from solvers.directconnect.selection import SizeMix, step_model_time_us

    work = workload_from(args)
    exclude = [x.strip() for x in args.exclude.split(",") if x.strip()]
    front = Finder(exclude).frontier(args.nodes, args.degree, args.bidirectional)
    rows = [{**c.as_dict(), "diameter": diameter_of(c)} for c in front]
    prices, best = price_frontier(rows, "allreduce", SizeMix.single(work.total_bytes), work=work)
    for row, p in zip(rows, prices):
        row.update(p.as_dict())
    if rows:
        rows[best]["recommended"] = True
    if args.json:
        print(json_text(rows))
        return 0
    steps, tb = bound(args.nodes, args.degree, args.bidirectional)
    model = prices[best].model if rows else RUNTIME_MODEL
    print(f"{'steps':>5} {'tb_factor':>10} {'of':>9} {'D':>3} {'runtime us':>18} {'step model us':>13}  topology")
    for r in rows:
        mark = f"  <- best allreduce ({model})" if r.get("recommended") else ""
        runtime = "-" if r["runtime_us"] is None else f"{r['runtime_us']:.1f} ({r['runtime_algo']})"
        print(f"{r['steps']:>5} {r['tb_factor']:>10.6f} {r['schedule']:>9} {r['diameter']!s:>3} {runtime:>18} "
              f"{r['step_model_us']:>13.1f}  {r['name']}   [{r['expr']}]{mark}")
    print(f"bound: {steps} steps (Moore), tb {float(tb):.6f}, step model "
          f"{step_model_time_us(steps, tb, work.alpha_us, work.total_bytes, work.bandwidth_gbs):.1f} us; allreduce "
          f"times for M {work.total_bytes:g} B with {work.price_label}")
    print(f"of: steps and tb of the expansion theorems' schedule, or of BFB run on the built graph where that does "
          f"better; runtime us: the runtime model of the best verified schedule (expansion or bfb, named), up to "
          f"{RUNTIME_MAX_NODES} nodes; step model us: steps * alpha + tb * M/B, doubled (the paper's Table 4)")
    return 0


def forestcoll(args) -> int:
    from solvers.core.verify import verify
    from solvers.forestcoll import MAX_FIXED_K, forestcoll as pack
    from solvers.forestcoll.search import fabric, fixed_k_algbw

    if not 0 <= args.scan <= MAX_FIXED_K:
        raise UsageError(f"--scan must be between 0 and {MAX_FIXED_K}")
    topology = load(args.expr, max_nodes=args.max_nodes)
    forest = pack(topology, args.fixed_k, progress=progress_for(args))
    verify(topology, forest.allgather()).raise_if_failed()
    out = {**forest.as_dict(), "verified": True}
    if args.scan:
        fab = fabric(topology)
        out["scan"] = [{"k": k, "algbw_GBps": float(fixed_k_algbw(fab, k))} for k in range(1, args.scan + 1)]
    if args.json:
        print(json_text(out))
    else:
        bottleneck = out.pop("bottleneck")
        print_table({**out, "bottleneck outside": ", ".join(bottleneck["outside"][:12])
                     + (" ..." if len(bottleneck["outside"]) > 12 else ""),
                     "bottleneck egress_GBps": bottleneck["egress_GBps"]})
    return 0


COMMANDS = {"topo": topo, "alltoall": alltoall, "find": find, "forestcoll": forestcoll}
