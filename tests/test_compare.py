"""Compare everything (``solvers.compare``): the rows of every synthesizer beside the bound, the budget, the
curves and their winners; the CLI command ``compare`` against the library; the Compare page against the CLI."""
import json
import math
from fractions import Fraction

import pandas as pd
import pytest
from streamlit.testing.v1 import AppTest

from solvers import compare as cmp
from solvers.compare import BOUND, OK, SKIPPED_BUDGET, Curve, compare, curves, winners
from solvers.core.errors import ScheduleError
from solvers.registry import ALGORITHMS
from studio.cli import main
from topologies import load
from topologies.display import math_name

from .conftest import ROOT, switch_page
from .helpers import chromium_present

COMPARE_PAGE = "compare"
# what a run's numbers are; synthesis seconds and TE-CCL's solver report vary from run to run
STABLE = ("topology", "name", "N", "collective", "algo", "status", "steps", "tb_factor", "tb_factor_exact",
          "steps_lower_bound", "tb_lower_bound", "tb_lower_bound_exact", "time_us", "algbw_GBps", "verified",
          "exportable", "transfers")


def by_algo(result, topology=None, collective="allreduce"):
    return {r["algo"]: r for r in result.rows
            if r["collective"] == collective and (topology is None or r["topology"] == topology)}


def stable(rows):
    return [{k: r[k] for k in STABLE} for r in rows]


@pytest.fixture(scope="module")
def ring8():
    return compare(["ring(8)"], ["allreduce"], 1e6, alpha_us=10.0, bandwidth_gbs=12.5)


@pytest.fixture(scope="module")
def cli_links():
    """``compare ring(8) gkautz(2,8) --json``: times on the topologies' own links."""
    return _cli("ring(8)", "gkautz(2,8)", "--prices", "links", "--json")


def _cli(*args):
    import contextlib
    import io

    out, err = io.StringIO(), io.StringIO()
    with contextlib.redirect_stdout(out), contextlib.redirect_stderr(err):
        rc = main(["compare", *args])
    assert rc == 0, err.getvalue()
    return json.loads(out.getvalue())


def test_ring8_allreduce_rows(ring8):
    rows = by_algo(ring8)
    assert list(rows) == [BOUND, *cmp.algorithm_order()]
    for algo in ("ring", "bfb", "sptree", "forestcoll", "tacos", "teccl"):
        assert rows[algo]["status"] == OK and rows[algo]["verified"], rows[algo]
        assert (rows[algo]["steps"], rows[algo]["tb_factor_exact"]) == (14, "7/4")
    assert rows["rhd"]["status"].startswith("not applicable: ") and "XOR" in rows["rhd"]["status"]
    bound = rows[BOUND]
    assert (bound["status"], bound["steps"], bound["tb_factor_exact"]) == ("bound", 14, "7/4")
    # alpha-beta: 14 * 10 us + 7/4 * 1e6 B / 12.5 GB/s = 140 + 140 us; M / time = 1e6 B / 280 us
    assert rows["ring"]["time_us"] == pytest.approx(280.0)
    # the bound row is the largest term of solvers.runtime.bounds (one link out of each GPU, B = 12.5e3 B/us):
    # latency (N-1) alpha, the cut M/lambda (lambda = one link), a GPU's ingress (N-1)/N M/B and the volume
    # 2 (N-1) M over N B, each bandwidth term with one alpha; the volume's 10 + 140 us sets it, below the ring's
    # 280 (the papers' 2 (N-1) alpha + 2 (N-1)/N M/B holds in the step model only)
    n, alpha, m, big_b = 8, 10.0, 1e6, 12.5e3
    terms = {"latency": (n - 1) * alpha, "cut": alpha + m / big_b, "ingress": alpha + (n - 1) / n * m / big_b,
             "volume": alpha + 2 * (n - 1) * m / (n * big_b)}
    assert bound["time_us"] == pytest.approx(max(terms.values())) == pytest.approx(terms["volume"])
    assert "allreduce volume bound" in bound["detail"]
    assert rows["ring"]["algbw_GBps"] == pytest.approx(1e6 / 280.0 / 1e3)
    assert rows["ring"]["busbw_GBps"] == pytest.approx(rows["ring"]["algbw_GBps"] * 2 * 7 / 8)
    assert rows["ring"]["step_model_us"] == pytest.approx(280.0) and rows["ring"]["slices"] == 1
    # ForestColl's trees at 1 MB: alpha 10 us per send, pipelining does not pay; the ring's time
    assert rows["forestcoll"]["time_us"] == pytest.approx(280.0)
    # at 10 GB they reach the flow model's rate, N / factor = 8 / 14 of B = 12.5 GB/s per node, within 0.1 %
    row = next(i for i, r in enumerate(ring8.rows) if r["algo"] == "forestcoll")
    t, _ = ring8.models[row].times([1e10])
    assert 1e10 / t[0] / 1e3 == pytest.approx(8 / 14 * 12.5, rel=1e-3) and 1e10 / t[0] / 1e3 < 8 / 14 * 12.5
    assert rows["ring"]["exportable"] is True and rows["ring"]["transfers"] == 112
    assert all(isinstance(r["synthesis_s"], float) for r in rows.values() if r["status"] == OK)


