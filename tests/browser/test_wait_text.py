"""``bench.load.wait_text``: the load benchmark's wait for a page's text, which watches the page's changes instead
of polling it (issue 44). It must see text only once it is shown, and read a string literally."""
import asyncio
import re
import time
from concurrent.futures import ThreadPoolExecutor

import pytest

from bench.load import CHROMIUM, CHROMIUM_ARGS, wait_text


async def _waits() -> dict:
    from playwright.async_api import async_playwright

    out = {}
    async with async_playwright() as p:
        browser = await p.chromium.launch(executable_path=CHROMIUM, args=CHROMIUM_ARGS)
        try:
            page = await browser.new_page()
            await page.set_content("<div style='display:none'>Compose: 12 nodes, hidden</div><div id='v'></div>")
            await page.evaluate("setTimeout(() => { document.getElementById('v').textContent = "
                                "'Compose: 12 nodes, shown'; }, 600)")
            start = time.perf_counter()
            await wait_text(page, re.compile(r": 12 nodes, "), 10_000)
            out["waited_s"] = time.perf_counter() - start
            out["shown"] = await page.locator("#v").text_content()
            await page.evaluate("document.getElementById('v').textContent = 'price a (b) cxd'")
            for wanted in ("a (b) cxd", "a (b) c.d"):        # the second matches only as a pattern
                try:
                    await wait_text(page, wanted, 400)
                    out[wanted] = "found"
                except TimeoutError as exc:
                    out[wanted] = str(exc)
        finally:
            await browser.close()
    return out


def test_wait_text_sees_shown_text_only_and_reads_strings_literally():
    # a thread of its own: where another test file's synchronous Playwright ran first, this one has its loop
    with ThreadPoolExecutor(1) as pool:
        out = pool.submit(asyncio.run, _waits()).result(timeout=120)
    assert out["waited_s"] >= 0.5, "a hidden element's text counted as shown"
    assert out["shown"] == "Compose: 12 nodes, shown"
    assert out["a (b) cxd"] == "found"
    assert out["a (b) c.d"].startswith("no text matching") and "0.4 s" in out["a (b) c.d"]
