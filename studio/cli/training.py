"""``train MODEL --topo EXPR [--topo EXPR ...]``: one training iteration of a model on each design
(``solvers.training``; the direct-connect paper's App. A.4): iteration time split into compute, exposed allreduce
and all-to-all, the bucket chosen, one row per collective priced; several designs are compared (ratios to the
fastest). ``--sweep N=a:b:c`` runs each design template (``gkautz(4,{N})``) at every size as tasks on Dask
(``studio.cluster``, as ``sweep``), ``--in-process`` without a cluster. The reply is kept in the results cache
(``replies``), and each design's priced collectives too (``solvers.training.pricing``)."""
from __future__ import annotations

import math
import sys
import time

from solvers.training.pricing import (AUTO_MCF_LIMIT_S, AUTO_MCF_MAX_S, AUTO_MCF_MIN_S,
                                      AUTO_MCF_NODES, auto_mcf)

from .common import UsageError, cache_parent, json_parent, json_text


def add_parser(sub) -> None:
    p = sub.add_parser("train", parents=[json_parent(), cache_parent()],
                       help="one training iteration (data, expert, tensor or pipeline parallel) on each design")
    p.add_argument("model", help="a model preset (switch-base-256, switch-c-2048, gpt2-small, resnet50, ...), or "
                                 "a label for --profile")
    p.add_argument("--topo", action="append", default=[], required=True, metavar="EXPR",
                   help="a design (repeat to compare several); with --sweep a template such as 'gkautz(4,{N})'")
    p.add_argument("--parallel", default="dp", choices=("dp", "ep", "tp", "pp", "tp-dp", "tp-pp"),
                   help="dp: data parallel (DDP); ep: expert parallel (experts sharded over all nodes, App. A.4); "
                        "tp: the design is one tensor-parallel group; pp: its nodes are pipeline stages; tp-dp: "
                        "tensor parallel inside each box, data parallel across boxes; tp-pp: each box one "
                        "tensor-parallel group and one pipeline stage (both on a design made of boxes, as "
                        "dgx_a100(boxes=4))")
    p.add_argument("--profile", default=None, metavar="FILE",
                   help="a per-layer profile CSV (name, forward_ms, backward_ms, param_bytes, activation_bytes[, "
                        "expert, tokens]) instead of the FLOPs model")
    p.add_argument("--gpu", default="A100", help="A100, H100, MI250X or MI300X (default A100)")
    p.add_argument("--gpus", default=None, metavar="K",
                   help="GPUs the job uses: a whole number, every node of the design (the default)")
    p.add_argument("--bytes-per-param", type=float, default=2.0, help="bytes per parameter and activation "
                                                                      "(default 2: BF16)")
    p.add_argument("--bucket", default="best", help="DDP bucket: best (of 1MB, 10MB, 100MB, 1GB; default) or one")
    p.add_argument("--efficiency", type=float, default=None,
                   help="the FLOPs model's share of the GPU's peak (default 0.5)")
    p.add_argument("--alpha", type=float, default=10.0, help="alpha in microseconds per send (default 10)")
    p.add_argument("--bandwidth", type=float, default=12.5,
                   help="B, a node's bandwidth in GB/s (default 12.5 = 100 Gb/s)")
    p.add_argument("--runtime-model", action="store_true",
                   help="price allreduces by the runtime model where the schedule is small enough (default: the "
                        "alpha-beta step model, as the paper)")
    p.add_argument("--mcf-time-limit", type=float, default=None, metavar="SECONDS",
                   help=f"stop the all-to-all LP after this long and use its certified lower end (default from "
                        f"{AUTO_MCF_NODES} nodes: Frank-Wolfe for {AUTO_MCF_LIMIT_S:g} s x N/1024, at least "
                        f"{AUTO_MCF_MIN_S:g} s and at most {AUTO_MCF_MAX_S:g} s; PDLP under its own limit below)")
    p.add_argument("--sweep", default=None, metavar="N=a:b:c", help="run every --topo template at these sizes")
    p.add_argument("--timeline", action="store_true", help="with --json: include every bar of the timeline")
    p.add_argument("--max-nodes", type=int, default=None, help="refuse larger designs (default 4096)")
    p.add_argument("--scheduler", default=None, metavar="tcp://HOST:8786", help="--sweep on this Dask cluster")
    p.add_argument("--workers", type=int, default=None, help="--sweep: worker processes of the embedded cluster")
    p.add_argument("--in-process", action="store_true", help="--sweep without a cluster, one size after another")
    p.add_argument("--chakra", default=None, metavar="DIR",
                   help="also write the iteration as Chakra execution traces for ASTRA-sim (one --topo; --parallel "
                        "dp, ep or tp): DIR/workload.<rank>.et with each collective one node, run by ASTRA-sim as "
                        "the verified schedule that priced it through its per-node custom collectives "
                        "(collectives.yml names each node's coll<k>.<rank>.et), with ASTRA-sim's network and "
                        "system inputs; DIR must be new or an empty folder, and appears only when all is written "
                        "and checked")


