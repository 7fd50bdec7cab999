"""``schedule``, ``export``, ``compare`` and ``check-xml``: the commands that synthesize, verify, price and export
schedules. Every synthesizer and its flags come from the registry (``studio.cli.synth_flags``). ``allreduce-lp``
(ForestColl's allreduce LP beside RS+AG) lives in ``allreduce_lp.py`` and is added here."""
from __future__ import annotations

import sys
from fractions import Fraction

from solvers import Collective
from solvers.results_cache import ENV, ResultsCache, cached_synthesize, code_version
from topologies import load

import studio.cli.allreduce_lp as allreduce_lp
from .common import (UsageError, add_output_arguments, cache_parent, check_output, design_parent, json_parent, json_text,
                     print_table, progress_for, progress_parent, read_log, workload_from, workload_parent,
                     write_atomically)
from .export_input import root_of, schedule_for_export
from .synth_flags import add_synthesizer_arguments, options_for


def add_parsers(sub) -> None:
    design, as_json, progress, work = design_parent(), json_parent(), progress_parent(), workload_parent()

    sched = sub.add_parser("schedule", parents=[design, as_json, progress, work, cache_parent()],
                           help="synthesize, verify and cost a collective schedule, timed by the runtime model "
                                "for the workload (--bytes, --prices)")
    sched.add_argument("--collective", default="allgather",
                       help="allgather | reduce_scatter | allreduce | broadcast | reduce | gather | scatter, and for "
                            "teccl alltoall | custom (default allgather)")
    sched.add_argument("--root", default=None, metavar="R",
                       help="the root of broadcast, reduce, gather or scatter: a rank (0..N-1) or a GPU's name "
                            "(default 0)")
    sched.add_argument("--tenants", default=None, metavar="FILE",
                       help="several collectives at once on the design: a JSON or YAML list of {name, collective, "
                            "root, bytes}; each verified, all timed together (replaces --collective)")
    sched.add_argument("--mode", default=None, choices=["joint", "separate"],
                       help="with --tenants: joint (one synthesis over every tenant's chunks: tacos, tacos_ilp, "
                            "taccl_like; their default) or separate (each alone, then laid over the others)")
    sched.add_argument("--cost", default="runtime", choices=["runtime", "genmodel"],
                       help="runtime (default) or GenModel, which adds genmodel_time_us with the incast, "
                            "reduction and memory terms as a second figure")
    sched.add_argument("--genmodel-preset", default="middle_sw+server",
                       help="GenModel parameters for gamma, delta, epsilon and w_t (default: middle_sw+server, "
                            "the paper's Table 5)")
    add_synthesizer_arguments(sched)

    cache = sub.add_parser("cache", help="the results cache: where it is and what it holds, or clear it")
    cache.add_argument("action", choices=["info", "clear"])

    export = sub.add_parser("export", parents=[design, progress, as_json, work],
                            help="lower a verified schedule to MSCCL XML (validated and simulated)")
    export.add_argument("--collective", default="allgather",
                        help="allgather | reduce_scatter | allreduce | broadcast | reduce | gather | scatter | "
                             "alltoall (teccl)")
    export.add_argument("--root", default=None, metavar="R",
                        help="the root of a rooted collective: a rank or a GPU's name (default 0). MSCCL XML has no "
                             "root: the file serves calls with this root only, and says so in its name (root=R). "
                             "broadcast and reduce run on every runtime; gather and scatter on rccl only")
    export.add_argument("--tenants", default=None, metavar="FILE",
                        help="several collectives at once (a JSON or YAML list of {name, collective, root, bytes}): "
                             "one MSCCL file per tenant, in the zip -o names")
    export.add_argument("--mode", default=None, choices=["joint", "separate"],
                        help="with --tenants: joint (tacos, tacos_ilp, taccl_like, teccl) or separate")
    export.add_argument("--format", default="msccl", choices=["msccl", "bundle", "mscclpp", "nccl-graph", "chakra"],
                        help="msccl: one MSCCL XML file; bundle: a zip (needs -o) with one checked file per size "
                             "range and call placement, protocol and copies chosen with the runtime model, and a "
                             "README saying how to load it; mscclpp: an MSCCL++ execution plan (JSON) of the same "
                             "program, checked by check-plan's reader and simulator; nccl-graph: one host's rings "
                             "and trees (--algo ring or dbt) as an NCCL graph file for plain NCCL/RCCL "
                             "(NCCL_GRAPH_FILE), read back and checked; chakra: Chakra execution traces, one "
                             "DIR/<name>.<rank>.et per GPU (-o names a new or empty folder; a non-empty one is "
                             "refused), with ASTRA-sim's network, system and workload inputs, read back and checked")
    export.add_argument("--runtime", default=None, choices=["rccl", "msccl-executor", "msccl"],
                        help="the runtime that loads the file, whose reader limits and kernel step types it must "
                             "meet: rccl (AMD; 64 steps per threadblock, 64 threadblocks per rank, no fused "
                             "receive steps), msccl-executor (msccl-executor-nccl on NVIDIA's NCCL), msccl (the "
                             "original runtime, msccl-tools' dialect; the default with --dialect msccl). Default: "
                             "rccl for AMD fabrics (mi250), msccl-executor for NVIDIA fabrics and direct-connect "
                             "designs")
    export.add_argument("--dialect", default=None, choices=["executor", "msccl"],
                        help="the attribute dialect (default: the runtime's; executor for rccl and msccl-executor)")
    export.add_argument("--proto", default="Simple", choices=["Simple", "LL", "LL128"])
    export.add_argument("--sm-budget", type=int, default=108, help="threadblocks per GPU that fit (default 108)")
    export.add_argument("--place", default="default", choices=["default", "in", "out"],
                        help="serve the in-place or the out-of-place call (default: in place for allgather, "
                             "allreduce, broadcast and reduce, out of place for reduce-scatter; gather and scatter "
                             "are out of place only)")
    export.add_argument("--copies", type=int, default=1,
                        help="msccl: copies of the program, each on its own threadblocks and channels with 1/c of "
                             "every shard (default 1; a bundle chooses per size range)")
    export.add_argument("--instances", type=int, default=1,
                        help="msccl: pieces of every chunk that the same threadblocks pipeline (default 1)")
    export.add_argument("--jobs", type=int, default=None,
                        help="bundle: processes that build its programs at once (default: one per CPU for a "
                             "schedule of 10,000 transfers or more, else 1)")
    add_output_arguments(export, "write here (default: standard output)")
    add_synthesizer_arguments(export)

    cmp = sub.add_parser("compare", parents=[as_json, progress, work, cache_parent()],
                         help="every applicable synthesizer on several designs, side by side")
    cmp.add_argument("exprs", nargs="+", metavar="EXPR", help="expressions or topology files")
    cmp.add_argument("--collective", action="append", default=None,
                     help="allgather | reduce_scatter | allreduce | alltoall | broadcast | reduce | gather | "
                          "scatter; repeat it or give a comma list (default allreduce)")
    cmp.add_argument("--root", default=None, metavar="R",
                     help="the root of the rooted collectives: a rank or a GPU's name (default 0)")
    cmp.add_argument("--tenants", default=None, metavar="FILE",
                     help="several collectives at once on one EXPR (a JSON or YAML list of {name, collective, root, "
                          "bytes}): each synthesizer's makespan, normalized to the first (TACOS Table V)")
    cmp.add_argument("--budget", type=float, default=60.0, help="seconds for all runs; the rest are skipped")
    cmp.add_argument("--algos", default=None, help="comma list of synthesizers (default: all)")
    cmp.add_argument("--max-nodes", type=int, default=None, help="refuse larger topologies (default 4096)")
    cmp.add_argument("--measured", default=None, metavar="LOG",
                     help="an nccl-tests / rccl-tests log of the one EXPR's machine: alpha and B are fitted to it "
                          "(--measured-algo's schedule), every time is priced with them, and each synthesizer's "
                          "model busbw is set beside the measured one at the log's sizes (--json: 'measured')")
    cmp.add_argument("--measured-algo", default="ring",
                     help="the schedule the measured library ran, to fit the log with (default ring, NCCL's rings)")
    cmp.add_argument("--plot", default=None, metavar="PNG",
                     help="with --measured: write the measured-vs-model busbw figure here as a PNG (kaleido, "
                          "Debian's chromium)")
    cmp.add_argument("--force", action="store_true",
                     help="with --plot: write through a symbolic link, or into a device or FIFO (refused otherwise)")

    allreduce_lp.add_parser(sub)       # ForestColl's allreduce LP (App. E) beside RS+AG

    plan = sub.add_parser("check-plan", parents=[as_json],
                          help="validate and simulate an MSCCL++ execution plan (JSON)")
    plan.add_argument("file")
    plan.add_argument("--sm-budget", type=int, default=108)

    check = sub.add_parser("check-xml", parents=[as_json], help="validate and simulate any MSCCL XML file")
    check.add_argument("file")
    check.add_argument("--runtime", default=None, choices=["rccl", "msccl-executor", "msccl"],
                       help="check against this runtime's reader limits and kernel step types (default: the "
                            "strictest runtime of the file's dialect that runs its step types: rccl for the "
                            "executor dialect, msccl-executor when the file has fused receive steps (rcs, rrs, rrc, "
                            "rrcs), which RCCL's kernels lack; msccl for msccl-tools')")
    check.add_argument("--dialect", default=None, choices=["executor", "msccl"],
                       help="the parser to check against (default: guessed from the attributes)")
    check.add_argument("--sm-budget", type=int, default=108)
    check.add_argument("--root", type=int, default=None, metavar="R",
                       help="a broadcast, reduce, gather or scatter file: simulate it for root rank R (default: the "
                            "root=R its algo name carries, as export writes it; MSCCL XML has no root attribute)")


