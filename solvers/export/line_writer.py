"""Many lines of one ``%d``/``%s`` template written from numpy columns at once: byte for byte ``template % row``
for every row, without a Python string per line (a 256-rank program has about two million step lines; the
``%`` operator takes 1-2 us a line, this about a third of that).

Every line is first laid out at one width, in a byte grid with a row per line: the template's text; each ``%d``
field right-aligned in as many characters as its widest value (minus sign included); each ``%s`` field (codes
into a tuple of names) left-aligned in its longest name; every character a shorter value leaves unused a NUL
byte, which no line contains. Deleting the NULs leaves the lines.
"""
from __future__ import annotations

import re
from typing import Sequence

import numpy as np

PAD = 0                         # the filler byte, deleted at the end
_POW10 = 10 ** np.arange(1, 19, dtype=np.int64)      # 10 .. 10^18
_FIELD = re.compile(r"(%[ds])")


def decimal_widths(values: np.ndarray) -> np.ndarray:
    """The characters of each integer written in decimal, a minus sign included."""
    values = np.asarray(values, np.int64)
    return np.searchsorted(_POW10, np.abs(values), side="right") + 1 + (values < 0)


def write_lines(template: str, columns: Sequence) -> tuple[bytes, np.ndarray]:
    """(the lines ``template % row`` for the rows of ``columns``, each followed by a newline, as ASCII bytes; the
    end offset of every line). ``template`` holds only ``%d`` and ``%s`` fields; ``columns`` gives one per field,
    in order: an integer array for ``%d``, a pair (integer codes, tuple of names) for ``%s``."""
    parts = _FIELD.split(template)
    texts, fields = parts[0::2], parts[1::2]
    if len(fields) != len(columns):
        raise ValueError(f"the template has {len(fields)} fields, {len(columns)} columns given")
    if "\0" in template:
        raise ValueError("a template may not hold a NUL character")
    sample = columns[0][0] if fields and fields[0] == "%s" else (columns[0] if columns else ())
    n = len(sample)
    skeleton = bytearray()
    slots = []                                   # (first character in the row, its field's bytes (n x width))
    length = np.full(n, len(template.encode()) + 1 - 2 * len(fields), np.int64)   # the text, the newline
    for text, field, column in zip(texts, fields, columns):
        skeleton += text.encode("ascii")
        if field == "%d":
            values = np.asarray(column, np.int64)
            widths = decimal_widths(values)
            cells = _right_aligned(values, widths, int(widths.max(initial=1)))
        else:
            codes, names = column
            codes = np.asarray(codes, np.int64)
            table = _name_table(names)
            cells = table[codes]
            widths = np.array([len(name) for name in names], np.int64)[codes]
        length += widths
        slots.append((len(skeleton), cells))
        skeleton += bytes(cells.shape[1])
    skeleton += texts[-1].encode("ascii") + b"\n"
    grid = np.empty((n, len(skeleton)), np.uint8)
    grid[:] = np.frombuffer(bytes(skeleton), np.uint8)
    for at, cells in slots:
        grid[:, at:at + cells.shape[1]] = cells
    return grid.tobytes().translate(None, bytes([PAD])), np.cumsum(length)


def _name_table(names: Sequence[str]) -> np.ndarray:
    """One row per name: its ASCII bytes, then PAD up to the longest."""
    encoded = [name.encode("ascii") for name in names]
    if any(b"\0" in name for name in encoded):
        raise ValueError("a name may not hold a NUL character")
    table = np.full((len(encoded), max(map(len, encoded), default=0)), PAD, np.uint8)
    for i, name in enumerate(encoded):
        table[i, :len(name)] = np.frombuffer(name, np.uint8)
    return table


def _right_aligned(values: np.ndarray, widths: np.ndarray, width: int) -> np.ndarray:
    """(n x ``width``) bytes: each value in decimal at the right, PAD before it."""
    magnitude = np.abs(values)
    magnitude = magnitude.astype(np.uint32 if magnitude.max(initial=0) < 2 ** 32 else np.uint64)
    ten = magnitude.dtype.type(10)
    out = np.empty((len(values), width), np.uint8)
    for j in range(width - 1, -1, -1):          # the last digit first; once nothing is left, PAD
        rest = magnitude // ten
        digit = (magnitude - rest * ten).astype(np.uint8)
        digit += ord("0")
        out[:, j] = digit if j == width - 1 else np.where(magnitude == 0, np.uint8(PAD), digit)
        magnitude = rest
    negative = np.flatnonzero(values < 0)
    out[negative, width - widths[negative]] = ord("-")
    return out
