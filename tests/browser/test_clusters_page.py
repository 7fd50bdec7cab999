"""The Clusters page in a real browser: the k scan stays on its view when it finishes (issue 40: it threw the
page back to the first tab), and the layered drawing is as wide as the page."""
from playwright.sync_api import Page, expect

from .helpers import settle


def test_scan_stays_on_its_view(page: Page, app_url, shot):
    page.goto(app_url + "/clusters")
    expect(page.get_by_text("Bottleneck cut: 15 GPUs inside").first).to_be_visible(timeout=60000)
    settle(page)
    page.get_by_text("k vs throughput", exact=True).first.click()
    scan = page.get_by_role("button", name="Scan k = 1..8")
    expect(scan).to_be_visible(timeout=30000)
    settle(page)
    scan.click()
    expect(page.get_by_text("Allgather algbw against k").first).to_be_visible(timeout=120000)
    settle(page)
    expect(page.get_by_text("Allgather algbw against k").first).to_be_visible()
    expect(page.get_by_role("button", name="Scan k = 1..8")).to_be_visible()
    expect(page.get_by_text("Bottleneck cut: 15 GPUs inside")).to_have_count(0)
    shot(page, "clusters-scan")


def test_layered_drawing_spans_the_page(page: Page, app_url):
    page.goto(app_url + "/clusters")
    expect(page.get_by_text("Bottleneck cut: 15 GPUs inside").first).to_be_visible(timeout=60000)
    settle(page)
    chart = page.get_by_test_id("stPlotlyChart").first.bounding_box()
    plot = page.locator(".js-plotly-plot .nsewdrag").first.bounding_box()     # the drawing's plot area
    assert plot["width"] >= 0.85 * chart["width"], (plot, chart)
