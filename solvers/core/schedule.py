"""The schedule IR shared by every synthesizer.

A schedule is a list of transfers ``(shard, [lo, hi), link, step, reduce)``: in comm step ``step`` (1-based) the
link ``link`` carries the part ``[lo, hi)`` of shard ``shard``, where ``lo`` and ``hi`` are exact Fractions of the
shard and ``shard`` is the compute node the shard belongs to (its source in an allgather, its destination in a
reduce-scatter). This is the tuple ``((v, C), (u, w), t)`` of the direct-connect paper (section 3.1 of its digest)
with the link named by index, so parallel links stay distinct.

``reduce`` says what the receiver does: ``False`` copies fully reduced data into place (allgather, broadcast),
``True`` adds a partial sum into the receiver's partial sum (reduce-scatter). A switch does neither; it only
forwards what it received (see ``solvers.core.verify``).

Copy-only collectives besides allgather. In all of them shard ``s`` is node ``s``'s input, which only ``s`` holds
at the start, and transfers never reduce:

* all-to-all: with R the compute nodes in index order (``topo.compute_nodes``) and j(d) the position of d in R,
  the piece of shard s meant for d is [j(d)/|R|, (j(d)+1)/|R|); every d must end holding that piece of every shard;
* custom: the schedule carries its own postcondition, ``demand``: entries (dst, shard, lo, hi) that each ask
  node dst to end holding [lo, hi) of shard ``shard``.

Rooted collectives (TACOS Fig. 2-3; NCCL's broadcast and reduce) carry a ``root``, a compute node, and keep the
same shards of M/N bytes, so every reader (cost, runtime model, export) prices them as it prices the others:

* broadcast: the root holds every shard at the start (the M-byte buffer is its N shards); every node ends with
  every shard;
* scatter: the root holds every shard at the start; node s ends with shard s;
* gather: node s holds shard s at the start (as in allgather); the root ends with every shard;
* reduce: every node holds its contribution to every shard (as in allreduce); the root ends with every shard
  fully reduced, each contribution counted once.

A broadcast reversed on the transposed graph is a reduce, a scatter reversed is a gather (``core.transform``).
"""
from __future__ import annotations

from dataclasses import dataclass, replace
from enum import Enum, EnumMeta
from fractions import Fraction
from math import gcd
from typing import NamedTuple

import numpy as np

from .sorted_unique import sorted_unique

ZERO, ONE = Fraction(0), Fraction(1)


_BUILT = ("allgather", "reduce_scatter", "allreduce")
_ROOTED = ("broadcast", "reduce", "gather", "scatter")


class _CollectiveType(EnumMeta):
    """Iterating ``Collective`` (and ``len``) gives only the collectives every synthesizer builds (allgather,
    reduce-scatter, allreduce: what the UI offers and ``transform.build_collective`` makes from an allgather);
    ALLTOALL and CUSTOM are members all the same (by attribute, value, ``parse``, ``Collective.every()``)."""

    def __iter__(cls):
        return (m for m in super().__iter__() if m.value in _BUILT)

    def __len__(cls):
        return len(_BUILT)


class Collective(str, Enum, metaclass=_CollectiveType):
    ALLGATHER = "allgather"
    REDUCE_SCATTER = "reduce_scatter"
    ALLREDUCE = "allreduce"
    ALLTOALL = "alltoall"
    CUSTOM = "custom"
    BROADCAST = "broadcast"
    REDUCE = "reduce"
    GATHER = "gather"
    SCATTER = "scatter"

    @classmethod
    def every(cls) -> tuple["Collective", ...]:
        """All members, the copy-only ALLTOALL and CUSTOM included."""
        return tuple(cls.__members__.values())

    @property
    def copy_only(self) -> bool:
        """Whether the collective moves final data only (no transfer reduces)."""
        return self in (Collective.ALLGATHER, Collective.ALLTOALL, Collective.CUSTOM, Collective.BROADCAST,
                        Collective.GATHER, Collective.SCATTER)

    @property
    def rooted(self) -> bool:
        """Whether the collective has a root (broadcast, reduce, gather, scatter)."""
        return self.value in _ROOTED

    @property
    def root_holds_all(self) -> bool:
        """Whether the root holds every shard at the start (broadcast, scatter) instead of node s holding shard s."""
        return self in (Collective.BROADCAST, Collective.SCATTER)

    @classmethod
    def rooted_ones(cls) -> tuple["Collective", ...]:
        """broadcast, reduce, gather, scatter."""
        return tuple(cls(v) for v in _ROOTED)

    @classmethod
    def parse(cls, text: str) -> "Collective":
        key = text.strip().lower().replace("-", "_")
        aliases = {"ag": "allgather", "rs": "reduce_scatter", "reducescatter": "reduce_scatter", "ar": "allreduce",
                   "a2a": "alltoall", "all_to_all": "alltoall", "bcast": "broadcast"}
        key = aliases.get(key, key)
        try:
            return cls(key)
        except ValueError:
            names = ", ".join(c.value for c in cls.every())
            raise ValueError(f"unknown collective {text!r} (choose from {names})") from None


