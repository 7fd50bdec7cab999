"""Every reproducible number of the five papers beside this studio's (issue 56): ``python -m bench.papers``.

Each paper has a module here (``tacos``, ``forestcoll``, ``genmodel``, ``directconnect``, ``teccl``) whose ``SPECS``
lists one :class:`Spec` per number: where the paper prints it, its value, how to compute ours, and the relative
tolerance that says whether they agree. A spec whose difference is understood carries ``known`` (the explanation,
with the evidence) and ``expect_ratio`` (ours / paper as measured when the explanation was written), so a test can
still fail when our number moves.

``tests/test_papers.py`` runs every spec that is not ``slow`` as a test with the paper's value as its oracle; the
slow ones run only under ``python -m bench.papers --slow``.
"""
from __future__ import annotations

import math
from dataclasses import dataclass
from fractions import Fraction
from typing import Callable

PAPERS = ("tacos", "forestcoll", "genmodel", "directconnect", "teccl")
KEYS = ("paper", "table", "row", "paper_value", "ours", "ratio", "tolerance", "ok")


@dataclass(frozen=True)
class Spec:
    """One number of one paper.

    ``tolerance`` is relative: the row holds when ``|ours - paper| <= tolerance * |paper|`` (0 asks for equality,
    which Fractions make exact). For a ``known`` difference the test asserts instead that ours / paper stays within
    ``tolerance`` of ``expect_ratio``; the row itself is reported as not ``ok``."""

    paper: str
    table: str
    row: str
    paper_value: float | Fraction
    compute: Callable[[], float | Fraction]
    tolerance: float = 0.0
    slow: bool = False
    known: str = ""
    expect_ratio: float | None = None

    @property
    def key(self) -> str:
        return f"{self.paper}/{self.table}/{self.row}"


@dataclass(frozen=True)
class Row:
    """A computed spec, with exactly the JSON keys the issue names (``as_dict``) plus the explanation."""

    paper: str
    table: str
    row: str
    paper_value: float
    ours: float | None
    ratio: float | None
    tolerance: float
    ok: bool
    known: str = ""
    error: str = ""

    def as_dict(self) -> dict:
        return {k: getattr(self, k) for k in KEYS}


def agrees(ours, paper, tolerance: float) -> bool:
    """``|ours - paper| <= tolerance * |paper|``, exact when both are Fractions or ints."""
    if isinstance(ours, (int, Fraction)) and isinstance(paper, (int, Fraction)):
        return abs(Fraction(ours) - Fraction(paper)) <= Fraction(tolerance) * abs(Fraction(paper))
    return abs(float(ours) - float(paper)) <= tolerance * abs(float(paper)) + 1e-12


def ratio_of(ours, paper) -> float | None:
    if paper == 0:
        return None if ours != 0 else 1.0
    return float(ours) / float(paper)


def evaluate(spec: Spec) -> Row:
    """Compute one spec; an exception becomes a row that is not ok, with the message in ``error``."""
    try:
        ours = spec.compute()
    except Exception as exc:  # noqa: BLE001 - a bench row reports, it does not crash the table
        return Row(spec.paper, spec.table, spec.row, float(spec.paper_value), None, None, spec.tolerance, False,
                   spec.known, f"{type(exc).__name__}: {exc}")
    ok = agrees(ours, spec.paper_value, spec.tolerance)
    value = float(ours)
    return Row(spec.paper, spec.table, spec.row, float(spec.paper_value), value if math.isfinite(value) else None,
               ratio_of(ours, spec.paper_value), spec.tolerance, ok, spec.known)


def specs(paper: str | None = None, slow: bool = False) -> list[Spec]:
    """The specs of one paper (or all), without the slow ones unless ``slow``."""
    import importlib

    out = []
    for name in PAPERS if paper is None else (paper,):
        module = importlib.import_module(f"bench.papers.{name}")
        out.extend(s for s in module.SPECS if slow or not s.slow)
    return out
