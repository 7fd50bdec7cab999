"""Integer attributes as the MSCCL runtimes read them, against the decimal number a person means.

Both runtimes read every integer attribute of an MSCCL file with C's ``strtol(str, NULL, 0)``:

- ROCm/rccl ``src/include/msccl/msccl_parser.h``, ``mscclXmlGetAttrInt``: ``*value = strtol(str, NULL, 0);`` into
  an ``int`` (and ``mscclXmlGetAttrInt64``: ``strtoll(str, NULL, 0)`` into an ``int64_t``, for ``minBytes`` and
  ``maxBytes``); the same header in Azure/msccl-executor-nccl (commit c6f6b36).
- ``str`` is the attribute exactly as it stands between the double quotes of the file:
  ``mscclXmlGetValue`` in ``src/misc/msccl/msccl_parser.cc`` (both runtimes) copies the characters up to the
  closing quote and decodes no XML reference, so ``cnt="&#49;"`` is the text ``&#49;``, which strtol reads as 0.

``strtol`` with base 0 (C11 7.22.1.4, in the C locale): leading white space (``isspace``: space, ``\\t``,
``\\n``, ``\\v``, ``\\f``, ``\\r``) is skipped, an optional ``+`` or ``-`` follows, then ``0x``/``0X`` before a
hex digit makes the number hexadecimal, a leading ``0`` makes it octal, anything else decimal; the longest run
of that base's ASCII digits is read and everything after it is ignored. No digit at all reads 0. A result
beyond a C ``long`` (64 bits here) is ``LONG_MAX``/``LONG_MIN``; ``mscclXmlGetAttrInt`` then stores the long
into an ``int``, which keeps what the file says only up to ``program.MAX_INT``: the checker reports a value
above that (the readers keep strtol's value for it).

``strtol_reading`` is that value; ``plain_reading`` the decimal number a person reads (``" 1 "``, ``"+1"``,
``"-1"``, ``"010"`` is 10); ``read_int`` the readers' rule: a value the runtime reads as its decimal reading, or
a complete hexadecimal number (``0x10`` is 16: no decimal reading to conflict with), is accepted; anything else
(``010`` is 8 to the runtime, ``08`` is 0, ``0_1`` is 0, ``12abc`` is 12, ``""`` and ``"١"`` are 0) is a
problem, named by a fragment for the message. Trailing white space (``"1 "``) is accepted: strtol reads the 1
and stops there, the decimal reading is the same 1.
"""
from __future__ import annotations

import re
import unicodedata

C_SPACE = " \t\n\v\f\r"                 # isspace() in the C locale
LONG_MAX = (1 << 63) - 1                # C long on the runtimes' LP64 platforms
LONG_MIN = -(1 << 63)
_DIGITS = {8: "01234567", 10: "0123456789", 16: "0123456789abcdefABCDEF"}
_PLAIN = re.compile(r"[ \t\n\v\f\r]*([+-]?[0-9]+)[ \t\n\v\f\r]*", re.ASCII)
_SHOW = str.maketrans({"\t": "\\t", "\n": "\\n", "\v": "\\v", "\f": "\\f", "\r": "\\r", "\0": "\\0"})


def strtol_scan(text: str, given: int = 0) -> tuple[int, int, int]:
    """``strtol(text, &end, given)`` for ``given`` 0 (the base read off the text) or 16 (NCCL's graph files read
    devs so; a ``0x`` prefix is then optional): (value, end, base). ``end`` is where reading stopped (0 when
    nothing was converted, as strtol sets ``*endptr = nptr``); ``base`` the base it read in (8, 10 or 16). The
    string ends at a NUL, as a C string does. The value is clamped to a C long, as strtol's is."""
    if given not in (0, 16):
        raise ValueError(f"base {given} is not read here (0 or 16)")
    n = len(text)
    nul = text.find("\0")
    if nul >= 0:
        n = nul
    i = 0
    while i < n and text[i] in C_SPACE:
        i += 1
    negative = False
    if i < n and text[i] in "+-":
        negative = text[i] == "-"
        i += 1
    if i + 2 < n and text[i] == "0" and text[i + 1] in "xX" and text[i + 2] in _DIGITS[16]:
        base, i = 16, i + 2
    elif given == 16:
        base = 16
    elif i < n and text[i] == "0":
        base = 8
    else:
        base = 10
    digits = _DIGITS[base]
    start = i
    while i < n and text[i] in digits:
        i += 1
    if i == start:
        return 0, 0, base
    value = _integer(text[start:i], base)
    value = -value if negative else value
    return max(LONG_MIN, min(LONG_MAX, value)), i, base


