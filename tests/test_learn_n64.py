"""The Learn section "Ring, tree and direct-connect at N = 64" (issue 59, finding 13) through AppTest: it renders on
the Learn page, its figure has each design's alpha term and M/B term, the terms add up to the step-model time of
each design's allreduce built and verified here by ``solvers.synthesize``, the crossovers it marks are the ones
``solvers.compare.winners`` finds over those times, and the sidebar's alpha moves them."""
import json
import math

import pytest
from streamlit.testing.v1 import AppTest

from solvers.compare import Curve, crossing_size, winners
from solvers.core.cost import alpha_beta_us
from solvers.synthesize import synthesize
from studio.views.learn_n64 import ALPHA_TERM, BANDWIDTH_TERM, TOTAL, term_name
from topologies.baseline_fabrics import nccl_double_binary_tree
from topologies.expression import parse_topology

from .conftest import ROOT, switch_page

TITLE = "10. Ring, tree and direct-connect at N = 64"
DESIGNS = {"ring": ("biring(64)", "ring"), "double binary tree": ("dbt_graph(64)", "dbt"),
           "Π₄,₆₄ with BFB": ("gkautz(4,64)", "bfb")}          # the page's labels, names as math


def section_app(alpha_us: float | None = None) -> AppTest:
    """Only the section, rendered as the Learn page renders it (its own workload from the sidebar's state)."""
    def script(alpha):
        import streamlit as st

        from studio.views import learn_collectives
        if alpha is not None:
            st.session_state["w_alpha"] = alpha
        learn_collectives.render_section()
    at = AppTest.from_function(script, args=(alpha_us,), default_timeout=180).run()
    assert not at.exception and not at.error, [e.value for e in at.exception]
    return at


def figure(at) -> dict:
    return json.loads(at.get("plotly_chart")[0].proto.spec)


def ys(spec: dict, name: str) -> list[float]:
    found = [t for t in spec["data"] if t.get("name") == name]
    assert len(found) == 1, f"{name!r} among {[t.get('name') for t in spec['data']]}"
    return [float(y) for y in found[0]["y"]]


def marked_sizes(spec: dict) -> list[float]:
    """The crossover lines: dotted vertical shapes (the sidebar's M is solid)."""
    return [float(s["x0"]) for s in spec["layout"].get("shapes", []) if s.get("line", {}).get("dash") == "dot"]


@pytest.fixture(scope="module")
def built():
    """Each design's allreduce, built and verified here (not read from the page)."""
    out = {}
    for label, (expr, algo) in DESIGNS.items():
        r = synthesize(parse_topology(expr), algo, "allreduce")
        assert r.verification.ok
        out[label] = r
    return out


@pytest.fixture(scope="module")
def section():
    return section_app()


def test_the_learn_page_shows_the_section():
    at = AppTest.from_file(str(ROOT / "app.py"), default_timeout=300).run()
    at = switch_page(at, "learn").run()
    assert not at.exception and not at.error
    assert TITLE in [h.value for h in at.header]
    keys = [c.proto.id for c in at.get("plotly_chart")]
    assert sum("l_n64" in k for k in keys) == 3            # the terms figure and the two tree drawings


def test_each_design_has_its_two_terms_adding_up_to_its_step_model_time(section, built):
    at = section
    spec = figure(at)
    sizes = [float(x) for x in spec["data"][0]["x"]]
    assert sizes[0] == pytest.approx(1e3) and sizes[-1] == pytest.approx(1e9)
    alpha_us, bandwidth = _prices(at)
    for label, r in built.items():
        a, b, total = (ys(spec, term_name(label, t)) for t in (ALPHA_TERM, BANDWIDTH_TERM, TOTAL))
        steps, tb = r.cost.steps, r.cost.tb_factor
        for m, x, y, t in zip(sizes, a, b, total):
            want = alpha_beta_us(steps, tb, m, alpha_us, bandwidth)
            assert x + y == pytest.approx(want, rel=1e-9)
            assert t == pytest.approx(want, rel=1e-9)
            assert x == pytest.approx(steps * alpha_us, rel=1e-12)                   # T_L = steps × alpha
            assert y == pytest.approx(float(tb) * m / (bandwidth * 1e3), rel=1e-9)   # T_B = tb × M/B
    # the ring's numbers are the paper's closed forms: 2(N-1) steps and 2(N-1)/N
    assert built["ring"].cost.steps == 126 and built["ring"].cost.tb_factor == pytest.approx(126 / 64)


