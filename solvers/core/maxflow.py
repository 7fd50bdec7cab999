"""Exact integer maximum flows and minimum cuts for the combinatorial solvers (ForestColl's searches, switch
removal and tree packing).

A ``Network`` is a directed graph on nodes ``0..n-1`` with integer arc capacities (parallel arcs merged, self-loops
dropped). Flows run on SciPy's Dinic implementation (``scipy.sparse.csgraph.maximum_flow``, C code, 32-bit
integers) after dividing every capacity by their greatest common divisor; when the capacities still do not fit
32 bits the exact pure-Python path (networkx preflow-push on Python integers) takes over. Either way the values
are exact integers: no float tolerance anywhere.

Where python-igraph is installed, flow *values* (``Network.flow`` and ``FlowGraph.flow``, the calls ForestColl's
searches and Algorithm 5 make tens of thousands of times) run on its push-relabel code instead: SciPy's
``maximum_flow`` builds five or more checked sparse matrices around every call (reverse arcs, edge pointers, the
flow matrix), which cost 80 % of a flow on a few hundred nodes (measured: 0.48 ms against 0.16 ms per flow on
Algorithm 5's graphs of circulant(128,[1,2,4,8])). igraph keeps capacities as doubles; integer capacities whose
total stays below 2^53 are represented exactly and every push adds or subtracts such integers, so the value is the
exact integer (checked; larger totals stay on SciPy / networkx). Minimum cuts and arc flows stay on SciPy: its
source side is the minimal one (the nodes reachable from s in the residual graph), which the searches report.
``use_backend("scipy")`` forces the SciPy path (the tests compare both).
"""
from __future__ import annotations

import os
from contextlib import contextmanager
from math import gcd

import numpy as np

INT32_LIMIT = 2 ** 31 - 1
FLOAT_EXACT_LIMIT = 2 ** 53        # integers below this are exact doubles, and so are their sums below it
_BACKEND = {"name": None}


def backend() -> str:
    """The flow-value backend in use: "igraph" where it is importable, else "scipy" (or where the environment
    variable STUDIO_MAXFLOW is "scipy")."""
    if _BACKEND["name"] is None:
        try:
            import igraph  # noqa: F401
            _BACKEND["name"] = "igraph"
        except ImportError:
            _BACKEND["name"] = "scipy"
        if os.environ.get("STUDIO_MAXFLOW") == "scipy":      # a fresh process on SciPy (bench/forestcoll_scale)
            _BACKEND["name"] = "scipy"
    return _BACKEND["name"]


@contextmanager
def use_backend(name: str):
    """Run the enclosed flows on ``name`` ("igraph" or "scipy"); the previous choice is restored after."""
    if name not in ("igraph", "scipy"):
        raise ValueError(f"unknown max-flow backend {name!r}")
    if name == "igraph":
        import igraph  # noqa: F401  (ImportError where it is not installed)
    before, _BACKEND["name"] = _BACKEND["name"], name
    try:
        yield
    finally:
        _BACKEND["name"] = before


def _igraph_graph(n: int, ends):
    import igraph

    return igraph.Graph(n=n, edges=ends, directed=True)


