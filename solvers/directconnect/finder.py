"""The topology finder (direct-connect paper §5.4, App. A.3 and A.6; digest sections 7 and 11).

For a target of N nodes and degree d it returns the Pareto frontier over (steps, tb_factor) of the allgather
schedules that the base database and the expansion theorems can reach: a candidate is dropped only if another is
no worse in both numbers and better in one (the paper: "inferior ... only if it is worse in both").

The search is bottom-up over cells (n, k) = (nodes, degree), each a pruned list of ``Candidate``:

- seeds, the base database: K_{k+1}, K_{k,k}, UniRing(k,n), BiRing(k,n), the Theorem 22 circulant C(n) for 4 | k,
  the directed circulant on k+2 nodes, DBJ(k,1), Π_{k,n} (BFB values from ``solvers.directconnect.base_table``), the 13
  distance-regular graphs of Table 8, Diamond and DBJMod (their searched schedules);
- expansions of smaller cells, predicted by Table 3 (digest §4.1), not built:
  L (Thm 7/10): (n k, k) from (n, k), steps + 1, tb + 1/n (exact for an optimal BFB base whose nodes have two
  or more distinct out-neighbours, an upper bound otherwise);
  degree ∗m (Thm 11): (m n, m k), steps + 1, tb + (m-1)/(m n), for bases without self-loops;
  power □m (Thm 12): (n^m, m k), m steps, tb n/(n-1) (n^m-1)/n^m;
  product □ (Thm 13) of simple graphs with BW-optimal BFB schedules: (Π n_i, Σ k_i), Σ D_i steps, tb (N-1)/N
  (with parallel links the product's BFB schedule falls short, so such factors are not used);
  bidirectional G ∪ G^T (A.6) of reverse-symmetric G: (n, 2k), the same steps and tb.

A cell keeps a candidate unless another has steps and tb no larger and every property an expansion may need
(bidirectional, reverse symmetry, no self-loops, two distinct out-neighbours, optimal BFB, exact prediction,
simple graph).
The target frontier then uses plain dominance; equal points keep the simplest construction.

At the target itself every kept candidate of up to ``MEASURE_MAX_NODES`` nodes is also measured: BFB is run on
its built graph (``bfb_values``), and where that beats the expansion schedule in steps or tb the BFB point joins
the frontier as its own entry (``schedule == "bfb"``). The theorems' prediction is not always the best schedule
the studio has: BFB reaches tb 127/128 on L(UniRing(1,8)^{□2}) where the line-graph expansion gives 1, and 3
steps on C(16,{3,4})∗2 where the degree expansion takes 4.

What this leaves out, on purpose: BFB measured on candidates that a cell pruned by their predictions, on
intermediate cells and above ``MEASURE_MAX_NODES`` (the paper's "BFB augmented" BiRing(2,5)∗2 of Table 5 is
reached here by C(10,{2,3})), Cartesian products of factors without a BW-optimal BFB schedule (the paper runs
BFB on the product; predicting it needs that run), and Π_{k,n} rows missing from the table (each is a BFB run):
they are solved on demand for n <= ON_DEMAND_GKAUTZ and at the target itself.

Every candidate's ``expr`` is an expression of ``topologies.expression`` that ``solvers.directconnect.expansion.expand`` builds
with its schedule; ``build_candidate`` does that and the tests compare the built values with the prediction.
"""
from __future__ import annotations

import re
from dataclasses import dataclass, field, replace
from fractions import Fraction
from functools import lru_cache
from math import isqrt
from typing import Callable, Iterable

from topologies import distance_regular, reconstructed
from topologies.expression import parse_topology
from topologies.families import theorem22_generators
from topologies.model import Topology, TopologyError
from topologies.properties import moore_diameter_directed, moore_diameter_undirected
from topologies.symmetry import transpose_isomorphism

from . import base_table
from ..core.errors import NotApplicable

SEED_FAMILIES = ("complete", "bipartite", "uniring", "biring", "circulant", "dcirculant", "debruijn", "gkautz",
                 "distreg", "diamond", "dbjmod")
