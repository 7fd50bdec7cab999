"""The command-line interface of DESIGN.md's CLI contract.

Every command takes an expression (``biring(8)``) or the path of a topology file (``.json``, ``.graphml``).
Bad input ends with one line on stderr and exit code 2; nothing prints a traceback for it.
"""
from __future__ import annotations

import argparse
import json
import sys
from fractions import Fraction

from solvers import ALGORITHMS, Collective, NotApplicable, ScheduleError, synthesize
from studio import genmodel_cli
from topologies import TopologyError, load, summarize

EXIT_BAD_INPUT = 2


class UsageError(Exception):
    pass


class _Parser(argparse.ArgumentParser):
    def error(self, message):            # one line instead of argparse's usage block
        raise UsageError(f"{self.prog}: {message}")


def _parser() -> argparse.ArgumentParser:
    p = _Parser(prog="python -m studio", description="Topology Studio: topologies and collective schedules.")
    sub = p.add_subparsers(dest="command", required=True, parser_class=_Parser)

    topo = sub.add_parser("topo", help="properties of a topology")
    topo.add_argument("expr", help="an expression such as 'biring(8)', or a .json/.graphml file")
    topo.add_argument("--json", action="store_true", help="print JSON")
    topo.add_argument("--max-nodes", type=int, default=None, help="refuse larger topologies (default 4096)")

    sched = sub.add_parser("schedule", help="synthesize, verify and cost a collective schedule")
    sched.add_argument("expr", help="an expression or a topology file")
    sched.add_argument("--algo", required=True, choices=sorted(ALGORITHMS), help="the synthesizer")
    sched.add_argument("--collective", default="allgather",
                       help="allgather | reduce_scatter | allreduce, and for teccl alltoall | custom "
                            "(default allgather)")
    sched.add_argument("--bytes", type=float, default=None, dest="total_bytes",
                       help="M, the full vector in bytes: adds time_us under the links' bandwidths and alphas")
    sched.add_argument("--json", action="store_true", help="print JSON")
    sched.add_argument("--max-nodes", type=int, default=None, help="refuse larger topologies (default 4096)")
    sched.add_argument("--progress", action="store_true",
                       help="report progress on stderr (on by default when stderr is a terminal)")
    sched.add_argument("--fixed-k", type=int, default=None, help="forestcoll: k trees per root (Algorithm 3)")
    _teccl_arguments(sched)
    _tacos_arguments(sched)
    sched.add_argument("--cost", default="alpha-beta", choices=["alpha-beta", "genmodel"],
                       help="runtime model for time_us: alpha-beta (default) or GenModel, which adds the incast, "
                            "reduction and memory terms (needs --bytes)")
    sched.add_argument("--genmodel-preset", default="middle_sw+server",
                       help="GenModel parameters for gamma, delta, epsilon and w_t (default: middle_sw+server, "
                            "the paper's Table 5)")

    export = sub.add_parser("export", help="lower a verified schedule to MSCCL XML (validated and simulated)")
    export.add_argument("expr", help="an expression or a topology file")
    export.add_argument("--algo", required=True, choices=sorted(ALGORITHMS), help="the synthesizer")
    export.add_argument("--collective", default="allgather",
                        help="allgather | reduce_scatter | allreduce | alltoall (teccl)")
    export.add_argument("--format", default="msccl", choices=["msccl"], help="the output format")
    export.add_argument("--dialect", default="executor", choices=["executor", "msccl"],
                        help="executor: MSCCL executor / RCCL (default); msccl: msccl-tools' attributes")
    export.add_argument("--proto", default="Simple", choices=["Simple", "LL", "LL128"])
    export.add_argument("--sm-budget", type=int, default=108, help="threadblocks per GPU that fit (default 108)")
    export.add_argument("--fixed-k", type=int, default=None, help="forestcoll: k trees per root (Algorithm 3)")
    _teccl_arguments(export)
    _tacos_arguments(export)
    export.add_argument("--place", default="default", choices=["default", "in", "out"],
                        help="serve the in-place or the out-of-place call (default: in place for allgather and "
                             "allreduce, out of place for reduce-scatter)")
    export.add_argument("-o", "--output", default=None, help="write here (default: standard output)")
    export.add_argument("--max-nodes", type=int, default=None, help="refuse larger topologies (default 4096)")

    a2a = sub.add_parser("alltoall", help="all-to-all throughput: the multi-commodity-flow LP (3)")
    a2a.add_argument("expr", help="an expression or a topology file")
    a2a.add_argument("--bytes", type=float, default=float(1 << 20), dest="total_bytes",
                     help="M, what every node sends in total (default 2^20 bytes)")
    a2a.add_argument("--bandwidth", type=float, default=12.5, help="B, node bandwidth in GB/s (default 12.5)")
    a2a.add_argument("--json", action="store_true", help="print JSON")
    a2a.add_argument("--max-nodes", type=int, default=None, help="refuse larger topologies (default 4096)")

    fnd = sub.add_parser("find", help="the Pareto frontier of (steps, tb_factor) topologies for N nodes, degree d")
    fnd.add_argument("--nodes", type=int, required=True, help="N, the number of nodes")
    fnd.add_argument("--degree", type=int, required=True, help="d, links per node")
    fnd.add_argument("--bidirectional", action="store_true", help="only bidirectional topologies (A.6)")
    fnd.add_argument("--exclude", default="", help="comma-separated base families or expansions to leave out, "
                     "e.g. circulant (reproduces Table 7 at N = 128 and 512)")
    fnd.add_argument("--alpha", type=float, default=10.0, help="alpha in microseconds for the times (default 10)")
    fnd.add_argument("--bytes", type=float, default=float(1 << 20), dest="total_bytes",
                     help="M in bytes for the times (default 2^20)")
    fnd.add_argument("--bandwidth", type=float, default=12.5, help="B, node bandwidth in GB/s (default 12.5)")
    fnd.add_argument("--json", action="store_true", help="print JSON")

    fc = sub.add_parser("forestcoll", help="ForestColl: optimal allgather throughput, bottleneck cut, k and trees")
    fc.add_argument("expr", help="an expression or a topology file")
    fc.add_argument("--fixed-k", type=int, default=None, help="k trees per root (Algorithm 3) instead of the optimum")
    fc.add_argument("--scan", type=int, default=0, metavar="K",
                    help="also the algbw of every fixed k = 1..K (searches only, no trees)")
    fc.add_argument("--json", action="store_true", help="print JSON")
    fc.add_argument("--max-nodes", type=int, default=None, help="refuse larger topologies (default 4096)")
    fc.add_argument("--progress", action="store_true",
                    help="report progress on stderr (on by default when stderr is a terminal)")

    genmodel_cli.add_parser(sub)

    cmp = sub.add_parser("compare", help="every applicable synthesizer on several designs, side by side")
    cmp.add_argument("exprs", nargs="+", metavar="EXPR", help="expressions or topology files")
    cmp.add_argument("--collective", action="append", default=None,
                     help="allgather | reduce_scatter | allreduce | alltoall; repeat it or give a comma list "
                          "(default allreduce)")
    cmp.add_argument("--bytes", type=float, default=1.0e6, dest="total_bytes", help="M in bytes (default 1e6)")
    cmp.add_argument("--alpha", type=float, default=None,
                     help="alpha in us; with --bandwidth, times are steps*alpha + tb*M/B (otherwise the links' own)")
    cmp.add_argument("--bandwidth", type=float, default=None, help="B, node bandwidth in GB/s (with --alpha)")
    cmp.add_argument("--budget", type=float, default=60.0, help="seconds for all runs; the rest are skipped")
    cmp.add_argument("--algos", default=None, help="comma list of synthesizers (default: all)")
    cmp.add_argument("--json", action="store_true", help="print JSON: {\"rows\": [...], \"winners\": [...]}")
    cmp.add_argument("--max-nodes", type=int, default=None, help="refuse larger topologies (default 4096)")
    cmp.add_argument("--progress", action="store_true",
                     help="report progress on stderr (on by default when stderr is a terminal)")

    check = sub.add_parser("check-xml", help="validate and simulate any MSCCL XML file")
    check.add_argument("file")
    check.add_argument("--dialect", default=None, choices=["executor", "msccl"],
                       help="the parser to check against (default: guessed from the attributes)")
    check.add_argument("--sm-budget", type=int, default=108)
    check.add_argument("--json", action="store_true", help="print JSON")
    return p


