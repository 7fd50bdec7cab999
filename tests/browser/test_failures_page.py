"""The Failures page in a real browser (issue 42): the two default 16-node designs, every single cable failed,
ForestColl and BFB on each; Run draws the CDF with a legend entry per design x synthesizer."""
import time

from playwright.sync_api import Page, expect

from .helpers import settle


def test_default_run_draws_the_cdf(page: Page, app_url, shot):
    page.goto(app_url + "/failures")
    run = page.get_by_role("button", name="Run (64 failure sets)")
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
