"""A machine's own description uploaded in a real browser (issue 41): two copies of the sample NCCL topology file
on the Compose page make a two-box fabric, with what the import assumed shown under it; a truncated file is one
error line naming it."""
from pathlib import Path

from playwright.sync_api import Page, expect

from .helpers import metric, settle

SAMPLE = Path(__file__).resolve().parents[2] / "examples" / "nccl-topo-dgx-a100.xml"


def test_two_nccl_topology_files_are_a_two_box_fabric(page: Page, app_url, shot, tmp_path: Path):
    page.goto(app_url + "/compose")
    expect(metric(page, "Nodes")).to_be_visible(timeout=30000)
    node0, node1 = tmp_path / "node0.xml", tmp_path / "node1.xml"
    node0.write_text(SAMPLE.read_text())
    node1.write_text(SAMPLE.read_text())
    page.locator("input[type=file]").set_input_files([str(node0), str(node1)])
    expect(page.get_by_text("2 boxes: 16 GPUs (NCCL topology)", exact=True)).to_be_visible(timeout=30000)
    expect(metric(page, "Nodes")).to_have_text("16")
    expect(page.get_by_text("Assumed: 2 boxes joined by one network switch", exact=False)).to_be_visible()
    expect(page.get_by_text("sm 80: 20 GB/s per link", exact=False)).to_be_visible()
    settle(page)
    shot(page, "compose-two-boxes")
    half = tmp_path / "half.xml"
    half.write_text(SAMPLE.read_text()[:1500])
    page.locator("input[type=file]").set_input_files([str(half)])
    expect(page.get_by_test_id("stAlert")).to_contain_text("half.xml: not valid XML", timeout=30000)
