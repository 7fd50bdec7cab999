"""AllReduce plan costs on one switch: GenModel (paper Table 2) beside the classic (alpha, beta, gamma) model (Table 1).

N servers each hold S floats. The plans (GenModel paper §2.1, §3.3):

* Reduce-Broadcast (PS): everyone sends S to one server, which reduces and broadcasts (2 steps).
* Co-located PS (CPS): server i reduces block i of S/N; a full mesh in both halves (2 steps).
* Ring: 2(N-1) steps of S/N around a ring.
* RHD: recursive halving then doubling, 2*ceil(log2 N) steps; chi(N) = 1 when N is not a power of two.
* HCPS f_0 x ... x f_{m-1} (N = prod f_i): ReduceScatter in groups of f_0, then in orthogonal groups of f_1, ...,
  then the AllGathers in reverse (2m steps). ``f_0`` is the first step and is written first ("6 x 2").
* Hierarchical g x n (the GPU testbed's "8 x n", pitfall P12): ring ReduceScatter inside each node of g, CPS
  AllReduce across the n nodes on S/g, ring AllGather inside the node.

Corrected HCPS (digest §1.4.2, derived from the paper's own counting rules), with P_i = f_0 ... f_i:

    2m·alpha + 2(N-1)/N·S·beta + (N-1)/N·S·gamma + [N + 1 + 2·sum_{i<m-1} prod_{j>i} f_j]/N·S·delta
    + 2·sum_i max(0, w(f_i) - w_t)·(f_i - 1)/P_i·S·epsilon

(m = 1 is exactly the CPS row.) The printed Table 2 row is kept behind ``ModelOptions(hcps="printed")``: its delta
sum runs over i = 1..m-1 with f indexed from 1 (f_1 = the first step), and its epsilon term uses f_{i-1}, undefined
for i = 0 in print; a literal reading takes it cyclically as f_{m-1}.

The alpha term is multiplied by ``ModelOptions.alpha_steps`` (mu). Incast uses w = group size or w = senders
(``ModelOptions.fan_in``, pitfall P3). Every cost comes as a ``PlanCost`` with a breakdown by term in seconds.
"""
from __future__ import annotations

import math
from dataclasses import dataclass, field

from .params import DEFAULT_OPTIONS, GenModelParams, ModelOptions, ParamsError

TERMS = ("alpha", "beta", "gamma", "delta", "epsilon")
BASIC = ("ps", "cps", "ring", "rhd")
KIND_LABELS = {"ps": "Reduce-Broadcast", "cps": "CPS", "ring": "Ring", "rhd": "RHD"}
MAX_SERVERS = 1 << 16


@dataclass(frozen=True)
class PlanCost:
    """The cost of one plan: ``steps`` communication steps (the alpha coefficient before mu), the coefficients of
    Eq. 11 (``coef``: A steps, B floats through a link, C floats added, D floats read/written, E incast-weighted
    floats = sum of max(w - w_t, 0) * received) and the time of each term in seconds."""

    label: str
    kind: str
    n: int
    size: float
    fanins: tuple[int, ...]
    steps: int
    alpha: float
    beta: float
    gamma: float
    delta: float
    epsilon: float
    coef: dict = field(default_factory=dict, compare=False)
    model: str = "genmodel"

    @property
    def total(self) -> float:
        return self.alpha + self.beta + self.gamma + self.delta + self.epsilon

    def terms(self) -> dict[str, float]:
        return {t: getattr(self, t) for t in TERMS}

    def as_dict(self) -> dict:
        return {"plan": self.label, "kind": self.kind, "n": self.n, "size": self.size, "steps": self.steps,
                "fanins": list(self.fanins), **self.terms(), "total": self.total, "model": self.model}


def _check(n: int, size: float) -> None:
    if isinstance(n, bool) or not isinstance(n, int) or not 2 <= n <= MAX_SERVERS:
        raise ParamsError(f"the number of servers must be an integer from 2 to {MAX_SERVERS}, got {n!r}")
    if isinstance(size, bool) or not isinstance(size, (int, float)) or not (size >= 0 and math.isfinite(size)):
        raise ParamsError(f"the size must be a non-negative number of floats, got {size!r}")