def _prices(at) -> tuple[float, float]:
    """The sidebar's alpha and B the section priced with (the defaults unless ``at`` set alpha)."""
    from studio import workload
    alpha = at.session_state["w_alpha"] if "w_alpha" in at.session_state else workload.DEFAULTS["w_alpha"]
    return float(alpha), float(workload.DEFAULTS["w_bandwidth"])


def _expected_crossovers(built, sizes, alpha_us, bandwidth) -> list[float]:
    curves = [Curve(label, DESIGNS[label][0], label, "allreduce", DESIGNS[label][1], tuple(sizes),
                    tuple(alpha_beta_us(r.cost.steps, r.cost.tb_factor, m, alpha_us, bandwidth) for m in sizes))
              for label, r in built.items()]
    return [w.to_bytes for w in winners(curves)[:-1]]


def test_the_marked_crossovers_are_where_the_fastest_design_changes(section, built):
    spec = figure(section)
    sizes = [float(x) for x in spec["data"][0]["x"]]
    alpha_us, bandwidth = _prices(section)
    want = _expected_crossovers(built, sizes, alpha_us, bandwidth)
    assert want, "at the default prices the fastest design changes between 1 KB and 1 GB"
    assert marked_sizes(spec) == pytest.approx(want, rel=1e-9)
    # the step model's own crossover of the two lines that cross, T equal: (s1 - s2) alpha = (t2 - t1) M/B
    ring, low = built["ring"].cost, built["Π₄,₆₄ with BFB"].cost
    exact = (ring.steps - low.steps) * alpha_us * bandwidth * 1e3 / float(low.tb_factor - ring.tb_factor)
    assert math.isclose(want[-1], exact, rel_tol=0.02)              # log-log interpolation between samples
    j = max(i for i, m in enumerate(sizes) if m <= want[-1])
    a = [alpha_beta_us(low.steps, low.tb_factor, m, alpha_us, bandwidth) for m in sizes]
    b = [alpha_beta_us(ring.steps, ring.tb_factor, m, alpha_us, bandwidth) for m in sizes]
    assert crossing_size(sizes, a, b, j) == pytest.approx(want[-1], rel=1e-12)


def test_a_larger_alpha_moves_the_crossover_up(section, built):
    before = marked_sizes(figure(section))
    after_at = section_app(alpha_us=10 * _prices(section)[0])
    after = marked_sizes(figure(after_at))
    assert after and before and after[-1] > 5 * before[-1]


def test_the_trees_are_drawn(section):
    charts = section.get("plotly_chart")
    assert len(charts) == 3
    dbt = json.loads(charts[1].proto.spec)
    first, second = nccl_double_binary_tree(8)
    for i, parents in enumerate((first, second), 1):
        trace = next(t for t in dbt["data"] if t.get("name") == f"tree {i} (root {parents.index(-1)})")
        segments = sum(1 for y in trace["y"] if y is None)
        assert segments == sum(p >= 0 for p in parents) == 7          # a spanning tree of 8 GPUs: 7 edges
        gpus = next(t for t in dbt["data"] if t.get("name") == f"tree {i} (root {parents.index(-1)}) GPUs")
        top = max(gpus["y"])
        assert [g for g, y in zip(gpus["text"], gpus["y"]) if y == top] == [str(parents.index(-1))]
    forest = json.loads(charts[2].proto.spec)
    trees = [t for t in forest["data"] if t.get("name", "").startswith("tree ")]
    assert len(trees) >= 2                                           # the GPU drawn has distinct trees
    assert all(sum(1 for y in t["y"] if y is None) == 7 for t in trees)
