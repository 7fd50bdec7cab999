"""What every CLI command shares: the one-line usage error, the parser class (which also refuses numbers no flag
takes: infinities, NaN, a count below 1), the parent parsers of the shared flags, the checks made at start (the
environment, every output path) and the one atomic file writer, the text table and the progress printer."""
from __future__ import annotations

import argparse
import json
import math
import os
import stat
import sys
import tempfile

EXIT_BAD_INPUT = 2

# Flags whose value is a count or an amount that must be above zero, wherever a command defines them; every float
# flag must be finite, and --alpha must not be negative. (--time-limit's sign is checked with its own message.)
POSITIVE_FLAGS = frozenset({"--max-nodes", "--workers", "--jobs", "--sm-budget", "--copies", "--instances",
                            "--bytes", "--bandwidth", "--budget"})
NON_NEGATIVE_FLAGS = frozenset({"--alpha"})


class UsageError(Exception):
    pass


def json_text(payload) -> str:
    """``payload`` as JSON for standard output. JSON has no NaN or infinity (Python would write them anyway), so
    a result holding one is refused with one line instead of printed."""
    try:
        return json.dumps(payload, allow_nan=False)
    except ValueError:
        raise UsageError("the result holds a number that is not finite (NaN or infinity): no JSON printed") from None


class Parser(argparse.ArgumentParser):
    def error(self, message):            # one line instead of argparse's usage block
        raise UsageError(f"{self.prog}: {message}")

    def parse_known_args(self, args=None, namespace=None):
        namespace, extras = super().parse_known_args(args, namespace)
        self._check_numbers(namespace)
        return namespace, extras

    def _check_numbers(self, namespace) -> None:
        """Every number given to one of this parser's flags: finite, and above zero where the flag is a count or
        an amount (``POSITIVE_FLAGS``), so that no command starts on ``--bytes inf`` or ``--workers -3``."""
        for action in self._actions:
            value = getattr(namespace, action.dest, None)
            if not action.option_strings or isinstance(value, bool) or not isinstance(value, (int, float)):
                continue
            flag = max(action.option_strings, key=len)
            if isinstance(value, float) and not math.isfinite(value):
                self.error(f"{flag} must be a finite number, got {value}")
            if flag in POSITIVE_FLAGS and not value > 0:
                self.error(f"{flag} must be at least 1, got {value}" if isinstance(value, int)
                           else f"{flag} must be positive, got {value:g}")
            if flag in NON_NEGATIVE_FLAGS and value < 0:
                self.error(f"{flag} must not be negative, got {value:g}")


def design_parent() -> argparse.ArgumentParser:
    """``EXPR`` and ``--max-nodes``: the commands that read one topology."""
    p = argparse.ArgumentParser(add_help=False)
    p.add_argument("expr", help="an expression such as 'biring(8)', or a .json/.graphml file")
    p.add_argument("--max-nodes", type=int, default=None, help="refuse larger topologies (default 4096)")
    return p


def cache_parent() -> argparse.ArgumentParser:
    """``--no-cache``: the commands that answer from the results cache (``replies``; ``schedule`` and ``failures``
    also keep their syntheses there)."""
    p = argparse.ArgumentParser(add_help=False)
    p.add_argument("--no-cache", action="store_true",
                   help="solve again instead of answering from the results cache (the fresh results replace the "
                        "stored ones)")
    return p


def add_output_arguments(p: argparse.ArgumentParser, help_text: str, required: bool = False) -> None:
    """``-o/--output`` and ``--force``: a command that writes a file. ``check_start`` checks the path before the
    command runs (``check_output``) and the command writes it with ``write_atomically``."""
    p.add_argument("-o", "--output", required=required, default=None, help=help_text)
    p.add_argument("--force", action="store_true",
                   help="write through a symbolic link, or into a device or FIFO, named by -o (refused otherwise)")


def check_start(args) -> None:
    """What a command needs before it does any work, checked once: the environment it reads (``STUDIO_MAX_NODES``,
    and ``TOPOLOGY_STUDIO_CACHE`` for the commands that use the results cache) and its output path. UsageError
    (one line) for the first that is wrong."""
    from topologies.expression import max_nodes_from_env

    from .replies import REPLIED

    max_nodes_from_env()
    if args.command in REPLIED or args.command in ("schedule", "cache", "failures"):
        _check_cache_folder()
    if getattr(args, "output", None) is not None and getattr(args, "format", None) != "chakra":
        check_output(args.output, getattr(args, "force", False))   # export --format chakra: -o is a folder


