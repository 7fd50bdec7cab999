"""Expanders that cost nothing while closed (issue 44): the pages' and the sidebar's shared building block."""
from __future__ import annotations

from contextlib import contextmanager

import streamlit as st


@contextmanager
def lazy_expander(label: str, key: str, where=None):
    """An expander whose contents are made only while it is open: ``with lazy_expander(...) as box: if box: ...``.
    Opening or closing it reruns the page. A closed expander's elements were still sent to and laid out by every
    browser (Compose's links table alone cost each one about a CPU second, issue 44). ``key`` holds whether it
    is open (set it in ``st.session_state`` to open it from code or a test)."""
    box = (where if where is not None else st).expander(label, key=key, on_change="rerun")
    with box:
        yield box.open
