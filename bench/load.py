"""Concurrent sessions in real browsers (issues 23 and 44): each composes its own design and schedules it, in its
own browser context (Debian's Chromium driven by Playwright), all at once, beside the floor the browser itself
sets on this machine.

    python -m bench.load                        # the floor, then 20 sessions against the app
    python -m bench.load --runs 3               # three runs in a row, each with its own floor
    python -m bench.load --solve                # also: the same sessions while one more runs a long TE-CCL solve
    python -m bench.load --control              # also: a second plain pass (how far two passes differ alone)
    python -m bench.load --pairs 3              # instead: three plain passes and three beside the solve, alternated
    python -m bench.load --lockstep             # each step starts for all sessions together
    python -m bench.load --sessions 5 --url http://localhost:8501     # an app already running (no floor)

Session i composes gkautz(2, 8 + 2i) on the Compose page, then opens the Schedule page for the bfb allgather of
the same design and waits for the verified schedule. Each step's latency runs from the page request until the page
has settled: the text that shows its result is there (watched by ``wait_text``, which costs the browser next to
nothing while it waits), the page's script run has finished, its images have loaded and a frame has been drawn
after them (``wait_settled``). A session moves on then, as a user does once the page is there: ending a step at
its text would leave the rest of the page (Compose's drawing, the boxes under it) to be drawn during the next
step, which would pay for it. The report gives the p95 to the text as well. A session that gets another
session's design (a different node count), an error box, an exception or a 300 s wait counts as an error.

The floor: the same sessions, the same two steps, against a trivial Streamlit page (bench/floor_app.py: a title
and a line of text) served the same way, just before. Twenty Chromium contexts share the machine's CPUs with the
server, so much of a step's latency is the browser's; each step's p95 is printed beside the floor's p95 for the
same step and their ratio (the target: at most 2).

``--solve``: after the plain pass, on a new server (the caches cold again), one more session opens Schedule with
TE-CCL on dgx_a100(boxes=2) (allgather, 4 chunks, the MILP, a 600 s time limit) and, once its solve runs, the same
sessions go again; the Compose p95 with the solve is printed beside the one without (the target: at most 20 %
more), with the CPU time the solve took meanwhile.

``--control``: a second plain pass on a new server, right after the first; its Compose p95 beside the first's is
how far two passes differ with nothing changed, the yardstick for the solve's 20 %.

``--lockstep``: each step after the first starts for every session at once, when all have finished the step
before, as a class does when its teacher says "now open Schedule"; the floor's sessions too. Without it each
session moves on alone, and a session's Schedule step runs beside the other sessions' unfinished Compose: its
latency then holds some of the Compose step's cost, which is larger for the app than for the floor. Measured with
Schedule cut to its title and one line (a probe): 2.12× its floor running free, 1.39× in lockstep.

``--pairs N``: instead, N pairs of a plain pass and a pass beside the solve, each on a new server, in the order
plain, solve, solve, plain, plain, solve, ... (so that a drift of the machine's speed over the run weighs on both
alike). One pass's Compose p95 is the 19th of 20 latencies and moves by up to a fifth between two identical passes;
the median of the solve passes' p95 beside the median of the plain passes' is the figure for the 20 %, with every
pass's own.
"""
from __future__ import annotations

import argparse
import asyncio
import math
import os
import re
import shutil
import statistics
import tempfile
import time
from dataclasses import dataclass, field

from bench.app_server import start_app

CHROMIUM = os.environ.get("CHROMIUM_PATH", "/usr/bin/chromium")
CHROMIUM_ARGS = ["--no-sandbox", "--disable-gpu", "--no-first-run", "--disable-background-networking"]
WAIT_MS = 300_000
SHOTS = os.environ.get("LOAD_SHOTS")       # a folder: a screenshot of every page that failed goes there
STEPS = ("compose", "schedule")
SOLVE_URL = "/schedule?expr=dgx_a100(boxes=2)&algo=teccl&coll=allgather"
STEADY_S = 3.0


def design(i: int) -> tuple[str, int]:
    """Session i's design: (expression, node count). bench/load_server.py's sessions use the same."""
    return f"gkautz(2,{8 + 2 * i})", 8 + 2 * i


def app_steps(url: str, i: int) -> list[tuple[str, str, object]]:
    """(step, address, the text that shows the step is done) for session i on the studio."""
    expr, n = design(i)
    # what each page shows once done: the design's own node count (so another session's design never passes)
    return [("compose", f"{url}/compose?expr={expr}", re.compile(rf": {n} nodes, ")),
            ("schedule", f"{url}/schedule?expr={expr}&algo=bfb&coll=allgather", "Verified by the simulator")]