def schedule(args) -> int:
    if args.tenants is not None:
        from .tenants import schedule as tenants_schedule

        return tenants_schedule(args)
    if args.mode is not None:
        raise UsageError("--mode goes with --tenants")
    collective = Collective.parse(args.collective)
    work = workload_from(args)
    params = _genmodel_params(args.genmodel_preset) if args.cost == "genmodel" else None
    topo = load(args.expr, max_nodes=args.max_nodes)
    store = ResultsCache.default()
    root = root_of(args, collective)
    result, hit = cached_synthesize(topo, args.algo, collective, cache=store, refresh=args.no_cache,
                                    total_bytes=work.total_bytes, options=options_for(args, args.algo),
                                    progress=progress_for(args), root=root)
    if hit is not None:
        print(f"answered from the results cache (solved {hit.age_text()} ago; --no-cache solves again)",
              file=sys.stderr)
    out = result.as_dict(workload=work)
    out["cost_model"] = args.cost
    if params is not None:
        from solvers.genmodel import genmodel_time_us

        priced = genmodel_time_us(result.topology, result.schedule, work.total_bytes, params)
        out["genmodel_time_us"] = priced["total_us"]
        out["genmodel_terms_us"] = {k: priced[f"{k}_us"] for k in ("alpha", "beta", "gamma", "delta", "epsilon")}
        out["genmodel_preset"] = args.genmodel_preset
    if args.json:
        print(json_text(out))
        return 0
    bound = result.cost.tb_lower_bound
    ratio = f"{float(result.cost.tb_factor / bound):.4f}" if bound else "-"
    hidden = ("genmodel_terms_us",) + (result.detail.hidden_text_keys() if result.detail else ())
    table = {k: v for k, v in out.items() if k not in hidden}
    for k, v in out.get("genmodel_terms_us", {}).items():
        table[f"genmodel {k}_us"] = v
    if result.detail is not None:
        table.update(result.detail.text_rows(out))
    print_table({**table, "tb_factor / bound": ratio, "tb_factor_exact": str(Fraction(out["tb_factor_exact"]))})
    return 0