def _teccl_arguments(p) -> None:
    g = p.add_argument_group("teccl (time-expanded multi-commodity flow)")
    g.add_argument("--chunks", type=int, default=None,
                   help="chunks per GPU (allgather) or per pair (alltoall); default 1")
    g.add_argument("--epochs", type=int, default=None, help="K epochs (default: the smallest feasible K)")
    g.add_argument("--time-limit", type=float, default=None, help="seconds for all solves (default 60)")
    g.add_argument("--gap", type=float, default=None, help="relative MIP gap to stop at (default 1e-4)")
    g.add_argument("--method", default=None, choices=["auto", "milp", "lp"],
                   help="auto: MILP with copy for allgather, LP for alltoall and demand matrices")
    g.add_argument("--epoch", default=None,
                   help="epoch length: slowest (default) or fastest link's chunk time, or microseconds")
    g.add_argument("--demand", default=None, metavar="FILE",
                   help="a demand matrix (CSV of chunk counts, one row per source GPU) for --collective custom")
    g.add_argument("--switch-copy", action="store_true", help="switches copy (SHARP); default: they only forward")


def _tacos_arguments(p) -> None:
    g = p.add_argument_group("tacos (greedy link-chunk matching; --chunks is k, the chunks per NPU)")
    g.add_argument("--restarts", type=int, default=None, help="seeded greedy runs, the best kept (default 8)")
    g.add_argument("--seed", type=int, default=None, help="the first run's seed (default 0)")
    g.add_argument("--unwind", default=None,
                   help="switch unwinding degree: auto (default: full mesh for one-switch domains, ring "
                        "otherwise), max, or an integer")


