"""Names drawn as math (issue 59, finding 8): ``topologies.display.math_name`` turns the TeX-like markup of a
topology's name into Unicode sub- and superscripts, and the pages show names through it; the frontier figure's
labels sit off the line that joins its points, and the Learn page's M marker clears the crossover labels."""
import json
import math
import re
import unicodedata

import pytest
from hypothesis import assume, given, settings, strategies as st

from topologies.display import math_name
from topologies.expression import ExpressionError, parse_topology

RAW = re.compile(r"_\{|\^\{|\^\d|(?<![\w.])[^\W\d_]_\d")        # markup a reader should never see


def digits(text: str) -> list[int]:
    """The decimal digits of ``text`` in order, scripted or not (NFKC maps ₄ and ⁴ to 4)."""
    return [int(c) for c in unicodedata.normalize("NFKC", text) if c.isdigit()]


# ---------------------------------------------------------------------------------------- the function itself
@pytest.mark.parametrize("raw, shown", [
    ("Π_{4,64}", "Π₄,₆₄"), ("K_{2,2}", "K₂,₂"), ("K_5", "K₅"), ("K_{10}", "K₁₀"), ("Q_3", "Q₃"),
    ("L^2(DBJMod(2,4))", "L²(DBJMod(2,4))"), ("DBJMod(2,4)^{□2}", "DBJMod(2,4)□²"),
    ("(UniRing(1,4)□UniRing(1,8))^{□2}", "(UniRing(1,4)□UniRing(1,8))□²"), ("K_{5,5}−I", "K₅,₅−I"),
    ("D(O_3)", "D(O₃)"), ("L^2(K(2,1))∪L^2(K(2,1))^T", "L²(K(2,1))∪L²(K(2,1))ᵀ"),
    ("C(64,{6,7})", "C(64,{6,7})"), ("Torus(4×4)", "Torus(4×4)"),
])
def test_the_papers_names(raw, shown):
    assert math_name(raw) == shown


@pytest.mark.parametrize("text", ["fabric_2.xml", "gm_p_x", "tb_factor", "T_L / alpha", "10^6 bytes", "K_{q}",
                                  "M_{d,k}", ""])
def test_what_is_not_markup_or_has_no_unicode_form_stays(text):
    """A ``_`` inside a word is not markup; a group with a letter Unicode cannot script stays TeX (documented)."""
    assert math_name(text) == text


def test_non_text_passes_through():
    assert math_name(None) is None and math_name(3) == 3


@given(st.text(alphabet=st.sampled_from(list("KLΠQ_^{}()□,−∪T0123456789abdnqx .")), max_size=30))
@settings(max_examples=400, deadline=None)
def test_idempotent_and_digits_kept_in_order_on_any_text(text):
    shown = math_name(text)
    assert math_name(shown) == shown
    assert digits(shown) == digits(text)


# a small grammar of the studio's own designs: every family and expansion whose name carries markup
_BASES = st.sampled_from(["complete(3)", "complete(4)", "complete(10)", "bipartite(2)", "bipartite(3)",
                          "gkautz(2,5)", "gkautz(4,16)", "gkautz(3,10)", "hypercube(3)", "hamming(2,3)", "crown(4)",
                          "diamond()", "dbjmod(2,3)", "circulant(8,[1,2])", "uniring(1,4)", "kautz(2,1)",
                          "odd_graph(3)", "paley(9)"])


def _expand(inner):
    return st.one_of(
        st.builds(lambda g, n: f"line({g},{n})", inner, st.integers(1, 2)),
        st.builds(lambda g: f"power({g},2)", inner),
        st.builds(lambda g, n: f"degree({g},{n})", inner, st.integers(2, 3)),
        st.builds(lambda g: f"bidir({g})", inner),
        st.builds(lambda g, h: f"product({g},{h})", inner, inner))


_SMALL = 300                                                 # nodes; larger draws are skipped, not built