def _genmodel_params(name: str):
    from solvers.genmodel import PRESETS

    if name not in PRESETS:
        raise UsageError(f"unknown GenModel preset {name!r} (choose from {', '.join(sorted(PRESETS))})")
    return PRESETS[name]


def export(args) -> int:
    from solvers.core.errors import NotApplicable
    from solvers.export import XmlError, export as to_msccl

    if args.tenants is not None:
        from .tenants import export as tenants_export

        return tenants_export(args)
    if args.mode is not None:
        raise UsageError("--mode goes with --tenants")
    if args.format == "chakra":
        from .chakra_export import export_chakra

        return export_chakra(args)
    if args.json and args.format != "msccl":
        raise UsageError("--json prints the summary of one MSCCL file (--format msccl)")
    if args.format == "bundle":
        return _export_bundle(args)
    if args.format == "mscclpp":
        return _export_plan(args)
    if args.format == "nccl-graph":
        return _export_graph(args)
    work = workload_from(args)
    result, name, in_place = schedule_for_export(args, work)
    try:           # result.topology: TACOS schedules the unwound fabric; a coarsening is priced for the workload
        text, report = to_msccl(result.topology, result.schedule, args.dialect, args.sm_budget, args.runtime,
                                proto=args.proto, copies=args.copies, instances=args.instances, in_place=in_place,
                                name=name, workload=work)
    except (XmlError, NotApplicable) as exc:
        raise UsageError(str(exc)) from None
    if args.json and not args.output:
        raise UsageError("--json prints a summary of the file: give -o FILE for the file itself")
    if args.output:
        write_atomically(args.output, text.encode("utf-8"))
    else:
        sys.stdout.write(text)
    where = args.output or "standard output"
    why = f" ({report.runtime_note})" if report.runtime_note else ""
    print(f"wrote {where}: {report.ranks} ranks, {report.threadblocks} threadblocks, {report.steps} steps, "
          f"validated and simulated for {report.runtime}{why}; {report.dialect} dialect; at most "
          f"{report.tbs_per_rank} threadblocks per rank and {report.steps_per_tb} steps per threadblock; step types "
          f"{' '.join(report.step_types)}", file=sys.stderr)
    if report.root_note:
        print(f"note: {report.root_note}", file=sys.stderr)
    if args.json:
        print(json_text({"file": args.output, "runtime": report.runtime, "runtime_note": report.runtime_note,
                          "dialect": report.dialect, "step_types": list(report.step_types), "ranks": report.ranks,
                          "threadblocks": report.threadblocks, "steps": report.steps,
                          "tbs_per_rank": report.tbs_per_rank, "steps_per_tb": report.steps_per_tb,
                          "coarsened": report.coarsened.note() if report.coarsened else None,
                          **({} if report.root is None else {"root": report.root, "root_note": report.root_note})}))
    return 0