EXPANSION_FAMILIES = ("line", "degree", "power", "product", "bidir")
MAX_NODES = 4096
MAX_DEGREE = 64
ON_DEMAND_GKAUTZ = 128   # Π_{k,n} missing from the table is computed for n up to this (and at the target)
MEASURE_MAX_NODES = 256  # target candidates up to this size are also measured with BFB on the built graph


@dataclass(frozen=True)
class Candidate:
    """One construction with the (steps, tb_factor) that the theorems predict for its schedule.

    ``bfb``: the schedule is an optimal BFB schedule (the premise of Thm 10 and, with BW optimality, Thm 13);
    ``exact``: the prediction is the schedule's value, not only an upper bound on tb; ``multi_out``: every node
    has at least two distinct out-neighbours besides itself (Thm 10's other premise). ``schedule``: the
    synthesizer whose allgather has these (steps, tb): "expansion" (the theorems' prediction) or "bfb" (BFB
    measured on the built graph, ``measured_bfb``)."""

    expr: str
    name: str
    nodes: int
    degree: int
    steps: int
    tb: Fraction
    bidirectional: bool
    rev_sym: bool
    loops: bool
    multi_out: bool
    bfb: bool
    exact: bool = True
    simple: bool = True
    families: frozenset = field(default=frozenset())
    ops: str = ""
    schedule: str = "expansion"

    @property
    def bw_optimal(self) -> bool:
        return self.tb == Fraction(self.nodes - 1, self.nodes)

    @property
    def factor(self) -> bool:
        """Usable in a Thm 13 product: an optimal BFB schedule (steps = diameter) that is BW-optimal, on a
        simple graph. With parallel links the product's BFB schedule falls short of (N-1)/N (UniRing(2,2) □ K_5
        gets tb 1, not 9/10), so such factors are left out, as ``solvers.directconnect.expansion`` does."""
        return self.bfb and self.exact and self.simple and self.bw_optimal

    @property
    def code(self) -> str:
        """Fig. 15's legend: the expansions used (L line, D degree, P power, C product of distinct graphs,
        B bidirectional) then the base family; e.g. 'L+circulant'."""
        base = "/".join(sorted(self.families))
        return f"{self.ops}+{base}" if self.ops else base

    def _flags(self) -> tuple[bool, ...]:
        return (self.bidirectional, self.rev_sym, not self.loops, self.multi_out, self.bfb, self.exact, self.simple)

    def _simplicity(self) -> tuple:
        # among equal points prefer fewer expansions, then the paper's own graphs over our reconstructions
        # and the theorems' schedule over a measured BFB one at the same point
        reconstructed = bool(self.families & {"diamond", "dbjmod"})
        return (self.schedule != "expansion", len(self.ops), reconstructed, len(self.expr), self.expr)

    def as_dict(self) -> dict:
        return {"name": self.name, "expr": self.expr, "nodes": self.nodes, "degree": self.degree,
                "steps": self.steps, "tb_factor": float(self.tb), "tb_exact": str(self.tb),
                "bw_optimal": self.bw_optimal, "bidirectional": self.bidirectional, "code": self.code,
                "prediction_exact": self.exact, "schedule": self.schedule}


def _covers(a: Candidate, b: Candidate, flags: bool) -> bool:
    """a makes b redundant: no worse in steps and tb, (with ``flags``) every property of b, and a strict gain
    or an equal point with a construction at least as simple."""
    if a.steps > b.steps or a.tb > b.tb:
        return False
    if flags and not all(x >= y for x, y in zip(a._flags(), b._flags())):
        return False
    if a.steps < b.steps or a.tb < b.tb:
        return True
    return a._simplicity() <= b._simplicity()


def pareto(cands: Iterable[Candidate], flags: bool = False) -> list[Candidate]:
    """The candidates no other covers, lowest steps first (one per point; the simplest of equal ones)."""
    pool = sorted(set(cands), key=lambda c: (c.steps, c.tb, c._simplicity()))
    kept: list[Candidate] = []
    for c in pool:
        if not any(_covers(k, c, flags) for k in kept):
            kept.append(c)
    return kept


# ------------------------------------------------------------------------------------------------- seeds
def _wrap(name: str) -> str:
    return f"({name})" if any(op in name for op in ("□", "∗", "∪", "−")) else name


