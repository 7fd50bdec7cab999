"""ForestColl's throughput searches: the optimal 1/x* with the cut that attains it, k and U (Prop 3), and the
fixed-k search (Algorithm 3). Digest notes/forestcoll.md sections 1.4, 2.1, 2.2 and 2.6.

The fabric is read as integer capacities: every bandwidth (GB/s) times ``scale``, the least common denominator
of the bandwidths (1 when they are integers, as in the paper). In those units

    1/x* = max over S ⊂ V with S ⊉ V_c of |S ∩ V_c| / B⁺(S)           (eq. (1))

and the oracle of Theorem 1 decides ``1/x ≥ 1/x*``: add a source s with an arc of capacity x to every compute
node; then every compute node c has F(s, c) ≥ N x exactly when x ≤ x*. With x = q/p the test runs on integers:
arcs times p, source arcs q, compare with N q.

``optimal_ratio`` finds 1/x* by the cut-ratio (Dinkelbach) iteration: start from the single-node cut ratio
(N-1)/min B⁻(v), a lower bound; while the oracle fails at the current ratio λ, the minimum cut of the failing
flow is a set S with |S ∩ V_c| / B⁺(S) > λ (its capacity p B⁺(S) + q |V_c \\ S| is below N q), so λ rises to
that ratio. Each round costs at most N max-flows and the ratio rises strictly, so it ends at 1/x* exactly, with
S* in hand, usually in one to three rounds. ``optimal_ratio_bisect`` is the paper's Algorithm 1 (bisection to an
interval shorter than 1/X², then the unique fraction of denominator at most X, found by continued fractions);
the tests check that both agree.
"""
from __future__ import annotations

from dataclasses import dataclass
from fractions import Fraction
from math import ceil, floor, gcd, lcm
from typing import Callable

from topologies.model import Topology
from topologies.properties import is_strongly_connected

from ..core.errors import NotApplicable
from ..core.maxflow import Network, cut_capacity

Progress = Callable[[str, float], None]


@dataclass(frozen=True)
class Fabric:
    """A topology as ForestColl reads it: integer capacities ``arcs[(u, v)]`` (parallel links merged, self-loops
    dropped) on nodes ``0..n-1`` of which ``compute`` are the GPUs; capacity = bandwidth (GB/s) x ``scale``."""

    n: int
    compute: tuple[int, ...]
    arcs: dict
    scale: int
    names: tuple[str, ...]

    @property
    def size(self) -> int:
        return len(self.compute)

    def ingress(self, v: int) -> int:
        return self.ingresses()[v]

    def ingresses(self) -> dict[int, int]:
        """Every node's total ingress capacity, in one pass over the arcs (kept: the arcs do not change)."""
        known = self.__dict__.get("_ingresses")
        if known is None:
            known = dict.fromkeys(range(self.n), 0)
            for (_, b), c in self.arcs.items():
                known[b] += c
            self.__dict__["_ingresses"] = known
        return known


def fabric(topo: Topology) -> Fabric:
    """The integer fabric of ``topo``; NotApplicable (one line) when ForestColl cannot run on it."""
    if topo.n < 2:
        raise NotApplicable("ForestColl needs at least two compute nodes")
    if not is_strongly_connected(topo):
        raise NotApplicable("the topology is not strongly connected: some compute node cannot reach another")
    scale = 1
    for l in topo.links:
        scale = lcm(scale, l.bandwidth.denominator)
    arcs: dict[tuple[int, int], int] = {}
    for l in topo.links:
        if l.src != l.dst:
            arcs[(l.src, l.dst)] = arcs.get((l.src, l.dst), 0) + int(l.bandwidth * scale)
    return Fabric(topo.num_nodes, topo.compute_nodes, arcs, scale, topo.names)


