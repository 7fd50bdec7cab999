"""The Training page in a real browser (issue 57): the default job (Switch-Base with 128 experts, expert parallel)
on the default designs (the session's biring(8), ShiftedRing and a 2-D torus of 8 nodes); Run draws Fig. 9's
breakdown bars with a legend entry per segment and the timeline of one iteration."""
import time

from playwright.sync_api import Page, expect

from .helpers import settle


def test_default_run_draws_the_breakdown(page: Page, app_url, shot):
    page.goto(app_url + "/training")
    run = page.get_by_role("button", name="Run (3 designs)")
    expect(run).to_be_visible(timeout=60000)
    settle(page)
    start = time.monotonic()
    run.click()
    expect(page.get_by_text("The timeline of one iteration").first).to_be_visible(timeout=180000)
    settle(page, 120000)
    print(f"default run: {time.monotonic() - start:.1f} s")
    chart = page.locator(".st-key-tr_breakdown .js-plotly-plot")
    expect(chart).to_be_visible(timeout=30000)
    legend = chart.locator(".legendtext").all_text_contents()
    assert legend == ["compute", "exposed allreduce", "all-to-all"], legend
    ticks = chart.locator(".xtick text").all_text_contents()
    assert ticks == ["biring(8)", "shifted_ring(8)", "torus(2,4)"], ticks
    assert chart.locator(".annotation-text").filter(has_text="fastest").count() == 1
    expect(page.locator(".st-key-tr_timeline .js-plotly-plot")).to_be_visible(timeout=30000)
    chart.scroll_into_view_if_needed()
    shot(page, "training-breakdown")
