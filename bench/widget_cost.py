"""What each kind of page element costs a browser (issue 44): bench/widget_page.py's trivial page with one kind
added at a time, against the bare page, in CPU seconds of Chromium per page view.

    python -m bench.widget_cost                 # every variant, 4 sessions each
    python -m bench.widget_cost --variants floor,selectbox,metric_grid --sessions 6

Each session is a new browser context that opens the bare page first (so the variant's view finds Streamlit's
own code in the context's cache, as the studio's Schedule step finds it after Compose) and then the variant, until
its text shows and 3 s more; the CPU of every Chromium process counts (``bench.browser_cost.cpu_by_kind``). The
table gives the median and the difference to the bare page's median measured in the same run. Streamlit loads a
widget kind's code the first time a page shows one, so the figure is mostly per kind, not per widget.
"""
from __future__ import annotations

import argparse
import asyncio
import os
import re
import statistics
import time

from bench.app_server import start_app
from bench.browser_cost import SETTLE_S, cpu_by_kind
from bench.load import CHROMIUM, CHROMIUM_ARGS, wait_text
VARIANTS = ("floor", "st_metric", "metric_grid", "selectbox", "pills", "segmented", "number_inputs", "radio",
            "slider", "uploader", "downloads", "images", "tabs", "expander", "page_menu", "page_menu_icons", "top_menu",
            "toggle", "sidebar_text", "shell",
            "deltas", "slow", "trickle", "burst")                    # bench/widget_page.py's query ``v``
WANTED = re.compile(": 12 nodes, ")


async def measure(url: str, server_pid: int, variants: list[str], sessions: int) -> dict[str, list[float]]:
    from playwright.async_api import async_playwright

    out: dict[str, list[float]] = {v: [] for v in variants}
    async with async_playwright() as p:
        browser = await p.chromium.launch(executable_path=CHROMIUM, args=CHROMIUM_ARGS)
        for _ in range(sessions):
            for v in variants:                     # interleaved, so that a slow spell of the machine hits all
                context = await browser.new_context(viewport={"width": 1400, "height": 1000})
                page = await context.new_page()
                await page.goto(f"{url}/?v=floor", wait_until="commit")
                await wait_text(page, WANTED, 60_000)
                await page.wait_for_timeout(1500)
                before = cpu_by_kind(os.getpid(), server_pid)
                await page.goto(f"{url}/?v={v}", wait_until="commit")
                await wait_text(page, WANTED, 60_000)
                await page.wait_for_timeout(SETTLE_S * 1000)
                after = cpu_by_kind(os.getpid(), server_pid)
                out[v].append(sum(t - before.get(k, 0.0) for k, t in after.items() if k != "server"))
                await context.close()
        await browser.close()
    return out


def main() -> None:
    parser = argparse.ArgumentParser(description=__doc__.splitlines()[0])
    parser.add_argument("--variants", default=",".join(VARIANTS), help="comma-separated (default: all)")
    parser.add_argument("--sessions", type=int, default=4, help="sessions per variant (default 4)")
    args = parser.parse_args()
    variants = [v.strip() for v in args.variants.split(",") if v.strip()]
    unknown = sorted(set(variants) - set(VARIANTS))
    if unknown:
        parser.error(f"unknown variant(s) {', '.join(unknown)}; known: {', '.join(VARIANTS)}")
    if "floor" not in variants:
        variants.insert(0, "floor")
    proc, url = start_app(script="bench/widget_page.py")
    try:
        time.sleep(1.0)
        got = asyncio.run(measure(url, proc.pid, variants, args.sessions))
    finally:
        proc.terminate()
        proc.wait(timeout=15)
    floor = statistics.median(got["floor"])
    print(f"Chromium CPU s per page view, median of {args.sessions} sessions (view until its text shows, then "
          f"{SETTLE_S:g} s)")
    print("| variant | median | above the bare page | all sessions |")
    print("|---|---|---|---|")
    for v in variants:
        med = statistics.median(got[v])
        print(f"| {v} | {med:.2f} | {med - floor:+.2f} | {' '.join(f'{x:.2f}' for x in got[v])} |")


if __name__ == "__main__":
    main()
