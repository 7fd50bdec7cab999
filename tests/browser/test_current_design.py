"""Issue 59: the machine imported on Compose is the session's design in a real browser: Schedule says so,
schedules it, and its MSCCL file is named after the uploaded file (not after the expression box's biring(8))."""
from pathlib import Path

from playwright.sync_api import Page, expect

from .helpers import metric, settle

SAMPLE = Path(__file__).resolve().parents[2] / "examples" / "nccl-topo-dgx-a100.xml"


def test_the_import_is_what_schedule_schedules_and_names(page: Page, app_url, shot):
    page.goto(app_url + "/compose")
    expect(metric(page, "Nodes")).to_be_visible(timeout=30000)
    page.locator("input[type=file]").set_input_files([str(SAMPLE)])
    expect(page.get_by_text("nccl-topo-dgx-a100.xml: 8 GPUs (NCCL topology)", exact=True)).to_be_visible(
        timeout=30000)
    settle(page)
    page.get_by_test_id("stSidebarNav").get_by_role("link", name="Schedule").click()
    expect(page.get_by_text("Verified by the simulator").first).to_be_visible(timeout=60000)
    expect(page.get_by_text("the import nccl-topo-dgx-a100.xml", exact=False)).to_be_visible()
    assert not page.get_by_test_id("stAlertContentError").count()       # the page's default applies to it
    settle(page)
    shot(page, "schedule-imported-machine")
    page.get_by_text("Export to MSCCL XML").click()                      # a box made only while open
    page.get_by_role("tab", name="One file").click()
    page.get_by_role("button", name="Build MSCCL XML").click()
    button = page.get_by_test_id("stDownloadButton").filter(has_text="Download MSCCL XML")
    expect(button).to_be_visible(timeout=60000)
    with page.expect_download(timeout=60000) as done:
        button.click()
    name = done.value.suggested_filename
    assert name.startswith("nccl_topo_dgx_a100__") and name.endswith("_allgather.xml"), name
    assert "<algo" in open(done.value.path()).read()
