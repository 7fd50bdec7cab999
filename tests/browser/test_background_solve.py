"""A heavy solve leaves its page's run (issue 44): in a real browser, with the app started so that a heavy solve
leaves at once (``STUDIO_DETACH_S=0``), the page says the solve runs in the background, runs no script while
it does (no running icon), looks after it every few seconds, shows the answer when it comes, and its Cancel still
kills the solve's process."""
import re
import time

import pytest
from playwright.sync_api import Page, expect

from bench.app_server import start_app

from .helpers import settle, solver_children

BACKGROUND = "running in the background"


@pytest.fixture(scope="module")
def detaching_server():
    proc, url = start_app(env={"STUDIO_DETACH_S": "0"})
    yield proc, url
    proc.terminate()
    proc.wait(timeout=15)


def _script_state(page: Page) -> str:
    return page.get_by_test_id("stApp").get_attribute("data-test-script-state")


def test_a_heavy_solve_runs_in_the_background_and_its_page_rests(page: Page, detaching_server, shot):
    server, url = detaching_server[0].pid, detaching_server[1]
    page.goto(url + "/schedule?expr=torus(6,6)&algo=teccl&coll=allgather")
    panel = page.get_by_test_id("stProgress").filter(has_text=BACKGROUND)
    expect(panel).to_be_visible(timeout=90000)
    assert solver_children(server), "no solve process while the page says it runs"
    settle(page)
    # no script runs between the panel's looks: sampled over 4 s, the page is idle nearly throughout
    states = []
    for _ in range(20):
        states.append(_script_state(page))
        time.sleep(0.2)
    assert states.count("notRunning") >= 16, states
    first = panel.inner_text()
    seconds = int(re.search(r"\((\d+) s;", first).group(1))
    expect(panel).not_to_have_text(first, timeout=10000)        # it looked again: the seconds moved on
    assert int(re.search(r"\((\d+) s;", panel.inner_text()).group(1)) > seconds
    shot(page, "schedule-background-solve")
    page.get_by_role("button", name="Cancel").click()
    expect(page.get_by_text("Cancelled: TE-CCL allgather on torus(6,6)")).to_be_visible(timeout=20000)
    deadline = time.monotonic() + 15
    while solver_children(server) and time.monotonic() < deadline:
        time.sleep(0.2)
    assert not solver_children(server), "the cancelled background solve still runs"


def test_the_answer_of_a_background_solve_shows_when_it_comes(page: Page, detaching_server):
    url = detaching_server[1]
    page.goto(url + "/schedule?expr=torus(6,6)&algo=teccl&coll=allgather")
    limit = page.get_by_role("spinbutton", name="Time limit (s)").first
    limit.wait_for(timeout=60000)
    limit.fill("8")
    limit.press("Enter")
    expect(page.get_by_test_id("stProgress").filter(has_text=BACKGROUND)).to_be_visible(timeout=60000)
    expect(page.get_by_text("Verified by the simulator")).to_be_visible(timeout=90000)
    expect(page.get_by_text(BACKGROUND)).to_have_count(0)
