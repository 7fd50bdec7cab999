"""The schedule verifier: simulate a schedule step by step and check it implements its collective.

State. Every compute node keeps, for every shard and every point x of [0, 1), the set of ranks whose
contribution its buffer holds at x (a bitmask; FULL means the fully reduced value). Initially:

* allgather, all-to-all and custom: node v holds its own shard v as FULL and nothing else (each shard is final data);
* reduce-scatter and allreduce: node u holds its own contribution {u} for every shard;
* broadcast and scatter: the root holds every shard as FULL; gather: as allgather; reduce: as allreduce;
* a schedule among a group of compute nodes (``Schedule.group``): the same, with the group's members in place of
  every compute node (FULL is every member's contribution, the shards are the members'); other nodes start with
  nothing and may relay.

Rules checked, each failure reported with the step, the nodes, the shard and the interval:

* causality: in step t a sender only sends what it holds at the end of step t-1; a copy sends fully reduced
  data (FULL), a reduction sends a non-empty partial sum;
* reductions never count a contribution twice (the receiver's set and the incoming set are disjoint);
* a switch neither copies nor reduces: every piece it sends is a piece it received in an earlier step and has not
  sent yet, sent once over one link (store and forward);
* the link exists, the step is a positive integer, the interval lies in [0, 1); allgather, all-to-all and custom
  schedules only copy;
* postcondition: allgather leaves every node FULL on every shard, reduce-scatter leaves node v FULL on shard v,
  allreduce leaves every node FULL on every shard, all-to-all leaves every compute node d FULL on its piece
  [j(d)/N, (j(d)+1)/N) of every shard (j(d) = d's position among the N compute nodes, ``solvers.core.schedule``),
  custom leaves node dst FULL on [lo, hi) of shard ``shard`` for every entry of the schedule's ``demand``;
  broadcast leaves every node FULL on every shard, scatter node s FULL on shard s, gather and reduce the root
  FULL on every shard (a reduce's root thus holds every contribution exactly once: a second delivery of one
  fails the disjointness rule above). Extra data anywhere is allowed.

Definitions: direct-connect paper Def 4 (allgather, reduce-scatter as paths of chunks) with the stricter
buffer semantics that a real runtime has (a reduce-scatter that adds a contribution twice is wrong).
"""
from __future__ import annotations

from bisect import bisect_right
from dataclasses import dataclass, field
from fractions import Fraction
from math import lcm
from numbers import Integral

import numpy as np

from topologies.model import Topology

from .errors import ScheduleError
from .receipt_table import partition_ok, receipt_table_proves
from .schedule import ONE, ZERO, Collective, Columns, Schedule, Transfer, columns, ranked, widened
from .sorted_unique import sorted_unique
from .switched_proof import switched_copy_proves

MAX_ERRORS = 10
_ARTICLE_NAME = {Collective.ALLGATHER: "an allgather", Collective.ALLTOALL: "an all-to-all",
                 Collective.CUSTOM: "a custom collective", Collective.BROADCAST: "a broadcast",
                 Collective.GATHER: "a gather", Collective.SCATTER: "a scatter"}


