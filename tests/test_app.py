"""The Streamlit app through AppTest: Home, Compose and Schedule render, react to their widgets, and report bad
input as one readable message."""
import json

import pytest
from streamlit.testing.v1 import AppTest

from .conftest import ROOT, open_boxes, shown_metrics, switch_page
from .helpers import chromium_present

COMPOSE = "compose"            # url_paths of the app's pages
SCHEDULE = "schedule"


def app():
    return AppTest.from_file(str(ROOT / "app.py"), default_timeout=120)


def open_page(page, expr=None, *boxes, interactive=False):
    """``page`` opened on ``expr`` with the lazy expanders ``boxes`` open (conftest.open_boxes)."""
    at = app().run()
    if expr is not None:
        at.query_params["expr"] = expr
    return open_boxes(switch_page(at, page), *boxes, interactive=interactive).run()


def metrics(at):
    return {m.label: m.value for m in shown_metrics(at)}


def test_home_page_explains_and_links():
    at = app().run()
    assert not at.exception
    text = " ".join(m.value for m in at.markdown)
    captions = " ".join(c.value for c in at.caption)
    assert "Compose" in text and "Schedule" in text and "runtime model" in captions and "step model" in captions
    open_boxes(at, "workload_open").run()              # the workload's inputs
    assert at.number_input(key="w_alpha").value == 10.0 and at.number_input(key="w_bandwidth").value == 12.5


def test_compose_default_shows_a_biring():
    at = open_page(COMPOSE)
    assert not at.exception
    m = metrics(at)
    assert (m["Nodes"], m["Diameter"], m["Self-loops"], m["Parallel links"]) == ("8", "4", "0", "0")
    # drawn by the server as SVG under its title in page text; no plotly chart unless asked for
    assert not at.get("plotly_chart")
    assert any(md.value.replace("\\", "") == "**BiRing(2,8): 8 nodes, 16 links**" for md in at.markdown)
    assert len(at.get("image")) == 1
    at = open_page(COMPOSE, None, interactive=True)
    spec = json.loads(at.get("plotly_chart")[0].proto.spec)
    assert spec["layout"]["title"]["text"] == "BiRing(2,8): 8 nodes, 16 links"
    labels = {b.label for b in at.get("download_button")}
    assert {"Topology JSON", "GraphML"} <= labels


def test_expression_changes_the_topology():
    at = open_page(COMPOSE)
    at.text_input(key="expr").set_value("ring(6)").run()
    assert not at.exception
    m = metrics(at)
    assert (m["Nodes"], m["Degree"], m["Diameter"], m["Moore bound"]) == ("6", "1", "5", "5")
    assert at.query_params["expr"] in (["ring(6)"], "ring(6)")


def test_the_url_opens_a_large_design():
    at = open_page(COMPOSE, "line(circulant(16,[3,4]),3)")
    assert not at.exception
    m = metrics(at)
    assert (m["Nodes"], m["Diameter"], m["Moore bound"]) == ("1024", "6", "5")
    assert "too many to draw" in at.info[0].value


@pytest.mark.parametrize("expr, words", [("nonsense(", "column 10"), ("ring(100000)", "above the limit")])
def test_bad_expression_is_one_error_line(expr, words):
    at = open_page(COMPOSE)
    at.text_input(key="expr").set_value(expr).run()
    assert not at.exception
    assert len(at.error) == 1 and words in at.error[0].value and "\n" not in at.error[0].value


def test_catalogue_pick_fills_the_expression():
    at = open_page(COMPOSE)
    at.selectbox(key="catalogue").set_value("circulant(16,[3,4])").run()
    assert not at.exception
    assert at.text_input(key="expr").value == "circulant(16,[3,4])"
    m = metrics(at)
    assert (m["Nodes"], m["Degree"], m["Diameter"]) == ("16", "4", "3")


def test_builder_stacks_expansions():
    at = open_page(COMPOSE)
    assert "b_family" not in [w.key for w in at.selectbox]           # closed, the builder is not made
    at = open_page(COMPOSE, None, "builder_open")
    at.selectbox(key="b_family").set_value("kautz").run()
    at.text_input(key="b_args").set_value("2,1")
    at.selectbox(key="b_exp0").set_value("line")
    at.number_input(key="b_n0").set_value(2)
    at.selectbox(key="b_exp1").set_value("bidir")
    at.button(key="b_build").click().run()
    assert not at.exception
    assert at.text_input(key="expr").value == "bidir(line(kautz(2,1),2))"
    m = metrics(at)
    assert (m["Nodes"], m["Degree"]) == ("24", "4")
    assert at.subheader[0].value == "L²(K(2,1))∪L²(K(2,1))ᵀ"


