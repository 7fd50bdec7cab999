"""Switch trees for GenTree (GenModel paper §4.2, Fig. 6 and Fig. 11).

A tree has a root switch; every non-root node has one link to its parent; the leaves are servers (they hold the
data and reduce), the inner nodes are switches (they forward). Each switch names the *tier* of the links to its
children, one of Table 5's rows (``middle_sw``, ``root_sw``, ``cross_dc``): the links of that tier carry its alpha,
beta, epsilon and w_t; the servers carry the ``server`` row's gamma and delta (digest §2.2). A switch marked
``join`` is not a device but a single cable between its two children, as the link between the two data-centre
roots of CDC384.

Presets (Fig. 11, §5.2): ``single_switch(n)`` (CPU testbed, SS24, SS32), ``sym(racks, per_rack)`` (SYM384 = 16 x 24,
SYM512 = 16 x 32), ``asy384`` (8 x 32 + 8 x 16) and ``cdc384`` (8 x 32 | 8 x 16 joined by one cross-DC link).

Textual specs (parsed by hand, never evaluated): ``switch(24)``, ``tree(16x24)``, ``tree(8x32,8x16)``,
``cdc(8x32|8x16)``, and the preset names ``ss24``, ``ss32``, ``sym384``, ``sym512``, ``asy384``, ``cdc384``,
``cpu8``, ``cpu12``, ``cpu15``.
"""
from __future__ import annotations

import re
from dataclasses import dataclass, field
from fractions import Fraction
from functools import cached_property

from topologies.model import COMPUTE, SWITCH, Link, Topology, as_fraction

from .params import FLOAT_BYTES, TABLE5, TIERS, GenModelParams

MAX_TREE_SERVERS = 1024


class TreeError(ValueError):
    """A tree or tree spec that cannot be built; the message names the problem in one line."""


@dataclass(frozen=True)
class Node:
    """A tree node: a server when it has no children, else a switch whose child links are of tier ``tier``."""

    name: str
    children: tuple["Node", ...] = ()
    tier: str = "middle_sw"
    join: bool = False

    @property
    def is_server(self) -> bool:
        return not self.children

    @cached_property
    def servers(self) -> int:
        return 1 if self.is_server else sum(c.servers for c in self.children)


def server(name: str) -> Node:
    return Node(name)


def switch(name: str, children, tier: str = "middle_sw", join: bool = False) -> Node:
    if tier not in TIERS:
        raise TreeError(f"unknown tier {tier!r} (choose from {', '.join(TIERS)})")
    children = tuple(children)
    if not children:
        raise TreeError(f"switch {name!r} needs at least one child")
    if join and len(children) != 2:
        raise TreeError("a join (one cable between two subtrees) takes exactly two children")
    return Node(name, children, tier, join)


@dataclass(frozen=True, eq=False)
class SwitchTree:
    """A rooted switch tree with per-tier link parameters and the server parameters (Table 5 by default).

    Servers are numbered 0..N-1 in depth-first order, so every subtree owns a contiguous range of them.
    """

    root: Node
    name: str = ""
    spec: str = ""
    tiers: dict = field(default_factory=lambda: {t: TABLE5[t] for t in TIERS})
    server_params: GenModelParams = TABLE5["server"]

    def __post_init__(self):
        if self.root.is_server:
            raise TreeError("the root of a switch tree must be a switch")
        if self.root.servers > MAX_TREE_SERVERS:
            raise TreeError(f"{self.root.servers} servers: at most {MAX_TREE_SERVERS} are supported")
        names = set()
        for node in self.nodes:
            if node.name in names:
                raise TreeError(f"duplicate node name {node.name!r}")
            names.add(node.name)
            if not node.is_server and node.tier not in self.tiers:
                raise TreeError(f"no parameters for tier {node.tier!r}")

    @property
    def n(self) -> int:
        """N, the number of servers."""
        return self.root.servers

    @cached_property
    def nodes(self) -> tuple[Node, ...]:
        """Every node in pre-order (a parent before its children, children in order)."""
        out, stack = [], [self.root]
        while stack:
            v = stack.pop()
            out.append(v)
            stack.extend(reversed(v.children))
        return tuple(out)

    @cached_property
    def switches(self) -> tuple[Node, ...]:
        """The switches in post-order (children before parents, children in order): GenTree's visiting order."""
        out: list[Node] = []
        stack: list[tuple[Node, bool]] = [(self.root, False)]
        while stack:
            v, expanded = stack.pop()
            if v.is_server:
                continue
            if expanded:
                out.append(v)
            else:
                stack.append((v, True))
                stack.extend((c, False) for c in reversed(v.children))
        return tuple(out)

    @cached_property
    def ranges(self) -> dict[str, tuple[int, int]]:
        """``ranges[name] = (lo, hi)``: the servers lo..hi-1 of the node's subtree."""
        out: dict[str, tuple[int, int]] = {}

        def walk(v: Node, lo: int) -> int:
            hi = lo + 1 if v.is_server else lo
            for c in v.children:
                hi = walk(c, hi)
            out[v.name] = (lo, hi)
            return hi
        walk(self.root, 0)
        return out

    @cached_property
    def parent(self) -> dict[str, Node | None]:
        out: dict[str, Node | None] = {self.root.name: None}
        for v in self.nodes:
            for c in v.children:
                out[c.name] = v
        return out

    @cached_property
    def server_names(self) -> tuple[str, ...]:
        return tuple(v.name for v in self.nodes if v.is_server)

    def height(self, node: Node) -> int:
        """0 for a server, 1 for a switch of servers, ..."""
        return 0 if node.is_server else 1 + max(self.height(c) for c in node.children)

    def link_params(self, child: Node) -> GenModelParams:
        """The parameters of the link between ``child`` and its parent (the parent's tier)."""
        return self.tiers[self.parent[child.name].tier]

    def with_params(self, tiers: dict | None = None, server_params: GenModelParams | None = None) -> "SwitchTree":
        return SwitchTree(self.root, self.name, self.spec, dict(tiers or self.tiers), server_params or self.server_params)