@pytest.mark.parametrize("exprs", [["ring(8)", "gkautz(2,8)", "dgx1()"]])
def test_every_ok_row_is_verified_and_above_its_bound(exprs):
    result = compare(exprs, ["allgather", "allreduce"], 1e6, algos=[a for a in cmp.ORDER if a != "teccl"])
    assert len(result.rows) == len(exprs) * 2 * len(cmp.ORDER)      # the algorithms but teccl, and the bound
    for r in result.rows:
        assert not r["status"].startswith(("error", "failed")), r
        if r["status"] == OK:
            assert r["verified"] is True
            assert Fraction(r["tb_factor_exact"]) >= Fraction(r["tb_lower_bound_exact"])
            assert r["steps"] >= r["steps_lower_bound"] and r["time_us"] > 0
        elif r["algo"] != BOUND:
            assert r["status"].startswith("not applicable: ") and len(r["status"]) > len("not applicable: ")
    dgx = by_algo(result, load("dgx1()").expr)
    assert dgx["shifted_ring"]["status"] == OK and dgx["rhd"]["status"] == OK


def test_budget_zero_skips_everything_but_the_bounds():
    result = compare(["ring(8)", "gkautz(2,8)"], "allreduce,allgather".split(","), budget_s=0)
    assert {r["status"] for r in result.rows if r["algo"] != BOUND} == {SKIPPED_BUDGET}
    assert sum(r["algo"] == BOUND for r in result.rows) == 4
    assert result.winners() == [] and all(c.bound for c in result.curves())


def test_teccl_is_left_to_small_fabrics_and_errors_are_rows(monkeypatch):
    result = compare(["ring(32)"], "allgather", algos=["teccl", "ring"])
    rows = by_algo(result, collective="allgather")
    assert rows["teccl"]["status"].startswith("skipped: TE-CCL") and rows["ring"]["status"] == OK
    real = cmp.synthesize

    def broken(topo, algo, *args, **kwargs):
        if algo == "bfb":
            raise ScheduleError("shard 3 never reaches node 5")
        if algo == "sptree":
            raise RuntimeError("boom")
        return real(topo, algo, *args, **kwargs)
    monkeypatch.setattr(cmp, "synthesize", broken)
    rows = by_algo(compare(["ring(8)"], "allgather", algos=["bfb", "sptree", "ring"]), collective="allgather")
    assert rows["bfb"]["status"] == "failed verification" and "never reaches" in rows["bfb"]["detail"]
    assert rows["bfb"]["verified"] is False
    assert rows["sptree"]["status"] == "error: RuntimeError: boom" and rows["ring"]["status"] == OK


def test_bad_input_is_a_value_error():
    for kwargs, text in [({"algos": ["nope"]}, "unknown algorithm"), ({"alpha_us": 1.0}, "together"),
                         ({"collectives": ["custom"]}, "custom"), ({"total_bytes": 0}, "positive"),
                         ({"budget_s": -1}, "budget")]:
        with pytest.raises(ValueError, match=text):
            compare(["ring(4)"], **{"collectives": "allreduce", **kwargs})


