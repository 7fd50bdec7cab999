"""Names drawn as math (issue 59, finding 8): ``topologies.display.math_name`` turns the TeX-like markup of a
topology's name into Unicode sub- and superscripts, and the pages show names through it; the frontier figure's
labels sit off the line that joins its points, and the Learn page's M marker clears the crossover labels."""
import json
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