def floor_steps(url: str, i: int) -> list[tuple[str, str, object]]:
    """The same two steps against the trivial page (bench/floor_app.py), which shows ": n nodes, " at once."""
    _, n = design(i)
    return [(name, f"{url}/?n={n}&step={name}", re.compile(rf": {n} nodes, ")) for name in STEPS]


# Resolves once the page shows text matching the pattern: checked on each batch of DOM changes (a
# MutationObserver), not by polling. The text content is read first (no layout); the rendered text (innerText,
# which lays the page out) only once that matches, so that text in a hidden element does not count.
_WAIT_JS = """([source, flags]) => new Promise((resolve) => {
    const pattern = new RegExp(source, flags);
    const shown = () => document.body !== null && pattern.test(document.body.textContent)
        && pattern.test(document.body.innerText);
    if (shown()) { resolve(true); return; }
    const watch = new MutationObserver(() => { if (shown()) { watch.disconnect(); resolve(true); } });
    watch.observe(document, {subtree: true, childList: true, characterData: true, attributes: true});
})"""


async def wait_text(page, wanted, timeout_ms: float = WAIT_MS) -> None:
    """Wait until ``page`` shows ``wanted`` (a string or a compiled pattern), TimeoutError after ``timeout_ms``.

    Playwright's own ``get_by_text(...).wait_for()`` checks the page over and over while it waits: measured on a
    settled Schedule page, 0.045 CPU s per second of waiting for a plain string and 0.067 for a pattern, against
    0.005 for no wait at all: up to one of this machine's two CPUs for twenty sessions waiting at once, and more the
    larger the page and the longer the wait, so the app paid more for it than the floor. A user's browser does
    nothing of the kind; this wait costs only a check per change."""
    source, flags = (wanted.pattern, "i" if wanted.flags & re.IGNORECASE else "") if isinstance(wanted, re.Pattern) \
        else (re.escape(wanted), "")
    try:
        await asyncio.wait_for(page.evaluate(_WAIT_JS, [source, flags]), timeout_ms / 1000)
    except asyncio.TimeoutError:
        raise TimeoutError(f"no text matching {source!r} within {timeout_ms / 1000:g} s") from None


# Resolves once the page's script run has finished (Streamlit marks its root element), every image on the page has
# loaded or failed, and a frame has been drawn after that: the page as its user sees it, whole.
_SETTLED_JS = """() => new Promise((resolve) => {
    const idle = () => {
        const app = document.querySelector('[data-testid="stApp"]');
        return app !== null && app.getAttribute('data-test-script-state') === 'notRunning';
    };
    const finish = () => {
        const loading = [...document.images].filter((img) => !img.complete).map((img) => new Promise((done) => {
            img.addEventListener('load', done, {once: true});
            img.addEventListener('error', done, {once: true});
        }));
        Promise.all(loading).then(() => requestAnimationFrame(() => requestAnimationFrame(() => resolve(true))));
    };
    if (idle()) { finish(); return; }
    const watch = new MutationObserver(() => { if (idle()) { watch.disconnect(); finish(); } });
    watch.observe(document, {subtree: true, childList: true, characterData: true, attributes: true});
})"""


async def wait_settled(page, timeout_ms: float = WAIT_MS) -> None:
    """Wait until ``page`` (whose text ``wait_text`` has seen) has finished its script run, loaded its images and
    drawn a frame after them; TimeoutError after ``timeout_ms``. A step that ended at its text would leave the rest
    of its page (a drawing, the boxes under it) to be drawn during the next step, which pays for it."""
    try:
        await asyncio.wait_for(page.evaluate(_SETTLED_JS), timeout_ms / 1000)
    except asyncio.TimeoutError:
        raise TimeoutError(f"the page did not settle within {timeout_ms / 1000:g} s") from None


@dataclass
class Pass:
    """One pass: every step's latencies and errors, and the wall time of the whole pass."""

    name: str
    times: dict = field(default_factory=lambda: {s: [] for s in STEPS})       # to the page settled
    shown: dict = field(default_factory=lambda: {s: [] for s in STEPS})       # to the text shown
    errors: dict = field(default_factory=lambda: {s: [] for s in STEPS})
    wall: float = 0.0
    solve_cpu: float | None = None      # CPU seconds the long solve took during the sessions (``--solve``)
    solve_alive: bool = False           # whether it still ran when the sessions were done


