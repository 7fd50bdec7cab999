"""The Finder page through AppTest: the frontier priced for the workload (the runtime model up to
RUNTIME_MAX_NODES nodes, the step model beside it and alone above), the recommendation, size mixes, all-to-all
times, opening a design, the sweep, and bad input as one message."""
import json

import pytest
from streamlit.testing.v1 import AppTest

from solvers.core.cost import alpha_beta_us
from solvers.directconnect.finder import find
from solvers.runtime import Execution, simulate
from solvers.synthesize import synthesize
from topologies import parse_topology

from .conftest import ROOT, open_boxes, switch_page

FINDER = "finder"


def open_finder():
    at = AppTest.from_file(str(ROOT / "app.py"), default_timeout=180).run()
    return switch_page(at, FINDER).run()


def open_1024():
    """The Finder at N = 1024, found on its button (the page opens on N = 64)."""
    at = open_finder()
    at.number_input(key="f_n").set_value(1024).run()
    return at.button(key="f_find").click().run()


def test_frontier_at_1024_is_table4_with_the_recommendation():
    at = open_1024()
    assert not at.exception
    df = at.dataframe[0].value
    assert list(df["steps"]) == [5, 6, 8, 11, 20]
    assert [round(x, 3) for x in df["tb_factor"]] == [1.332, 1.020, 1.004, 1.000, 0.999]
    # sidebar default M = 1e6 bytes: L^3(C(16,{3,4})) is best, and the star marks it; N = 1024 is above the
    # runtime model's cap, so the step model prices it and says so
    assert list(df[""]).index("★") == 1 and "L³(C(16,{3,4}))" in at.success[0].value     # as math
    assert "priced by the step model" in at.success[0].value and "allreduce µs" not in df.columns
    assert df["step model µs"].iloc[1] == pytest.approx(2 * alpha_beta_us(6, 261 / 256, 1e6, 10.0, 12.5), abs=0.01)
    spec = json.loads(at.get("plotly_chart")[0].proto.spec)
    names = [t.get("name") for t in spec["data"]]
    assert names == ["frontier", "recommended", "theoretical bound"]
    assert spec["data"][2]["x"] == [5] and spec["data"][1]["x"] == [6]


def test_large_messages_move_the_recommendation_to_the_bandwidth_end():
    at = open_1024()
    open_boxes(at, "workload_open").run()              # the workload's inputs
    at.number_input(key="w_bytes").set_value(1e10).run()
    df = at.dataframe[0].value
    assert list(df[""]).index("★") == len(df) - 1


def test_size_mix_and_bad_mix():
    at = open_finder()
    at.number_input(key="f_n").set_value(12).run()
    at.radio(key="f_mix").set_value("a distribution").run()
    at.text_input(key="f_sizes").set_value("1e6:2, 1e9").run()
    assert not at.exception and not at.error
    df = at.dataframe[0].value
    expected = 2 * (2 * (2 * 10 + 11 / 12 * 1e6 / 12.5e3)) + 2 * (2 * 10 + 11 / 12 * 1e9 / 12.5e3)
    assert df["step model µs"].iloc[0] == pytest.approx(expected, abs=0.01)
    built = synthesize(parse_topology(df["expression"].iloc[0]), df["schedule"].iloc[0], "allreduce")
    ex = Execution.alpha_beta(10.0, 12.5)
    runtime = sum(w * simulate(built.topology, built.schedule, m, ex).time_us for m, w in ((1e6, 2), (1e9, 1)))
    assert df["allreduce µs"].iloc[0] == pytest.approx(runtime, abs=0.01)
    assert "priced by the runtime model" in at.success[0].value
    at.text_input(key="f_sizes").set_value("1e6:x").run()
    assert not at.exception and "not a size in bytes" in at.error[0].value


