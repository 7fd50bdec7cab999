"""studio.jobs: a heavy solve that leaves its page's run and goes on in the background (issue 44), found again
by its key, cancelled by its session, or killed once no page asks after it. The page's side in a real browser is
tests/browser/test_background_solve.py."""
from __future__ import annotations

import os
import time
from pathlib import Path

import pytest

from studio import jobs
from tests.helpers import Stop, alive


def heavy(rest_s: float, pidfile: str = "", progress=None):
    """Burns more than HEAVY_CPU_S of CPU (so it is demoted), then rests ``rest_s`` and answers."""
    if pidfile:
        Path(pidfile).write_text(str(os.getpid()))
    start = time.process_time()
    while time.process_time() - start < jobs.HEAVY_CPU_S + 0.3:
        pass
    progress("resting", 0.5)
    time.sleep(rest_s)
    return "answer"


def _wait(condition, timeout_s: float = 30.0) -> bool:
    deadline = time.monotonic() + timeout_s
    while not condition() and time.monotonic() < deadline:
        time.sleep(0.05)
    return condition()


@pytest.fixture
def detach_now(monkeypatch):
    monkeypatch.setenv(jobs.DETACH_ENV, "0")
    monkeypatch.setattr(jobs, "_QUEUE", jobs.SolveQueue(2))
    yield
    for key in list(jobs._BACKGROUND):
        jobs.cancel(key)


def test_a_heavy_solve_leaves_the_wait_and_its_answer_is_taken_once(detach_now):
    ticks = []
    with pytest.raises(jobs.Detached) as gone:
        jobs.run(heavy, 2.0, progress=lambda *a: None, tick=ticks.append, key="session-a|one")
    entry = gone.value.entry
    assert entry.heavy and entry.detached and not entry.done.is_set()
    assert jobs.background("session-a|one") is entry
    assert entry.elapsed() >= 0 and ticks            # the page's bar was ticked while it waited
    assert _wait(entry.done.is_set)
    assert entry.phase == "resting"
    assert jobs.take("session-a|one") == "answer"
    assert jobs.background("session-a|one") is None
    queue = jobs.solve_queue()
    assert queue.running == 0 and queue.background == 0


def test_a_light_solve_never_leaves_however_long_it_waits(detach_now, tmp_path):
    # sleeping uses no CPU: not heavy, so its page keeps waiting (and can stop it) however long it takes
    assert jobs.run(_sleep_then_answer, 1.5, key="session-a|light") == "slept"
    assert jobs.background("session-a|light") is None


def _sleep_then_answer(seconds: float, progress=None):
    time.sleep(seconds)
    return "slept"


def test_cancel_kills_the_sessions_background_solves_only(detach_now, tmp_path):
    mine, theirs = tmp_path / "mine", tmp_path / "theirs"
    for key, pidfile in (("session-a|x", mine), ("session-b|x", theirs)):
        with pytest.raises(jobs.Detached):
            jobs.run(heavy, 60.0, str(pidfile), key=key)
    pids = {f: int(f.read_text()) for f in (mine, theirs)}
    assert jobs.cancel("session-a|") == 1
    assert _wait(lambda: not alive(pids[mine]), 15), "the cancelled solve's child still runs"
    assert _wait(lambda: jobs.background("session-a|x") is None)
    assert alive(pids[theirs]) and jobs.background("session-b|x") is not None
    jobs.cancel("session-b|")
    assert _wait(lambda: not alive(pids[theirs]), 15)


def test_a_solve_no_page_asks_after_is_killed(detach_now, monkeypatch, tmp_path):
    monkeypatch.setattr(jobs, "ABANDON_S", 1.0)
    pidfile = tmp_path / "pid"
    with pytest.raises(jobs.Detached) as gone:
        jobs.run(heavy, 60.0, str(pidfile), key="session-c|x")
    pid = int(pidfile.read_text())
    assert alive(pid)
    assert _wait(lambda: not alive(pid), 15), "an abandoned solve still runs"
    assert _wait(gone.value.entry.done.is_set)
    assert isinstance(gone.value.entry.error, jobs.Abandoned)
    assert jobs.background("session-c|x") is None


def test_a_page_that_asks_keeps_its_solve(detach_now, monkeypatch):
    monkeypatch.setattr(jobs, "ABANDON_S", 1.0)
    with pytest.raises(jobs.Detached) as gone:
        jobs.run(heavy, 2.5, key="session-d|x")
    entry = gone.value.entry
    while not entry.done.is_set():              # what the page's panel does every few seconds
        entry.touch()
        time.sleep(0.2)
    assert jobs.take("session-d|x") == "answer"


def test_a_stop_before_it_leaves_kills_the_child(monkeypatch, tmp_path):
    monkeypatch.setenv(jobs.DETACH_ENV, "600")
    pidfile = tmp_path / "pid"

    def tick(elapsed: float) -> None:
        if pidfile.exists() and elapsed > 0.5:
            raise Stop()
    with pytest.raises(Stop):
        jobs.run(heavy, 60.0, str(pidfile), tick=tick, key="session-e|x")
    assert not alive(int(pidfile.read_text())), "the stopped solve's child still runs"
    assert jobs.background("session-e|x") is None
    queue = jobs.solve_queue()
    assert _wait(lambda: queue.running == 0 and queue.background == 0, 5)


def test_errors_come_back_through_the_background(detach_now):
    with pytest.raises(jobs.Detached):
        jobs.run(heavy_then_fail, key="session-f|x")
    entry = jobs.background("session-f|x")
    assert _wait(entry.done.is_set)
    with pytest.raises(jobs.JobError, match="ZeroDivisionError"):
        jobs.take("session-f|x")
    assert jobs.background("session-f|x") is None


def heavy_then_fail(progress=None):
    heavy(2.0, progress=lambda *a: None)
    return 1 / 0


@pytest.mark.parametrize("text, message", [("soon", "not a number"), ("-1", "at least 0"), ("nan", "at least 0")])
def test_the_detach_setting_is_checked(monkeypatch, text, message):
    monkeypatch.setenv(jobs.DETACH_ENV, text)
    with pytest.raises(ValueError, match=message):
        jobs.detach_s()


def test_the_detach_setting_defaults_and_reads(monkeypatch):
    monkeypatch.delenv(jobs.DETACH_ENV, raising=False)
    assert jobs.detach_s() == jobs.DETACH_S
    monkeypatch.setenv(jobs.DETACH_ENV, "2.5")
    assert jobs.detach_s() == 2.5


def test_an_answer_no_page_comes_for_is_forgotten(detach_now, monkeypatch):
    monkeypatch.setattr(jobs, "ABANDON_S", 1.0)
    with pytest.raises(jobs.Detached) as gone:
        jobs.run(heavy, 1.5, key="session-g|x")
    entry = gone.value.entry
    while not entry.done.is_set():              # asked after until it ends, then never again
        entry.touch()
        time.sleep(0.1)
    assert jobs.background("session-g|x") is entry
    time.sleep(1.2)
    assert jobs.background("session-g|x") is None


def test_a_bad_detach_setting_takes_no_slot(monkeypatch):
    monkeypatch.setenv(jobs.DETACH_ENV, "soon")
    monkeypatch.setattr(jobs, "_QUEUE", jobs.SolveQueue(1))
    with pytest.raises(ValueError, match="not a number"):
        jobs.run(_sleep_then_answer, 0.0, key="session-h|x")
    assert jobs.solve_queue().running == 0
