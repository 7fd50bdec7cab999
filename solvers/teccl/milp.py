"""The TE-CCL general MILP with copy (paper section 3 and Appendix A/F; digest 2.2), in Pyomo.

Per commodity (σ, c) — chunk c of source σ — and time-expanded link (e, k):

    F[σ,c,e,k] ∈ {0, 1}      the chunk is sent on link e in epoch k, arriving at the start of epoch k + L_e
    B[σ,c,n,k] ∈ [0, 1]      compute node n ≠ σ holds the chunk at the start of epoch k (a sum of binaries)

    buffer     B[n,k] = B[n,k-1] + Σ_{e=(j,n)} F[e, k - L_e]       (store and forward; B[n,0] = 0, σ always holds)
    copy       F[(n,j),k] <= B[n,k] for every out-link of a compute node n ≠ σ (per link: multicast, not a sum)
    switch     no buffer; with copy F[(w,j),k] <= A_w(k), without Σ_j F[(w,j),k] = A_w(k),
               A_w(k) = Σ_{e=(i,w)} F[e, k - L_e] the arrivals at the start of epoch k
    capacity   Σ_{σ,c} Σ_{k'=k-κ_e+1..k} F[σ,c,e,k'] <= ⌊κ_e τ / t_e⌋       (sliding window, Appendix F)
    demand     B[d,K] = 1 for every destination d of (σ, c)

    maximise   Σ_k Σ_{demands} ℛ_k / (k + 1),   ℛ_k = B[d, k + 1]          (the paper's early-delivery objective)

B <= 1 with the equality means a node never receives a chunk twice. Variables that cannot matter are never made:
no link into σ, no send before the sender could hold the chunk (lag distance from σ), none that arrives too late
for any destination to be served by epoch K (lag distance to the nearest destination).
"""
from __future__ import annotations

import math
from dataclasses import dataclass, field

from topologies.model import Topology

from .instance import Demand, Timing, lag_distances

MAX_BINARIES = 200_000


@dataclass
class FlowModel:
    """A built model with the index of its flow variables: ``keys[i] = (σ, c, link, k)`` for ``model.F[i]``."""

    model: object
    keys: list
    horizon: int
    lag: tuple
    extra: dict = field(default_factory=dict)


def milp_size(topo: Topology, demand: Demand, t: Timing, horizon: int) -> int:
    """The number of flow binaries the model would have (without building it)."""
    return len(_flow_keys(topo, demand, t, horizon))


def _flow_keys(topo: Topology, demand: Demand, t: Timing, horizon: int) -> list:
    dist = lag_distances(topo, t.lag)
    lag = t.lag
    keys = []
    links = [(i, l) for i, l in enumerate(topo.links) if l.src != l.dst]
    for (s, c), dests in demand.commodities.items():
        near = dist[:, list(dests)].min(axis=1)          # lag from each node to the nearest destination
        for i, l in links:
            if l.dst == s:
                continue
            first = dist[s, l.src]
            last = horizon - lag[i] - near[l.dst]
            if not math.isfinite(first) or not math.isfinite(last):
                continue
            keys.extend((s, c, i, k) for k in range(int(first), int(last) + 1))
    return keys


def build_milp(topo: Topology, demand: Demand, t: Timing, horizon: int, switch_copy: bool = False) -> FlowModel:
    """The MILP of the module docstring over epochs 0 .. horizon - 1 (B read at the start of epoch ``horizon``)."""
    import pyomo.environ as pyo

    lag = t.lag
    keys = _flow_keys(topo, demand, t, horizon)
    m = pyo.ConcreteModel()
    m.F = pyo.Var(range(len(keys)), domain=pyo.Binary)
    arrive: dict = {}                 # (σ, c, node, epoch of arrival) -> [var index]
    send: dict = {}                   # (σ, c, node, k) -> [var index]
    per_link: dict = {}               # (link, k) -> [var index]
    for idx, (s, c, i, k) in enumerate(keys):
        l = topo.links[i]
        arrive.setdefault((s, c, l.dst, k + lag[i]), []).append(idx)
        send.setdefault((s, c, l.src, k), []).append(idx)
        per_link.setdefault((i, k), []).append(idx)

    compute = set(topo.compute_nodes)
    b_keys = []
    b_index: dict = {}
    for (s, c), dests in demand.commodities.items():
        for n in compute:
            if n == s:
                continue
            for k in range(horizon + 1):
                b_index[(s, c, n, k)] = len(b_keys)
                b_keys.append((s, c, n, k))
    m.B = pyo.Var(range(len(b_keys)), bounds=(0, 1))
    m.buffer = pyo.ConstraintList()
    m.hold = pyo.ConstraintList()
    m.switch = pyo.ConstraintList()
    m.cap = pyo.ConstraintList()
    m.demand = pyo.ConstraintList()
    for (s, c, n, k), bi in b_index.items():
        incoming = pyo.quicksum(m.F[j] for j in arrive.get((s, c, n, k), ()))
        if k == 0:
            m.buffer.add(m.B[bi] == 0)
        else:
            m.buffer.add(m.B[bi] == m.B[b_index[(s, c, n, k - 1)]] + incoming)
    for (s, c, n, k), idxs in send.items():
        if n == s:
            continue
        if n in compute:
            for j in idxs:
                m.hold.add(m.F[j] <= m.B[b_index[(s, c, n, k)]])
        elif switch_copy:
            incoming = arrive.get((s, c, n, k), ())
            for j in idxs:
                m.switch.add(m.F[j] <= pyo.quicksum(m.F[a] for a in incoming))
    if not switch_copy:
        for w in topo.switch_nodes:
            for (s, c) in demand.commodities:
                for k in range(horizon + 1):
                    out = send.get((s, c, w, k), ())
                    incoming = arrive.get((s, c, w, k), ())
                    if out or incoming:
                        m.switch.add(pyo.quicksum(m.F[j] for j in out) == pyo.quicksum(m.F[a] for a in incoming))
    for i, l in enumerate(topo.links):
        if l.src == l.dst:
            continue
        cap = math.floor(t.window_cap[i])
        kappa = t.kappa[i]
        for k in range(horizon):
            window = [j for kk in range(k - kappa + 1, k + 1) for j in per_link.get((i, kk), ())]
            if len(window) > cap:
                m.cap.add(pyo.quicksum(m.F[j] for j in window) <= cap)
    for s, c, d in demand.wants:
        m.demand.add(m.B[b_index[(s, c, d, horizon)]] == 1)
    reward = [0.0] * (horizon + 2)    # reward[a]: for holding from the start of epoch a on, Σ_{k=a-1}^{K-1} 1/(k+1)
    for a in range(horizon, 0, -1):
        reward[a] = reward[a + 1] + 1.0 / a
    m.obj = pyo.Objective(expr=pyo.quicksum(reward[k + lag[i]] * m.F[j] for j, (s, c, i, k) in enumerate(keys)
                                            if topo.links[i].dst in _dests(demand, s, c)),
                          sense=pyo.maximize)
    return FlowModel(m, keys, horizon, lag)


def _dests(demand: Demand, s: int, c: int) -> tuple:
    return demand.commodities[(s, c)]


def chosen_flows(fm: FlowModel) -> list[tuple[int, int, int, int]]:
    """The (σ, c, link, k) with F = 1 in the loaded solution."""
    import pyomo.environ as pyo

    return [fm.keys[j] for j in fm.model.F if (pyo.value(fm.model.F[j], exception=False) or 0) > 0.5]
