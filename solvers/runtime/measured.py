"""Measured collective times: the output of nccl-tests and rccl-tests (``all_reduce_perf`` and the like), read
into a table the runtime model can be set beside and calibrated against (issue 41).

The format, from nccl-tests' ``src/util.cu`` (NVIDIA/nccl-tests a0b82b2, version 2.19.6; rccl-tests prints the
same): comment lines start with ``#``; ``# Collective test starting: all_reduce_perf`` names the program; ``# Using
devices`` is followed by one ``#  Rank  r Group g Pid p on HOST device d [bus] NAME`` line per rank
(``writeDeviceReport``); two header rows; then one data row per size (``writeBenchmarkLinePreamble``:
``size count type redop root``, the root -1 where the collective has none), followed by the out-of-place and the
in-place figures (``writeBenchmarkLineBody``: ``time algbw busbw #wrong``, time in microseconds, the bandwidths in
GB/s, ``#wrong`` as ``N/A`` when the run did not check its data). With per-iteration timing each placement adds
``i_min i_max i_p99 i_cv%``; a trace replay prints only the in-place figures; a timestamp may end the row. The
log ends with ``# Out of bounds values : n OK`` and ``# Avg bus bandwidth : x``.

``read_bench_log(text)`` gives a ``BenchLog``: the program, the collective it times, the ranks and their
devices, and ``rows``, a pandas frame with one row per size and placement (``bytes``, ``count``, ``type``,
``redop``, ``root``, ``placement``, ``time_us``, ``algbw_GBps``, ``busbw_GBps``, ``wrong``, and ``program``: the
program named above the row, so a log of appended runs keeps them apart; ``BenchLog.programs`` lists them and
``BenchLog.only`` cuts the log to one collective). A line it cannot read is a ``LogError`` naming the line and
why, and nothing is returned half read. Every figure is read by ``topologies.input_file.read_figure`` (issue 58):
its text bounded (100 characters, 50 significant digits, a decimal exponent of at most 30) before it is
converted, sizes and counts at most 2^63 - 1, other figures at most 1e30, so a size of 300 digits or a time of
1e308 is one line, not an OverflowError or a fit to nonsense.
"""
from __future__ import annotations

import re
from dataclasses import dataclass, field, replace

from topologies.input_file import read_figure

from ..core.schedule import Collective

__all__ = ["BenchLog", "LogError", "read_bench_log", "MAX_LOG_BYTES", "MAX_LOG_ROWS"]

MAX_LOG_BYTES = 16 * 1024 * 1024
MAX_LOG_ROWS = 100_000
MAX_SIZE = 2 ** 63 - 1      # nccl-tests prints sizes and counts as 64-bit integers
MAX_FIGURE = 1e30           # a time, a bandwidth, an error count: bounded text, and no larger than this
COLUMNS = ("bytes", "count", "type", "redop", "root", "placement", "time_us", "algbw_GBps", "busbw_GBps", "wrong",
           "program")
# the programs of nccl-tests (and rccl-tests) whose collectives the studio builds
PROGRAMS = {"all_reduce_perf": Collective.ALLREDUCE, "all_gather_perf": Collective.ALLGATHER,
            "reduce_scatter_perf": Collective.REDUCE_SCATTER, "alltoall_perf": Collective.ALLTOALL}
_PROGRAM = re.compile(r"^#\s*Collective test starting:\s*(\S+)")
_RANK = re.compile(r"^#\s*Rank\s+(\d+)\s+Group\s+\d+\s+Pid\s+\d+\s+on\s+(\S+)\s+device\s+(\d+)\s+\[[^\]]*\]\s*(.*)$")
_AVG = re.compile(r"^#\s*Avg bus bandwidth\s*:\s*(\S+)")
_FIGURE = re.compile(r"[-+]?(\d+\.?\d*|\.\d+)([eE][-+]?\d+)?|N/A")     # what a figure is printed as
_PLACEMENT_FIELDS = {4, 8}          # time algbw busbw #wrong, and with per-iteration timing 4 more


class LogError(ValueError):
    """A benchmark log the studio cannot read; the message is one line naming the line and why."""


@dataclass
class BenchLog:
    """One nccl-tests / rccl-tests run (module docstring)."""

    program: str | None
    collective: Collective | None
    ranks: int | None                      # from the "Rank" lines; None when the log has none
    devices: list[tuple[str, int, str]]    # (host, device, name) per rank, in rank order
    rows: object                           # pandas DataFrame with COLUMNS
    avg_busbw_gbs: float | None = None
    notes: list[str] = field(default_factory=list)
    programs: tuple[str, ...] = ()         # every program the log names, in order (several: logs appended)

    @property
    def collectives(self) -> tuple[Collective, ...]:
        """The studio's collectives among ``programs`` (more than one when runs of several tests were appended)."""
        return tuple(dict.fromkeys(PROGRAMS[p] for p in self.programs if p in PROGRAMS))

    def only(self, collective: Collective) -> "BenchLog":
        """The log cut to the rows of ``collective``'s program (a log naming no program is kept whole, being
        taken to time ``collective``); LogError when it has no such rows."""
        if not self.programs:
            return replace(self, collective=collective)
        names = [p for p in self.programs if PROGRAMS.get(p) is collective]
        rows = self.rows[self.rows["program"].isin(names)].reset_index(drop=True)
        if not names or not len(rows):
            raise LogError(f"the log has no rows of {collective.value} (it times {', '.join(self.programs[:4])})")
        notes = list(self.notes)
        if len(self.programs) > len(names):
            notes.append(f"the log also times {', '.join(p for p in self.programs if p not in names)}: only the "
                         f"{names[0]} rows are used")
        return replace(self, program=names[0], collective=collective, rows=rows, notes=notes, programs=tuple(names))

    def sizes(self) -> list[int]:
        return sorted(set(int(b) for b in self.rows["bytes"]))

    def placement(self, which: str = "out-of-place"):
        """The rows of one placement ("out-of-place" or "in-place"), by size."""
        return self.rows[self.rows["placement"] == which].sort_values("bytes").reset_index(drop=True)