@given(st.recursive(_BASES, _expand, max_leaves=3))
@settings(max_examples=60, deadline=None)
def test_names_the_studio_makes_show_no_markup(expr):
    try:
        name = parse_topology(expr, max_nodes=_SMALL).name
    except ExpressionError:                                    # above the size cap, or an expansion refused
        assume(False)
    shown = math_name(name)
    assert not RAW.search(shown), (expr, name, shown)
    assert digits(shown) == digits(name)
    assert math_name(shown) == shown


# ------------------------------------------------------------------------------ the frontier figure's labels
# The test's own estimate of what plotly draws (not the figure module's constants): 12 px labels at most 7 px a
# character and 15 px a line, beside markers 11 px wide; the plot is the figure less 60 px across for the y axis and
# 170 px up for the title, the x axis and the legend.
CHAR_PX, LINE_PX, MARKER_PX = 7.0, 15.0, 11.0
LABEL_CHAR = 6.5          # an 11 px annotation's glyphs


def _label_box(x, y, text, position, sx, sy, marker_px=MARKER_PX):
    """The box a label takes beside its marker (plotly sets it off by the marker's own size)."""
    w, h, rx, ry = len(text) * CHAR_PX / sx, LINE_PX / sy, marker_px / 2 / sx, marker_px / 2 / sy
    vertical, across = position.split()
    x0 = {"right": x + rx, "left": x - rx - w, "center": x - w / 2}[across]
    y0 = {"top": y + ry, "bottom": y - ry - h, "middle": y - h / 2}[vertical]
    return x0, x0 + w, y0, y0 + h


def _meets(a, b) -> bool:
    """Whether two boxes (x0, x1, y0, y1), either possibly a segment, share an inner point."""
    return a[0] < b[1] and b[0] < a[1] and a[2] < b[3] and b[2] < a[3]


@pytest.mark.parametrize("n, d, width", [(64, 4, 390), (64, 4, 800), (1024, 4, 800), (64, 2, 390), (64, 2, 800),
                                         (256, 4, 390), (256, 4, 800), (16, 4, 390), (32, 2, 800), (32, 2, 390),
                                         (128, 4, 390), (512, 4, 800)])
def test_frontier_labels_clear_the_line_the_markers_and_each_other(n, d, width):
    """Finding 8: the frontier's dotted line struck through 'C(64,{6,7})' (Finder, Learn step 4). Every label's box
    stays off every segment of the stepped line (across at a point's level, then down to the next point), off
    every marker (points, the star, the bound) and off the other labels, inside the axis ranges."""
    from solvers.directconnect.finder import bound, find
    from studio.figures.curves import frontier_figure

    rows = [c.as_dict() for c in find(n, d)]
    times = [r["steps"] * 10 + float(r["tb_factor"]) * 80 for r in rows]
    best = times.index(min(times))
    spec = json.loads(frontier_figure(rows, bound(n, d), best, width_px=width).to_json())
    line = spec["data"][0]
    xs, ys, texts, positions = line["x"], line["y"], line["text"], line["textposition"]
    assert texts == [math_name(r["name"]) for r in rows] and not any(RAW.search(t) for t in texts)
    all_x, all_y = xs + [t["x"][0] for t in spec["data"][1:]], ys + [t["y"][0] for t in spec["data"][1:]]
    pad = 0.05 * (max(all_y) - min(all_y))                   # plotly's own ranges where the figure sets none
    x_lo, x_hi = spec["layout"]["xaxis"].get("range", (min(all_x) - 0.5, max(all_x) + 0.5))
    y_lo, y_hi = spec["layout"]["yaxis"].get("range", (min(all_y) - pad, max(all_y) + pad))
    sx, sy = (width - 60) / (x_hi - x_lo), (440 - 170) / (y_hi - y_lo)
    segments = []
    for (x0, y0), (x1, y1) in zip(zip(xs, ys), zip(xs[1:], ys[1:])):
        segments += [(x0, x1, y0, y0), (x1, x1, y1, y0)]
    markers = [(t["x"][0], t["y"][0], t["marker"]["size"]) for t in spec["data"][1:]]
    sizes = line["marker"]["size"] if isinstance(line["marker"]["size"], list) else [line["marker"]["size"]] * len(xs)
    markers += [(x, y, s) for x, y, s in zip(xs, ys, sizes)]
    boxes = [_label_box(x, y, t, p, sx, sy, s) for x, y, t, p, s in zip(xs, ys, texts, positions, sizes)]
    for i, box in enumerate(boxes):
        for seg in segments:
            assert not _meets(box, seg), (texts[i], positions[i], seg)
        for x, y, size in markers:
            mark = (x - size / 2 / sx, x + size / 2 / sx, y - size / 2 / sy, y + size / 2 / sy)
            assert not _meets(box, mark), (texts[i], positions[i], (x, y))
        for j in range(i):
            assert not _meets(box, boxes[j]), (texts[i], texts[j])
        assert x_lo <= box[0] and box[1] <= x_hi and y_lo <= box[2] and box[3] <= y_hi, (texts[i], box)


