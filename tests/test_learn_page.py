"""The Learn page through AppTest: every step renders, every number it shows is the library's (synthesize, the
runtime model, the finder, summarize, GenModel), the controls update them, and each step's button opens the real
page with the design loaded."""
import json
import re
from fractions import Fraction

import pytest
from streamlit.testing.v1 import AppTest

from solvers.directconnect.finder import bound, find
from solvers.genmodel import CPU_TESTBED, classic_cost, cps_cost, ring_cost
from solvers.directconnect.selection import step_model_time_us
from solvers.runtime import Execution, simulate
from solvers.synthesize import synthesize
from topologies.display import math_name
from topologies.expression import parse_topology
from topologies.properties import diameter, moore_diameter_directed

from .conftest import ROOT, open_boxes, shown_metrics, switch_page

LEARN = "learn"
CHARTS = ["ring", "diameter", "share", "base", "line", "frontier", "frontier sizes", "genmodel", "gantt", "machine", "failures",
          "broadcast tree", "tenants", "n64 terms", "n64 dbt", "n64 forest"]


def open_learn():
    at = AppTest.from_file(str(ROOT / "app.py"), default_timeout=180).run()
    at = switch_page(at, LEARN).run()
    assert not at.exception and not at.error
    return at


def metric(at, label: str) -> str:
    found = [m.value for m in shown_metrics(at) if m.label == label]
    assert len(found) == 1, f"{label!r} among {[m.label for m in shown_metrics(at)]}"
    return found[0]


def chart(at, name: str) -> dict:
    charts = at.get("plotly_chart")
    assert len(charts) == len(CHARTS)
    return json.loads(charts[CHARTS.index(name)].proto.spec)


def trace(spec: dict, name: str) -> dict:
    return next(t for t in spec["data"] if t.get("name") == name)


@pytest.fixture(scope="module")
def learn():
    return open_learn()


def test_every_step_renders_its_figure_and_link(learn):
    at = learn
    assert [h.value for h in at.header] == [
        "1. Rings: bandwidth-optimal, but slow", "2. Low diameter helps small messages",
        "3. What a line-graph expansion does to a schedule", "4. The Pareto frontier: no single best design",
        "5. Beyond alpha-beta: incast and memory", "6. How the studio times a schedule",
        "7. Your machine: import it, measure it, calibrate the model", "8. When links fail",
        "9. Rooted collectives, and several sharing one fabric", "10. Ring, tree and direct-connect at N = 64"]
    assert len(at.get("plotly_chart")) == len(CHARTS)
    keys = {b.key for b in at.button}
    assert {"l_ring_open_ring", "l_ring_open_low", "l_diam_open", "l_line_open_schedule", "l_line_open_compose",
            "l_front_open_finder", "l_front_open_schedule", "l_gm_open", "l_gantt_open", "l_machine_open", "l_fail_open",
            "l_root_open"} <= keys


def _ring_numbers(n: int, d: int):
    return (synthesize(parse_topology(f"uniring({d},{n})"), "ring", "allreduce").cost,
            synthesize(parse_topology(f"gkautz({d},{n})"), "bfb", "allreduce").cost)


def _modelled(expr: str, algo: str, coll: str, m: float, alpha=10.0, bandwidth=12.5, **kw):
    r = synthesize(parse_topology(expr), algo, coll)
    return simulate(r.topology, r.schedule, m, Execution.alpha_beta(alpha, bandwidth, **kw), record=True)


def _check_crossover(text: str, n: int, d: int, alpha: float) -> None:
    """The crossover the page names is where the runtime model's two curves meet: Π faster below, the ring
    above."""
    cross = float(re.search(r"Below about \*\*([0-9.e+]+) bytes\*\*", text).group(1))
    t = {m: (_modelled(f"uniring({d},{n})", "ring", "allreduce", m, alpha).time_us,
             _modelled(f"gkautz({d},{n})", "bfb", "allreduce", m, alpha).time_us)
         for m in (cross / 2, cross, cross * 2)}
    ring, low = t[cross]
    assert ring == pytest.approx(low, rel=0.05)
    assert t[cross / 2][1] < t[cross / 2][0] and t[cross * 2][0] < t[cross * 2][1]


