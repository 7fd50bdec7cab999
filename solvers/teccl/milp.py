"""The TE-CCL general MILP with copy (paper section 3 and Appendix A/F; digest 2.2), as arrays for
highspy (``linear.Linear``).

Per commodity (σ, c) — chunk c of source σ — and time-expanded link (e, k):

    F[σ,c,e,k] ∈ {0, 1}      the chunk is sent on link e in epoch k, arriving at the start of epoch k + L_e
    B[σ,c,n,k] ∈ [0, 1]      compute node n ≠ σ holds the chunk at the start of epoch k (a sum of binaries)

    buffer     B[n,k] = B[n,k-1] + Σ_{e=(j,n)} F[e, k - L_e]       (store and forward; B[n,0] = 0, σ always holds)
    copy       F[(n,j),k] <= B[n,k] for every out-link of a compute node n ≠ σ (per link: multicast, not a sum)
    switch     no buffer; with copy F[(w,j),k] <= A_w(k), without Σ_j F[(w,j),k] = A_w(k),
               A_w(k) = Σ_{e=(i,w)} F[e, k - L_e] the arrivals at the start of epoch k
    capacity   Σ_{σ,c} Σ_{k'=k-κ_e+1..k} F[σ,c,e,k'] <= ⌊κ_e τ / t_e⌋       (sliding window, Appendix F)
    demand     B[d,K] = 1 for every destination d of (σ, c)

    entry      B[d,a] <= Σ_{e into S} Σ_{k + L_e + dist(head_e, d) <= a} F[e,k]   for d in a box S ∌ σ
               (``add_entry_cuts``: valid, and what makes the LP relaxation tight on NDv2 x 2)

    maximise   Σ_k Σ_{demands} ℛ_k / (k + 1),   ℛ_k = B[d, k + 1]          (the paper's early-delivery objective)

B <= 1 with the equality means a node never receives a chunk twice. Variables that cannot matter are never made:
no link into σ, no send before the sender could hold the chunk (lag distance from σ), none that arrives too late
for any destination to be served by epoch K (lag distance to the nearest destination).
"""
from __future__ import annotations

import math
from collections import Counter
from dataclasses import dataclass, field

import numpy as np

from topologies.model import Topology

from .instance import Demand, Timing, boxes, lag_distances
from .linear import Linear

MAX_BINARIES = 200_000
INF = float("inf")


@dataclass
class FlowModel:
    """A built model with the index of its flow variables: ``keys[i] = (σ, c, link, k)`` for ``model.F[i]``."""

    model: object
    keys: list
    horizon: int
    lag: tuple
    extra: dict = field(default_factory=dict)


@dataclass
class Start:
    """Where the chunks are when a model starts (the A* rounds' carry-over; digest 5.3). ``holders[(σ, c)]``:
    compute nodes holding the chunk at epoch 0 (default {σ}); ``pending[(σ, c, n)]``: the epoch at whose start a
    chunk still in flight lands at n; ``wants``: the demands still open (default all); ``send_until``: no send
    starts at or after this epoch (the round's end; arrivals may land later, in the look-ahead)."""

    holders: dict = field(default_factory=dict)
    pending: dict = field(default_factory=dict)
    wants: tuple | None = None
    send_until: int | None = None


def early_reward(horizon: int) -> list[float]:
    """reward[a] for a chunk delivered by the start of epoch a: Σ_{k=a-1}^{K-1} 1/(k+1), the paper's Σ_k ℛ_k/(k+1)
    with ℛ cumulative (index horizon + 1 is 0: too late)."""
    reward = [0.0] * (horizon + 2)
    for a in range(horizon, 0, -1):
        reward[a] = reward[a + 1] + 1.0 / a
    return reward


def milp_size(topo: Topology, demand: Demand, t: Timing, horizon: int, start: Start | None = None) -> int:
    """The number of flow binaries the model would have (without building it)."""
    return len(_flow_keys(topo, demand, t, horizon, start or Start()))


def _open(demand: Demand, start: Start) -> dict[tuple[int, int], tuple[int, ...]]:
    """(σ, c) -> the destinations still waiting for it."""
    if start.wants is None:
        return demand.commodities
    out: dict = {}
    for s, c, d in start.wants:
        out.setdefault((s, c), []).append(d)
    return {k: tuple(v) for k, v in out.items()}


