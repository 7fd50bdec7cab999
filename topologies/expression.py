"""The expression language that names and rebuilds a topology, e.g. ``biring(8)`` or ``complete(4)``.

Grammar (whitespace is free between tokens)::

    expr   := NAME "(" [arg ("," arg)*] ")"
    arg    := [NAME "="] value
    value  := INT | "[" [INT ("," INT)*] "]" | expr

Parsing is a hand-written tokenizer and recursive-descent parser: nothing is ever passed to ``eval``. Every
family declares a cheap ``size`` function so that an expression whose node count passes ``max_nodes`` is
refused before anything is built.
"""
from __future__ import annotations

import os
import re
from dataclasses import dataclass
from typing import Callable

from math import prod

# Each family's module by its own name, not through the package: topologies/__init__.py imports this module.
import topologies.baseline_fabrics as baseline_fabrics
import topologies.clusters as clusters
import topologies.distance_regular as distance_regular
import topologies.expansions as expansions
import topologies.families as families
import topologies.reconstructed as reconstructed
import topologies.tacos_fabrics as tacos_fabrics
import topologies.teccl_fabrics as teccl_fabrics
from .failures import fail_expr
from .unwind import unwind_expr
from .limits import max_links_for
from .model import Topology, TopologyError

MAX_NODES_ENV = "STUDIO_MAX_NODES"
MAX_NODES_FALLBACK = 4096


def max_nodes_from_env() -> int:
    """The node limit ``STUDIO_MAX_NODES`` sets (4096 when it is unset or empty); ExpressionError, one line, for
    anything but a positive whole number in ASCII digits (the CLI checks it at start)."""
    text = os.environ.get(MAX_NODES_ENV, "").strip()
    if not text:
        return MAX_NODES_FALLBACK
    if not re.fullmatch(r"[0-9]{1,18}", text) or int(text) < 1:
        raise ExpressionError(f"{MAX_NODES_ENV} must be a positive whole number of nodes, got {text[:40]!r}")
    return int(text)


MAX_EXPRESSION_LENGTH = 2000
MAX_ARGUMENT = 10 ** 6


class ExpressionError(TopologyError):
    """An expression that does not parse or names something unknown; ``column`` is 1-based."""

    def __init__(self, message: str, column: int | None = None):
        self.column = column
        super().__init__(f"{message} at column {column}" if column else message)


try:                    # a bad value must not stop the import (the app reads it too): the CLI refuses it at start
    DEFAULT_MAX_NODES = max_nodes_from_env()
except ExpressionError:
    DEFAULT_MAX_NODES = MAX_NODES_FALLBACK


@dataclass(frozen=True)
class Call:
    """A parsed ``name(args, key=value)``; ``column`` is where the name starts (1-based)."""

    name: str
    args: tuple
    kwargs: tuple[tuple[str, object], ...]
    column: int


_TOKEN = re.compile(r"\s*(?:(?P<int>-?\d+)|(?P<name>[A-Za-z_][A-Za-z_0-9]*)|(?P<punct>[()\[\],=]))")


def _tokenize(text: str) -> list[tuple[str, object, int]]:
    tokens, pos = [], 0
    while pos < len(text):
        if text[pos:].strip() == "":
            break
        m = _TOKEN.match(text, pos)
        if not m:
            col = pos + len(text[pos:]) - len(text[pos:].lstrip()) + 1
            raise ExpressionError(f"unexpected character {text[col - 1]!r}", col)
        col = m.start(m.lastgroup) + 1
        if m.lastgroup == "int":
            tokens.append(("int", int(m.group("int")), col))
        elif m.lastgroup == "name":
            tokens.append(("name", m.group("name"), col))
        else:
            tokens.append((m.group("punct"), None, col))
        pos = m.end()
    tokens.append(("end", None, len(text) + 1))
    return tokens