def test_ring_step_numbers_come_from_synthesize(learn):
    at = learn
    ring, low = _ring_numbers(32, 4)
    assert int(metric(at, "steps (ring)")) == ring.steps == 2 * (32 - 1)
    assert float(metric(at, "tb_factor (ring)")) == pytest.approx(float(ring.tb_factor), abs=1e-4)
    assert ring.tb_factor == Fraction(2 * 31, 32)
    assert int(metric(at, "steps (Π)")) == low.steps
    assert float(metric(at, "tb_factor (Π)")) == pytest.approx(float(low.tb_factor), abs=1e-4)
    assert int(metric(at, "steps (bound)")) == 2 * bound(32, 4)[0]
    # the curves are the runtime model's times with the sidebar's alpha = 10 µs and B = 12.5 GB/s
    spec = chart(at, "ring")
    ring_curve = trace(spec, "ring, UniRing(4,32)")
    low_curve = trace(spec, "BFB, Π₄,₃₂")                      # names as math (topologies.display)
    for m, y in list(zip(ring_curve["x"], ring_curve["y"]))[::8]:
        assert y == pytest.approx(_modelled("uniring(4,32)", "ring", "allreduce", m).time_us)
    for m, y in list(zip(low_curve["x"], low_curve["y"]))[::8]:
        assert y == pytest.approx(_modelled("gkautz(4,32)", "bfb", "allreduce", m).time_us)
    assert low_curve["y"][0] < ring_curve["y"][0] and low_curve["y"][-1] > ring_curve["y"][-1]   # they cross
    bound_curve = trace(spec, "lower bound")      # 2 × Moore diameter × alpha + 2(N-1)/N × M/B, below both
    for m, b, r, lo in zip(bound_curve["x"], bound_curve["y"], ring_curve["y"], low_curve["y"]):
        assert b == pytest.approx(2 * bound(32, 4)[0] * 10 + 2 * 31 / 32 * m / 12.5e3)
        assert b <= min(r, lo) * (1 + 1e-9)
    _check_crossover(at.info[0].value, 32, 4, 10.0)


def test_ring_controls_and_the_sidebar_update_the_numbers():
    at = open_learn()
    at.select_slider(key="l_ring_n").set_value(16).run()
    at.radio(key="l_ring_d").set_value(2).run()
    assert not at.exception
    ring, low = _ring_numbers(16, 2)
    assert int(metric(at, "steps (ring)")) == ring.steps == 30
    assert int(metric(at, "steps (Π)")) == low.steps
    assert int(metric(at, "steps (bound)")) == 2 * moore_diameter_directed(16, 2)
    before = at.info[0].value
    open_boxes(at, "workload_open").run()              # the workload's inputs
    at.number_input(key="w_alpha").set_value(1.0).run()           # cheaper steps: the crossover moves down
    assert at.info[0].value != before
    _check_crossover(at.info[0].value, 16, 2, 1.0)
    old = float(re.search(r"\*\*([0-9.e+]+) bytes", before).group(1))
    assert float(re.search(r"\*\*([0-9.e+]+) bytes", at.info[0].value).group(1)) < old


def test_diameter_step_uses_the_library_diameters(learn):
    at = learn
    table = at.dataframe[0].value
    for expr, d in zip(table["expression"], table["diameter D"]):
        assert d == diameter(parse_topology(expr))
    assert set(table["Moore bound"]) == {moore_diameter_directed(64, 4)}
    assert table["diameter D"].iloc[0] == 63 and table["diameter D"].iloc[-1] == 3   # UniRing, then Π at the bound
    bars = chart(at, "diameter")["data"][0]
    assert list(bars["y"]) == list(table["diameter D"])
    # at the sidebar's M = 1e6 the latency share of Π_{4,64} is D·alpha / (D·alpha + (N-1)/N·M/B)
    share = trace(chart(at, "share"), "Π₄,₆₄")
    m, y = share["x"][0], share["y"][0]
    assert y == pytest.approx(30 / (30 + 63 / 64 * m / 12.5e3))


def test_diameter_controls():
    at = open_learn()
    at.select_slider(key="l_diam_n").set_value(128).run()
    at.radio(key="l_diam_d").set_value(2).run()
    assert not at.exception
    table = at.dataframe[0].value
    assert set(table["Moore bound"]) == {moore_diameter_directed(128, 2)}
    for expr, d in zip(table["expression"], table["diameter D"]):
        assert d == diameter(parse_topology(expr)) and parse_topology(expr).n == 128


