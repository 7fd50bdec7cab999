"""The first hour in a real browser (issue 40): Home's example links open Compose in the same tab, drawn, and
the Finder's "Open a design" selector shows the design its buttons open after N changes."""
from playwright.sync_api import Page, expect

from studio.pages.home import EXAMPLES

from .helpers import drawn, metric, settle


def test_home_examples_open_compose_in_the_same_tab(page: Page, app_url):
    page.goto(app_url)
    expect(page.get_by_role("heading", name="Topology Studio")).to_be_visible(timeout=30000)
    settle(page)
    links = page.locator("a[href*='compose?expr=']")
    expect(links).to_have_count(len(EXAMPLES), timeout=30000)
    for i in range(links.count()):
        assert links.nth(i).get_attribute("target") != "_blank", links.nth(i).get_attribute("href")
    for title in ("Compose", "Schedule", "Compare", "Finder", "Clusters", "GenModel", "Learn"):
        expect(page.get_by_test_id("stMain").get_by_role("link", name=title, exact=True)).to_be_visible()
    pages_before = len(page.context.pages)
    links.first.click()
    expect(page.get_by_role("heading", name="Compose a topology")).to_be_visible(timeout=30000)
    assert len(page.context.pages) == pages_before                    # no new tab
    expect(metric(page, "Nodes")).to_have_text("256", timeout=30000)
    drawn(page, "topology_chart")
    assert "expr=line" in page.url


def test_finder_selector_follows_the_frontier(page: Page, app_url):
    page.goto(app_url + "/finder")
    expect(page.get_by_text("Recommended for allreduce")).to_be_visible(timeout=60000)
    settle(page)
    box = page.get_by_label("N, nodes")
    box.fill("1024")
    box.press("Enter")
    find = page.get_by_role("button", name="Find designs for N = 1024")
    found = page.get_by_text("Recommended for allreduce").filter(has_text="L³(C(16,{3,4}))")
    expect(find.or_(found)).to_be_visible(timeout=60000)
    if find.count():                    # above 256 nodes the search waits for the button
        find.click()
    expect(page.get_by_text("Recommended for allreduce")).to_contain_text("L³(C(16,{3,4}))", timeout=60000)
    settle(page)
    picker = page.get_by_role("combobox", name="Open a design")
    expect(picker).to_have_value("L³(C(16,{3,4})) (6 steps, tb 1.0195)")
    box.fill("64")
    box.press("Enter")
    settle(page)
    expect(picker).not_to_have_value("L³(C(16,{3,4})) (6 steps, tb 1.0195)", timeout=30000)
    shown = picker.input_value()
    page.get_by_role("button", name="Open in Compose").click()
    expect(page.get_by_role("heading", name="Compose a topology")).to_be_visible(timeout=30000)
    expect(metric(page, "Nodes")).to_have_text("64", timeout=30000)
    name = page.get_by_test_id("stHeading").nth(1).inner_text()      # the design's name under the title
    assert name.split(":")[0].strip() in shown, (name, shown)
