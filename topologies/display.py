"""Names as people read them: the TeX-like markup of a topology's name (``Π_{4,64}``, ``K_{2,2}``, ``L^2(G)``,
``G^{□2}``) drawn with Unicode sub- and superscripts (``Π₄,₆₄``, ``K₂,₂``, ``L²(G)``, ``G□²``).

``Topology.name`` stays machine text (it is what expressions, cache keys, files, JSON fields and the CLI write);
``math_name`` is for the places a name is shown: page tables, figure legends, titles and hover text, buttons and
captions. The rules, in the order they apply:

* a braced group ``_{...}`` or ``^{...}`` becomes sub- or superscript characters when every character in it has
  one (digits, ``+ - = ( )``, and the letters Unicode has: subscript ``a e h i j k l m n o p r s t u v x``, most
  lower-case and many upper-case superscripts). A comma stays a plain comma between the scripted parts
  (``K_{2,2}`` -> ``K₂,₂``; Unicode has no subscript comma), and a superscript that starts with a product
  sign keeps the sign on the line (``^{□2}`` -> ``□²``: the paper's Cartesian power, Def 14);
* a group with a character that has no such form (``_{q}``, ``_{d+1}`` with a ``d``, a space) is left exactly as
  written: the braces still read as TeX, and half-scripted text would read as neither;
* a bare ``_12`` or ``^2`` after a one-letter symbol (``K_5``, ``Q_3``, ``L^2(``) is scripted too, and a bare
  ``^2`` or ``^T`` after a closing parenthesis (``(G)^T``, the transpose of the bidirectional expansion); a bare
  ``_`` inside a word (``fabric_2.xml``, ``gm_p_x``) is not markup and stays.

The function is idempotent (a shown name shown again is unchanged), keeps every digit in order (NFKC maps each
scripted digit back to itself), and leaves text without markup unchanged.
"""
from __future__ import annotations

import re

_SUB = dict(zip("0123456789+-−=()aehijklmnoprstuvx",
                "₀₁₂₃₄₅₆₇₈₉₊₋₋₌₍₎ₐₑₕᵢⱼₖₗₘₙₒₚᵣₛₜᵤᵥₓ"))
_SUP = dict(zip("0123456789+-−=()abcdefghijklmnoprstuvwxyzABDEGHIJKLMNOPRTUVW",
                "⁰¹²³⁴⁵⁶⁷⁸⁹⁺⁻⁻⁼⁽⁾ᵃᵇᶜᵈᵉᶠᵍʰⁱʲᵏˡᵐⁿᵒᵖʳˢᵗᵘᵛʷˣʸᶻᴬᴮᴰᴱᴳᴴᴵᴶᴷᴸᴹᴺᴼᴾᴿᵀᵁⱽᵂ"))
for _table in (_SUB, _SUP):                      # an already scripted character is its own form
    _table.update({v: v for v in list(_table.values())})
_PRODUCTS = "□∗×⊗"                                # signs a superscript may start with, kept on the line
_KEEP = ","                                       # separators kept plain between scripted parts

_GROUP = re.compile(r"([_^])\{([^{}]*)\}")
_SYMBOL = r"(?<![\w.])[^\W\d_]"                   # a one-letter symbol: a letter not inside a word
_BARE_SUB = re.compile(rf"({_SYMBOL})_(\d+)(?![\w])")
_BARE_SUP = re.compile(rf"({_SYMBOL}|\))\^(\d+|[{''.join(k for k in _SUP if k.isalpha() and k.isascii())}])(?![\w])")


def _script(text: str, table: dict[str, str], lead: str = "") -> str | None:
    """``text`` in the characters of ``table`` (``lead``: signs allowed, unscripted, at its start), or None when
    some character has no form or nothing would be scripted."""
    head = len(text) - len(text.lstrip(lead)) if lead else 0
    body = text[head:]
    if not body or not any(c in table for c in body):
        return None
    if any(c not in table and c not in _KEEP for c in body):
        return None
    return text[:head] + "".join(table.get(c, c) for c in body)


def _group(match: re.Match) -> str:
    kind, inner = match.group(1), match.group(2)
    scripted = _script(inner, _SUB) if kind == "_" else _script(inner, _SUP, _PRODUCTS)
    return match.group(0) if scripted is None else scripted


def _bare(table: dict[str, str]):
    def replace(match: re.Match) -> str:
        return match.group(1) + "".join(table[c] for c in match.group(2))
    return replace


def math_name(text: str) -> str:
    """``text`` (a topology's name, or a label that holds names) with its sub- and superscript markup drawn as
    Unicode (the module docstring gives the rules). Idempotent; text without markup comes back unchanged."""
    if not isinstance(text, str) or ("_" not in text and "^" not in text):
        return text
    out = text
    while True:                                   # innermost groups first, until nothing changes
        new = _GROUP.sub(_group, out)
        new = _BARE_SUP.sub(_bare(_SUP), _BARE_SUB.sub(_bare(_SUB), new))
        if new == out:
            return out
        out = new


def math_names(values) -> list:
    """``math_name`` of each of ``values`` (non-text values pass unchanged): a table column or trace labels."""
    return [math_name(v) for v in values]
