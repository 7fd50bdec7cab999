"""The topologies of the direct-connect paper's baselines (section 8.2; notes direct-connect.md section 10.2), one
small pure function each, and the NCCL double binary tree they are built around.

* ``shifted_ring(n)``: ShiftedRing, TopoOpt's superposition of two bidirectional rings: the circulant C(n,{1,p}).
* ``dbt_graph(n)``: the union of the two trees of NCCL's double binary tree, every tree edge a cable (two opposite
  unit links).
* ``nccl_double_binary_tree(n)``: the two trees themselves, as parent arrays over ranks 0..n-1 (NCCL
  ``ncclGetBtree`` / ``ncclGetDtree``); ``solvers.baselines.dbt`` schedules on them.

Every function returns a unit-link Topology (bandwidth 1, alpha 0) of compute nodes ``0..n-1``.
"""
from __future__ import annotations

from math import gcd

from .model import Topology, TopologyError, need_int as _need_int


def shifted_ring_stride(n: int) -> int:
    """The stride p of ShiftedRing's second ring on n nodes.

    The paper does not state TopoOpt's stride; the digest (section 10.2) found that a second ring of stride
    n/2 +- 1 reproduces the paper's all-to-all number (C(n,{1,n/2+-1}) are one graph for even n, since
    n/2 + 1 = -(n/2 - 1) mod n). So p is the first of n//2 - 1, n//2 + 1, n//2 - 2, n//2 + 2, ... (outward from
    n/2) that is coprime to n (so that i -> i + p is one Hamiltonian cycle) and is neither +-1 nor n/2 mod n
    (so that the second ring shares no cable with the first), reported as min(p, n - p). n = 12 gives 5,
    n = 10 gives 3 (4 and 6 share a factor with 10), n = 9 gives 4. No such stride exists for n <= 4 or n = 6.
    """
    n = _need_int(n, "n", 3)
    half = n // 2
    for delta in range(1, n):
        for p in (half - delta, half + delta):
            q = p % n
            if q in (0, 1, n - 1) or 2 * q == n or gcd(n, q) != 1:
                continue
            return min(q, n - q)
    raise TopologyError(f"ShiftedRing needs a second stride p coprime to n with p != +-1 and p != n/2; "
                        f"none exists for n = {n} (use n = 5 or n >= 7)")


def shifted_ring(n: int) -> Topology:
    """ShiftedRing(n) = C(n,{1,p}): node i cabled to i +- 1 (the first ring) and i +- p (the second), p from
    ``shifted_ring_stride``. Bidirectional, 4-regular, unit links (direct-connect paper section 8.2: two
    bidirectional rings each allreducing half the data, as in TopoOpt)."""
    p = shifted_ring_stride(n)
    edges = [(i, (i + s * a) % n) for i in range(n) for a in (1, p) for s in (1, -1)]
    return Topology.from_edges(n, edges, name=f"ShiftedRing({n}) = C({n},{{1,{p}}})", expr=f"shifted_ring({n})")


def _btree_parent(n: int, rank: int) -> int:
    """The parent of ``rank`` in NCCL's binary tree of ranks 0..n-1 (``ncclGetBtree``), -1 for the root 0.

    With b the lowest set bit of rank, the parent is (rank ^ b) | 2b, or rank ^ b when that is not a rank. The
    lowest set bit strictly grows along the parent chain, so this is a tree; the root 0 has the single child
    2^(ceil(log2 n) - 1) (n/2 for a power of two)."""
    if rank == 0:
        return -1
    bit = rank & -rank
    up = (rank ^ bit) | (bit << 1)
    return up if up < n else rank ^ bit


def nccl_double_binary_tree(n: int) -> tuple[tuple[int, ...], tuple[int, ...]]:
    """(parent of every rank in tree 1, in tree 2), -1 marking each root (NCCL ``ncclGetDtree``).

    Tree 1 is the binary tree of ``_btree_parent`` (root 0). Tree 2 relabels it: for even n by the mirror
    r -> n-1-r (root n-1), for odd n by the shift r -> r+1 mod n (root 1), so that most ranks that are inner
    nodes of one tree are leaves of the other (Sanders, Speck and Traeff's two-tree construction).
    """
    n = _need_int(n, "n", 1)
    first = tuple(_btree_parent(n, r) for r in range(n))
    if n % 2 == 0:
        relabel = lambda r: n - 1 - r  # noqa: E731  (an involution)
        back = relabel
    else:
        relabel = lambda r: (r + 1) % n  # noqa: E731
        back = lambda r: (r - 1) % n  # noqa: E731
    second = tuple(-1 if first[back(r)] == -1 else relabel(first[back(r)]) for r in range(n))
    return first, second


def dbt_graph(n: int) -> Topology:
    """DBT(n): the union of the edge sets of NCCL's two binary trees on n ranks (``nccl_double_binary_tree``),
    each edge one cable (two opposite unit links; an edge of both trees is one cable). The direct-connect paper's
    Double Binary Tree baseline topology (section 8.2; digest 10.2 reproduces its all-to-all number on it).
    Irregular: degrees run from 1 or 2 (roots, leaves of both trees) to 4."""
    n = _need_int(n, "n", 2)
    pairs = set()
    for parents in nccl_double_binary_tree(n):
        for child, parent in enumerate(parents):
            if parent >= 0:
                pairs.add((min(child, parent), max(child, parent)))
    edges = []
    for u, v in sorted(pairs):
        edges += [(u, v), (v, u)]
    return Topology.from_edges(n, edges, name=f"DBT({n})", expr=f"dbt_graph({n})")