def _cost(label, kind, n, size, fanins, p: GenModelParams, o: ModelOptions, a, b, c, d, e, model="genmodel"):
    """A PlanCost from the Eq. 11 coefficients (a steps, b, c, d floats, e incast-weighted floats)."""
    mu = o.single_switch_mu()
    return PlanCost(label, kind, n, float(size), tuple(fanins), int(a), a * mu * p.alpha, b * p.beta, c * p.gamma,
                    d * p.delta, e * p.epsilon, {"A": a, "B": b, "C": c, "D": d, "E": e}, model)


def _excess(group: int, p: GenModelParams, o: ModelOptions) -> int:
    return max(o.width(group) - p.w_t, 0)


def chi(n: int) -> int:
    """chi(N) = 0 when N is a power of two, else 1 (Table 1 caption)."""
    return 0 if n & (n - 1) == 0 else 1


def ps_cost(n: int, size: float, p: GenModelParams, o: ModelOptions = DEFAULT_OPTIONS) -> PlanCost:
    """Reduce-Broadcast, Table 2 row 1 (gamma coefficient (N-1)S as in Table 2, not Table 1's 2(N-1)S: P2)."""
    _check(n, size)
    s = size
    return _cost("Reduce-Broadcast", "ps", n, s, (n,), p, o, 2, 2 * (n - 1) * s, (n - 1) * s, (n + 1) * s,
                 2 * (n - 1) * s * _excess(n, p, o))


def cps_cost(n: int, size: float, p: GenModelParams, o: ModelOptions = DEFAULT_OPTIONS) -> PlanCost:
    """Co-located PS, Table 2 row 4."""
    _check(n, size)
    s, share = size, (n - 1) / n
    return _cost("CPS", "cps", n, s, (n,), p, o, 2, 2 * share * s, share * s, (n + 1) / n * s,
                 2 * share * s * _excess(n, p, o))


def ring_cost(n: int, size: float, p: GenModelParams, o: ModelOptions = DEFAULT_OPTIONS) -> PlanCost:
    """Ring AllReduce, Table 2 row 2; 2N steps instead of 2(N-1) with ``ring_steps="simulator"``."""
    _check(n, size)
    s, share = size, (n - 1) / n
    steps = 2 * n if o.ring_steps == "simulator" else 2 * (n - 1)
    return _cost("Ring", "ring", n, s, (2,) * (n - 1), p, o, steps, 2 * share * s, share * s, 3 * share * s, 0)


def rhd_cost(n: int, size: float, p: GenModelParams, o: ModelOptions = DEFAULT_OPTIONS) -> PlanCost:
    """Recursive halving-doubling, Table 2 row 3 (the chi(N) term adds 2S beta + S gamma + 3S delta)."""
    _check(n, size)
    s, share, x = size, (n - 1) / n, chi(n)
    steps = 2 * math.ceil(math.log2(n))
    return _cost("RHD", "rhd", n, s, (2,) * steps, p, o, steps, 2 * share * s + x * 2 * s, share * s + x * s,
                 3 * share * s + x * 3 * s, 0)


def hcps_label(fanins) -> str:
    """"CPS" for one step, else the fan-ins first step first: "8 × 3"."""
    fanins = tuple(fanins)
    return "CPS" if len(fanins) == 1 else " × ".join(str(f) for f in fanins)