def _tacos_options(args) -> dict | None:
    """The TACOS options given on the command line (None when there are none)."""
    opts = {}
    if args.algo == "tacos" and args.chunks is not None:
        opts["chunks"] = args.chunks
    if args.restarts is not None:
        if args.restarts < 1:
            raise UsageError("--restarts must be at least 1")
        opts["restarts"] = args.restarts
    if args.seed is not None:
        opts["seed"] = args.seed
    if args.unwind is not None:
        text = args.unwind.strip().lower()
        if text in ("auto", "max"):
            opts["unwind_degree"] = text
        elif text.isdigit() and int(text) >= 1:
            opts["unwind_degree"] = int(text)
        else:
            raise UsageError(f"--unwind takes auto, max or a positive integer, not {args.unwind!r}")
    return opts or None


def _teccl_options(args) -> dict | None:
    """The TE-CCL options given on the command line (None when there are none)."""
    from solvers.teccl import read_demand_matrix

    opts = {}
    keys = ("epochs", "time_limit", "gap", "method") if args.algo == "tacos" else \
        ("chunks", "epochs", "time_limit", "gap", "method")
    for key in keys:
        if getattr(args, key, None) is not None:
            opts[key] = getattr(args, key)
    if args.epoch is not None:
        if args.epoch in ("slowest", "fastest"):
            opts["epoch"] = args.epoch
        else:
            try:
                opts["epoch"] = Fraction(args.epoch)
            except (ValueError, ZeroDivisionError):
                raise UsageError(f"--epoch takes slowest, fastest or microseconds, not {args.epoch!r}") from None
    if args.demand is not None:
        try:
            with open(args.demand, encoding="utf-8") as fh:
                opts["matrix"] = read_demand_matrix(fh.read(100_000))
        except OSError as exc:
            raise UsageError(f"cannot read the demand file: {exc.strerror or exc}") from None
    if args.switch_copy:
        opts["switch_copy"] = True
    return opts or None


def _cmd_export(args) -> int:
    from solvers.msccl import XmlError, export

    topo = load(args.expr, max_nodes=args.max_nodes)
    result = synthesize(topo, args.algo, Collective.parse(args.collective), fixed_k=args.fixed_k,
                        teccl_options=_teccl_options(args), tacos_options=_tacos_options(args))
    try:           # result.topology: TACOS schedules the unwound fabric
        text, report = export(result.topology, result.schedule, args.dialect, args.sm_budget, proto=args.proto,
                              in_place={"default": None, "in": True, "out": False}[args.place],
                              name=f"{args.algo} {result.schedule.collective.value} {topo.name or topo.expr}")
    except XmlError as exc:
        raise UsageError(str(exc)) from None
    if args.output:
        with open(args.output, "w", encoding="utf-8") as fh:
            fh.write(text)
        print(f"wrote {args.output}: {report.ranks} ranks, {report.threadblocks} threadblocks, {report.steps} steps, "
              f"validated and simulated ({args.dialect} dialect)", file=sys.stderr)
    else:
        sys.stdout.write(text)
    return 0


