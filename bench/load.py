"""Concurrent sessions against a running app (issue 23): each composes its own design and schedules it, in its
own browser context (Debian's Chromium driven by Playwright), all at once.

    python -m bench.load                        # 20 sessions against an app this script starts
    python -m bench.load --sessions 5 --url http://localhost:8501

Session i composes gkautz(2, 8 + 2i) on the Compose page, then opens the Schedule page for the bfb allgather of
the same design and waits for the verified schedule. Each step's latency is from the page request to the text
that shows its result; a session that gets another session's design (a different node count), an error box, an
exception or a 300 s wait counts as an error (Chromium shares the machine's CPUs with the app here). The table: per step, sessions done, errors, p50, p95 and the
slowest latency in seconds; then the wall time of the whole run.
"""
from __future__ import annotations

import argparse
import asyncio
import os
import re
import time

from bench.app_server import start_app

CHROMIUM = os.environ.get("CHROMIUM_PATH", "/usr/bin/chromium")
CHROMIUM_ARGS = ["--no-sandbox", "--disable-gpu", "--no-first-run", "--disable-background-networking"]
WAIT_MS = 300_000
SHOTS = os.environ.get("LOAD_SHOTS")       # a folder: a screenshot of every page that failed goes there


async def session(browser, url: str, i: int, times: dict, errors: dict) -> None:
    """One user: compose gkautz(2, 8 + 2i), then schedule its bfb allgather (module docstring)."""
    n = 8 + 2 * i
    expr = f"gkautz(2,{n})"
    context = await browser.new_context(viewport={"width": 1400, "height": 1000})
    page = await context.new_page()
    # what each page shows once done: the design's own node count (so another session's design never passes)
    steps = [("compose", f"{url}/compose?expr={expr}", re.compile(rf": {n} nodes, ")),
             ("schedule", f"{url}/schedule?expr={expr}&algo=bfb&coll=allgather", "Verified by the simulator")]
    try:
        for name, address, wanted in steps:
            start = time.perf_counter()
            try:
                await page.goto(address, wait_until="commit", timeout=WAIT_MS)
                await page.get_by_text(wanted).first.wait_for(timeout=WAIT_MS)
                if await page.get_by_test_id("stException").count() or await page.get_by_test_id("stAlert").filter(
                        has_text="rror").count():
                    raise AssertionError(f"session {i}: an error on the {name} page")
                times[name].append(time.perf_counter() - start)
            except Exception as exc:             # counted, and the session goes on
                errors[name].append(f"session {i}: {str(exc).splitlines()[0][:160]}")
                if SHOTS:
                    await page.screenshot(path=os.path.join(SHOTS, f"load-{i}-{name}.png"), full_page=True)
    finally:
        await context.close()


async def run(url: str, sessions: int) -> tuple[dict, dict, float]:
    from playwright.async_api import async_playwright

    times = {"compose": [], "schedule": []}
    errors = {"compose": [], "schedule": []}
    async with async_playwright() as p:
        browser = await p.chromium.launch(executable_path=CHROMIUM, args=CHROMIUM_ARGS)
        start = time.perf_counter()
        await asyncio.gather(*(session(browser, url, i, times, errors) for i in range(sessions)))
        wall = time.perf_counter() - start
        await browser.close()
    return times, errors, wall


def percentile(values: list[float], q: float) -> float:
    ordered = sorted(values)
    return ordered[min(len(ordered) - 1, int(round(q * (len(ordered) - 1))))] if ordered else float("nan")


def main() -> None:
    parser = argparse.ArgumentParser(description=__doc__.splitlines()[0])
    parser.add_argument("--sessions", type=int, default=20, help="concurrent sessions (default 20)")
    parser.add_argument("--url", default=None, help="an app already running (default: start one)")
    args = parser.parse_args()
    proc, url = (None, args.url) if args.url else start_app()
    try:
        times, errors, wall = asyncio.run(run(url, args.sessions))
    finally:
        if proc is not None:
            proc.terminate()
            proc.wait(timeout=15)
    print(f"{'step':<9} {'sessions':>8} {'done':>5} {'errors':>6} {'p50 s':>7} {'p95 s':>7} {'max s':>7}")
    for name in times:
        t = times[name]
        print(f"{name:<9} {args.sessions:>8} {len(t):>5} {len(errors[name]):>6} {percentile(t, 0.5):>7.2f} "
              f"{percentile(t, 0.95):>7.2f} {max(t, default=float('nan')):>7.2f}")
    print(f"{args.sessions} sessions at once in {wall:.1f} s wall, {os.cpu_count()} CPUs")
    for name, problems in errors.items():
        for line in problems:
            print(f"error ({name}): {line}")


if __name__ == "__main__":
    main()