def solve_processes_cpu(server_pid: int) -> dict[int, float]:
    """CPU seconds so far of each living process under the app server's own children, by process id: the solves
    (``studio.jobs`` forks each from its fork server, a child of the server) and the workers they started. The
    server's children themselves (the fork server, multiprocessing's resource tracker) are left out."""
    import psutil

    out = {}
    for proc in psutil.Process(server_pid).children(recursive=True):
        try:
            if proc.ppid() == server_pid:
                continue
            t = proc.cpu_times()
        except psutil.Error:
            continue
        out[proc.pid] = t.user + t.system
    return out


async def session(browser, steps: list, i: int, result: Pass, barrier: asyncio.Barrier | None = None) -> None:
    """One user: each step in turn in one browser context (module docstring); with ``barrier``, each step after
    the first starts once every session has finished the one before (``--lockstep``). A session that ends early
    breaks the barrier, and the others go on each at its own pace rather than wait for it."""
    try:
        context = await browser.new_context(viewport={"width": 1400, "height": 1000})
        try:
            page = await context.new_page()
            for k, (name, address, wanted) in enumerate(steps):
                if barrier is not None and k:
                    try:
                        await barrier.wait()
                    except asyncio.BrokenBarrierError:
                        pass
                await _step(page, name, address, wanted, i, result)
        finally:
            await context.close()
    except BaseException:
        if barrier is not None:
            await barrier.abort()
        raise


async def _step(page, name: str, address: str, wanted, i: int, result: Pass) -> None:
    """One step of session ``i``: its latencies into ``result``, or its error (and the session goes on)."""
    start = time.perf_counter()
    try:
        await page.goto(address, wait_until="commit", timeout=WAIT_MS)
        await wait_text(page, wanted)
        shown = time.perf_counter() - start
        await wait_settled(page)
        if await page.get_by_test_id("stException").count() or await page.get_by_test_id("stAlert").filter(
                has_text="rror").count():
            raise AssertionError(f"session {i}: an error on the {name} page")
        result.times[name].append(time.perf_counter() - start)
        result.shown[name].append(shown)
    except Exception as exc:
        result.errors[name].append(f"session {i}: {str(exc).splitlines()[0][:160]}")
        if SHOTS:
            await page.screenshot(path=os.path.join(SHOTS, f"load-{result.name}-{i}-{name}.png"), full_page=True)


async def start_solve(browser, url: str):
    """Open Schedule on TE-CCL's long solve (module docstring) and return its browser context once a solve's
    progress text shows. That text may still be the solve's from before the last knob was set; ``solve_running``
    then waits for the MILP's own process."""
    context = await browser.new_context(viewport={"width": 1400, "height": 1000})
    page = await context.new_page()
    await page.goto(url + SOLVE_URL, wait_until="commit", timeout=WAIT_MS)
    for label, value in (("Time limit (s)", "600"), ("Chunks", "4")):
        box = page.get_by_role("spinbutton", name=label).first
        await box.wait_for(timeout=WAIT_MS)
        await box.fill(value)
        await box.press("Enter")
        await page.wait_for_timeout(1500)
    await page.get_by_test_id("stSelectbox").filter(has_text="Method").first.click(timeout=WAIT_MS)
    await page.get_by_role("option", name="milp", exact=True).click(timeout=WAIT_MS)
    await page.get_by_text(re.compile(r"TE-CCL.*\(\d+\.\d s\)")).first.wait_for(timeout=120_000)
    return context


async def solve_running(server_pid: int, timeout_s: float = 120.0) -> dict[int, float]:
    """``solve_processes_cpu`` once the server has a solve process, waiting up to ``timeout_s`` ({} if none came).
    The page's text that ``start_solve`` waits for can still be an earlier solve's, from before the last change
    of the page's knobs: without this wait, the long solve could start after the sessions had begun. A process
    counts once it is still there ``STEADY_S`` seconds later: the solve of a request the page has since replaced
    can take a second or two to be killed (its waiting thread checks once a second), and counting it instead of
    the MILP read 0.0 CPU s for a solve that ran."""
    deadline = time.monotonic() + timeout_s
    while True:
        running = solve_processes_cpu(server_pid)
        if running:
            await asyncio.sleep(STEADY_S)
            still = {pid: cpu for pid, cpu in solve_processes_cpu(server_pid).items() if pid in running}
            if still:
                return still
        if time.monotonic() > deadline:
            return {}
        await asyncio.sleep(0.5)