def test_line_graph_step_follows_the_theorem(learn):
    at = learn
    base = synthesize(parse_topology("bipartite(2)"), "expansion", "allgather").cost
    line = synthesize(parse_topology("line(bipartite(2),1)"), "expansion", "allgather").cost
    assert int(metric(at, "steps (G)")) == base.steps == 2
    assert int(metric(at, "steps (line graph)")) == line.steps == base.steps + 1
    assert float(metric(at, "tb_factor (line graph)")) == pytest.approx(float(line.tb_factor), abs=1e-4)
    assert line.tb_factor == base.tb_factor + Fraction(1, 4) == 1       # Thm 10: tau + 1/N (paper Fig. 2)
    assert [json.loads(c.proto.spec)["layout"]["title"]["text"] for c in at.get("plotly_chart")[3:5]] == [
        "G = K₂,₂: 4 nodes", "L(K₂,₂): 8 nodes"]


def test_line_graph_twice_matches_corollary_7_1():
    at = open_learn()
    at.selectbox(key="l_line_base").set_value("complete(4)").run()
    at.radio(key="l_line_n").set_value(2).run()
    assert not at.exception
    base = synthesize(parse_topology("complete(4)"), "expansion", "allgather").cost
    line = synthesize(parse_topology("line(complete(4),2)"), "expansion", "allgather").cost
    assert int(metric(at, "steps (line graph)")) == line.steps == base.steps + 2
    n, d = 4, 3
    assert line.tb_factor == base.tb_factor + Fraction(d, d - 1) * (Fraction(1, n) - Fraction(1, d ** 2 * n))
    assert float(metric(at, "tb_factor (line graph)")) == pytest.approx(float(line.tb_factor), abs=1e-4)
    assert "36 nodes" in json.loads(at.get("plotly_chart")[4].proto.spec)["layout"]["title"]["text"]


def _winner(n, d, size, alpha=10.0, bandwidth=12.5):
    front = find(n, d)
    times = [step_model_time_us(c.steps, c.tb, alpha, size, bandwidth, "allreduce") for c in front]
    return front, front[times.index(min(times))]


def test_frontier_step_and_the_size_slider(learn):
    at = learn
    front, best = _winner(64, 4, 1e6)
    assert metric(at, "winner at this M") == math_name(best.name)          # names as math (topologies.display)
    spec = chart(at, "frontier")
    assert trace(spec, "frontier")["x"] == [c.steps for c in front]
    assert trace(spec, "theoretical bound")["x"] == [bound(64, 4)[0]]
    assert trace(spec, "recommended")["x"] == [best.steps]
    at.select_slider(key="l_front_m").set_value(1e10).run()
    assert metric(at, "winner at this M") == math_name(front[-1].name) == math_name(_winner(64, 4, 1e10)[1].name)
    at.select_slider(key="l_front_m").set_value(1e3).run()
    assert metric(at, "winner at this M") == math_name(front[0].name) == math_name(_winner(64, 4, 1e3)[1].name)
    at.select_slider(key="l_front_n").set_value(1024).run()
    front, best = _winner(1024, 4, 1e3)
    assert not at.exception and metric(at, "winner at this M") == math_name(best.name)
    assert trace(chart(at, "frontier"), "frontier")["x"] == [5, 6, 8, 11, 20]      # Table 4


def test_genmodel_step_numbers(learn):
    at = learn
    n, size = 16, 1e9
    assert float(metric(at, "CPS, GenModel (s)")) == pytest.approx(cps_cost(n, size, CPU_TESTBED).total, rel=1e-3)
    assert float(metric(at, "CPS, classic model (s)")) == pytest.approx(
        classic_cost("cps", n, size, CPU_TESTBED).total, rel=1e-3)
    assert float(metric(at, "Ring, GenModel (s)")) == pytest.approx(ring_cost(n, size, CPU_TESTBED).total, rel=1e-3)
    spec = chart(at, "genmodel")
    assert any(s.get("x0") == 9 for s in spec["layout"].get("shapes", []))              # the knee at w_t = 9
    first = next(m for m in range(2, 33)
                 if ring_cost(m, size, CPU_TESTBED).total < cps_cost(m, size, CPU_TESTBED).total)
    assert first > 9 and any(f"from N = {first} servers" in c.value for c in at.caption)


