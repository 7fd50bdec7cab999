"""Long solves that a page can stop: the work runs in a child process, the page's script thread waits for it.

A Streamlit script stops where it next talks to the browser: the toolbar's Stop, a widget changed meanwhile or a
Cancel button raise ``StopException``/``RerunException`` (BaseExceptions) out of the next ``st`` call. A solve that
sits in HiGHS's C code (TE-CCL's MILP, the all-to-all LP) makes no such call until it returns, so it cannot be
stopped in the script thread. ``run`` therefore runs ``fn(*args, progress=...)`` in a child process of its own
process group and, while waiting, updates a progress bar every ``TICK_S`` seconds (the elapsed time in its text):
that update is where the stop arrives, and the ``finally`` kills the child and every process it started (BFB's
and the bundle's workers). The session's caches never see a half-finished result, so the next run starts clean.

Children come from a fork server: the app server runs several threads, and a plain fork could copy a lock that
another thread holds. The fork server preloads the solvers (``_preload``), so a child starts in hundredths of a
second (measured: an empty job 0.015 s, a ring(8) allreduce 0.16 s; the fork server's own start, once per app
process, 2 to 3 s).

``fn`` and ``args`` should be picklable (module-level functions and classes, topologies, options); where they
are not, ``fn`` runs here instead (not stoppable). The child's return value and exceptions come back pickled. The
project's own errors keep their type; any other error comes back as a ``JobError`` with its one-line message.
"""
from __future__ import annotations

import multiprocessing
import os
import signal
import time
from typing import Any, Callable

from solvers.core.processes import start as start_process

POLL_S = 0.1              # how often the child is checked on
TICK_S = 1.0              # how often the page's bar is redrawn (and a Stop can arrive): 20 sessions at 10 a second
                          # kept two CPUs busy drawing bars
_CONTEXT = None


def _preload() -> list[str]:
    """The modules a child needs before it can solve anything: the synthesize entry point, the topology
    expressions, and every wing's synthesizers (what ``solvers.registry.load_builtin`` imports, about a second)."""
    import importlib.util
    import pkgutil

    import solvers

    wings = [f"solvers.{m.name}.synthesizers" for m in pkgutil.iter_modules(solvers.__path__) if m.ispkg
             and importlib.util.find_spec(f"solvers.{m.name}.synthesizers") is not None]
    return ["solvers.synthesize", "topologies", *wings]


class JobError(RuntimeError):
    """A child process that failed outside the project's own error types, or died without an answer."""


def _context():
    global _CONTEXT
    if _CONTEXT is None:
        ctx = multiprocessing.get_context("forkserver")
        try:
            ctx.set_forkserver_preload(_preload())
        except Exception:      # a fork server already running keeps its own preload; children import on demand
            pass
        _CONTEXT = ctx
    return _CONTEXT


def _child(conn, fn: Callable, args: tuple) -> None:
    os.setsid()              # its own process group: the parent kills the child with its workers in one signal
    last = [0.0]

    def progress(phase: str, fraction: float) -> None:
        now = time.monotonic()
        if now - last[0] >= POLL_S or fraction >= 1.0:
            last[0] = now
            conn.send(("progress", str(phase), float(fraction)))
    try:
        value = fn(*args, progress=progress)
    except BaseException as exc:     # noqa: BLE001 - every failure goes back to the page, one line
        from solvers.core.errors import NotApplicable, ScheduleError
        from topologies.model import TopologyError

        if isinstance(exc, (NotApplicable, ScheduleError, TopologyError, ValueError)):
            try:
                conn.send(("error", exc))
                return
            except Exception:
                pass
        first = str(exc).splitlines()[0] if str(exc) else ""
        conn.send(("error", JobError(f"{type(exc).__name__}: {first}" if first else type(exc).__name__)))
        return
    conn.send(("done", value))


def _kill(process) -> None:
    if process.pid is None:
        return
    try:
        os.killpg(process.pid, signal.SIGKILL)
    except (ProcessLookupError, PermissionError):
        pass
    process.join(5)


def run(fn: Callable, *args, progress: Callable[[str, float], None] | None = None,
        tick: Callable[[float], None] | None = None) -> Any:
    """``fn(*args, progress=...)`` in a child process; its return value, or its exception raised here.

    ``progress(phase, fraction)`` hears the child's progress; ``tick(elapsed_s)`` is called every ``TICK_S``
    seconds (the page updates its bar there, which is where Streamlit stops a run).
    Whatever ends the wait early (a stop, a rerun, KeyboardInterrupt) kills the child and its workers."""
    ctx = _context()
    receive, send = ctx.Pipe(duplex=False)
    process = ctx.Process(target=_child, args=(send, fn, args))
    start = last_tick = time.monotonic()
    try:
        start_process(process)
    except Exception:            # arguments a fork server cannot be sent (a class defined in a function): here
        receive.close()
        send.close()
        return fn(*args, progress=progress)
    send.close()
    try:
        while True:
            if receive.poll(POLL_S):
                try:
                    kind, *rest = receive.recv()
                except EOFError:
                    process.join(1)
                    raise JobError(f"the solve stopped without an answer (exit code {process.exitcode})") from None
                if kind == "progress":
                    if progress is not None:
                        progress(rest[0], rest[1])
                elif kind == "error":
                    raise rest[0]
                else:
                    return rest[0]
            elif not process.is_alive() and not receive.poll(0):
                # (checked again: a child that answered and exited just after the poll left its answer there)
                raise JobError(f"the solve stopped without an answer (exit code {process.exitcode})")
            now = time.monotonic()
            if tick is not None and now - last_tick >= TICK_S:
                last_tick = now
                tick(now - start)
    finally:
        receive.close()
        _kill(process)


def synthesize_job(topo, algo, collective: str, options: dict, total_bytes: float | None = None,
                   progress: Callable[[str, float], None] | None = None):
    """``solvers.synthesize`` for ``run``: the verified Result (built and verified in the child). ``algo``: a
    registered name or the synthesizer class."""
    from solvers.synthesize import synthesize

    return synthesize(topo, algo, collective, progress=progress, options=options, total_bytes=total_bytes)