def _gpus(text: str | None, nodes: int) -> None:
    if text is None:
        return
    try:
        value = float(text)
    except ValueError:
        raise UsageError(f"--gpus must be a whole number of GPUs, got {text[:20]!r}") from None
    if not math.isfinite(value) or value != int(value) or value < 1:
        raise UsageError(f"--gpus must be a whole number of GPUs (at least 1), got {text[:20]}")
    if int(value) != nodes:
        raise UsageError(f"--gpus {int(value)}: the job runs on every node of the design ({nodes})")


def _request(args) -> dict:
    from solvers.training.jobs import gpu

    if not (0 < args.bytes_per_param <= 16):
        raise UsageError(f"--bytes-per-param must be above 0 and at most 16, got {args.bytes_per_param:g}")
    if args.efficiency is not None and not (0 < args.efficiency <= 1):
        raise UsageError(f"--efficiency must be above 0 and at most 1, got {args.efficiency:g}")
    if args.mcf_time_limit is not None and not (0 < args.mcf_time_limit <= 86400):
        raise UsageError(f"--mcf-time-limit must be above 0 and at most 86400 s, got {args.mcf_time_limit:g}")
    if not (0 <= args.alpha <= 1e6) or not (1e-3 <= args.bandwidth <= 1e7):
        raise UsageError("--alpha must be 0 to 1e6 us and --bandwidth 1e-3 to 1e7 GB/s")
    gpu(args.gpu)
    profile = None
    if args.profile is not None:
        from solvers.training.profile import read_profile

        profile = read_profile(args.profile)
    else:
        from solvers.training.jobs import preset

        preset(args.model)
    return {"model": args.model, "parallel": args.parallel, "gpu": args.gpu, "bucket": args.bucket,
            "profile": profile, "efficiency": args.efficiency, "bytes_per_param": args.bytes_per_param,
            "alpha": args.alpha, "bandwidth": args.bandwidth, "runtime": args.runtime_model,
            "max_nodes": args.max_nodes, "gpus": args.gpus, "no_cache": args.no_cache,
            "mcf_time_limit": args.mcf_time_limit}


def run_one(expr: str, req: dict) -> dict:
    """One design's iteration as a dict (a sweep task runs this on a worker)."""
    out = iteration_of(expr, req)[1].as_dict()
    out["design"] = expr
    return out


def iteration_of(expr: str, req: dict):
    """(topology, Iteration) of one design."""
    import solvers.training as training
    from solvers.results_cache import ResultsCache
    from solvers.runtime import Workload
    from topologies import load

    topo = load(expr, max_nodes=req["max_nodes"])
    _gpus(req["gpus"], topo.n)
    limit, method = auto_mcf(topo.n, req["mcf_time_limit"])
    prices = None
    if req["parallel"] == "ep":         # checked first, so a refused request never waits for the LP
        training.simulate.check_request(req["model"], req["profile"], topo.n)
    # --no-cache solves again and replaces the stored prices
    store = ResultsCache.default()
    prices = training.design_prices(topo, alltoall=req["parallel"] == "ep", mcf_time_limit=limit,
                                    cache=store, refresh=req["no_cache"], mcf_method=method)
    it = training.simulate_iteration(req["model"], topo, req["parallel"], req["gpu"], req["bucket"], req["profile"],
                                     Workload(1.0, "uniform", req["alpha"], req["bandwidth"]), req["efficiency"],
                                     req["bytes_per_param"], runtime=req["runtime"], prices=prices)
    return topo, it