def _cmd_alltoall(args) -> int:
    from solvers.alltoall import mcf_rate, moore_rate_bound

    if not (args.total_bytes > 0 and args.bandwidth > 0):
        raise UsageError("--bytes and --bandwidth must be positive")
    topo = load(args.expr, max_nodes=args.max_nodes)
    result = mcf_rate(topo)
    bound = moore_rate_bound(result.nodes, result.degree) if not topo.switch_nodes else None
    out = {"topology": topo.expr, "nodes": result.nodes, "degree": result.degree, "mcf_rate": result.f,
           "mcf_rate_upper": result.upper, "mcf_gap": result.gap, "method": result.method,
           "mcf_rate_bound": float(bound) if bound else None,
           "alltoall_time_us": result.time_us(args.total_bytes, args.bandwidth), "bytes": args.total_bytes,
           "bandwidth_gbs": args.bandwidth, "solve_seconds": result.seconds}
    if args.json:
        print(json.dumps(out))
    else:
        _print_table(out)
    return 0


def _cmd_find(args) -> int:
    from solvers.finder import Finder, bound, diameter_of
    from solvers.selection import best_index, collective_time_us

    if not (args.total_bytes > 0 and args.bandwidth > 0 and args.alpha >= 0):
        raise UsageError("--bytes and --bandwidth must be positive and --alpha non-negative")
    exclude = [x.strip() for x in args.exclude.split(",") if x.strip()]
    front = Finder(exclude).frontier(args.nodes, args.degree, args.bidirectional)
    rows = []
    for c in front:
        row = {**c.as_dict(), "diameter": diameter_of(c),
               "allreduce_us": collective_time_us(c.steps, c.tb, args.alpha, args.total_bytes, args.bandwidth)}
        rows.append(row)
    if rows:
        rows[best_index([r["allreduce_us"] for r in rows])]["recommended"] = True
    if args.json:
        print(json.dumps(rows))
        return 0
    steps, tb = bound(args.nodes, args.degree, args.bidirectional)
    print(f"{'steps':>5} {'tb_factor':>10} {'D':>3} {'allreduce us':>12}  topology")
    for r in rows:
        mark = "  <- best allreduce" if r.get("recommended") else ""
        print(f"{r['steps']:>5} {r['tb_factor']:>10.6f} {r['diameter']!s:>3} {r['allreduce_us']:>12.1f}  "
              f"{r['name']}   [{r['expr']}]{mark}")
    print(f"bound: {steps} steps (Moore), tb {float(tb):.6f}; times for alpha {args.alpha} us, "
          f"M {args.total_bytes:g} B, B {args.bandwidth} GB/s")
    return 0


def _cmd_check_xml(args) -> int:
    from solvers.msccl import check_xml

    try:
        with open(args.file, encoding="utf-8") as fh:
            text = fh.read(64 * 1024 * 1024 + 1)
    except (OSError, UnicodeDecodeError) as exc:
        raise UsageError(f"cannot read {args.file}: {exc}") from None
    if len(text) > 64 * 1024 * 1024:
        raise UsageError(f"{args.file} is larger than 64 MiB")
    report = check_xml(text, args.dialect, args.sm_budget)
    if args.json:
        print(json.dumps({"ok": report.ok, "dialect": report.dialect, "problems": report.problems,
                          "ranks": report.ranks, "threadblocks": report.threadblocks, "steps": report.steps}))
    elif report.ok:
        print(f"ok: {report.ranks} ranks, {report.threadblocks} threadblocks, {report.steps} steps "
              f"({report.dialect} dialect): the parser's rules hold and the simulation ends in the collective")
    else:
        print(f"rejected: {report.first}", file=sys.stderr)
    return 0 if report.ok else 1


