"""One axis of an SVG drawing (``studio.figures.svg``): its range from the data, linear, log or category scale,
pixel positions and ticks, as plotly lays them out."""
from __future__ import annotations

import math
import sys

from studio.figures.svg_format import TICK_PX, Unsupported, _d3, _log_label, _nice_step, _number, _plain


# ------------------------------------------------------------------------------------------------------ axes
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


