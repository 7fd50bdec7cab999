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

Solves share the machine fairly (issue 44): at most ``max_solves()`` children run at once in one app process
(``STUDIO_MAX_SOLVES``; by default one per CPU), and the rest wait their turn in arrival order (``SolveQueue``),
the page showing its place in line. A solve that has used ``HEAVY_CPU_S`` of CPU is a heavy one: ``demote`` moves
it to the lowest CPU priority (niceness ``SOLVE_NICE``), so it takes the CPU that page views and short solves
leave over rather than slowing them, and it moves to the background, where up to ``max_solves()`` heavy solves
run without holding the line's slots (``SolveQueue.to_background``). A short solve (most pages' schedules) keeps
the app's priority and ends as quickly as it can. Where Linux shares the CPUs between sessions first (autogroup
scheduling), a process's niceness only counts within its session, so each child runs in a session of its own and
its session's autogroup is demoted too: before that, a TE-CCL solve at nice 10 still slowed two browser
sessions' Compose from 10.3 s to 25.6 s; demoted from the start, solves starved under twenty browsers, the
Schedule step timing out after 300 s.

A page's heavy solve leaves the page's run (``run`` with a ``key``): once it is heavy and has run ``detach_s()``
seconds, a thread of its own waits for the child, ``Detached`` is raised to the page, and the solve is
``background(key)`` until the page takes its answer (``take``). The page then ends its run and looks after the
solve every few seconds (``studio.widgets.background_panel``). A script left running through a whole solve kept
Streamlit's running icon and the progress bar redrawing in its browser, 0.1 CPU s a second, and with twenty other
sessions on two CPUs it raised their Compose p95 by 24.5 % (bench/RESULTS.md). A background solve ends with
``cancel`` (its session's Cancel) or when no page has asked after it for ``ABANDON_S`` seconds (the session closed
or moved on); ``_end_background`` kills those left when the app exits.

``fn`` and ``args`` should be picklable (module-level functions and classes, topologies, options); where they
are not, ``fn`` runs here instead (not stoppable). The child's return value and exceptions come back pickled. The
project's own errors keep their type; any other error comes back as a ``JobError`` with its one-line message.
"""
from __future__ import annotations

import atexit
import multiprocessing
import os
import signal
import threading
import time
from collections import deque
from typing import Any, Callable

from solvers.core.processes import start as start_process

POLL_S = 0.1              # how often the child is checked on
TICK_S = 1.0              # how often the page's bar is redrawn (and a Stop can arrive): 20 sessions at 10 a second
                          # kept two CPUs busy drawing bars
SOLVE_NICE = 19          # a heavy solve's niceness: anything else on the machine comes first when CPUs are short
HEAVY_CPU_S = 2.0        # the CPU seconds after which a solve counts as heavy
MAX_SOLVES_ENV = "STUDIO_MAX_SOLVES"
DETACH_S = 5.0           # a heavy solve that has run this long leaves its page's run (``run`` with a key)
DETACH_ENV = "STUDIO_DETACH_S"
ABANDON_S = 30.0         # a background solve that no page has asked after for this long is killed
_CONTEXT = None


def max_solves() -> int:
    """How many solves one app process runs at once: ``STUDIO_MAX_SOLVES`` (a positive integer), else this
    machine's CPUs."""
    text = os.environ.get(MAX_SOLVES_ENV, "").strip()
    if text:
        try:
            value = int(text)
        except ValueError:
            raise ValueError(f"{MAX_SOLVES_ENV}={text!r}: not a whole number") from None
        if value < 1:
            raise ValueError(f"{MAX_SOLVES_ENV}={value}: must be at least 1")
        return value
    return max(1, os.cpu_count() or 1)


