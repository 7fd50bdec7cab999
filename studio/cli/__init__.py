"""The command-line interface (``python -m studio``), one module per family of commands:

- ``designs``: ``topo``, ``alltoall``, ``find``, ``forestcoll``;
- ``schedules``: ``schedule``, ``export``, ``compare`` (``--measured LOG --plot PNG``: a benchmark log beside the
  model's curves), ``check-xml``, ``check-plan`` (synthesizer flags generated from the registry by ``synth_flags``);
- ``genmodel``: ``genmodel plans | gentree | fit``;
- ``calibrate``: ``calibrate LOG --topo EXPR``, prices fitted to an nccl-tests / rccl-tests log;
- ``failures``: ``failures EXPR --algo A --links K [--samples S]``, what failed elements do to a design;
- ``training``: ``train MODEL --topo EXPR [--parallel dp|ep|tp|pp]``, one training iteration on each design.

Every command takes an expression (``biring(8)``) or the path of a topology file (``.json``, ``.graphml``) or of a
machine's own description (``.xml`` NCCL topology, comma-joined for several boxes; ``.txt`` nvidia-smi topo -m or
rocm-smi --showtopo: ``topologies.imports``).
Bad input ends with one line on stderr and exit code 2; nothing prints a traceback for it. The environment a
command reads, its numbers and its output path are checked before it does any work (``common.check_start``),
and every file is written whole or not at all (``common.write_atomically``); a failed write is one line too.
"""
from __future__ import annotations

import argparse
import sys

from solvers import NotApplicable, ScheduleError
from topologies import TopologyError

from . import calibrate, designs, failures, genmodel, graph_check, schedules, sweeps, training
from .common import EXIT_BAD_INPUT, Parser, UsageError, check_start
from .replies import answered

COMMANDS = {**designs.COMMANDS, **schedules.COMMANDS, "genmodel": genmodel.run, "sweep": sweeps.sweep,
            "calibrate": calibrate.run, "failures": failures.failures, **training.COMMANDS,
            **graph_check.COMMANDS}     # after schedules: check-graph, and check-xml pointing a graph file to it


def parser() -> argparse.ArgumentParser:
    """The whole parser, built from the registry as it is now (a synthesizer registered later appears)."""
    p = Parser(prog="python -m studio", description="Topology Studio: topologies and collective schedules.")
    sub = p.add_subparsers(dest="command", required=True, parser_class=Parser)
    designs.add_parsers(sub)
    schedules.add_parsers(sub)
    genmodel.add_parser(sub)
    sweeps.add_parser(sub)
    calibrate.add_parser(sub)
    failures.add_parser(sub)
    training.add_parser(sub)
    graph_check.add_parser(sub)
    return p


def main(argv: list[str] | None = None) -> int:
    try:
        args = parser().parse_args(argv)
        check_start(args)
        return answered(args, COMMANDS[args.command])
    except (UsageError, TopologyError, NotApplicable, ValueError) as exc:
        # ScheduleError is a ValueError too: a synthesizer produced a schedule that failed verification.
        kind = "schedule failed verification" if isinstance(exc, ScheduleError) else "error"
        print(f"{kind}: {exc}", file=sys.stderr)
        return EXIT_BAD_INPUT
    except OSError as exc:          # a file that failed past the commands' own checks (a folder gone since): one line
        where = f"{exc.filename}: " if exc.filename else ""
        print(f"error: {where}{exc.strerror or exc}".replace("\n", " "), file=sys.stderr)
        return EXIT_BAD_INPUT
    except KeyboardInterrupt:
        print("interrupted", file=sys.stderr)
        return 130
    except (RecursionError, MemoryError) as exc:
        print(f"error: the request is too large to process ({type(exc).__name__})", file=sys.stderr)
        return EXIT_BAD_INPUT


__all__ = ["main", "parser", "COMMANDS", "UsageError"]