def _igraph_value(graph, s: int, t: int, caps) -> int:
    value = graph.maxflow_value(s, t, caps)
    exact = int(value)
    if exact != value:                  # cannot happen below FLOAT_EXACT_LIMIT; refuse rather than round
        raise ArithmeticError(f"igraph returned a non-integer flow {value!r} on integer capacities")
    return exact


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
        self._matrix_csr = None                   # made on first use (``_csr``): igraph's paths never need SciPy
        self._ig = None
        self._float_ok = sum(self.arcs.values()) < FLOAT_EXACT_LIMIT

    @property
    def _csr(self):
        if self._matrix_csr is None and not self._exact:
            self._matrix_csr = self._matrix()
        return self._matrix_csr

    def _igraph(self):
        if self._ig is None:
            self._ig = (_igraph_graph(self.n, list(self.arcs)), [c // self.unit for c in self.arcs.values()])
        return self._ig

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
        if self._float_ok and backend() == "igraph":
            graph, caps = self._igraph()
            return _igraph_value(graph, s, t, caps) * self.unit
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
        if self._float_ok and backend() == "igraph":
            return self._igraph_cut(s, t)
        from scipy.sparse.csgraph import breadth_first_order, maximum_flow

        res = maximum_flow(self._csr, s, t)
        residual = (self._csr - res.flow).tocsr()     # the flow matrix is skew-symmetric: reverse arcs appear
        residual.data[residual.data < 0] = 0
        residual.eliminate_zeros()
        side = breadth_first_order(residual, s, directed=True, return_predecessors=False)
        return int(res.flow_value) * self.unit, frozenset(int(x) for x in side)

    def _igraph_cut(self, s: int, t: int) -> tuple[int, frozenset[int]]:
        """``cut`` on igraph's flow: the nodes the residual graph reaches from ``s``, which are the same for every
        maximum flow (the smallest source side of a minimum cut), so SciPy's path gives the same set."""
        graph, caps = self._igraph()
        flow = graph.maxflow(s, t, caps)
        value = int(flow.value)
        if value != flow.value:
            raise ArithmeticError(f"igraph returned a non-integer flow {flow.value!r} on integer capacities")
        residual: list[list[int]] = [[] for _ in range(self.n)]
        for (u, v), c, f in zip(self.arcs, caps, flow.flow):
            if f < c:
                residual[u].append(v)
            if f > 0:
                residual[v].append(u)
        seen, stack = {s}, [s]
        while stack:
            for v in residual[stack.pop()]:
                if v not in seen:
                    seen.add(v)
                    stack.append(v)
        return value * self.unit, frozenset(seen)

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


class FlowGraph:
    """Integer capacities on a fixed set of arcs whose values change between flows (Algorithm 5's residual graph
    D̄): ``set`` one arc, ask a flow value; nothing is rebuilt between calls. Arcs must be distinct and not
    self-loops; ``bound`` bounds every capacity ever set and the total capacity out of every source asked (so
    every arc flow, preflow excess and flow value): below 2^31 SciPy's int32 Dinic is exact, below 2^53 igraph's
    doubles are, and above both the networkx path on Python integers runs."""

    def __init__(self, n: int, arcs: dict[tuple[int, int], int], bound: int):
        self.n = n
        self.index = {a: i for i, a in enumerate(arcs)}
        self.caps = [int(c) for c in arcs.values()]
        self.kind = ("igraph" if bound < FLOAT_EXACT_LIMIT and backend() == "igraph"
                     else "scipy" if bound <= INT32_LIMIT else "exact")
        if self.kind == "igraph":
            self._graph = _igraph_graph(n, list(arcs))
        elif self.kind == "scipy":
            from scipy.sparse import csr_array

            ends = np.array(list(arcs), dtype=np.int64).reshape(-1, 2)
            order = np.lexsort((ends[:, 1], ends[:, 0]))
            self._slot = np.empty(len(order), dtype=np.int64)
            self._slot[order] = np.arange(len(order))
            counts = np.bincount(ends[:, 0], minlength=n)
            indptr = np.concatenate(([0], np.cumsum(counts))).astype(np.int32)
            data = np.array(self.caps, dtype=np.int32)[order] if self.caps else np.zeros(0, np.int32)
            self._csr = csr_array((data, ends[order, 1].astype(np.int32), indptr), shape=(n, n))

    def set(self, u: int, v: int, cap: int) -> None:
        i = self.index[(u, v)]
        self.caps[i] = cap
        if self.kind == "scipy":
            self._csr.data[self._slot[i]] = cap

    def flow(self, s: int, t: int) -> int:
        """The maximum s-t flow value under the current capacities."""
        if s == t:
            raise ValueError("source and sink coincide")
        if self.kind == "igraph":
            return _igraph_value(self._graph, s, t, self.caps)
        if self.kind == "scipy":
            from scipy.sparse.csgraph import maximum_flow

            return int(maximum_flow(self._csr, s, t).flow_value)
        return Network(self.n, {a: self.caps[i] for a, i in self.index.items()}).flow(s, t)


def cut_capacity(arcs: dict[tuple[int, int], int], side) -> int:
    """The total capacity of the arcs leaving ``side``."""
    side = set(side)
    return sum(c for (u, v), c in arcs.items() if u in side and v not in side)