def test_schedule_page_acceptance_bfb_on_the_1024_node_design():
    at = open_page(SCHEDULE, "line(circulant(16,[3,4]),3)", interactive=True)
    assert not at.exception
    m = metrics(at)
    assert (m["Steps"], m["tb_factor"]) == ("6", "1.0195")
    assert "Verified" in at.success[0].value
    assert len(at.get("plotly_chart")) == 3       # runtime curve, load heatmap, utilisation (too many to draw)
    assert 0 < float(m["Runtime (µs)"]) and int(m["Slices P"]) >= 1


def test_schedule_page_draws_its_figures_as_images_until_asked_for_interactive_charts():
    at = open_page(SCHEDULE, "circulant(8,[2,3])")
    assert not at.exception and not at.get("plotly_chart")
    assert len(at.get("image")) == 3                 # runtime, heatmap, utilisation
    assert not any("Hall set: sources" in d.value for d in at.dataframe)   # the BFB report: made once opened
    assert "x_export" not in [b.key for b in at.button]               # the export panel too
    assert not at.slider and "source" not in [b.key for b in at.selectbox]     # and the step-by-step box
    at = open_page(SCHEDULE, "circulant(8,[2,3])", "report_open", "export_open", "steps_open")
    assert any("Hall set: sources" in d.value for d in at.dataframe) and "x_export" in [b.key for b in at.button]
    assert len(at.get("image")) == 5                 # and the step and tree drawings
    # 1024 nodes: utilisation is a bar strip, which the drawing does not cover, and the load heatmap has more
    # cells (4,096 links x 6 steps) than it draws: plotly shows both, the runtime curve is drawn
    at = open_page(SCHEDULE, "line(circulant(16,[3,4]),3)")
    assert [c.key for c in at.get("plotly_chart")] == ["heatmap_chart", "utilisation_chart"]
    assert len(at.get("image")) == 1


def test_schedule_computes_its_results_before_it_shows_any(monkeypatch):
    """Issue 44: the result part of the page goes out at once, so every figure is made and drawn before the
    first result element (the cache note, then the verified line) is sent."""
    import studio.figures.charts
    import studio.pages.schedule as page

    order = []

    def logged(name, fn):
        def call(*args, **kwargs):
            order.append(name)
            return fn(*args, **kwargs)
        return call

    for name in ("runtime_curve", "utilisation_heatmap", "load_heatmap"):
        monkeypatch.setattr(page, name, logged(name, getattr(page, name)))
    monkeypatch.setattr(studio.figures.charts, "figure_svg", logged("drawn", studio.figures.charts.figure_svg))
    monkeypatch.setattr(page, "cache_note", logged("shown", page.cache_note))
    monkeypatch.setattr(page, "_metrics", logged("metrics", page._metrics))
    at = open_page(SCHEDULE, "circulant(8,[2,3])")
    assert not at.exception and len(at.get("image")) == 3
    assert order == ["load_heatmap", "runtime_curve", "utilisation_heatmap", "drawn", "drawn", "drawn", "shown",
                     "metrics"]


def test_schedule_says_verified_when_the_runtime_model_cannot_time_it(monkeypatch):
    import studio.pages.schedule as page

    def refuses(*_, **__):
        raise ValueError("no time for this\nsecond line")

    monkeypatch.setattr(page, "_curve", refuses)
    at = open_page(SCHEDULE, "circulant(8,[2,3])")
    assert not at.exception and "Verified by the simulator" in at.success[0].value
    assert [e.value for e in at.error] == ["the runtime model cannot time this schedule: no time for this"]
    assert not at.get("image")


def test_compose_makes_its_links_table_once_opened():
    at = open_page(COMPOSE)
    assert not at.dataframe
    at = open_page(COMPOSE, None, "links_open")
    assert len(at.dataframe[0].value) == 16