def cache(args) -> int:
    store = ResultsCache.default()
    if store is None:
        print(f"the results cache is off ({ENV}=off)")
        return 0
    if args.action == "clear":
        print(f"cleared {store.clear()} entries (results, failure rows and command replies) from {store.root}")
        return 0
    names = [p.name for p in store.entries()]
    replies = sum(n.startswith("reply-") for n in names)
    rows = sum(n.startswith("failures-") for n in names)
    print(f"{store.root}: {len(names) - replies - rows} results, {rows} failure rows, {replies} command replies, "
          f"{store.size_bytes() / 2 ** 20:.1f} MiB "
          f"(code version {code_version()}; {ENV} names another folder, or off)")
    return 0


def _export_bundle(args) -> int:
    from solvers.core.errors import NotApplicable
    from solvers.export import XmlError
    from solvers.export.bundle import export_bundle

    if not args.output:
        raise UsageError("a bundle is a zip file: give -o FILE.zip")
    if args.dialect is not None:
        raise UsageError("a bundle is written in its runtime's dialect: choose --runtime instead of --dialect")
    if args.jobs is not None and args.jobs < 1:
        raise UsageError(f"--jobs must be at least 1, got {args.jobs}")
    work = workload_from(args)
    execution = work.execution
    result, name, _ = schedule_for_export(args, work)
    try:
        bundle = export_bundle(result.topology, result.schedule, args.runtime, execution=execution, workload=work,
                               sm_budget=args.sm_budget, name=name, progress=progress_for(args), jobs=args.jobs)
    except (XmlError, NotApplicable) as exc:
        raise UsageError(str(exc)) from None
    write_atomically(args.output, bundle.zip_bytes())
    print(f"wrote {args.output}: {len(bundle.files)} files for {bundle.runtime}, each validated and simulated",
          file=sys.stderr)
    print(f"{'bytes':<24} {'call':<13} {'proto':<7} {'copies':>6} {'count_mult':>10} {'tbs/rank':>8} "
          f"{'steps/tb':>8} {'model_us':>22}", file=sys.stderr)
    for row in bundle.rows():
        span = f"{row['min_bytes']}..{row['max_bytes']}"
        model = f"{row['modelled_us_low']:.4g}..{row['modelled_us_high']:.4g}"
        print(f"{span:<24} {row['call']:<13} {row['protocol']:<7} {row['copies']:>6} {row['count_multiple_of']:>10} "
              f"{row['threadblocks_per_rank']:>8} {row['steps_per_threadblock']:>8} {model:>22}", file=sys.stderr)
    for note in bundle.notes:
        print(f"note: {note}", file=sys.stderr)
    return 0


