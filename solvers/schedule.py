"""The schedule IR shared by every synthesizer.

A schedule is a list of transfers ``(shard, [lo, hi), link, step, reduce)``: in comm step ``step`` (1-based) the
link ``link`` carries the part ``[lo, hi)`` of shard ``shard``, where ``lo`` and ``hi`` are exact Fractions of the
shard and ``shard`` is the compute node the shard belongs to (its source in an allgather, its destination in a
reduce-scatter). This is the tuple ``((v, C), (u, w), t)`` of the direct-connect paper (section 3.1 of its digest)
with the link named by index, so parallel links stay distinct.

``reduce`` says what the receiver does: ``False`` copies fully reduced data into place (allgather, broadcast),
``True`` adds a partial sum into the receiver's partial sum (reduce-scatter). A switch does neither; it only
forwards what it received (see ``solvers.verify``).
"""
from __future__ import annotations

from dataclasses import dataclass, field
from enum import Enum
from fractions import Fraction
from math import gcd
from typing import NamedTuple

import numpy as np

ZERO, ONE = Fraction(0), Fraction(1)


class Collective(str, Enum):
    ALLGATHER = "allgather"
    REDUCE_SCATTER = "reduce_scatter"
    ALLREDUCE = "allreduce"

    @classmethod
    def parse(cls, text: str) -> "Collective":
        key = text.strip().lower().replace("-", "_")
        aliases = {"ag": "allgather", "rs": "reduce_scatter", "reducescatter": "reduce_scatter", "ar": "allreduce"}
        key = aliases.get(key, key)
        try:
            return cls(key)
        except ValueError:
            names = ", ".join(c.value for c in cls)
            raise ValueError(f"unknown collective {text!r} (choose from {names})") from None


class Transfer(NamedTuple):
    """Shard ``shard``'s part ``[lo, hi)`` crosses link ``link`` in step ``step``; ``reduce`` as in the module doc."""

    shard: int
    lo: Fraction
    hi: Fraction
    link: int
    step: int
    reduce: bool = False


@dataclass
class Schedule:
    """The transfers of one collective on one topology, produced by algorithm ``algo``."""

    collective: Collective
    transfers: list[Transfer]
    algo: str = ""
    notes: dict = field(default_factory=dict)

    @property
    def steps(self) -> int:
        """The number of comm steps: T_L / alpha in the alpha-beta model."""
        return max((t.step for t in self.transfers), default=0)

    def by_step(self) -> dict[int, list[Transfer]]:
        out: dict[int, list[Transfer]] = {}
        for t in self.transfers:
            out.setdefault(t.step, []).append(t)
        return dict(sorted(out.items()))


def split_interval(lo: Fraction, hi: Fraction, parts: int) -> list[tuple[Fraction, Fraction]]:
    """``[lo, hi)`` cut into ``parts`` equal consecutive pieces."""
    width = (hi - lo) / parts
    return [(lo + i * width, lo + (i + 1) * width) for i in range(parts)]


@dataclass
class Columns:
    """A schedule's transfers as numpy columns, chunk bounds scaled to integers by their common denominator
    ``one`` (so [lo, hi) of the shard is [lo/one, hi/one)). Built for the vectorized verifier and cost paths."""

    step: np.ndarray
    link: np.ndarray
    shard: np.ndarray
    lo: np.ndarray
    hi: np.ndarray
    reduce: np.ndarray
    one: int


MAX_SCALED = 2 ** 40


def columns(schedule: Schedule) -> Columns | None:
    """The columns of ``schedule``, or None when a bound is not an exact Fraction or the numbers do not fit
    64-bit arithmetic (callers then take their exact per-transfer path)."""
    transfers = schedule.transfers
    count = len(transfers)
    if not all(type(t.lo) is Fraction and type(t.hi) is Fraction for t in transfers):
        return None

    def column(values):
        return np.fromiter(values, dtype=np.int64, count=count)

    try:
        lo_num, lo_den = column(t.lo.numerator for t in transfers), column(t.lo.denominator for t in transfers)
        hi_num, hi_den = column(t.hi.numerator for t in transfers), column(t.hi.denominator for t in transfers)
        step, link, shard = (column(t.step for t in transfers), column(t.link for t in transfers),
                             column(t.shard for t in transfers))
    except (OverflowError, TypeError, ValueError):
        return None
    one = 1
    for d in np.unique(np.concatenate([lo_den, hi_den])).tolist():
        one = one * d // gcd(one, d)
        if one > MAX_SCALED:
            return None
    if count and max(np.abs(lo_num).max(), np.abs(hi_num).max()) > MAX_SCALED:
        return None
    return Columns(step, link, shard, lo_num * (one // lo_den), hi_num * (one // hi_den),
                   np.fromiter((bool(t.reduce) for t in transfers), dtype=bool, count=count), one)
