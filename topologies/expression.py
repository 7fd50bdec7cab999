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

from . import families
from .model import Topology, TopologyError

DEFAULT_MAX_NODES = int(os.environ.get("STUDIO_MAX_NODES", "4096"))
MAX_EXPRESSION_LENGTH = 2000


class ExpressionError(TopologyError):
    """An expression that does not parse or names something unknown; ``column`` is 1-based."""

    def __init__(self, message: str, column: int | None = None):
        self.column = column
        super().__init__(f"{message} at column {column}" if column else message)


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
    """A named constructor of the expression language: ``build(*args)`` and a cheap ``size(*args)``."""

    build: Callable[..., Topology]
    size: Callable[..., int]
    usage: str


FAMILIES: dict[str, Family] = {
    "ring": Family(families.ring, lambda m: m, "ring(m): unidirectional ring"),
    "uniring": Family(families.uniring, lambda d, m: m, "uniring(d,m): unidirectional ring, d parallel links"),
    "biring": Family(families.biring, lambda d, m=None: d if m is None else m,
                     "biring(m) or biring(d,m): bidirectional ring"),
    "complete": Family(families.complete, lambda m: m, "complete(m): complete digraph K_m"),
    "bipartite": Family(families.bipartite, lambda d: 2 * d, "bipartite(d): complete bipartite K_{d,d}"),
}


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


def predicted_size(call: Call) -> int:
    """The number of nodes the expression would build, computed without building it."""
    family = _lookup(call)
    args = [predicted_size(a) if isinstance(a, Call) else a for a in call.args]
    kwargs = {k: predicted_size(v) if isinstance(v, Call) else v for k, v in call.kwargs}
    try:
        return int(family.size(*args, **kwargs))
    except (TypeError, ValueError):
        raise ExpressionError(f"wrong arguments to {call.name}; usage: {family.usage}", call.column) from None


def build(call: Call) -> Topology:
    family = _lookup(call)
    args = [build(a) if isinstance(a, Call) else a for a in call.args]
    kwargs = {k: build(v) if isinstance(v, Call) else v for k, v in call.kwargs}
    try:
        return family.build(*args, **kwargs)
    except ExpressionError:
        raise
    except TopologyError as exc:
        raise ExpressionError(f"{call.name}: {exc}", call.column) from None


def parse_topology(text: str, max_nodes: int | None = None) -> Topology:
    """Build the topology an expression names, refusing sizes above ``max_nodes`` before building."""
    limit = DEFAULT_MAX_NODES if max_nodes is None else max_nodes
    call = parse(text)
    size = predicted_size(call)
    if size > limit:
        raise ExpressionError(f"{text.strip()} would have {size} nodes, above the limit of {limit} "
                              f"(raise it with --max-nodes or STUDIO_MAX_NODES)")
    return build(call)