def _modelled(expr, algo, coll, total_bytes=1e6, alpha=10.0, bandwidth=12.5):
    from solvers.runtime import Execution, bound_time_us, simulate
    from solvers.synthesize import synthesize
    from topologies import parse_topology

    r = synthesize(parse_topology(expr), algo, coll)
    ex = Execution.alpha_beta(alpha, bandwidth)
    return (simulate(r.topology, r.schedule, total_bytes, ex),
            bound_time_us(r.topology, r.schedule.collective, total_bytes, ex))


def test_schedule_page_widgets_and_figures():
    at = open_page(SCHEDULE, "circulant(8,[2,3])", "steps_open", interactive=True)
    assert not at.exception
    m = metrics(at)
    assert (m["Steps"], m["tb_factor"], m["BW-optimal"]) == ("2", "0.8750", "yes")
    assert len(at.get("plotly_chart")) == 5   # runtime, heatmap, utilisation, step, tree
    # the runtime model for the sidebar's workload, its bound, algbw, busbw and P
    run, bound = _modelled("circulant(8,[2,3])", "bfb", "allgather")
    runtime = next(x for x in shown_metrics(at) if x.label == "Runtime (µs)")
    assert float(m["Runtime (µs)"]) == pytest.approx(run.time_us, rel=1e-3)
    assert runtime.delta == f"bound {bound:.4g}"
    assert float(m["algbw (GB/s)"]) == pytest.approx(run.algbw_gbs, rel=1e-3)
    assert float(m["busbw (GB/s)"]) == pytest.approx(run.busbw_gbs, rel=1e-3)
    assert int(m["Slices P"]) == run.slices
    # the papers' step model beside it: steps * alpha + tb * M / B = 2 * 10 + 0.875 * 1e6 / 12.5e3
    assert float(m["Step model (µs)"]) == pytest.approx(90.0)
    curve = json.loads(at.get("plotly_chart")[0].proto.spec)
    model = next(t for t in curve["data"] if t["name"] == "bfb")
    at_m = model["x"].index(1e6)
    assert model["y"][at_m] == pytest.approx(run.time_us)
    assert curve["layout"]["yaxis2"]["title"]["text"] == "algbw (GB/s)"
    util = json.loads(at.get("plotly_chart")[2].proto.spec)["data"][0]["z"]
    cells = [v for row in util for v in row if v is not None]
    assert all(0 <= v <= 1 for v in cells) and max(cells) == pytest.approx(max(run.utilisation().values()))
    open_boxes(at, "workload_open").run()              # the workload's inputs
    at.number_input(key="w_alpha").set_value(1.0).run()
    run, _ = _modelled("circulant(8,[2,3])", "bfb", "allgather", alpha=1.0)
    assert float(metrics(at)["Runtime (µs)"]) == pytest.approx(run.time_us, rel=1e-3)
    assert float(metrics(at)["Step model (µs)"]) == pytest.approx(72.0)
    at.slider(key="step").set_value(2).run()
    step_fig = json.loads(at.get("plotly_chart")[3].proto.spec)
    assert step_fig["layout"]["title"]["text"].startswith("Links busy in step 2")
    assert not at.get("download_button")                               # the closed box's buttons are not made
    labels = {b.label for b in open_boxes(at, "downloads_open").run().get("download_button")}
    assert "Schedule JSON" in labels and any(label.endswith("(.lp)") for label in labels)
    at.selectbox(key="coll").set_value("allreduce").run()
    assert metrics(at)["Steps"] == "4" and metrics(at)["tb_factor"] == "1.7500"
    run, _ = _modelled("circulant(8,[2,3])", "bfb", "allreduce", alpha=1.0)
    assert float(metrics(at)["Runtime (µs)"]) == pytest.approx(run.time_us, rel=1e-3)


def test_schedule_page_model_pipelines_where_it_helps():
    at = open_page(SCHEDULE, "complete(4)")
    at.selectbox(key="algo").set_value("dbt").run()
    at.selectbox(key="coll").set_value("allreduce").run()
    assert not at.exception and not at.error
    run, bound = _modelled("complete(4)", "dbt", "allreduce")
    m = metrics(at)
    assert run.slices > 1 and int(m["Slices P"]) == run.slices
    assert float(m["Runtime (µs)"]) == pytest.approx(run.time_us, rel=1e-3)
    assert run.time_us >= bound and float(m["Runtime (µs)"]) < float(m["Step model (µs)"])