def rooted_request(text: str) -> tuple[Collective, str | None]:
    """A collective named with its root, ``"broadcast@3"`` (the text after ``@``: a rank or a GPU's name; the
    form the pages and the results cache carry a rooted request in), as (the collective, the root text or None).
    ValueError for an unknown collective, or a root given to one that has none."""
    name, at, root = str(text).partition("@")
    coll = Collective.parse(name)
    if at and not coll.rooted:
        raise ValueError(f"{coll.value} has no root")
    return coll, (root.strip() if at else None)


class Transfer(NamedTuple):
    """Shard ``shard``'s part ``[lo, hi)`` crosses link ``link`` in step ``step``; ``reduce`` as in the module doc."""

    shard: int
    lo: Fraction
    hi: Fraction
    link: int
    step: int
    reduce: bool = False


class DemandEntry(NamedTuple):
    """One entry of a custom collective's postcondition: node ``dst`` ends holding ``[lo, hi)`` of shard ``shard``."""

    dst: int
    shard: int
    lo: Fraction
    hi: Fraction


class Schedule:
    """The transfers of one collective on one topology, produced by algorithm ``algo``.

    A schedule holds its transfers either as a list of ``Transfer`` tuples or as numpy ``Columns`` (how BFB
    returns the millions of transfers of a large topology); ``transfers`` builds the tuples from the columns on
    first use (and then keeps only the list, which callers may edit), and ``columns()`` the columns from the
    tuples.

    ``demand`` is the postcondition of a CUSTOM schedule: (dst, shard, lo, hi) entries, kept as a tuple of
    ``DemandEntry``; it is None for the other collectives (the verifier rejects a CUSTOM schedule without one).
    ``root`` is the root node of a rooted collective (module docstring) and None for the others. ``group``: the
    compute nodes the collective is among (a tenant on part of a cluster), None for all of them; its shards are
    the members' (M/|group| bytes each), and the other nodes may relay but hold and want nothing.
    """

    def __init__(self, collective: Collective, transfers=None, algo: str = "", notes: dict | None = None, *,
                 cols: "Columns | None" = None, demand=None, root: int | None = None, group=None):
        if (transfers is None) == (cols is None):
            raise ValueError("a Schedule takes either transfers or columns")
        if demand is not None and collective is not Collective.CUSTOM:
            raise ValueError(f"only a custom schedule carries a demand, not a {collective.value} one")
        if collective.rooted != (root is not None):
            raise ValueError(f"a {collective.value} schedule " + ("needs a root" if collective.rooted
                                                                  else "has no root"))
        if group is not None and collective in (Collective.ALLTOALL, Collective.CUSTOM):
            raise ValueError(f"a {collective.value} schedule runs on every compute node (no group)")
        self.collective = collective
        self.root = None if root is None else int(root)
        self.group = None if group is None else tuple(sorted({int(v) for v in group}))
        self.demand = None if demand is None else tuple(DemandEntry(*entry) for entry in demand)
        self.algo = algo
        self.notes = dict(notes or {})
        self._transfers = list(transfers) if transfers is not None else None
        self._cols = cols

    @property
    def transfers(self) -> list[Transfer]:
        if self._transfers is None:
            c = self._cols
            one = c.one
            cache: dict[int, Fraction] = {}
            table = None if c.bounds is None else c.bounds.tolist()

            def frac(x: int) -> Fraction:
                f = cache.get(x)
                if f is None:
                    f = cache[x] = Fraction(x if table is None else table[x], one)
                return f

            self._transfers = [Transfer(sh, frac(lo), frac(hi), li, st, bool(rd)) for sh, lo, hi, li, st, rd in
                               zip(c.shard.tolist(), c.lo.tolist(), c.hi.tolist(), c.link.tolist(),
                                   c.step.tolist(), c.reduce.tolist())]
            self._cols = None   # the list may now be edited in place; the columns would go stale
        return self._transfers

    @transfers.setter
    def transfers(self, value) -> None:
        self._transfers, self._cols = list(value), None

    @property
    def count(self) -> int:
        """The number of transfers, without building them."""
        return len(self._cols.step) if self._transfers is None else len(self._transfers)

    def stored_columns(self) -> "Columns | None":
        return self._cols

    @property
    def steps(self) -> int:
        """The number of comm steps: T_L / alpha in the alpha-beta model."""
        if self._transfers is None:
            return int(self._cols.step.max()) if len(self._cols.step) else 0
        return max((t.step for t in self._transfers), default=0)

    def by_step(self) -> dict[int, list[Transfer]]:
        out: dict[int, list[Transfer]] = {}
        for t in self.transfers:
            out.setdefault(t.step, []).append(t)
        return dict(sorted(out.items()))

    def __repr__(self) -> str:
        rooted = "" if self.root is None else f" at root {self.root}"
        rooted += "" if self.group is None else f" among {len(self.group)} nodes"
        return (f"Schedule({self.collective.value}{rooted}, {self.count} transfers, {self.steps} steps, "
                f"algo={self.algo!r})")


