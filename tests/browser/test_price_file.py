"""The sidebar's calibrated prices in a real browser (issue 40): a price file uploaded in the sidebar prices the
Schedule page, and its time is the CLI's with ``--prices FILE``; a bad file is one line and changes nothing."""
import contextlib
import io
import json

from playwright.sync_api import Page, expect

from .helpers import metric, settle

PRICES = {"alpha_us": 2.5, "bandwidth_gbs": 180, "source": "nccl-tests on 8 GPUs"}


def _cli_time(path) -> float:
    from studio.cli import main

    out = io.StringIO()
    with contextlib.redirect_stdout(out), contextlib.redirect_stderr(io.StringIO()):
        assert main(["schedule", "ring(8)", "--algo", "ring", "--collective", "allreduce", "--prices", str(path),
                     "--json"]) == 0
    return json.loads(out.getvalue())["time_us"]


def test_a_price_file_prices_the_schedule_page_as_the_cli(page: Page, app_url, tmp_path):
    good = tmp_path / "prices.json"
    good.write_text(json.dumps(PRICES))
    bad = tmp_path / "bad.json"
    bad.write_text('{"alpha_us": 2.5}')
    page.goto(app_url + "/schedule?expr=ring(8)&algo=ring&coll=allreduce")
    expect(metric(page, "Runtime (µs)")).to_be_visible(timeout=60000)
    settle(page)
    uniform = metric(page, "Runtime (µs)").inner_text()
    sidebar = page.get_by_test_id("stSidebar")
    sidebar.get_by_text("Change the workload").click()                  # the inputs: a box made when opened
    sidebar.get_by_text("Calibrated price file").click()
    settle(page)
    sidebar.locator("input[type=file]").set_input_files(str(bad))
    expect(sidebar.get_by_text("bad.json: the price file lacks bandwidth_gbs")).to_be_visible(timeout=30000)
    settle(page)
    sidebar.locator("input[type=file]").set_input_files(str(good))
    expect(sidebar.get_by_text("From nccl-tests on 8 GPUs: alpha 2.5 µs, B 180 GB/s per node.")).to_be_visible(
        timeout=30000)
    settle(page)
    shown = metric(page, "Runtime (µs)").inner_text()
    assert shown != uniform
    assert float(shown) == float(f"{_cli_time(good):.4g}")
    sidebar.get_by_text("Change the workload").click()      # closed (the page runs again without the inputs)
    settle(page)
    expect(sidebar.locator("input[type=file]")).to_have_count(0)
    expect(sidebar.get_by_text("prices: calibrated (nccl-tests on 8 GPUs)", exact=False)).to_be_visible()
    expect(metric(page, "Runtime (µs)")).to_have_text(shown)                # the prices stay as set