# ------------------------------------------------------------------------------------------------------ presets
def _rack(prefix: str, servers: int, first: int, tier: str = "middle_sw") -> Node:
    return switch(prefix, [server(f"s{first + i}") for i in range(servers)], tier)


def _racks(prefix: str, groups, first: int) -> tuple[list[Node], int]:
    racks = []
    for count, per in groups:
        for _ in range(count):
            racks.append(_rack(f"{prefix}m{len(racks)}", per, first))
            first += per
    return racks, first


def single_switch(n: int, name: str = "") -> SwitchTree:
    """N servers on one switch (the CPU testbed with 8, 12 or 15; SS24; SS32). The server links use the Middle-SW
    row, as the Table 7 single-switch fits show (digest §3.6)."""
    _positive(n, "servers")
    return SwitchTree(_rack("sw", n, 0), name or f"SS{n}", f"switch({n})")


def tree(groups, name: str = "", spec: str = "") -> SwitchTree:
    """A root switch (Root-SW links) over racks: ``groups`` = [(count, servers per rack), ...]."""
    groups = [(_positive(c, "racks"), _positive(p, "servers per rack")) for c, p in groups]
    racks, _ = _racks("", groups, 0)
    text = ",".join(f"{c}x{p}" for c, p in groups)
    return SwitchTree(switch("root", racks, "root_sw"), name or f"tree({text})", spec or f"tree({text})")


def sym(racks: int, per_rack: int, name: str = "") -> SwitchTree:
    """SYM trees: ``racks`` middle switches of ``per_rack`` servers under one root (SYM384 = 16 x 24)."""
    return tree([(racks, per_rack)], name or f"SYM{racks * per_rack}", f"tree({racks}x{per_rack})")


def asy384() -> SwitchTree:
    """ASY384: a root over 8 middle switches of 32 servers and 8 of 16 (Fig. 11c)."""
    return tree([(8, 32), (8, 16)], "ASY384", "tree(8x32,8x16)")


def cdc(dc0, dc1, name: str = "", spec: str = "") -> SwitchTree:
    """Two data centres, each a root over racks (groups as in ``tree``), whose roots are joined by one cross-DC
    link (Table 5 Cross-DC row)."""
    r0, first = _racks("dc0.", [(_positive(c, "racks"), _positive(p, "servers per rack")) for c, p in dc0], 0)
    r1, _ = _racks("dc1.", [(_positive(c, "racks"), _positive(p, "servers per rack")) for c, p in dc1], first)
    text = ",".join(f"{c}x{p}" for c, p in dc0) + "|" + ",".join(f"{c}x{p}" for c, p in dc1)
    root = switch("xdc", [switch("dc0", r0, "root_sw"), switch("dc1", r1, "root_sw")], "cross_dc", join=True)
    return SwitchTree(root, name or f"cdc({text})", spec or f"cdc({text})")


def cdc384() -> SwitchTree:
    """CDC384: DC0 = root + 8 x 32 servers, DC1 = root + 8 x 16, the roots joined by one cross-DC link."""
    return cdc([(8, 32)], [(8, 16)], "CDC384", "cdc(8x32|8x16)")


