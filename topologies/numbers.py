"""The numbers of topology files: every ``bandwidth`` and ``alpha`` of a JSON or GraphML topology is read here
(``read_number``), bounded before any Fraction is built.

Units are the model's (topologies/model.py): bandwidth in GB/s, alpha in microseconds. Each field has a stated
physical range, checked exactly:

- ``bandwidth``: 0.001 to 10,000,000 GB/s (1 MB/s to 10 PB/s); zero and negative bandwidths are named as such;
- ``alpha``: 0, or 0.000001 to 1,000,000 microseconds (1 ps to 1 s); a negative alpha is named as such.

What is read: an int (not a bool); a finite float (through its shortest text, so ``0.1`` is ``1/10``); a
Fraction; and text (a GraphML value, a JSON string, or a JSON number kept as its text by ``Written``): ASCII
decimal ``[+-]digits[.digits][e[+-]digits]`` or a ratio ``[+-]digits/digits``, white space around it allowed.
Before the value is built the text is bounded: at most ``MAX_TEXT`` characters, at most ``MAX_DIGITS``
significant digits, and a leading digit between 10^-``MAX_EXPONENT`` and 10^``MAX_EXPONENT``; so ``1e9999999``
(21 s to become a Fraction) and ``1e999999999`` (never) are refused at once, and ``1e-400`` (a zero once it is
a float: a division by zero in the solvers) is refused too. NaN and infinities are never accepted (``NaN``,
``Infinity``, ``inf`` are not decimal text). Every refusal is a one-line TopologyError naming the field, the
node or link (``where``) and the value as written.
"""
from __future__ import annotations

import math
import re
from dataclasses import dataclass
from fractions import Fraction

from .model import TopologyError

MAX_TEXT = 100          # characters of a number's text (a float's shortest text has at most 24)
MAX_DIGITS = 50         # significant digits
MAX_EXPONENT = 30       # |decimal exponent of the leading digit|
_DECIMAL = re.compile(r"([+-]?)([0-9]*)(?:\.([0-9]*))?(?:[eE]([+-]?[0-9]+))?", re.ASCII)
_RATIO = re.compile(r"([+-]?)([0-9]+)/([0-9]+)", re.ASCII)
_SPACE = " \t\n\r"


@dataclass(frozen=True)
class Field:
    """A numeric field's range: ``low`` .. ``high`` in ``unit``; zero allowed only when ``zero``."""

    name: str
    low: Fraction
    high: Fraction
    unit: str
    zero: bool
    text: str            # the range for messages


FIELDS = {
    "bandwidth": Field("bandwidth", Fraction(1, 1000), Fraction(10 ** 7), "GB/s", False,
                       "0.001 .. 10000000 GB/s"),
    "alpha": Field("alpha", Fraction(1, 10 ** 6), Fraction(10 ** 6), "us", True,
                   "0, or 0.000001 .. 1000000 microseconds (1 ps .. 1 s)"),
}


class Written:
    """A number as a file writes it, kept as its text until ``read_number`` reads it: ``json.loads`` hands JSON
    float literals (``parse_float``) and ``NaN``/``Infinity`` (``parse_constant``) over as these, so no float is
    made of ``1e9999999`` (infinity) or ``1e-400`` (zero)."""

    __slots__ = ("text",)

    def __init__(self, text: str):
        self.text = text

    def __str__(self) -> str:
        return self.text

    def __repr__(self) -> str:
        return shown(self.text, quoted=False)


def shown(value, quoted: bool = True) -> str:
    """``value`` for a one-line message: text in quotes (cut at 40 characters, control characters escaped),
    numbers as written, anything else by its type."""
    if isinstance(value, Written):
        return shown(value.text, quoted=False)
    if isinstance(value, str):
        text = value if len(value) <= 40 else value[:40] + "..."
        text = repr(text) if quoted else repr(text)[1:-1]
        return text
    if isinstance(value, bool) or value is None:
        return repr(value)
    if isinstance(value, int):
        if value.bit_length() <= 128:
            return str(value)
        return f"an integer of about {int(value.bit_length() * math.log10(2)) + 1} digits"
    if isinstance(value, (float, Fraction)):
        return shown(str(value), quoted=False)
    return f"a {type(value).__name__}"