def shard_sources(collective: Collective, shards: np.ndarray, root: int | None) -> np.ndarray:
    """For a copy-only collective, the node that holds each of ``shards`` at the start: the root for broadcast
    and scatter, the shard's own node otherwise (module docstring)."""
    if collective.root_holds_all:
        return np.full(len(shards), root, dtype=np.int64)
    return np.asarray(shards, dtype=np.int64)


def split_interval(lo: Fraction, hi: Fraction, parts: int) -> list[tuple[Fraction, Fraction]]:
    """``[lo, hi)`` cut into ``parts`` equal consecutive pieces."""
    width = (hi - lo) / parts
    return [(lo + i * width, lo + (i + 1) * width) for i in range(parts)]


@dataclass
class Columns:
    """A schedule's transfers as numpy columns, chunk bounds scaled to integers by their common denominator
    ``one`` (so [lo, hi) of the shard is [lo/one, hi/one)). Built for the vectorized verifier and cost paths.

    A producer may store narrow integer types (``narrowest``: BFB on 16384 nodes keeps 268M transfers in 10
    bytes each, where int64 takes 41); ``columns(schedule)`` hands readers int64 columns, and only readers that
    take ``compact=True`` (the verifier, the cost) see the stored types and widen what they compute with.

    ``bounds``, when given, is the sorted table of every distinct bound as an exact integer over ``one`` (an
    object array holding 0 and ``one``), and ``lo``/``hi`` are positions in it: how bounds whose common
    denominator passes MAX_SCALED are kept (BFB on torus(100,100): 119 of them over a denominator near 3e21).
    ``columns(schedule)`` resolves them to values where they fit int64 and gives None otherwise; the verifier's
    proofs read the positions (only the order of bounds matters to them) and the cost sums the table's values."""

    step: np.ndarray
    link: np.ndarray
    shard: np.ndarray
    lo: np.ndarray
    hi: np.ndarray
    reduce: np.ndarray
    one: int
    bounds: np.ndarray | None = None


MAX_SCALED = 2 ** 40
_WIDE = ("step", "link", "shard", "lo", "hi")
COLUMN_FIELDS = _WIDE + ("reduce",)          # the per-transfer arrays of Columns, in order


def narrowest(top: int) -> np.dtype:
    """The smallest signed integer type that holds 0..``top``."""
    for kind in (np.int8, np.int16, np.int32):
        if top <= np.iinfo(kind).max:
            return np.dtype(kind)
    return np.dtype(np.int64)


def widened(cols: Columns) -> Columns:
    """``cols`` with every integer column as int64 (itself when they already are; object bounds and a bounds
    table stay)."""
    fields = {f: getattr(cols, f) for f in _WIDE}
    if all(a.dtype == np.int64 or a.dtype == object for a in fields.values()):
        return cols
    wide = {f: a if a.dtype == object else a.astype(np.int64) for f, a in fields.items()}
    return replace(cols, **wide)


def resolved(cols: Columns) -> Columns | None:
    """``cols`` with bounds as values over ``one`` (not positions in a bounds table); None when they do not fit
    64-bit arithmetic."""
    if cols.bounds is None:
        return cols
    if cols.one > MAX_SCALED:
        return None
    table = cols.bounds.astype(np.int64)
    return replace(cols, lo=table[cols.lo], hi=table[cols.hi], bounds=None)


def ranked(cols: Columns) -> Columns:
    """``cols`` with a bounds table read as ranks: ``lo``/``hi`` stay positions in the table and ``one`` becomes
    the position of the shard's end. Order and equalities between bounds are kept, so any check that only
    compares bounds gives the same verdict. Columns without a table come back as they are."""
    if cols.bounds is None:
        return cols
    if not len(cols.bounds) or cols.bounds[0] != 0 or cols.bounds[-1] != cols.one:
        raise ValueError("a bounds table runs from 0 to one")
    return replace(cols, one=len(cols.bounds) - 1, bounds=None)