async def run(url: str, sessions: int, steps, name: str, solve: bool = False, server_pid: int | None = None,
              lockstep: bool = False) -> Pass:
    """The sessions at once; with ``solve``, beside the long solve, whose CPU during them is read from the app
    server's solve processes (``solve_processes_cpu``; ``server_pid``) that were already there when they began.
    Each session's own solves start later and are not counted. ``lockstep``: every session starts each step
    together (module docstring)."""
    from playwright.async_api import async_playwright

    result = Pass(name)
    async with async_playwright() as p:
        browser = await p.chromium.launch(executable_path=CHROMIUM, args=CHROMIUM_ARGS)
        solver = None
        if solve:
            try:
                solver = await start_solve(browser, url)
            except Exception as exc:            # reported with the pass; its sessions still run
                result.errors["compose"].append(f"the TE-CCL solve did not start: {str(exc).splitlines()[0][:160]}")
        before = await solve_running(server_pid) if solver is not None and server_pid else None
        if before == {}:                      # measured, not an error of the sessions: said in the report
            result.solve_cpu = float("nan")
            before = None
        start = time.perf_counter()
        barrier = asyncio.Barrier(sessions) if lockstep else None
        await asyncio.gather(*(session(browser, steps(url, i), i, result, barrier) for i in range(sessions)))
        result.wall = time.perf_counter() - start
        if before is not None:
            after = solve_processes_cpu(server_pid)
            result.solve_cpu = sum(after[k] - v for k, v in before.items() if k in after)
            result.solve_alive = bool(set(before) & set(after))
        if solver is not None:
            await solver.close()
        await browser.close()
    return result


def pair_plan(pairs: int) -> list[tuple[str, bool]]:
    """``--pairs``: (pass name, beside the solve) in the order plain, solve, solve, plain, ... (module docstring)."""
    plan = []
    for k in range(pairs):
        order = [False, True] if k % 2 == 0 else [True, False]
        plan += [(f"app + solve {k + 1}" if solve else f"app {k + 1}", solve) for solve in order]
    return plan


def percentile(values: list[float], q: float) -> float:
    ordered = sorted(values)
    return ordered[min(len(ordered) - 1, int(round(q * (len(ordered) - 1))))] if ordered else float("nan")


def report(passes: list[Pass], floor: Pass | None, sessions: int) -> list[str]:
    lines = ["| pass | step | sessions | done | errors | p50 s | p95 s | max s | floor p95 s | p95 / floor "
             "| to the text: p95 s | its floor's | ratio |",
             "|---|---|---|---|---|---|---|---|---|---|---|---|---|"]
    for ps in ([floor] if floor else []) + passes:
        for name in STEPS:
            t, text = ps.times[name], ps.shown[name]
            f95 = percentile(floor.times[name], 0.95) if floor else float("nan")
            ft95 = percentile(floor.shown[name], 0.95) if floor else float("nan")
            lines.append(f"| {ps.name} | {name} | {sessions} | {len(t)} | {len(ps.errors[name])} | "
                         f"{percentile(t, 0.5):.2f} | {percentile(t, 0.95):.2f} | {max(t, default=float('nan')):.2f} "
                         f"| {f95:.2f} | {percentile(t, 0.95) / f95:.2f} | {percentile(text, 0.95):.2f} | {ft95:.2f} "
                         f"| {percentile(text, 0.95) / ft95:.2f} |")
    for ps in ([floor] if floor else []) + passes:
        lines.append(f"{ps.name}: {sessions} sessions at once in {ps.wall:.1f} s wall, {os.cpu_count()} CPUs")
        for name, problems in ps.errors.items():
            lines.extend(f"error ({ps.name}, {name}): {line}" for line in problems)
    for ps in passes:            # every session's, so that a p95 set by one or two late sessions shows as such
        lines.append(f"{ps.name}: Compose latencies in order (s): "
                     + " ".join(f"{t:.1f}" for t in sorted(ps.times["compose"])))
    lines.extend(_solve_lines([ps for ps in passes if ps.name.startswith("app + solve")]))
    lines.extend(_pairs_line(passes))
    by_name = {ps.name: ps for ps in passes}
    if "app" in by_name and "app again" in by_name:
        first, again = (percentile(by_name[k].times["compose"], 0.95) for k in ("app", "app again"))
        lines.append(f"Compose p95 of a second plain pass: {again:.2f} s against {first:.2f} s "
                     f"({(again / first - 1) * 100:+.1f} %)")
    if "app" in by_name and "app + solve" in by_name:
        plain, loaded = (percentile(by_name[k].times["compose"], 0.95) for k in ("app", "app + solve"))
        lines.append(f"Compose p95 with a TE-CCL solve running: {loaded:.2f} s against {plain:.2f} s without "
                     f"({(loaded / plain - 1) * 100:+.1f} %)")
    return lines