# ------------------------------------------------------------- the M marker against the crossovers' labels
def _learn_step4_inputs(n: int, d: int):
    """Learn step 4's curves and crossovers for N, d at the sidebar's default prices (alpha 10 µs, B 12.5 GB/s),
    computed here as the page computes them."""
    from solvers.directconnect.finder import find
    from solvers.directconnect.selection import best_index, step_model_time_us
    from studio.views.learn_common import FRONTIER_SIZES

    rows = [c.as_dict() for c in find(n, d)]

    def times(m):
        return [step_model_time_us(r["steps"], r["tb_factor"], 10.0, m, 12.5, "allreduce") for r in rows]
    series = {r["name"]: [times(m)[i] for m in FRONTIER_SIZES] for i, r in enumerate(rows)}
    fine = [10 ** (k / 40) for k in range(120, 401)]
    winners = [best_index(times(m)) for m in fine]
    changes = [(fine[i], f"→ {rows[w]['name']}<br>≈ {fine[i]:.2g} B") for i, w in enumerate(winners)
               if i and w != winners[i - 1]]
    return FRONTIER_SIZES, series, changes


@pytest.mark.parametrize("n, d, size", [(64, 4, 1e6), (64, 4, 3e5), (1024, 4, 1e6), (1024, 4, 3.16e7),
                                        (64, 2, 1e5)])
def test_the_m_marker_clears_every_crossover_label(n, d, size):
    """Finding 8: on Learn step 4 the workload's M line (red) ran through a crossover's label at the top. The M
    line now ends below every top label whose estimated span it would cross, and its own label at the bottom is
    on a side no crossover line crosses where one exists."""
    from studio.figures.learn import size_curves_figure

    sizes, series, changes = _learn_step4_inputs(n, d)
    assert changes, "the frontier's winner changes between 1 KB and 10 GB"
    fig = size_curves_figure(sizes, series, marker=size, crossovers=changes, width_px=390)
    spec = json.loads(fig.to_json())
    lo, hi = spec["layout"]["xaxis"].get("range", (math.log10(min(sizes)), math.log10(max(sizes))))
    per_px = (hi - lo) / (390 - 80)
    plot_px = spec["layout"]["height"] - 160
    m_line = next(s for s in spec["layout"]["shapes"] if s["line"]["color"] == "#d62728")
    m_line.setdefault("y1", 1.0)
    at = math.log10(size)
    notes = spec["layout"]["annotations"]
    for note in notes:
        if note["yanchor"] != "top":
            continue
        width = max(len(part) for part in note["text"].split("<br>")) * LABEL_CHAR + 6
        x0 = note["x"] if note["xanchor"] == "left" else note["x"] - width * per_px
        if x0 < at < x0 + width * per_px:
            bottom = 1.0 - (-note.get("yshift", 0) + LINE_PX * (note["text"].count("<br>") + 1)) / plot_px
            assert m_line["y1"] <= bottom, (note["text"], m_line["y1"], bottom)
        assert not RAW.search(note["text"])
    m_note = next(n for n in notes if n["yanchor"] == "bottom")
    width = len(m_note["text"]) * LABEL_CHAR * per_px
    span = (at, at + width) if m_note["xanchor"] == "left" else (at - width, at)
    crossing = [math.log10(x) for x, _ in changes if span[0] < math.log10(x) < span[1]]
    other = (at - width, at) if m_note["xanchor"] == "left" else (at, at + width)
    if crossing:       # crossed on its side only when the other side is crossed too, or runs off the axis
        assert any(other[0] < math.log10(x) < other[1] for x, _ in changes) or other[0] < lo or other[1] > hi
    assert not any(RAW.search(t["name"]) for t in spec["data"])


