"""The Compose page in a real browser: type an expression, see the drawing and the properties change."""
from playwright.sync_api import Page, expect

IDLE = "() => !document.querySelector('[data-testid=\"stStatusWidget\"]')"


def metric(page: Page, label: str):
    return page.get_by_test_id("stMetric").filter(has_text=label).get_by_test_id("stMetricValue")


def test_compose_page_draws_and_updates(page: Page, app_url, shot):
    page.goto(app_url)
    expect(page.get_by_text("BiRing(2,8): 8 nodes, 16 links")).to_be_visible(timeout=30000)
    expect(metric(page, "Diameter")).to_have_text("4")
    shot(page, "compose-biring8")

    box = page.get_by_label("Expression", exact=True).and_(page.get_by_test_id("stTextInputField"))
    box.fill("ring(6)")
    box.press("Enter")
    expect(page.get_by_text("UniRing(1,6): 6 nodes, 6 links")).to_be_visible(timeout=30000)
    page.wait_for_function(IDLE)
    expect(metric(page, "Diameter")).to_have_text("5")
    assert "expr=ring" in page.url
    shot(page, "compose-ring6")


def test_compose_page_reports_a_bad_expression(page: Page, app_url, shot):
    page.goto(app_url + "/?expr=complete(5")
    expect(page.get_by_test_id("stAlert")).to_contain_text("column", timeout=30000)
    shot(page, "compose-error")