def check_eulerian(fab: Fabric, arcs: dict | None = None, what: str = "") -> None:
    """Switch removal needs ingress = egress at every node (digest section 1.1 (b))."""
    arcs = fab.arcs if arcs is None else arcs
    inn, out = [0] * fab.n, [0] * fab.n
    for (u, v), c in arcs.items():
        out[u] += c
        inn[v] += c
    for v in range(fab.n):
        if inn[v] != out[v]:
            raise NotApplicable(f"node {fab.names[v]} has ingress {Fraction(inn[v], fab.scale)} and egress "
                                f"{Fraction(out[v], fab.scale)} GB/s{what}; ForestColl's switch removal needs them "
                                "equal at every node (bidirectional links do that)")


def with_source(n: int, compute, arcs: dict, link_mult: int, source_cap: int | dict) -> dict:
    """The arcs of G⃗ on nodes 0..n: every arc times ``link_mult``, and the source s = n with an arc of
    ``source_cap`` to every compute node (Theorem 1's network; Theorem 5's D⃗_k with link_mult 1, cap k), or of
    ``source_cap[c]`` to c when it is a mapping (Theorem 10's condition with that many trees rooted at c)."""
    scaled = {a: c * link_mult for a, c in arcs.items()}
    for c in compute:
        cap = source_cap[c] if isinstance(source_cap, dict) else source_cap
        if cap:
            scaled[(n, c)] = cap
    return scaled


def first_shortfall(n: int, compute, arcs: dict, link_mult: int, source_cap: int | dict,
                    order: list[int]) -> tuple[int, frozenset] | None:
    """The first compute node (in ``order``, which is updated: the failing node moves to the front) whose
    max-flow from s in ``with_source(...)`` falls below N ``source_cap`` (all that s sends; the sum of a
    mapping), with the source side of its minimum cut (s removed); None when every node receives it all."""
    s = n
    need = sum(source_cap[c] for c in compute) if isinstance(source_cap, dict) else len(compute) * source_cap
    net = Network(n + 1, with_source(n, compute, arcs, link_mult, source_cap))
    for i, c in enumerate(order):
        if net.flow(s, c) < need:
            _, side = net.cut(s, c)
            order.insert(0, order.pop(i))
            return c, side - {s}
    return None


def cut_ratio(fab: Fabric, side) -> Fraction:
    """|S ∩ V_c| / B⁺(S) in the fabric's integer units."""
    compute = sum(1 for c in fab.compute if c in side)
    return Fraction(compute, cut_capacity(fab.arcs, side))


@dataclass(frozen=True)
class Optimum:
    """1/x* in integer units (``ratio``) with a cut S* attaining it, and Prop 3's scaling: U = p / gcd(q, {c_e}),
    k = q / gcd(q, {c_e}) for ratio = p/q, so that U c_e is an integer for every arc."""

    ratio: Fraction
    cut: frozenset
    k: int
    u: Fraction
    rounds: int


def _prop3(fab: Fabric, ratio: Fraction) -> tuple[int, Fraction]:
    g = ratio.denominator
    for c in fab.arcs.values():
        g = gcd(g, c)
    return ratio.denominator // g, Fraction(ratio.numerator, g)


def optimal_ratio(fab: Fabric, progress: Progress | None = None) -> Optimum:
    """1/x* by the cut-ratio iteration of the module docstring, with its bottleneck cut."""
    every = fab.ingresses()
    ingress = {c: every[c] for c in fab.compute}
    vmin = min(fab.compute, key=lambda c: (ingress[c], c))
    side = frozenset(range(fab.n)) - {vmin}
    ratio = Fraction(fab.size - 1, ingress[vmin])
    order = list(fab.compute)
    rounds = 0
    while True:
        rounds += 1
        if progress:
            progress("optimality search", min(0.9, rounds / 6))
        p, q = ratio.numerator, ratio.denominator
        found = first_shortfall(fab.n, fab.compute, fab.arcs, p, q, order)
        if found is None:
            break
        _, new_side = found
        new_ratio = cut_ratio(fab, new_side)
        assert new_ratio > ratio, "a violated cut must have a larger ratio"
        side, ratio = new_side, new_ratio
    k, u = _prop3(fab, ratio)
    return Optimum(ratio, side, k, u, rounds)