def _simple_seed(expr, name, n, k, steps, tb, *, family, bidirectional, rev_sym=True, loops=False, multi_out=True,
                 bfb=True, simple=True) -> Candidate:
    return Candidate(expr, name, n, k, steps, tb, bidirectional, rev_sym, loops, multi_out, bfb, True, simple,
                     frozenset([family]))


@lru_cache(maxsize=None)
def _measured_seed(expr: str, family: str) -> Candidate:
    """A fixed catalogue graph: build it once and take its base schedule's values (BFB, or the embedded searched
    schedule for Diamond and DBJMod) and its properties."""
    from .expansion import expand

    built = expand(expr)
    topo, pred = built.topology, built.prediction
    return Candidate(expr, topo.name or expr, topo.n, _degree(topo), pred.steps, pred.tb_factor,
                     _is_bidirectional(topo), transpose_isomorphism(topo) is not None,
                     any(l.src == l.dst for l in topo.links), _multi_out(topo), built.schedule.algo == "bfb", True,
                     _is_simple(topo), frozenset([family]))


def _degree(topo: Topology) -> int:
    return max(len(x) for x in topo.out_links)


def _is_bidirectional(topo: Topology) -> bool:
    from collections import Counter

    pairs = Counter((l.src, l.dst) for l in topo.links)
    return all(pairs[b, a] == c for (a, b), c in pairs.items())


def _is_simple(topo: Topology) -> bool:
    pairs = [(l.src, l.dst) for l in topo.links]
    return len(set(pairs)) == len(pairs) and all(a != b for a, b in pairs)


def _multi_out(topo: Topology) -> bool:
    return all(len({topo.links[i].dst for i in topo.out_links[u]} - {u}) >= 2 for u in range(topo.num_nodes))


