"""studio.jobs: long solves in a child process that a stopped page kills, with its workers (issue 23, load and
cancel). The Streamlit side (the Cancel button in a real browser) is tests/browser/test_cancel.py."""
from __future__ import annotations

import os
import subprocess
import sys
import time
import types
from pathlib import Path

import pytest

from solvers.core.errors import NotApplicable
from studio import jobs
from tests.helpers import Stop, alive
from topologies import parse_topology


def sleeper(pidfile: str, progress=None):
    """A solve that never ends on its own, with a worker process of its own (as BFB's pool has)."""
    worker = subprocess.Popen(["sleep", "300"])
    Path(pidfile).write_text(f"{os.getpid()} {worker.pid}")
    while True:
        progress("sleeping", 0.5)
        time.sleep(0.05)


def fails(kind: str, progress=None):
    if kind == "not applicable":
        raise NotApplicable("this design has no such schedule")
    if kind == "exit":
        os._exit(3)
    return 1 / 0


def test_the_child_answers_with_a_verified_result_and_progress():
    heard = []
    result = jobs.run(jobs.synthesize_job, parse_topology("gkautz(2,12)"), "bfb", "allgather", {},
                      progress=lambda phase, f: heard.append((phase, f)))
    assert result.verification.ok and result.schedule.algo == "bfb" and result.topology.num_nodes == 12
    assert heard and all(0.0 <= f <= 1.0 for _, f in heard)


def test_a_stopped_wait_kills_the_child_and_its_workers(tmp_path):
    pidfile = tmp_path / "pids"

    def tick(elapsed: float) -> None:
        if pidfile.exists() and pidfile.read_text().count(" ") == 1:
            raise Stop()
        assert elapsed < 60, "the child never started"

    t0 = time.monotonic()
    with pytest.raises(Stop):
        jobs.run(sleeper, str(pidfile), tick=tick)
    child, worker = map(int, pidfile.read_text().split())
    deadline = time.monotonic() + 5
    while (alive(child) or alive(worker)) and time.monotonic() < deadline:
        time.sleep(0.05)
    assert not alive(child) and not alive(worker)
    assert time.monotonic() - t0 < 30


def test_errors_come_back_in_one_line():
    with pytest.raises(NotApplicable, match="no such schedule"):
        jobs.run(fails, "not applicable")
    with pytest.raises(jobs.JobError, match="^ZeroDivisionError: division by zero$"):
        jobs.run(fails, "zero")
    with pytest.raises(jobs.JobError, match="without an answer .exit code 3"):
        jobs.run(fails, "exit")


def test_the_parents_main_script_is_not_run_in_the_child(tmp_path, monkeypatch):
    """Under Streamlit (and AppTest) ``__main__`` is the page script; a fork-server child used to import it
    by its file first, and died where that script cannot run outside Streamlit."""
    script = tmp_path / "page.py"
    script.write_text("raise SystemExit('the page script ran in the child')\n")
    main = types.ModuleType("__main__")
    main.__file__ = str(script)
    monkeypatch.setitem(sys.modules, "__main__", main)
    result = jobs.run(jobs.synthesize_job, parse_topology("ring(4)"), "ring", "allgather", {})
    assert result.verification.ok
    assert sys.modules["__main__"] is main


def test_arguments_a_child_cannot_take_run_here():
    """A function (or synthesizer class) defined inside another cannot be sent to the fork server: the solve
    runs in this process instead of failing."""
    def local(progress=None):
        return "here"

    assert jobs.run(local) == "here"


def test_an_answer_that_arrives_as_the_child_exits_is_taken(monkeypatch):
    """The child answers and exits between the parent's poll and its liveness check: the answer in the pipe wins
    (under 20 sessions this used to show an error instead of the schedule)."""
    import types

    class Receive:
        def __init__(self):
            self.polls = []

        def poll(self, timeout=0.0):
            self.polls.append(timeout)
            return 0 in self.polls         # nothing while waiting; there once the parent looks again

        def recv(self):
            return ("done", 42)

        def close(self):
            pass

    class Send:
        def close(self):
            pass

    class Exited:
        pid, exitcode = None, 0

        def __init__(self, *args, **kwargs):
            pass

        def start(self):
            pass

        def is_alive(self):
            return False

    receive = Receive()
    monkeypatch.setattr(jobs, "_context", lambda: types.SimpleNamespace(Pipe=lambda duplex: (receive, Send()),
                                                                         Process=Exited))
    assert jobs.run(fails, "never called") == 42 and 0 in receive.polls


# --- the solve queue (issue 44: fair sharing) ---

def test_the_queue_holds_a_solve_until_a_slot_is_free_and_tells_its_place():
    queue = jobs.SolveQueue(1)
    queue.enter()                                  # the first solve holds the only slot
    heard, entered = [], []

    def second():
        queue.enter(lambda place, running: heard.append((place, running)))
        entered.append(time.monotonic())
        queue.leave()

    import threading

    t = threading.Thread(target=second)
    t.start()
    time.sleep(1.5)
    assert not entered and heard and heard[0] == (1, 1)        # next in line, one solve running
    assert len(heard) <= 3                                     # told about once a TICK_S, not on every wake-up
    released = time.monotonic()
    queue.leave()
    t.join(5)
    assert entered and entered[0] - released < 0.5 and queue.running == 0 and queue.waiting() == 0