def test_schedule_page_too_large_for_the_model_says_so(monkeypatch):
    import studio.pages.schedule as schedule

    monkeypatch.setattr(schedule, "MAX_MODEL_TRANSFERS", 10)
    at = open_page(SCHEDULE, "circulant(8,[2,3])", "steps_open", interactive=True)
    assert not at.exception and not at.error
    m = metrics(at)
    assert "Runtime (µs)" not in m and float(m["Step model (µs)"]) == pytest.approx(90.0)
    assert any("too many for the runtime model" in i.value for i in at.info)
    assert len(at.get("plotly_chart")) == 3      # load heatmap, step, tree


def test_schedule_page_reports_an_algorithm_that_does_not_fit():
    at = open_page(SCHEDULE, "line(gkautz(2,7))")
    at.selectbox(key="algo").set_value("expansion").run()
    at.selectbox(key="coll").set_value("reduce_scatter").run()
    assert not at.exception
    assert len(at.error) == 1 and "not reverse-symmetric" in at.error[0].value


def _chromium_or_skip():
    import os

    if not chromium_present():
        if os.environ.get("CI"):
            raise AssertionError("kaleido needs Debian's chromium (apt-get install -y chromium)")
        pytest.skip("no chromium for kaleido")


def test_figure_images_render_through_kaleido():
    _chromium_or_skip()
    at = open_page(COMPOSE, "biring(6)")
    at.button(key="render_images").click().run()
    assert not at.exception
    buttons = {b.label: b for b in at.get("download_button")}
    assert {"Figure PNG", "Figure SVG"} <= set(buttons)
    from studio.figures.images import figure_bytes
    from studio.figures.topology import topology_figure
    from topologies import parse_topology

    png = figure_bytes(topology_figure(parse_topology("biring(6)")), "png")
    svg = figure_bytes(topology_figure(parse_topology("biring(6)")), "svg")
    assert png[:8] == b"\x89PNG\r\n\x1a\n" and b"<svg" in svg[:400]


def test_figure_images_that_cannot_render_say_why_in_one_line(monkeypatch):
    """Without a Chromium for kaleido (simulated: kaleido raising as it does then), the render button leaves a
    one-line message and itself, no exception (issue 23: the page crashed in its callback)."""
    import kaleido

    def no_browser(*args, **kwargs):
        raise RuntimeError("Kaleido requires Google Chrome to be installed.\nInstall it with ...")

    monkeypatch.setattr(kaleido, "calc_fig_sync", no_browser)
    at = open_page(COMPOSE, "biring(6)")
    at.button(key="render_images").click().run()
    assert not at.exception
    assert [e.value for e in at.error] == ["static images need Chromium for kaleido (Debian package chromium); "
                                           "Kaleido requires Google Chrome to be installed."]
    assert at.button(key="render_images") and "Figure PNG" not in {b.label for b in at.get("download_button")}


def test_figure_images_never_ask_a_cdn_for_mathjax(monkeypatch):
    """Issue 59, finding 12: kaleido loaded MathJax from cdnjs for every static image (plotly drops its own
    "mathjax = False"); the studio hands kaleido mathjax False itself, and plotly.js comes from the package."""
    import kaleido

    from studio.figures.images import figure_bytes
    from studio.figures.topology import topology_figure
    from topologies import parse_topology

    seen = {}

    def capture(fig, opts=None, kopts=None, **kwargs):
        seen.update(kopts=kopts, opts=opts)
        return b"png"

    monkeypatch.setattr(kaleido, "calc_fig_sync", capture)
    assert figure_bytes(topology_figure(parse_topology("biring(6)")), "png") == b"png"
    assert seen["kopts"] == {"mathjax": False} and seen["opts"]["format"] == "png"


class _Upload:
    def __init__(self, name, data):
        self.name, self._data = name, data

    def getvalue(self):
        return self._data