def _number(token: str, what: str, line: int, whole: bool = False) -> float:
    """A figure of the log, bounded before it is converted (``topologies.input_file.read_figure``): at most
    ``MAX_FIGURE`` (a size at most ``MAX_SIZE`` bytes), at least 0 (a root at least -1)."""
    low = -1 if what == "root" else 0
    high = MAX_SIZE if what in ("size", "count") else MAX_FIGURE
    try:
        return read_figure(token, what, f"line {line}", low, high, whole)
    except ValueError as exc:
        raise LogError(str(exc)) from None


def _placement(tokens: list[str], line: int) -> tuple[float, float, float, float | None]:
    time_us = _number(tokens[0], "time", line)
    algbw = _number(tokens[1], "algbw", line)
    busbw = _number(tokens[2], "busbw", line)
    wrong = None if tokens[3] == "N/A" else _number(tokens[3], "#wrong", line)
    return time_us, algbw, busbw, wrong


def _data_row(tokens: list[str], line: int) -> list[tuple]:
    if len(tokens) < 9:
        raise LogError(f"line {line}: a data row has size, count, type, redop, root and then time, algbw, busbw "
                       f"and #wrong; this one has {len(tokens)} fields")
    size = int(_number(tokens[0], "size", line, whole=True))
    count = int(_number(tokens[1], "count", line, whole=True))
    kind, redop = tokens[2], tokens[3]
    root = int(_number(tokens[4], "root", line, whole=True))
    rest = tokens[5:]
    numeric = len(rest)
    while numeric and not _FIGURE.fullmatch(rest[numeric - 1]):
        numeric -= 1                              # a timestamp at the end of the row
    rest = rest[:numeric]
    per = next((k for k in sorted(_PLACEMENT_FIELDS, reverse=True) if len(rest) == 2 * k), None)
    out = []
    if per is not None:
        for placement, start in (("out-of-place", 0), ("in-place", per)):
            out.append((size, count, kind, redop, root, placement, *_placement(rest[start:start + 4], line)))
    elif len(rest) in _PLACEMENT_FIELDS:           # a trace replay: in place only
        out.append((size, count, kind, redop, root, "in-place", *_placement(rest[:4], line)))
    else:
        raise LogError(f"line {line}: after size, count, type, redop and root a data row has 4 or 8 figures per "
                       f"placement (time, algbw, busbw, #wrong[, i_min, i_max, i_p99, i_cv%]); this one has "
                       f"{len(rest)}")
    return out


def read_bench_log(data: bytes | str) -> BenchLog:
    """The nccl-tests / rccl-tests log ``data`` (module docstring), at most ``MAX_LOG_BYTES``; LogError (one line)
    for anything it cannot read, and for a log with no data row."""
    import pandas as pd

    if len(data) > MAX_LOG_BYTES:
        raise LogError(f"a benchmark log holds at most {MAX_LOG_BYTES // 2 ** 20} MiB, this one is larger")
    if isinstance(data, bytes):
        try:
            data = data.decode("utf-8")
        except UnicodeDecodeError:
            raise LogError("a benchmark log is UTF-8 text; this one is not") from None
    program, avg, devices, records, notes, programs = None, None, {}, [], [], []
    for number, raw in enumerate(data.splitlines(), start=1):
        text = raw.strip()
        if not text:
            continue
        if text.startswith("#"):
            if (m := _PROGRAM.match(text)) is not None:
                program = m.group(1)[:60]
                if program not in programs:
                    programs.append(program)
            elif (m := _RANK.match(text)) is not None:
                devices[int(m.group(1))] = (m.group(2), int(m.group(3)), m.group(4).strip())
            elif (m := _AVG.match(text)) is not None:
                avg = _number(m.group(1), "the average bus bandwidth", number)
            continue
        if not re.match(r"[-+]?\d", text):
            notes.append(f"line {number} skipped: {text[:60]}")      # NCCL's own INFO/WARN lines and the like
            continue
        records += [row + (program,) for row in _data_row(text.split(), number)]
        if len(records) > 2 * MAX_LOG_ROWS:
            raise LogError(f"more than {MAX_LOG_ROWS:,} data rows: not a benchmark log the studio reads")
    if not records:
        raise LogError("no data rows (size count type redop root time algbw busbw #wrong ...): not an nccl-tests "
                       "or rccl-tests log")
    if devices and sorted(devices) != list(range(len(devices))):
        raise LogError(f"the Rank lines name ranks {sorted(devices)[:8]}..., not 0 to {len(devices) - 1}")
    rows = pd.DataFrame(records, columns=list(COLUMNS))
    program = programs[0] if programs else None
    collective = PROGRAMS.get(program) if program else None
    for name in programs:
        if name not in PROGRAMS:
            notes.append(f"{name} times a collective the studio does not build")
    if len(programs) > 1:
        notes.append(f"the log times {len(programs)} programs: {', '.join(programs[:4])}")
    return BenchLog(program, collective, len(devices) or None, [devices[r] for r in sorted(devices)], rows, avg,
                    notes, tuple(programs))