def _check_cache_folder() -> None:
    from solvers.results_cache import ENV

    where = os.environ.get(ENV, "").strip()
    if not where or where.lower() == "off":
        return
    folder = os.path.expanduser(where)
    if not os.path.isabs(folder):   # every command that reads the cache refuses it alike; no folder is made in "."
        raise UsageError(f"{ENV}={where[:200]!r} is not an absolute path (name the cache folder from / or ~, or off)")
    if os.path.exists(folder) and not os.path.isdir(folder):
        raise UsageError(f"{ENV} names {where}, which is not a folder (name a folder, or off)")


def check_output(path: str, force: bool = False) -> None:
    """Refuse, before any work runs, an output path that cannot take a file or whose writing would destroy
    something other than a file: a folder that does not exist or cannot be written to, a folder as the target, a
    socket; and, without ``force``, a symbolic link (with it, the file it points to is written) or a device or
    FIFO (with it, the bytes are written into it). An existing regular file is replaced whole."""
    if not path:
        raise UsageError("-o needs a file name")
    if path.endswith(("/", os.sep)):
        raise UsageError(f"{path} names a folder: name a file")
    if os.path.islink(path) and not force:
        raise UsageError(f"{path} is a symbolic link: give --force to write the file it points to")
    target, st = _target_stat(path)
    if st is not None and stat.S_ISDIR(st.st_mode):
        raise UsageError(f"{path} is a folder: name a file in it")
    if st is not None and not stat.S_ISREG(st.st_mode):
        kind = _special_kind(st.st_mode)
        if stat.S_ISSOCK(st.st_mode):
            raise UsageError(f"{path} is a {kind}, not a file")
        if not force:
            raise UsageError(f"{path} is a {kind}, not a file: give --force to write into it")
        if not os.access(target, os.W_OK):
            raise UsageError(f"cannot write {path}: permission denied")
        return
    folder = os.path.dirname(os.path.abspath(target))
    if not os.path.isdir(folder):
        raise UsageError(f"cannot write {path}: the folder {folder} does not exist")
    if not os.access(folder, os.W_OK | os.X_OK):
        raise UsageError(f"cannot write {path}: the folder {folder} is not writable")


def _target_stat(path: str):
    """(the file a write of ``path`` reaches: a symbolic link's target, else ``path``; its stat, None when it
    does not exist); any other OSError as one line."""
    target = os.path.realpath(path) if os.path.islink(path) else path
    try:
        return target, os.stat(target)
    except FileNotFoundError:
        return target, None
    except OSError as exc:
        raise cannot_write(path, exc) from None


def _special_kind(mode: int) -> str:
    if stat.S_ISCHR(mode) or stat.S_ISBLK(mode):
        return "device"
    if stat.S_ISFIFO(mode):
        return "FIFO"
    return "socket" if stat.S_ISSOCK(mode) else "special file"


def cannot_write(path: str, exc: OSError) -> UsageError:
    """An OSError while writing ``path`` (a full or read-only disk, a denied folder) as one line."""
    why = exc.strerror or str(exc) or type(exc).__name__
    return UsageError(f"cannot write {path}: {why}".replace("\n", " "))


def write_atomically(path: str, data: bytes) -> None:
    """Write ``data`` to ``path`` so that nothing half-written is ever seen there: to a temporary file in the same
    folder, synced, then renamed into place, so an interrupted or failed write leaves the previous file whole (or
    nothing) and no temporary file. The file gets the mode the umask gives (0666 less the umask). A symbolic
    link is followed (the file it points to is replaced; the link stays), and a device or FIFO is written into:
    ``check_output`` has refused both unless ``--force`` was given. Any OSError (ENOSPC, EACCES, EROFS, ...)
    becomes a one-line UsageError."""
    target, st = _target_stat(path)
    if st is not None and not (stat.S_ISREG(st.st_mode) or stat.S_ISDIR(st.st_mode)):
        try:
            with open(target, "wb") as fh:
                fh.write(data)
        except OSError as exc:
            raise cannot_write(path, exc) from None
        return
    folder = os.path.dirname(os.path.abspath(target))
    try:
        fd, tmp = tempfile.mkstemp(prefix=".partial-", dir=folder)
    except OSError as exc:
        raise cannot_write(path, exc) from None
    try:
        try:
            os.fchmod(fd, 0o666 & ~_umask())
            fh = os.fdopen(fd, "wb")
        except BaseException:
            os.close(fd)
            raise
        with fh:
            fh.write(data)
            fh.flush()
            os.fsync(fh.fileno())
        os.replace(tmp, target)
    except BaseException as exc:
        if os.path.lexists(tmp):
            os.unlink(tmp)
        if isinstance(exc, OSError):
            raise cannot_write(path, exc) from None
        raise
    _sync_folder(folder)


