"""The Failures page in a real browser (issue 42): the two default 16-node designs, every single cable failed,
ForestColl and BFB on each; Run draws the CDF with a legend entry per design x synthesizer. Cancel stops a long
run and keeps the session."""
import re
import time

from playwright.sync_api import Page, expect

from .helpers import settle


def test_default_run_draws_the_cdf(page: Page, app_url, shot):
    page.goto(app_url + "/failures")
    run = page.get_by_role("button", name="Run (64 failure sets + 2 healthy designs)")
    expect(run).to_be_visible(timeout=60000)
    settle(page)
    start = time.monotonic()
    run.click()
    expect(page.get_by_text("Every failure set").first).to_be_visible(timeout=180000)
    settle(page, 120000)
    print(f"default run: {time.monotonic() - start:.1f} s")
    legend = page.locator(".js-plotly-plot").first.locator(".legendtext")
    expect(legend.first).to_be_visible(timeout=30000)
    names = legend.all_text_contents()
    assert any("torus(4,4)" in n for n in names), names
    assert any("circulant(16,[1,4])" in n for n in names), names
    assert len(names) == 4, names
    page.get_by_test_id("stPlotlyChart").first.scroll_into_view_if_needed()
    shot(page, "failures-cdf")


def test_cancel_stops_a_long_run(page: Page, app_url):
    page.goto(app_url + "/failures")
    expect(page.get_by_role("button", name="Run (64 failure sets + 2 healthy designs)")).to_be_visible(timeout=60000)
    settle(page)
    page.get_by_role("textbox", name="Designs, one expression per line").fill("gkautz(4,64)")
    page.get_by_text("Failures", exact=True).first.click()        # leaves the text area: the page reruns
    run = page.get_by_role("button", name=re.compile(r"^Run \(252 failure sets \+ 1 healthy design\)"))
    expect(run).to_be_visible(timeout=60000)
    settle(page)
    run.click()
    expect(page.get_by_text("Analysing").first).to_be_visible(timeout=30000)
    page.get_by_role("button", name="Cancel").click()
    expect(page.get_by_text("Cancelled: the analysis stopped").first).to_be_visible(timeout=30000)
    settle(page)
    expect(page.get_by_text("Every failure set")).to_have_count(0)