def _pairs_line(passes: list[Pass]) -> list[str]:
    """``--pairs``: the median Compose p95 of the passes beside the solve against that of the plain ones."""
    def p95s(pattern: str) -> list[float]:
        return [percentile(ps.times["compose"], 0.95) for ps in passes if re.fullmatch(pattern, ps.name)]

    plain, beside = p95s(r"app \d+"), p95s(r"app \+ solve \d+")
    if not (plain and beside):
        return []
    a, b = statistics.median(plain), statistics.median(beside)
    return [f"Compose p95, median of {len(plain)} plain passes: {a:.2f} s ({min(plain):.2f} to {max(plain):.2f}); "
            f"of {len(beside)} passes beside the solve: {b:.2f} s ({min(beside):.2f} to {max(beside):.2f}); "
            f"{(b / a - 1) * 100:+.1f} %"]


def _solve_lines(passes: list[Pass]) -> list[str]:
    """What the long solve took during each pass beside it."""
    lines = []
    for ps in passes:
        if ps.solve_cpu is not None and math.isnan(ps.solve_cpu):
            lines.append(f"{ps.name}: the solve's process did not show within 120 s of its page starting it: "
                         "its CPU is unknown")
        elif ps.solve_cpu is not None:
            share = ps.solve_cpu / (ps.wall * (os.cpu_count() or 1)) * 100
            lines.append(f"{ps.name}: the solve took {ps.solve_cpu:.1f} CPU s during those sessions' {ps.wall:.1f} s "
                         f"({share:.1f} % of the machine's CPU time); "
                         f"{'still running at their end' if ps.solve_alive else 'it had ended before they did'}")
    return lines


def one_run(args) -> list[str]:
    floor = None
    if not args.url:
        proc, url = start_app(script="bench/floor_app.py")
        try:
            floor = asyncio.run(run(url, args.sessions, floor_steps, "floor", lockstep=args.lockstep))
        finally:
            proc.terminate()
            proc.wait(timeout=15)
    passes = []
    plan = pair_plan(args.pairs) if args.pairs else \
        [("app", False)] + [("app again", False)] * args.control + [("app + solve", True)] * args.solve
    for name, solve in plan:
        cache = tempfile.mkdtemp(prefix="studio-load-cache-")            # a new server, its caches all cold
        proc, url = (None, args.url) if args.url else start_app(env={"TOPOLOGY_STUDIO_CACHE": cache})
        try:
            passes.append(asyncio.run(run(url, args.sessions, app_steps, name, solve=solve,
                                          server_pid=proc.pid if proc is not None else None,
                                          lockstep=args.lockstep)))
        finally:
            if proc is not None:
                proc.terminate()
                proc.wait(timeout=15)
            shutil.rmtree(cache, ignore_errors=True)
    return report(passes, floor, args.sessions)


def main() -> None:
    parser = argparse.ArgumentParser(description=__doc__.splitlines()[0])
    parser.add_argument("--sessions", type=int, default=20, help="concurrent sessions (default 20)")
    parser.add_argument("--url", default=None, help="an app already running (default: start one; no floor then)")
    parser.add_argument("--runs", type=int, default=1, help="runs in a row, each with its own floor (default 1)")
    parser.add_argument("--solve", action="store_true", help="also a pass beside a long TE-CCL solve")
    parser.add_argument("--control", action="store_true",
                        help="also a second plain pass, on a new server: how far two passes without the solve differ")
    parser.add_argument("--pairs", type=int, default=0,
                        help="instead: this many pairs of a plain pass and one beside the solve, alternated")
    parser.add_argument("--lockstep", action="store_true",
                        help="each step starts for every session together (floor and app alike)")
    args = parser.parse_args()
    if args.lockstep:
        print("lockstep: each step starts once every session has finished the step before")
    for k in range(args.runs):
        if args.runs > 1:
            print(f"run {k + 1} of {args.runs}")
        print("\n".join(one_run(args)), flush=True)


if __name__ == "__main__":
    main()
