"""TACOS on the Schedule page through AppTest: the knobs, the time beside the ingress bound (the reference's Mesh
5x5 value), the Gantt chart, the unwound fabric on a switched cluster, the ILP comparison and the export."""
import json

import pytest

from .conftest import ROOT, open_boxes  # noqa: F401  (AppTest runs app.py from the repository root)
from .test_teccl_page import metrics, open_schedule

MESH = "mesh(5,5,bw=50,alpha_ns=500,gib=1)"


def titles(at):
    return [json.loads(c.proto.spec)["layout"]["title"]["text"] for c in at.get("plotly_chart")]


def test_schedule_page_tacos_mesh_meets_the_reference_value():
    at = open_schedule(MESH, algo="tacos")
    open_boxes(at, "workload_open").run()              # the workload's inputs
    at.number_input(key="w_bytes").set_value(float(1024 << 20)).run()
    assert not at.exception and not at.error
    m = metrics(at)
    assert float(m["TACOS's own clock (µs)"]) == pytest.approx(9606.0, rel=1e-4)
    assert m["Gap to bound"] == "0.00 %"
    assert "a correct allgather" in at.success[0].value
    assert any(t.startswith("Sends per link") for t in titles(at))
    at.number_input(key="c_chunks").set_value(2).run()
    assert not at.exception and not at.error
    assert float(metrics(at)["Chunk (bytes)"]) == pytest.approx((1024 << 20) // 50, rel=1e-3)


def test_schedule_page_tacos_on_a_switched_cluster_allreduce_and_export():
    at = open_schedule("dgx_a100(boxes=2)", ("export_open",), algo="tacos")
    at.selectbox(key="coll").set_value("allreduce").run()
    assert not at.exception and not at.error
    assert any("Switches unwound" in i.value for i in at.info)
    assert "a correct allreduce" in at.success[0].value
    at.button(key="x_export").click().run()
    assert not at.exception and "Validated against msccl-executor's rules, limits and kernels" in \
        at.success[-1].value


def test_schedule_page_tacos_ilp_on_a_small_mesh():
    at = open_schedule("mesh(3,3,bw=50,alpha_ns=500)", algo="tacos")
    assert not at.exception and not at.error
    at.button(key="c_ilp").click().run()
    assert not at.exception and not at.error
    done = [s.value for s in at.success if s.value.startswith("ILP optimal")]
    assert done and "+0.00 %" in done[0]