def test_curves_and_winners(ring8):
    sizes = [1e3, 1e6, 1e9]
    cs = curves(ring8, sizes)
    assert [c.algo for c in cs if c.bound] == [BOUND] and all(c.sizes == tuple(sizes) for c in cs)
    ring = next(c for c in cs if c.algo == "ring")
    # P = 1 is best for a ring (pipelining only adds alpha): 14 alpha + 7/4 M/B, the step model
    assert ring.times_us == pytest.approx((140 + 0.14, 280.0, 140 + 140e3)) and ring.slices == (1, 1, 1)
    # a latency curve and a bandwidth curve: the winner changes where they cross (log-log interpolation)
    grid = tuple(10.0 ** (3 + k / 8) for k in range(33))
    fast = Curve("a", "x", "x", "allreduce", "a", grid, tuple(10.0 + 2e-3 * m for m in grid))
    lean = Curve("b", "y", "y", "allreduce", "b", grid, tuple(100.0 + 1e-3 * m for m in grid))
    tied = Curve("c", "z", "z", "allreduce", "c", grid, lean.times_us)
    won = winners([fast, lean, tied])
    assert [(w.from_bytes, w.to_bytes, w.algo) for w in won] == [(1e3, pytest.approx(9e4, rel=0.01), "a"),
                                                                   (pytest.approx(9e4, rel=0.01), 1e7, "b")]
    assert won[1].ties == ("c",) and won[0].ties == ()
    # every range's winner is the fastest row at its midpoint
    two = compare(["ring(8)", "gkautz(2,8)"], "allreduce", alpha_us=10.0, bandwidth_gbs=12.5,
                  algos=["ring", "bfb", "sptree"])
    allc = [c for c in two.curves(cmp.PLOT_SIZES) if not c.bound]
    ranges = two.winners()
    assert ranges[0].from_bytes == 1e3 and ranges[-1].to_bytes == pytest.approx(1e10)
    assert all(a.to_bytes == b.from_bytes for a, b in zip(ranges, ranges[1:]))
    for w in ranges:
        mid = math.sqrt(w.from_bytes * w.to_bytes)
        best = min(c.at(mid) for c in allc)
        assert next(c for c in allc if c.algo == w.algo and c.topology == w.topology).at(mid) == pytest.approx(best)
    # Π_{2,8}'s 6 steps win small messages, the ring's lighter tb (7/4 against 7/2) large ones; they cross where
    # 60 alpha + 3.5 M/B = 140 alpha + 1.75 M/B
    assert [(w.algo, w.topology) for w in ranges] == [("sptree", "gkautz(2,8)"), ("ring", "ring(8)")]
    assert ranges[0].to_bytes == pytest.approx(80 * 12.5e3 / 1.75, rel=0.01)


def test_frame_and_dict(ring8):
    frame = ring8.to_frame()
    assert list(frame.columns) == list(cmp.COLUMNS) and len(frame) == 1 + len(ALGORITHMS)
    assert str(frame["steps"].dtype) == "Int64" and pd.isna(frame.loc[frame["algo"] == "rhd", "steps"]).all()
    data = json.loads(json.dumps(ring8.as_dict()))
    assert data["rows"] == json.loads(json.dumps(ring8.rows)) and data["winners"][0]["algo"] == "ring"
    assert data["workload"] == {"bytes": 1e6, "prices": "uniform", "label": "uniform alpha 10 µs, B 12.5 GB/s per node",
                                "alpha_us": 10.0, "bandwidth_gbs": 12.5, "time_model": "alpha-beta"}