class Piecewise:
    """A step function on [0, one): ``vals[i]`` holds on ``[bounds[i], bounds[i+1])``.

    The simulator runs on integers: every chunk bound is scaled by the common denominator of the schedule's
    bounds (``one``), which keeps the arithmetic exact and is many times faster than comparing Fractions."""

    __slots__ = ("bounds", "vals")

    def __init__(self, value: int, one: int = 1):
        self.bounds = [0, one]
        self.vals = [value]

    def _cut(self, x: Fraction) -> int:
        """Make ``x`` a breakpoint; return the index of the segment that starts at ``x``."""
        i = bisect_right(self.bounds, x) - 1
        if self.bounds[i] == x:
            return i
        self.bounds.insert(i + 1, x)
        self.vals.insert(i + 1, self.vals[i])
        return i + 1

    def pieces(self, lo: Fraction, hi: Fraction) -> list[tuple[Fraction, Fraction, int]]:
        """The segments of ``[lo, hi)`` as ``(a, b, value)`` without changing the breakpoints."""
        out = []
        i = bisect_right(self.bounds, lo) - 1
        while i < len(self.vals) and self.bounds[i] < hi:
            out.append((max(lo, self.bounds[i]), min(hi, self.bounds[i + 1]), self.vals[i]))
            i += 1
        return out

    def assign(self, lo: Fraction, hi: Fraction, value: int) -> None:
        i, j = self._cut(lo), self._cut(hi)
        self.bounds[i + 1:j + 1] = [hi]
        self.vals[i:j] = [value]

    def merge(self, lo: Fraction, hi: Fraction, value: int) -> None:
        """OR ``value`` into ``[lo, hi)``."""
        i, j = self._cut(lo), self._cut(hi)
        for k in range(i, j):
            self.vals[k] |= value


@dataclass
class Verification:
    """The outcome of ``verify``: ``ok`` and, when not, the faults found (the first ``MAX_ERRORS``)."""

    ok: bool
    errors: list[str] = field(default_factory=list)
    redundant_receipts: int = 0

    def raise_if_failed(self) -> None:
        if not self.ok:
            raise ScheduleError(self.errors[0])


