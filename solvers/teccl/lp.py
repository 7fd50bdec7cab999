"""The TE-CCL linear program for demands that copy cannot help (all-to-all, demand matrices; paper section 4.1,
Appendix A; digest 4.3), in Pyomo, and its decomposition into pieces of chunks.

Chunks are not tracked one by one: per source s the variables are continuous amounts, in chunks,

    F[s,e,k] >= 0   sent on link e in epoch k (arriving at the start of epoch k + L_e)
    S[s,n,k] >= 0   left in compute node n's buffer after epoch k's sends and reads
    R[s,d,k] >= 0   read by destination d at the start of epoch k

    compute n   S[n,k] = S[n,k-1] + A_n(k) - Σ_{e=(n,j)} F[e,k] - R[n,k],   S[n,-1] = (s's total demand if n = s)
    switch w    Σ_{e=(w,j)} F[e,k] = A_w(k)                                  (no buffer, no copy)
    capacity    Σ_s Σ_{k'=k-κ_e+1..k} F[s,e,k'] <= κ_e τ / t_e                (the exact rate: no whole chunks here)
    demand      Σ_k R[s,d,k] = chunks d wants from s

    maximise    Σ R[s,d,k] Σ_{a=k..K} 1/a  -  ε Σ F                            (early delivery; ε against idle flows)

A_n(k) = Σ_{e=(i,n)} F[e, k - L_e]. The optimum is a fluid schedule: ``decompose`` walks it back from every read
to its source and cuts each (s, d) piece of the shard into consecutive sub-intervals, one per path (the paper's
footnote 3: the LP may split chunks), so the lowered schedule needs no rounding of whole chunks.
"""
from __future__ import annotations

import math
from fractions import Fraction

from topologies.model import Topology

from ..core.schedule import Schedule, Transfer
from .instance import Demand, Timing, lag_distances
from .lower import make_schedule
from .milp import FlowModel, early_reward

EPSILON = 1e-4
TOLERANCE = 1e-7


def lp_size(topo: Topology, demand: Demand, t: Timing, horizon: int) -> int:
    return len(_keys(topo, demand, t, horizon))


def _keys(topo: Topology, demand: Demand, t: Timing, horizon: int) -> list:
    dist = lag_distances(topo, t.lag)
    lag = t.lag
    dests: dict[int, list[int]] = {}
    for (s, d) in demand.per_pair():
        dests.setdefault(s, []).append(d)
    keys = []
    for s, ds in sorted(dests.items()):
        near = dist[:, ds].min(axis=1)
        for i, l in enumerate(topo.links):
            if l.src == l.dst or l.dst == s:
                continue
            first, last = dist[s, l.src], horizon - lag[i] - near[l.dst]
            if math.isfinite(first) and math.isfinite(last):
                keys.extend((s, i, k) for k in range(int(first), int(last) + 1))
    return keys


def build_lp(topo: Topology, demand: Demand, t: Timing, horizon: int) -> FlowModel:
    import pyomo.environ as pyo

    lag = t.lag
    keys = _keys(topo, demand, t, horizon)
    pairs = demand.per_pair()
    m = pyo.ConcreteModel()
    m.F = pyo.Var(range(len(keys)), domain=pyo.NonNegativeReals)
    arrive: dict = {}
    send: dict = {}
    per_link: dict = {}
    for idx, (s, i, k) in enumerate(keys):
        l = topo.links[i]
        arrive.setdefault((s, l.dst, k + lag[i]), []).append(idx)
        send.setdefault((s, l.src, k), []).append(idx)
        per_link.setdefault((i, k), []).append(idx)
    sources = sorted({s for s, _ in pairs})
    total = {s: sum(x for (a, _), x in pairs.items() if a == s) for s in sources}
    s_keys = [(s, n, k) for s in sources for n in topo.compute_nodes for k in range(horizon + 1)]
    s_index = {key: j for j, key in enumerate(s_keys)}
    r_keys = [(s, d, k) for (s, d) in sorted(pairs) for k in range(1, horizon + 1)]
    r_index = {key: j for j, key in enumerate(r_keys)}
    m.S = pyo.Var(range(len(s_keys)), domain=pyo.NonNegativeReals)
    m.R = pyo.Var(range(len(r_keys)), domain=pyo.NonNegativeReals)
    m.stock = pyo.ConstraintList()
    m.switch = pyo.ConstraintList()
    m.cap = pyo.ConstraintList()
    m.demand = pyo.ConstraintList()
    for (s, n, k), j in s_index.items():
        before = m.S[s_index[(s, n, k - 1)]] if k > 0 else (total[s] if n == s else 0)
        incoming = pyo.quicksum(m.F[a] for a in arrive.get((s, n, k), ()))
        out = pyo.quicksum(m.F[a] for a in send.get((s, n, k), ()))
        read = m.R[r_index[(s, n, k)]] if (s, n, k) in r_index else 0
        m.stock.add(m.S[j] == before + incoming - out - read)
    for w in topo.switch_nodes:
        for s in sources:
            for k in range(horizon + 1):
                out, incoming = send.get((s, w, k), ()), arrive.get((s, w, k), ())
                if out or incoming:
                    m.switch.add(pyo.quicksum(m.F[a] for a in out) == pyo.quicksum(m.F[a] for a in incoming))
    for i, l in enumerate(topo.links):
        if l.src == l.dst:
            continue
        for k in range(horizon):
            window = [j for kk in range(k - t.kappa[i] + 1, k + 1) for j in per_link.get((i, kk), ())]
            if window:
                m.cap.add(pyo.quicksum(m.F[j] for j in window) <= float(t.window_cap[i]))
    for (s, d), x in sorted(pairs.items()):
        m.demand.add(pyo.quicksum(m.R[r_index[(s, d, k)]] for k in range(1, horizon + 1)) == x)
    reward = early_reward(horizon)
    m.obj = pyo.Objective(expr=pyo.quicksum(reward[k] * m.R[j] for j, (s, d, k) in enumerate(r_keys))
                          - EPSILON * pyo.quicksum(m.F[j] for j in range(len(keys))), sense=pyo.maximize)
    return FlowModel(m, keys, horizon, lag, {"r_keys": r_keys, "s_keys": s_keys})


