"""The Learn page in a real browser (Debian's Chromium driven by Playwright against ``streamlit run app.py``): every
step's figure draws, the numbers are the library's, and a step's button opens the real page with the design."""
from playwright.sync_api import Page, expect

from .helpers import metric, settle


def test_learn_page_draws_every_step(page: Page, app_url, shot):
    page.goto(app_url + "/learn")
    expect(page.get_by_role("heading", name="Learn: latency, bandwidth and topology")).to_be_visible(timeout=30000)
    expect(metric(page, "steps (ring)")).to_have_text("62", timeout=60000)       # 2(N-1) at N = 32
    expect(metric(page, "winner at this M")).to_have_text("L(C(16,{3,4}))", timeout=60000)
    plots = page.locator(".js-plotly-plot")
    plots.nth(15).wait_for(timeout=60000)                 # 16 figures: 1 + 2 + 2 + 2 + 1 + 1 + 1 + 1 + 2 + 3
    settle(page)
    assert plots.count() == 16
    expect(metric(page, "P, slices")).to_have_text("1")         # step 6: ring allreduce on ring(4)
    # the README's screenshot: step 1 with its crossover figure
    page.get_by_role("heading", name="1. Rings: bandwidth-optimal, but slow").evaluate(
        "e => e.scrollIntoView({block: 'start'})")
    page.wait_for_timeout(500)
    shot(page, "learn")
    page.get_by_role("heading", name="10. Ring, tree and direct-connect at N = 64").evaluate(
        "e => e.scrollIntoView({block: 'start'})")
    page.wait_for_timeout(500)
    shot(page, "learn-n64")


def test_learn_step_opens_the_schedule_page(page: Page, app_url, shot):
    page.goto(app_url + "/learn")
    button = page.get_by_role("button", name="Schedule L(K₂,₂) (expansion allgather)")
    expect(button).to_be_visible(timeout=60000)
    settle(page)
    button.click()
    expect(page.get_by_role("heading", name="Schedule a collective")).to_be_visible(timeout=30000)
    expect(page.get_by_text("Verified by the simulator")).to_be_visible(timeout=60000)
    assert "expr=line" in page.url and "algo=expansion" in page.url
    settle(page)
    shot(page, "learn-open-schedule")
