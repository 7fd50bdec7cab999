"""Design sweeps: a grid of expressions with parameters × synthesizers × collectives × sizes, each cell synthesized,
verified and timed by the runtime model, run on any ``concurrent.futures.Executor`` (issue 24; the studio hands
it Dask's, ``studio.cluster``), the rows written as they finish so that a stopped sweep resumes where it was.

The grid. An expression template names its parameters in braces, ``gkautz(4,{N})``; each parameter takes a list
(``8,16,32``) or an inclusive range ``start:stop:step`` (``64:1024:64``). The template is filled by plain text
substitution of the numbers (never evaluated) and parsed by ``topologies.expression`` like any other expression.
One task is one (expression, synthesizer, collective): it synthesizes once (``solvers.synthesize``: verified), then
times the schedule at every size with one runtime model and gives one row per size.

A row: the parameters, ``expr``, ``algo``, ``collective``, ``bytes``, ``status`` (``ok``, ``not applicable``,
``time-out`` or ``error``), ``message`` (one line), ``nodes``, ``steps``, ``tb_factor``, ``time_us``, ``algbw_GBps``,
``busbw_GBps``, ``bound_us`` (``solvers.runtime.bounds.schedule_bound``, the tightest lower bound we prove, in the same
prices: the fabric's own links; its name is no column, so that a sweep written before resumes), ``synthesis_s`` and
``worker`` (the host and process that solved it).

A time limit per task (``time_limit_s``) is kept cooperatively: the synthesis's progress reports check the clock
and stop it once the limit has passed (status ``time-out``). Synthesizers that report progress (BFB, ForestColl,
TACOS) stop at their next report; TE-CCL gets the limit as its own solver limit; the others, and the runtime
model after a synthesis, run to their end.

Resuming. ``run`` is told the task keys already written (``done``) and skips them; a task's rows are handed to
``on_rows`` together, so an interrupted sweep leaves whole tasks behind.
"""
from __future__ import annotations

import itertools
import os
import re
import socket
import time
from concurrent.futures import FIRST_COMPLETED, Executor, wait
from dataclasses import dataclass
from typing import Callable, Iterable, Sequence

from .core.errors import NotApplicable, ScheduleError

MAX_TASKS = 100_000
MAX_VALUES = 10_000
_PARAM = re.compile(r"\{([A-Za-z_]\w*)\}")
FIELDS = ("expr", "algo", "collective", "bytes", "status", "message", "nodes", "steps", "tb_factor", "time_us",
          "algbw_GBps", "busbw_GBps", "bound_us", "synthesis_s", "worker")


class TaskTimeout(Exception):
    """Raised from a synthesis's progress report once a task's time limit has passed (never a ValueError, so no
    solver takes it for bad input)."""


class SweepError(ValueError):
    """A grid that cannot be run: a bad parameter, a template naming an unknown one, too many tasks."""


@dataclass(frozen=True)
class Task:
    """One (expression, synthesizer, collective), with the parameter values that filled the template."""

    expr: str
    params: tuple[tuple[str, int], ...]
    algo: str
    collective: str
    sizes: tuple[float, ...]
    max_nodes: int | None = None
    time_limit_s: float | None = None

    @property
    def key(self) -> tuple[str, str, str]:
        return (self.expr, self.algo, self.collective)


def parse_values(text: str) -> list[int]:
    """'8,16,32' or '64:1024:64' (inclusive) -> the integers; SweepError otherwise."""
    text = text.strip()
    try:
        parts = [int(p) for p in text.split(":")] if ":" in text else [int(p) for p in text.split(",") if p.strip()]
        if ":" in text and (len(parts) != 3 or parts[2] <= 0):
            raise ValueError
    except ValueError:
        raise SweepError(f"'{text}' is not a list of integers (8,16,32) or a range start:stop:step "
                         "(64:1024:64)") from None
    if ":" in text:
        start, stop, step = parts
        if (stop - start) // step + 1 > MAX_VALUES:
            raise SweepError(f"'{text}' gives more than {MAX_VALUES} values")
        values = list(range(start, stop + 1, step))
    else:
        values = parts
    if not values:
        raise SweepError(f"'{text}' gives no values")
    return values


def parse_param(text: str) -> tuple[str, list[int]]:
    """'N=64:1024:64' -> ('N', [64, 128, ...])."""
    name, sep, values = text.partition("=")
    name = name.strip()
    if not sep or not re.fullmatch(r"[A-Za-z_]\w*", name):
        raise SweepError(f"a parameter is NAME=VALUES (N=64:1024:64 or N=8,16), got '{text}'")
    return name, parse_values(values)