class _Simulator:
    def __init__(self, topo: Topology, schedule: Schedule):
        self.topo = topo
        self.one = 1
        self.collective = schedule.collective
        self.copy_only = schedule.collective.copy_only
        self.demand = getattr(schedule, "demand", None)
        self.root = getattr(schedule, "root", None)
        group = getattr(schedule, "group", None)
        self.members = list(topo.compute_nodes) if group is None else list(group)
        self.bit = {u: i for i, u in enumerate(self.members)}
        self.full = (1 << len(self.members)) - 1
        self.state: dict[tuple[int, int], Piecewise] = {}
        self.buffers: dict[tuple[int, int], list[list]] = {}     # switch buffers: [lo, hi, mask] items
        self.errors: list[str] = []
        self.redundant = 0

    # --- naming for messages
    def nm(self, u: int) -> str:
        return self.topo.names[u]

    def piece(self, shard: int, lo: int, hi: int) -> str:
        return f"shard {self.nm(shard)} {self.span(lo, hi)}"

    def span(self, lo: int, hi: int) -> str:
        return f"[{Fraction(lo, self.one)}, {Fraction(hi, self.one)})"

    def fail(self, msg: str) -> None:
        self.errors.append(msg)

    def contributors(self, mask: int) -> str:
        comp = self.members
        names = [self.nm(comp[i]) for i in range(len(comp)) if mask >> i & 1]
        return "{" + ", ".join(names[:8]) + (", ..." if len(names) > 8 else "") + "}"

    # --- state
    def initial(self, node: int, shard: int) -> int:
        if self.collective.root_holds_all:
            return self.full if node == self.root else 0
        if self.copy_only:
            return self.full if node == shard else 0
        return 1 << self.bit[node] if node in self.bit else 0     # a relay outside the group adds nothing

    def cell(self, node: int, shard: int) -> Piecewise:
        key = (node, shard)
        pw = self.state.get(key)
        if pw is None:
            pw = self.state[key] = Piecewise(self.initial(node, shard), self.one)
        return pw

    # --- checks of single transfers
    def well_formed(self, t: Transfer) -> bool:
        topo = self.topo
        if (type(t.step) is int and t.step >= 1 and 0 <= t.link < len(topo.links) and 0 <= t.shard < topo.num_nodes
                and type(t.lo) is Fraction and type(t.hi) is Fraction and 0 <= t.lo < t.hi <= 1
                and t.shard in self.bit and not (t.reduce and self.copy_only)):
            return True  # the common case, decided without building a message
        where = f"transfer {tuple(t)}"
        if not isinstance(t.step, int) or t.step < 1:
            self.fail(f"{where}: step must be a positive integer")
        elif not (0 <= t.link < len(topo.links)):
            self.fail(f"{where}: link {t.link} does not exist (the topology has {len(topo.links)} links)")
        elif not (0 <= t.shard < topo.num_nodes) or not topo.is_compute(t.shard):
            self.fail(f"{where}: shard {t.shard} is not a compute node")
        elif t.shard not in self.bit:
            self.fail(f"{where}: shard {self.nm(t.shard)} is not one of the group's")
        elif not all(isinstance(x, (int, Fraction)) and not isinstance(x, bool) for x in (t.lo, t.hi)):
            self.fail(f"{where}: chunk bounds must be exact fractions, got {t.lo!r} and {t.hi!r}")
        elif not (ZERO <= t.lo < t.hi <= ONE):
            self.fail(f"{where}: chunk [{t.lo}, {t.hi}) is not a non-empty part of [0, 1)")
        elif self.copy_only and t.reduce:
            self.fail(f"{where}: {_ARTICLE_NAME[self.collective]} does not reduce")
        else:
            return True
        return False

    def read(self, t: Transfer):
        """The payload a transfer carries, as [(a, b, mask)], or None after reporting why it cannot be sent."""
        link = self.topo.links[t.link]
        u = link.src
        if not self.topo.is_compute(u):
            return self.take_from_switch(u, t)
        pieces = self.cell(u, t.shard).pieces(t.lo, t.hi)
        for a, b, mask in pieces:
            if mask == 0:
                self.fail(f"{self.head(t)} but does not hold {self.span(a, b)} yet (data not yet received)")
                return None
            if not t.reduce and mask != self.full:
                self.fail(f"{self.head(t)} as a copy, but its {self.span(a, b)} is a partial sum of "
                          f"{self.contributors(mask)}, "
                          f"not yet fully reduced")
                return None
        return pieces

    def head(self, t: Transfer) -> str:
        link = self.topo.links[t.link]
        return (f"step {t.step}: {self.nm(link.src)} -> {self.nm(link.dst)} (link {t.link}) sends "
                f"{self.piece(t.shard, t.lo, t.hi)}")

    def take_from_switch(self, sw: int, t: Transfer):
        items = self.buffers.get((sw, t.shard), [])
        need = [(t.lo, t.hi)]
        payload = []
        while need:
            lo, hi = need.pop()
            for item in items:
                a, b, mask = item
                if a <= lo < b:
                    end = min(b, hi)
                    payload.append((lo, end, mask))
                    items.remove(item)
                    if a < lo:
                        items.append([a, lo, mask])
                    if end < b:
                        items.append([end, b, mask])
                    if end < hi:
                        need.append((end, hi))
                    break
            else:
                self.fail(f"{self.head(t)}, but switch {self.nm(sw)} holds no unsent copy of {self.span(lo, hi)}: "
                          f"it was never received or was already forwarded (switches do not copy)")
                return None
        payload.sort()
        return payload

    def write(self, t: Transfer, payload) -> None:
        link = self.topo.links[t.link]
        w = link.dst
        if not self.topo.is_compute(w):
            self.buffers.setdefault((w, t.shard), []).extend([a, b, m] for a, b, m in payload)
            return
        cell = self.cell(w, t.shard)
        for a, b, mask in payload:
            if not t.reduce:
                if mask != self.full:
                    self.fail(f"step {t.step}: {self.nm(w)} receives a copy of {self.piece(t.shard, a, b)} "
                              f"that is only a partial sum of {self.contributors(mask)}")
                    return
                if any(m == self.full for _, _, m in cell.pieces(a, b)):
                    self.redundant += 1
                cell.assign(a, b, self.full)
                continue
            for a2, b2, have in cell.pieces(a, b):
                if have & mask:
                    self.fail(f"step {t.step}: {self.nm(w)} reduces {self.piece(t.shard, a2, b2)} from "
                              f"{self.nm(link.src)} twice: contributions {self.contributors(have & mask)} are "
                              f"delivered twice into the reduction")
                    return
            cell.merge(a, b, mask)

    # --- postcondition
    def check_demand(self) -> bool:
        """A custom schedule's demand is present and well formed (else the faults are recorded)."""
        if self.demand is None:
            self.fail("a custom schedule needs a demand (Schedule(..., demand=[(dst, shard, lo, hi), ...])), its "
                      "postcondition; this one has none")
            return False
        topo = self.topo
        wanted = []
        for entry in self.demand:
            dst, shard, lo, hi = entry
            exact = all(isinstance(x, (Integral, Fraction)) and not isinstance(x, bool) for x in entry)
            if not exact:
                self.fail(f"demand entry {tuple(entry)}: nodes must be integers and bounds exact fractions")
            elif not all(0 <= v < topo.num_nodes and topo.is_compute(int(v)) for v in (dst, shard)):
                self.fail(f"demand entry {tuple(entry)}: destination and shard must be compute nodes")
            elif not ZERO <= lo < hi <= ONE:
                self.fail(f"demand entry {tuple(entry)}: [{lo}, {hi}) is not a non-empty part of [0, 1)")
            else:
                wanted.append((int(dst), int(shard), Fraction(lo), Fraction(hi)))
            if len(self.errors) >= MAX_ERRORS:
                break
        self.demand = wanted
        return not self.errors

    def check_root(self) -> bool:
        """A rooted schedule names a compute node as its root (else the fault is recorded)."""
        root, topo = self.root, self.topo
        if isinstance(root, Integral) and not isinstance(root, bool) and 0 <= root < topo.num_nodes \
                and topo.is_compute(int(root)) and int(root) in self.bit:
            return True
        self.fail(f"a {self.collective.value} needs a root that is a compute node of the topology (and of its group), "
                  f"not {root!r}")
        return False

    def check_group(self) -> bool:
        """A group is two or more compute nodes of the topology (else the fault is recorded)."""
        if all(0 <= v < self.topo.num_nodes and self.topo.is_compute(v) for v in self.members) \
                and len(self.members) >= 2:
            return True
        self.fail("a group is two or more compute nodes of the topology")
        return False

    def check_postcondition(self) -> None:
        comp = self.members
        if self.collective.rooted:
            if self.collective is Collective.SCATTER:
                wanted = [(v, v) for v in comp]
            elif self.collective is Collective.BROADCAST:
                wanted = [(u, v) for u in comp for v in comp]
            else:
                wanted = [(self.root, v) for v in comp]
            for u, v in wanted:
                for a, b, mask in self.cell(u, v).pieces(0, self.one):
                    if mask == self.full:
                        continue
                    if mask == 0 or self.collective.copy_only:
                        self.fail(f"{self.collective.value} not complete: {self.nm(u)} ends without "
                                  f"{self.piece(v, a, b)}")
                    else:
                        self.fail(f"reduce not complete: root {self.nm(u)} ends with {self.piece(v, a, b)} missing "
                                  f"the contributions of {self.contributors(self.full & ~mask)}")
                    if len(self.errors) >= MAX_ERRORS:
                        return
            return
        if self.collective is Collective.ALLTOALL:
            n = len(comp)
            for d_index, d in enumerate(comp):
                a0, b0 = d_index * self.one // n, (d_index + 1) * self.one // n
                for s in comp:
                    for a, b, mask in self.cell(d, s).pieces(a0, b0):
                        if mask != self.full:
                            self.fail(f"all-to-all piece never delivered: destination {self.nm(d)} ends without "
                                      f"{self.piece(s, a, b)} (its piece of shard {self.nm(s)} is "
                                      f"{self.span(a0, b0)})")
                            if len(self.errors) >= MAX_ERRORS:
                                return
            return
        if self.collective is Collective.CUSTOM:
            for dst, shard, lo, hi in self.demand:
                a0, b0 = int(lo * self.one), int(hi * self.one)
                for a, b, mask in self.cell(dst, shard).pieces(a0, b0):
                    if mask != self.full:
                        self.fail(f"demand not met: destination {self.nm(dst)} ends without {self.piece(shard, a, b)}")
                        if len(self.errors) >= MAX_ERRORS:
                            return
            return
        if self.collective is Collective.REDUCE_SCATTER:
            wanted = [(v, v) for v in comp]
        else:
            wanted = [(u, v) for u in comp for v in comp]
        for u, v in wanted:
            for a, b, mask in self.cell(u, v).pieces(0, self.one):
                if mask == self.full:
                    continue
                if self.collective is Collective.ALLGATHER:
                    self.fail(f"chunk never delivered: {self.nm(u)} ends without {self.piece(v, a, b)}")
                else:
                    self.fail(f"{self.nm(u)} ends with {self.piece(v, a, b)} missing the contributions of "
                              f"{self.contributors(self.full & ~mask)}")
                if len(self.errors) >= MAX_ERRORS:
                    return

    def run(self, schedule: Schedule) -> Verification:
        by_step: dict[int, list[Transfer]] = {}
        for t in schedule.transfers:
            if self.well_formed(t):
                by_step.setdefault(t.step, []).append(t)
            if len(self.errors) >= MAX_ERRORS:
                break
        if self.collective is Collective.CUSTOM:
            self.check_demand()
        if getattr(schedule, "group", None) is not None and not self.check_group():
            return Verification(False, self.errors[:MAX_ERRORS])
        if self.collective.rooted:
            self.check_root()
        if self.errors:
            return Verification(False, self.errors[:MAX_ERRORS])
        denominators = {x.denominator for t in schedule.transfers for x in (t.lo, t.hi)}
        if self.collective is Collective.ALLTOALL:
            denominators.add(max(self.topo.n, 1))          # the pieces [j/N, (j+1)/N) are made of whole units
        elif self.collective is Collective.CUSTOM:
            denominators.update(x.denominator for e in self.demand for x in e[2:])
        self.one = lcm(*denominators)
        for step, items in by_step.items():
            items[:] = [t._replace(lo=t.lo.numerator * (self.one // t.lo.denominator),
                                   hi=t.hi.numerator * (self.one // t.hi.denominator)) for t in items]
        for step in sorted(by_step):
            payloads = []
            for t in by_step[step]:
                payload = self.read(t)
                if payload is not None:
                    payloads.append((t, payload))
                if len(self.errors) >= MAX_ERRORS:
                    break
            for t, payload in payloads:
                self.write(t, payload)
            if self.errors:
                return Verification(False, self.errors[:MAX_ERRORS], self.redundant)
        self.check_postcondition()
        return Verification(not self.errors, self.errors[:MAX_ERRORS], self.redundant)


FAST_MIN_TRANSFERS = 2000       # below it the simulator is as quick; above it the vectorized proofs save 10-30x
FAST_MAX_CELLS = 50_000_000


def _fast_copy_phase(topo: Topology, cols: Columns, rows) -> tuple[bool, int]:
    """Vectorized allgather check of the transfers ``rows`` of ``cols`` on a switch-free ``topo``, each node
    starting with only its own shard: (every copy sent was held and every node ends with every shard,
    number of redundant transfers). Pieces are the segments between all chunk bounds used on a shard; shards
    are independent, so they are checked in batches that keep the node x segment table small."""
    n, one = topo.num_nodes, cols.one
    width = one + 1
    if n * width >= 2 ** 62:
        return False, 0
    order = np.argsort(cols.shard[rows], kind="stable")
    rows = np.asarray(rows)[order]
    shard, lo, hi = cols.shard[rows], cols.lo[rows], cols.hi[rows]
    own = np.arange(n, dtype=np.int64) * width
    bounds = sorted_unique(np.concatenate([shard * width + lo, shard * width + hi, own, own + one]))
    first = np.searchsorted(bounds, shard * width + lo)
    last = np.searchsorted(bounds, shard * width + hi)
    starts, ends = np.searchsorted(bounds, own), np.searchsorted(bounds, own + one)
    link_src, link_dst = topo.link_ends
    budget = max(FAST_MAX_CELLS // max(n, 1), 1)
    redundant = 0
    v = 0
    while v < n:                      # a batch of shards v..w-1 whose segments fit the budget
        w = v + 1
        while w < n and ends[w] - starts[v] <= budget:
            w += 1
        base, cells = starts[v], ends[w - 1] - starts[v]
        lo_row, hi_row = np.searchsorted(shard, v), np.searchsorted(shard, w)
        if cells * n > 4 * FAST_MAX_CELLS:
            return False, 0
        a, b = first[lo_row:hi_row] - base, last[lo_row:hi_row] - base
        lengths = b - a
        which = np.repeat(np.arange(len(a)), lengths)
        segment = a[which] + np.arange(len(which)) - np.repeat(np.cumsum(lengths) - lengths, lengths)
        batch = rows[lo_row:hi_row]
        src, dst = link_src[cols.link[batch]][which], link_dst[cols.link[batch]][which]
        have = np.zeros((n, cells), dtype=bool)
        for x in range(v, w):
            have[x, starts[x] - base:ends[x] - base] = True
        steps = cols.step[batch][which]
        by_step = np.argsort(steps, kind="stable")
        cuts = np.flatnonzero(np.diff(steps[by_step])) + 1
        for group in np.split(by_step, cuts):
            if not have[src[group], segment[group]].all():
                return False, 0
            d, seg = dst[group], segment[group]
            again = have[d, seg]
            _, firsts = np.unique(d * cells + seg, return_index=True)
            repeated = np.ones(len(group), dtype=bool)
            repeated[firsts] = False
            redundant += len(np.unique(which[group][again | repeated]))
            have[d, seg] = True
        real = (bounds[base:base + cells] % width) != one   # a shard's last bound starts no segment
        if not have[:, real].all():
            return False, 0
        v = w
    return True, redundant


def _fast_partition_phase(topo: Topology, cols: Columns, rows) -> bool:
    """The common case of ``_fast_copy_phase`` without its segment tables: when every node receives the pieces
    of every other shard exactly once (its receipts of a shard tile [0, 1)) and never its own, it holds a point
    from the step of the receipt covering it, so a send is valid iff every receipt it overlaps came earlier
    (``receipt_table.partition_ok`` on every shard at once). True only when the allgather is proven correct with
    no redundant receipt."""
    rows = np.asarray(rows)
    link_src, link_dst = topo.link_ends
    n = topo.num_nodes
    return partition_ok(n, 0, n, cols.one, cols.shard[rows], link_src[cols.link[rows]], link_dst[cols.link[rows]],
                        cols.lo[rows], cols.hi[rows], cols.step[rows])


def _fast_verify(topo: Topology, schedule: Schedule) -> Verification | None:
    """A vectorized proof that the schedule is correct, or None (the simulator then decides and explains).
    Only allgather, reduce-scatter and allreduce have one; all-to-all and custom schedules always get None. On a
    fabric with switches the phases are proven by ``switched_proof`` (store and forward of whole pieces).

    Allgather: the copy check above. Reduce-scatter: by Theorem 1 its time reverse is an allgather on G^T; when
    that allgather is correct and never delivers a piece twice, every piece of shard v is summed over an
    in-tree whose branches carry disjoint, complete partial sums, so the reduce-scatter is correct. Allreduce:
    a reduce-scatter phase that ends before an allgather phase, each checked so."""
    if schedule.collective not in (Collective.ALLGATHER, Collective.REDUCE_SCATTER, Collective.ALLREDUCE) \
            or getattr(schedule, "group", None) is not None:
        return None         # all-to-all, custom, rooted and group schedules: the simulator decides
    if schedule.count < FAST_MIN_TRANSFERS:
        return None
    cols = columns(schedule, compact=True)
    if cols is None or cols.lo.dtype == object:    # Python-int bounds: no vectorized proof
        return None
    try:
        cols = ranked(cols)                        # a bounds table: its positions, in the same order
    except ValueError:
        return None
    n_links = len(topo.links)
    if ((cols.step < 1).any() or (cols.link < 0).any() or (cols.link >= n_links).any() or (cols.shard < 0).any()
            or (cols.shard >= topo.num_nodes).any() or (cols.lo < 0).any() or (cols.lo >= cols.hi).any()
            or (cols.hi > cols.one).any()):
        return None
    n_reduce = int(np.count_nonzero(cols.reduce))
    n_copy = len(cols.reduce) - n_reduce
    collective = schedule.collective
    if collective is Collective.ALLGATHER and n_reduce:
        return None
    if collective is Collective.REDUCE_SCATTER and n_copy:
        return None
    if collective is Collective.ALLREDUCE and (not n_reduce or not n_copy
                                              or cols.step[cols.reduce].max() >= cols.step[~cols.reduce].min()):
        return None
    mixed = n_reduce and n_copy
    if topo.switch_nodes:                          # store and forward through switches: switched_proof
        last = int(cols.step[cols.reduce].max()) if mixed else int(cols.step.max())
        if n_reduce and not switched_copy_proves(topo.transpose(), cols, np.flatnonzero(cols.reduce) if mixed
                                                 else None, last):
            return None
        if n_copy and not switched_copy_proves(topo, cols, np.flatnonzero(~cols.reduce) if mixed else None):
            return None
        return Verification(True, [], 0)
    redundant = 0
    if n_reduce:
        last = int(cols.step[cols.reduce].max()) if mixed else int(cols.step.max())
        if not receipt_table_proves(topo.transpose(), cols, True if mixed else None, last):
            wide, reduce_rows = widened(cols), np.flatnonzero(cols.reduce)
            flipped = Columns(last + 1 - wide.step, wide.link, wide.shard, wide.lo, wide.hi, wide.reduce, wide.one)
            if not _fast_partition_phase(topo.transpose(), flipped, reduce_rows):
                ok, again = _fast_copy_phase(topo.transpose(), flipped, reduce_rows)
                if not ok or again:
                    return None
    if n_copy and not receipt_table_proves(topo, cols, False if mixed else None):
        wide, copy_rows = widened(cols), np.flatnonzero(~cols.reduce)
        if not _fast_partition_phase(topo, wide, copy_rows):
            ok, redundant = _fast_copy_phase(topo, wide, copy_rows)
            if not ok:
                return None
    return Verification(True, [], redundant)


SIMULATE_MAX_TRANSFERS = 16_000_000   # about 25 us and 800 bytes a transfer: 7 minutes and 13 GB at the limit


def verify(topo: Topology, schedule: Schedule) -> Verification:
    """Simulate ``schedule`` on ``topo`` and report whether it is a correct ``schedule.collective``.

    Large schedules first try a vectorized check that can only confirm
    correctness; anything it cannot confirm goes through the simulator, which also writes the messages. A
    schedule beyond SIMULATE_MAX_TRANSFERS that no vectorized check confirms is reported not verified, with the
    reason, instead of being simulated for hours and gigabytes."""
    fast = _fast_verify(topo, schedule)
    if fast is not None:
        return fast
    if schedule.count > SIMULATE_MAX_TRANSFERS:
        return Verification(False, [f"not verified: {schedule.count} transfers are more than the simulator takes "
                                    f"({SIMULATE_MAX_TRANSFERS}), and the vectorized proofs did not confirm it"])
    return _Simulator(topo, schedule).run(schedule)


def check(topo: Topology, schedule: Schedule) -> Schedule:
    """``schedule`` itself when it verifies; else ScheduleError with the first fault."""
    verify(topo, schedule).raise_if_failed()
    return schedule
