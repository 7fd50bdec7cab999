"""The Topology model: a directed multigraph of compute and switch nodes.

docs/ARCHITECTURE.md, topologies/: nodes are ``compute`` (GPU, NPU or host: they copy, reduce, multicast) or ``switch``
(they only forward). Every link is directed and carries its own bandwidth (GB/s, or 1 in the unit-link analyses
of the direct-connect paper) and alpha latency (microseconds). Parallel links are distinct links: link ``i`` is
``links[i]`` and keeps its index through every transform that does not say otherwise (``transpose`` keeps it).

Bandwidth and alpha are stored as exact ``Fraction``s (a float is read through its decimal text, so ``0.1``
becomes ``1/10``) so that the cost model stays exact.
"""
from __future__ import annotations

from dataclasses import dataclass, field
from fractions import Fraction
from functools import cached_property
from typing import Iterable, Sequence

COMPUTE = "compute"
SWITCH = "switch"
NODE_KINDS = (COMPUTE, SWITCH)


class TopologyError(ValueError):
    """A topology that cannot be built or read; the message names the problem in one line."""


def need_int(value, what: str, minimum: int) -> int:
    """``value`` when it is an integer (not a bool) of at least ``minimum``; else a one-line TopologyError."""
    if isinstance(value, bool) or not isinstance(value, int):
        raise TopologyError(f"{what} must be an integer, got {value!r}")
    if value < minimum:
        raise TopologyError(f"{what} must be at least {minimum}, got {value}")
    return value


def as_fraction(value, what: str) -> Fraction:
    """Read a number (int, float, Fraction or numeric string) exactly; reject bools, NaN and infinities."""
    if isinstance(value, bool):
        raise TopologyError(f"{what} must be a number, got {value!r}")
    if isinstance(value, Fraction):
        return value
    if isinstance(value, int):
        return Fraction(value)
    if isinstance(value, float):
        if value != value or value in (float("inf"), float("-inf")):
            raise TopologyError(f"{what} must be finite, got {value!r}")
        return Fraction(repr(value))
    if isinstance(value, str):
        try:
            return Fraction(value.strip())
        except (ValueError, ZeroDivisionError):
            raise TopologyError(f"{what} must be a number, got {value!r}") from None
    raise TopologyError(f"{what} must be a number, got {value!r}")


@dataclass(frozen=True)
class Link:
    """A directed link ``src -> dst`` between node indices, with bandwidth (GB/s) and alpha (us)."""

    src: int
    dst: int
    bandwidth: Fraction = Fraction(1)
    alpha: Fraction = Fraction(0)


