"""How a page shows a figure: drawn as SVG by the server (``svg_figure``) unless the sidebar's "Interactive
charts" is on, then as plotly's chart (zoom, pan, hover boxes). Issue 44: plotly.js costs each browser about
2 CPU seconds on the first chart of a page load; twenty browsers sharing a machine's two cores waited minutes
for it. A figure the SVG drawing does not cover is shown by plotly either way."""
from __future__ import annotations

import re
from dataclasses import dataclass

import streamlit as st

from studio.figure_spec import FigureSpec, plotly_figure
from studio.figures import FULL_WIDTH_PX
from studio.svg_figure import figure_svg

INTERACTIVE_KEY = "interactive_charts"


def toggle() -> None:
    """The sidebar's switch between SVG drawings (default) and plotly charts; kept for the session."""
    st.sidebar.toggle("Interactive charts", key=INTERACTIVE_KEY,
                      help="Zoom, pan and hover boxes (plotly) on Compose and Schedule too. Off, those two pages "
                           "show the same figures as still drawings made by the server, which the browser shows "
                           "at once; interactive charts cost each browser about 2 CPU seconds on a page's first "
                           "chart, which many people sharing one machine notice. The other pages always use "
                           "plotly.")


def interactive() -> bool:
    return bool(st.session_state.get(INTERACTIVE_KEY, False))


@dataclass(frozen=True)
class Drawing:
    """A figure ready to show: ``svg`` (None: plotly shows ``fig``), its ``title`` as plain text, its ``key``."""

    fig: object
    key: str
    svg: str | None
    title: str


def drawing(fig, key: str, *, width_px: float = FULL_WIDTH_PX) -> Drawing:
    """``fig`` drawn as SVG ``width_px`` wide for ``put`` (unless interactive charts are on, or the drawing does
    not cover it), so that a page can compute its figures before it shows any of them."""
    svg = None if interactive() else figure_svg(fig, width_px, key, title=False)
    return Drawing(fig, key, svg, plain_title(fig))


def put(shown: Drawing, where=None) -> None:
    """Show a ``drawing`` in ``where`` (the page by default): an image under its title as page text (an inline
    SVG would go through the browser's markdown parser, five times the cost), or plotly's chart under ``key``
    (the drawing's container has the class ``st-key-<key>``)."""
    where = where if where is not None else st
    if shown.svg is None:
        where.plotly_chart(plotly_figure(shown.fig), key=shown.key)
        return
    box = where.container(key=shown.key)
    if shown.title:
        box.markdown(f"**{_markdown_escape(shown.title)}**")
    box.image(shown.svg, width="stretch", alt=shown.title or "figure")


def show(fig, key: str, *, width_px: float = FULL_WIDTH_PX, where=None) -> None:
    """Show ``fig`` in ``where`` (the page by default) under ``key``, planned ``width_px`` wide: ``drawing``
    then ``put``."""
    put(drawing(fig, key, width_px=width_px), where)


def plain_title(fig) -> str:
    """The figure's title as one line of plain text."""
    text = fig.title_text if isinstance(fig, FigureSpec) else fig.layout.title.text or ""
    return " ".join(re.sub(r"<[^>]+>", " ", text.replace("<br>", " ")).split())


def _markdown_escape(text: str) -> str:
    """``text`` shown as itself by markdown (names and expressions carry _, *, $, braces and the like)."""
    return re.sub(r"([\\`*_{}\[\]()#+\-.!|~$<>])", r"\\\1", text)