def columns(schedule: Schedule, compact: bool = False) -> Columns | None:
    """The columns of ``schedule`` as int64 values (``compact``: as stored, narrow types and a bounds table
    included), or None when a bound is not an exact Fraction or the numbers do not fit 64-bit arithmetic
    (callers then take their exact per-transfer path)."""
    if schedule.stored_columns() is not None:
        stored = schedule.stored_columns()
        if compact:
            return stored
        values = resolved(stored)
        return None if values is None else widened(values)
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


def rescale(cols: Columns, one: int) -> Columns:
    """The same transfers with bounds over the common denominator ``one`` (a multiple of ``cols.one``)."""
    k = one // cols.one
    if k == 1:
        return cols
    if cols.bounds is not None:
        return replace(cols, bounds=cols.bounds * k, one=one)
    cols = widened(cols)
    return replace(cols, lo=cols.lo * k, hi=cols.hi * k, one=one)


def bounds_table(values) -> tuple[np.ndarray, dict[int, int]]:
    """A ``Columns.bounds`` table of the distinct exact ``values`` (0 and ``one`` among them), ascending as an
    object array, and each value's position in it."""
    table = sorted(set(values))
    return np.array(table, dtype=object), {v: i for i, v in enumerate(table)}


def _coded(cols: Columns) -> tuple[list[int], np.ndarray, np.ndarray]:
    """(the distinct bound values over ``one``, ascending; lo and hi as positions among them)."""
    if cols.bounds is not None:
        return [int(v) for v in cols.bounds.tolist()], cols.lo, cols.hi
    distinct = sorted_unique(np.concatenate([cols.lo, cols.hi]))
    return distinct.tolist(), np.searchsorted(distinct, cols.lo), np.searchsorted(distinct, cols.hi)


JOIN_BATCH = 1 << 22      # rows rescaled at a time when a join multiplies bounds


def concat(parts: list[Columns], release: bool = False) -> Columns:
    """All transfers of ``parts`` in one set of columns (each column in the widest type among the parts, a part
    whose bounds are rescaled counting as int64; one bounds table for all when any part has one).

    Each result column is allocated once and filled part by part. ``release``: the caller hands the list over;
    it is emptied, and each part's column is let go as soon as it is copied, so that beside the result the join
    holds at most one column of one part (where the caller keeps no other reference to the part's arrays)."""
    cols = [replace(c) for c in parts]          # our own handles: letting go of one never touches the caller's
    if release:
        parts.clear()
    one = 1
    for c in cols:
        one = one * c.one // gcd(one, c.one)
    table, remaps = None, None
    if any(c.bounds is not None for c in cols):
        values = []
        for i, c in enumerate(cols):
            c = rescale(c, one)
            coded, lo, hi = _coded(c)
            values.append(coded)
            cols[i] = replace(c, lo=lo, hi=hi, bounds=None, one=one)
        table, position = bounds_table({0, one}.union(*values))
        remaps = [np.array([position[v] for v in coded], dtype=narrowest(len(table))) for coded in values]
        del values
    scales = [1 if table is not None else one // c.one for c in cols]
    sizes = [len(c.step) for c in cols]
    total = sum(sizes)
    out = {}
    for field in COLUMN_FIELDS:
        if remaps is not None and field in ("lo", "hi"):
            kind = np.result_type(*(remap.dtype for remap in remaps))
        elif field in _WIDE:
            kind = np.result_type(*(getattr(c, field).dtype if k == 1 or getattr(c, field).dtype == object
                                    else np.dtype(np.int64) for c, k in zip(cols, scales)))
        else:
            kind = np.result_type(*(getattr(c, field).dtype for c in cols))
        column = np.empty(total, dtype=kind)
        at = 0
        for i, c in enumerate(cols):
            src, end = getattr(c, field), at + sizes[i]
            if remaps is not None and field in ("lo", "hi"):
                column[at:end] = remaps[i][src]
            elif field in ("lo", "hi") and scales[i] != 1:
                for a in range(0, sizes[i], JOIN_BATCH):
                    part = src[a:a + JOIN_BATCH]
                    column[at + a:at + a + len(part)] = (part if part.dtype == object else part.astype(np.int64)) \
                        * scales[i]
            else:
                column[at:end] = src
            setattr(c, field, None)             # let go of the part's column (freed unless the caller holds it)
            del src
            at = end
        out[field] = column
    return Columns(*(out[f] for f in COLUMN_FIELDS), one, table)