def hcps_cost(fanins, size: float, p: GenModelParams, o: ModelOptions = DEFAULT_OPTIONS) -> PlanCost:
    """Hierarchical CPS with fan-ins ``(f_0, ..., f_{m-1})`` (first step first), Table 2 row 5 as corrected in the
    module docstring, or as printed with ``ModelOptions(hcps="printed")``. One fan-in is CPS."""
    fs = tuple(int(f) for f in fanins)
    if not fs or any(f < 2 for f in fs):
        raise ParamsError(f"HCPS fan-ins must all be at least 2, got {fanins!r}")
    n, m = math.prod(fs), len(fs)
    _check(n, size)
    s, share = size, (n - 1) / n
    if o.hcps == "printed":
        one_based = (None,) + fs                          # f_1 = the first step
        mem = n + 1 + 2 * sum(math.prod(one_based[1:i + 1]) for i in range(1, m))
        inc = sum(_excess(fs[i], p, o) * (fs[i - 1] - 1) * math.prod(fs[i:]) / n for i in range(m))
        d, e = mem / n * s, inc * s
    else:
        d = (n + 1 + 2 * sum(math.prod(fs[i + 1:]) for i in range(m - 1))) / n * s
        e, prefix = 0.0, 1
        for f in fs:
            prefix *= f
            e += 2 * _excess(f, p, o) * (f - 1) / prefix * s
    kind = "cps" if m == 1 else "hcps"
    return _cost(hcps_label(fs), kind, n, s, fs, p, o, 2 * m, 2 * share * s, share * s, d, e)


def hierarchical_cost(per_node: int, nodes: int, size: float, intra: GenModelParams, inter: GenModelParams,
                      o: ModelOptions = DEFAULT_OPTIONS) -> PlanCost:
    """The GPU testbed's "g × n" plan (§5.2, P12): ring RS + AG inside each node of ``per_node`` devices with the
    ``intra`` parameters, and CPS across ``nodes`` nodes on S/g with the ``inter`` parameters (n <= w_t avoids
    incast). The terms add: the node-local ring halves surround the inter-node CPS."""
    _check(per_node * nodes, size)
    inner = ring_cost(per_node, size, intra, o) if per_node >= 2 else None
    outer = cps_cost(nodes, size / per_node, inter, o) if nodes >= 2 else None
    parts = [c for c in (inner, outer) if c is not None]
    coef = {k: sum(c.coef[k] for c in parts) for k in ("A", "B", "C", "D", "E")}
    return PlanCost(f"{per_node} × {nodes} hier", "hier", per_node * nodes, float(size), (per_node, nodes),
                    sum(c.steps for c in parts), *(sum(getattr(c, t) for c in parts) for t in TERMS), coef)


def classic_cost(kind: str, n: int, size: float, p: GenModelParams, o: ModelOptions = DEFAULT_OPTIONS,
                 fanins=None) -> PlanCost:
    """The (alpha, beta, gamma) cost of Table 1 (no delta, no epsilon). HCPS, absent from Table 1, costs as CPS
    there but with 2m steps. Reduce-Broadcast keeps Table 1's 2(N-1)S gamma."""
    _check(n, size)
    q = p.classic()
    s, share = size, (n - 1) / n
    if kind == "ps":
        return _cost("Reduce-Broadcast", "ps", n, s, (n,), q, o, 2, 2 * (n - 1) * s, 2 * (n - 1) * s, 0, 0, "classic")
    if kind in ("cps", "hcps"):
        fs = tuple(fanins) if fanins else (n,)
        return _cost(hcps_label(fs), kind, n, s, fs, q, o, 2 * len(fs), 2 * share * s, share * s, 0, 0, "classic")
    if kind == "ring":
        c = ring_cost(n, size, q, o)
    elif kind == "rhd":
        c = rhd_cost(n, size, q, o)
    else:
        raise ParamsError(f"unknown plan kind {kind!r}")
    return PlanCost(c.label, c.kind, n, c.size, c.fanins, c.steps, c.alpha, c.beta, c.gamma, 0.0, 0.0, c.coef,
                    "classic")


