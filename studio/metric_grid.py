"""Rows of headline numbers (a label, a value, an optional delta and help) drawn as one block of page text.

``st.metric`` draws each number as a widget of its own; the first on a page costs every browser the load and
layout of its code, and ten of them about 0.4 CPU s per page view (issue 44, bench/RESULTS.md), while page text
costs next to nothing. ``metric_columns(n)`` stands in for ``st.columns(n)`` where the columns hold only
metrics: ``cols[i].metric(label, value, delta=..., delta_color=..., help=...)`` takes ``st.metric``'s arguments
and the row is drawn again, as one grid of ``n`` equal columns, after each one. The help is the label's hover
text (a circled ? marks it); a delta is a small tinted line under the value: green where ``delta_color`` is "normal"
and the delta is positive or "inverse" and it is negative, red the other way round, grey for "off".

The grid's markup names its parts with classes (``ts-metric``, ``ts-metric-label``, ``ts-metric-value``,
``ts-metric-delta``) and data attributes, so that tests read it back (``parse``) and browsers find it."""
from __future__ import annotations

import html
from dataclasses import dataclass
from html.parser import HTMLParser

import streamlit as st

_TINTS = {"up": ("#09ab3b", "rgba(9, 171, 59, 0.12)"), "down": ("#ff2b2b", "rgba(255, 43, 43, 0.12)"),
          "off": ("inherit", "rgba(128, 128, 128, 0.12)")}


@dataclass(frozen=True)
class Metric:
    """One cell: what ``st.metric`` would show (value and delta as text)."""

    label: str
    value: str
    delta: str | None = None
    delta_color: str = "normal"
    help: str | None = None
    tint: str | None = None          # read back from a page (``parse``): the delta's colour, "up", "down" or "off"


def _text(value) -> str:
    return "–" if value is None else str(value)


def _tint(delta: str, delta_color: str) -> str:
    """"up", "down" or "off": the colour of a delta as ``st.metric`` picks it (a leading minus is negative)."""
    if delta_color == "off":
        return "off"
    negative = delta.lstrip().startswith(("-", "−"))
    good = negative if delta_color == "inverse" else not negative
    return "up" if good else "down"


def _escape(text: str) -> str:
    """``text`` as markup text or an attribute: its own markup characters and its line breaks as references (a
    blank line would end markdown's HTML block and let the rest be read as markdown)."""
    return html.escape(text).replace("\n", "&#10;").replace("\r", "&#13;")


def _cell(m: Metric) -> str:
    e = _escape
    label = e(m.label)
    if m.help:
        label += (f' <span title="{e(m.help)}" style="cursor: help; opacity: 0.7; font-size: 0.7rem; border: 1px '
                  f'solid; border-radius: 50%; padding: 0 0.3rem; vertical-align: 0.1rem">?</span>')
    parts = [f'<div class="ts-metric-label" style="font-size: 0.875rem; opacity: 0.8">{label}</div>',
             f'<div class="ts-metric-value" style="font-size: 2.25rem; line-height: 1.3; white-space: nowrap; '
             f'overflow: hidden; text-overflow: ellipsis">{e(m.value)}</div>']
    tint = _tint(m.delta, m.delta_color) if m.delta else None
    if m.delta:
        colour, background = _TINTS[tint]
        parts.append(f'<div class="ts-metric-delta" style="display: inline-block; font-size: 0.875rem; '
                     f'color: {colour}; background: {background}; border-radius: 0.5rem; padding: 0 0.4rem">'
                     f'{e(m.delta)}</div>')
    data = f' data-label="{e(m.label)}" data-value="{e(m.value)}"'
    if m.delta:
        data += f' data-delta="{e(m.delta)}" data-tint="{tint}"'
    if m.help:
        data += f' data-help="{e(m.help)}"'
    return f'<div class="ts-metric"{data} style="min-width: 0">{"".join(parts)}</div>'


def grid(cells: list[Metric | None], columns: int) -> str:
    """The markup of one row: ``columns`` equal columns, an empty one where a cell is None. One line, so that
    markdown takes it as a single HTML block and leaves its text alone."""
    inner = "".join(_cell(c) if c is not None else "<div></div>" for c in cells)
    return (f'<div class="ts-metrics" style="display: grid; grid-template-columns: repeat({columns}, minmax(0, 1fr));'
            f' gap: 1rem; margin-bottom: 1rem">{inner}</div>')


class _Column:
    def __init__(self, row: "MetricRow", index: int):
        self._row, self._index = row, index

    def metric(self, label: str, value, delta=None, delta_color: str = "normal", help: str | None = None) -> None:
        self._row.set(self._index, Metric(str(label), _text(value), None if delta is None else str(delta),
                                          delta_color, help))


class MetricRow:
    """``n`` metric columns drawn as one grid in a slot of ``where`` (the page, a column, the sidebar)."""

    def __init__(self, n: int, where=None):
        self._slot = (where if where is not None else st).empty()
        self._cells: list[Metric | None] = [None] * n

    def __getitem__(self, index: int) -> _Column:
        if not -len(self._cells) <= index < len(self._cells):
            raise IndexError(index)
        return _Column(self, index % len(self._cells))

    def __iter__(self):
        return (self[i] for i in range(len(self._cells)))

    def __len__(self) -> int:
        return len(self._cells)

    def set(self, index: int, cell: Metric) -> None:
        self._cells[index] = cell
        self._slot.markdown(grid(self._cells, len(self._cells)), unsafe_allow_html=True)


def metric_columns(n: int, where=None) -> MetricRow:
    """``st.columns(n)`` for a row of metrics only (module docstring)."""
    return MetricRow(n, where)


def metric(label: str, value, delta=None, delta_color: str = "normal", help: str | None = None, where=None) -> None:
    """``st.metric`` as a grid of one."""
    metric_columns(1, where)[0].metric(label, value, delta, delta_color, help)


class _Reader(HTMLParser):
    def __init__(self):
        super().__init__()
        self.found: list[Metric] = []

    def handle_starttag(self, tag, attrs):
        a = dict(attrs)
        if "ts-metric" in (a.get("class") or "").split() and "data-label" in a:
            self.found.append(Metric(a["data-label"], a.get("data-value", ""), a.get("data-delta"),
                                     help=a.get("data-help"), tint=a.get("data-tint")))


def parse(markup: str) -> list[Metric]:
    """The cells of every grid in ``markup``, in order (labels, values, deltas, their tints and help as drawn)."""
    reader = _Reader()
    reader.feed(markup)
    return reader.found