def _export_plan(args) -> int:
    from solvers.core.errors import NotApplicable
    from solvers.export import XmlError
    from solvers.export.mscclpp import export_plan

    if args.dialect is not None or args.runtime is not None:
        raise UsageError("an MSCCL++ plan has no dialect or MSCCL runtime: drop --dialect/--runtime")
    result, name, in_place = schedule_for_export(args, workload_from(args))
    try:
        text, report = export_plan(result.topology, result.schedule, args.sm_budget, copies=args.copies,
                                   instances=args.instances, in_place=in_place, name=name)
    except (XmlError, NotApplicable) as exc:
        raise UsageError(str(exc)) from None
    if args.output:
        write_atomically(args.output, text.encode("utf-8"))
        print(f"wrote {args.output}: MSCCL++ plan for {report.ngpus} ranks, at most {report.max_threadblocks} "
              f"threadblocks per rank and {report.max_ops} operations per threadblock, validated and simulated",
              file=sys.stderr)
    else:
        sys.stdout.write(text)
    return 0


def _export_graph(args) -> int:
    """``--format nccl-graph``: the NCCL graph file of the design's first host (``solvers.export.nccl_graph``),
    its rings the ``ring`` synthesizer's and its trees dbt's, read back and checked before it is written."""
    from solvers.core.errors import NotApplicable
    from solvers.export.nccl_graph import GraphError, export_graph

    if args.algo not in ("ring", "dbt"):
        raise UsageError(f"an NCCL graph file holds NCCL's rings and trees: use --algo ring or dbt, not {args.algo}")
    if args.dialect is not None or args.runtime is not None:
        raise UsageError("an NCCL graph file has no MSCCL dialect or runtime: drop --dialect/--runtime")
    collective = Collective.parse(args.collective)
    root_of(args, collective)
    if collective in (Collective.GATHER, Collective.SCATTER):
        raise UsageError(f"an NCCL graph file serves no {collective.value}: RCCL runs nccl{collective.value.title()} "
                         "outside MSCCL as grouped point-to-point calls (ROCm/rccl src/collectives.cc:229-236, "
                         "331-338) that use no ring or tree, and NCCL has no such call")
    topo = load(args.expr, max_nodes=args.max_nodes)
    try:
        text, report = export_graph(topo)
    except (GraphError, NotApplicable) as exc:
        raise UsageError(str(exc)) from None
    if args.output:
        write_atomically(args.output, text.encode("utf-8"))
    else:
        sys.stdout.write(text)
    print(f"wrote {args.output or 'standard output'}: {report.summary(args.output or '<file>')}", file=sys.stderr)
    if collective.rooted:
        print(f"note: NCCL's own {collective.value} runs on these rings at whatever root the call names, so the file "
              "serves every root (--root changes nothing in it)", file=sys.stderr)
    return 0