def test_runtime_figure(ring8):
    from studio.figures.compare import runtime_figure

    fig = runtime_figure(ring8.curves(), ring8.winners())
    names = [t.name for t in fig.data]
    assert names[0] == "lower bound · UniRing(1,8)" and "teccl · UniRing(1,8)" in names
    assert len(names) == 1 + sum(r["status"] == OK for r in ring8.rows)
    assert len(fig.layout.shapes) == len(ring8.winners()) == 1 and fig.layout.xaxis.type == "log"
    assert "ring" in fig.layout.annotations[0].text and "tied" in fig.layout.annotations[0].text
    assert len(fig.data[1].x) == len(cmp.SIZES) and fig.data[1].y[0] > 0
    algbw = runtime_figure(ring8.curves(), ring8.winners(), metric="algbw")
    assert algbw.layout.yaxis.title.text == "algbw (GB/s)"
    for t_fig, a_fig in zip(fig.data, algbw.data):          # algbw = M / time at every sampled size
        assert a_fig.y == pytest.approx(tuple(m / (t * 1e3) for m, t in zip(t_fig.x, t_fig.y)))
    with pytest.raises(ValueError, match="metric"):
        runtime_figure(ring8.curves(), metric="busbw")


def test_cli_json_equals_the_library(cli_links):
    lib = compare([load("ring(8)"), load("gkautz(2,8)")], ["allreduce"], 1e6)
    assert stable(cli_links["rows"]) == stable(json.loads(json.dumps(lib.rows)))
    assert cli_links["winners"] == json.loads(json.dumps(lib.as_dict()["winners"]))
    assert cli_links["workload"]["time_model"] == "links"
    rows = {(r["topology"], r["algo"]): r for r in cli_links["rows"]}
    # on ring(8)'s unit links (1 GB/s, alpha 0): 7/4 of 1e6 bytes at 1e3 bytes per microsecond
    assert rows[("ring(8)", "ring")]["time_us"] == pytest.approx(1750.0)
    assert rows[("gkautz(2,8)", BOUND)]["steps"] == 6


def test_cli_collectives_table_and_errors(capsys):
    assert main(["compare", "ring(4)", "biring(4)", "--collective", "allgather,reduce_scatter", "--collective",
                 "allreduce", "--algos", "ring,bfb", "--alpha", "5", "--bandwidth", "10"]) == 0
    out = capsys.readouterr().out
    assert "reduce_scatter" in out and "lower bound" in out and "fastest in the runtime model (uniform alpha 5 µs, B 10 GB/s" in out
    assert "ok (verified)" in out and "the runtime model" in out and "busbw" in out
    for args, text in [(["ring(8"], "error: "), (["ring(8)", "--algos", "ring,nope"], "unknown algorithm 'nope'"),
                       (["ring(8)", "--collective", "bogus"], "unknown collective"),
                       (["ring(8)", "--prices", "links", "--alpha", "3"], "set uniform prices"), (["ring(99999)"], "above the limit")]:
        assert main(["compare", *args]) == 2
        err = capsys.readouterr().err
        assert text in err and err.count("\n") == 1, err


