"""Plotly figures drawn as plain SVG by the server (issue 44), the pages' default drawing.

A browser that draws a plotly chart first loads and compiles plotly.js: on this project's 2-CPU machine that was
about 2 CPU seconds for the first chart of a page load (five charts: 2.7 s), against 0.4 s for a whole
trivial Streamlit page. Five SVG images of a 46-node topology added 0.2 s to that page (as inline SVG through
Streamlit's markdown, 0.8 s). So the pages show a figure as SVG made here from the same plotly figure
(``figures.py`` stays the one definition, and the PNG/SVG downloads and the interactive mode still use
plotly). Each node, link, point and cell keeps its hover text as an SVG ``<title>``: the page shows the
drawing as an image (still), and the file opened on its own shows them as the browser's tooltips.

Only the parts of plotly's figure model that the studio's figures use are drawn: scatter traces (lines with
gaps, markers of a few symbols with per-point size, colour and angle, text) and heatmaps, on linear, log and
category axes (ranges, reversed and matched axes, equal scale, subplot domains), with a title, a legend and a
colour bar. ``figure_svg`` returns None for anything else (another trace type, shapes, annotations, too many
elements), and the caller shows the plotly chart instead, so nothing is drawn wrong or left out.
"""
from __future__ import annotations

import html
import math
import re
import sys
from typing import Any

from plotly.colors import get_colorscale

MAX_ELEMENTS = 20_000                  # above this many marks the browser's SVG is no lighter than plotly's
DEFAULT_MARGIN = {"l": 80, "r": 80, "t": 100, "b": 80}     # plotly's own defaults
DEFAULT_HEIGHT = 450
COLORWAY = ["#636efa", "#EF553B", "#00cc96", "#ab63fa", "#FFA15A", "#19d3f3", "#FF6692", "#B6E880", "#FF97FF",
            "#FECB52"]
FONT = "font-family=\"'Source Sans', 'Source Sans Pro', sans-serif\""
TEXT_COLOR = "#31333f"
TICK_PX = 11
CHAR_PX = 6.2                          # an average glyph width at TICK_PX, for laying out labels
GRID = "#e6e9ef"
DASHES = {"dash": "6,4", "dot": "2,3", "dashdot": "6,3,2,3", "longdash": "10,4"}
LEGEND_ROW_PX = 20
COLORBAR_PX = 70


class Unsupported(Exception):
    """A part of the figure that this drawing does not cover: the caller shows plotly's chart."""


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


# ----------------------------------------------------------------------------------------------------- text
def _esc(text: Any) -> str:
    return html.escape(str(text), quote=True)


def _plain(text: str) -> str:
    """Plotly's rich text as plain text: <br> to a newline, other tags dropped."""
    return re.sub(r"<[^>]+>", "", re.sub(r"<br\s*/?>", "\n", str(text)))


def _d3(value: Any, spec: str) -> str:
    """``value`` in the d3-format ``spec`` that hovertemplates and tick formats use (``.3g``, ``.1%``, ``.2f``,
    ``,``); anything else as plain text."""
    if not isinstance(value, (int, float)) or isinstance(value, bool):
        return str(value)
    m = re.fullmatch(r"(,)?(?:\.(\d+))?([gfe%d])?", spec or "")
    if not m:
        return f"{value:g}"
    comma, digits, kind = m.group(1) or "", m.group(2), m.group(3) or "g"
    if kind == "%":
        return f"{value * 100:{comma}.{digits or 0}f}%"
    if kind == "d":
        return f"{round(value):{comma}d}"
    out = f"{value:{comma}.{digits or 6}{kind}}"
    if kind == "g" and "e" in out:                       # d3 writes 1e+6 as 1e+6, plotly users expect it so
        mant, exp = out.split("e")
        out = f"{mant}e{int(exp):+d}"
    return out


def _number(v: float) -> str:
    """A tick label on a linear axis."""
    if v == 0:
        return "0"
    return f"{v:.6g}"


_SI = [(1e12, "T"), (1e9, "G"), (1e6, "M"), (1e3, "k")]


def _log_label(v: float) -> str:
    """A tick label on a log axis, with the SI prefixes plotly uses above a thousand."""
    for scale, prefix in _SI:
        if v >= scale:
            return f"{v / scale:g}{prefix}"
    return f"{v:g}"