class SolveQueue:
    """At most ``slots`` solves at once; the others wait in arrival order. ``enter(waiting)`` returns once this
    caller holds a slot, calling ``waiting(place, running)`` every ``TICK_S`` seconds meanwhile (place 1 is next);
    whatever that call raises (a page's Stop) takes the caller out of the line. ``leave()`` frees the slot. A solve
    found heavy may move to the background (``to_background``), so that one long solve does not hold up the
    line's short ones."""

    def __init__(self, slots: int):
        self.slots = slots
        self.running = 0
        self.background = 0
        self._line: deque = deque()
        self._cond = threading.Condition()

    def enter(self, waiting: Callable[[int, int], None] | None = None) -> None:
        ticket = object()
        last = None
        with self._cond:
            self._line.append(ticket)
        try:
            while True:
                with self._cond:
                    if self._line[0] is ticket and self.running < self.slots:
                        self._line.popleft()
                        self.running += 1
                        self._cond.notify_all()      # the next in line may have a free slot too
                        return
                    place, running = self._line.index(ticket) + 1, self.running
                    now = time.monotonic()
                    if last is not None and now - last < TICK_S:
                        self._cond.wait(TICK_S - (now - last))
                        continue
                if waiting is not None:              # outside the lock: a page's Stop is raised from here
                    waiting(place, running)
                last = time.monotonic()
        except BaseException:
            with self._cond:
                if ticket in self._line:
                    self._line.remove(ticket)
                self._cond.notify_all()
            raise

    def to_background(self) -> bool:
        """Move a heavy solve that holds a slot to the background, freeing its slot for the line, when fewer than
        ``slots`` are there already (True: then leave with ``leave(background=True)``). At most ``2 * slots``
        children thus run at once, half of them at the lowest priority."""
        with self._cond:
            if self.background >= self.slots:
                return False
            self.background += 1
            self.running -= 1
            self._cond.notify_all()
            return True

    def leave(self, background: bool = False) -> None:
        with self._cond:
            if background:
                self.background -= 1
            else:
                self.running -= 1
            self._cond.notify_all()

    def waiting(self) -> int:
        with self._cond:
            return len(self._line)


_QUEUE: SolveQueue | None = None
_QUEUE_LOCK = threading.Lock()


def solve_queue() -> SolveQueue:
    """This process's queue of solves (made on first use, ``max_solves()`` slots)."""
    global _QUEUE
    with _QUEUE_LOCK:
        if _QUEUE is None:
            _QUEUE = SolveQueue(max_solves())
        return _QUEUE


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


def cpu_seconds(pid: int) -> float | None:
    """User plus system CPU seconds of process ``pid`` so far (its own threads; Linux's /proc), None if unknown."""
    try:
        with open(f"/proc/{pid}/stat") as fh:
            fields = fh.read().rsplit(")", 1)[1].split()
        return (int(fields[11]) + int(fields[12])) / os.sysconf("SC_CLK_TCK")
    except (OSError, IndexError, ValueError):
        return None


def demote(pid: int, nice: int = SOLVE_NICE) -> None:
    """Process group ``pid`` (a child and the workers it started) at niceness ``nice``, and its session's
    autogroup too where the kernel has one."""
    try:
        os.setpriority(os.PRIO_PGRP, pid, nice)
    except OSError:
        pass
    try:
        with open(f"/proc/{pid}/autogroup", "w") as fh:
            fh.write(str(nice))
    except OSError:               # no autogroup scheduling here (or not Linux): the niceness alone then
        pass