def fluid_values(fm: FlowModel) -> tuple[dict, dict, dict]:
    """(F, S, R) of the loaded solution as dicts keyed like the model's index lists, zeros dropped."""
    import pyomo.environ as pyo

    def read(var, keys):
        out = {}
        for j, key in enumerate(keys):
            v = pyo.value(var[j], exception=False) or 0.0
            if v > TOLERANCE:
                out[key] = v
        return out

    return read(fm.model.F, fm.keys), read(fm.model.S, fm.extra["s_keys"]), read(fm.model.R, fm.extra["r_keys"])


def finish_epoch(reads: dict) -> int:
    """The epoch at whose start the last read happens (the transfer time in epochs)."""
    return max((k for (_, _, k), v in reads.items() if v > 1e-6), default=0)


def decompose(topo: Topology, demand: Demand, lag, flows: dict, stock: dict, reads: dict) -> list:
    """Paths of the fluid solution: [(s, d, amount in chunks, [(link, k), ...] in order)], module docstring."""
    into: dict = {}
    for (s, i, k), v in flows.items():
        into.setdefault((s, topo.links[i].dst, k + lag[i]), []).append([(s, i, k), v])
    stock = dict(stock)
    flows = dict(flows)
    paths = []
    for (s, d, k), need in sorted(reads.items()):
        left = need
        while left > TOLERANCE:
            node, epoch, hops, amount = d, k, [], left
            while node != s:                  # the source holds all of its data from the start
                best, best_v, kind = None, TOLERANCE, None
                if topo.is_compute(node) and epoch > 0 and stock.get((s, node, epoch - 1), 0) > best_v:
                    best, best_v, kind = (s, node, epoch - 1), stock[(s, node, epoch - 1)], "stock"
                for entry in into.get((s, node, epoch), ()):
                    if entry[1] > best_v:
                        best, best_v, kind = entry, entry[1], "flow"
                if best is None:
                    raise AssertionError(f"the fluid solution cannot be traced from {topo.names[d]} back to "
                                         f"{topo.names[s]}")
                amount = min(amount, best_v)
                if kind == "stock":
                    hops.append(("stock", best))
                    epoch -= 1
                else:
                    hops.append(("flow", best))
                    _, i, kk = best[0]
                    node, epoch = topo.links[i].src, kk
            if amount <= TOLERANCE:
                break
            for kind, ref in hops:
                if kind == "stock":
                    stock[ref] -= amount
                else:
                    ref[1] -= amount
            left -= amount
            paths.append((s, d, amount, [ref[0][1:] for kind, ref in reversed(hops) if kind == "flow"]))
    return paths


def lower_paths(topo: Topology, demand: Demand, lag, paths, algo: str = "teccl",
                notes: dict | None = None) -> Schedule:
    """Each (s, d) region of s's shard cut into consecutive pieces in proportion to its paths' amounts, exact
    Fractions summing to the whole region; each piece sent hop by hop along its path."""
    C = demand.chunks
    region: dict = {}
    for s, c, d in demand.wants:
        lo, hi = region.get((s, d), (c, c + 1))
        region[(s, d)] = (min(lo, c), max(hi, c + 1))
    by_pair: dict = {}
    for s, d, amount, hops in paths:
        by_pair.setdefault((s, d), []).append((amount, hops))
    transfers = []
    for (s, d), (c0, c1) in sorted(region.items()):
        group = by_pair.get((s, d), [])
        if not group:
            raise AssertionError(f"no path carries {topo.names[s]}'s data to {topo.names[d]}")
        whole = sum(a for a, _ in group)
        lo = Fraction(c0, C)
        width = Fraction(c1 - c0, C)
        for j, (amount, hops) in enumerate(group):
            hi = Fraction(c1, C) if j == len(group) - 1 else \
                lo + width * Fraction(amount / whole).limit_denominator(1 << 20)
            if hi <= lo:
                continue
            transfers.extend(Transfer(s, lo, hi, i, k + lag[i]) for i, k in hops)
            lo = hi
    return make_schedule(demand, transfers, algo, notes)