def test_the_queue_serves_in_arrival_order_and_a_stop_leaves_the_line():
    import threading

    queue = jobs.SolveQueue(1)
    queue.enter()
    order, places = [], {}

    def waiter(name, stop_after=None):
        def waiting(place, running):
            places.setdefault(name, []).append(place)
            if stop_after is not None and len(places[name]) >= stop_after:
                raise Stop()
        try:
            queue.enter(waiting)
        except Stop:
            order.append(f"{name} stopped")
            return
        order.append(name)
        queue.leave()

    threads = []
    for name, stop in (("a", None), ("b", 2), ("c", None)):
        threads.append(threading.Thread(target=waiter, args=(name, stop)))
        threads[-1].start()
        time.sleep(0.3)                            # arrival order a, b, c
    time.sleep(2.5)
    assert order == ["b stopped"] and places["c"][-1] == 2     # c moved up when b left the line
    queue.leave()
    for t in threads:
        t.join(5)
    assert order == ["b stopped", "a", "c"] and queue.running == 0 and queue.waiting() == 0


def test_several_slots_run_at_once_and_the_setting_is_checked(monkeypatch):
    queue = jobs.SolveQueue(2)
    queue.enter()
    queue.enter()                                  # two at once, no waiting
    assert queue.running == 2
    monkeypatch.setenv(jobs.MAX_SOLVES_ENV, "3")
    assert jobs.max_solves() == 3
    monkeypatch.setenv(jobs.MAX_SOLVES_ENV, "0")
    with pytest.raises(ValueError, match="at least 1"):
        jobs.max_solves()
    monkeypatch.setenv(jobs.MAX_SOLVES_ENV, "many")
    with pytest.raises(ValueError, match="not a whole number"):
        jobs.max_solves()
    monkeypatch.delenv(jobs.MAX_SOLVES_ENV)
    assert jobs.max_solves() == max(1, os.cpu_count() or 1)


def priority(spin_s: float = 0.0, progress=None):
    """Busy for ``spin_s`` seconds of CPU, then (its session, its group, its pid, its niceness, its autogroup)."""
    start = time.process_time()
    while time.process_time() - start < spin_s:
        pass
    if spin_s:
        time.sleep(3 * jobs.POLL_S)                 # the parent looks every POLL_S
    autogroup = Path("/proc/self/autogroup")
    return (os.getsid(0), os.getpgid(0), os.getpid(), os.getpriority(os.PRIO_PROCESS, 0),
            autogroup.read_text() if autogroup.exists() else None)


def test_a_heavy_solve_is_demoted_a_short_one_is_not_and_the_slot_is_freed_whatever_happens():
    ours = os.getpriority(os.PRIO_PROCESS, 0)
    sid, pgid, pid, nice, autogroup = jobs.run(priority, 0.0)
    assert sid == pid == pgid != os.getsid(0)       # a group and a session of its own
    assert nice == ours                             # short: the app's priority
    sid, pgid, pid, nice, autogroup = jobs.run(priority, jobs.HEAVY_CPU_S + 0.5)
    assert nice == jobs.SOLVE_NICE
    if autogroup is not None:                       # Linux with autogroup scheduling: the child's session demoted
        assert autogroup.split()[-1] == str(jobs.SOLVE_NICE)
        app_group = Path("/proc/self/autogroup").read_text().split()   # empty where we are in the kernel's root autogroup
        assert not app_group or app_group[-1] != str(jobs.SOLVE_NICE)
    with pytest.raises(jobs.JobError, match="ZeroDivisionError"):
        jobs.run(fails, "zero")
    queue = jobs.solve_queue()
    assert queue.running == 0 and queue.waiting() == 0


def test_a_heavy_solve_moves_to_the_background_and_frees_its_slot_for_the_line():
    queue = jobs.SolveQueue(1)
    queue.enter()
    assert queue.to_background() and queue.running == 0 and queue.background == 1
    queue.enter()                                  # the line's slot is free again
    assert not queue.to_background()               # the background is full (as many as slots): it keeps its slot
    assert queue.running == 1 and queue.background == 1
    queue.leave(background=True)
    queue.leave()
    assert queue.running == 0 and queue.background == 0


def niceness(progress=None):
    return os.nice(0)


def heavy_then_rest(progress=None):
    start = time.process_time()
    while time.process_time() - start < jobs.HEAVY_CPU_S + 0.5:
        pass
    time.sleep(3.0)
    return os.getpriority(os.PRIO_PROCESS, 0)


def test_a_heavy_child_frees_the_line_while_it_runs_and_leaves_the_background_when_it_ends(monkeypatch):
    import threading

    monkeypatch.setattr(jobs, "_QUEUE", jobs.SolveQueue(1))
    queue = jobs.solve_queue()
    answer = []
    t = threading.Thread(target=lambda: answer.append(jobs.run(heavy_then_rest)))
    t.start()
    deadline = time.monotonic() + 30
    while queue.background == 0 and time.monotonic() < deadline:
        time.sleep(0.05)
    assert queue.background == 1 and queue.running == 0
    assert jobs.run(niceness) == os.nice(0)        # a short solve gets the slot at once, at the app's priority
    assert t.is_alive()                            # while the heavy one still runs
    t.join(30)
    assert answer == [jobs.SOLVE_NICE] and queue.running == 0 and queue.background == 0