class _Parser:
    def __init__(self, text: str):
        self.tokens = _tokenize(text)
        self.i = 0

    def peek(self):
        return self.tokens[self.i]

    def take(self, kind: str, what: str):
        tok = self.tokens[self.i]
        if tok[0] != kind:
            found = "the end of the expression" if tok[0] == "end" else repr(tok[1] if tok[1] is not None
                                                                                 else tok[0])
            raise ExpressionError(f"expected {what}, found {found}", tok[2])
        self.i += 1
        return tok

    def expr(self) -> Call:
        _, name, col = self.take("name", "a topology name such as ring(8)")
        self.take("(", f"'(' after {name}")
        args, kwargs = [], []
        if self.peek()[0] != ")":
            while True:
                tok = self.peek()
                if tok[0] == "name" and self.tokens[self.i + 1][0] == "=":
                    if any(key == tok[1] for key, _ in kwargs):
                        raise ExpressionError(f"{name}() is given the keyword {tok[1]} twice", tok[2])
                    self.i += 2
                    kwargs.append((tok[1], self.value()))
                else:
                    if kwargs:
                        raise ExpressionError("a positional argument follows a keyword argument", tok[2])
                    args.append(self.value())
                if self.peek()[0] == ",":
                    self.i += 1
                    continue
                break
        self.take(")", f"',' or ')' to close {name}(")
        return Call(name, tuple(args), tuple(kwargs), col)

    def value(self):
        kind, val, col = self.peek()
        if kind == "int":
            self.i += 1
            return val
        if kind == "[":
            self.i += 1
            items = []
            if self.peek()[0] != "]":
                while True:
                    items.append(self.take("int", "an integer")[1])
                    if self.peek()[0] == ",":
                        self.i += 1
                        continue
                    break
            self.take("]", "',' or ']' to close the list")
            return tuple(items)
        if kind == "name":
            return self.expr()
        raise ExpressionError("expected a number, a list or a topology", col)


def parse(text: str) -> Call:
    """Parse an expression into a ``Call`` tree, or raise ExpressionError naming the column."""
    if not isinstance(text, str) or not text.strip():
        raise ExpressionError("empty expression")
    if len(text) > MAX_EXPRESSION_LENGTH:
        raise ExpressionError(f"expression longer than {MAX_EXPRESSION_LENGTH} characters")
    p = _Parser(text)
    call = p.expr()
    tok = p.peek()
    if tok[0] != "end":
        raise ExpressionError(f"unexpected {tok[1] if tok[1] is not None else tok[0]!r} after the expression",
                              tok[2])
    return call


@dataclass(frozen=True)
class Family:
    """A named constructor of the expression language: ``build(*args)`` and a cheap ``size(*args)`` giving
    ``(nodes, links)``. Arguments that are topologies reach ``size`` already built (they are never larger
    than the result), so only the outermost construction needs predicting."""

    build: Callable[..., Topology]
    size: Callable[..., tuple[int, int]]
    usage: str


SIZE_CAP = 10 ** 18       # a predicted size above every limit: the size functions stop counting there (cheap)


def capped_pow(base: int, exponent: int) -> int:
    """``base ** exponent``, or ``SIZE_CAP`` when that is larger (without computing a number of millions of
    digits for an expression such as hamming(1000000,1000000))."""
    if exponent < 0 or abs(base) < 2:
        return base ** exponent
    return base ** exponent if exponent * (abs(base).bit_length() - 1) < 64 else SIZE_CAP


def _walks(topo: Topology, length: int) -> int:
    """The number of walks with ``length`` links in G: the node count of L^length(G) (``SIZE_CAP`` once above)."""
    counts = [1] * topo.num_nodes
    for _ in range(length):
        nxt = [0] * topo.num_nodes
        for l in topo.links:
            nxt[l.src] += counts[l.dst]
        counts = nxt
        if sum(counts) > SIZE_CAP:
            return SIZE_CAP
    return sum(counts)


MAX_LINE_POWER = 64      # line(G, n): at most this many line-graph steps (each one builds a whole graph)


def _line_size(g: Topology, n: int) -> tuple[int, int]:
    if isinstance(n, int) and n > MAX_LINE_POWER:
        raise ExpressionError(f"line(G, n) takes n up to {MAX_LINE_POWER}, not {n}")
    return _walks(g, n), _walks(g, n + 1)


