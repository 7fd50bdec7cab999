"""Every page in a real browser (Debian's Chromium driven by Playwright against ``streamlit run app.py``): open
it, change a widget, wait for the figure, check the text, and keep a screenshot in test-artifacts/."""
from pathlib import Path

from playwright.sync_api import Page, expect

from .helpers import drawn, metric, settle


def test_home_page(page: Page, app_url, shot):
    page.goto(app_url)
    expect(page.get_by_role("heading", name="Topology Studio")).to_be_visible(timeout=30000)
    link = page.get_by_test_id("stMain").get_by_role("link", name="Compose", exact=True)
    expect(link).to_be_visible()
    settle(page)
    shot(page, "home")
    link.click()
    expect(page.get_by_role("heading", name="Compose a topology")).to_be_visible(timeout=30000)


def test_compose_page_draws_and_updates(page: Page, app_url, shot):
    page.goto(app_url + "/compose")
    expect(page.get_by_text("BiRing(2,8): 8 nodes, 16 links")).to_be_visible(timeout=30000)
    expect(metric(page, "Diameter")).to_have_text("4")
    settle(page)
    shot(page, "compose-biring8")
    box = page.get_by_label("Expression", exact=True).and_(page.get_by_test_id("stTextInputField"))
    box.fill("torus(4,6)")
    box.press("Enter")
    expect(page.get_by_text("Torus(4×6): 24 nodes, 96 links")).to_be_visible(timeout=30000)
    settle(page)
    expect(metric(page, "Diameter")).to_have_text("5")
    assert "expr=torus" in page.url
    drawn(page, "topology_chart")
    assert not page.locator(".js-plotly-plot").count()          # no plotly.js unless asked for
    shot(page, "compose-torus")
    page.get_by_test_id("stSidebar").get_by_text("Interactive charts").click()
    page.locator(".st-key-topology_chart .js-plotly-plot").wait_for(timeout=30000)


def test_compose_large_design_from_the_url(page: Page, app_url, shot):
    page.goto(app_url + "/compose?expr=line(circulant(16,%5B3,4%5D),3)")
    expect(metric(page, "Nodes")).to_have_text("1024", timeout=30000)
    expect(metric(page, "Diameter")).to_have_text("6")
    settle(page)
    shot(page, "compose-1024")


def test_compose_reports_bad_input(page: Page, app_url, shot, tmp_path: Path):
    page.goto(app_url + "/compose?expr=complete(5")
    expect(page.get_by_test_id("stAlert")).to_contain_text("column", timeout=30000)
    shot(page, "compose-error")
    page.goto(app_url + "/compose?expr=ring(100000)")
    expect(page.get_by_test_id("stAlert")).to_contain_text("above the limit", timeout=30000)
    bad = tmp_path / "not-a-topology.json"
    bad.write_text('{"hello": 1}')
    page.goto(app_url + "/compose")
    expect(metric(page, "Nodes")).to_be_visible(timeout=30000)
    page.locator("input[type=file]").set_input_files(str(bad))
    expect(page.get_by_test_id("stAlert")).to_contain_text("not-a-topology.json", timeout=30000)
    shot(page, "compose-bad-upload")


def test_schedule_page(page: Page, app_url, shot):
    page.goto(app_url + "/schedule?expr=circulant(16,%5B3,4%5D)&algo=bfb&coll=allgather")
    expect(metric(page, "Steps")).to_have_text("3", timeout=60000)
    expect(metric(page, "tb_factor")).to_have_text("0.9375")
    expect(page.get_by_text("Verified by the simulator")).to_be_visible()
    settle(page)
    expect(page.locator(".st-key-step_chart")).to_have_count(0)         # the step-by-step box is made when opened
    page.get_by_text("Step by step: the links each step uses").click()
    for key in ("runtime_chart", "heatmap_chart", "step_chart", "tree_chart"):
        drawn(page, key)
    shot(page, "schedule-circulant16")
    page.goto(app_url + "/schedule?expr=line(circulant(16,%5B3,4%5D),3)&algo=bfb&coll=allgather")
    expect(metric(page, "Steps")).to_have_text("6", timeout=60000)
    expect(metric(page, "tb_factor")).to_have_text("1.0195")
    settle(page)
    shot(page, "schedule-1024")


def test_finder_page(page: Page, app_url, shot):
    page.goto(app_url + "/finder")
    expect(page.get_by_text("Recommended for allreduce")).to_be_visible(timeout=60000)     # N = 64 at once
    settle(page)
    box = page.get_by_label("N, nodes")
    box.fill("1024")
    box.press("Enter")
    page.get_by_role("button", name="Find designs for N = 1024").click(timeout=30000)
    expect(page.get_by_text("Recommended for allreduce")).to_contain_text("L³(C(16,{3,4}))", timeout=60000)
    page.locator(".js-plotly-plot").first.wait_for(timeout=30000)
    settle(page)
    shot(page, "finder-1024")
    box = page.get_by_label("N, nodes")
    box.fill("32")
    box.press("Enter")
    expect(page.get_by_text("Recommended for allreduce")).to_contain_text("L(K₄,₄)", timeout=60000)
    settle(page)
    page.get_by_role("button", name="Open in Compose").click()
    expect(page.get_by_role("heading", name="Compose a topology")).to_be_visible(timeout=30000)
    expect(metric(page, "Nodes")).to_have_text("32", timeout=30000)
    assert "expr=line" in page.url
    shot(page, "finder-open-compose")


def test_clusters_page(page: Page, app_url, shot):
    page.goto(app_url + "/clusters")
    expect(metric(page, "best algbw (GB/s)")).to_have_text("346.67", timeout=60000)
    expect(metric(page, "k (trees per root)")).to_have_text("13")
    page.locator(".js-plotly-plot").first.wait_for(timeout=30000)
    expect(page.get_by_text("Bottleneck cut: 15 GPUs inside").first).to_be_visible(timeout=30000)
    settle(page)
    shot(page, "clusters-dgx2")
    box = page.get_by_label("boxes")
    box.fill("4")
    box.press("Enter")
    expect(metric(page, "best algbw (GB/s)")).to_have_text("266.67", timeout=60000)
    settle(page)
    shot(page, "clusters-dgx4")


def test_schedule_page_tacos(page: Page, app_url, shot):
    page.goto(app_url + "/schedule?expr=mesh(4,4,bw=50,alpha_ns=500)&algo=tacos&coll=allreduce")
    expect(metric(page, "Gap to bound")).to_have_text("0.00 %", timeout=60000)
    expect(page.get_by_text("Verified by the simulator")).to_be_visible()
    page.locator(".js-plotly-plot").first.wait_for(timeout=30000)
    settle(page)
    shot(page, "schedule-tacos-mesh4x4")


def test_genmodel_page(page: Page, app_url, shot):
    page.goto(app_url + "/genmodel")
    expect(page.get_by_role("heading", name="GenModel and GenTree")).to_be_visible(timeout=30000)
    page.locator(".js-plotly-plot").first.wait_for(timeout=30000)
    settle(page)
    shot(page, "genmodel-calculator")
    page.get_by_role("tab", name="GenTree").click()
    expect(metric(page, "GenTree AllReduce (s)")).to_be_visible(timeout=60000)
    page.locator(".js-plotly-plot").last.wait_for(timeout=30000)
    settle(page)
    shot(page, "genmodel-gentree")