@lru_cache(maxsize=1)
def _fixed_seeds() -> dict[tuple[int, int], list[tuple[str, str]]]:
    """(n, k) -> [(expr, family)] for the graphs of fixed size: Table 8's distance-regular graphs, Diamond and
    DBJMod (the sizes come from the expression table without building anything)."""
    from topologies.expression import FAMILIES

    table: dict[tuple[int, int], list[tuple[str, str]]] = {}
    fixed = [(f"{name}()", "distreg") for name in distance_regular.EXPRESSIONS]
    fixed += [("diamond()", "diamond")] + [(f"dbjmod({d},{n})", "dbjmod") for d, n in reconstructed.DBJMOD_SHAPES]
    for expr, family in fixed:
        call_name = expr.split("(")[0]
        args = [int(x) for x in expr[len(call_name) + 1:-1].split(",") if x]
        n, links = FAMILIES[call_name].size(*args)
        table.setdefault((n, links // n), []).append((expr, family))
    return table


@lru_cache(maxsize=None)
def _gkautz_rev_sym(k: int, n: int) -> bool:
    from topologies.families import gkautz

    return transpose_isomorphism(gkautz(k, n)) is not None


def _gkautz_seed(k: int, n: int, compute: bool) -> Candidate | None:
    values = base_table.tabulated(k, n)
    if values is None:
        if not compute:
            return None
        values = base_table.gkautz_values(k, n)
    steps, tb = values
    loops = base_table.self_loops(k, n)
    # out-neighbours -k x - a (a = 1..k) are distinct mod n > k; a loop removes one of them
    return Candidate(f"gkautz({k},{n})", f"Π_{{{k},{n}}}", n, k, steps, tb, False, False, loops,
                     k >= 3 or not loops, True, True, not loops, frozenset(["gkautz"]))


# --------------------------------------------------------------------------------------------- expansions
_LINE = re.compile(r"^line\((.*),(\d+)\)$")


def line_of(c: Candidate) -> Candidate:
    """L(c), Thm 7 / Thm 10 (digest §4.2)."""
    inner, j, name = c.expr, 1, c.name
    m = _LINE.match(c.expr)
    if m:
        inner, j = m.group(1), int(m.group(2)) + 1
        name = re.sub(r"^L(\^\d+)?\((.*)\)$", r"\2", c.name)
        name = f"L^{j}({name})"
    else:
        name = f"L({c.name})"
    loops_kept = c.loops
    return Candidate(f"line({inner},{j})", name, c.nodes * c.degree, c.degree, c.steps + 1,
                     c.tb + Fraction(1, c.nodes), False, c.rev_sym, loops_kept,
                     c.degree >= 3 or (c.degree == 2 and not c.loops), c.bfb and c.multi_out,
                     c.exact and c.bfb and c.multi_out, c.simple, c.families, _ops("L", c.ops))


def degree_of(c: Candidate, m: int) -> Candidate:
    """c∗m, Thm 11 (digest §4.3); c must have no self-loops."""
    return Candidate(f"degree({c.expr},{m})", f"{_wrap(c.name)}∗{m}", c.nodes * m, c.degree * m, c.steps + 1,
                     c.tb + Fraction(m - 1, m * c.nodes), c.bidirectional, c.rev_sym, False, True, False, c.exact,
                     c.simple, c.families, _ops("D", c.ops))


def power_of(c: Candidate, m: int) -> Candidate:
    """c^{□m}, Thm 12 (digest §4.4)."""
    n = c.nodes
    tb = c.tb * Fraction(n, n - 1) * Fraction(n ** m - 1, n ** m)
    return Candidate(f"power({c.expr},{m})", f"{_wrap(c.name)}^{{□{m}}}", n ** m, c.degree * m, c.steps * m, tb,
                     c.bidirectional, c.rev_sym, c.loops, True, c.factor, c.exact, c.simple, c.families,
                     _ops("P", c.ops))


def product_of(a: Candidate, b: Candidate) -> Candidate:
    """a □ b for two factors with BW-optimal BFB schedules, Thm 13 (digest §4.4): BFB on the product takes
    D(a) + D(b) steps and is BW-optimal."""
    n = a.nodes * b.nodes
    if a.expr == b.expr:   # the same graph twice: name it as the power it is
        expr, name = f"power({a.expr},2)", f"{_wrap(a.name)}^{{□2}}"
    else:
        expr = f"product({','.join(_product_parts(a) + _product_parts(b))})"
        name = "□".join(x.name if x.ops == "C" else _wrap(x.name) for x in (a, b))
    return Candidate(expr, name, n, a.degree + b.degree, a.steps + b.steps, Fraction(n - 1, n),
                     a.bidirectional and b.bidirectional, a.rev_sym and b.rev_sym, a.loops or b.loops, True, True,
                     True, a.simple and b.simple, a.families | b.families, _ops("C", a.ops + b.ops))


def _product_parts(c: Candidate) -> list[str]:
    if c.expr.startswith("product(") and c.ops == "C":
        return _split_args(c.expr[len("product("):-1])
    return [c.expr]


def _split_args(text: str) -> list[str]:
    out, depth, start = [], 0, 0
    for i, ch in enumerate(text):
        if ch in "([":
            depth += 1
        elif ch in ")]":
            depth -= 1
        elif ch == "," and depth == 0:
            out.append(text[start:i])
            start = i + 1
    out.append(text[start:])
    return out


def bidir_of(c: Candidate) -> Candidate:
    """G ∪ G^T for a reverse-symmetric G, A.6 (digest §7.4): degree doubles, steps and tb stay."""
    return Candidate(f"bidir({c.expr})", f"{_wrap(c.name)}∪{_wrap(c.name)}^T", c.nodes, 2 * c.degree, c.steps,
                     c.tb, True, True, c.loops, True, False, c.exact, False, c.families, _ops("B", c.ops))


def _ops(op: str, inner: str) -> str:
    return "".join(sorted(set(op + inner)))


# --------------------------------------------------------------------------------------------- measurement
@lru_cache(maxsize=4096)
def _bfb_point(expr: str) -> tuple[int, Fraction] | None:
    from .bfb import bfb_values

    try:
        return bfb_values(parse_topology(expr, max_nodes=MEASURE_MAX_NODES))
    except (NotApplicable, TopologyError):
        return None


def measured_bfb(c: Candidate) -> Candidate | None:
    """The BFB entry for c's graph: (steps, tb) of the optimal BFB allgather run on the built topology, when that
    beats c's own point in steps or tb; None otherwise, above ``MEASURE_MAX_NODES`` nodes, and for a seed whose
    values already are BFB's on the same graph."""
    if c.schedule != "expansion" or c.nodes > MEASURE_MAX_NODES or (c.bfb and not c.ops):
        return None
    point = _bfb_point(c.expr)
    if point is None or (point[0] >= c.steps and point[1] >= c.tb):
        return None
    steps, tb = point
    return replace(c, steps=steps, tb=tb, bfb=True, exact=True, schedule="bfb")


# ---------------------------------------------------------------------------------------------- the search
def _root(n: int, m: int) -> int | None:
    r = round(n ** (1 / m))
    for x in (r - 1, r, r + 1):
        if x >= 2 and x ** m == n:
            return x
    return None


def _divisors(n: int) -> list[int]:
    small = [x for x in range(1, isqrt(n) + 1) if n % x == 0]
    return sorted(set(small + [n // x for x in small]))


class Finder:
    """A memoized bottom-up search. One instance serves many targets (the cells are shared), e.g. a sweep.

    ``exclude``: seed families or expansions to leave out (names in SEED_FAMILIES / EXPANSION_FAMILIES);
    ``on_demand``: solve a Π_{k,n} row missing from the table when n <= ON_DEMAND_GKAUTZ (else leave it out)."""

    def __init__(self, exclude: Iterable[str] = (), on_demand: bool = True):
        self.exclude = frozenset(exclude)
        self.on_demand = on_demand
        unknown = self.exclude - set(SEED_FAMILIES) - set(EXPANSION_FAMILIES)
        if unknown:
            raise NotApplicable(f"unknown family to exclude: {', '.join(sorted(unknown))} "
                                f"(known: {', '.join(SEED_FAMILIES + EXPANSION_FAMILIES)})")
        self._cells: dict[tuple[int, int], list[Candidate]] = {}
        self._factor_cache: dict[tuple[int, int], list[Candidate]] = {}
        self._target: tuple[int, int] | None = None

    def _use(self, family: str) -> bool:
        return family not in self.exclude

    # -- seeds
    def seeds(self, n: int, k: int) -> list[Candidate]:
        out: list[Candidate] = []
        bw = Fraction(n - 1, n)
        if n == k + 1 and self._use("complete"):
            out.append(_simple_seed(f"complete({n})", f"K_{{{n}}}" if n >= 10 else f"K_{n}", n, k, 1, bw,
                                    family="complete", bidirectional=True, multi_out=n >= 3))
        if n == 2 * k and self._use("bipartite"):
            out.append(_simple_seed(f"bipartite({k})", f"K_{{{k},{k}}}", n, k, 2, Fraction(2 * k - 1, 2 * k),
                                    family="bipartite", bidirectional=True, multi_out=k >= 2))
        if n >= 2 and self._use("uniring"):
            out.append(_simple_seed(f"uniring({k},{n})", f"UniRing({k},{n})", n, k, n - 1, bw, family="uniring",
                                    bidirectional=n == 2, multi_out=False, simple=k == 1))
        if k % 2 == 0 and n >= 3 and self._use("biring"):
            out.append(_simple_seed(f"biring({k},{n})", f"BiRing({k},{n})", n, k, n // 2, bw, family="biring",
                                    bidirectional=True, simple=k == 2))
        if k % 4 == 0 and n >= 7 and self._use("circulant"):
            try:
                gens = theorem22_generators(n, k)
            except TopologyError:
                gens = None
            if gens:
                text = ",".join(str(g) for g in sorted(set(gens)))
                glist = ",".join(str(g) for g in gens)
                out.append(_simple_seed(f"circulant({n},[{glist}])", f"C({n},{{{text}}})", n, k, gens[0], bw,
                                        family="circulant", bidirectional=True,
                                        simple=len(set(gens)) == len(gens) and all(2 * a % n for a in gens)))
        if n == k + 2 and k >= 2 and self._use("dcirculant"):
            out.append(_simple_seed(f"dcirculant({k})", f"DC({n},{{1..{k}}})", n, k, 2, bw, family="dcirculant",
                                    bidirectional=False))
        if n == k and k >= 2 and self._use("debruijn"):
            out.append(_measured_seed(f"debruijn({k},1)", "debruijn"))
        if n >= k + 2 and k >= 2 and self._use("gkautz"):
            seed = _gkautz_seed(k, n, compute=(self.on_demand and n <= ON_DEMAND_GKAUTZ) or (n, k) == self._target)
            if seed:
                out.append(seed)
        for expr, family in _fixed_seeds().get((n, k), []):
            if self._use(family):
                out.append(_measured_seed(expr, family))
        return out

    # -- cells
    def cell(self, n: int, k: int) -> list[Candidate]:
        """The pruned candidates with n nodes and degree k."""
        key = (n, k)
        hit = self._cells.get(key)
        if hit is not None:
            return hit
        cands = self.seeds(n, k)
        if k >= 2 and n % k == 0 and n // k >= 2 and self._use("line"):
            cands += [line_of(c) for c in self.cell(n // k, k) if c.multi_out]
        if self._use("degree"):
            for m in range(2, k + 1):
                if k % m == 0 and n % m == 0 and n // m >= 2:
                    cands += [degree_of(c, m) for c in self.cell(n // m, k // m) if not c.loops]
        if self._use("power"):
            for m in range(2, k + 1):
                r = _root(n, m) if k % m == 0 else None
                if r:
                    cands += [power_of(c, m) for c in self.cell(r, k // m)]
        if self._use("product"):
            cands += self._products(n, k)
        if k % 2 == 0 and self._use("bidir"):
            for c in self.cell(n, k // 2):
                if not c.bidirectional and self._rev_sym(c):
                    cands.append(bidir_of(c))
        kept = pareto(cands, flags=True)
        self._cells[key] = kept
        return kept

    def _rev_sym(self, c: Candidate) -> bool:
        if c.rev_sym:
            return True
        # the isomorphism search needs the graph built; that is kept to small n and the target itself
        if c.expr.startswith("gkautz(") and not c.ops and (c.nodes <= ON_DEMAND_GKAUTZ
                                                           or self._target == (c.nodes, 2 * c.degree)):
            return _gkautz_rev_sym(c.degree, c.nodes)
        return False

    def _factors(self, n: int, k: int) -> list[Candidate]:
        hit = self._factor_cache.get((n, k))
        if hit is None:
            hit = self._factor_cache[n, k] = pareto([c for c in self.cell(n, k) if c.factor], flags=True)
        return hit

    def _products(self, n: int, k: int) -> list[Candidate]:
        out = []
        for n1 in _divisors(n):
            n2 = n // n1
            if n1 < 2 or n1 > n2:
                continue
            for k1 in range(1, k):
                k2 = k - k1
                if n1 == n2 and k1 > k2:
                    continue
                left = self._factors(n1, k1)
                if not left:
                    continue
                for a in left:
                    for b in self._factors(n2, k2):
                        out.append(product_of(a, b))
        return out

    # -- targets
    def frontier(self, n: int, d: int, bidirectional: bool = False, compute: bool = True) -> list[Candidate]:
        """The Pareto frontier for n nodes of degree d (only bidirectional topologies with ``bidirectional``),
        lowest steps first. With ``compute``, a Π_{d,n} missing from the table is solved now (one BFB run,
        seconds at n = 2000) and every candidate up to ``MEASURE_MAX_NODES`` nodes is measured with BFB
        (``measured_bfb``, about 5 s for the first N = 256, d = 8 target, cached by expression); without, Π_{d,n}
        is left out and only the predictions count (sweeps)."""
        _check_target(n, d)
        self._target = (n, d) if compute else None
        if compute and base_table.tabulated(d, n) is None:
            self._cells.pop((n, d), None)      # cached by a search that left Π_{d,n} out
            self._factor_cache.pop((n, d), None)
        try:
            cands = [c for c in self.cell(n, d) if c.bidirectional or not bidirectional]
        finally:
            self._target = None
        if compute:
            cands += [m for m in map(measured_bfb, cands) if m is not None]
        return pareto(cands)


def sweep(ns: Iterable[int], d: int, cost: Callable[[int, Fraction], float], finder: Finder | None = None,
          progress: Callable[[float], None] | None = None) -> dict[str, list[tuple[int, float, str]]]:
    """The least ``cost(steps, tb)`` against N for several designs (the paper's Fig. 7 / Fig. 15 style): the best
    frontier topology, the best bidirectional one, Π_{d,N} alone, the Theorem 22 circulant alone (4 | d), the
    most square 2D torus (d = 4) and the theoretical bound. Table values only: an N whose Π_{d,N} is not
    tabulated has no Π point (and its frontier lacks Π). Returns label -> [(N, cost, design name)]."""
    finder = finder or Finder()
    ns = list(ns)
    out: dict[str, list[tuple[int, float, str]]] = {}

    def add(label: str, n: int, c: Candidate | None) -> None:
        if c is not None:
            out.setdefault(label, []).append((n, cost(c.steps, c.tb), c.name))

    for i, n in enumerate(ns):
        for label, bidirectional in (("best found", False), ("best bidirectional", True)):
            front = finder.frontier(n, d, bidirectional, compute=False)
            add(label, n, min(front, key=lambda c: (cost(c.steps, c.tb), c.steps), default=None))
        add("generalized Kautz Π_{d,N}", n, next((c for c in finder.seeds(n, d) if c.expr.startswith("gkautz(")),
                                                None))
        add("circulant C(N)", n, next((c for c in finder.seeds(n, d) if c.expr.startswith("circulant(")), None))
        if d == 4:
            a = max(x for x in _divisors(n) if x * x <= n)
            if a >= 3:
                b = n // a
                add("2D torus", n, _simple_seed(f"torus({a},{b})", f"Torus({a}×{b})", n, 4, a // 2 + b // 2,
                                                Fraction(n - 1, n), family="torus", bidirectional=True))
        steps, tb = bound(n, d)
        out.setdefault("theoretical bound", []).append((n, cost(steps, tb), f"Moore diameter {steps}"))
        if progress:
            progress((i + 1) / len(ns))
    return out


def _check_target(n: int, d: int) -> None:
    if not (isinstance(n, int) and isinstance(d, int)) or n < 2 or d < 1:
        raise NotApplicable(f"the finder needs N >= 2 nodes and degree d >= 1, got N={n}, d={d}")
    if n > MAX_NODES or d > MAX_DEGREE:
        raise NotApplicable(f"the finder covers N <= {MAX_NODES} and d <= {MAX_DEGREE}; got N={n}, d={d}")


def find(n: int, d: int, bidirectional: bool = False, exclude: Iterable[str] = ()) -> list[Candidate]:
    """The frontier for one target (a fresh search; use a ``Finder`` to share cells between targets)."""
    return Finder(exclude).frontier(n, d, bidirectional)


def bound(n: int, d: int, bidirectional: bool = False) -> tuple[int, Fraction]:
    """The 'theoretical bound' point: the Moore diameter (undirected Moore bound for bidirectional graphs) and
    the BW-optimal tb = (N-1)/N (digest §2.5)."""
    steps = moore_diameter_undirected(n, d) if bidirectional else moore_diameter_directed(n, d)
    return steps, Fraction(n - 1, n)


# --------------------------------------------------------------------------------------------- construction
@dataclass
class Constructed:
    candidate: Candidate
    topology: Topology
    steps: int
    tb: Fraction
    diameter: int | None

    @property
    def agrees(self) -> bool:
        return self.steps == self.candidate.steps and self.tb == self.candidate.tb


def build_candidate(c: Candidate, verify: bool = True, max_nodes: int = MAX_NODES) -> Constructed:
    """Build a candidate's topology and its schedule (the expansion schedule, or BFB's for a ``schedule == "bfb"``
    entry), verify the schedule with the simulator, and report its measured values beside the prediction."""
    from topologies.properties import diameter

    from ..core.cost import tb_factor
    from .bfb import bfb_allgather
    from .expansion import expand
    from ..core.verify import check

    if c.schedule == "bfb":
        topology = parse_topology(c.expr, max_nodes=max_nodes)
        schedule = bfb_allgather(topology)
    else:
        built = expand(c.expr, max_nodes=max_nodes)
        topology, schedule = built.topology, built.schedule
    if verify:
        check(topology, schedule)
    return Constructed(c, topology, schedule.steps, tb_factor(topology, schedule), diameter(topology))


def diameter_of(c: Candidate, max_nodes: int = MAX_NODES) -> int | None:
    """The diameter of a candidate's topology (built, without a schedule)."""
    from topologies.properties import diameter

    return diameter(parse_topology(c.expr, max_nodes=max_nodes))

