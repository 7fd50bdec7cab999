"""Figure titles and the widths the pages are planned for: a title cut into lines that fit its figure, anchored
left, below plotly's toolbar strip. Pure functions: no Streamlit here."""
from __future__ import annotations

import textwrap

import plotly.graph_objects as go

from topologies.display import math_name


# Titles. The pages are planned for a main area FULL_WIDTH_PX wide (the wide layout on a 1280-pixel screen), a
# figure in one of two columns for HALF_WIDTH_PX. A title is cut into lines that fit its figure's width, anchored
# left, and starts below the strip where plotly's toolbar appears (top right, on hover), so the toolbar never
# covers it; the top margin grows with its lines.
FULL_WIDTH_PX = 800
HALF_WIDTH_PX = 390
TITLE_FONT_PX = 16
TITLE_CHAR_PX = 8.0          # a generous average glyph width at TITLE_FONT_PX (Streamlit's theme draws it bold)
TITLE_LINE_PX = 22
TOOLBAR_PX = 44               # the toolbar strip with Streamlit's own buttons beside plotly's


def title_lines(text: str, width_px: float = FULL_WIDTH_PX) -> list[str]:
    """``text`` cut at spaces (and at any ``<br>`` already in it) into lines that fit ``width_px``."""
    limit = max(12, int((width_px - 20) // TITLE_CHAR_PX))
    lines: list[str] = []
    for part in (text or "").split("<br>"):
        lines += textwrap.wrap(part, limit, break_on_hyphens=False) or ([""] if part else [])
    return lines


def title_margin(lines: int) -> int:
    """The top margin that holds a title of ``lines`` lines below the toolbar strip."""
    return TOOLBAR_PX + lines * TITLE_LINE_PX + 12


def place_title(fig: go.Figure, text: str | None = None, width_px: float = FULL_WIDTH_PX) -> go.Figure:
    """Give ``fig`` its title (``text``, else the one it has) wrapped for a drawing ``width_px`` wide, anchored
    left below the toolbar strip, with the top margin to hold it; and show the names in it as math
    (``show_names``)."""
    if text is None:
        text = fig.layout.title.text or ""
    title, top = _title(text, fig.layout.margin.t, width_px)
    fig.update_layout(title=title, margin=dict(t=top))
    return show_names(fig)


def show_names(fig: go.Figure) -> go.Figure:
    """``fig`` with the topology names in its legend, point labels, hover text and annotations drawn as math
    (``topologies.display.math_name``: ``Π_{4,64}`` as ``Π₄,₆₄``), in place. Idempotent; text without markup is
    untouched, so a figure of plain labels costs one scan."""
    for trace in fig.data:
        for prop in ("name", "text", "hovertemplate", "hovertext"):
            value = getattr(trace, prop, None)
            if isinstance(value, str):
                shown = math_name(value)
            elif isinstance(value, (list, tuple)) and any(isinstance(v, str) for v in value):
                shown = [math_name(v) for v in value]
            else:
                continue
            if shown != value and (not isinstance(value, tuple) or list(value) != shown):
                trace[prop] = shown
    for note in fig.layout.annotations:
        if isinstance(note.text, str) and math_name(note.text) != note.text:
            note.text = math_name(note.text)
    return fig


def titled(layout: dict, width_px: float = FULL_WIDTH_PX) -> dict:
    """``place_title`` for a layout written as a dict (``spec``): its ``title`` (a string) and
    ``margin`` made the same way, in place; returns ``layout``."""
    title, top = _title(layout.get("title") or "", layout.get("margin", {}).get("t"), width_px)
    layout["title"] = title
    layout.setdefault("margin", {})["t"] = top
    return layout


def _title(text: str, top: int | None, width_px: float) -> tuple[dict, int]:
    """The title's layout and the top margin that holds it (at least ``top``)."""
    lines = title_lines(math_name(text or ""), width_px)
    return (dict(text="<br>".join(lines), x=0, xref="container", xanchor="left", y=1, yref="container",
                 yanchor="top", pad=dict(t=TOOLBAR_PX, l=10), font=dict(size=TITLE_FONT_PX)),
            max(top or 0, title_margin(len(lines))))


