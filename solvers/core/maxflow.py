"""Exact integer maximum flows and minimum cuts for the combinatorial solvers (ForestColl's searches, switch
removal and tree packing).

A ``Network`` is a directed graph on nodes ``0..n-1`` with integer arc capacities (parallel arcs merged, self-loops
dropped). Flows run on SciPy's Dinic implementation (``scipy.sparse.csgraph.maximum_flow``, C code, 32-bit
integers) after dividing every capacity by their greatest common divisor; when the capacities still do not fit
32 bits the exact pure-Python path (networkx preflow-push on Python integers) takes over. Either way the values
are exact integers: no float tolerance anywhere.
"""
from __future__ import annotations

from math import gcd

import numpy as np

INT32_LIMIT = 2 ** 31 - 1


class Network:
    """Integer capacities ``arcs[(u, v)]`` on nodes ``0..n-1``; build once, then ask many flows."""

    def __init__(self, n: int, arcs: dict[tuple[int, int], int]):
        self.n = n
        self.arcs = {(u, v): int(c) for (u, v), c in arcs.items() if u != v and c > 0}
        if any(c < 0 for c in arcs.values()):
            raise ValueError("capacities must be non-negative")
        g = 0
        for c in self.arcs.values():
            g = gcd(g, c)
        self.unit = g or 1
        total = sum(self.arcs.values()) // self.unit
        self._exact = total > INT32_LIMIT
        self._csr = None if self._exact else self._matrix()

    def _matrix(self):
        from scipy.sparse import csr_matrix      # here: scipy.sparse takes a third of a second to import

        if not self.arcs:
            return csr_matrix((self.n, self.n), dtype=np.int32)
        src = np.fromiter((u for u, _ in self.arcs), dtype=np.int64, count=len(self.arcs))
        dst = np.fromiter((v for _, v in self.arcs), dtype=np.int64, count=len(self.arcs))
        cap = np.fromiter((c // self.unit for c in self.arcs.values()), dtype=np.int64, count=len(self.arcs))
        m = csr_matrix((cap.astype(np.int32), (src, dst)), shape=(self.n, self.n))
        m.sort_indices()
        return m

    def flow(self, s: int, t: int) -> int:
        """The maximum s-t flow value."""
        if s == t:
            raise ValueError("source and sink coincide")
        if self._exact:
            return self._nx_flow(s, t)[0]
        from scipy.sparse.csgraph import maximum_flow

        return int(maximum_flow(self._csr, s, t).flow_value) * self.unit

    def cut(self, s: int, t: int) -> tuple[int, frozenset[int]]:
        """(maximum flow value, the source side of a minimum s-t cut)."""
        if s == t:
            raise ValueError("source and sink coincide")
        if self._exact:
            return self._nx_flow(s, t, want_cut=True)
        from scipy.sparse.csgraph import breadth_first_order, maximum_flow

        res = maximum_flow(self._csr, s, t)
        residual = (self._csr - res.flow).tocsr()     # the flow matrix is skew-symmetric: reverse arcs appear
        residual.data[residual.data < 0] = 0
        residual.eliminate_zeros()
        side = breadth_first_order(residual, s, directed=True, return_predecessors=False)
        return int(res.flow_value) * self.unit, frozenset(int(x) for x in side)

    def arc_flows(self, s: int, t: int) -> dict[tuple[int, int], int]:
        """The positive arc flows of one maximum s-t flow."""
        if s == t:
            raise ValueError("source and sink coincide")
        if self._exact:
            return self._nx_flow(s, t, want_flows=True)
        from scipy.sparse.csgraph import maximum_flow

        res = maximum_flow(self._csr, s, t).flow.tocoo()
        return {(int(u), int(v)): int(x) * self.unit for u, v, x in zip(res.row, res.col, res.data) if x > 0}

    def _nx_flow(self, s: int, t: int, want_cut: bool = False, want_flows: bool = False):
        import networkx as nx

        g = nx.DiGraph()
        g.add_nodes_from(range(self.n))
        for (u, v), c in self.arcs.items():
            g.add_edge(u, v, capacity=c)
        if want_cut:
            value, (side, _) = nx.minimum_cut(g, s, t)
            return int(value), frozenset(side)
        if want_flows:
            _, flow = nx.maximum_flow(g, s, t)
            return {(u, v): int(x) for u, out in flow.items() for v, x in out.items() if x > 0}
        return int(nx.maximum_flow_value(g, s, t)), None


def cut_capacity(arcs: dict[tuple[int, int], int], side) -> int:
    """The total capacity of the arcs leaving ``side``."""
    side = set(side)
    return sum(c for (u, v), c in arcs.items() if u in side and v not in side)
