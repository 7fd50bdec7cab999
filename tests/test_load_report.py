"""bench/load.py's alternated passes (``--pairs``), what its report says about them, and its sessions in lockstep
(issue 44)."""
import asyncio
import math
from concurrent.futures import ThreadPoolExecutor

from bench import load
from bench.load import Pass, pair_plan, report


def _pass(name: str, compose: list[float], solve_cpu: float | None = None) -> Pass:
    ps = Pass(name)
    ps.times["compose"] = list(compose)
    ps.times["schedule"] = [1.0] * len(compose)
    ps.wall, ps.solve_cpu = 100.0, solve_cpu
    return ps


def test_pairs_alternate_so_that_a_drift_weighs_on_both():
    plan = pair_plan(3)
    assert [solve for _, solve in plan] == [False, True, True, False, False, True]
    assert [name for name, _ in plan] == ["app 1", "app + solve 1", "app + solve 2", "app 2", "app 3",
                                          "app + solve 3"]
    assert pair_plan(0) == []


def test_report_compares_the_median_p95_of_each_kind_of_pass():
    # p95 of 20 latencies is the 19th: 10 + 18 = 28 for base 10, and so on
    passes = [_pass("app 1", [10 + k for k in range(20)]), _pass("app + solve 1", [20 + k for k in range(20)], 2.0),
              _pass("app + solve 2", [12 + k for k in range(20)], 1.0), _pass("app 2", [14 + k for k in range(20)]),
              _pass("app 3", [100 + k for k in range(20)])]
    lines = report(passes, None, 20)
    (pairs,) = [line for line in lines if line.startswith("Compose p95, median")]
    # plain p95s 28, 32, 118: median 32; beside the solve 38 and 30: median 34; +6.25 %
    assert "median of 3 plain passes: 32.00 s (28.00 to 118.00)" in pairs
    assert "of 2 passes beside the solve: 34.00 s (30.00 to 38.00)" in pairs
    assert pairs.endswith("+6.2 %")
    assert any(line.startswith("app + solve 1: the solve took 2.0 CPU s") for line in lines)
    assert any(line == "app 1: Compose latencies in order (s): " + " ".join(f"{10 + k:.1f}" for k in range(20))
               for line in lines)


def test_a_solve_never_found_is_said_and_no_pairs_line_without_both_kinds():
    lines = report([_pass("app", [5.0] * 20), _pass("app + solve", [6.0] * 20, math.nan)], None, 20)
    assert any("did not show within 120 s" in line for line in lines)
    assert not any(line.startswith("Compose p95, median") for line in lines)
    assert any(line.startswith("Compose p95 with a TE-CCL solve running: 6.00 s against 5.00 s") for line in lines)


class _Page:
    """Enough of a Playwright page for ``bench.load.session``: a step's page takes ``delays[address]`` seconds."""

    def __init__(self, log: list, delays: dict):
        self.log, self.delays = log, delays

    async def goto(self, address, **_):
        self.log.append(("start", address, asyncio.get_running_loop().time()))
        await asyncio.sleep(self.delays[address])
        self.log.append(("end", address, asyncio.get_running_loop().time()))

    def get_by_test_id(self, _):
        return self

    def filter(self, **_):
        return self

    async def count(self):
        return 0


class _Context:
    def __init__(self, page):
        self.page, self.closed = page, False

    async def new_page(self):
        return self.page

    async def close(self):
        self.closed = True


class _Browser:
    def __init__(self, pages, fail_at: int | None = None):
        self.pages, self.fail_at, self.made = pages, fail_at, 0

    async def new_context(self, **_):
        self.made += 1
        if self.made == self.fail_at:
            raise RuntimeError("no context")
        return _Context(self.pages[self.made - 1])


def _sessions(monkeypatch, lockstep: bool, fail_at: int | None = None):
    async def nothing(*_, **__):
        return None

    monkeypatch.setattr(load, "wait_text", nothing)
    monkeypatch.setattr(load, "wait_settled", nothing)
    log: list = []
    # session 0's first page is slow, session 1's fast
    pages = [_Page(log, {"c0": 0.3, "s0": 0.01}), _Page(log, {"c1": 0.01, "s1": 0.01}),
             _Page(log, {"c2": 0.05, "s2": 0.01})]
    result = Pass("t")

    async def main():
        barrier = asyncio.Barrier(3) if lockstep else None
        browser = _Browser(pages, fail_at)
        return await asyncio.gather(*(load.session(browser, [("compose", f"c{i}", "x"), ("schedule", f"s{i}", "x")],
                                                   i, result, barrier) for i in range(3)), return_exceptions=True)

    # in a thread of its own: a browser test run before this one in the same worker may leave this thread's
    # event loop running, where asyncio.run refuses
    with ThreadPoolExecutor(1) as pool:
        outcome = pool.submit(asyncio.run, asyncio.wait_for(main(), 5)).result(timeout=30)
    return log, result, outcome


def test_lockstep_starts_each_step_once_every_session_has_finished_the_one_before(monkeypatch):
    log, result, _ = _sessions(monkeypatch, lockstep=True)
    last_compose = max(t for kind, a, t in log if kind == "end" and a.startswith("c"))
    first_schedule = min(t for kind, a, t in log if kind == "start" and a.startswith("s"))
    assert first_schedule >= last_compose
    assert len(result.times["compose"]) == len(result.times["schedule"]) == 3


def test_without_lockstep_a_session_moves_on_alone(monkeypatch):
    log, _, _ = _sessions(monkeypatch, lockstep=False)
    last_compose = max(t for kind, a, t in log if kind == "end" and a.startswith("c"))
    first_schedule = min(t for kind, a, t in log if kind == "start" and a.startswith("s"))
    assert first_schedule < last_compose


def test_a_session_that_fails_to_start_does_not_hold_the_others(monkeypatch):
    log, result, outcome = _sessions(monkeypatch, lockstep=True, fail_at=2)
    assert sum(isinstance(o, RuntimeError) for o in outcome) == 1
    assert len(result.times["schedule"]) == 2          # the two others finished both steps within the 5 s
