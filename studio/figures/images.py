"""Static images of figures (PNG, SVG) through kaleido and Debian's chromium, and the pages' render buttons."""
from __future__ import annotations

import plotly.graph_objects as go


class ImageError(RuntimeError):
    """A figure could not be rendered as an image (one line: kaleido needs a Chromium it can start)."""


def figure_bytes(fig: go.Figure, fmt: str) -> bytes:
    """The figure as PNG or SVG through kaleido (which drives Debian's chromium); ImageError when kaleido cannot
    render it (no Chromium on this machine, or one that does not start)."""
    if fmt not in ("png", "svg"):
        raise ValueError(f"unknown image format {fmt!r}")
    import kaleido

    try:
        # mathjax False: kaleido would otherwise load MathJax from a CDN (the studio draws no LaTeX; plotly's own
        # "mathjax = False" default is dropped before kaleido sees it); plotly.js comes from the installed package
        return kaleido.calc_fig_sync(fig.to_dict(), opts=dict(format=fmt, width=1000,
                                                              height=int(fig.layout.height or 520),
                                                              scale=1 if fmt == "svg" else 2),
                                     kopts={"mathjax": False})
    except Exception as exc:              # kaleido's own errors: a missing or failing browser, mostly
        why = (str(exc).strip().splitlines() or [type(exc).__name__])[0][:200]
        raise ImageError(f"static images need Chromium for kaleido (Debian package chromium); {why}") from None


def render_images(images: dict, key: str, figures: dict) -> None:
    """A render button's callback: each of ``figures`` (name -> figure) as PNG and SVG into ``images`` under
    "name.png" / "name.svg", with ``images["key"] = key``; when they cannot be rendered, only ``images["error"]``
    (its one-line message) and no key, so the page says why and keeps the button."""
    try:
        rendered = {f"{name}.{fmt}": figure_bytes(fig, fmt) for name, fig in figures.items() for fmt in ("png", "svg")}
    except ImageError as exc:
        images.clear()
        images["error"] = str(exc)
        return
    images.clear()
    images.update(key=key, **rendered)