def _hover(template: str | None, point: dict) -> str:
    """A hovertemplate filled for one point: %{x}, %{y:.3g}, %{customdata[0]}, %{text}; <extra>name</extra>
    becomes a second line."""
    if template is None:
        return ""
    extra = re.search(r"<extra>(.*?)</extra>", template)
    body = re.sub(r"<extra>.*?</extra>", "", template)

    def fill(m):
        name, index, spec = m.group(1), m.group(2), m.group(3)
        value = point.get(name)
        if index is not None:
            try:
                value = value[int(index)]
            except (TypeError, IndexError, KeyError):
                value = ""
        return "" if value is None else _d3(value, spec or "")
    # the template's own markup goes first: the values (names from uploaded files among them) stay as written
    text = re.sub(r"%\{(\w+)(?:\[(\d+)\])?(?::([^}]*))?\}", fill, _plain(body))
    if extra and extra.group(1):
        text += f"\n{_plain(extra.group(1))}"
    return text


# ---------------------------------------------------------------------------------------------------- colour
def _colorscale(spec: Any, reverse: bool = False) -> list[tuple[float, tuple[int, int, int]]]:
    if spec is None:
        spec = "Viridis"
    try:
        stops = get_colorscale(spec) if isinstance(spec, str) else spec
    except Exception as exc:           # plotly's own error type for an unknown name
        raise Unsupported(f"colour scale {spec!r}") from exc
    out = [(float(t), _rgb(c)) for t, c in stops]
    return [(1 - t, c) for t, c in reversed(out)] if reverse else out


def _rgb(color: str) -> tuple[int, int, int]:
    color = color.strip()
    if color.startswith("#") and len(color) == 7:
        return int(color[1:3], 16), int(color[3:5], 16), int(color[5:7], 16)
    m = re.fullmatch(r"rgba?\(([^)]*)\)", color)
    if m:
        parts = [float(p) for p in m.group(1).split(",")[:3]]
        return int(parts[0]), int(parts[1]), int(parts[2])
    raise Unsupported(f"colour {color!r}")


def _sample(scale, t: float) -> str:
    t = min(1.0, max(0.0, t))
    for (t0, c0), (t1, c1) in zip(scale, scale[1:]):
        if t <= t1:
            f = 0.0 if t1 == t0 else (t - t0) / (t1 - t0)
            return "rgb({},{},{})".format(*(round(a + (b - a) * f) for a, b in zip(c0, c1)))
    return "rgb({},{},{})".format(*scale[-1][1])


# ------------------------------------------------------------------------------------------------------ axes
def _values(seq) -> list:
    return [] if seq is None else list(seq)


def _nice_step(span: float, count: int = 6) -> float:
    raw = span / max(count, 1)
    power = 10 ** math.floor(math.log10(raw))
    for m in (1, 2, 2.5, 5, 10):
        if m * power >= raw:
            return m * power
    return 10 * power


