"""How a page shows a figure: drawn as SVG by the server (``svg_figure``) unless the sidebar's "Interactive
charts" is on, then as plotly's chart (zoom, pan, hover boxes). Issue 44: plotly.js costs each browser about
2 CPU seconds on the first chart of a page load; twenty browsers sharing a machine's two cores waited minutes
for it. A figure the SVG drawing does not cover is shown by plotly either way."""
from __future__ import annotations

import re

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


def show(fig, key: str, *, width_px: float = FULL_WIDTH_PX, where=None) -> None:
    """Show ``fig`` in ``where`` (the page by default) under ``key`` (a plotly chart's key, or the class
    ``st-key-<key>`` of the drawing's container), planned ``width_px`` wide. A drawing is an image (an inline
    SVG would go through the browser's markdown parser, five times the cost), under its title as page text."""
    where = where if where is not None else st
    svg = None if interactive() else figure_svg(fig, width_px, key, title=False)
    if svg is None:
        where.plotly_chart(plotly_figure(fig), key=key)
        return
    box = where.container(key=key)
    title = plain_title(fig)
    if title:
        box.markdown(f"**{_markdown_escape(title)}**")
    box.image(svg, width="stretch", alt=title or "figure")


def plain_title(fig) -> str:
    """The figure's title as one line of plain text."""
    text = fig.title_text if isinstance(fig, FigureSpec) else fig.layout.title.text or ""
    return " ".join(re.sub(r"<[^>]+>", " ", text.replace("<br>", " ")).split())


def _markdown_escape(text: str) -> str:
    """``text`` shown as itself by markdown (names and expressions carry _, *, $, braces and the like)."""
    return re.sub(r"([\\`*_{}\[\]()#+\-.!|~$<>])", r"\\\1", text)
