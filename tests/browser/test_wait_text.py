"""``bench.load.wait_text``: the load benchmark's wait for a page's text, which watches the page's changes instead
of polling it (issue 44). It must see text only once it is shown, and read a string literally. And
``bench.load.wait_settled``: its wait for the rest of the page, which must last until the script run has finished
and the images have loaded."""
import asyncio
import re
import time
from concurrent.futures import ThreadPoolExecutor

import pytest

from bench.load import CHROMIUM, CHROMIUM_ARGS, wait_settled, wait_text


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


# a page that says its script runs, says it no more at 0.5 s, and whose image arrives 1.5 s after it is asked for
_PAGE = """<div data-testid="stApp" data-test-script-state="running"><p>Compose: 12 nodes, shown</p>
<img src="http://studio.test/late.svg"></div>
<script>setTimeout(() => document.querySelector('[data-testid=stApp]')
    .setAttribute('data-test-script-state', 'notRunning'), 500)</script>"""
_SVG = "<svg xmlns='http://www.w3.org/2000/svg' width='4' height='4'><rect width='4' height='4'/></svg>"


async def _settles() -> dict:
    from playwright.async_api import async_playwright

    async def serve(route):
        if route.request.url.endswith(".svg"):
            await asyncio.sleep(1.5)
            await route.fulfill(body=_SVG, content_type="image/svg+xml")
        else:
            await route.fulfill(body=_PAGE, content_type="text/html")

    out = {}
    async with async_playwright() as p:
        browser = await p.chromium.launch(executable_path=CHROMIUM, args=CHROMIUM_ARGS)
        try:
            page = await browser.new_page()
            await page.route("http://studio.test/**", serve)
            start = time.perf_counter()
            await page.goto("http://studio.test/", wait_until="commit")
            await wait_text(page, re.compile(r": 12 nodes, "), 10_000)
            out["text_s"] = time.perf_counter() - start
            await wait_settled(page, 10_000)
            out["settled_s"] = time.perf_counter() - start
            out["loaded"] = await page.evaluate("document.images[0].complete && document.images[0].naturalWidth")
            await page.evaluate("document.querySelector('[data-testid=stApp]')"
                                ".setAttribute('data-test-script-state', 'running')")
            try:
                await wait_settled(page, 300)
                out["running"] = "settled"
            except TimeoutError as exc:
                out["running"] = str(exc)
        finally:
            await browser.close()
    return out


def test_wait_settled_lasts_until_the_run_ends_and_the_images_load():
    with ThreadPoolExecutor(1) as pool:
        out = pool.submit(asyncio.run, _settles()).result(timeout=120)
    assert out["text_s"] < 1.4, out
    assert out["settled_s"] >= 1.4, f"settled before its image had loaded: {out}"
    assert out["loaded"] == 4
    assert out["running"] == "the page did not settle within 0.3 s"
