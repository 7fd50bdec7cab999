"""Measured against modelled in a real browser (issue 41, item 4): on the Schedule page of biring(16), the sample
nccl-tests log beside every applicable synthesizer's runtime model on prices fitted to it; its legend names the
measured placements and the models; a bad upload is one line and the page goes on. Screenshot:
tests/browser/screenshots/measured_curve.png (and test-artifacts/measured_curve.png, the whole page)."""
import re

from playwright.sync_api import Page, expect

from .conftest import SCREENSHOTS
from .helpers import metric, settle

EXPANDER = "Measured (nccl-tests / rccl-tests log)"


def test_the_sample_log_beside_the_model(page: Page, app_url, shot, tmp_path):
    page.goto(app_url + "/schedule?expr=biring(16)&algo=ring&coll=allreduce")
    expect(metric(page, "Runtime (µs)")).to_be_visible(timeout=60000)
    settle(page)
    page.get_by_text(EXPANDER).click()
    page.get_by_role("button", name="Use the sample log").click()
    plot = page.locator(".st-key-s_measured_chart .js-plotly-plot")
    plot.wait_for(timeout=60000)
    settle(page)
    legend = plot.locator(".legendtext")
    for name in ("measured (out-of-place)", "measured (in-place)", "model: ring", "model: bfb"):
        expect(legend.filter(has_text=re.compile(f"^{re.escape(name)}$"))).to_have_count(1)
    assert all(t.startswith(("measured", "model")) for t in legend.all_text_contents())
    expect(page.get_by_text("NCCL measured 39.8 GB/s busbw at the largest size")).to_be_visible()
    plot.scroll_into_view_if_needed()
    page.mouse.move(5, 5)                                                   # no tooltip over the figure
    shot(page, "measured_curve")
    SCREENSHOTS.mkdir(exist_ok=True)
    page.screenshot(path=str(SCREENSHOTS / "measured_curve.png"))          # the viewport: a readable size
    bad = tmp_path / "bad.log"
    bad.write_text("not a benchmark log\n")
    page.get_by_test_id("stExpander").filter(has_text=EXPANDER).locator("input[type=file]").set_input_files(str(bad))
    expect(page.get_by_text("bad.log: no data rows")).to_be_visible(timeout=30000)
    settle(page)
    expect(plot).to_have_count(0)
    expect(metric(page, "Runtime (µs)")).to_be_visible()
