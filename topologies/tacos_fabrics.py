"""The topologies of TACOS (Won et al., arXiv 2304.05301; notes tacos.md sections 1.10, 2.3 and 2.14): meshes, the
reference code's tori, heterogeneous 2D meshes and the multi-dimensional Ring_FC_Switch system of Table I.

Units. The reference implementation gives link bandwidths in GiB/s (2^30 bytes/s) and latencies in microseconds;
this project's links carry GB/s (1e9 bytes/s) and microseconds. ``gib(x)`` converts exactly, so a link of
``gib(50)`` moves 50 * 2^30 bytes per second as in the reference's regression tests. The expression language
has only integers: ``mesh(5,5,bw=50,alpha_ns=500)`` is in GB/s and whole nanoseconds, ``gib=1`` reads ``bw``
(and ``bw_y``) as GiB/s instead.

Differences from ``torus`` of the direct-connect families, kept on purpose to match the reference: a torus
dimension of size 2 has ONE link each way between its two nodes (the wrap-around coincides with the mesh link),
not a double link; ``mesh`` has no wrap-around at all (the reference's "Hypercube3D" is a 3-D mesh).
"""
from __future__ import annotations

from fractions import Fraction
from math import prod

from .model import COMPUTE, Link, Topology, TopologyError, as_fraction, need_int

GIB_PER_GB = Fraction(2 ** 30, 10 ** 9)


def gib(value) -> Fraction:
    """A bandwidth of ``value`` GiB/s in GB/s, exact."""
    return as_fraction(value, "bandwidth") * GIB_PER_GB


def _rate(bw, use_gib: int, what: str) -> Fraction:
    value = as_fraction(bw, what)
    if value <= 0:
        raise TopologyError(f"{what} must be positive, got {bw}")
    return value * GIB_PER_GB if use_gib else value


def _alpha_us(alpha_ns) -> Fraction:
    value = as_fraction(alpha_ns, "alpha_ns")
    if value < 0:
        raise TopologyError(f"alpha_ns must not be negative, got {alpha_ns}")
    return value / 1000


