"""How a page shows a figure: drawn as SVG by the server (``svg``) unless the sidebar's "Interactive
charts" is on, then as plotly's chart (zoom, pan, hover boxes). Issue 44: plotly.js costs each browser about
2 CPU seconds on the first chart of a page load; twenty browsers sharing a machine's two cores waited minutes
for it. A figure the SVG drawing does not cover is shown by plotly either way."""
from __future__ import annotations

import re
from dataclasses import dataclass

import streamlit as st

from studio.figures.spec import FigureSpec, plotly_figure
from studio.figures.titles import FULL_WIDTH_PX
from studio.figures.svg import figure_svg

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


# ---------------------------------------------------------------------------------------------- synthesizer colors
# One colour per synthesizer on every page that draws synthesizers (Compare, its Measured view, ...), keyed by the
# registry's order (``solvers.synthesize.ALGORITHMS``): Tableau's ten, then ten more of other hues. Black is kept
# for lower bounds. A plug-in beyond the twenty gets a hue of its own by the golden angle.
SYNTH_PALETTE = ("#1f77b4", "#ff7f0e", "#2ca02c", "#d62728", "#9467bd", "#8c564b", "#e377c2", "#7f7f7f",
                 "#bcbd22", "#17becf", "#393b79", "#f0027f", "#7b4173", "#00a087", "#843c39", "#ff9896",
                 "#98df8a", "#637939", "#c5b0d5", "#aec7e8")


def synth_colors() -> dict[str, str]:
    """Every registered synthesizer's colour, all different (read live: plug-ins count)."""
    from solvers.synthesize import ALGORITHMS

    out = {}
    for i, algo in enumerate(ALGORITHMS):
        out[algo] = SYNTH_PALETTE[i] if i < len(SYNTH_PALETTE) else _golden(i - len(SYNTH_PALETTE))
    return out


def synth_color(algo: str) -> str:
    """``algo``'s colour (``synth_colors``); a name the registry lacks gets one from its letters."""
    colors = synth_colors()
    if algo in colors:
        return colors[algo]
    return _golden(sum(map(ord, algo)) % 97 + len(colors))


def _golden(k: int) -> str:
    """The k-th colour past the palette: hues 137.5 degrees apart, mid lightness."""
    import colorsys

    r, g, b = colorsys.hls_to_rgb((0.13 + k * 0.381966) % 1.0, 0.42, 0.65)
    return f"#{round(r * 255):02x}{round(g * 255):02x}{round(b * 255):02x}"