def grid(template: str, params: dict[str, list[int]], algos: Sequence[str], collectives: Sequence[str],
         sizes: Sequence[float], max_nodes: int | None = None, time_limit_s: float | None = None) -> list[Task]:
    """The tasks of the grid, expressions in the order of the parameter values (the first parameter slowest)."""
    named = set(_PARAM.findall(template))
    if named - set(params):
        raise SweepError(f"the template names {', '.join(sorted(named - set(params)))} but no values are given "
                         f"(--param NAME=VALUES)")
    if set(params) - named:
        raise SweepError(f"the template has no {{{'}, {'.join(sorted(set(params) - named))}}} for the given "
                         "parameter values")
    if not algos or not collectives or not sizes:
        raise SweepError("a sweep needs at least one synthesizer, one collective and one size")
    if any(not s > 0 for s in sizes):
        raise SweepError("sizes must be positive numbers of bytes")
    if time_limit_s is not None and not time_limit_s > 0:
        raise SweepError("the time limit must be a positive number of seconds")
    names = list(params)
    count = 1
    for name in names:
        count *= len(params[name])
    if count * len(algos) * len(collectives) > MAX_TASKS:
        raise SweepError(f"the grid has {count * len(algos) * len(collectives):,} tasks, above {MAX_TASKS:,}")
    tasks = []
    for values in itertools.product(*(params[n] for n in names)):
        expr = template
        for name, value in zip(names, values):
            expr = expr.replace(f"{{{name}}}", str(value))
        for algo in algos:
            for coll in collectives:
                tasks.append(Task(expr, tuple(zip(names, values)), algo, coll, tuple(float(s) for s in sizes),
                                  max_nodes, time_limit_s))
    return tasks


def solve_task(task: Task) -> list[dict]:
    """The rows of one task (module docstring). Never raises for a bad design: its rows carry the status."""
    from topologies.expression import parse_topology
    from topologies.model import TopologyError

    from .runtime import Model
    from .runtime.bounds import schedule_bound
    from .synthesize import synthesize

    start = time.perf_counter()
    limit = task.time_limit_s
    progress, options = None, None
    if limit is not None:
        def progress(_phase, _fraction) -> None:
            if time.perf_counter() - start > limit:
                raise TaskTimeout(f"stopped after {limit:g} s, the sweep's time limit per task")

        if task.algo == "teccl":
            options = {"time_limit": max(1, int(limit))}
    try:
        topo = parse_topology(task.expr, max_nodes=task.max_nodes)
        result = synthesize(topo, task.algo, task.collective, progress=progress, options=options)
        model = Model(result.topology, result.schedule)
        runs = [model.run(m) for m in task.sizes]
    except TaskTimeout as exc:
        return _rows(task, "time-out", str(exc))
    except (NotApplicable, TopologyError) as exc:
        return _rows(task, "not applicable", _line(exc))
    except (ScheduleError, ValueError, ArithmeticError, MemoryError, RecursionError) as exc:
        return _rows(task, "error", f"{type(exc).__name__}: {_line(exc)}")
    seconds = time.perf_counter() - start
    base = _base(task)
    return [{**base, "bytes": m, "status": "ok", "message": "", "nodes": topo.num_nodes,
             "steps": result.cost.steps, "tb_factor": float(result.cost.tb_factor), "time_us": run.time_us,
             "algbw_GBps": run.algbw_gbs, "busbw_GBps": run.busbw_gbs,
             "bound_us": schedule_bound(result.topology, result.schedule, m, model.execution).time_us,
             "synthesis_s": round(seconds, 4)}
            for m, run in zip(task.sizes, runs)]


def _base(task: Task) -> dict:
    return {**dict(task.params), "expr": task.expr, "algo": task.algo, "collective": task.collective,
            "worker": f"{socket.gethostname()}:{os.getpid()}"}


def _rows(task: Task, status: str, message: str) -> list[dict]:
    return [{**_base(task), "bytes": m, "status": status, "message": message} for m in task.sizes]


def _line(exc: BaseException) -> str:
    text = str(exc)
    return text.splitlines()[0] if text else type(exc).__name__