def _umask() -> int:
    """The process's umask (read from /proc where it is shown, else set and restored)."""
    try:
        with open("/proc/self/status", encoding="ascii") as fh:
            for line in fh:
                if line.startswith("Umask:"):
                    return int(line.split()[1], 8)
    except (OSError, ValueError):
        pass
    mask = os.umask(0o022)
    os.umask(mask)
    return mask


def _sync_folder(folder: str) -> None:
    """Sync the folder's entry of a renamed file (where the system allows opening a folder)."""
    try:
        fd = os.open(folder, os.O_RDONLY)
    except OSError:
        return
    try:
        os.fsync(fd)
    except OSError:
        pass
    finally:
        os.close(fd)


def workload_parent() -> argparse.ArgumentParser:
    """``--bytes``, ``--prices``, ``--alpha``, ``--bandwidth``: the workload (``solvers.runtime.Workload``) every
    command that shows a time prices with; the defaults are the app sidebar's."""
    from solvers.runtime.workload import DEFAULT

    p = argparse.ArgumentParser(add_help=False)
    p.add_argument("--bytes", type=float, default=DEFAULT.total_bytes, dest="total_bytes",
                   help=f"M, the whole vector in bytes (default {DEFAULT.total_bytes:g}, as in the app)")
    p.add_argument("--prices", default="uniform", metavar="uniform|links|FILE",
                   help="the link prices of every time shown: uniform (default, as in the app: alpha per send, "
                        "links scaled so a node's egress is B), links (each link's own alpha and bandwidth), or a "
                        "calibrated price file (JSON with alpha_us, bandwidth_gbs, source)")
    p.add_argument("--alpha", type=float, default=None,
                   help=f"alpha in microseconds per send, uniform prices (default {DEFAULT.alpha_us:g})")
    p.add_argument("--bandwidth", type=float, default=None,
                   help=f"B, a node's bandwidth in GB/s, uniform prices (default {DEFAULT.bandwidth_gbs:g})")
    return p


def workload_from(args):
    """The ``Workload`` of a command's workload flags; UsageError (one line) for a wrong combination, a number out
    of range or an unreadable price file."""
    from solvers.runtime.workload import DEFAULT, MAX_PRICE_FILE_BYTES, Workload, WorkloadError, read_price_file

    prices = args.prices
    given = [f for f, v in (("--alpha", args.alpha), ("--bandwidth", args.bandwidth)) if v is not None]
    try:
        if prices == "uniform":
            alpha = DEFAULT.alpha_us if args.alpha is None else args.alpha
            bw = DEFAULT.bandwidth_gbs if args.bandwidth is None else args.bandwidth
            return Workload(args.total_bytes, "uniform", alpha, bw)
        if given:
            raise UsageError(f"{' and '.join(given)} set uniform prices: drop them with --prices {prices}")
        if prices == "links":
            return Workload(args.total_bytes, "links")
        from topologies.input_file import InputFileError, read_input

        try:        # a regular file only, opened without blocking (a FIFO is refused, never waited on)
            data = read_input(prices, MAX_PRICE_FILE_BYTES, "price file")
        except InputFileError as exc:
            raise UsageError(f"--prices: {prices[:200]} is not uniform, links or a readable price file "
                             f"({exc.why})") from None
        return read_price_file(data, args.total_bytes)
    except WorkloadError as exc:
        raise UsageError(f"{prices if prices not in ('uniform', 'links') else 'workload'}: {exc}") from None


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


def read_log(path: str):
    """The nccl-tests / rccl-tests log at ``path`` (``solvers.runtime.measured.read_bench_log``, at most its size
    limit plus one byte read); UsageError, one line naming the file, when it cannot be read or parsed."""
    from solvers.runtime.measured import MAX_LOG_BYTES, LogError, read_bench_log
    from topologies.input_file import InputFileError, read_input

    try:        # a regular file only, opened without blocking (a FIFO is refused, never waited on)
        data = read_input(path, MAX_LOG_BYTES, "benchmark log")
    except InputFileError as exc:
        raise UsageError(str(exc)) from None
    try:
        return read_bench_log(data)
    except LogError as exc:
        raise UsageError(f"{path[:200]}: {exc}") from None


def print_table(rows: dict) -> None:
    width = max(len(k) for k in rows)
    for k, v in rows.items():
        print(f"{k.ljust(width)}  {v}")