def read_number(value, field: str, where: str) -> Fraction:
    """``value`` (see the module docstring) as an exact Fraction within ``field``'s range, or a one-line
    TopologyError naming ``where`` (``link 3 (a -> b)``), the field and the value as written."""
    spec = FIELDS[field]
    if isinstance(value, Fraction):
        number = value
    elif isinstance(value, bool):
        raise TopologyError(f"{where}: {field} must be a number, got {value!r}")
    elif isinstance(value, int):
        number = _bounded_int(value, spec, where)
    elif isinstance(value, float):
        if not math.isfinite(value):
            raise TopologyError(f"{where}: {field} must be a finite number, got {value!r}")
        number = _from_text(repr(value), value, spec, where)
    elif isinstance(value, (str, Written)):
        number = _from_text(str(value), value, spec, where)
    else:
        raise TopologyError(f"{where}: {field} must be a number, got {shown(value)}")
    return _in_range(number, value, spec, where)


def _bounded_int(value: int, spec: Field, where: str) -> Fraction:
    if value.bit_length() > 128:            # far beyond every range: no digits are ever made of it
        raise TopologyError(f"{where}: {spec.name} {shown(value)} is outside {spec.text}")
    return Fraction(value)


def _from_text(text: str, value, spec: Field, where: str) -> Fraction:
    """The decimal or ratio ``text``, bounded before it is built (module docstring)."""
    body = text.strip(_SPACE)
    if len(body) > MAX_TEXT:
        raise TopologyError(f"{where}: {spec.name} has more than {MAX_TEXT} characters: {shown(value)}")
    ratio = _RATIO.fullmatch(body)
    if ratio is not None:
        sign, top, bottom = ratio.groups()
        if len(top.lstrip("0")) > MAX_DIGITS or len(bottom.lstrip("0")) > MAX_DIGITS:
            raise TopologyError(f"{where}: {spec.name} {shown(value)} has more than {MAX_DIGITS} digits")
        if int(bottom) == 0:
            raise TopologyError(f"{where}: {spec.name} {shown(value)} divides by zero")
        return Fraction(int(sign + top), int(bottom))
    m = _DECIMAL.fullmatch(body)
    if m is None or not (m.group(2) or m.group(3)):
        raise TopologyError(f"{where}: {spec.name} must be a finite decimal number (such as 25, 2.5 or 2.5e1), "
                            f"got {shown(value)}")
    sign, whole, part, exponent = m.group(1), m.group(2), m.group(3) or "", m.group(4)
    digits = (whole + part).lstrip("0")
    if not digits:
        return Fraction(0)
    core = digits.rstrip("0")
    if len(core) > MAX_DIGITS:
        raise TopologyError(f"{where}: {spec.name} {shown(value)} has more than {MAX_DIGITS} significant digits")
    scale = (int(exponent) if exponent else 0) - len(part)        # value = int(digits) * 10**scale
    lead = len(digits) - 1 + scale                                 # decimal exponent of the leading digit
    if abs(lead) > MAX_EXPONENT:
        raise TopologyError(f"{where}: {spec.name} {shown(value)} is outside {spec.text}")
    scale += len(digits) - len(core)
    number = Fraction(int(core)) * (Fraction(10) ** scale)
    return -number if sign == "-" else number


def _in_range(number: Fraction, value, spec: Field, where: str) -> Fraction:
    if spec.name == "bandwidth" and number <= 0:
        raise TopologyError(f"{where} needs a positive bandwidth, got {shown(value)}")
    if number < 0:
        raise TopologyError(f"{where} has a negative {spec.name} {shown(value)}")
    if number == 0 and spec.zero:
        return number
    if not spec.low <= number <= spec.high:
        raise TopologyError(f"{where}: {spec.name} {shown(value)} is outside {spec.text}")
    return number