def _product_size(*factors: Topology) -> tuple[int, int]:
    nodes = 1
    for f in factors:
        nodes *= f.num_nodes
        if nodes > SIZE_CAP:
            return SIZE_CAP, SIZE_CAP
    return nodes, sum(len(f.links) * (nodes // f.num_nodes) for f in factors)


def _circulant_size(m, gens=None, d=4):
    k = len(gens) if isinstance(gens, (tuple, list)) else (1 if gens is not None else d // 2)
    return m, 2 * k * m


def _dcirculant_size(m, offsets=None):
    if offsets is None:
        return m + 2, m * (m + 2)
    return m, m * (len(offsets) if isinstance(offsets, (tuple, list)) else 1)


def _dbjmod_size(d, n):
    return capped_pow(d, n), capped_pow(d, n + 1)


FAMILIES: dict[str, Family] = {
    "ring": Family(families.ring, lambda m: (m, m), "ring(m): unidirectional ring"),
    "uniring": Family(families.uniring, lambda d, m: (m, d * m),
                      "uniring(d,m): unidirectional ring, d parallel links"),
    "biring": Family(families.biring, lambda d, m=None: (d, 2 * d) if m is None else (m, d * m),
                     "biring(m) or biring(d,m): bidirectional ring"),
    "complete": Family(families.complete, lambda m: (m, m * (m - 1)), "complete(m): complete digraph K_m"),
    "bipartite": Family(families.bipartite, lambda d: (2 * d, 2 * d * d),
                        "bipartite(d): complete bipartite K_{d,d}"),
    "hamming": Family(families.hamming, lambda n, q: (capped_pow(q, n), capped_pow(q, n) * n * (q - 1)),
                      "hamming(n,q): Hamming graph H(n,q) = K_q^{□n}"),
    "hypercube": Family(families.hypercube, lambda n: (capped_pow(2, n), capped_pow(2, n) * n), "hypercube(n): Q_n = H(n,2)"),
    "kautz": Family(families.kautz, lambda d, n: ((d + 1) * capped_pow(d, n), (d + 1) * capped_pow(d, n + 1)),
                    "kautz(d,n): Kautz graph K(d,n)"),
    "gkautz": Family(families.gkautz, lambda d, m: (m, d * m), "gkautz(d,m): generalized Kautz Π_{d,m}"),
    "debruijn": Family(families.debruijn, lambda d, n: (capped_pow(d, n), capped_pow(d, n + 1)), "debruijn(d,n): de Bruijn DBJ(d,n)"),
    "circulant": Family(families.circulant, _circulant_size,
                        "circulant(m,[a1,a2,...]) or circulant(m,d=4): bidirectional circulant"),
    "dcirculant": Family(families.dcirculant, _dcirculant_size,
                         "dcirculant(d) or dcirculant(m,[a1,...]): directed circulant"),
    "torus": Family(families.torus, lambda *dims: (prod(dims), 2 * len(dims) * prod(dims)),
                    "torus(d1,d2,...): torus of bidirectional rings"),
    "twisted_torus": Family(families.twisted_torus, lambda a, b, twist=None: (a * b, 4 * a * b),
                            "twisted_torus(a,b[,twist]): 2D twisted torus"),
    "diamond": Family(reconstructed.diamond, lambda: (8, 16), "diamond(): Diamond, N=8, d=2 (reconstruction)"),
    "dbjmod": Family(reconstructed.dbjmod, _dbjmod_size,
                     "dbjmod(d,n): modified de Bruijn, (2,3) (2,4) (3,2) (4,2) (reconstruction)"),
    "line": Family(expansions.line_graph, lambda g, n=1: _line_size(g, n),
                   "line(G[,n]): line graph L^n(G)"),
    "degree": Family(expansions.degree_expansion, lambda g, n: (n * g.num_nodes, n * n * len(g.links)),
                     "degree(G,n): degree expansion G∗n"),
    "power": Family(expansions.cartesian_power, lambda g, n: _product_size(*([g] * n)),
                    "power(G,n): Cartesian power G^{□n}"),
    "product": Family(lambda *gs: expansions.cartesian_product(gs), _product_size,
                      "product(G1,G2,...): Cartesian product G1□G2□..."),
    "bidir": Family(expansions.bidirectional, lambda g: (g.num_nodes, 2 * len(g.links)),
                    "bidir(G): G ∪ G^T, unidirectional to bidirectional (A.6)"),
    "dgx_a100": Family(clusters.dgx_a100, clusters.dgx_a100_size,
                       "dgx_a100(boxes=1): DGX A100 boxes, NVSwitch 300 GB/s, IB NICs 25 GB/s (ForestColl)"),
    "mi250": Family(clusters.mi250, clusters.mi250_size,
                    "mi250(clusters=1,gpus_per_cluster=16|8): AMD MI250 xGMI clusters, IB 16 GB/s (ForestColl)"),
    "cluster": Family(clusters.cluster, clusters.cluster_size,
                      "cluster(boxes,gpus,box_bw,spine_bw): box switches plus one spine switch"),
    "fat_tree": Family(clusters.fat_tree, clusters.fat_tree_size,
                       "fat_tree(k,bw=25): k-ary fat-tree, k even, k^3/4 hosts"),
    # TE-CCL's fabrics; the grammar has only integers, so their alphas are given in whole nanoseconds
    "dgx1": Family(teccl_fabrics.dgx1_ns, teccl_fabrics.dgx1_size,
                   "dgx1(alpha_ns=700): DGX1 cube-mesh, 8 GPUs, 50/25 GB/s links (TE-CCL)"),
    "ndv2": Family(teccl_fabrics.ndv2_ns, teccl_fabrics.ndv2_size,
                   "ndv2(chassis=1,alpha_ns=700,inter_alpha_ns=1300): NDv2 cube-mesh chassis, 12.5 GB/s between "
                   "chassis (TE-CCL)"),
    "dgx2": Family(teccl_fabrics.dgx2_ns, teccl_fabrics.dgx2_size,
                   "dgx2(chassis=2,alpha_ns=350,inter_alpha_ns=2600): DGX2, 16 GPUs on an NVSwitch at 125 GB/s, "
                   "12.5 GB/s odd->even GPU links between chassis (TE-CCL)"),
    "mi250_teccl": Family(teccl_fabrics.mi250_teccl_ns, teccl_fabrics.mi250_teccl_size,
                          "mi250_teccl(chassis=1,alpha_ns=0,switch_alpha_ns=0): AMD MI250 chassis, 200/100/50 GB/s; "
                          "if chassis > 1, 25 GB/s pair and global switches (TE-CCL)"),
    # the baselines' own topologies (direct-connect paper section 8.2)
    "shifted_ring": Family(baseline_fabrics.shifted_ring, lambda n: (n, 4 * n),
                           "shifted_ring(n): ShiftedRing, the bidirectional circulant C(n,{1,p}), p near n/2"),
    "dbt_graph": Family(baseline_fabrics.dbt_graph, lambda n: (n, 4 * n),
                        "dbt_graph(n): the edges of NCCL's two binary trees, both ways"),
    # TACOS's fabrics (bandwidths in GB/s, or GiB/s with gib=1; alphas in whole nanoseconds)
    "mesh": Family(tacos_fabrics.mesh, tacos_fabrics.grid_size,
                   "mesh(d1,d2,...,bw=1,alpha_ns=0,gib=0): mesh without wrap-around (TACOS)"),
    "tacos_torus": Family(tacos_fabrics.tacos_torus, tacos_fabrics.grid_size,
                          "tacos_torus(d1,d2,...,bw=1,alpha_ns=0,gib=0): TACOS's torus, one link per size-2 "
                          "dimension"),
    "hetero_mesh": Family(tacos_fabrics.hetero_mesh, lambda w, h, **_: tacos_fabrics.grid_size(w, h),
                          "hetero_mesh(w,h,bw=1,bw_y=1,alpha_ns=0,gib=0): 2D mesh, x-links bw, y-links bw_y "
                          "(TACOS)"),
    "ring_fc_switch": Family(tacos_fabrics.ring_fc_switch, tacos_fabrics.ring_fc_switch_size,
                             "ring_fc_switch(nodes,ring_bw=200,fc_bw=100,switch_bw=50,alpha_ns=500): TACOS "
                             "Table I system, unwound"),
    "fail": Family(fail_expr, lambda g, **_: (g.num_nodes, len(g.links)),
                   "fail(G,links=[i,...],directed_links=[...],gpus=[...],nics=[...],switches=[...],boxes=[...]): G "
                   "without the i-th elements of each kind (issue 42's failure models)"),
    "unwind": Family(unwind_expr, lambda g, degree=None: (g.n, len(g.links) + g.n * g.n),
                     "unwind(G[,d]): switches unwound to degree-d links (0 = full mesh; default: TACOS's rule)"),
}
for _name, (_build, _size, _usage) in distance_regular.EXPRESSIONS.items():
    FAMILIES[_name] = Family(_build, _size, _usage)


def _check_arity(call: Call, family: Family):
    import inspect

    try:
        inspect.signature(family.build).bind(*call.args, **dict(call.kwargs))
    except TypeError:
        raise ExpressionError(f"wrong arguments to {call.name}; usage: {family.usage}", call.column) from None


def _lookup(call: Call) -> Family:
    family = FAMILIES.get(call.name)
    if family is None:
        known = ", ".join(sorted(FAMILIES))
        raise ExpressionError(f"unknown topology {call.name!r} (known: {known})", call.column)
    _check_arity(call, family)
    return family


class _Evaluator:
    """Builds a Call tree bottom-up, predicting every construction's size before building it."""

    def __init__(self, max_nodes: int, max_links: int, text: str):
        self.max_nodes, self.max_links, self.text = max_nodes, max_links, text

    def args(self, call: Call):
        args = [self.build(a) if isinstance(a, Call) else a for a in call.args]
        kwargs = {k: self.build(v) if isinstance(v, Call) else v for k, v in call.kwargs}
        return args, kwargs

    def size(self, call: Call, family: Family, args, kwargs) -> tuple[int, int]:
        for a in (*args, *kwargs.values(), *(x for v in (*args, *kwargs.values()) if isinstance(v, tuple) for x in v)):
            if isinstance(a, int) and abs(a) > MAX_ARGUMENT:
                raise ExpressionError(f"{call.name}: argument {a} is too large", call.column)
        try:
            nodes, links = family.size(*args, **kwargs)
            return int(nodes), int(links)
        except ExpressionError as exc:
            raise ExpressionError(str(exc), call.column) from None
        except (TypeError, ValueError, OverflowError, AttributeError):   # e.g. a number where a topology goes
            raise ExpressionError(f"wrong arguments to {call.name}; usage: {family.usage}", call.column) from None

    def build(self, call: Call) -> Topology:
        family = _lookup(call)
        args, kwargs = self.args(call)
        nodes, links = self.size(call, family, args, kwargs)
        if nodes > self.max_nodes or links > self.max_links:
            what = self.text.strip() if call.column == 1 else f"{call.name}(...) at column {call.column}"
            raise ExpressionError(f"{what} would have {_count(nodes)} nodes and {_count(links)} links, above the limit of "
                                  f"{self.max_nodes} nodes / {self.max_links} links "
                                  f"(raise it with --max-nodes or STUDIO_MAX_NODES)")
        try:
            return family.build(*args, **kwargs)
        except ExpressionError:
            raise
        except TopologyError as exc:
            raise ExpressionError(f"{call.name}: {exc}", call.column) from None
        except (TypeError, AttributeError):       # an argument of the wrong kind that its size did not touch
            raise ExpressionError(f"wrong arguments to {call.name}; usage: {family.usage}", call.column) from None


def _count(x: int) -> str:
    return str(x) if x < 10 ** 15 else "more than 10^15"


def predicted_size(call: Call, max_nodes: int | None = None) -> int:
    """The number of nodes the expression would build (building only its sub-topologies)."""
    limit = DEFAULT_MAX_NODES if max_nodes is None else max_nodes
    ev = _Evaluator(limit, max_links_for(limit), "")
    family = _lookup(call)
    args, kwargs = ev.args(call)
    return ev.size(call, family, args, kwargs)[0]


def build(call: Call, max_nodes: int | None = None, text: str = "") -> Topology:
    """Build a parsed expression, refusing any construction above the size limit before it is built."""
    limit = DEFAULT_MAX_NODES if max_nodes is None else max_nodes
    return _Evaluator(limit, max_links_for(limit), text).build(call)


def parse_topology(text: str, max_nodes: int | None = None) -> Topology:
    """Build the topology an expression names, refusing sizes above ``max_nodes`` before building."""
    return build(parse(text), max_nodes, text)
