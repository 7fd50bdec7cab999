"""``calibrate LOG --topo EXPR``: fit the runtime model's uniform prices (alpha, B) to an nccl-tests or rccl-tests
log for the schedule the measured library ran (``solvers.runtime.calibrate``); print the prices and the residual at
every size, and with ``-o FILE`` write them as a price file every command takes (``--prices FILE``)."""
from __future__ import annotations

import sys

from .common import UsageError, add_output_arguments, cache_parent, json_parent, json_text, read_log, write_atomically


def add_parser(sub) -> None:
    p = sub.add_parser("calibrate", parents=[json_parent(), cache_parent()],
                       help="fit alpha and B to an nccl-tests / rccl-tests log (a price file for --prices)")
    p.add_argument("log", help="the benchmark's output (all_reduce_perf and the like)")
    p.add_argument("--topo", required=True, help="the measured machine: an expression, a topology file or the "
                   "machine's own description (NCCL topology XML, nvidia-smi topo -m or rocm-smi --showtopo as .txt)")
    p.add_argument("--collective", default=None, choices=["allreduce", "allgather", "reduce_scatter", "alltoall"],
                   help="the collective the log times: needed for a log without nccl-tests' 'Collective test "
                   "starting' line (older versions), and to pick one from a log of several")
    p.add_argument("--algo", default="ring", help="the schedule the library ran (default ring, NCCL's rings)")
    p.add_argument("--placement", default="out-of-place", choices=["out-of-place", "in-place"],
                   help="which of the log's two columns to fit (default out-of-place)")
    p.add_argument("--uniform", action="store_true",
                   help="fit the uniform alpha and B only (skip the per-link-class and protocol-switch fits)")
    p.add_argument("--max-nodes", type=int, default=None, help="refuse larger topologies (default 4096)")
    add_output_arguments(p, "write the fitted prices here as a price file (JSON)")


def one_collective(log, name: str, asked: str | None):
    """The log cut to the one collective to fit: ``asked`` (``--collective``) or the one it names; UsageError (one
    line) for a log that names none without the flag, several without it, or another than the flag's. Also
    ``compare --measured``'s."""
    from solvers.core.schedule import Collective
    from solvers.runtime.measured import PROGRAMS, LogError

    try:
        want = Collective.parse(asked) if asked is not None else None
    except ValueError as exc:
        raise UsageError(f"--collective: {exc}") from None
    named = log.collectives
    if want is None and len(named) > 1:
        raise UsageError(f"{name}: the log times {' and '.join(c.value for c in named)}: give --collective to fit "
                         "one")
    if want is None and log.collective is None:
        why = (f"it names {', '.join(log.programs[:3])}, which the studio does not build" if log.programs else
               "no 'Collective test starting' line naming " + ", ".join(PROGRAMS))
        raise UsageError(f"{name}: the log does not say which collective it times ({why}): give --collective")
    if want is not None and log.programs and want not in named:
        raise UsageError(f"{name}: the log times {', '.join(c.value for c in named) or ', '.join(log.programs[:3])}"
                         f", not {want.value}")
    try:
        return log.only(want or log.collective)
    except LogError as exc:
        raise UsageError(f"{name}: {exc}") from None


def run(args) -> int:
    from solvers import synthesize
    from solvers.core.errors import NotApplicable
    from solvers.runtime.calibrate import FitError, calibrate
    from topologies import load

    log = one_collective(read_log(args.log), args.log, args.collective)
    topo = load(args.topo, max_nodes=args.max_nodes)
    if log.ranks is not None and log.ranks != topo.n:
        raise UsageError(f"the log has {log.ranks} ranks and {args.topo} {topo.n} GPUs: give the measured machine")
    try:
        result = synthesize(topo, args.algo, log.collective)
        fit = calibrate(result.topology, result.schedule, log, args.placement,
                        source=f"{args.algo} fit to {args.log.rsplit('/', 1)[-1]}"[:300], detail=not args.uniform)
    except FitError as exc:                   # a log no machine produces, or a failed fit: named by its file
        raise UsageError(f"{args.log[:200]}: {exc}") from None
    except (NotApplicable, ValueError) as exc:
        raise UsageError(str(exc).splitlines()[0]) from None
    if args.output:
        write_atomically(args.output, fit.price_file().encode("utf-8"))
    cut = [n for n in log.notes if n.startswith("the log also times")]     # the log's other collectives
    if args.json:
        doc = fit.as_dict()
        doc["notes"] = cut + doc["notes"]
        print(json_text(doc))
        return 0
    print(f"alpha {fit.alpha_us:.4g} us, B {fit.bandwidth_gbs:.4g} GB/s per node ({args.algo} {log.collective.value} "
          f"on {args.topo}, {fit.placement}); relative error rms {fit.rms:.2%}")
    print(f"{'bytes':>12} {'measured us':>12} {'model us':>12} {'residual':>9}")
    for m, t, p in zip(fit.sizes, fit.measured_us, fit.model_us):
        print(f"{m:>12.0f} {t:>12.4g} {p:>12.4g} {p / t - 1:>+9.2%}")
    for c in fit.classes:
        pinned = (f"alpha {c.alpha_us:.4g} +- {c.alpha_se_us:.2g} us, {c.bandwidth_gbs:.4g} +- {c.bandwidth_se_gbs:.2g} "
                  "GB/s per link" if c.determined else "not determined by this log (the schedule's time hardly "
                  "depends on these links' prices)")
        print(f"link class {c.nominal_gbs:g} GB/s nominal ({c.links} links used): {pinned}")
    if len(fit.segments) > 1:
        print("protocol switches at " + ", ".join(f"{x:.3g} B" for x in fit.switch_points) + ": "
              + "; ".join(f"{g.lo_bytes:.3g}-{g.hi_bytes:.3g} B alpha {g.alpha_us:.4g} us, B {g.bandwidth_gbs:.4g} "
                          f"GB/s" for g in fit.segments))
    elif fit.segments:
        print("one protocol regime: the log shows no switch point")
    for note in fit.notes:
        print(f"note: {note}")
    for note in cut:
        print(f"note: {note}")
    if args.output:
        print(f"wrote {args.output}: use it with --prices {args.output}", file=sys.stderr)
    return 0