def _flow_keys(topo: Topology, demand: Demand, t: Timing, horizon: int, start: Start) -> list:
    dist = lag_distances(topo, t.lag)
    lag = t.lag
    last_send = horizon - 1 if start.send_until is None else min(horizon, start.send_until) - 1
    keys = []
    links = [(i, l) for i, l in enumerate(topo.links) if l.src != l.dst]
    for (s, c), dests in _open(demand, start).items():
        near = dist[:, list(dests)].min(axis=1)          # lag from each node to the nearest destination
        have = start.holders.get((s, c), {s})
        reach = dist[sorted(have), :].min(axis=0)         # lag from the nearest holder
        for (s2, c2, n), a in start.pending.items():
            if (s2, c2) == (s, c):
                reach = np.minimum(reach, a + dist[n, :])
        for i, l in links:
            if l.dst in have:
                continue
            first = reach[l.src]
            last = min(last_send, horizon - lag[i] - near[l.dst]) if start.wants is None else \
                min(last_send, horizon - lag[i])
            if not math.isfinite(first) or not math.isfinite(last):
                continue
            keys.extend((s, c, i, k) for k in range(int(first), int(last) + 1))
    return keys


def build_milp(topo: Topology, demand: Demand, t: Timing, horizon: int, switch_copy: bool = False,
               start: Start | None = None, progress_weight: float = 0.0, cuts: bool = True,
               switch_buffer: int | None = 0, capacity: list | None = None) -> FlowModel:
    """The MILP of the module docstring over epochs 0 .. horizon - 1 (B read at the start of epoch ``horizon``).
    With a ``start`` (an A* round) the demands are not forced: the objective pays for each open demand met,
    early, and ``progress_weight`` / (1 + lag distance) for each chunk that lands at a node on its way to an open
    destination (Appendix D's distance objective in a form that needs no extra variables). ``cuts``: add the
    entry cuts of the boxes (not in A* rounds, whose chunks may already be inside a box). ``switch_buffer``: the
    chunks a switch may keep from one epoch to the next (Appendix B's limit at switches, ``switches``): 0, the
    section 3 switch of the module docstring; None, unlimited. ``capacity``: for every link e, {link f: weight}
    whose flows load e (``orbits``: the representatives' flows on g⁻¹(e) for every symmetry g); default {e: 1}."""
    start = start or Start()
    forced = start.wants is None
    lag = t.lag
    keys = _flow_keys(topo, demand, t, horizon, start)
    opened = _open(demand, start)
    m = Linear(maximize=True)
    m.add_vars(len(keys), integer=True)
    arrive: dict = {}                 # (σ, c, node, epoch of arrival) -> [var index]
    send: dict = {}                   # (σ, c, node, k) -> [var index]
    per_link: dict = {}               # (link, k) -> [var index]
    for idx, (s, c, i, k) in enumerate(keys):
        l = topo.links[i]
        arrive.setdefault((s, c, l.dst, k + lag[i]), []).append(idx)
        send.setdefault((s, c, l.src, k), []).append(idx)
        per_link.setdefault((i, k), []).append(idx)

    compute = set(topo.compute_nodes)
    b_index: dict = {}
    for (s, c) in opened:
        have = start.holders.get((s, c), {s})
        for n in sorted(compute - set(have)):
            for k in range(horizon + 1):
                b_index[(s, c, n, k)] = len(keys) + len(b_index)
    m.add_vars(len(b_index))
    for (s, c, n, k), bi in b_index.items():
        incoming = arrive.get((s, c, n, k), ())
        landing = 1 if start.pending.get((s, c, n)) == k else 0
        if k == 0:
            m.add_row([bi], [1.0], landing, landing)
        else:
            m.add_row([bi, b_index[(s, c, n, k - 1)], *incoming], [1.0, -1.0] + [-1.0] * len(incoming),
                      landing, landing)
    for (s, c, n, k), idxs in send.items():
        if n in start.holders.get((s, c), {s}):
            continue
        if n in compute:
            for j in idxs:
                m.add_row([j, b_index[(s, c, n, k)]], [1.0, -1.0], -INF, 0.0)
        elif switch_copy and switch_buffer == 0:
            incoming = arrive.get((s, c, n, k), ())
            for j in idxs:
                m.add_row([j, *incoming], [1.0] + [-1.0] * len(incoming), -INF, 0.0)
    held = {}
    if switch_buffer != 0:
        from .switches import add_switch_buffers

        held = add_switch_buffers(m, topo, opened, horizon, send, arrive, switch_copy, switch_buffer)
    elif not switch_copy:
        for w in topo.switch_nodes:
            for (s, c) in opened:
                for k in range(horizon + 1):
                    out = send.get((s, c, w, k), ())
                    incoming = arrive.get((s, c, w, k), ())
                    if out or incoming:
                        m.add_row([*out, *incoming], [1.0] * len(out) + [-1.0] * len(incoming), 0.0, 0.0)
    seen_rows: set = set()
    for i, l in enumerate(topo.links):
        if l.src == l.dst:
            continue
        cap = math.floor(t.window_cap[i])
        kappa = t.kappa[i]
        loads = capacity[i] if capacity is not None else {i: 1}
        for k in range(horizon):
            window = Counter({j: n for e, n in loads.items() for kk in range(k - kappa + 1, k + 1)
                              for j in per_link.get((e, kk), ())})
            if sum(window.values()) > cap:
                row = (tuple(sorted(window.items())), cap)
                if row not in seen_rows:
                    seen_rows.add(row)
                    m.add_row([j for j, _ in row[0]], [float(n) for _, n in row[0]], -INF, cap)
    if forced:
        for s, c, d in demand.wants:
            m.add_row([b_index[(s, c, d, horizon)]], [1.0], 1.0, 1.0)
    reward = early_reward(horizon)
    dist = lag_distances(topo, lag) if progress_weight else None
    for j, (s, c, i, k) in enumerate(keys):
        dst = topo.links[i].dst
        dests = opened[(s, c)]
        if dst in dests:
            m.cost[j] = reward[min(k + lag[i], horizon + 1)]
        elif progress_weight and dst in compute:
            m.cost[j] = progress_weight / (1.0 + float(dist[dst, list(dests)].min()))
    fresh = forced and not start.holders and not start.pending
    added = add_entry_cuts(m, topo, t, keys, b_index, boxes(topo)) if cuts and fresh else 0
    return FlowModel(m, keys, horizon, lag, {"b_index": b_index, "entry_cuts": added, "held": held,
                                               "dst": [l.dst for l in topo.links]})