def _progress_printer():
    """Progress lines on stderr: overwritten in place on a terminal, one line per 10% otherwise."""
    tty = sys.stderr.isatty()
    last: dict[str, int] = {}

    def show(phase: str, fraction: float) -> None:
        pct = int(fraction * 100)
        if tty:
            print(f"\r{phase}: {pct:3d}%", end="\n" if pct >= 100 else "", file=sys.stderr, flush=True)
        elif pct // 10 != last.get(phase, -1):
            last[phase] = pct // 10
            print(f"{phase}: {pct}%", file=sys.stderr, flush=True)
    return show


def _print_table(rows: dict) -> None:
    width = max(len(k) for k in rows)
    for k, v in rows.items():
        print(f"{k.ljust(width)}  {v}")


def _cmd_topo(args) -> int:
    summary = summarize(load(args.expr, max_nodes=args.max_nodes)).as_dict()
    if args.json:
        print(json.dumps(summary))
    else:
        _print_table(summary)
    return 0


def _cmd_schedule(args) -> int:
    collective = Collective.parse(args.collective)
    if args.total_bytes is not None and not args.total_bytes > 0:
        raise UsageError("--bytes must be positive")
    if args.cost == "genmodel" and args.total_bytes is None:
        raise UsageError("--cost genmodel needs --bytes (the vector size it prices)")
    params = _genmodel_params(args.genmodel_preset) if args.cost == "genmodel" else None
    topo = load(args.expr, max_nodes=args.max_nodes)
    progress = _progress_printer() if (args.progress or sys.stderr.isatty()) else None
    result = synthesize(topo, args.algo, collective, progress=progress, total_bytes=args.total_bytes,
                        fixed_k=args.fixed_k, teccl_options=_teccl_options(args),
                        tacos_options=_tacos_options(args))
    out = result.as_dict(args.total_bytes)
    out["cost_model"] = args.cost
    if params is not None:
        from solvers.genmodel import genmodel_time_us

        priced = genmodel_time_us(result.topology, result.schedule, args.total_bytes, params)
        out["genmodel_time_us"] = priced["total_us"]
        out["genmodel_terms_us"] = {k: priced[f"{k}_us"] for k in ("alpha", "beta", "gamma", "delta", "epsilon")}
        out["genmodel_preset"] = args.genmodel_preset
    if args.json:
        print(json.dumps(out))
    else:
        bound = result.cost.tb_lower_bound
        ratio = f"{float(result.cost.tb_factor / bound):.4f}" if bound else "-"
        table = {k: v for k, v in out.items() if k not in ("teccl", "tacos", "genmodel_terms_us")}
        for k, v in out.get("genmodel_terms_us", {}).items():
            table[f"genmodel {k}_us"] = v
        if "tacos" in out:
            t = out["tacos"]
            table.update({"tacos chunks": t["chunks"], "tacos chunk_bytes": t["chunk_bytes"],
                          "tacos restarts": t["restarts"], "tacos gap to bound": f"{100 * t['gap']:.2f} %",
                          "tacos synthesis_s": round(t["synthesis_s"], 3)})
        if "teccl" in out:
            t = out["teccl"]
            table.update({f"teccl {k}": t[k] for k in ("method", "epochs", "finish_epochs", "epoch_us", "status",
                                                        "gap", "minimal_epochs_proven", "solver_seconds")
                          if k in t})
        _print_table({**table, "tb_factor / bound": ratio,
                      "tb_factor_exact": str(Fraction(out["tb_factor_exact"]))})
    return 0


def _genmodel_params(name: str):
    from solvers.genmodel import PRESETS

    if name not in PRESETS:
        raise UsageError(f"unknown GenModel preset {name!r} (choose from {', '.join(sorted(PRESETS))})")
    return PRESETS[name]