def check_plan(args) -> int:
    from solvers.export.mscclpp import PlanError, check_plan as check, parse_plan

    try:
        plan = parse_plan(_read_capped(args.file, "MSCCL++ plan"))
    except PlanError as exc:
        raise UsageError(f"{args.file}: {exc}") from None
    too_many = _declared_chunks(plan)
    if too_many is not None:         # refused before the simulator sizes a buffer by a declared count
        return _verdict(args, False, too_many, {"ok": False, "problems": [too_many]}, "")
    report = check(plan, args.sm_budget)
    return _verdict(args, report.ok, report.first,
                    {"ok": report.ok, "problems": report.problems, "ranks": report.ngpus,
                     "threadblocks_per_rank": report.max_threadblocks, "ops_per_threadblock": report.max_ops},
                    f"ok: MSCCL++ plan for {report.ngpus} ranks, at most {report.max_threadblocks} threadblocks per "
                    f"rank and {report.max_ops} operations per threadblock: the executor's rules hold and two "
                    "launches in a row end in the collective")


MAX_CHECKED_BYTES = 64 * 1024 * 1024


def _declared_chunks(plan) -> str | None:
    """Why the plan's declared buffers and semaphores (``input_chunks``, ``output_chunks``, ``scratch_chunks``,
    each semaphore's ``init_value``, of every rank) are more than the checker simulates (``MAX_SIMULATED_CHUNKS``,
    as check-xml), or None: the simulator keeps a cell per declared chunk and per initial semaphore signal, so a
    ``scratch_chunks`` of 1e9 took tens of GB (issue 58)."""
    from solvers.export.program import MAX_SIMULATED_CHUNKS

    def listed(obj, key) -> list:
        value = obj.get(key) if isinstance(obj, dict) else None
        return value if isinstance(value, list) else []

    total = 0
    for g in listed(plan, "gpus"):
        keys = ("input_chunks", "output_chunks", "scratch_chunks")
        counts = [g.get(k) if isinstance(g, dict) else None for k in keys]
        counts += [s.get("init_value") if isinstance(s, dict) else None for s in listed(g, "semaphores")]
        for v in counts:
            if isinstance(v, int) and not isinstance(v, bool) and v > 0:
                total += v
                if total > MAX_SIMULATED_CHUNKS:
                    return (f"the plan declares more than {MAX_SIMULATED_CHUNKS} chunks of buffers and semaphore "
                            "counts (input, output, scratch and init_value of every rank), more than this checker "
                            "simulates")
    return None


def _read_capped(path: str, what: str) -> bytes:
    """The bytes of a file to check, at most MAX_CHECKED_BYTES, through the one input reader
    (``topologies.input_file``: a regular file only, opened without blocking, so a FIFO is refused at once);
    UsageError (one line naming the file) otherwise."""
    from topologies.input_file import InputFileError, read_input

    try:
        return read_input(path, MAX_CHECKED_BYTES, what)
    except InputFileError as exc:
        raise UsageError(str(exc)) from None


def _verdict(args, ok: bool, first: str, payload: dict, ok_line: str) -> int:
    """A checker's answer: the JSON ``payload`` with --json, else ``ok_line`` or the first problem on stderr;
    exit status 0 only when the file is sound."""
    if args.json:
        print(json_text(payload))
    elif ok:
        print(ok_line)
    else:
        print(f"rejected: {first}", file=sys.stderr)
    return 0 if ok else 1