def run(tasks: Iterable, executor: Executor, on_rows: Callable[[object, list[dict]], None],
        done: set | frozenset = frozenset(), progress: Callable[[int, int], None] | None = None,
        in_flight: int | None = None, solve: Callable[[object], list[dict]] | None = None,
        lost: Callable[[object, str], list[dict]] | None = None) -> int:
    """Solve the tasks whose key is not in ``done`` on ``executor``, handing each task's rows to ``on_rows`` as it
    finishes (in completion order); ``progress(finished, total)`` after each. At most ``in_flight`` tasks are
    submitted at once (default 8; callers pass twice their worker count), so a stopped sweep cancels little. Returns
    the number of tasks solved. Whatever stops the wait (KeyboardInterrupt) cancels the tasks not started.
    ``solve(task)`` gives a task's rows (default ``solve_task``: a design sweep's ``Task``; ``solvers.failures``
    passes its own, any picklable module function) and ``lost(task, message)`` the rows of a task whose worker
    raised or was lost (default: a sweep task's error rows)."""
    solve = solve or solve_task
    lost = lost or (lambda task, message: _rows(task, "error", message))
    todo = [t for t in tasks if t.key not in done]
    total, finished = len(todo), 0
    limit = in_flight or 8
    pending: dict = {}
    queue = iter(todo)
    try:
        while True:
            while len(pending) < limit:
                task = next(queue, None)
                if task is None:
                    break
                pending[executor.submit(solve, task)] = task
            if not pending:
                return finished
            ready, _ = wait(list(pending), return_when=FIRST_COMPLETED)
            for future in ready:
                task = pending.pop(future)
                try:
                    rows = future.result()
                except Exception as exc:       # noqa: BLE001 - a worker lost (Dask's KilledWorker) or a bug: a row
                    rows = lost(task, f"{type(exc).__name__}: {_line(exc)}")
                on_rows(task, rows)
                finished += 1
                if progress is not None:
                    progress(finished, total)
    finally:
        for future in pending:
            future.cancel()


MAX_LINE = 2**20                        # bytes of one rows-file line: far above any row this studio writes


def _not_regular(mode: int) -> str:
    """What a file that is not a regular file is, in words (``topologies.input_file.file_kind``)."""
    from topologies.input_file import file_kind

    return file_kind(mode) or "not a regular file"


def read_rows(path, columns: Sequence[str]) -> list[dict]:
    """``iter_rows`` as a list of dicts, without the line numbers."""
    return [row for _, row in iter_rows(path, columns)]


def iter_rows(path, columns: Sequence[str]):
    """The rows of a rows file (a sweep's or ``failures -o``'s CSV journal) as dicts of text, for resuming, each
    with the number of its (last) line: (line, row); none when there is no file. Refused with one SweepError line
    naming the file (and the line): anything but a regular file (a FIFO, a device or a link to one is never opened
    for reading, so nothing blocks and nothing endless is read), a header other than ``columns``, a line above
    ``MAX_LINE`` bytes or holding a NUL byte, text that is not UTF-8 or not CSV (a field above the ``csv``
    module's limit, 131,072 characters, included), and a row of another number of fields. A last line without its
    newline is the row a crash cut short (inside any field): it is dropped, as ``Journal.append`` drops it before
    writing. Reads line by line: memory follows the rows kept, not the file's size."""
    import csv
    import stat
    from pathlib import Path

    path = Path(path)
    try:
        st = os.stat(path)
    except FileNotFoundError:
        return
    except OSError as exc:
        raise SweepError(f"cannot read {path}: {exc.strerror or exc}") from None
    if not stat.S_ISREG(st.st_mode):
        raise SweepError(f"{path} is {_not_regular(st.st_mode)}: a rows file is read back to resume, so it must be "
                         "a regular file (name one)")
    try:
        fd = os.open(path, os.O_RDONLY | getattr(os, "O_NONBLOCK", 0) | getattr(os, "O_CLOEXEC", 0))
    except OSError as exc:
        raise SweepError(f"cannot read {path}: {exc.strerror or exc}") from None
    where = {"line": 0}

    def lines(fh):
        while True:
            raw = fh.readline(MAX_LINE + 1)
            if not raw:
                return
            where["line"] += 1
            if not raw.endswith(b"\n"):
                if len(raw) > MAX_LINE:
                    raise SweepError(f"{path} line {where['line']} is longer than {MAX_LINE:,} bytes: not a rows "
                                     "file of this studio")
                return                  # the last line, cut short by a crash: dropped
            if b"\0" in raw:
                raise SweepError(f"{path} line {where['line']} holds a NUL byte: not a rows file of this studio")
            try:
                yield raw.decode("utf-8")
            except UnicodeDecodeError:
                raise SweepError(f"{path} line {where['line']} is not UTF-8 text: not a rows file of this "
                                 "studio") from None

    with os.fdopen(fd, "rb") as fh:
        if not stat.S_ISREG(os.fstat(fh.fileno()).st_mode):           # swapped since the stat above
            raise SweepError(f"{path} is not a regular file: a rows file must be one")
        header = None
        try:
            for record in csv.reader(lines(fh), strict=True):
                if not record:
                    continue
                if header is None:
                    header = record
                    if header != list(columns):
                        shown = "".join(c if c.isprintable() else "?" for c in ", ".join(header)[:160])
                        raise SweepError(f"{path} holds rows of another sweep or failures run (line 1: columns "
                                         f"{shown}{' ...' if len(shown) == 160 else ''}); name another output file")
                    continue
                if len(record) != len(header):
                    raise SweepError(f"{path} line {where['line']} has {len(record)} fields, not the header's "
                                     f"{len(header)}: not a row of this run")
                yield where["line"], dict(zip(header, record))
        except csv.Error as exc:
            raise SweepError(f"{path} line {where['line']} is not CSV: {str(exc)[:120]}") from None


