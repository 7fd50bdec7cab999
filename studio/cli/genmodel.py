"""``python -m studio genmodel ...``: GenModel plan costs, GenTree on switch trees, and parameter fitting.

    genmodel plans --servers N --size S [--preset NAME] [--alpha-steps MU] [--fan-in group|senders]
                   [--hcps corrected|printed] [--alpha A --beta B ...] [--json]
    genmodel gentree TREE_SPEC --size S [--no-rearrange] [--no-flatten] [--alpha-steps MU|path]
                     [--select tree|table2] [--paper-sim] [--json]
    genmodel fit CSV [--fan-in group|senders] [--beta B] [--json]

Sizes are in floats (4 bytes), times in seconds (GenModel paper Table 5 units). ``add_parser(sub)`` adds the
command to an argparse subparsers object and ``run(args)`` executes it; bad input ends with one line on stderr
and exit code 2.
"""
from __future__ import annotations

import argparse
import sys

from solvers.genmodel import (FitError, ModelOptions, PaperSim, ParamsError, TreeError, best_plan, fit, gentree,
                              memory_lower_bound, parse_tree, preset, read_measurements, traffic_lower_bound)
from solvers.genmodel.fit import MAX_CSV_CHARS
from solvers.genmodel.params import PRESETS

from .common import json_text

EXIT_BAD_INPUT = 2
PARAM_FLAGS = ("alpha", "beta", "gamma", "delta", "epsilon")


def _mu(text: str):
    if text.strip().lower() == "path":
        return "path"
    try:
        value = float(text)
    except ValueError:
        raise argparse.ArgumentTypeError(f"expected a number or 'path', got {text!r}") from None
    if not value >= 0:
        raise argparse.ArgumentTypeError(f"must be non-negative, got {text!r}")
    return value


def _options(p: argparse.ArgumentParser, default_mu) -> None:
    p.add_argument("--alpha-steps", type=_mu, default=default_mu, metavar="MU",
                   help=f"alpha charged per step: a number (1 = paper formulas, 3 = one switch in the Table 7 "
                        f"simulator, 5 = through a root) or 'path' (default {default_mu})")
    p.add_argument("--fan-in", choices=["group", "senders"], default="group",
                   help="incast fan-in w: group size (paper text, default) or number of senders (fits Table 7)")
    p.add_argument("--hcps", choices=["corrected", "printed"], default="corrected",
                   help="HCPS formula: corrected (default) or as printed in Table 2")
    p.add_argument("--json", action="store_true", help="print JSON")


def add_parser(sub) -> argparse.ArgumentParser:
    """Add ``genmodel`` (with ``plans``, ``gentree``, ``fit``) to the subparsers ``sub``; return its parser."""
    g = sub.add_parser("genmodel", help="GenModel AllReduce costs, GenTree plans for switch trees, fitting")
    gsub = g.add_subparsers(dest="genmodel_command", required=True, parser_class=type(g))

    plans = gsub.add_parser("plans", help="rank AllReduce plans on one switch (GenModel Table 2 vs Table 1)")
    plans.add_argument("--servers", type=int, required=True, help="N, servers on the switch")
    plans.add_argument("--size", type=float, required=True, help="S, floats per server (4 bytes each)")
    plans.add_argument("--preset", default="middle_sw+server",
                       help=f"parameter preset: {', '.join(PRESETS)} (default middle_sw+server)")
    for name in PARAM_FLAGS:
        plans.add_argument(f"--{name}", type=float, default=None, help=f"override {name} (s or s/float)")
    plans.add_argument("--w-t", type=int, default=None, dest="w_t", help="override the incast threshold w_t")
    _options(plans, 1.0)

    gt = gsub.add_parser("gentree", help="GenTree's per-switch plan on a switch tree, beside flat baselines")
    gt.add_argument("tree", help="switch(24), tree(16x24), tree(8x32,8x16), cdc(8x32|8x16) or a preset name "
                                 "(ss24, ss32, sym384, sym512, asy384, cdc384, cpu8, cpu12, cpu15)")
    gt.add_argument("--size", type=float, required=True, help="S, floats per server")
    gt.add_argument("--no-rearrange", action="store_true", help="no data rearrangement (GenTree*)")
    gt.add_argument("--no-flatten", action="store_true", help="the paper's GenTree only (no flat alternatives)")
    gt.add_argument("--rhd", action="store_true", help="also the RHD baseline when N is not a power of two")
    gt.add_argument("--select", choices=["tree", "table2"], default="tree",
                    help="how a switch picks its plan: tree = the studio's tree cost (default); table2 = the paper's "
                         "Algorithm 2 read literally (Table 2 for c participants holding S), which gives its Table 6")
    gt.add_argument("--paper-sim", action="store_true",
                    help="also the paper's simulated times (Table 7 as reconstructed: top level first, one alpha "
                         "per node on the path, w = senders)")
    _options(gt, "path")

    ft = gsub.add_parser("fit", help="fit GenModel to measured CPS runs (CSV: servers, size or bytes, time)")
    ft.add_argument("csv", help="the CSV file")
    ft.add_argument("--beta", type=float, default=None, help="beta (s/float) from the link bandwidth, to split 2β+γ")
    ft.add_argument("--fan-in", choices=["group", "senders"], default="group")
    ft.add_argument("--json", action="store_true", help="print JSON")
    return g