def _cmd_forestcoll(args) -> int:
    from solvers.forestcoll import MAX_FIXED_K, forestcoll
    from solvers.forestcoll.search import fabric, fixed_k_algbw
    from solvers.verify import verify

    if not 0 <= args.scan <= MAX_FIXED_K:
        raise UsageError(f"--scan must be between 0 and {MAX_FIXED_K}")
    topo = load(args.expr, max_nodes=args.max_nodes)
    progress = _progress_printer() if (args.progress or sys.stderr.isatty()) else None
    forest = forestcoll(topo, args.fixed_k, progress=progress)
    verify(topo, forest.allgather()).raise_if_failed()
    out = {**forest.as_dict(), "verified": True}
    if args.scan:
        fab = fabric(topo)
        out["scan"] = [{"k": k, "algbw_GBps": float(fixed_k_algbw(fab, k))} for k in range(1, args.scan + 1)]
    if args.json:
        print(json.dumps(out))
    else:
        bottleneck = out.pop("bottleneck")
        _print_table({**out, "bottleneck outside": ", ".join(bottleneck["outside"][:12])
                      + (" ..." if len(bottleneck["outside"]) > 12 else ""),
                      "bottleneck egress_GBps": bottleneck["egress_GBps"]})
    return 0


def _cmd_compare(args) -> int:
    from solvers.compare import compare

    colls = [c.strip() for text in (args.collective or ["allreduce"]) for c in text.split(",") if c.strip()]
    algos = [a for a in args.algos.split(",") if a.strip()] if args.algos is not None else None
    topos = [load(e, max_nodes=args.max_nodes) for e in args.exprs]
    progress = _progress_printer() if (args.progress or sys.stderr.isatty()) else None
    result = compare(topos, colls, args.total_bytes, args.alpha, args.bandwidth, args.budget, algos, progress)
    out = result.as_dict()
    if args.json:
        print(json.dumps(out))
        return 0
    print(f"{'design':<22} {'collective':<14} {'algo':<12} {'steps':>5} {'tb_factor':>10} {'time_us':>11} "
          f"{'algbw':>9} {'synth_s':>8} {'xml':>4}  status")
    for r in out["rows"]:
        numbers = " " * 52
        if r["status"] in ("ok", "bound"):
            xml = {None: "-", True: "yes", False: "no"}[r["exportable"]]
            numbers = (f"{r['steps']:>5} {r['tb_factor']:>10.6f} {r['time_us']:>11.2f} {r['algbw_GBps'] or 0:>9.4f} "
                       f"{r['synthesis_s'] or 0:>8.2f} {xml:>4}")
        print(f"{r['name'][:22]:<22} {r['collective']:<14} {r['algo']:<12} {numbers}  {r['status']}"
              + (" (verified)" if r["verified"] else ""))
    w = out["winners_model"]
    print(f"fastest (alpha {w['alpha_us']:g} us, B {w['bandwidth_gbs']:g} GB/s, "
          f"M {w['from_bytes']:g}..{w['to_bytes']:g} B):")
    for x in out["winners"]:
        print(f"  {x['collective']:<14} M {x['from_bytes']:>10.4g} .. {x['to_bytes']:<10.4g} {x['algo']} on "
              f"{x['name']}")
    model = "steps*alpha + tb*M/B" if result.time_model == "alpha-beta" else "the links' own alphas and bandwidths"
    print(f"time_us for M = {args.total_bytes:g} bytes under {model}; {result.elapsed_s:.1f} s of a "
          f"{args.budget:g} s budget")
    return 0


COMMANDS = {"genmodel": genmodel_cli.run, "topo": _cmd_topo, "forestcoll": _cmd_forestcoll, "schedule": _cmd_schedule, "export": _cmd_export, "check-xml": _cmd_check_xml,
            "alltoall": _cmd_alltoall, "find": _cmd_find, "compare": _cmd_compare}


def main(argv: list[str] | None = None) -> int:
    try:
        args = _parser().parse_args(argv)
        return COMMANDS[args.command](args)
    except (UsageError, TopologyError, NotApplicable, ValueError) as exc:
        # ScheduleError is a ValueError too: a synthesizer produced a schedule that failed verification.
        kind = "schedule failed verification" if isinstance(exc, ScheduleError) else "error"
        print(f"{kind}: {exc}", file=sys.stderr)
        return EXIT_BAD_INPUT
    except KeyboardInterrupt:
        print("interrupted", file=sys.stderr)
        return 130
    except (RecursionError, MemoryError) as exc:
        print(f"error: the request is too large to process ({type(exc).__name__})", file=sys.stderr)
        return EXIT_BAD_INPUT
