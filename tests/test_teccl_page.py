"""TE-CCL in the app through AppTest: its knobs on the Schedule page (allgather and alltoall on DGX1, the paper's
4 us), the result panel and the epoch-by-epoch view, a bad setting as one line, the other algorithms untouched,
the MSCCL export; TE-CCL beside ForestColl on the Clusters page; the epoch table of composed collectives."""
import json

import pytest
from streamlit.testing.v1 import AppTest

from solvers.teccl import teccl
from topologies import load

from .conftest import ROOT, open_boxes, shown_metrics, switch_page

SCHEDULE = "schedule"
CLUSTERS = "clusters"
BUFFER = 200_000.0           # dgx1: 25 KB chunks on 25 GB/s links, 1 us epochs (TE-CCL Table 3)


def metrics(at):
    return {m.label: m.value for m in shown_metrics(at)}


def titles(at):
    return [json.loads(c.proto.spec)["layout"]["title"]["text"] for c in at.get("plotly_chart")]


def open_schedule(expr, boxes=(), **params):
    """Schedule on ``expr`` with the URL's ``params`` and the lazy expanders ``boxes`` open."""
    at = AppTest.from_file(str(ROOT / "app.py"), default_timeout=120).run()
    at.query_params["expr"] = expr
    for k, v in params.items():
        at.query_params[k] = v
    return open_boxes(switch_page(at, SCHEDULE), *boxes).run()


def test_schedule_page_teccl_allgather_and_alltoall_on_dgx1():
    at = open_schedule("dgx1()", algo="teccl")
    open_boxes(at, "workload_open").run()              # the workload's inputs
    at.number_input(key="w_bytes").set_value(BUFFER).run()      # the page passes the sidebar's M as the buffer
    assert not at.exception and not at.error
    topo = load("dgx1()")
    for coll in ("allgather", "alltoall"):
        if coll != "allgather":
            at.selectbox(key="coll").set_value(coll).run()
            assert not at.exception and not at.error
        expected = teccl(topo, coll, buffer_bytes=BUFFER, time_limit=30)
        assert expected.transfer_time_us == 4
        m = metrics(at)
        assert float(m["TE-CCL's epoch time (µs)"]) == 4.0
        assert float(m["TE-CCL's algbw (GB/s)"]) == pytest.approx(expected.algbw_GBps, rel=1e-3)
        assert m["Epochs K / finish"] == f"{expected.epochs} / {expected.finish}" and m["Status"] == "optimal"
        assert next(x.delta for x in shown_metrics(at) if x.label == "Status") == "K minimal: proven"
        assert f"a correct {coll}" in at.success[0].value
        t = titles(at)
        assert t[0].startswith("Epoch 0: ") and t[1].startswith("Sends per link and epoch")
    at.slider(key="t_epoch_slider").set_value(2).run()
    assert titles(at)[0].startswith("Epoch 2: ")
    assert "Schedule JSON" in {b.label for b in open_boxes(at, "downloads_open").run().get("download_button")}


def test_schedule_page_teccl_bad_epochs_is_one_line():
    at = open_schedule("dgx1()", algo="teccl")
    at.number_input(key="t_epochs").set_value(1).run()
    assert not at.exception
    assert len(at.error) == 1 and "at least 4" in at.error[0].value and "\n" not in at.error[0].value
    at.number_input(key="t_epochs").set_value(0).run()
    assert not at.exception and not at.error and metrics(at)["TE-CCL's epoch time (µs)"]


def test_schedule_page_teccl_allreduce_and_export():
    at = open_schedule("ring(4)", ("export_open",), algo="teccl")
    at.selectbox(key="coll").set_value("allreduce").run()
    assert not at.exception and not at.error
    m = metrics(at)
    assert m["Parts"] == "2" and "a correct allreduce" in at.success[0].value
    at.button(key="x_export").click().run()
    assert not at.exception and "Validated against msccl-executor's rules, limits and kernels" in \
        at.success[-1].value


def test_other_algorithms_keep_their_collectives():
    at = open_schedule("circulant(8,[2,3])", algo="teccl")
    assert "alltoall" in at.selectbox(key="coll").options
    at.selectbox(key="coll").set_value("alltoall").run()
    at.selectbox(key="algo").set_value("bfb").run()
    assert not at.exception and not at.error
    assert at.selectbox(key="coll").value == "allgather" and "alltoall" not in at.selectbox(key="coll").options
    m = metrics(at)
    assert (m["Steps"], m["tb_factor"], m["BW-optimal"]) == ("2", "0.8750", "yes")
    at = open_schedule("circulant(8,[2,3])", algo="ring", coll="alltoall")       # a URL asking for the impossible
    assert not at.exception and not at.error and at.selectbox(key="coll").value == "allgather"


def test_clusters_page_teccl_on_a_two_level_cluster():
    at = AppTest.from_file(str(ROOT / "app.py"), default_timeout=120).run()
    at = switch_page(at, CLUSTERS).run()
    at.selectbox(key="c_family").set_value("two-level cluster (Fig. 2)").run()
    at.number_input(key="c_b").set_value(2).run()                # cluster(2,2,10,1)
    at.radio(key="c_algo").set_value("TE-CCL").run()
    assert not at.exception and not at.error
    expected = teccl(load("cluster(2,2,10,1)"), "allgather", buffer_bytes=at.session_state["w_bytes"])
    assert float(metrics(at)["TE-CCL's epoch time (µs)"]) == pytest.approx(float(expected.transfer_time_us))
    assert any(t.startswith("Epoch 0: ") for t in titles(at))
    at.button(key="ct_export").click().run()
    assert not at.exception and "Validated against msccl-executor's rules" in at.success[-1].value
    at.selectbox(key="ct_coll").set_value("custom").run()
    assert not at.exception and "needs a demand matrix" in at.info[0].value
    at.text_area(key="ct_demand_text").set_value("0,1,0,0\n0,0,0,2\n0,0,0,0\n1,0,0,0\n").run()
    assert not at.exception and not at.error and "a correct custom" in at.success[0].value
    at.text_area(key="ct_demand_text").set_value("0,1\n1,0\n").run()
    assert not at.exception and len(at.error) == 1 and "4 x 4" in at.error[0].value
    at.radio(key="c_algo").set_value("ForestColl").run()
    assert not at.exception and metrics(at)["k (trees per root)"] == "1"


def test_epoch_rows_of_composed_collectives_follow_the_links():
    """A reduce-scatter part is mirrored in time and direction; each send keeps its link's lag, every link
    exists, and an allreduce's allgather starts after the reduce-scatter."""
    from solvers import synthesize
    from studio.views.teccl import epoch_rows

    topo = load("cluster(2,2,10,1)")
    result = synthesize(topo, "teccl", "allreduce", total_bytes=1e6, options={"chunks": 1})
    found = result.detail
    assert result.verification.ok
    rows = epoch_rows(found)
    links = {(topo.names[l.src], topo.names[l.dst]) for l in topo.links}
    assert all((r["from"], r["to"]) in links for r in rows)
    rs, ag = found.parts
    lags = {(r["from"], r["to"]): r["arrives"] - r["epoch"] for r in ag.epoch_table()}
    assert all(r["arrives"] - r["epoch"] == lags.get((r["from"], r["to"]), r["arrives"] - r["epoch"]) for r in rows)
    assert min(r["epoch"] for r in rows if r["phase"] == "allgather") >= rs.finish
    assert max(r["arrives"] for r in rows) == rs.finish + ag.finish
    assert {r["phase"] for r in rows} == {"reduce-scatter", "allgather"}
