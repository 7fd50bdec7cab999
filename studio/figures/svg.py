"""Plotly figures drawn as plain SVG by the server (issue 44), the pages' default drawing.

A browser that draws a plotly chart first loads and compiles plotly.js: on this project's 2-CPU machine that was
about 2 CPU seconds for the first chart of a page load (five charts: 2.7 s), against 0.4 s for a whole
trivial Streamlit page. Five SVG images of a 46-node topology added 0.2 s to that page (as inline SVG through
Streamlit's markdown, 0.8 s). So the pages show a figure as SVG made here from the same plotly figure
(the figure modules stay the one definition, and the PNG/SVG downloads and the interactive mode still use
plotly). Each node, link, point and cell keeps its hover text as an SVG ``<title>``: the page shows the
drawing as an image (still), and the file opened on its own shows them as the browser's tooltips.

Only the parts of plotly's figure model that the studio's figures use are drawn: scatter traces (lines with
gaps, markers of a few symbols with per-point size, colour and angle, text) and heatmaps, on linear, log and
category axes (ranges, reversed and matched axes, equal scale, subplot domains), with a title, a legend and a
colour bar. ``figure_svg`` returns None for anything else (another trace type, shapes, annotations, too many
elements), and the caller shows the plotly chart instead, so nothing is drawn wrong or left out.
"""
from __future__ import annotations

import re

from studio.figures.svg_axis import _Axis
from studio.figures.svg_format import (CHAR_PX, COLORBAR_PX, DEFAULT_HEIGHT, DEFAULT_MARGIN, FONT, GRID,
                                       LEGEND_ROW_PX, MAX_ELEMENTS, TEXT_COLOR, TICK_PX, _esc, _plain,
                                       Unsupported, _values)
from studio.figures.svg_marks import _Marks


def figure_svg(fig, width_px: float, ident: str = "fig", *, title: bool = True) -> str | None:
    """``fig`` (a plotly Figure) as an SVG document ``width_px`` wide (it scales to its container), or None where
    it uses something not covered (module docstring). ``ident`` prefixes the document's internal ids (clip
    paths, gradients), so that drawings inlined in one page keep apart; ``title``: draw the figure's title
    (without it the top margin shrinks to what the plot needs)."""
    try:
        return _Drawing(fig.to_dict(), float(width_px), re.sub(r"[^\w-]", "_", ident), title).svg()
    except (Unsupported, ArithmeticError, LookupError, TypeError, ValueError):
        # a figure shaped unlike the studio's own (empty data, odd values): plotly draws it rather than the page
        # failing
        return None


