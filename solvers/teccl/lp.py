"""The TE-CCL linear program for demands that copy cannot help (all-to-all, demand matrices; paper section 4.1,
Appendix A; digest 4.3), as arrays for highspy (``linear.Linear``), and its decomposition into pieces of chunks.

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

from fractions import Fraction

import numpy as np

from topologies.model import Topology

from ..core.schedule import Schedule, Transfer
from .instance import Demand, Timing, lag_distances
from .lower import make_schedule
from .linear import Linear
from .milp import INF, FlowModel, early_reward

EPSILON = 1e-4
TOLERANCE = 1e-7


def lp_size(topo: Topology, demand: Demand, t: Timing, horizon: int) -> int:
    return len(_keys(topo, demand, t, horizon))


def _keys(topo: Topology, demand: Demand, t: Timing, horizon: int) -> np.ndarray:
    """The flow variables as rows (s, link, k), int64: per source, every link not into s, in the epochs from the
    source's lag distance to the link's tail up to the last one from which the head can still reach the nearest
    destination of s by ``horizon``."""
    dist = lag_distances(topo, t.lag)
    lag = np.asarray(t.lag, dtype=np.int64)
    src, dst = topo.link_ends
    real = np.flatnonzero(src != dst)
    dests: dict[int, list[int]] = {}
    for (s, d) in demand.per_pair():
        dests.setdefault(s, []).append(d)
    parts = []
    for s, ds in sorted(dests.items()):
        near = dist[:, ds].min(axis=1)
        links = real[dst[real] != s]
        first, last = dist[s, src[links]], horizon - lag[links] - near[dst[links]]
        ok = np.isfinite(first) & np.isfinite(last)
        links, first, last = links[ok], first[ok].astype(np.int64), last[ok].astype(np.int64)
        count = np.maximum(0, last - first + 1)
        i = np.repeat(links, count)
        k = np.repeat(first - np.cumsum(count) + count, count) + np.arange(int(count.sum()))
        parts.append(np.stack([np.full(len(i), s, dtype=np.int64), i, k], axis=1))
    return np.concatenate(parts) if parts else np.zeros((0, 3), dtype=np.int64)


def build_lp(topo: Topology, demand: Demand, t: Timing, horizon: int) -> FlowModel:
    """The LP of the module docstring as arrays (``linear.Linear``): variables F (``keys``), then S per (source,
    compute node, epoch 0 .. horizon), then R per (source, destination) pair and epoch 1 .. horizon."""
    H = horizon
    lag = np.asarray(t.lag, dtype=np.int64)
    src, dst = topo.link_ends
    keys = _keys(topo, demand, t, H)
    ks, ki, kk = keys[:, 0], keys[:, 1], keys[:, 2]
    nf = len(keys)
    pairs = demand.per_pair()
    sources = sorted({s for s, _ in pairs})
    s_pos = np.full(len(topo.names), -1, dtype=np.int64)
    s_pos[sources] = np.arange(len(sources))
    compute = list(topo.compute_nodes)
    c_pos = np.full(len(topo.names), -1, dtype=np.int64)
    c_pos[compute] = np.arange(len(compute))
    switches = list(topo.switch_nodes)
    w_pos = np.full(len(topo.names), -1, dtype=np.int64)
    w_pos[switches] = np.arange(len(switches))
    nc, nw, ns = len(compute), len(switches), len(sources)
    pair_list = sorted(pairs)
    np_ = len(pair_list)
    s_base, r_base = nf, nf + ns * nc * (H + 1)
    m = Linear(maximize=True)
    m.add_vars(nf + ns * nc * (H + 1) + np_ * H, upper=INF)
    f_idx = np.arange(nf)
    head, tail = dst[ki], src[ki]
    arrival = kk + lag[ki]

    # stock rows, one per (source, compute node, epoch): S[k] - S[k-1] - arrivals + sends + reads = start stock
    n_stock = ns * nc * (H + 1)
    s_grid = np.arange(n_stock)
    rows = [s_grid, s_grid[np.arange(n_stock) % (H + 1) > 0]]
    cols = [s_base + s_grid, s_base + rows[1] - 1]
    vals = [np.ones(n_stock), -np.ones(len(rows[1]))]
    into = c_pos[head] >= 0
    rows.append((s_pos[ks[into]] * nc + c_pos[head[into]]) * (H + 1) + arrival[into])
    cols.append(f_idx[into])
    vals.append(-np.ones(int(into.sum())))
    out = c_pos[tail] >= 0
    rows.append((s_pos[ks[out]] * nc + c_pos[tail[out]]) * (H + 1) + kk[out])
    cols.append(f_idx[out])
    vals.append(np.ones(int(out.sum())))
    p_s = np.asarray([s for s, _ in pair_list], dtype=np.int64)
    p_d = np.asarray([d for _, d in pair_list], dtype=np.int64)
    r_p = np.repeat(np.arange(np_), H)
    r_k = np.tile(np.arange(1, H + 1), np_)
    rows.append((s_pos[p_s[r_p]] * nc + c_pos[p_d[r_p]]) * (H + 1) + r_k)
    cols.append(r_base + r_p * H + r_k - 1)
    vals.append(np.ones(len(r_p)))
    rhs = np.zeros(n_stock)
    total = {s: sum(x for (a, _), x in pairs.items() if a == s) for s in sources}
    for s in sources:
        rhs[(s_pos[s] * nc + c_pos[s]) * (H + 1)] = total[s]
    m.add_rows(np.concatenate(rows), np.concatenate(cols), np.concatenate(vals), rhs, rhs)

    # switch rows, one per (source, switch, epoch) that some flow touches: sends - arrivals = 0
    if nw:
        win, wout = w_pos[head] >= 0, w_pos[tail] >= 0
        row = np.concatenate([(s_pos[ks[wout]] * nw + w_pos[tail[wout]]) * (H + 1) + kk[wout],
                              (s_pos[ks[win]] * nw + w_pos[head[win]]) * (H + 1) + arrival[win]])
        col = np.concatenate([f_idx[wout], f_idx[win]])
        val = np.concatenate([np.ones(int(wout.sum())), -np.ones(int(win.sum()))])
        used, row = np.unique(row, return_inverse=True)
        m.add_rows(row, col, val, np.zeros(len(used)), np.zeros(len(used)))

    # capacity rows, one per (link, epoch) whose window holds a flow: Σ over the last κ epochs <= κ τ / t
    kappa = np.asarray(t.kappa, dtype=np.int64)
    reps = kappa[ki]
    off = np.arange(int(reps.sum())) - np.repeat(np.cumsum(reps) - reps, reps)
    c_link, c_k, c_col = np.repeat(ki, reps), np.repeat(kk, reps) + off, np.repeat(f_idx, reps)
    keep = c_k < H
    c_link, c_k, c_col = c_link[keep], c_k[keep], c_col[keep]
    used, row = np.unique(c_link * (H + 1) + c_k, return_inverse=True)
    cap = np.asarray([float(c) for c in t.window_cap])[used // (H + 1)]
    m.add_rows(row, c_col, 1.0, np.full(len(used), -INF), cap)

    # demand rows: Σ_k R[s,d,k] = chunks d wants from s
    want = np.asarray([pairs[p] for p in pair_list], dtype=float)
    m.add_rows(r_p, r_base + r_p * H + r_k - 1, 1.0, want, want)

    reward = np.asarray(early_reward(H), dtype=float)
    cost = np.empty(m.nvariables())
    cost[:nf] = -EPSILON
    cost[nf:r_base] = 0.0
    cost[r_base:] = reward[r_k]
    m.cost = cost.tolist()
    return FlowModel(m, keys, H, t.lag, {"sources": sources, "compute": compute, "pairs": pair_list,
                                         "s_base": s_base, "r_base": r_base})


def fluid_values(fm: FlowModel) -> tuple[dict, dict, dict]:
    """(F, S, R) of the loaded solution as dicts keyed (s, link, k), (s, node, k) and (s, d, k), zeros
    dropped."""
    v = fm.model.values
    H = fm.horizon
    keys = fm.keys
    nf = len(keys)
    sources, compute, pairs = fm.extra["sources"], fm.extra["compute"], fm.extra["pairs"]
    s_base, r_base = fm.extra["s_base"], fm.extra["r_base"]
    flows = {tuple(int(x) for x in keys[j]): float(v[j]) for j in np.flatnonzero(v[:nf] > TOLERANCE)}
    stock = {}
    nc = len(compute)
    for j in np.flatnonzero(v[s_base:r_base] > TOLERANCE):
        a, k = divmod(int(j), H + 1)
        si, ci = divmod(a, nc)
        stock[(sources[si], compute[ci], k)] = float(v[s_base + j])
    reads = {}
    for j in np.flatnonzero(v[r_base:] > TOLERANCE):
        p, k = divmod(int(j), H)
        s, d = pairs[p]
        reads[(s, d, k + 1)] = float(v[r_base + j])
    return flows, stock, reads


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
