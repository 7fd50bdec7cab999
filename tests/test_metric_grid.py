"""studio.metric_grid: headline numbers drawn as one block of page text (issue 44) read back whole, escaped, tinted
as st.metric tints them, and drawn in a page as one markdown element per row."""
from hypothesis import given, settings, strategies as st_
from streamlit.testing.v1 import AppTest

from studio.metric_grid import Metric, _tint, grid, parse

from .conftest import shown_metrics


@settings(max_examples=200, deadline=None)
@given(st_.lists(st_.tuples(st_.text(min_size=1, max_size=30), st_.text(max_size=30),
                            st_.none() | st_.text(min_size=1, max_size=20), st_.none() | st_.text(min_size=1, max_size=40)),
                 min_size=1, max_size=7))
def test_any_text_reads_back_as_written(cells):
    """Labels, values, deltas and help with any characters (quotes, angle brackets, ampersands) come back from the
    markup unchanged and in order: nothing in them is taken as markup."""
    row = [Metric(label, value, delta, help=help_) for label, value, delta, help_ in cells]
    back = parse(grid(row, len(row)))
    assert [(m.label, m.value, m.delta, m.help) for m in back] == [(m.label, m.value, m.delta, m.help) for m in row]


def test_hostile_text_is_escaped():
    markup = grid([Metric("<script>alert(1)</script>", '"><img src=x onerror=alert(1)>', "\n\n*x*",
                          help="a\"b<c>\r\n")], 1)
    assert "<script>" not in markup and "<img" not in markup and "onerror=alert(1)>" not in markup
    assert "\n" not in markup                       # one line: markdown takes it as one HTML block


def test_deltas_are_tinted_as_st_metric_tints_them():
    assert _tint("bound 3", "normal") == "up" and _tint("-2", "normal") == "down"
    assert _tint("bound 3", "inverse") == "down" and _tint("−0.5", "inverse") == "up"
    assert _tint("-2", "off") == _tint("+2", "off") == "off"


def test_empty_cells_keep_their_column():
    markup = grid([None, Metric("b", "2"), None], 3)
    assert "repeat(3, minmax(0, 1fr))" in markup and markup.count("<div></div>") == 2
    assert [m.label for m in parse(markup)] == ["b"]


def _page():
    from studio.metric_grid import metric, metric_columns

    cols = metric_columns(3)
    cols[0].metric("Steps", 3, delta="bound 3", delta_color="off")
    cols[2].metric("tb_factor", "1.1667", delta="bound 0.9167", delta_color="inverse", help="T_B / (M/B)")
    left, right = metric_columns(2)
    left.metric("alone", None)
    metric("GenTree AllReduce (s)", "0.25")


def test_a_page_draws_one_markdown_per_row():
    at = AppTest.from_function(_page).run()
    assert not at.exception
    assert len([md for md in at.markdown if "ts-metrics" in md.value]) == 3
    got = [(m.label, m.value, m.delta, m.help) for m in shown_metrics(at)]
    assert got == [("Steps", "3", "bound 3", None), ("tb_factor", "1.1667", "bound 0.9167", "T_B / (M/B)"),
                   ("alone", "–", None, None), ("GenTree AllReduce (s)", "0.25", None, None)]
    assert [m.tint for m in shown_metrics(at)] == ["off", "down", None, None]
