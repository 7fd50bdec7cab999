"""The Clusters page through AppTest: ForestColl on a built fabric (the paper's numbers), the bottleneck cut and
tree drawings, the k scan (which stays on its view), the MSCCL export, and bad input as one message."""
import json
import re

import pytest

from streamlit.testing.v1 import AppTest

from .conftest import ROOT, open_boxes, shown_metrics, switch_page

CLUSTERS = "clusters"


def open_clusters():
    at = AppTest.from_file(str(ROOT / "app.py"), default_timeout=180).run()
    return switch_page(at, CLUSTERS).run()


def metric(at, label):
    return next(m.value for m in shown_metrics(at) if m.label == label)


def show(at, view):
    """Pick one of the page's result views (a keyed control: the choice is session state)."""
    return at.segmented_control(key="c_view").set_value(view).run()


def titles(at):
    return [json.loads(c.proto.spec)["layout"]["title"]["text"] for c in at.get("plotly_chart")]


def test_default_dgx_two_boxes():
    at = open_clusters()
    assert not at.exception and not at.error
    assert metric(at, "best algbw (GB/s)") == "346.67"
    assert metric(at, "forest algbw (GB/s)") == "346.67"
    assert metric(at, "1/x* (s/GB)") == "3/65" and metric(at, "k (trees per root)") == "13"
    assert at.segmented_control(key="c_view").value == "Bottleneck cut"
    assert "Bottleneck cut: 15 GPUs inside, 325 GB/s out" in titles(at)[0]
    show(at, "Trees")
    assert len(titles(at)) == 1 and "The 13 tree(s) of b0.g0" in titles(at)[0]
    assert sum(at.dataframe[0].value["trees"]) == 13


UNIT = re.compile(r"\((GB/s|s/GB|µs|s|bytes|trees per root|slices)\)$")


def test_every_metric_and_scan_column_has_a_unit():
    """Issue 40: the page's metrics had no units. Every metric label, and every column of the k scan, ends in one."""
    at = open_clusters()
    labels = [m.label for m in shown_metrics(at)]
    assert len(labels) == 9 and all(UNIT.search(label) for label in labels), labels
    assert max(map(len, labels)) <= 19                 # five to a row: longer labels are cut at 1280 pixels
    assert metric(at, "U (s/GB)") == "3/5"
    show(at, "k vs throughput")
    at.button(key="c_scan").click().run()
    assert all(UNIT.search(c) for c in at.dataframe[0].value.columns), list(at.dataframe[0].value.columns)


def test_the_forest_is_timed_by_the_runtime_model_for_the_workload():
    """Issue 40: the page showed only ForestColl's flow-model algbw; the runtime model's time for the sidebar's
    workload, the one every other page and command shows, comes first."""
    from solvers.forestcoll import forestcoll
    from solvers.runtime import Workload
    from topologies import load

    at = open_clusters()
    topo = load("dgx_a100(boxes=2)")
    want = Workload().price(topo, forestcoll(topo).allgather()).run
    assert float(metric(at, "Runtime (µs)")) == pytest.approx(want.time_us, rel=5e-4)
    open_boxes(at, "workload_open").run()              # the workload's inputs
    at.number_input(key="w_bytes").set_value(1e8).run()
    want = Workload(1e8).price(topo, forestcoll(topo).allgather()).run
    assert float(metric(at, "Runtime (µs)")) == pytest.approx(want.time_us, rel=5e-4)


def test_scan_stays_on_its_view():
    """Issue 40: the k scan finishing threw the page back to the first tab. The view is now kept state."""
    at = open_clusters()
    show(at, "k vs throughput")
    at.button(key="c_scan").click().run()
    assert not at.exception and not at.error
    assert at.segmented_control(key="c_view").value == "k vs throughput"
    assert len(titles(at)) == 1 and titles(at)[0].startswith("Allgather algbw against k")
    at.button(key="c_scan").click().run()                      # again, from the cache
    assert at.segmented_control(key="c_view").value == "k vs throughput" and len(at.dataframe) == 1


def test_fixed_k_scan_and_export():
    at = open_clusters()
    at.selectbox(key="c_family").set_value("MI250 clusters (8 GPUs: the 8+8 setting)").run()
    at.radio(key="c_mode").set_value("fixed k").run()
    assert not at.exception and not at.error
    assert metric(at, "forest algbw (GB/s)") == "200.00" and metric(at, "best algbw (GB/s)") == "208.00"
    show(at, "k vs throughput")
    at.button(key="c_scan").click().run()
    rows = at.dataframe[0].value
    assert [round(x, 1) for x in rows["algbw (GB/s)"][:4]] == [200.0, 200.0, 200.0, 204.8]
    show(at, "Export")
    at.selectbox(key="c_coll").set_value("allreduce").run()
    at.button(key="c_export").click().run()
    assert not at.error and "Validated against rccl's rules, limits and kernels and simulated" in \
        at.success[0].value            # mi250: an AMD fabric (the export view is first drawn for it, not for DGX)
    at.number_input(key="c_budget").set_value(1).run()      # the shared export widget: settings on every page
    assert "Download MSCCL XML" not in {b.label for b in at.get("download_button")}
    at.button(key="c_export").click().run()
    assert not at.exception and any("above the budget of 1" in e.value for e in at.error)


def test_bad_expression_is_one_message():
    at = open_clusters()
    at.radio(key="c_source").set_value("expression").run()
    at.text_input(key="c_expr").set_value("dgx_a100(boxes=0)").run()
    assert not at.exception and "boxes" in at.error[0].value
    at.text_input(key="c_expr").set_value("ring(4)").run()          # no switches, still fine
    assert not at.exception and not at.error and metric(at, "k (trees per root)") == "1"