class Journal:
    """A sweep's rows on disk as CSV, appended a task at a time (flushed and synced), read back to resume.

    ``columns``: the parameter names then ``FIELDS``. The file is read back by ``read_rows`` (a regular file only,
    of these columns; a last line cut short by a crash is dropped). ``append`` cuts that line before writing, and
    a write that fails (a full disk) is undone: the file is truncated to the rows before it (or removed, if this
    write created it), so no half-written row is ever left."""

    def __init__(self, path, columns: Sequence[str]):
        from pathlib import Path

        self.path = Path(path)
        self.columns = list(columns)

    def rows(self) -> list[dict]:
        return read_rows(self.path, self.columns)

    def done(self, sizes: Sequence[float]) -> set[tuple[str, str, str]]:
        """The keys of tasks with a row for every size."""
        seen: dict[tuple[str, str, str], set[float]] = {}
        for r in self.rows():
            try:
                size = float(r["bytes"])
            except (KeyError, ValueError):
                continue                # not a size: the task runs again
            seen.setdefault((r["expr"], r["algo"], r["collective"]), set()).add(size)
        want = {float(s) for s in sizes}
        return {k for k, got in seen.items() if want <= got}

    def append(self, rows: list[dict]) -> None:
        """Append the rows (the header first into an empty file); OSError (one the caller words) when the path is
        not a regular file or the write fails, the file then as it was."""
        import csv
        import errno
        import io
        import stat

        existed = os.path.lexists(self.path)
        fd = os.open(self.path, os.O_RDWR | os.O_CREAT | getattr(os, "O_NONBLOCK", 0) | getattr(os, "O_CLOEXEC", 0),
                     0o666)
        try:
            st = os.fstat(fd)
            if not stat.S_ISREG(st.st_mode):
                raise OSError(errno.EINVAL, f"{_not_regular(st.st_mode)}, not a regular file for rows")
            keep = _whole_lines(fd, st.st_size)
            buf = io.StringIO()
            writer = csv.DictWriter(buf, fieldnames=self.columns, extrasaction="ignore")
            if keep == 0:
                writer.writeheader()
            writer.writerows(rows)
            data = buf.getvalue().encode("utf-8")
            try:
                if keep != st.st_size:
                    os.ftruncate(fd, keep)
                done = 0
                while done < len(data):
                    done += os.pwrite(fd, data[done:], keep + done)
                os.fsync(fd)
            except BaseException:
                try:
                    os.ftruncate(fd, keep)
                    if keep == 0 and not existed:
                        os.unlink(self.path)
                except OSError:
                    pass
                raise
        finally:
            os.close(fd)


def _whole_lines(fd: int, size: int) -> int:
    """The length of the file's whole lines: ``size`` when it ends in a newline (or is empty), else the end of its
    last newline (0 if none), found reading back from the end a block at a time."""
    if size == 0 or os.pread(fd, 1, size - 1) == b"\n":
        return size
    end = size
    while end > 0:
        start = max(0, end - 65536)
        block = os.pread(fd, end - start, start)
        at = block.rfind(b"\n")
        if at >= 0:
            return start + at + 1
        end = start
    return 0
