"""The studio on a machine without the internet (issue 59, finding 12): every page is opened in Chromium with every
request to a host other than the app's aborted and counted, and no page may ask another host for anything (the
tab's icon, a font, a script, telemetry) nor log a console error.

Before the fix each page's ``:material/...:`` icon was fetched from fonts.gstatic.com as the tab's icon
(``ERR_NAME_NOT_RESOLVED`` on an air-gapped cluster); ``studio.navigation.FAVICON`` now gives the tab the studio's
own icon as a data: URL. The server itself, started as the Dockerfile starts it, does not ask the internet for its
"External URL" either (``.streamlit/config.toml`` names its address).
"""
import json
import re
import subprocess
import sys
import time
from pathlib import Path
from urllib.parse import urlparse

import pytest
from playwright.sync_api import BrowserContext, Page, expect

from bench.app_server import free_port, wait_healthy
from studio import navigation

from .helpers import settle

PAGES = [spec[3] for spec in navigation._PAGES]          # home, compose, schedule, ... learn: every page in the menu


@pytest.fixture
def offline(context: BrowserContext, app_url):
    """The browser context with every request to another host aborted: returns the list those requests land in."""
    host = urlparse(app_url).netloc
    foreign: list[str] = []

    def route(request_route):
        url = urlparse(request_route.request.url)
        if url.scheme in ("data", "blob") or url.netloc == host:
            request_route.continue_()
        else:
            foreign.append(request_route.request.url)
            request_route.abort("internetdisconnected")
    context.route("**/*", route)
    return foreign


def console_errors(page: Page) -> list[tuple[str, str]]:
    """(text, the resource's URL) of every console error the page logs from now on."""
    errors: list[tuple[str, str]] = []
    page.on("console", lambda m: errors.append((m.text, m.location.get("url", ""))) if m.type == "error" else None)
    page.on("pageerror", lambda exc: errors.append((str(exc), "")))
    return errors


def quiet(page: Page) -> None:
    """Wait until the script has run and what the page loads after it (images, plotly.js, fonts) has arrived."""
    settle(page)
    page.wait_for_load_state("load")
    page.wait_for_timeout(1500)
    settle(page)


def test_every_page_asks_no_other_host(page: Page, app_url, offline):
    """Home, then every page through the menu (as a user moves), with the interactive (plotly) charts on for the
    second round: no request leaves the app's host and the console stays free of errors."""
    errors = console_errors(page)
    page.goto(app_url)
    expect(page.get_by_role("heading", name="Topology Studio")).to_be_visible(timeout=30000)
    quiet(page)
    seen = []
    for interactive in (False, True):
        if interactive:
            page.get_by_test_id("stSidebar").get_by_text("Interactive charts").click()
            quiet(page)
        for position, url in enumerate(PAGES):           # the menu lists the pages in navigation's order
            page.get_by_test_id("stSidebarNavLink").nth(position).click()
            if url != "home":                             # Home's address is the app's own: "/"
                page.wait_for_url(re.compile(rf"/{url}(\?|$)"), timeout=30000)
            quiet(page)
            seen.append((url, len(offline), len(errors)))
    assert offline == [], f"requests to other hosts (page, count so far, console errors so far): {seen}\n{offline}"
    assert errors == [], f"console errors: {errors}"
    assert page.evaluate("document.querySelector(\"link[rel='shortcut icon']\").href").startswith("data:image/svg")


# Streamlit's own browser code, opened at /<page>, first looks for its server under /<page>/_stcore/ (health,
# host-config) before trying /_stcore/: two 404s from the app's own host, Streamlit issue #7074. Nothing leaves the
# machine; these two and only these are let through.
STREAMLIT_7074 = re.compile(r"/[a-z]+/_stcore/(health|host-config)$")


def test_page_links_opened_directly_ask_no_other_host(page: Page, app_url, offline):
    """A shared link opens a page directly (a fresh load of /<page>): still no request to another host, and no
    console error but Streamlit's own probe for its server under the page's path."""
    errors = console_errors(page)
    for url in PAGES:
        page.goto(f"{app_url}/{'' if url == 'home' else url}")      # Home, the default page, is at "/"
        page.get_by_test_id("stSidebarNav").wait_for(timeout=30000)
        quiet(page)
    assert offline == [], f"requests to other hosts: {offline}"
    unexplained = [(text, where) for text, where in errors
                   if not ("404" in text and STREAMLIT_7074.search(urlparse(where).path))]
    assert unexplained == [], f"console errors: {unexplained}"


def test_server_started_as_the_image_does_asks_no_other_host(tmp_path):
    """``streamlit run`` with the Dockerfile's own arguments (every interface, headless): Streamlit looks up the
    machine's external address at checkip.amazonaws.com for such a server unless ``browser.serverAddress`` is set;
    it prints "External URL" when the look-up succeeds and "Did not auto detect external IP" when it fails."""
    root = Path(__file__).resolve().parents[2]
    command = re.search(r"^CMD (\[.*?\])\s*$", (root / "Dockerfile").read_text().replace("\\\n", ""),
                        re.MULTILINE | re.DOTALL)
    assert command, "the Dockerfile has no CMD [...] line"
    args = json.loads(command.group(1))
    assert args[:3] == ["streamlit", "run", "app.py"] and "0.0.0.0" in args, args
    port = free_port()
    args = [a if a != "8501" else str(port) for a in args[1:]]
    log = tmp_path / "streamlit.log"
    with log.open("w") as out:
        proc = subprocess.Popen([sys.executable, "-m", "streamlit", *args], cwd=root, stdout=out,
                                stderr=subprocess.STDOUT)
        try:
            wait_healthy(proc, f"http://127.0.0.1:{port}", 60)
            for _ in range(100):                  # the banner (after any look-up) follows the health check
                if "You can now view" in log.read_text():
                    break
                time.sleep(0.1)
        finally:
            proc.terminate()
            proc.wait(timeout=15)
    text = log.read_text()
    assert "You can now view" in text, text
    assert "External URL" not in text and "external IP" not in text, text
