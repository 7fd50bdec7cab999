"""The Clusters page through AppTest: ForestColl on a built fabric (the paper's numbers), the bottleneck cut and
tree drawings, the k scan, the MSCCL export, and bad input as one message."""
import json

from streamlit.testing.v1 import AppTest

from .conftest import ROOT, switch_page

CLUSTERS = "clusters"


def open_clusters():
    at = AppTest.from_file(str(ROOT / "app.py"), default_timeout=180).run()
    return switch_page(at, CLUSTERS).run()


def metric(at, label):
    return next(m.value for m in at.metric if m.label == label)


def test_default_dgx_two_boxes():
    at = open_clusters()
    assert not at.exception and not at.error
    assert metric(at, "optimal allgather algbw") == "346.67"
    assert metric(at, "this forest") == "346.67"
    assert metric(at, "1/x*") == "3/65" and metric(at, "k trees per root") == "13"
    specs = [json.loads(c.proto.spec) for c in at.get("plotly_chart")]
    assert "Bottleneck cut: 15 GPUs inside, 325 GB/s out" in specs[0]["layout"]["title"]["text"]
    assert "The 13 tree(s) of b0.g0" in specs[1]["layout"]["title"]["text"]
    assert sum(at.dataframe[0].value["trees"]) == 13


def test_fixed_k_scan_and_export():
    at = open_clusters()
    at.selectbox(key="c_family").set_value("MI250 clusters (8 GPUs: the 8+8 setting)").run()
    at.radio(key="c_mode").set_value("fixed k").run()
    assert not at.exception and not at.error
    assert metric(at, "this forest") == "200.00" and metric(at, "optimal allgather algbw") == "208.00"
    at.button(key="c_scan").click().run()
    rows = at.dataframe[1].value
    assert [round(x, 1) for x in rows["algbw GB/s"][:4]] == [200.0, 200.0, 200.0, 204.8]
    at.selectbox(key="c_coll").set_value("allreduce").run()
    at.button(key="c_export").click().run()
    assert not at.error and "Validated against msccl-executor's rules, limits and kernels and simulated" in \
        at.success[0].value                                   # dgx_a100: an NVIDIA fabric
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
    assert not at.exception and not at.error and metric(at, "k trees per root") == "1"