def _fail(message: str) -> int:
    print(f"error: {message}", file=sys.stderr)
    return EXIT_BAD_INPUT


def run(args) -> int:
    """Execute a parsed ``genmodel`` command; 0 on success, 2 (after one line on stderr) on bad input."""
    try:
        cmd = {"plans": _plans, "gentree": _gentree, "fit": _fit}[args.genmodel_command]
        return cmd(args)
    except (ParamsError, FitError, TreeError, ValueError) as exc:
        return _fail(str(exc))
    except OSError as exc:
        return _fail(f"cannot read {getattr(exc, 'filename', '') or 'the file'}: {exc.strerror or exc}")
    except (RecursionError, MemoryError) as exc:
        return _fail(f"the request is too large to process ({type(exc).__name__})")


def _model_options(args) -> ModelOptions:
    return ModelOptions(fan_in=args.fan_in, alpha_steps=args.alpha_steps, hcps=getattr(args, "hcps", "corrected"))


def _plans(args) -> int:
    params = preset(args.preset)
    changes = {k: getattr(args, k) for k in (*PARAM_FLAGS, "w_t") if getattr(args, k) is not None}
    if changes:
        params = params.with_(**changes)
    if args.servers > 4096:
        raise ParamsError("--servers: at most 4096")
    ranking = best_plan(args.servers, args.size, params, _model_options(args))
    rows = ranking.rows()
    if args.json:
        print(json_text({"servers": args.servers, "size": args.size, "preset": args.preset,
                          "params": params.as_dict(), "options": vars(_model_options(args)),
                          "best": ranking.best.label, "classic_best": ranking.classic_best.label,
                          "bounds": {"memory_floats": memory_lower_bound(args.servers, args.size),
                                     "traffic_floats": traffic_lower_bound(args.servers, args.size)},
                          "plans": rows}))
        return 0
    print(f"{'#':>3} {'plan':<18} {'steps':>5} {'alpha':>9} {'beta':>9} {'gamma':>9} {'delta':>9} {'eps':>9} "
          f"{'total s':>9} {'classic#':>8}  badges")
    for r in rows[:40]:
        print(f"{r['rank']:>3} {r['plan']:<18} {r['steps']:>5} {r['alpha']:>9.4f} {r['beta']:>9.4f} "
              f"{r['gamma']:>9.4f} {r['delta']:>9.4f} {r['epsilon']:>9.4f} {r['total']:>9.4f} "
              f"{r['classic_rank']:>8}  {r['badges']}")
    if len(rows) > 40:
        print(f"... {len(rows) - 40} more plans (use --json)")
    print(f"best: {ranking.best.label}; the (alpha, beta, gamma) model picks {ranking.classic_best.label}")
    return 0


def _gentree(args) -> int:
    t = parse_tree(args.tree)
    result = gentree(t, args.size, _model_options(args), rearrange=not args.no_rearrange,
                     flatten=not args.no_flatten, rhd_baseline=True if args.rhd else None, select=args.select)
    sim = PaperSim(t).table7(args.size) if args.paper_sim else None          # RHD only for 2^k servers
    if args.json:
        out = result.as_dict()
        out["speedup"] = {k: v.total / result.total for k, v in result.baselines.items()}
        if sim is not None:
            out["paper_sim"] = {k: {"total_s": v.total, **v.terms()} for k, v in sim.items()}
        print(json_text(out))
        return 0
    print(f"{t.name} ({t.n} servers), S = {args.size:g} floats")
    print(f"{'switch':<10} {'tier':<9} {'participants':<20} {'algorithm':<14} {'rearranged':<14} {'time s':>9} "
          f"{'finish s':>9}")
    for r in result.rows():
        print(f"{r['switch']:<10} {r['tier']:<9} {r['participants']:<20} {r['algorithm']:<14} "
              f"{r['rearranged']:<14} {r['time_s']:>9.4f} {r['finish_s']:>9.4f}")
    print(f"GenTree AllReduce: {result.total:.4f} s")
    for k, v in result.baselines.items():
        print(f"flat {k}: {v.total:.4f} s ({v.total / result.total:.2f}x GenTree)")
    if sim is not None:
        print("paper simulator (Table 7 reconstruction): "
              + ", ".join(f"{k} {v.total:.4f} s" for k, v in sim.items()))
    return 0


def _fit(args) -> int:
    with open(args.csv, encoding="utf-8") as fh:
        text = fh.read(MAX_CSV_CHARS + 1)
    rows = read_measurements(text)
    result = fit(rows, ModelOptions(fan_in=args.fan_in))
    if args.json:
        out = result.as_dict()
        out["params"] = result.params(args.beta).as_dict()
        print(json_text(out))
        return 0
    print(f"alpha      {result.alpha:.6g} s")
    print(f"2β+γ       {result.beta2_gamma:.6g} s/float")
    print(f"delta      {result.delta:.6g} s/float")
    print(f"epsilon    {result.epsilon:.6g} s/float")
    print(f"w_t        {result.w_t}")
    print(f"residuals  rms {result.rms_relative:.3%}, max {result.max_relative:.3%} (relative)")
    for w in result.warnings:
        print(f"warning: {w}")
    return 0