def _sweep_exprs(templates: list[str], text: str) -> list[tuple[str, int]]:
    from solvers.sweep import SweepError, parse_param

    try:
        name, values = parse_param(text)
    except SweepError as exc:
        raise UsageError(f"--sweep: {exc}") from None
    out = []
    for t in templates:
        if "{" + name + "}" not in t:
            raise UsageError(f"--sweep {name}: the design {t[:60]!r} has no {{{name}}} to fill")
        out += [(t.replace("{" + name + "}", str(v)), v) for v in values]
    return out


def train(args) -> int:
    req = _request(args)
    if args.chakra is not None and (args.sweep or len(args.topo) != 1):
        raise UsageError("--chakra writes one design's iteration: give one --topo and no --sweep")
    if args.chakra is not None:
        _chakra_checks(args)
    start = time.perf_counter()
    if args.sweep:
        results = _swept(args, req)
    elif args.chakra is not None:
        topo, it = iteration_of(args.topo[0], req)
        _write_chakra(args.chakra, topo, it, req)
        results = [{**it.as_dict(), "design": args.topo[0]}]
    else:
        results = [run_one(expr, req) for expr in args.topo]
    best = min(results, key=lambda r: r["iteration_ms"])
    for r in results:
        r["ratio_to_best"] = r["iteration_ms"] / best["iteration_ms"]
        if not args.timeline:
            r.pop("timeline", None)
    if args.json:
        print(json_text({"model": results[0]["model"], "parallel": args.parallel, "gpu": results[0]["gpu"],
                         "best": best["design"], "results": results,
                         "seconds": round(time.perf_counter() - start, 2)}))
        return 0
    for r in results:
        _print(r, len(results) > 1)
    if len(results) > 1:
        print(f"fastest: {best['design']} ({best['iteration_ms']:.3f} ms an iteration)")
    return 0


def _swept(args, req) -> list[dict]:
    from studio.cluster import ClusterError, executor

    jobs = _sweep_exprs(args.topo, args.sweep)
    try:
        with executor(args.scheduler, 0 if args.in_process else args.workers) as (pool, where, _):
            print(f"train: {len(jobs)} designs on {where}", file=sys.stderr)
            futures = [(n, pool.submit(run_one, expr, req)) for expr, n in jobs]
            out = []
            for n, fut in futures:
                row = fut.result()
                row["N"] = n
                out.append(row)
            return out
    except ClusterError as exc:
        raise UsageError(str(exc)) from None


CHAKRA_PARALLEL = ("dp", "ep", "tp")


def _chakra_checks(args) -> None:
    """Refuse ``--chakra`` (one line, nothing created) where the trace would not be the iteration simulated. Its
    collectives are written as whole-design allreduces and all-to-alls (``Iteration.trace_ops``): true of dp's
    buckets, ep's all-to-alls and tp's activation allreduces (the whole design is one tensor-parallel group), not
    of pp's stage-to-stage sends nor of tp-dp's and tp-pp's box-only and rail collectives."""
    from solvers.export.chakra import ChakraError
    from solvers.export.chakra_files import check_target

    if args.parallel not in CHAKRA_PARALLEL:
        what = ("sends activations between pipeline stages" if args.parallel == "pp" else
                "runs collectives within boxes and across rails")
        raise UsageError(f"--chakra writes whole-design allreduces and all-to-alls, and --parallel {args.parallel} "
                         f"{what}: use dp, ep or tp")
    try:
        check_target(args.chakra)
    except ChakraError as exc:
        raise UsageError(str(exc)) from None