PRESET_TREES = {
    "cpu8": lambda: single_switch(8, "CPU testbed (8)"), "cpu12": lambda: single_switch(12, "CPU testbed (12)"),
    "cpu15": lambda: single_switch(15, "CPU testbed (15)"), "ss24": lambda: single_switch(24),
    "ss32": lambda: single_switch(32), "sym384": lambda: sym(16, 24), "sym512": lambda: sym(16, 32),
    "asy384": asy384, "cdc384": cdc384,
}


def _positive(value, what: str) -> int:
    if isinstance(value, bool) or not isinstance(value, int) or value < 1:
        raise TreeError(f"{what} must be a positive integer, got {value!r}")
    return value


_GROUP = re.compile(r"^\s*(\d{1,5})\s*[x×*]\s*(\d{1,5})\s*$")


def _groups(text: str) -> list[tuple[int, int]]:
    out = []
    for part in text.split(","):
        m = _GROUP.match(part)
        if not m:
            raise TreeError(f"expected COUNTxSERVERS such as 16x24, got {part.strip()!r}")
        out.append((int(m.group(1)), int(m.group(2))))
    return out


def parse_tree(spec: str) -> SwitchTree:
    """A tree from its textual spec (module docstring). Raises TreeError with a one-line reason."""
    if not isinstance(spec, str) or not spec.strip():
        raise TreeError("empty tree spec (try switch(24), tree(16x24), tree(8x32,8x16) or cdc(8x32|8x16))")
    text = spec.strip()
    key = text.lower().replace(" ", "")
    if key in PRESET_TREES:
        return PRESET_TREES[key]()
    m = re.fullmatch(r"(\w+)\((.*)\)", key)
    if not m:
        raise TreeError(f"cannot read tree spec {spec!r} (try switch(24), tree(16x24) or cdc(8x32|8x16))")
    kind, body = m.group(1), m.group(2)
    total = sum(int(a) * int(b) for a, b in re.findall(r"(\d+)[x×*](\d+)", body))
    if total > MAX_TREE_SERVERS:
        raise TreeError(f"{total} servers: at most {MAX_TREE_SERVERS} are supported")
    if kind == "switch":
        if not re.fullmatch(r"\d{1,5}", body) or int(body) < 2:
            raise TreeError(f"switch(N) takes a whole number of servers >= 2, got {body!r}")
        if int(body) > MAX_TREE_SERVERS:
            raise TreeError(f"{body} servers: at most {MAX_TREE_SERVERS} are supported")
        return single_switch(int(body))
    if kind == "tree":
        return tree(_groups(body))
    if kind == "cdc":
        parts = body.split("|")
        if len(parts) != 2:
            raise TreeError("cdc(...) takes two data centres separated by '|', e.g. cdc(8x32|8x16)")
        return cdc(_groups(parts[0]), _groups(parts[1]))
    raise TreeError(f"unknown tree kind {kind!r} (switch, tree, cdc or a preset: {', '.join(PRESET_TREES)})")


# ------------------------------------------------------------------------------------------------ to Topology
def link_gbps(beta: float) -> Fraction:
    """A link of beta s/float carries FLOAT_BYTES/beta bytes/s, i.e. 4/beta/1e9 GB/s (a beta of 0 is taken as
    1e-15 s/float, a practically infinite link)."""
    return as_fraction(FLOAT_BYTES / max(beta, 1e-15) / 1e9, "bandwidth").limit_denominator(10 ** 12)


def to_topology(t: SwitchTree) -> Topology:
    """The tree as a ``topologies.model.Topology``: servers are compute nodes, switches switch nodes, every cable
    two opposite links with the tier's bandwidth (GB/s) and alpha (us). A join becomes one cable between its two
    children (no node of its own)."""
    nodes = [v for v in t.nodes if not v.join]
    names = tuple(v.name for v in nodes)
    kinds = tuple(COMPUTE if v.is_server else SWITCH for v in nodes)
    index = {v.name: i for i, v in enumerate(nodes)}
    links: list[Link] = []

    def cable(a: str, b: str, p: GenModelParams) -> None:
        bw = link_gbps(p.beta)
        al = as_fraction(p.alpha * 1e6, "alpha").limit_denominator(10 ** 9)
        links.extend([Link(index[a], index[b], bw, al), Link(index[b], index[a], bw, al)])

    for v in t.nodes:
        if v.is_server:
            continue
        p = t.tiers[v.tier]
        if v.join:
            cable(v.children[0].name, v.children[1].name, p)
            continue
        for c in v.children:
            cable(v.name, c.name, p)
    return Topology(names, kinds, tuple(links), name=t.name or t.spec, expr="")