class _Axis:
    """One axis: where its domain lies on the page and how a value maps to a pixel."""

    def __init__(self, name: str, spec: dict):
        self.name, self.spec = name, spec
        self.kind = spec.get("type") or "-"
        self.visible = spec.get("visible", True) is not False
        self.ticklabels = self.visible and spec.get("showticklabels", True) is not False
        self.domain = spec.get("domain") or [0.0, 1.0]
        self.categories: list[str] = []
        self.lo = self.hi = None
        self.pad = False
        self.p0 = self.p1 = 0.0                     # pixels of the range's low and high ends

    def log(self) -> bool:
        return self.kind == "log"

    def see(self, values, pad: bool) -> None:
        """Let autorange include ``values`` (numbers; strings make it a category axis)."""
        for v in values:
            if v is None or (isinstance(v, float) and math.isnan(v)):
                continue
            if isinstance(v, str):
                if self.kind == "-":
                    self.kind = "category"
                if self.kind != "category":
                    raise Unsupported("text on a numeric axis")
                if v not in self.categories:
                    self.categories.append(v)
                continue
            if self.kind == "category":
                raise Unsupported("a number on a category axis")
            if self.log():
                if v <= 0:
                    continue
                v = math.log10(v)
            self.lo = v if self.lo is None else min(self.lo, v)
            self.hi = v if self.hi is None else max(self.hi, v)
        self.pad = self.pad or pad

    def settle(self) -> None:
        """The range in axis units (log10 for a log axis, the category index for a category one)."""
        given = self.spec.get("range")
        if given is not None and None not in given:
            self.lo, self.hi = float(given[0]), float(given[1])
            return
        if self.kind == "category":
            self.lo, self.hi = -0.5, max(len(self.categories), 1) - 0.5
            return
        if self.lo is None:                       # nothing to show: plotly's empty range (decades 1 to 10 on log)
            self.lo, self.hi = 0.0, 1.0
        if self.hi - self.lo < sys.float_info.min:    # one value, or a span below normal floats (tick steps
            self.lo, self.hi = self.lo - 1, self.hi + 1   # and pixels divided by it underflow): plotly's +-1
        if self.pad:
            extra = 0.06 * (self.hi - self.lo)
            self.lo, self.hi = self.lo - extra, self.hi + extra

    def reversed(self) -> bool:
        return self.spec.get("autorange") == "reversed"

    def unit(self, v) -> float | None:
        if v is None:
            return None
        if isinstance(v, str):
            return float(self.categories.index(v)) if v in self.categories else None
        if self.log():
            return math.log10(v) if v > 0 else None
        return float(v)

    def px(self, v) -> float | None:
        """The pixel of data value ``v`` (None for one the axis cannot show: a gap, a non-positive value on log)."""
        u = self.unit(v)
        return None if u is None else self.px_unit(u)

    def px_unit(self, u: float) -> float:
        a, b = (self.hi, self.lo) if self.reversed() else (self.lo, self.hi)
        return self.p0 + (u - a) / (b - a) * (self.p1 - self.p0)

    def ticks(self, length_px: float) -> list[tuple[float, str]]:
        """(position in axis units, label) of each tick."""
        if self.kind == "category":
            labels = self.categories
            every = max(1, math.ceil(len(labels) * (TICK_PX + 2) / max(length_px, 1)))
            return [(float(i), labels[i]) for i in range(0, len(labels), every)]
        fmt = self.spec.get("tickformat")
        if self.log():
            out = []
            first, last = math.floor(self.lo), math.ceil(self.hi)
            decades = last - first
            mults = (1,) if decades > 3 else (1, 2, 5)
            stride = max(1, math.ceil(decades / 8))
            for k in range(first, last + 1, stride):
                for m in mults:
                    u = k + math.log10(m)
                    if self.lo - 1e-9 <= u <= self.hi + 1e-9:
                        out.append((u, _d3(10 ** u, fmt) if fmt else _log_label(round(m * 10.0 ** k, 12))))
            return out
        step = self.spec.get("dtick") or _nice_step(self.hi - self.lo, max(2, min(8, int(length_px // 70))))
        start = math.ceil(self.lo / step - 1e-9) * step
        out, u = [], start
        while u <= self.hi + 1e-9 * step and len(out) < 50:
            value = round(u, 12)
            out.append((value, _d3(value, fmt) if fmt else _number(value)))
            u += step
        return out

    def title(self) -> str:
        t = self.spec.get("title")
        if isinstance(t, dict):
            t = t.get("text")
        return _plain(t or "")


# --------------------------------------------------------------------------------------------------- drawing
class _Drawing:
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

    # ----------------------------------------------------------------------------------------------- traces
    @staticmethod
    def _mode(trace: dict) -> str:
        mode = trace.get("mode")
        if mode:
            return mode
        return "lines+markers" if len(_values(trace.get("x"))) < 20 else "lines"

    def _color(self, i: int) -> str:
        return (self.layout.get("colorway") or COLORWAY)[i % len(COLORWAY)]

    def _clip(self, xa: _Axis, ya: _Axis) -> tuple[str, str]:
        """(the id of the subplot's clip path, its definition the first time it is asked for, else "")."""
        x0, x1 = sorted((xa.p0, xa.p1))
        y0, y1 = sorted((ya.p0, ya.p1))
        ident = f"{self.ident}-clip-{xa.name}{ya.name}"
        if ident in self.clips:
            return ident, ""
        self.clips.add(ident)
        return ident, (f'<clipPath id="{ident}"><rect x="{x0:.1f}" y="{y0:.1f}" width="{x1 - x0:.1f}" '
                       f'height="{y1 - y0:.1f}"/></clipPath>')

    def _scatter(self, trace: dict, index: int) -> list[str]:
        xa, ya = self.axes[trace.get("xaxis", "x")], self.axes[trace.get("yaxis", "y")]
        xs, ys = _values(trace.get("x")), _values(trace.get("y"))
        mode = self._mode(trace)
        line = trace.get("line") or {}
        marker = trace.get("marker") or {}
        base = line.get("color") or (marker.get("color") if isinstance(marker.get("color"), str) else None) \
            or self._color(index)
        hoverinfo = trace.get("hoverinfo", "all")
        template = trace.get("hovertemplate")
        hovertext = trace.get("hovertext")
        texts = trace.get("text")
        custom = _values(trace.get("customdata"))
        out = []
        pts = [(xa.px(x), ya.px(y)) for x, y in zip(xs, ys)]

        def hover(k: int) -> str:
            if hoverinfo == "skip" or hoverinfo == "none":
                return ""
            if isinstance(hovertext, (list, tuple)):
                return _plain(hovertext[k] if k < len(hovertext) else "")
            if isinstance(hovertext, str):
                return _plain(hovertext)
            point = {"x": xs[k], "y": ys[k],
                     "text": texts[k] if isinstance(texts, (list, tuple)) and k < len(texts) else texts,
                     "customdata": custom[k] if k < len(custom) else None}
            if template:
                return _hover(template if isinstance(template, str) else template[k], point)
            if hoverinfo == "text":
                return _plain(point["text"] or "")
            return f"{trace.get('name') or ''} ({xs[k]}, {ys[k]})".strip()

        if "lines" in mode:
            ident, clip = self._clip(xa, ya)
            d, pen = [], "M"
            for p in pts:
                if p[0] is None or p[1] is None:
                    pen = "M"
                    continue
                d.append(f"{pen}{p[0]:.1f},{p[1]:.1f}")
                pen = "L"
            width = line.get("width", 2)
            dash = DASHES.get(line.get("dash") or "")
            title = hover(0) if (hovertext is not None and isinstance(hovertext, str)) else ""
            out.append(clip + f'<path d="{"".join(d)}" fill="none" stroke="{_esc(base)}" stroke-width="{width}"'
                       + (f' stroke-dasharray="{dash}"' if dash else "")
                       + f' clip-path="url(#{ident})" stroke-linejoin="round">'
                       + (f"<title>{_esc(title)}</title>" if title else "") + "</path>")
            self.count += 1
        if "markers" in mode:
            out += self._markers(trace, pts, marker, base, hover)
        if "text" in mode and texts is not None:
            font = trace.get("textfont") or {}
            size = font.get("size") or 12
            fill = font.get("color") or TEXT_COLOR
            position = trace.get("textposition") or "middle center"
            if not isinstance(position, str):
                raise Unsupported("a text position per point")
            dy = {"top": -(size * 0.9), "bottom": size * 1.2}.get(position.split()[0], size * 0.35)
            anchor = {"left": "end", "right": "start"}.get(position.split()[-1], "middle")
            for k, (px, py) in enumerate(pts):
                t = texts[k] if isinstance(texts, (list, tuple)) else texts
                if px is None or py is None or t in (None, ""):
                    continue
                title = hover(k) if "markers" not in mode else ""
                out.append(f'<text x="{px:.1f}" y="{py + dy:.1f}" text-anchor="{anchor}" font-size="{size}" '
                           f'fill="{_esc(fill)}"' + (' pointer-events="none"' if "markers" in mode else "") + ">"
                           + (f"<title>{_esc(title)}</title>" if title else "") + f"{_esc(_plain(t))}</text>")
                self.count += 1
        return out

    def _markers(self, trace: dict, pts, marker: dict, base: str, hover) -> list[str]:
        out = []
        sizes, colors = marker.get("size", 6), marker.get("color", base)
        symbols, angles = marker.get("symbol", "circle"), marker.get("angle", 0)
        opacity = marker.get("opacity", 1)
        if not isinstance(opacity, (int, float)):
            raise Unsupported("an opacity per point")
        edge = marker.get("line") or {}
        numeric = isinstance(colors, (list, tuple)) and any(isinstance(c, (int, float)) for c in colors)
        if numeric:
            scale = _colorscale(marker.get("colorscale"), bool(marker.get("reversescale")))
            vals = [c for c in colors if isinstance(c, (int, float))]
            cmin = marker.get("cmin", min(vals))
            cmax = marker.get("cmax", max(vals))

        def pick(v, k):
            return v[k] if isinstance(v, (list, tuple)) else v
        for k, (px, py) in enumerate(pts):
            if px is None or py is None:
                continue
            size, symbol, angle = float(pick(sizes, k)), pick(symbols, k), float(pick(angles, k) or 0)
            color = pick(colors, k)
            if numeric:
                color = _sample(scale, (color - cmin) / ((cmax - cmin) or 1))
            open_ = str(symbol).endswith("-open")
            shape = str(symbol).removesuffix("-open")
            paint = (f'fill="none" stroke="{_esc(color)}" stroke-width="{edge.get("width", 1) or 1}"' if open_
                     else f'fill="{_esc(color)}"' + (f' stroke="{_esc(edge["color"])}" stroke-width='
                                                    f'"{edge.get("width", 1)}"' if edge.get("color") and
                                                    edge.get("width") else ""))
            if opacity != 1:
                paint += f' fill-opacity="{opacity}" stroke-opacity="{opacity}"'
            r = size / 2
            title = hover(k)
            tip = f"<title>{_esc(title)}</title>" if title else ""
            if shape == "circle":
                el = f'<circle cx="{px:.1f}" cy="{py:.1f}" r="{r:.1f}" {paint}>{tip}</circle>'
            elif shape == "square":
                el = f'<rect x="{px - r:.1f}" y="{py - r:.1f}" width="{size:.1f}" height="{size:.1f}" {paint}>{tip}</rect>'
            elif shape in ("arrow", "triangle-up", "diamond"):
                shapes = {"arrow": f"M0,{-r:.1f}L{r:.1f},{r:.1f}L{-r:.1f},{r:.1f}Z",
                          "triangle-up": f"M0,{-r:.1f}L{r:.1f},{r * 0.7:.1f}L{-r:.1f},{r * 0.7:.1f}Z",
                          "diamond": f"M0,{-r:.1f}L{r:.1f},0L0,{r:.1f}L{-r:.1f},0Z"}
                el = (f'<path transform="translate({px:.1f},{py:.1f}) rotate({angle:.1f})" d="{shapes[shape]}" '
                      f'{paint}>{tip}</path>')
            else:
                raise Unsupported(f"marker symbol {symbol!r}")
            out.append(el)
            self.count += 1
        return out

    def _heatmap(self, trace: dict) -> list[str]:
        xa, ya = self.axes[trace.get("xaxis", "x")], self.axes[trace.get("yaxis", "y")]
        z = [list(row) for row in _values(trace.get("z"))]
        values = [v for row in z for v in row if isinstance(v, (int, float))]
        zmin = trace.get("zmin", min(values, default=0.0))
        zmax = trace.get("zmax", max(values, default=1.0))
        scale = _colorscale(trace.get("colorscale"), bool(trace.get("reversescale")))
        xgap, ygap = trace.get("xgap") or 0, trace.get("ygap") or 0
        texts = trace.get("text")
        template = trace.get("hovertemplate")
        out = []
        cw = abs(xa.px_unit(1) - xa.px_unit(0))
        ch = abs(ya.px_unit(1) - ya.px_unit(0))
        for r, row in enumerate(z):
            for c, v in enumerate(row):
                if not isinstance(v, (int, float)):
                    continue
                x, y = xa.px_unit(c), ya.px_unit(r)
                point = {"x": xa.categories[c] if c < len(xa.categories) else c,
                         "y": ya.categories[r] if r < len(ya.categories) else r, "z": v,
                         "text": texts[r][c] if isinstance(texts, (list, tuple)) else texts}
                title = _hover(template, point) if template else f"{point['x']}, {point['y']}: {v:g}"
                color = _sample(scale, (v - zmin) / ((zmax - zmin) or 1))
                out.append(f'<rect x="{x - cw / 2 + xgap / 2:.1f}" y="{y - ch / 2 + ygap / 2:.1f}" '
                           f'width="{max(cw - xgap, 0.5):.1f}" height="{max(ch - ygap, 0.5):.1f}" fill="{color}">'
                           f"<title>{_esc(title)}</title></rect>")
                self.count += 1
        return out

    def _colorbar(self, trace: dict, x: float, top: float, h: float) -> list[str]:
        z = [v for row in _values(trace.get("z")) for v in row if isinstance(v, (int, float))]
        zmin = trace.get("zmin", min(z, default=0.0))
        zmax = trace.get("zmax", max(z, default=1.0))
        scale = _colorscale(trace.get("colorscale"), bool(trace.get("reversescale")))
        bar = trace.get("colorbar") or {}
        title = bar.get("title")
        title = _plain((title.get("text") if isinstance(title, dict) else title) or "")
        fmt = bar.get("tickformat")
        stops = "".join(f'<stop offset="{t:.3f}" stop-color="rgb({c[0]},{c[1]},{c[2]})"/>' for t, c in scale)
        ident = f"{self.ident}-colorbar"
        out = [f'<defs><linearGradient id="{ident}" x1="0" y1="1" x2="0" y2="0">{stops}</linearGradient></defs>',
               f'<rect x="{x:.1f}" y="{top + 18:.1f}" width="14" height="{h - 18:.1f}" fill="url(#{ident})"/>']
        if title:
            out.append(f'<text x="{x:.1f}" y="{top + 10:.1f}" font-size="12" fill="{TEXT_COLOR}">{_esc(title)}</text>')
        for v in (zmin, (zmin + zmax) / 2, zmax):
            y = top + 18 + (h - 18) * (1 - (v - zmin) / ((zmax - zmin) or 1))
            label = _d3(v, fmt) if fmt else f"{v:.3g}"
            out.append(f'<text x="{x + 18:.1f}" y="{y + 4:.1f}" font-size="{TICK_PX}" fill="{TEXT_COLOR}">'
                       f"{_esc(label)}</text>")
        return out

    # ----------------------------------------------------------------------------------------------- legend
    def _legend_items(self) -> list[tuple[str, dict]]:
        candidates = [t for t in self.data if t.get("type", "scatter") == "scatter"
                      and t.get("showlegend", True) is not False and t.get("name")]
        show = self.layout.get("showlegend")
        if show is False or (show is None and len(candidates) < 2):
            return []
        return [(str(t["name"]), t) for t in candidates]

    def _legend_rows(self, items, width: float) -> list[list]:
        rows, row, used = [], [], 0.0
        for name, trace in items:
            w = 40 + CHAR_PX * len(name)
            if row and used + w > width:
                rows.append(row)
                row, used = [], 0.0
            row.append((name, trace, w))
            used += w
        return rows + ([row] if row else [])

    def _swatch(self, trace: dict, x: float, y: float, index: int) -> str:
        mode = self._mode(trace)
        line = trace.get("line") or {}
        marker = trace.get("marker") or {}
        color = line.get("color") or (marker.get("color") if isinstance(marker.get("color"), str) else None) \
            or self._color(index)
        out = ""
        if "lines" in mode:
            dash = DASHES.get(line.get("dash") or "")
            out += (f'<line x1="{x:.1f}" y1="{y:.1f}" x2="{x + 24:.1f}" y2="{y:.1f}" stroke="{_esc(color)}" '
                    f'stroke-width="2"' + (f' stroke-dasharray="{dash}"' if dash else "") + "/>")
        if "markers" in mode:
            symbol = str(marker.get("symbol") if isinstance(marker.get("symbol"), str) else "circle")
            paint = f'fill="none" stroke="{_esc(color)}" stroke-width="2"' if symbol.endswith("-open") else \
                f'fill="{_esc(color)}"'
            if symbol.startswith("square"):
                out += f'<rect x="{x + 7:.1f}" y="{y - 5:.1f}" width="10" height="10" {paint}/>'
            else:
                out += f'<circle cx="{x + 12:.1f}" cy="{y:.1f}" r="5" {paint}/>'
        return out

    def _legend_h(self, items, left: float, top: float) -> list[str]:
        out = []
        for r, row in enumerate(self._legend_rows(items, self.width - 20)):
            x, y = 10.0, top + r * LEGEND_ROW_PX + 8
            for name, trace, w in row:
                out.append(self._swatch(trace, x, y, self.data.index(trace)))
                out.append(f'<text x="{x + 30:.1f}" y="{y + 4:.1f}" font-size="12" fill="{TEXT_COLOR}">'
                           f"{_esc(name)}</text>")
                x += w
        return out

    def _legend_v(self, items, x: float, top: float) -> list[str]:
        out = []
        for k, (name, trace) in enumerate(items):
            y = top + 8 + k * LEGEND_ROW_PX
            out.append(self._swatch(trace, x, y, self.data.index(trace)))
            out.append(f'<text x="{x + 30:.1f}" y="{y + 4:.1f}" font-size="12" fill="{TEXT_COLOR}">'
                       f"{_esc(name)}</text>")
        return out
