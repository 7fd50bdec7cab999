"""The traces of an SVG drawing (``studio.figures.svg``): scatter lines, markers and text, heatmaps with their
colour bar, and the legend, as a mixin of the drawing class so that each part stays a small module."""
from __future__ import annotations

from studio.figures.svg_axis import _Axis
from studio.figures.svg_format import (CHAR_PX, COLORWAY, DASHES, LEGEND_ROW_PX, TEXT_COLOR, TICK_PX, _colorscale,
                                       _d3, _esc, _hover, _plain, _sample, Unsupported, _values)


class _Marks:
    """Traces and legend of ``_Drawing``, which supplies ``self.data``, ``self.layout``, ``self.ident`` and the
    axes."""

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