# --------------------------------------------------------------------------------------------------- drawing
class _Drawing(_Marks):
    def __init__(self, fig: dict, width: float, ident: str, title: bool):
        self.data: list[dict] = fig.get("data", [])
        self.layout: dict = fig.get("layout", {})
        for key in ("shapes", "annotations", "images", "updatemenus", "sliders"):
            if self.layout.get(key):
                raise Unsupported(key)
        for trace in self.data:
            if trace.get("type", "scatter") not in ("scatter", "heatmap"):
                raise Unsupported(trace.get("type"))
            if trace.get("fill") not in (None, "none") or trace.get("error_x") or trace.get("error_y"):
                raise Unsupported("fills and error bars")
        self.width, self.ident, self.titled = width, ident, title
        self.clips: set[str] = set()
        self.count = 0

    # ------------------------------------------------------------------- the page: margins, title, legend
    def svg(self) -> str:
        layout = self.layout
        margin = {**DEFAULT_MARGIN, **{k: v for k, v in (layout.get("margin") or {}).items() if v is not None}}
        height = float(layout.get("height") or DEFAULT_HEIGHT)
        title = layout.get("title") or {}
        title_text = title.get("text") if isinstance(title, dict) else title
        skip = 0.0
        if isinstance(title, dict) and (title.get("pad") or {}).get("t"):
            skip = float(title["pad"]["t"])       # the strip kept clear of plotly's toolbar: no toolbar here
        if not self.titled and title_text:             # the title's lines and the toolbar strip go
            lines = len(_plain(title_text).split("\n"))
            skip = min(margin["t"] - 10, skip + 22 * lines + 12)
            title_text = None
        height -= skip
        margin["t"] = max(10.0, margin["t"] - skip)
        if title_text and margin["t"] < 30:
            margin["t"] = 30
        self.axes = self._axes()
        legend = self._legend_items()
        legend_h = legend_w = 0.0
        horizontal = (layout.get("legend") or {}).get("orientation") == "h"
        if legend:
            if horizontal:
                rows = self._legend_rows(legend, self.width - 20)
                legend_h = len(rows) * LEGEND_ROW_PX + 8
            else:
                legend_w = 40 + CHAR_PX * max(len(name) for name, _ in legend)
        bars = [t for t in self.data if t.get("type") == "heatmap" and t.get("showscale", True) is not False]
        bar_w = COLORBAR_PX if bars else 0.0
        left, right = margin["l"], margin["r"] + legend_w + bar_w
        top, bottom = margin["t"], margin["b"] + legend_h
        # room for tick labels and axis titles (plotly's automargin)
        need_l = max((self._side_px(a) for a in self.axes.values() if a.name.startswith("y") and a.visible),
                     default=0.0)
        need_b = max((self._side_px(a) for a in self.axes.values() if a.name.startswith("x") and a.visible),
                     default=0.0)
        left, bottom = max(left, need_l + 6), max(bottom, need_b + legend_h + 4)
        plot_w, plot_h = max(40.0, self.width - left - right), max(40.0, height - top - bottom)
        self._place(left, top, plot_w, plot_h)
        out = [f'<svg xmlns="http://www.w3.org/2000/svg" viewBox="0 0 {self.width:.0f} {height:.0f}" '
               f'width="{self.width:.0f}" height="{height:.0f}" {FONT} role="img">']
        out.append(f'<rect width="{self.width:.0f}" height="{height:.0f}" fill="white"/>')
        if title_text:
            lines = _plain(title_text).split("\n")
            pad_l = float(((title.get("pad") or {}).get("l") if isinstance(title, dict) else 0) or 10)
            out.append(f'<text x="{pad_l:.0f}" y="20" font-size="16" font-weight="600" fill="{TEXT_COLOR}">'
                       + "".join(f'<tspan x="{pad_l:.0f}" dy="{0 if i == 0 else 20}">{_esc(line)}</tspan>'
                                 for i, line in enumerate(lines)) + "</text>")
        out += self._axes_svg()
        for i, trace in enumerate(self.data):
            if trace.get("visible", True) in (False, "legendonly"):
                continue
            out += (self._heatmap(trace) if trace.get("type") == "heatmap" else self._scatter(trace, i))
            if self.count > MAX_ELEMENTS:
                raise Unsupported("too many elements")
        if bars:
            out += self._colorbar(bars[0], left + plot_w + 12, top, plot_h)
        if legend:
            if horizontal:
                out += self._legend_h(legend, left, height - legend_h + 6)
            else:
                out += self._legend_v(legend, left + plot_w + bar_w + 12, top)
        out.append("</svg>")
        return "".join(out)

    def _axes(self) -> dict[str, _Axis]:
        axes: dict[str, _Axis] = {}

        def get(name: str) -> _Axis:
            if name not in axes:
                key = name[0] + "axis" + name[1:]
                axes[name] = _Axis(name, dict(self.layout.get(key) or {}))
            return axes[name]
        for key in self.layout:
            m = re.fullmatch(r"([xy])axis(\d*)", key)
            if m:
                get(m.group(1) + m.group(2))
        for trace in self.data:
            xa, ya = get(trace.get("xaxis", "x")), get(trace.get("yaxis", "y"))
            if trace.get("type") == "heatmap":
                self._heatmap_axes(trace, xa, ya)
            else:
                mode = self._mode(trace)
                pad = "markers" in mode or "text" in mode
                xa.see(_values(trace.get("x")), pad)
                ya.see(_values(trace.get("y")), pad)
        for axis in axes.values():
            axis.settle()
        for axis in axes.values():                       # matched axes share one range
            other = axis.spec.get("matches")
            if other in axes:
                ref = axes[other]
                lo = min(axis.lo, ref.lo)
                hi = max(axis.hi, ref.hi)
                axis.lo = ref.lo = lo
                axis.hi = ref.hi = hi
        return axes

    @staticmethod
    def _heatmap_axes(trace: dict, xa: _Axis, ya: _Axis) -> None:
        z = [list(row) for row in _values(trace.get("z"))]
        cols = max((len(r) for r in z), default=0)
        for axis, labels, count in ((xa, trace.get("x"), cols), (ya, trace.get("y"), len(z))):
            labels = _values(labels)
            if labels and not all(isinstance(v, str) for v in labels):
                raise Unsupported("a heatmap on numeric coordinates")
            axis.kind = "category"
            # every cell its own column even where two labels coincide (parallel links)
            axis.categories = [str(v) for v in labels] if labels else [str(i) for i in range(count)]

    def _side_px(self, axis: _Axis) -> float:
        """Pixels a y axis needs left of its plot (an x axis below it) for tick labels and title."""
        if not axis.visible:
            return 0.0
        labels = [label for _, label in axis.ticks(400)] if axis.ticklabels else []
        if axis.name.startswith("y"):
            size = max((CHAR_PX * len(t) for t in labels), default=0.0) + 8
        else:
            rotate = self._rotate(axis, labels)
            size = (max((CHAR_PX * len(t) for t in labels), default=0.0) * 0.72 + 10) if rotate else \
                (TICK_PX + 8 if labels else 0.0)
        return size + (20 if axis.title() else 0)

    def _rotate(self, axis: _Axis, labels: list[str]) -> bool:
        if not labels:
            return False
        room = (axis.p1 - axis.p0 if axis.p1 != axis.p0 else self.width * 0.8) / len(labels)
        return max(CHAR_PX * len(t) for t in labels) + 6 > abs(room)

    def _place(self, left: float, top: float, w: float, h: float) -> None:
        for axis in self.axes.values():
            d0, d1 = axis.domain
            if axis.name.startswith("x"):
                axis.p0, axis.p1 = left + d0 * w, left + d1 * w
            else:
                axis.p0, axis.p1 = top + (1 - d0) * h, top + (1 - d1) * h
        for axis in self.axes.values():                   # equal scale: widen the tighter of the two ranges
            if axis.spec.get("scaleanchor") and axis.spec["scaleanchor"] in self.axes:
                other = self.axes[axis.spec["scaleanchor"]]
                per_a = abs(axis.p1 - axis.p0) / (axis.hi - axis.lo)
                per_o = abs(other.p1 - other.p0) / (other.hi - other.lo)
                per = min(per_a, per_o)
                for ax in (axis, other):
                    mid, half = (ax.lo + ax.hi) / 2, abs(ax.p1 - ax.p0) / per / 2
                    ax.lo, ax.hi = mid - half, mid + half

    def _pairs(self):
        """(x axis, y axis) of every subplot, from the traces and the layout's anchors."""
        seen = []
        for trace in self.data:
            pair = (trace.get("xaxis", "x"), trace.get("yaxis", "y"))
            if pair not in seen:
                seen.append(pair)
        return [(self.axes[x], self.axes[y]) for x, y in seen] or \
            ([(self.axes["x"], self.axes["y"])] if "x" in self.axes and "y" in self.axes else [])

    def _axes_svg(self) -> list[str]:
        out = []
        for xa, ya in self._pairs():
            x0, x1 = sorted((xa.p0, xa.p1))
            y0, y1 = sorted((ya.p0, ya.p1))
            bg = self.layout.get("plot_bgcolor") or "white"
            out.append(f'<rect x="{x0:.1f}" y="{y0:.1f}" width="{x1 - x0:.1f}" height="{y1 - y0:.1f}" '
                       f'fill="{_esc(bg)}"/>')
            for axis, along in ((xa, "x"), (ya, "y")):
                if not axis.visible:
                    continue
                ticks = axis.ticks(abs(axis.p1 - axis.p0))
                labels = [t for _, t in ticks] if axis.ticklabels else []
                rotate = along == "x" and self._rotate(axis, labels)
                for u, label in ticks:
                    p = axis.px_unit(u)
                    if not (min(axis.p0, axis.p1) - 0.5 <= p <= max(axis.p0, axis.p1) + 0.5):
                        continue
                    if along == "x":
                        if axis.kind != "category":
                            out.append(f'<line x1="{p:.1f}" y1="{y0:.1f}" x2="{p:.1f}" y2="{y1:.1f}" '
                                       f'stroke="{GRID}"/>')
                        if axis.ticklabels:
                            if rotate:
                                out.append(f'<text transform="translate({p:.1f},{y1 + 6:.1f}) rotate(-45)" '
                                           f'text-anchor="end" font-size="{TICK_PX}" fill="{TEXT_COLOR}">'
                                           f'{_esc(label)}</text>')
                            else:
                                out.append(f'<text x="{p:.1f}" y="{y1 + TICK_PX + 4:.1f}" text-anchor="middle" '
                                           f'font-size="{TICK_PX}" fill="{TEXT_COLOR}">{_esc(label)}</text>')
                    else:
                        if axis.kind != "category":
                            out.append(f'<line x1="{x0:.1f}" y1="{p:.1f}" x2="{x1:.1f}" y2="{p:.1f}" '
                                       f'stroke="{GRID}"/>')
                        if axis.ticklabels:
                            out.append(f'<text x="{x0 - 6:.1f}" y="{p + 4:.1f}" text-anchor="end" '
                                       f'font-size="{TICK_PX}" fill="{TEXT_COLOR}">{_esc(label)}</text>')
                    self.count += 2
                title = axis.title()
                if title and along == "x":
                    room = (max((CHAR_PX * len(t) for t in labels), default=0) * 0.72 + 10) if rotate else \
                        (TICK_PX + 8 if labels else 0)
                    out.append(f'<text x="{(x0 + x1) / 2:.1f}" y="{y1 + room + 16:.1f}" text-anchor="middle" '
                               f'font-size="12" fill="{TEXT_COLOR}">{_esc(title)}</text>')
                elif title:
                    room = max((CHAR_PX * len(t) for t in labels), default=0) + 8
                    cx, cy = x0 - room - 8, (y0 + y1) / 2
                    out.append(f'<text transform="translate({cx:.1f},{cy:.1f}) rotate(-90)" text-anchor="middle" '
                               f'font-size="12" fill="{TEXT_COLOR}">{_esc(title)}</text>')
        return out