@pytest.mark.parametrize("name, data, words", [
    ("x.json", b'{"hello": 1}', "x.json: "),
    ("x.json", b"\xff\xfe", "not UTF-8"),
    ("x.graphml", b"<graphml", "x.graphml"),
    ("big.json", b" " * (21 * 1024 * 1024), "larger than 20 MiB"),
])
def test_uploads_that_are_not_topologies_are_named(name, data, words):
    from studio.pages.compose import _from_upload
    from topologies import TopologyError

    with pytest.raises(TopologyError) as info:
        _from_upload(_Upload(name, data))
    assert words in str(info.value) and "\n" not in str(info.value)


def test_upload_over_the_node_limit_is_refused(monkeypatch):
    import studio.pages.compose as compose
    from topologies import TopologyError, parse_topology
    from topologies.files import to_json

    monkeypatch.setattr(compose, "DEFAULT_MAX_NODES", 10)
    with pytest.raises(TopologyError, match="above the limit of 10"):
        compose._from_upload(_Upload("r.json", to_json(parse_topology("ring(12)")).encode()))


def test_schedule_page_builds_a_bundle_for_every_size():
    at = open_page(SCHEDULE, "circulant(8,[2,3])", "export_open")
    assert at.selectbox(key="x_bruntime").value == "msccl-executor"     # a direct-connect design's default
    at.selectbox(key="x_bruntime").set_value("rccl").run()
    assert any("uniform alpha 10 µs, B 12.5 GB/s per node" in c.value for c in at.caption)   # the sidebar's prices
    at.button(key="x_bbuild").click().run()
    assert not at.exception and not at.error
    assert any("each validated against rccl's rules and limits" in s.value for s in at.success)
    assert "Download bundle (zip)" in {b.label for b in at.get("download_button")}
    table = next(d.value for d in at.dataframe if "protocol" in d.value)
    assert set(table["target"]) == {"rccl"} and set(table["call"]) == {"in place", "out of place"}
    assert table["bytes"][0].startswith("0..") and table["bytes"].iloc[-1].endswith("..no limit")
    assert all(int(x.split(" of ")[0]) <= 64 for x in table["threadblocks/rank"])
    assert all(x and set(x.split()) <= {"s", "r", "re", "cpy", "nop"} for x in table["step types"])
    specs = [json.loads(c.proto.spec) for c in at.get("plotly_chart")]
    assert any("protocol and copies per size range" in sp["layout"]["title"]["text"] for sp in specs)
    at.selectbox(key="x_bruntime").set_value("msccl").run()      # another runtime: the old bundle is not shown
    assert "Download bundle (zip)" not in {b.label for b in at.get("download_button")}


def test_a_bundle_too_large_for_the_page_is_one_message(monkeypatch):
    import studio.widgets as widgets

    monkeypatch.setattr(widgets, "MAX_BUNDLE_TRANSFERS", 10)
    at = open_page(SCHEDULE, "circulant(8,[2,3])", "export_open")
    at.button(key="x_bbuild").click().run()
    assert not at.exception
    assert any("too many to bundle on the page (limit 10" in e.value for e in at.error)
    assert "Download bundle (zip)" not in {b.label for b in at.get("download_button")}


def test_schedule_page_exports_an_mscclpp_plan():
    at = open_page(SCHEDULE, "circulant(8,[2,3])", "export_open")
    at.button(key="x_pbuild").click().run()
    assert not at.exception and not at.error
    assert any("MSCCL++ executor's rules and simulated over two launches" in s.value for s in at.success)
    assert "Download MSCCL++ plan" in {b.label for b in at.get("download_button")}


def test_schedule_page_exports_msccl_xml():
    at = open_page(SCHEDULE, "circulant(8,[2,3])", "export_open")
    assert any("Default runtime msccl-executor: a direct-connect design names no GPU vendor" in c.value
               for c in at.caption)
    at.button(key="x_export").click().run()
    assert not at.exception
    assert "Validated against msccl-executor's rules, limits and kernels and simulated" in at.success[-1].value
    at.selectbox(key="x_runtime").set_value("rccl").run()
    at.button(key="x_export").click().run()
    assert not at.exception
    done = at.success[-1].value
    assert "Validated against rccl's rules, limits and kernels and simulated" in done and "rrc" not in done
    assert "Download MSCCL XML" in {b.label for b in at.get("download_button")}
    at.number_input(key="x_budget").set_value(2)
    at.button(key="x_export").click().run()
    assert any("above the budget of 2" in e.value for e in at.error)