@pytest.mark.parametrize("collective", ["allreduce", "reduce_scatter"])
def test_runtime_model_prices_and_stars_small_frontiers(collective):
    """Up to the cap the '{collective} µs' column is the runtime model of the verified schedule, the star is its
    least, and 'step model µs' is the papers' figure on the theorems' steps and tb."""
    at = open_finder()
    at.number_input(key="f_n").set_value(64).run()
    at.selectbox(key="f_coll").set_value(collective).run()
    assert not at.exception and not at.error
    df = at.dataframe[0].value
    front = find(64, 4)
    assert list(df["expression"]) == [c.expr for c in front]
    ex = Execution.alpha_beta(10.0, 12.5)
    for i, c in enumerate(front):
        built = synthesize(parse_topology(c.expr), df["schedule"].iloc[i], collective)
        assert df[f"{collective} µs"].iloc[i] == pytest.approx(simulate(built.topology, built.schedule, 1e6,
                                                                          ex).time_us, abs=0.01)
        step = alpha_beta_us(c.steps, c.tb, 1e6, 10.0, 12.5) * (2 if collective == "allreduce" else 1)
        assert df["step model µs"].iloc[i] == pytest.approx(step, abs=0.01)
    times = list(df[f"{collective} µs"])
    assert list(df[""]).index("★") == times.index(min(times))
    assert "priced by the runtime model" in at.success[0].value


def test_alltoall_times_and_bidirectional():
    at = open_finder()
    at.number_input(key="f_n").set_value(32).run()
    at.button(key="f_a2a_go").click().run()
    df = at.dataframe[0].value
    assert list(df["MCF f"].round(5)) == [0.05714, 0.05263]      # L(K_{4,4}) and DistReg(4,32), Table 7
    assert df["all-to-all µs"].iloc[0] == pytest.approx(1e6 / 12.5e3 * 4 / (32 * df["MCF f"].iloc[0]), abs=0.006)
    at.radio(key="f_kind").set_value("bidirectional").run()
    assert not at.exception and all(at.dataframe[0].value["steps"] >= 1)


def test_bad_target_is_one_message():
    at = open_finder()
    at.number_input(key="f_d").set_value(3).run()
    at.number_input(key="f_n").set_value(5).run()
    at.radio(key="f_kind").set_value("bidirectional").run()
    assert not at.exception
    assert at.warning and "No bidirectional design" in at.warning[0].value


def test_open_in_schedule_switches_page():
    at = open_finder()
    at.number_input(key="f_n").set_value(16).run()
    at.button(key="f_open_schedule").click().run()
    assert not at.exception
    assert at.session_state["algo"] == "expansion" and at.session_state["coll"] == "allreduce"
    assert any("Verified by the simulator" in s.value for s in at.success)


def test_sweep_view_has_every_design():
    at = open_finder()
    at.number_input(key="s_lo").set_value(64).run()
    at.number_input(key="s_hi").set_value(256).run()
    at.number_input(key="s_step").set_value(64).run()
    assert not at.exception
    spec = json.loads(at.get("plotly_chart")[1].proto.spec)
    names = [t["name"] for t in spec["data"]]
    assert "best found" in names and "theoretical bound" in names and "2D torus" in names
    best = next(t for t in spec["data"] if t["name"] == "best found")
    bound = next(t for t in spec["data"] if t["name"] == "theoretical bound")
    assert best["x"] == [64, 128, 192, 256] and all(b >= a - 1e-9 for a, b in zip(bound["y"], best["y"]))
    at.number_input(key="s_step").set_value(1).run()
    at.number_input(key="s_lo").set_value(2).run()
    at.number_input(key="s_hi").set_value(2000).run()
    assert "too many" in at.error[0].value


def test_the_alltoall_lp_downloads_for_small_designs():
    at = open_finder()
    at.number_input(key="f_n").set_value(16).run()
    assert not at.exception
    assert any(b.label == "All-to-all LP (3) as .lp" for b in at.get("download_button"))
    from studio.pages.finder import _mcf_lp

    text = _mcf_lp("circulant(16,[3,4])")
    assert text.count("max") >= 1 and "capacity" in text and "keep" in text