# ----------------------------------------------------------------------------------- the pages, through AppTest
def _shown_text(at) -> list[str]:
    """Every piece of text the page shows that may hold a design's name: table cells and headers, the charts'
    titles, legends, point labels, hover text and annotations, metrics, select options, buttons, messages and
    captions."""
    from .conftest import shown_metrics

    out: list[str] = []
    for frame in at.dataframe:
        df = frame.value
        out += [str(c) for c in df.columns]
        for col in df.columns:
            out += [v for v in df[col] if isinstance(v, str)]
    for chart in at.get("plotly_chart"):
        spec = json.loads(chart.proto.spec)
        title = spec["layout"].get("title")
        out.append(title.get("text", "") if isinstance(title, dict) else str(title or ""))
        out += [a.get("text", "") for a in spec["layout"].get("annotations", [])]
        for t in spec["data"]:
            out += [t.get("name") or "", t.get("hovertemplate") or ""]
            text = t.get("text")
            out += [text] if isinstance(text, str) else [v for v in (text or []) if isinstance(v, str)]
    out += [f"{m.label} {m.value}" for m in shown_metrics(at)]
    for box in at.selectbox:
        out += [str(o) for o in box.options]
    out += [b.label for b in at.button]
    for kind in ("success", "info", "caption", "markdown", "subheader", "header"):
        out += [e.value for e in getattr(at, kind)]
    return out


def _raw(at) -> list[str]:
    return [t for t in _shown_text(at) if RAW.search(t) or "^2(" in t]


def test_the_finder_shows_names_as_math():
    """Finder at N = 64, d = 4 (Π_{4,64}) and N = 32, d = 2 (L^2(Diamond), L(UniRing(1,4)^{□2})): the table, the
    frontier's labels and hover, the recommendation, the design picker and the sweep show no raw markup."""
    from streamlit.testing.v1 import AppTest

    from .conftest import ROOT, switch_page

    at = switch_page(AppTest.from_file(str(ROOT / "app.py"), default_timeout=240).run(), "finder").run()
    assert not at.exception
    assert "Π₄,₆₄" in list(at.dataframe[0].value["design"]) and not _raw(at), _raw(at)
    at.number_input(key="f_d").set_value(2).run()
    at.number_input(key="f_n").set_value(32).run()
    assert not at.exception
    designs = list(at.dataframe[0].value["design"])
    assert designs == ["L²(Diamond)", "L(DBJMod(2,4))", "L(UniRing(1,4)□²)"], designs
    assert list(at.dataframe[0].value["expression"])[0] == "line(diamond(),2)"      # machine text stays
    spec = json.loads(at.get("plotly_chart")[0].proto.spec)
    assert spec["data"][0]["text"] == designs
    assert not _raw(at), _raw(at)


def test_the_learn_page_shows_names_as_math():
    """Every step of Learn: tables, legends, chart titles, metrics, buttons and captions show no raw markup
    (K_{2,2}, Π_{4,64}, L^2(...) among the designs it names at its defaults)."""
    from streamlit.testing.v1 import AppTest

    from .conftest import ROOT, switch_page

    at = switch_page(AppTest.from_file(str(ROOT / "app.py"), default_timeout=240).run(), "learn").run()
    assert not at.exception and not at.error
    shown = _shown_text(at)
    assert any("K₂,₂" in t for t in shown) and any("Π₄,₆₄" in t for t in shown)
    assert not _raw(at), _raw(at)
    at.radio(key="l_line_n").set_value(2).run()                     # L^2(K_{2,2}) in step 3
    at.select_slider(key="l_front_n").set_value(1024).run()           # L^3(C(16,{3,4})) in step 4
    assert not at.exception
    shown = _shown_text(at)
    assert any("L²(K₂,₂)" in t for t in shown) and any("L³(C(16,{3,4}))" in t for t in shown)
    assert not _raw(at), _raw(at)
