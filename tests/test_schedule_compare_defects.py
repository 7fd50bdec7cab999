"""Issue 40's defects on the Schedule and Compare pages, each as a new user met it: an unknown algorithm in the
link, a tb bound no schedule can reach shown without a word, two synthesizers returning the same schedule without
a note, Compare's byte ranges printed as 571587.817."""
from __future__ import annotations

import pytest
from streamlit.testing.v1 import AppTest

from solvers.compare import compare
from solvers.core.cost import tb_lower_bound
from topologies import load

from .conftest import ROOT, shown_metrics, switch_page


def _schedule(**params):
    at = AppTest.from_file(str(ROOT / "app.py"), default_timeout=180).run()
    at.query_params.update(params)
    return switch_page(at, "schedule").run()


def test_an_unknown_algorithm_in_the_link_is_one_line_not_a_silent_ring():
    at = _schedule(expr="ring(8)", algo="nosuch")
    assert not at.exception
    assert len(at.error) == 1 and "'nosuch'" in at.error[0].value and "does not exist" in at.error[0].value
    assert at.selectbox(key="algo").value == "bfb"          # the default, said so; not the first in the list
    at = _schedule(expr="ring(8)", algo="ring", coll="gossip")
    assert len(at.error) == 1 and "'gossip'" in at.error[0].value and at.selectbox(key="coll").value == "allgather"


def test_a_bound_out_of_reach_says_why_and_what_is_reachable():
    """Pi_{2,16} has self-loops: the tb bound counts their bandwidth. BFB lands at 2x it, exactly the bound without
    them, which the page now names (and does not paint red)."""
    from solvers.core.cost import self_loop_tb_bound

    topo = load("gkautz(2,16)")
    tight, loops = self_loop_tb_bound(topo, "allgather")
    assert tight == 2 * tb_lower_bound(topo, "allgather") and loops == 2
    assert self_loop_tb_bound(load("torus(3,3)"), "allgather") is None          # no self-loops, nothing to say
    at = _schedule(expr="gkautz(2,16)", algo="bfb", coll="allgather")
    assert not at.exception
    assert next(m.value for m in shown_metrics(at) if m.label == "BW-optimal") == "reachable best"
    note = next(c.value for c in at.caption if "No schedule reaches the tb bound" in c.value)
    assert "2 self-loop(s)" in note and f"({tight})" in note and "this schedule reaches it" in note
    tb = next(m for m in shown_metrics(at) if m.label == "tb_factor")
    assert tb.tint == "off"                          # delta_color "off": grey, not the red of a missed bound
    assert next(m.value for m in shown_metrics(at) if m.label == "BW-optimal") == "reachable best"
    bound_row = next(r for r in compare(["gkautz(2,16)"], ["allgather"], algos=["bfb"]).rows
                     if r["algo"] == "lower bound")
    assert "out of reach" in bound_row["detail"] and str(tight) in bound_row["detail"]


def test_compare_names_the_synthesizer_that_returned_the_same_schedule():
    rows = compare(["gkautz(2,16)"], ["allreduce"], algos=["sptree", "bfb", "forestcoll", "ring"]).rows
    by = {r["algo"]: r for r in rows}
    assert by["sptree"]["same_as"] is None
    assert by["bfb"]["same_as"] == "sptree" and "the same schedule as sptree" in by["bfb"]["detail"]
    assert by["forestcoll"]["same_as"] == "sptree"
    assert by["ring"]["same_as"] is None                    # another schedule (30 steps), no note


@pytest.mark.parametrize("m, text", [(571587.817, "572 KB"), (1000.0, "1 KB"), (1.47e6, "1.47 MB"),
                                     (1e10, "10 GB"), (12.0, "12 B")])
def test_byte_ranges_read_rounded(m, text):
    from studio.pages.compare import bytes_text

    assert bytes_text(m) == text


def test_web_errors_speak_of_the_page_not_of_cli_flags():
    at = _schedule(expr="ring(5000)", algo="ring")
    assert not at.exception and len(at.error) == 1
    text = at.error[0].value
    assert "too large for this page" in text and "--max-nodes" not in text and "STUDIO_MAX_NODES" not in text