def _bars(at) -> dict:
    (bars,) = chart(at, "gantt")["data"]
    return bars


def test_runtime_model_step_draws_every_send(learn):
    at = learn
    run = _modelled("ring(4)", "ring", "allreduce", 1e6, max_slices=16)      # the default example
    assert float(metric(at, "runtime model (µs)")) == pytest.approx(run.time_us, rel=1e-3)
    assert int(metric(at, "P, slices")) == run.slices == 1
    assert float(metric(at, "step model (µs)")) == pytest.approx(6 * 10 + 1.5 * 1e6 / 12.5e3)   # 2(N-1) steps
    assert metric(at, "busiest link") == "100%"
    bars = _bars(at)
    assert len(bars["x"]) == len(run.timeline) == 24                  # 4 links × 6 steps, one slice
    assert sorted(bars["base"]) == pytest.approx(sorted(r["start_us"] for r in run.timeline))
    assert max(b + x for b, x in zip(bars["base"], bars["x"])) == pytest.approx(run.time_us)
    assert len(set(bars["y"])) == 4
    text = " ".join(m.value for m in at.markdown)
    for words in ("alpha + bytes / bandwidth", "store and forward", "P slices", "LL128", "congestion control",
                  "GPU compute"):
        assert words in text


def test_runtime_model_step_controls():
    at = open_learn()
    at.radio(key="l_gantt_p").set_value(4).run()
    assert not at.exception and not at.error
    run = _modelled("ring(4)", "ring", "allreduce", 1e6, slices=4)
    assert int(metric(at, "P, slices")) == 4
    assert float(metric(at, "runtime model (µs)")) == pytest.approx(run.time_us, rel=1e-3)
    assert len(_bars(at)["x"]) == 4 * 24 and sorted(set(_bars(at)["marker"]["color"])) == [0, 1, 2, 3]
    at.radio(key="l_gantt_color").set_value("step").run()
    assert sorted(set(_bars(at)["marker"]["color"])) == sorted({r["step"] for r in run.timeline})
    at.selectbox(key="l_gantt_pick").set_value("complete(4)|dbt|allreduce").run()
    at.radio(key="l_gantt_p").set_value("best").run()
    assert not at.exception and not at.error
    run = _modelled("complete(4)", "dbt", "allreduce", 1e6, max_slices=16)
    assert run.slices > 1 and int(metric(at, "P, slices")) == run.slices       # the model pipelines this one
    assert len(_bars(at)["x"]) == run.messages * run.slices
    at.button(key="l_gantt_open").click().run()
    assert not at.exception
    assert at.session_state["design_expr"] == "complete(4)" and at.session_state["algo"] == "dbt"
    assert any("Verified by the simulator" in s.value for s in at.success)


def test_buttons_open_the_real_pages():
    at = open_learn()
    at.button(key="l_line_open_schedule").click().run()
    assert not at.exception
    assert at.session_state["design_expr"] == "line(bipartite(2),1)"
    assert at.session_state["algo"] == "expansion" and at.session_state["coll"] == "allgather"
    assert any("Verified by the simulator" in s.value for s in at.success)

    at = open_learn()
    at.button(key="l_front_open_finder").click().run()
    assert not at.exception
    assert at.session_state["f_n"] == 64 and at.session_state["f_d"] == 4
    assert list(at.dataframe[0].value["steps"]) == [c.steps for c in find(64, 4)]

    at = open_learn()
    at.button(key="l_gm_open").click().run()
    assert not at.exception and at.session_state["gm_n"] == 16
    assert at.title[0].value == "GenModel and GenTree"

    at = open_learn()
    at.button(key="l_diam_open").click().run()
    assert not at.exception and at.session_state["expr"] == "gkautz(4,64)"
    assert at.title[0].value == "Compose a topology"


PLANNED_MAIN_PX = 800          # the narrowest main area the pages are planned for (wide layout, 1280-pixel screen)


