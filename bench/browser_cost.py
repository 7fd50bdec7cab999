"""What one session's page views cost in CPU seconds, browser and server apart (issue 44): the figure behind
bench/load.py's latencies, where twenty Chromium contexts share the machine's CPUs with the server.

    python -m bench.browser_cost                # 3 sessions, one after another, against the floor and the app

Each session is a new browser context that takes bench/load.py's two steps (Compose of its gkautz design, then
Schedule of its bfb allgather) one after the other, each until its text shows and then 3 s more, so the work a
page does after its text appears (drawing, layout) counts too. Per step it reads the CPU time (user + system,
psutil) of every Chromium process by its type (renderer, browser, GPU, network) and of the app server with its
solve children, reaped ones included; a ratio row divides the app's figures by the floor's (bench/floor_app.py)
of the same step.
"""
from __future__ import annotations

import argparse
import asyncio
import os
import re
import statistics
import tempfile
import time

from bench.app_server import start_app
from bench.load import CHROMIUM, CHROMIUM_ARGS, STEPS, app_steps, floor_steps, wait_text
from bench.load_server import tree_cpu_s

SETTLE_S = 3.0


def cpu_by_kind(browser_root: int, server_root: int) -> dict[str, float]:
    """CPU seconds so far: the server's process tree (``load_server.tree_cpu_s``: reaped solve children
    included), and every other process under ``browser_root`` (this script: Chromium and Playwright's driver) by
    Chromium's process type, each with the children it has reaped."""
    import psutil

    totals = {"server": tree_cpu_s(server_root)}
    server = {server_root, *(p.pid for p in psutil.Process(server_root).children(recursive=True))}
    for proc in psutil.Process(browser_root).children(recursive=True):
        if proc.pid in server:
            continue
        try:
            kind = re.search(r"--type=([a-z-]+)", " ".join(proc.cmdline()))
            t = proc.cpu_times()
        except psutil.Error:               # gone between the listing and the reading: its parent counts it now
            continue
        kind = kind.group(1) if kind and kind.group(1) in ("renderer", "gpu-process", "utility") \
            else "browser, driver"
        totals[kind] = totals.get(kind, 0.0) + t.user + t.system + t.children_user + t.children_system
    return totals


async def sessions(url: str, steps, server_pid: int, count: int) -> dict[str, list[dict[str, float]]]:
    """Per step, the CPU seconds of each session's step by kind."""
    from playwright.async_api import async_playwright

    out: dict[str, list[dict[str, float]]] = {name: [] for name in STEPS}
    async with async_playwright() as p:
        browser = await p.chromium.launch(executable_path=CHROMIUM, args=CHROMIUM_ARGS)
        for i in range(1, count + 1):
            context = await browser.new_context(viewport={"width": 1400, "height": 1000})
            page = await context.new_page()
            for name, address, wanted in steps(url, i):
                before = cpu_by_kind(os.getpid(), server_pid)
                await page.goto(address, wait_until="commit")
                await wait_text(page, wanted, 120_000)
                await page.wait_for_timeout(SETTLE_S * 1000)
                after = cpu_by_kind(os.getpid(), server_pid)
                out[name].append({k: v - before.get(k, 0.0) for k, v in after.items()})
            await context.close()
        await browser.close()
    return out


def measure(which: str, count: int) -> dict[str, list[dict[str, float]]]:
    cache = tempfile.mkdtemp(prefix="studio-cost-cache-")
    proc, url = (start_app(script="bench/floor_app.py") if which == "floor"
                 else start_app(env={"TOPOLOGY_STUDIO_CACHE": cache}))
    try:
        time.sleep(1.0)
        return asyncio.run(sessions(url, floor_steps if which == "floor" else app_steps, proc.pid, count))
    finally:
        proc.terminate()
        proc.wait(timeout=15)


def main() -> None:
    parser = argparse.ArgumentParser(description=__doc__.splitlines()[0])
    parser.add_argument("--sessions", type=int, default=3, help="sessions, one after another (default 3)")
    args = parser.parse_args()
    runs = {which: measure(which, args.sessions) for which in ("floor", "app")}
    kinds = ("renderer", "browser, driver", "gpu-process", "utility", "server")
    print(f"Median CPU s per step over {args.sessions} sessions (each step until its text shows, then "
          f"{SETTLE_S:g} s); the first session's Compose also starts its browser context.")
    print("| page | step | " + " | ".join(kinds) + " | Chromium | all |")
    print("|---|---|" + "---|" * (len(kinds) + 2))
    medians = {}
    for which, steps in runs.items():
        for name in STEPS:
            rows = steps[name]
            med = {k: statistics.median(r.get(k, 0.0) for r in rows) for k in kinds}
            chromium = statistics.median(sum(v for k, v in r.items() if k != "server") for r in rows)
            total = statistics.median(sum(r.values()) for r in rows)
            medians[(which, name)] = (chromium, total)
            print(f"| {which} | {name} | " + " | ".join(f"{med[k]:.2f}" for k in kinds)
                  + f" | {chromium:.2f} | {total:.2f} |")
    for name in STEPS:
        (fc, ft), (ac, at) = medians[("floor", name)], medians[("app", name)]
        print(f"app / floor, {name}: Chromium {ac / fc:.2f}×, all {at / ft:.2f}×")


if __name__ == "__main__":
    main()
