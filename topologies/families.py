"""Graph families of the direct-connect paper (App. F, Table 9), one small pure function each.

Every function returns a unit-link Topology (bandwidth 1, alpha 0) of compute nodes ``0..N-1`` whose ``expr``
rebuilds it and whose ``name`` is the paper's notation.
"""
from __future__ import annotations

from .model import Topology, TopologyError


def _need_int(value, what: str, minimum: int) -> int:
    if isinstance(value, bool) or not isinstance(value, int):
        raise TopologyError(f"{what} must be an integer, got {value!r}")
    if value < minimum:
        raise TopologyError(f"{what} must be at least {minimum}, got {value}")
    return value


def uniring(d: int, m: int) -> Topology:
    """UniRing(d,m): the unidirectional ring 0 -> 1 -> ... -> m-1 -> 0 with ``d`` parallel links per hop.

    Table 9: degree d, m nodes, BW- and Moore-optimal with T_L = m - 1; multi-edges when d > 1.
    """
    d, m = _need_int(d, "d", 1), _need_int(m, "m", 2)
    edges = [(i, (i + 1) % m) for i in range(m) for _ in range(d)]
    return Topology.from_edges(m, edges, name=f"UniRing({d},{m})", expr=f"uniring({d},{m})")


def ring(m: int) -> Topology:
    """The unidirectional ring of m nodes, UniRing(1,m)."""
    return uniring(1, m).with_identity(expr=f"ring({m})")


def biring(d: int, m: int | None = None) -> Topology:
    """BiRing(d,m): the bidirectional ring of m nodes with d/2 parallel cables to each neighbour (even d).

    ``biring(m)`` is BiRing(2,m). Table 9: degree d, m >= 3 nodes, BFB T_L = floor(m/2); multi-edges when d > 2.
    """
    if m is None:
        d, m = 2, d
        expr = f"biring({_need_int(m, 'm', 3)})"
    else:
        expr = f"biring({d},{m})"
    d, m = _need_int(d, "d", 2), _need_int(m, "m", 3)
    if d % 2:
        raise TopologyError(f"BiRing needs an even degree d, got {d}")
    edges = []
    for i in range(m):
        for _ in range(d // 2):
            edges.append((i, (i + 1) % m))
            edges.append((i, (i - 1) % m))
    return Topology.from_edges(m, edges, name=f"BiRing({d},{m})", expr=expr)


def complete(m: int) -> Topology:
    """K_m: every ordered pair of distinct nodes is a link; degree m - 1, diameter 1 (Table 9)."""
    m = _need_int(m, "m", 2)
    edges = [(i, j) for i in range(m) for j in range(m) if i != j]
    return Topology.from_edges(m, edges, name=f"K_{m}" if m < 10 else f"K_{{{m}}}", expr=f"complete({m})")


def bipartite(d: int) -> Topology:
    """K_{d,d}: the complete bipartite graph, bidirectional, 2d nodes, degree d, diameter 2 (Fig. 1, Table 9).

    Nodes 0..d-1 form one side and d..2d-1 the other.
    """
    d = _need_int(d, "d", 1)
    edges = [(i, j) for i in range(d) for j in range(d, 2 * d)]
    edges += [(j, i) for i, j in edges]
    return Topology.from_edges(2 * d, edges, name=f"K_{{{d},{d}}}", expr=f"bipartite({d})")