def strtol_reading(text: str) -> int:
    """The value ``strtol(text, NULL, 0)`` returns (a C long; see the module docstring)."""
    return strtol_scan(text)[0]


def plain_reading(text: str) -> int | None:
    """The decimal number a person reads in ``text``: optional white space around an optional sign and ASCII
    decimal digits (leading zeros are decimal: ``"010"`` is 10); None for anything else."""
    m = _PLAIN.fullmatch(text)
    if m is None:
        return None
    sign, digits = (-1, m.group(1)[1:]) if m.group(1)[0] == "-" else (1, m.group(1).lstrip("+"))
    return sign * _integer(digits, 10)


def differs(text: str) -> bool:
    """Whether the runtime's reading is not the decimal reading (True for ``0x10`` too, which has none; the
    readers accept that one: ``read_int``)."""
    return strtol_reading(text) != plain_reading(text)


def show(text: str) -> str:
    """``text`` in double quotes on one line, control characters escaped."""
    return '"' + text.translate(_SHOW) + '"'


def read_int(text: str) -> tuple[int, str | None]:
    """(value, problem): strtol's value (``strtol_reading``), and None when the runtime reads what the file
    means: decimal, possibly with white space around it and a sign, or a complete ``0x`` number (strtol reads
    every digit written and nothing but white space follows); else a fragment for the message:
    ``is 8 to the runtime (strtol reads a leading 0 as octal), not 10``.

    A decimal number beyond a C long is accepted with strtol's clamped value, LONG_MAX or LONG_MIN: the number
    written and the number read are both beyond the runtime's int, which the checker reports (``MAX_INT``)."""
    value, end, base = strtol_scan(text)
    rest = text[end:]
    complete = end > 0 and not rest.strip(C_SPACE)
    if complete and base != 8:
        return value, None
    plain = plain_reading(text)
    if complete and value == plain:            # octal with the same digits: "0", "00", "07"
        return value, None
    if complete:
        why = "strtol reads a leading 0 as octal"
    elif end == 0:
        why = _no_digits(text)
    elif base == 8:
        why = f"strtol reads a leading 0 as octal and stops at {show(rest[0])}"
    else:
        why = f"strtol stops at {show(rest[0])}"
    return value, f"is {value} to the runtime ({why}), not {number(plain)}"


def number(value: int | None) -> str:
    """``value`` for a message: ``an integer`` for None, and the digits (or how many there are) otherwise."""
    if value is None:
        return "an integer"
    try:
        return str(value)
    except ValueError:                          # more digits than Python prints (4300)
        return "a number of more than 4300 digits"


def _integer(digits: str, base: int) -> int:
    """int(digits, base), also past Python's limit on decimal strings (4300 digits), in pieces."""
    digits = digits.lstrip("0") or "0"
    if base != 10 or len(digits) <= 4000:
        return int(digits, base)
    value = 0
    for k in range(0, len(digits), 4000):
        piece = digits[k:k + 4000]
        value = value * 10 ** len(piece) + int(piece)
    return value


def _no_digits(text: str) -> str:
    body = text.lstrip(C_SPACE)
    if not body:
        return f"strtol finds no digits in {'an empty' if not text else 'a blank'} value"
    head = body.lstrip("+-")[:1] or body[0]
    if head and unicodedata.decimal(head, None) is not None:
        return f"strtol reads ASCII digits only, and {show(head)} is not one"
    return "strtol finds no digits"
