"""Cancelling a long solve in a real browser (issue 23): TE-CCL's MILP on torus(6,6) runs about a minute in
HiGHS; Cancel stops it within seconds, kills its worker process, and the session goes on."""
import time

from playwright.sync_api import Page, expect

from .helpers import settle, solver_children


def test_cancel_stops_a_long_solve_and_keeps_the_session(page: Page, app_server, shot):
    server, app_url = app_server[0].pid, app_server[1]
    page.goto(app_url + "/schedule?expr=torus(6,6)&algo=teccl&coll=allgather")
    cancel = page.get_by_role("button", name="Cancel")
    expect(cancel).to_be_visible(timeout=60000)
    expect(page.get_by_test_id("stProgress")).to_contain_text("TE-CCL", timeout=30000)
    deadline = time.monotonic() + 30
    while not solver_children(server) and time.monotonic() < deadline:
        time.sleep(0.2)
    assert solver_children(server), "the solve's child process never started"
    clicked = time.monotonic()
    cancel.click()
    expect(page.get_by_text("Cancelled: TE-CCL allgather on torus(6,6)")).to_be_visible(timeout=20000)
    assert time.monotonic() - clicked < 20
    while solver_children(server) and time.monotonic() < clicked + 10:
        time.sleep(0.2)
    assert not solver_children(server), "the cancelled solve still runs"
    expect(page.get_by_role("button", name="Run it again")).to_be_visible()
    settle(page)
    shot(page, "schedule-cancelled")
    # the same session goes on: another algorithm on the same design solves at once
    page.get_by_test_id("stSelectbox").filter(has_text="Algorithm").click()
    page.get_by_role("option", name="ring", exact=True).click()
    expect(page.get_by_text("Verified by the simulator")).to_be_visible(timeout=60000)
    assert "algo=ring" in page.url