def _charts_with_widths(node, fraction=1.0, out=None):
    """(plotly spec, share of the main area's width) for every chart under ``node``, columns multiplying in."""
    out = [] if out is None else out
    if getattr(node, "type", None) == "plotly_chart":
        out.append((json.loads(node.proto.spec), fraction))
        return out
    if getattr(node, "type", None) == "column":
        fraction *= node.weight
    for k in sorted(getattr(node, "children", {}) or {}):
        _charts_with_widths(node.children[k], fraction, out)
    return out


def test_every_title_fits_its_chart(learn):
    """Issue 40: a half-width chart's title was cut ("... perfect schedule (step r"). Every title line fits the
    width its chart gets (half-width charts included) at half an em a character, and sits in a top margin tall
    enough to hold it."""
    charts = _charts_with_widths(learn.main)
    assert len(charts) == len(CHARTS) and any(f < 0.6 for _, f in charts)
    for spec, fraction in charts:
        title = spec["layout"]["title"]
        size = title.get("font", {}).get("size", 17)
        room = PLANNED_MAIN_PX * fraction - 20
        lines = title["text"].split("<br>")
        for line in lines:
            assert len(line) * 0.5 * size <= room, f"{line!r} is wider than {room:.0f} px"
        assert spec["layout"]["margin"]["t"] >= len(lines) * 1.2 * size


def test_step_7_imports_the_sample_machine_and_calibrates_the_sample_log(learn):
    """The sample NCCL file: 8 GPUs at 240 GB/s each; ForestColl on it is dgx_a100(boxes=1)'s x 240/300; the
    sample log's fit is the prices it was written from (alpha 6 us, B 40 GB/s) within 25 % and 10 %."""
    at = learn
    assert metric(at, "GPUs imported") == "8" and metric(at, "NVLink per GPU (GB/s)") == "240"
    ours, paper = float(metric(at, "ForestColl algbw (GB/s)")), float(metric(at, "on dgx_a100(boxes=1)"))
    assert ours == pytest.approx(paper * 0.8, rel=1e-3)
    spec = chart(at, "machine")
    measured = trace(spec, "measured (nccl-tests)")           # drawn last, above the model (issue 59)
    model = next(t for t in spec["data"] if t["name"].startswith("model, ring at alpha"))
    assert len(measured["x"]) == 28 and model["name"].startswith("model, ring at alpha")
    assert all(abs(p / m - 1) < 0.06 for p, m in zip(model["y"], measured["y"]))


def test_step_8_cuts_every_cable_and_a_degree_d_design_survives_d_minus_1(learn):
    """Each design's link connectivity is its degree (a bidirectional ring counts 2), every single cable cut leaves
    it connected, the worst cut lowers ForestColl's optimum; a ring with one cable cut has no Hamiltonian ring
    left and runs the long way round."""
    at = learn
    table = next(d.value for d in at.dataframe if "link connectivity" in d.value.columns)
    assert list(table["link connectivity"]) == [2, 4, 2, 3]
    assert all(a == b for a, _, b in (c.partition(" of ") for c in table["single cuts that stay connected"]))
    spec = chart(at, "failures")
    healthy, worst = spec["data"][0]["y"], spec["data"][1]["y"]
    assert all(0 < w < h for h, w in zip(healthy, worst))
    assert any("no Hamiltonian ring is left" in m.value and "fail(biring(8),links=[0])" in m.value
               for m in at.markdown)


def test_rooted_step_broadcast_takes_the_eccentricity_and_tenants_share_the_mesh(learn):
    """Step 9: the table's TACOS steps equal each root's eccentricity (6x6 mesh: 10 from a corner, 8 from GPU 2,
    6 from GPU 14), and on the shared mesh the joint greedy's makespan is the least of the three runs."""
    from studio.views.learn_practice import rooted_rows, shared_mesh
    from solvers.runtime import Workload

    rows = rooted_rows(Workload().key)
    assert [(r["eccentricity"], r["TACOS steps"]) for r in rows] == [(10, 10), (8, 8), (6, 6)]
    assert all(r["TACOS one chunk (µs)"] >= r["bound (µs)"] for r in rows)
    runs = shared_mesh(Workload().key)
    assert runs[0]["makespan"] == min(r["makespan"] for r in runs)
    assert any(finish > alone for _, finish, alone in runs[1]["rows"])