def _write_chakra(folder: str, topo, it, req: dict) -> None:
    """The iteration's ``trace_ops`` with ASTRA-sim's inputs in ``folder`` (``chakra_astra.write_iteration``): the
    workload with every collective one node; an allreduce run as the verified schedule of the synthesizer that
    priced it, an all-to-all as the verified shortest-path schedule (``direct_alltoall``, up to 64 nodes), each as
    ASTRA-sim's per-node custom collective (``coll<k>.<rank>.et``, named in ``collectives.yml``); the rest by
    ASTRA-sim's own algorithms. Refused, before any trace is built, over ``chakra_files.MAX_WRITE_NODES`` trace
    nodes; written in a hidden sibling folder, read back and checked (every send matched by one receive) there, and
    only then renamed to ``folder`` (``chakra_files.staged_folder``: a failure leaves no ``folder``)."""
    from solvers.export.chakra import ChakraError, check_traces, read_traces, schedule_nodes
    from solvers.export.chakra_astra import WORKLOAD, iteration_schedules, write_iteration
    from solvers.export.chakra_files import check_size, staged_folder
    from solvers.runtime.workload import Workload

    ranks = len(topo.compute_nodes)
    try:
        ops = it.trace_ops()
        check_size(ranks * len(ops), f"{len(ops):,} operations on {ranks} ranks")
        schedules = iteration_schedules(topo, it.collectives)
        custom = sum(schedule_nodes(on, s) for on, s in schedules.values())
        check_size(ranks * len(ops) + custom, f"{len(ops):,} operations on {ranks} ranks and {len(schedules)} "
                                              f"schedules' sends and receives ({custom:,} nodes)")
        work = Workload(1.0, "uniform", req["alpha"], req["bandwidth"])
        with staged_folder(folder) as tmp:
            out = write_iteration(topo, tmp, ops, schedules, work.execution)
            nodes, sends = 0, 0
            for name, traces in [(WORKLOAD, out["workload"]), *out["customs"].items()]:
                back = read_traces(tmp, name, ranks=len(traces))
                if back != traces:
                    raise ChakraError(f"{folder}: the traces {name}.*.et read back differ from those written")
                report = check_traces(back)
                nodes, sends = nodes + report["nodes"], sends + report["sends"]
    except ChakraError as exc:
        raise UsageError(str(exc)) from None
    where = "ASTRA-sim inputs beside them" if out["expressible"] else "no ASTRA-sim network (see README.txt)"
    print(f"wrote {folder}/{WORKLOAD}.<0..{len(out['workload']) - 1}>.et: one iteration, {len(out['per_node'])} of "
          f"its collectives run by {len(out['customs'])} schedules' traces beside it ({sends} sends each matched by "
          f"a receive; {nodes} nodes in all); read back and checked; {where}", file=sys.stderr)


def _mb(b) -> str:
    return "-" if b is None else (f"{b / 2 ** 20:g} MB" if b < 2 ** 30 else f"{b / 2 ** 30:g} GB")


def _print(r: dict, ratio: bool) -> None:
    head = f"{r['design']} ({r['nodes']} nodes), {r['model']}, {r['parallel']} on {r['gpu']}"
    print(head + (f"  [x{r['ratio_to_best']:.2f} the fastest]" if ratio else ""))
    print(f"  iteration_ms {r['iteration_ms']:.3f}  compute_ms {r['compute_ms']:.3f}  allreduce_exposed_ms "
          f"{r['allreduce_exposed_ms']:.3f}  alltoall_ms {r['alltoall_ms']:.3f}  (all-to-all "
          f"{100 * r['alltoall_share']:.1f} %)  bucket {_mb(r['bucket_bytes'])}")
    for c in r["collectives"]:
        print(f"  {c['collective']:>10} {_mb(c['bytes']):>12} x{c['count']:<4} {c['ms_each']:.4f} ms each  "
              f"({c['priced_by']}{', ' + c['algo'] if c['algo'] else ''})")
    for note in r["notes"]:
        print(f"  {note}")


COMMANDS = {"train": train}