def start_vector(fm: FlowModel, flows) -> np.ndarray | None:
    """The model's variables for a schedule given as flows (σ, c, link, k) (a greedy one, a smaller K's), to hand
    HiGHS as its first incumbent: F = 1 on the flows, B[σ,c,n,k] = 1 from the epoch the chunk lands at n. None
    when a flow has no variable in this model (it cannot matter by its horizon)."""
    where = {key: j for j, key in enumerate(fm.keys)}
    x = np.zeros(fm.model.nvariables())
    landed: dict = {}
    for f in flows:
        j = where.get(tuple(f))
        if j is None:
            return None
        x[j] = 1.0
        s, c, i, k = f
        key = (s, c, fm.extra["dst"][i])
        landed[key] = min(landed.get(key, k + fm.lag[i]), k + fm.lag[i])
    for (s, c, n, k), bi in fm.extra["b_index"].items():
        a = landed.get((s, c, n))
        x[bi] = 1.0 if a is not None and a <= k else 0.0
    return x


def chosen_flows(fm: FlowModel) -> list[tuple[int, int, int, int]]:
    """The (σ, c, link, k) with F = 1 in the loaded solution."""
    values = fm.model.values
    return [] if values is None else [fm.keys[j] for j in np.flatnonzero(values[:len(fm.keys)] > 0.5)]


def add_entry_cuts(m: Linear, topo: Topology, t: Timing, keys: list, b_index: dict, sets: list) -> int:
    """Valid inequalities for boxes S (``instance.boxes``): node d ∈ S holds chunk x (σ ∉ S) at the start of
    epoch a only if x entered S on a cut link e in an epoch k with k + L_e + dist(head_e, d) <= a:

        B[x, d, a] <= Σ_{e into S} Σ_{k <= a - L_e - dist(head_e, d)} F[x, e, k]

    The buffer rows imply this for S = {d}; for a box they do not, because the LP relaxation can add up fractions
    of the same chunk arriving on several links (the paper's Figure 4) and so deliver more than ever crossed the
    cut. Returns the number of rows added."""
    dist = lag_distances(topo, t.lag)
    lag = t.lag
    entering: dict = {}               # (σ, c, box) -> [(epoch of arrival, head, var index)]
    where = {v: b for b, box in enumerate(sets) for v in box}
    for j, (s, c, i, k) in enumerate(keys):
        l = topo.links[i]
        b = where.get(l.dst)
        if b is not None and where.get(l.src) != b:
            entering.setdefault((s, c, b), []).append((k + lag[i], l.dst, j))
    added = 0
    for (s, c, n, a), bi in b_index.items():
        b = where.get(n)
        if b is None or s in sets[b] or a == 0:
            continue
        ins = entering.get((s, c, b), [])
        useful = [j for arrival, head, j in ins if arrival + dist[head, n] <= a]
        m.add_row([bi, *useful], [1.0] + [-1.0] * len(useful), -INF, 0.0)
        added += 1
    return added