def _grid(dims: tuple[int, ...], wrap: bool, rates: tuple[Fraction, ...], alphas: tuple[Fraction, ...],
          name: str, expr: str) -> Topology:
    strides = [prod(dims[:i]) for i in range(len(dims))]
    n = prod(dims)
    pairs: dict[tuple[int, int], tuple[Fraction, Fraction]] = {}
    for v in range(n):
        coord = [(v // strides[i]) % dims[i] for i in range(len(dims))]
        for i, size in enumerate(dims):
            steps = [1] if not wrap or size == 2 else [1, size - 1]
            for step in steps:
                if not wrap and coord[i] + step >= size:
                    continue
                u = v + (((coord[i] + step) % size) - coord[i]) * strides[i]
                for a, b in ((v, u), (u, v)):
                    pairs.setdefault((a, b), (rates[i], alphas[i]))
    links = tuple(Link(a, b, bw, al) for (a, b), (bw, al) in sorted(pairs.items()))
    return Topology(tuple(str(i) for i in range(n)), (COMPUTE,) * n, links, name=name, expr=expr)


def _dims(dims, what: str) -> tuple[int, ...]:
    if not dims:
        raise TopologyError(f"{what} needs at least one dimension, e.g. {what}(4,4)")
    return tuple(need_int(d, f"a {what} dimension", 2) for d in dims)


def _expr(family: str, dims, bw, alpha_ns, use_gib, extra: str = "") -> str:
    text = ",".join(map(str, dims)) + extra
    if bw != 1:
        text += f",bw={bw}"
    if alpha_ns:
        text += f",alpha_ns={alpha_ns}"
    if use_gib:
        text += ",gib=1"
    return f"{family}({text})"


def mesh(*dims: int, bw=1, alpha_ns=0, gib: int = 0) -> Topology:
    """The mesh d_1 x ... x d_k: node (x_1..x_k) is linked both ways to its neighbours at distance 1 in one
    coordinate, without wrap-around (TACOS's Mesh2D and its "Hypercube3D", notes tacos.md 1.10). Every link has
    bandwidth ``bw`` (GB/s, or GiB/s with ``gib=1``) and latency ``alpha_ns`` nanoseconds."""
    dims = _dims(dims, "mesh")
    rate, alpha = _rate(bw, gib, "bw"), _alpha_us(alpha_ns)
    return _grid(dims, False, (rate,) * len(dims), (alpha,) * len(dims), f"Mesh({'×'.join(map(str, dims))})",
                 _expr("mesh", dims, bw, alpha_ns, gib))


def tacos_torus(*dims: int, bw=1, alpha_ns=0, gib: int = 0) -> Topology:
    """The torus as TACOS's reference code builds it (Torus2D/Torus3D): the mesh plus wrap-around links, where a
    dimension of size 2 keeps a single link each way (so Torus(4,2,3) has in-degree 5, not 6)."""
    dims = _dims(dims, "tacos_torus")
    rate, alpha = _rate(bw, gib, "bw"), _alpha_us(alpha_ns)
    return _grid(dims, True, (rate,) * len(dims), (alpha,) * len(dims), f"Torus({'×'.join(map(str, dims))})",
                 _expr("tacos_torus", dims, bw, alpha_ns, gib))


def hetero_mesh(width: int, height: int, bw=1, bw_y=1, alpha_ns=0, gib: int = 0) -> Topology:
    """TACOS's Mesh2D_Hetero: a width x height mesh whose x-links (within a row) have bandwidth ``bw`` and whose
    y-links (within a column) have ``bw_y``; all links have latency ``alpha_ns`` nanoseconds."""
    dims = _dims((width, height), "hetero_mesh")
    rates = (_rate(bw, gib, "bw"), _rate(bw_y, gib, "bw_y"))
    alpha = _alpha_us(alpha_ns)
    expr = f"hetero_mesh({width},{height},bw={bw},bw_y={bw_y}" + (f",alpha_ns={alpha_ns}" if alpha_ns else "") \
        + (",gib=1" if gib else "") + ")"
    return _grid(dims, False, rates, (alpha, alpha), f"HeteroMesh({width}×{height})", expr)


def ring_fc_switch(nodes: int, ring_bw=200, fc_bw=100, switch_bw=50, alpha_ns=500) -> Topology:
    """TACOS Table I's Ring_FC_Switch system, already unwound as the paper evaluates it (section VII-B: degree-max
    unwinding for scale-up switches, degree-1 for scale-out): a node is a bidirectional ring of 2 NPUs (one link
    each way, ``ring_bw``) times a fully connected group of 4 (``fc_bw``); ``nodes`` such nodes are joined per NPU
    position through a scale-out switch, which degree-1 unwinding turns into a unidirectional ring over the nodes
    at the full ``switch_bw`` (GB/s). 8 NPUs per node; NPU id = ring + 2 * (fc + 4 * node). Every link has latency
    ``alpha_ns`` nanoseconds (the paper does not state one; 500 ns is its Fig. 6 value)."""
    nodes = need_int(nodes, "nodes", 1)
    rates = [_rate(x, 0, what) for x, what in ((ring_bw, "ring_bw"), (fc_bw, "fc_bw"), (switch_bw, "switch_bw"))]
    alpha = _alpha_us(alpha_ns)
    npu = lambda r, f, m: r + 2 * (f + 4 * m)  # noqa: E731
    links = []
    for m in range(nodes):
        for f in range(4):
            for r in range(2):
                v = npu(r, f, m)
                links.append(Link(v, npu(1 - r, f, m), rates[0], alpha))
                links += [Link(v, npu(r, g, m), rates[1], alpha) for g in range(4) if g != f]
                if nodes > 1:
                    links.append(Link(v, npu(r, f, (m + 1) % nodes), rates[2], alpha))
    n = 8 * nodes
    expr = f"ring_fc_switch({nodes}" + "".join(
        f",{k}={v}" for k, v, default in (("ring_bw", ring_bw, 200), ("fc_bw", fc_bw, 100),
                                          ("switch_bw", switch_bw, 50), ("alpha_ns", alpha_ns, 500))
        if v != default) + ")"
    return Topology(tuple(str(i) for i in range(n)), (COMPUTE,) * n, tuple(links),
                    name=f"Ring(2)_FC(4)_Switch({nodes})", expr=expr)


def grid_size(*dims, **_options) -> tuple[int, int]:
    if not dims or any(isinstance(d, bool) or not isinstance(d, int) for d in dims):
        raise TypeError("integer dimensions expected")
    n = prod(dims)
    return n, 2 * len(dims) * n


def ring_fc_switch_size(nodes, **_options) -> tuple[int, int]:
    if isinstance(nodes, bool) or not isinstance(nodes, int):
        raise TypeError("integer arguments expected")
    return 8 * nodes, 8 * nodes * (5 if nodes > 1 else 4)