def _child(conn, fn: Callable, args: tuple) -> None:
    os.setsid()              # its own process group (the parent kills the child with its workers in one signal)
                             # and session (its autogroup, which ``demote`` can lower without lowering the app)
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
        tick: Callable[[float], None] | None = None, queued: Callable[[int, int], None] | None = None,
        key: str | None = None) -> Any:
    """``fn(*args, progress=...)`` in a child process once the solve queue (``solve_queue``) gives it a slot; its
    return value, or its exception raised here.

    ``queued(place, running)`` is called every ``TICK_S`` seconds while the solve waits for a slot (place 1 is
    next; ``running`` solves hold the slots); ``progress(phase, fraction)`` hears the child's progress;
    ``tick(elapsed_s)`` is called every ``TICK_S`` seconds of the solve (the page updates its bar there, which is
    where Streamlit stops a run). Whatever ends the wait early (a stop, a rerun, KeyboardInterrupt) takes the solve
    out of the line, or kills the child and its workers.

    With a ``key``, a heavy solve that has run ``detach_s()`` seconds goes on without its caller: ``Detached`` is
    raised, and the solve is then this process's ``background(key)`` (module docstring)."""
    limit = detach_s() if key is not None else None       # a bad setting is said before the solve takes a slot
    queue = solve_queue()
    queue.enter(queued)
    if key is not None:
        return _run_detachable(fn, args, progress, tick, key, queue, limit)
    lane = {"background": False}
    try:
        return _run_child(fn, args, progress, tick, lambda: lane.update(background=queue.to_background()))
    finally:
        queue.leave(background=lane["background"])


class Detached(Exception):
    """A heavy solve left its page's run and goes on in the background: ``entry`` (a ``Background``)."""

    def __init__(self, entry: "Background"):
        super().__init__(f"{entry.key}: solving in the background")
        self.entry = entry


class Abandoned(JobError):
    """A background solve that was cancelled, or that no page asked after for ``ABANDON_S`` seconds."""


class Background:
    """One solve and what its page needs to show it: the child's last progress (``phase``, ``fraction``), when it
    started, and once ``done`` its ``value`` or ``error``. A page that asks after it calls ``touch``; the thread
    that waits for the child kills it once ``cancel`` was called or, after the solve went to the background, once
    no page has touched it for ``ABANDON_S`` seconds (the session closed, or its page moved on)."""

    def __init__(self, key: str):
        self.key = key
        self.phase, self.fraction = "", 0.0
        self.started = self.seen = time.monotonic()
        self.heavy = False                   # demoted: it has used HEAVY_CPU_S of CPU
        self.detached = False                # its page no longer waits for it
        self.done = threading.Event()
        self.value: Any = None
        self.error: BaseException | None = None
        self.processes: list = []            # the child, for ``_end_background`` at exit
        self._cancelled = threading.Event()

    def progress(self, phase: str, fraction: float) -> None:
        self.phase, self.fraction = phase, fraction

    def touch(self) -> None:
        self.seen = time.monotonic()

    def cancel(self) -> None:
        self._cancelled.set()

    def elapsed(self) -> float:
        return time.monotonic() - self.started

    def check(self, _elapsed: float = 0.0) -> None:
        """Raises ``Abandoned`` (in the waiting thread, which then kills the child) when the solve should stop."""
        if self._cancelled.is_set():
            raise Abandoned("the solve was cancelled")
        if self.detached and time.monotonic() - self.seen > ABANDON_S:
            raise Abandoned(f"no page asked after the solve for {ABANDON_S:g} s")

    def result(self) -> Any:
        if self.error is not None:
            raise self.error
        return self.value


_BACKGROUND: dict[str, Background] = {}
_BACKGROUND_LOCK = threading.Lock()


def detach_s() -> float:
    """Seconds after which a heavy solve leaves its page's run: ``STUDIO_DETACH_S`` (a number; 0 detaches as
    soon as the solve is heavy), else ``DETACH_S``."""
    text = os.environ.get(DETACH_ENV, "").strip()
    if not text:
        return DETACH_S
    try:
        value = float(text)
    except ValueError:
        raise ValueError(f"{DETACH_ENV}={text!r}: not a number of seconds") from None
    if not value >= 0:
        raise ValueError(f"{DETACH_ENV}={value}: must be at least 0")
    return value


def background(key: str) -> Background | None:
    """The solve that ``run`` left running (or that has finished since) under ``key``, if any."""
    with _BACKGROUND_LOCK:
        _forget_unclaimed()
        return _BACKGROUND.get(key)