def simplest_between(lo: Fraction, hi: Fraction) -> Fraction:
    """The fraction of least denominator in [lo, hi] (0 <= lo <= hi), by continued fractions."""
    if lo > hi or lo < 0:
        raise ValueError("need 0 <= lo <= hi")
    up = Fraction(ceil(lo))
    if up <= hi:
        return up
    whole = floor(lo)
    return whole + 1 / simplest_between(1 / (hi - whole), 1 / (lo - whole))


def oracle_ok(fab: Fabric, inv_x: Fraction, order: list[int] | None = None) -> bool:
    """Theorem 1: True exactly when inv_x >= 1/x* (inv_x in integer units)."""
    p, q = inv_x.numerator, inv_x.denominator
    order = list(fab.compute) if order is None else order
    return first_shortfall(fab.n, fab.compute, fab.arcs, p, q, order) is None


def optimal_ratio_bisect(fab: Fabric) -> tuple[Fraction, int]:
    """Algorithm 1: (1/x*, iterations), by bisection on 1/x between (N-1)/X and N-1 (X = min ingress of a
    compute node) down to a width below 1/X², then the unique fraction of denominator <= X in the interval."""
    x_min = min(fab.ingress(c) for c in fab.compute)
    lo, hi = Fraction(fab.size - 1, x_min), Fraction(fab.size - 1)
    order = list(fab.compute)
    iterations = 0
    while hi - lo >= Fraction(1, x_min * x_min):
        iterations += 1
        mid = (lo + hi) / 2
        if oracle_ok(fab, mid, order):
            hi = mid
        else:
            lo = mid
    ratio = simplest_between(lo, hi)
    assert ratio.denominator <= x_min and oracle_ok(fab, ratio), "Algorithm 1 lost the optimum"
    return ratio, iterations


def floored(fab: Fabric, u: Fraction) -> dict:
    """The arcs of G({⌊U c_e⌋}) with zero-capacity arcs dropped (Theorem 13)."""
    out = {}
    for a, c in fab.arcs.items():
        f = (u * c).numerator // (u * c).denominator
        if f > 0:
            out[a] = f
    return out


def fixed_k_ok(fab: Fabric, k: int, u: Fraction, order: list[int]) -> bool:
    """N k trees with k per root fit in G({⌊U c_e⌋}) (Theorem 5 on the floored graph)."""
    return first_shortfall(fab.n, fab.compute, floored(fab, u), 1, k, order) is None


def fixed_k_algbw(fab: Fabric, k: int) -> Fraction:
    """N k / U* in GB/s: the best allgather algbw with k trees per root (Algorithm 3)."""
    u, _ = fixed_k_search(fab, k)
    return fab.size * k / (u * fab.scale)


def fixed_k_search(fab: Fabric, k: int, progress: Progress | None = None) -> tuple[Fraction, int]:
    """Algorithm 3: (U*, iterations), the least U (integer units) such that k trees per root fit in
    G({⌊U c_e⌋}); U* = n / c_e for some arc, so bisection to a width below 1/X² (X = max c_e) and the unique
    fraction of denominator <= X in (lo, hi] finish it exactly."""
    if k < 1:
        raise NotApplicable(f"k must be a positive integer, got {k}")
    x_min = min(fab.ingress(c) for c in fab.compute)
    x_max = max(fab.arcs.values())
    lo, hi = Fraction((fab.size - 1) * k, x_min), Fraction((fab.size - 1) * k)
    order = list(fab.compute)
    if fixed_k_ok(fab, k, lo, order):
        return lo, 0
    iterations, total = 0, max(1, ceil((hi - lo) * x_max * x_max)).bit_length()
    while hi - lo >= Fraction(1, x_max * x_max):
        iterations += 1
        if progress:
            progress("fixed-k search", min(0.99, iterations / total))
        mid = (lo + hi) / 2
        if fixed_k_ok(fab, k, mid, order):
            hi = mid
        else:
            lo = mid
    u = simplest_between(lo, hi)      # lo is infeasible, so it is not the fraction found
    assert u.denominator <= x_max and fixed_k_ok(fab, k, u, order), "Algorithm 3 lost the optimum"
    return u, iterations