@dataclass(frozen=True, eq=False)
class Topology:
    """A directed multigraph of compute and switch nodes.

    ``names[i]`` is the id of node ``i`` (as written in files), ``kinds[i]`` is ``"compute"`` or ``"switch"``.
    ``expr`` is the expression that rebuilds the topology (or the file it was read from) and ``name`` its
    display name in the papers' notation.
    """

    names: tuple[str, ...]
    kinds: tuple[str, ...]
    links: tuple[Link, ...]
    name: str = ""
    expr: str = ""
    _meta: dict = field(default_factory=dict, compare=False, repr=False)

    def __post_init__(self):
        n = len(self.names)
        if len(self.kinds) != n:
            raise TopologyError("names and kinds differ in length")
        if n == 0:
            raise TopologyError("a topology needs at least one node")
        seen = set()
        for name in self.names:
            if name in seen:
                raise TopologyError(f"duplicate node id {name!r}")
            seen.add(name)
        for kind, name in zip(self.kinds, self.names):
            if kind not in NODE_KINDS:
                raise TopologyError(f"node {name!r} has unknown kind {kind!r} (use 'compute' or 'switch')")
        if COMPUTE not in self.kinds:
            raise TopologyError("a topology needs at least one compute node")
        for i, link in enumerate(self.links):
            if not (0 <= link.src < n and 0 <= link.dst < n):
                raise TopologyError(f"link {i} joins a node index outside 0..{n - 1}")
            if link.bandwidth <= 0:
                raise TopologyError(
                    f"link {i} ({self.names[link.src]} -> {self.names[link.dst]}) needs a positive bandwidth, "
                    f"got {link.bandwidth}")
            if link.alpha < 0:
                raise TopologyError(
                    f"link {i} ({self.names[link.src]} -> {self.names[link.dst]}) has a negative alpha {link.alpha}")

    # ----------------------------------------------------------------------------------------------- building
    @classmethod
    def from_edges(cls, n: int, edges: Iterable[tuple[int, int]], *, name: str = "", expr: str = "",
                   bandwidth=1, alpha=0, node_names: Sequence[str] | None = None) -> "Topology":
        """A topology of ``n`` compute nodes ``0..n-1`` with one unit link per listed (src, dst) pair.

        A pair listed twice gives two parallel links.
        """
        bw, al = as_fraction(bandwidth, "bandwidth"), as_fraction(alpha, "alpha")
        names = tuple(node_names) if node_names is not None else tuple(str(i) for i in range(n))
        links = tuple(Link(int(s), int(d), bw, al) for s, d in edges)
        return cls(names, (COMPUTE,) * n, links, name=name, expr=expr)

    def with_identity(self, *, name: str | None = None, expr: str | None = None) -> "Topology":
        """The same graph under another display name or expression."""
        return Topology(self.names, self.kinds, self.links,
                        name=self.name if name is None else name, expr=self.expr if expr is None else expr)

    def transpose(self) -> "Topology":
        """G^T: every link reversed, link indices kept (direct-connect paper, Def 5 and Theorem 1). Made once per
        topology: what solvers keep in its ``_meta`` (ring sets, forests) then serves every reduce-scatter."""
        known = self._meta.get("transpose")
        if known is not None:
            return known
        links = tuple(Link(l.dst, l.src, l.bandwidth, l.alpha) for l in self.links)
        name = f"({self.name})^T" if self.name else ""
        expr = f"transpose({self.expr})" if self.expr else ""
        out = Topology(self.names, self.kinds, links, name=name, expr=expr)
        self._meta["transpose"] = out
        return out

    # ------------------------------------------------------------------------------------------------ queries
    @property
    def num_nodes(self) -> int:
        return len(self.names)

    @cached_property
    def compute_nodes(self) -> tuple[int, ...]:
        return tuple(i for i, k in enumerate(self.kinds) if k == COMPUTE)

    @cached_property
    def switch_nodes(self) -> tuple[int, ...]:
        return tuple(i for i, k in enumerate(self.kinds) if k == SWITCH)

    @property
    def n(self) -> int:
        """N: the number of compute nodes (the ranks of a collective)."""
        return len(self.compute_nodes)

    def is_compute(self, node: int) -> bool:
        return self.kinds[node] == COMPUTE

    @cached_property
    def out_links(self) -> tuple[tuple[int, ...], ...]:
        """``out_links[u]``: indices of the links leaving ``u``, in link order."""
        out: list[list[int]] = [[] for _ in self.names]
        for i, l in enumerate(self.links):
            out[l.src].append(i)
        return tuple(tuple(x) for x in out)

    @cached_property
    def in_links(self) -> tuple[tuple[int, ...], ...]:
        """``in_links[u]``: indices of the links entering ``u``, in link order."""
        inn: list[list[int]] = [[] for _ in self.names]
        for i, l in enumerate(self.links):
            inn[l.dst].append(i)
        return tuple(tuple(x) for x in inn)

    @cached_property
    def link_ends(self):
        """(src, dst): two read-only int64 numpy arrays, ``src[i]`` and ``dst[i]`` the ends of link ``i`` (made
        once; the vectorized verifier, cost, runtime model, export and TACOS index them by link)."""
        import numpy as np

        ends = np.array([(l.src, l.dst) for l in self.links], dtype=np.int64).reshape(-1, 2)
        src, dst = np.ascontiguousarray(ends[:, 0]), np.ascontiguousarray(ends[:, 1])
        src.setflags(write=False)
        dst.setflags(write=False)
        return src, dst

    def index(self, name: str) -> int:
        """The index of the node with id ``name``."""
        try:
            return self._name_index[name]
        except KeyError:
            raise TopologyError(f"unknown node {name!r}") from None

    @cached_property
    def _name_index(self) -> dict[str, int]:
        return {name: i for i, name in enumerate(self.names)}

    @cached_property
    def reverse_link(self) -> tuple[int, ...] | None:
        """A pairing of every link ``u -> v`` with a distinct link ``v -> u`` of equal bandwidth, or None.

        The k-th parallel link ``u -> v`` is paired with the k-th parallel link ``v -> u``; a self-loop pairs
        with itself. A topology with such a pairing is *bidirectional*: each cable is two opposite links.
        """
        groups: dict[tuple[int, int], list[int]] = {}
        for i, l in enumerate(self.links):
            groups.setdefault((l.src, l.dst), []).append(i)
        pair = [-1] * len(self.links)
        for (s, d), idx in groups.items():
            back = groups.get((d, s), [])
            if len(back) != len(idx):
                return None
            for a, b in zip(idx, back):
                if self.links[a].bandwidth != self.links[b].bandwidth:
                    return None
                pair[a] = b
        return tuple(pair)

    @property
    def is_bidirectional(self) -> bool:
        return self.reverse_link is not None

    def simple_edges(self) -> set[tuple[int, int]]:
        """The (src, dst) pairs joined by at least one link."""
        return {(l.src, l.dst) for l in self.links}

    def to_networkx(self):
        """A networkx MultiDiGraph with node attribute ``kind``/``name`` and edge keys equal to link indices."""
        import networkx as nx

        g = nx.MultiDiGraph(name=self.name)
        for i, (nm, kind) in enumerate(zip(self.names, self.kinds)):
            g.add_node(i, name=nm, kind=kind)
        for i, l in enumerate(self.links):
            g.add_edge(l.src, l.dst, key=i, bandwidth=float(l.bandwidth), alpha=float(l.alpha))
        return g