def compare(args) -> int:
    from solvers.compare import compare as run_compare

    if args.tenants is not None:
        from .tenants import compare as tenants_compare

        return tenants_compare(args)
    colls = [c.strip() for text in (args.collective or ["allreduce"]) for c in text.split(",") if c.strip()]
    algos = [a for a in args.algos.split(",") if a.strip()] if args.algos is not None else None
    view = None
    if args.measured is not None:
        view, topos, colls, algos, work = _measured(args, colls, algos)
    elif args.plot is not None or args.measured_algo != "ring":
        raise UsageError(f"{'--plot' if args.plot is not None else '--measured-algo'} goes with --measured LOG")
    else:
        topos = [load(e, max_nodes=args.max_nodes) for e in args.exprs]
        work = workload_from(args)
    result = run_compare(topos, colls, budget_s=args.budget, algos=algos, progress=progress_for(args),
                         workload=work, root=args.root)
    out = result.as_dict()
    if view is not None:
        out["measured"] = view.as_dict()
        if args.plot is not None:
            _write_plot(args.plot, view)
    if args.json:
        print(json_text(out))
        return 0
    print(f"{'design':<22} {'collective':<14} {'algo':<12} {'steps':>5} {'tb_factor':>10} {'time_us':>11} "
          f"{'algbw':>9} {'busbw':>9} {'P':>5} {'synth_s':>8} {'xml':>4}  status")
    for r in out["rows"]:
        numbers = " " * 68
        if r["status"] in ("ok", "bound"):
            xml = {None: "-", True: "yes", False: "no"}[r["exportable"]]
            slices = "-" if r["slices"] is None else r["slices"]
            busbw = "-" if r["busbw_GBps"] is None else f"{r['busbw_GBps']:.4f}"
            numbers = (f"{r['steps']:>5} {r['tb_factor']:>10.6f} {r['time_us']:>11.2f} {r['algbw_GBps'] or 0:>9.4f} "
                       f"{busbw:>9} {slices:>5} {r['synthesis_s'] or 0:>8.2f} {xml:>4}")
        print(f"{r['name'][:22]:<22} {r['collective']:<14} {r['algo']:<12} {numbers}  {r['status']}"
              + (" (verified)" if r["verified"] else ""))
    w = out["winners_model"]
    print(f"fastest in the runtime model ({w['model']}, M {w['from_bytes']:g}..{w['to_bytes']:g} B):")
    for x in out["winners"]:
        print(f"  {x['collective']:<14} M {x['from_bytes']:>10.4g} .. {x['to_bytes']:<10.4g} {x['algo']} on "
              f"{x['name']}")
    print(f"time_us for M = {work.total_bytes:g} bytes: the runtime model (pipelined over P slices, links shared) "
          f"with {work.price_label}; algbw = M / time, busbw as nccl-tests; {result.elapsed_s:.1f} s of "
          f"a {args.budget:g} s budget")
    if view is not None:
        _print_measured(view)
    return 0


def _measured(args, colls: list[str], algos: list[str] | None):
    """``compare --measured LOG``: (the measured-vs-model view of the one design, that design as the list of
    topologies to compare, the collective the log times, the synthesizers to run, the calibrated workload every
    time is priced with). UsageError (one line) for an unreadable log, a log of another collective or number of
    ranks, or prices given besides."""
    from studio.views.measured import MeasuredError, default_algos, measured_vs_model

    if len(args.exprs) != 1:
        raise UsageError(f"--measured sets one design beside its log: give one EXPR, not {len(args.exprs)}")
    if args.prices != "uniform" or args.alpha is not None or args.bandwidth is not None:
        raise UsageError("--measured prices every time with the alpha and B fitted to the log: drop --prices, "
                         "--alpha and --bandwidth")
    if args.plot is not None:
        check_output(args.plot, args.force)
    from .calibrate import one_collective

    log = read_log(args.measured)
    if args.collective is not None and len(colls) != 1:
        raise UsageError(f"--measured compares the one collective the log times, not {len(colls)}")
    asked = colls[0] if args.collective is not None else None
    if asked is not None or len(log.collectives) > 1:     # a log of appended runs: cut to the one compared
        log = one_collective(log, args.measured, asked)
    topo = load(args.exprs[0], max_nodes=args.max_nodes)
    name = args.measured.rsplit("/", 1)[-1]
    try:
        view = measured_vs_model(topo, log, algos if algos is not None else default_algos(), asked,
                                 args.measured_algo, source=f"{args.measured_algo} fit to {name}"[:300],
                                 design=args.exprs[0], progress=progress_for(args))
    except MeasuredError as exc:
        raise UsageError(f"{args.measured}: {exc}") from None
    return (view, [topo], [view.collective.value], algos if algos is not None else default_algos(),
            view.calibration.workload(args.total_bytes))