def test_page_table_agrees_with_the_cli():
    at = AppTest.from_file(str(ROOT / "app.py"), default_timeout=300).run()
    at = switch_page(at, COMPARE_PAGE).run()
    assert not at.exception and "Press Run" in at.info[0].value
    at.text_area(key="cmp_exprs").set_value("ring(8)\ngkautz(2,8)\nring(2000)").run()
    assert len(at.error) == 1 and "ring(2000)" in at.error[0].value and "1024" in at.error[0].value
    at.multiselect(key="cmp_colls").set_value(["allreduce", "allgather"]).run()
    at.button(key="cmp_run").click().run()
    at.toggle(key="cmp_show_na").set_value(True).run()      # rows that do not apply are folded away by default
    assert not at.exception and f"verified schedules from {2 * 2 * len(ALGORITHMS)} runs" in at.success[0].value
    page = next(d.value for d in at.dataframe if "status" in d.value.columns)
    work = {k: at.session_state[k] for k in ("w_alpha", "w_bytes", "w_bandwidth")}
    cli = _cli("ring(8)", "gkautz(2,8)", "--collective", "allreduce,allgather", "--alpha", str(work["w_alpha"]),
               "--bytes", str(work["w_bytes"]), "--bandwidth", str(work["w_bandwidth"]), "--json")
    from studio.pages.compare import COLUMN_LABELS

    page = page.rename(columns={v: k for k, v in COLUMN_LABELS.items()})
    # the page splits the status into its outcome and its reason ("why")
    page["status"] = [s + (f": {w}" if w else "") for s, w in zip(page["status"], page["why"])]
    assert len(page) == len(cli["rows"]) == 2 * 2 * (1 + len(ALGORITHMS))
    for got, want in zip(page.to_dict("records"), cli["rows"]):
        for key in STABLE:
            g, w = got[key], want[key]
            if key == "name":              # the page shows the CLI's name as math (topologies.display)
                w = math_name(w)
            if w is None:                  # shown empty
                assert g is None or g == "" or pd.isna(g), (key, got, want)
            elif isinstance(w, bool):
                assert g in (w, str(w).lower()), (key, got, want)
            elif isinstance(w, float):     # a column with empty cells shows text, four decimals
                assert float(g) == pytest.approx(w, rel=1e-4, abs=5e-5), (key, got, want)
            elif isinstance(w, int):
                assert int(g) == w, (key, got, want)
            else:
                assert g == w, (key, got, want)
    fastest = next(d.value for d in at.dataframe if "ties (as fast)" in d.value.columns)
    first = [w for w in cli["winners"] if w["collective"] == "allreduce"]
    assert list(fastest["algo"]) == [w["algo"] for w in first]
    from studio.pages.compare import bytes_text

    assert list(fastest["to"]) == [bytes_text(w["to_bytes"]) for w in first]
    spec = json.loads(at.get("plotly_chart")[0].proto.spec)
    names = [t["name"] for t in spec["data"]]
    assert "lower bound · Π₂,₈" in names and "fastest · Π₂,₈" in names      # by default one per design, names as math
    at.radio(key="cmp_plot_view").set_value("every").run()
    names = [t["name"] for t in json.loads(at.get("plotly_chart")[0].proto.spec)["data"]]
    assert "bfb · Π₂,₈" in names
    assert spec["layout"]["xaxis"]["type"] == "log" and spec["layout"]["yaxis"]["type"] == "log"
    at.selectbox(key="cmp_plot_coll").set_value("allgather").run()
    assert json.loads(at.get("plotly_chart")[0].proto.spec)["layout"]["title"]["text"].startswith("allgather")
    assert "Table CSV" in [b.label for b in at.get("download_button")]
    at.button(key="cmp_render").click().run()
    assert not at.exception
    if chromium_present():
        assert {"Figure PNG", "Figure SVG"} <= {b.label for b in at.get("download_button")}
    else:       # a machine without Chromium: the page says why in one line and keeps its button
        assert any("need Chromium" in e.value for e in at.error) and at.button(key="cmp_render")


def test_page_reads_uploaded_files():
    from studio.pages.compare import MAX_NODES, _from_upload
    from topologies import TopologyError
    from topologies.files import to_json

    class Upload:
        def __init__(self, name, data):
            self.name, self.data = name, data

        def getvalue(self):
            return self.data

    topo, key = _from_upload(Upload("mine.json", to_json(load("biring(6)")).encode()))
    assert topo.n == 6 and topo.expr == "mine.json" and key.startswith("file:mine.json:")
    for upload, text in [(Upload("bad.json", b'{"hello": 1}'), "bad.json"),
                         (Upload("bin.json", b"\xff\xfe"), "not UTF-8"),
                         (Upload("big.json", to_json(load(f"ring({MAX_NODES + 1})")).encode()), "limit of 1024")]:
        with pytest.raises(TopologyError, match=text):
            _from_upload(upload)


def test_bound_row_carries_the_papers_step_model_beside_the_runtime_bound():
    """On a mesh (corners have two links, the centre four) the pipelined allreduce bound is below the papers'
    phase sum; ``step_model_us`` stays the papers' figure, steps * alpha + tb * M / B."""
    from solvers.core.cost import alpha_beta_us

    result = compare(["mesh(3,3)"], "allreduce", 1e8, alpha_us=10.0, bandwidth_gbs=12.5, algos=["sptree"])
    bound = by_algo(result)[BOUND]
    paper = alpha_beta_us(bound["steps"], Fraction(bound["tb_factor_exact"]), 1e8, 10.0, 12.5)
    assert bound["step_model_us"] == pytest.approx(paper) and bound["time_us"] < paper
    assert by_algo(result)["sptree"]["time_us"] >= bound["time_us"]