def _forget_unclaimed() -> None:
    """Drop the answers that no page has asked after for ``ABANDON_S`` seconds (its page moved on before the
    solve ended); call with ``_BACKGROUND_LOCK`` held."""
    now = time.monotonic()
    for key in [k for k, e in _BACKGROUND.items() if e.done.is_set() and now - e.seen > ABANDON_S]:
        del _BACKGROUND[key]


def take(key: str) -> Any:
    """The finished background solve's value (or its error, raised), once: it leaves the registry."""
    with _BACKGROUND_LOCK:
        entry = _BACKGROUND.pop(key)
    return entry.result()


def cancel(prefix: str) -> int:
    """Cancel every background solve whose key starts with ``prefix`` (a session's); how many there were."""
    with _BACKGROUND_LOCK:
        entries = [e for k, e in _BACKGROUND.items() if k.startswith(prefix)]
    for entry in entries:
        entry.cancel()
    return len(entries)


@atexit.register
def _end_background() -> None:
    """At the app's exit, kill the solves left in the background at once: nothing waits for them any more, and
    multiprocessing's own exit handler would wait for each child to end (a TE-CCL MILP: up to its time limit)."""
    with _BACKGROUND_LOCK:
        entries = list(_BACKGROUND.values())
    for entry in entries:
        entry.cancel()
        for process in entry.processes:
            _kill(process)


def _run_detachable(fn: Callable, args: tuple, progress, tick, key: str, queue: "SolveQueue", limit: float) -> Any:
    """``run`` with a ``key``: a thread waits for the child (and frees the queue's slot), this one for the thread,
    ticking the page, until the answer comes or the solve, heavy, has run ``limit`` seconds."""
    entry = Background(key)
    lane = {"background": False}

    def heavy() -> None:
        lane.update(background=queue.to_background())
        entry.heavy = True

    def wait_for_child() -> None:
        try:
            entry.value = _run_child(fn, args, entry.progress, entry.check, heavy, entry.processes.append)
        except BaseException as exc:          # noqa: BLE001 - handed to whoever takes the result
            entry.error = exc
        finally:
            queue.leave(background=lane["background"])
            entry.done.set()
            if isinstance(entry.error, Abandoned):
                with _BACKGROUND_LOCK:
                    if _BACKGROUND.get(key) is entry:
                        del _BACKGROUND[key]

    waiter = threading.Thread(target=wait_for_child, name=f"solve {key[:40]}", daemon=True)
    waiter.start()
    try:
        while not entry.done.wait(TICK_S):
            if progress is not None and entry.phase:
                progress(entry.phase, entry.fraction)
            if tick is not None:
                tick(entry.elapsed())
            if entry.heavy and entry.elapsed() >= limit:
                entry.detached = True
                entry.touch()
                with _BACKGROUND_LOCK:
                    _forget_unclaimed()
                    _BACKGROUND[key] = entry
                raise Detached(entry)
    except Detached:
        raise
    except BaseException:                     # a stop or a rerun: the solve ends with the wait
        entry.cancel()
        waiter.join(10)
        raise
    waiter.join()
    if progress is not None and entry.phase:
        progress(entry.phase, entry.fraction)
    return entry.result()


def _run_child(fn: Callable, args: tuple, progress, tick, heavy: Callable[[], None] | None = None,
               started: Callable[[Any], None] | None = None) -> Any:
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
    if started is not None:
        started(process)
    demoted = False
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
            if not demoted and now - start >= HEAVY_CPU_S:
                used = cpu_seconds(process.pid)
                if used is None or used >= HEAVY_CPU_S:
                    demote(process.pid)
                    demoted = True
                    if heavy is not None:
                        heavy()
    finally:
        receive.close()
        _kill(process)


def synthesize_job(topo, algo, collective: str, options: dict, total_bytes: float | None = None,
                   progress: Callable[[str, float], None] | None = None):
    """``solvers.synthesize`` for ``run``: the verified Result (built and verified in the child). ``algo``: a
    registered name or the synthesizer class."""
    from solvers.synthesize import synthesize

    return synthesize(topo, algo, collective, progress=progress, options=options, total_bytes=total_bytes)
