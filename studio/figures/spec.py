"""A figure written directly in plotly's JSON form (``{"data": [...], "layout": {...}}``), for the figures a page
makes on every view (issue 44).

Building plotly's object model costs the server's script thread far more than drawing the figure: Schedule's
runtime curve took 60 ms through ``make_subplots`` and the trace and layout setters (about 1.2 s of one CPU for
twenty sessions' views, all under one interpreter lock), and 5 ms to draw as SVG from its dict. The page's default
drawing (``svg.figure_svg``) reads only that dict, so a ``FigureSpec`` hands it over as written; plotly's
``go.Figure`` is built from it only when something needs plotly itself (the interactive chart, the PNG/SVG
downloads through kaleido, any attribute of ``go.Figure`` read from it), and building it checks every property the
way plotly checks any figure.
"""
from __future__ import annotations

import copy
from typing import Any


class FigureSpec:
    """``data`` (a list of trace dicts, each with its ``type``) and ``layout`` (a dict) as plotly's JSON has
    them. ``to_dict()`` returns a copy of them; every other attribute is plotly's ``go.Figure`` of the same dict
    (``figure()``, built once), so code that reads ``fig.data[0].z`` or calls ``fig.to_image`` works unchanged."""

    def __init__(self, data: list[dict], layout: dict):
        self._spec = {"data": data, "layout": layout}
        self._figure = None

    def to_dict(self) -> dict:
        if self._figure is not None:          # what plotly holds, should anything have changed it since
            return self._figure.to_dict()
        return copy.deepcopy(self._spec)

    def figure(self):
        """plotly's ``go.Figure`` of this dict (ValueError for a property plotly does not know)."""
        if self._figure is None:
            import plotly.graph_objects as go

            self._figure = go.Figure(self._spec)
        return self._figure

    @property
    def title_text(self) -> str:
        """The layout's title text ("" without one), read without copying the figure."""
        if self._figure is not None:
            return self._figure.layout.title.text or ""
        title = self._spec["layout"].get("title") or {}
        return (title if isinstance(title, str) else title.get("text")) or ""

    def __getattr__(self, name: str) -> Any:
        if name.startswith("_"):              # not plotly's: copy and pickle look for these before __init__ ran
            raise AttributeError(name)
        return getattr(self.figure(), name)


def plotly_figure(fig):
    """``fig`` as plotly's ``go.Figure`` (a ``FigureSpec`` built; anything else as it is)."""
    return fig.figure() if isinstance(fig, FigureSpec) else fig
