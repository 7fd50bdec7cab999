"""What every CLI command shares: the one-line usage error, the parser class, the parent parsers of the shared
flags, the text table and the progress printer."""
from __future__ import annotations

import argparse
import sys

EXIT_BAD_INPUT = 2


class UsageError(Exception):
    pass


class Parser(argparse.ArgumentParser):
    def error(self, message):            # one line instead of argparse's usage block
        raise UsageError(f"{self.prog}: {message}")


def design_parent() -> argparse.ArgumentParser:
    """``EXPR`` and ``--max-nodes``: the commands that read one topology."""
    p = argparse.ArgumentParser(add_help=False)
    p.add_argument("expr", help="an expression such as 'biring(8)', or a .json/.graphml file")
    p.add_argument("--max-nodes", type=int, default=None, help="refuse larger topologies (default 4096)")
    return p


def json_parent() -> argparse.ArgumentParser:
    p = argparse.ArgumentParser(add_help=False)
    p.add_argument("--json", action="store_true", help="print JSON")
    return p


def progress_parent() -> argparse.ArgumentParser:
    p = argparse.ArgumentParser(add_help=False)
    p.add_argument("--progress", action="store_true",
                   help="report progress on stderr (on by default when stderr is a terminal)")
    return p


def progress_printer():
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


def progress_for(args):
    """The progress printer when ``--progress`` was given or stderr is a terminal, else None."""
    return progress_printer() if (args.progress or sys.stderr.isatty()) else None


def print_table(rows: dict) -> None:
    width = max(len(k) for k in rows)
    for k, v in rows.items():
        print(f"{k.ljust(width)}  {v}")