def _write_plot(path: str, view) -> None:
    """The measured-vs-model figure as a PNG at ``path``, written whole or not at all."""
    from studio.figures.images import figure_bytes, ImageError

    try:
        png = figure_bytes(view.figure(), "png")
    except ImageError as exc:
        raise UsageError(str(exc)) from None
    write_atomically(path, png)        # check_output refused a link, device or FIFO without --force
    print(f"wrote {path}: {view.collective.value} busbw, measured and modelled", file=sys.stderr)


def _print_measured(view) -> None:
    """The measured-vs-model rows as a text table: bytes, the measured busbw of each placement, each
    synthesizer's model busbw on the calibrated prices."""
    algos = [c.algo for c in view.curves]
    print(f"measured vs model ({view.library} log, {view.ranks} ranks; prices {view.price_label}):")
    print(f"{'bytes':>12} {'out-of-place':>12} {'in-place':>9} " + " ".join(f"{a[:11]:>11}" for a in algos))
    for row in view.rows():
        cells = [row["measured_out_of_place_busbw_GBps"], row["measured_in_place_busbw_GBps"]]
        out, inp = ("-" if x is None else f"{x:.4g}" for x in cells)
        print(f"{row['bytes']:>12.0f} {out:>12} {inp:>9} "
              + " ".join(f"{row['model_busbw_GBps'][a]:>11.4g}" for a in algos))
    if view.skipped:
        print(f"not drawn: {', '.join(a for a, _ in view.skipped)} (--json says why)")
    print(f"busbw in GB/s (nccl-tests' bus bandwidth); {view.summary}")


def check_xml(args) -> int:
    from solvers.export import check_xml as check

    try:
        text = _read_capped(args.file, "MSCCL XML file").decode("utf-8")
    except UnicodeDecodeError as exc:
        raise UsageError(f"{args.file[:200]}: the MSCCL XML file is not UTF-8 text (byte {exc.start})") from None
    report = check(text, args.dialect, args.sm_budget, args.runtime, args.root)
    rooted = "" if report.root is None else (f" with root {report.root} (the file serves calls with that root "
                                             "only)")
    return _verdict(args, report.ok, report.first,
                    {"ok": report.ok, "dialect": report.dialect, "runtime": report.runtime,
                     "problems": report.problems, "ranks": report.ranks, "threadblocks": report.threadblocks,
                     "steps": report.steps, "tbs_per_rank": report.tbs_per_rank, "steps_per_tb": report.steps_per_tb,
                     "step_types": list(report.step_types),
                     **({} if report.root is None else {"root": report.root})},
                    f"ok: {report.ranks} ranks, {report.threadblocks} threadblocks, {report.steps} steps, step types "
                    f"{' '.join(report.step_types)} ({report.dialect} dialect, {report.runtime}'s limits and "
                    f"kernels): the parser's rules hold and the simulation ends in the collective{rooted}")


COMMANDS = {"schedule": schedule, "cache": cache, "export": export, "compare": compare, "check-xml": check_xml,
            "check-plan": check_plan, **allreduce_lp.COMMANDS}
