"""Constants, text, number and colour formatting shared by the server's SVG drawings (``studio.figures.svg``):
escaping, d3-style number formats, log-axis labels, hover templates and colour scales, as plotly renders them."""
from __future__ import annotations

import html
import math
import re
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


def _values(seq) -> list:
    return [] if seq is None else list(seq)


def _nice_step(span: float, count: int = 6) -> float:
    raw = span / max(count, 1)
    power = 10 ** math.floor(math.log10(raw))
    for m in (1, 2, 2.5, 5, 10):
        if m * power >= raw:
            return m * power
    return 10 * power
