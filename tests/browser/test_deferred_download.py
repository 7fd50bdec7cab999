"""Schedule's downloads are made when clicked (issue 44: a view no longer builds files it may never download):
the schedule JSON and BFB's LP (1) still arrive whole in a real browser."""
import json

from playwright.sync_api import Page, expect

from .helpers import settle


def test_the_schedule_json_and_the_lp_are_made_on_click(page: Page, app_url):
    page.goto(app_url + "/schedule?expr=gkautz(2,12)&algo=bfb&coll=allgather")
    expect(page.get_by_text("Verified by the simulator").first).to_be_visible(timeout=60000)
    settle(page)
    page.get_by_text("Downloads: the schedule as JSON").click()          # a box made only while open
    with page.expect_download(timeout=60000) as done:
        page.get_by_test_id("stDownloadButton").filter(has_text="Schedule JSON").click()
    data = json.loads(open(done.value.path()).read())
    assert data["algo"] == "bfb" and data["verified"] is True and len(data["transfers"]) > 0
    with page.expect_download(timeout=60000) as done:
        page.get_by_test_id("stDownloadButton").filter(has_text="(.lp)").click()
    text = open(done.value.path()).read()
    assert done.value.suggested_filename.endswith(".lp")
    assert "BFB LP (1)" in text and "\ns.t.\n" in text and text.rstrip().endswith("end")
