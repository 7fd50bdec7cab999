"""The Finder's first hour through AppTest (issue 40): it opens on a small N and finds larger frontiers on
request behind a progress bar that says what it does, the "Open a design" selector never names a design of an
earlier frontier, and the table has no "None" cells."""
import streamlit as st
from streamlit.testing.v1 import AppTest

from solvers.directconnect.finder import find
from studio.tables import DASH
from topologies.display import math_name

from .conftest import ROOT, switch_page


def open_finder():
    at = AppTest.from_file(str(ROOT / "app.py"), default_timeout=300).run()
    return switch_page(at, "finder").run()


def set_n(at, n):
    """N as a user sets it: type it, and press Find designs where the page asks for it."""
    at.number_input(key="f_n").set_value(n).run()
    if [b for b in at.button if b.key == "f_find"]:
        at.button(key="f_find").click().run()
    assert not at.exception
    return at


def picker(at):
    return next(s for s in at.selectbox if s.label == "Open a design")


def label(c) -> str:
    return f"{math_name(c.name)} ({c.steps} steps, tb {float(c.tb):.4f})"      # names as math


def test_opens_on_64_nodes_and_finds_1024_only_on_request(monkeypatch):
    texts = []
    real = st.progress

    def progress(value, text=None):
        texts.append(text)
        return real(value, text=text)

    monkeypatch.setattr(st, "progress", progress)
    at = open_finder()
    assert not at.exception and not at.error
    assert at.number_input(key="f_n").value == 64
    assert list(at.dataframe[0].value["expression"]) == [c.expr for c in find(64, 4)]
    at.number_input(key="f_n").set_value(1024).run()
    assert not at.exception
    assert not at.get("plotly_chart")[0].proto.spec.count("N = 1024"), "the frontier of 1024 was drawn unasked"
    assert at.button(key="f_find").label == "Find designs for N = 1024"
    assert not at.dataframe or len(at.dataframe[0].value) != 5
    texts.clear()
    at.button(key="f_find").click().run()
    assert not at.exception
    assert list(at.dataframe[0].value["steps"]) == [5, 6, 8, 11, 20]
    assert any(t and "Searching the expansion chains for N = 1024" in t for t in texts), texts
    at.selectbox(key="f_coll").set_value("allgather").run()          # the request holds while N stays
    assert not at.exception and len(at.dataframe[0].value) == 5


def test_the_open_a_design_label_follows_the_frontier():
    """Pick a design of the 1024-node frontier, then set N = 64: the selector must offer the 64-node designs
    and show the one its buttons open. A selector kept across frontiers held its index while the browser kept
    the old label (its element id unchanged and no value sent), naming L^3(C(16,{3,4})) beside a button that
    opened a 64-node design."""
    at = set_n(open_finder(), 1024)
    before = picker(at)
    assert before.options[1] == "L³(C(16,{3,4})) (6 steps, tb 1.0195)"          # names as math
    before.set_value(1).run()
    before = picker(at)
    shown = before.options[before.index]
    at = set_n(at, 64)
    after = picker(at)
    front = find(64, 4)
    assert after.options == [label(c) for c in front]
    if after.id == before.id and not after.proto.set_value:
        shown_now = shown                       # the browser keeps what it showed
    elif after.proto.set_value:
        shown_now = after.proto.raw_value
    else:
        shown_now = after.options[after.proto.default]
    assert shown_now == after.options[after.index], f"the selector shows {shown_now!r}"
    at.button(key="f_open_compose").click().run()
    assert not at.exception
    opened = next(c for c in front if label(c) == shown_now)
    assert at.session_state["design_expr"] == opened.expr


def test_the_table_has_no_none_cells():
    at = open_finder()
    df = at.dataframe[0].value
    assert not df.isna().any().any(), df.columns[df.isna().any()].tolist()
    assert not (df.astype(str) == "None").any().any()
    assert set(df["all-to-all µs"]) == {DASH}              # not computed yet: a dash, not None
    at = set_n(at, 32)
    at.button(key="f_a2a_go").click().run()
    df = at.dataframe[0].value
    assert not df.isna().any().any() and df["MCF f"].dtype.kind == "f"