def ordered_factorizations(n: int, min_factor: int = 2) -> list[tuple[int, ...]]:
    """Every ordered factorization of ``n`` into factors >= ``min_factor`` (``(n,)`` included), e.g.
    12 -> (12), (2,6), (6,2), (3,4), (4,3), (2,2,3), (2,3,2), (3,2,2)."""
    if n < min_factor:
        return []
    out = [(n,)]
    for f in range(min_factor, n // min_factor + 1):
        if n % f == 0:
            out += [(f,) + rest for rest in ordered_factorizations(n // f, min_factor)]
    return sorted(out, key=lambda t: (len(t), [-x for x in t]))


def plan_cost(plan, n: int, size: float, p: GenModelParams, o: ModelOptions = DEFAULT_OPTIONS) -> PlanCost:
    """The GenModel cost of ``plan``: ``"ps"``, ``"cps"``, ``"ring"``, ``"rhd"`` or a tuple of HCPS fan-ins."""
    if isinstance(plan, tuple):
        if math.prod(plan) != n:
            raise ParamsError(f"the fan-ins {plan} do not multiply to {n}")
        return hcps_cost(plan, size, p, o)
    fn = {"ps": ps_cost, "cps": cps_cost, "ring": ring_cost, "rhd": rhd_cost}.get(plan)
    if fn is None:
        raise ParamsError(f"unknown plan {plan!r} (ps, cps, ring, rhd or a tuple of fan-ins)")
    return fn(n, size, p, o)


def candidate_plans(n: int, kinds=("ps", "cps", "ring", "rhd", "hcps")) -> list:
    """The plans compared for N servers: the basic kinds listed, then every HCPS factorization with m >= 2."""
    out = [k for k in BASIC if k in kinds]
    if "hcps" in kinds:
        out += [f for f in ordered_factorizations(n) if len(f) >= 2]
    return out


def memory_lower_bound(n: int, size: float) -> float:
    """Theorem 1 (Eq. 12): every AllReduce reads/writes at least (N+1)S/N floats per server: the delta coefficient."""
    return (n + 1) / n * size


def traffic_lower_bound(n: int, size: float) -> float:
    """Eq. 2 (Patarasuk and Yuan): each server sends and receives at least 2(N-1)S/N floats."""
    return 2 * (n - 1) / n * size


def badges(cost: PlanCost, params: GenModelParams | None = None) -> dict[str, bool]:
    """The optimalities of §2.2 and §3.3: latency- (2 steps), bandwidth- (Eq. 2 traffic), epsilon- (no incast)
    and delta-optimal (Theorem 1 memory)."""
    n, s, c = cost.n, cost.size, cost.coef
    tol = 1e-9 * max(s, 1.0)
    return {"latency": c["A"] == 2, "bandwidth": abs(c["B"] - traffic_lower_bound(n, s)) <= tol,
            "epsilon": c["E"] <= tol, "delta": abs(c["D"] - memory_lower_bound(n, s)) <= tol}


def _order_key(c: PlanCost):
    return (round(c.total, 12), c.steps, c.label)


@dataclass
class Ranking:
    """Plans for one (N, S) sorted by GenModel total (ties: fewer steps first); ``classic`` sorted by Table 1."""

    n: int
    size: float
    costs: list[PlanCost]
    classic: list[PlanCost]

    @property
    def best(self) -> PlanCost:
        return self.costs[0]

    @property
    def classic_best(self) -> PlanCost:
        return self.classic[0]

    def rows(self) -> list[dict]:
        classic = {c.label: c for c in self.classic}
        rank = {c.label: i + 1 for i, c in enumerate(self.classic)}
        out = []
        for i, c in enumerate(self.costs):
            b = badges(c)
            out.append({"rank": i + 1, "plan": c.label, "steps": c.steps, **{t: getattr(c, t) for t in TERMS},
                        "total": c.total, "classic_total": classic[c.label].total, "classic_rank": rank[c.label],
                        "badges": ", ".join(k for k, v in b.items() if v)})
        return out

    def to_frame(self):
        import pandas as pd
        return pd.DataFrame(self.rows())


def best_plan(n: int, size: float, params: GenModelParams, options: ModelOptions = DEFAULT_OPTIONS,
              candidates=None) -> Ranking:
    """Every candidate plan (default ``candidate_plans(n)``) costed with GenModel and with Table 1, ranked."""
    _check(n, size)
    cands = candidate_plans(n) if candidates is None else list(candidates)
    if not cands:
        raise ParamsError("no candidate plans")
    costs = [plan_cost(c, n, size, params, options) for c in cands]
    classic = [classic_cost(c.kind, n, size, params, options, c.fanins if c.kind in ("cps", "hcps") else None)
               for c in costs]
    return Ranking(n, float(size), sorted(costs, key=_order_key), sorted(classic, key=_order_key))
