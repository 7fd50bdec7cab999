"""TE-CCL's switch models beyond the buffer-less switch of section 3 (paper Appendices B and C; digest 2.4, 2.5).

The MILP's default switch (``milp``) holds nothing: what arrives at the start of epoch k leaves in epoch k, copied
onto several links (SHARP, ``switch_copy``) or not (legacy: out = in). Two more models:

**Switch buffers (Appendix B's limit 𝓛 applied at switches).** Per commodity (σ, c) and switch w, H[k] ∈ [0, 1]
says the chunk is kept over from epoch k - 1 into epoch k (H[0] = 0); A[k] is what lands at the start of epoch k:

    copy      F[(w,j),k] <= H[k] + A[k]  for every out-link,   H[k+1] <= H[k] + A[k]
    no copy   H[k+1] + Σ_j F[(w,j),k] <= H[k] + A[k]
    limit     Σ_{σ,c} H[k] <= 𝓛  for every epoch k  (no row when the buffer is unlimited)

The slack of the "<=" rows is Appendix B's eviction X >= 0, which it leaves unbounded ("re-buffer a chunk ... and
again remove it later"). 𝓛 = 0 is the buffer-less switch (``build_milp`` keeps its own rows for it); 𝓛 = ∞ is a
store-and-forward switch like a GPU. The feasible sets nest, so the epochs needed and the objective at a given K
order as: no buffer >= limited >= unlimited (epochs), no buffer <= limited <= unlimited (objective). The buffer
counts what stays at the switch past its arrival epoch, so a chunk forwarded as it lands uses none.

**Hyper-edges (Appendix C, Table 5).** A legacy switch s is removed and every pair of compute nodes (i, j) with
(i, s), (s, j) ∈ E and (i, j) ∉ E gets a direct hyper-edge (Ω(s)); per epoch k

    Σ_{h ∈ Ω(s)} U[h,k] <= min(#out-links of s, #in-links of s)     hyper-edges of s in use
    Σ_{h ∈ Ω(s) out of i} U[h,k] <= 1,   Σ_{h ∈ Ω(s) into j} U[h,k] <= 1    one per node and direction

with U[h,k] ∈ {0,1} "hyper-edge h carries chunks in epoch k" (Σ_{σ,c} F[h,k] <= cap_h U[h,k]); with a link that
carries one chunk per epoch this is the paper's Σ F <= 1 verbatim. The paper leaves a hyper-edge's capacity and
latency open: here h = (i,s)(s,j) takes both hops' lags (L_is + L_sj, as the node models pay), the slower
link's rate, and the physical links' sliding-window capacities hold for all hyper-edges over them (the receive
side counted in the epoch the chunk leaves s, k + L_is). A hyper-edge lowers to its two physical sends. Only
switches joined to compute nodes alone can be replaced; the LP needs no hyper-edges (it never copies, App. C).
"""
from __future__ import annotations

import math
from dataclasses import dataclass
from fractions import Fraction

from topologies.model import Link, Topology

from ..core.errors import NotApplicable
from ..core.schedule import Transfer
from .instance import Demand, Timing
from .linear import Linear
from .lower import make_schedule

INF = float("inf")
SWITCH_MODELS = ("node", "hyperedge")


def buffer_limit(value) -> int | None:
    """A switch buffer option as the model takes it: "none" -> 0, "unlimited" -> None, or chunks (an int >= 0)."""
    if value in (None, "unlimited"):
        return None
    if value == "none":
        return 0
    if isinstance(value, str):
        try:
            value = int(value)
        except ValueError:
            raise NotApplicable(f"the switch buffer is none, unlimited or a number of chunks, not {value!r}") \
                from None
    if isinstance(value, bool) or not isinstance(value, int) or value < 0:
        raise NotApplicable(f"the switch buffer must be a whole number of chunks >= 0, got {value!r}")
    return value


def add_switch_buffers(m: Linear, topo: Topology, opened, horizon: int, send: dict, arrive: dict,
                       switch_copy: bool, limit: int | None) -> dict:
    """The buffered-switch rows of the module docstring; returns {(σ, c, w, k): column of H}."""
    held: dict = {}
    for w in topo.switch_nodes:
        for (s, c) in opened:
            for k in range(1, horizon + 1):
                held[(s, c, w, k)] = m.nvariables() + len(held)
    m.add_vars(len(held))
    for w in topo.switch_nodes:
        for (s, c) in opened:
            for k in range(horizon + 1):
                out = send.get((s, c, w, k), ())
                incoming = list(arrive.get((s, c, w, k), ()))
                have = [held[(s, c, w, k)]] if k else []
                nxt = [held[(s, c, w, k + 1)]] if k < horizon else []
                if switch_copy:
                    for j in out:
                        m.add_row([j, *have, *incoming], [1.0] + [-1.0] * (len(have) + len(incoming)), -INF, 0.0)
                    if nxt:
                        m.add_row([*nxt, *have, *incoming], [1.0] + [-1.0] * (len(have) + len(incoming)),
                                  -INF, 0.0)
                elif out or nxt:
                    m.add_row([*nxt, *out, *have, *incoming],
                              [1.0] * (len(nxt) + len(out)) + [-1.0] * (len(have) + len(incoming)), -INF, 0.0)
    if limit is not None:
        for w in topo.switch_nodes:
            for k in range(1, horizon + 1):
                cols = [held[(s, c, w, k)] for (s, c) in opened]
                if len(cols) > limit:
                    m.add_row(cols, [1.0] * len(cols), -INF, float(limit))
    return held


def switch_occupancy(fm, topo: Topology) -> dict[int, int]:
    """The most chunks any switch keeps over from one epoch to the next in the loaded solution (its H)."""
    held = fm.extra.get("held") or {}
    v = fm.model.values
    most: dict = {}
    per: dict = {}
    for (s, c, w, k), j in held.items():
        if v is not None and v[j] > 0.5:
            per[(w, k)] = per.get((w, k), 0) + 1
    for (w, _), n in per.items():
        most[w] = max(most.get(w, 0), n)
    return most


@dataclass
class HyperEdges:
    """The fabric with its switches replaced by hyper-edges (module docstring): ``topo`` has the same nodes (the
    switches left without links) and ``timing`` its per-link lags; ``via[i]`` is (switch, up-link, down-link) of
    hyper-edge i in ``topo``'s links, or None for a link of the fabric (``origin[i]`` its index there)."""

    fabric: Topology
    topo: Topology
    timing: Timing
    via: list
    origin: list
    fabric_lag: tuple              # the fabric's own lags and capacities, for the physical rows and the lowering
    fabric_kappa: tuple
    fabric_cap: tuple

    @classmethod
    def of(cls, fabric: Topology, t: Timing) -> "HyperEdges":
        names = fabric.names
        for w in fabric.switch_nodes:
            for l in fabric.links:
                other = l.dst if l.src == w else l.src if l.dst == w else None
                if other is not None and other != w and not fabric.is_compute(other):
                    raise NotApplicable(f"the hyper-edge model (TE-CCL App. C) replaces switches joined to compute "
                                        f"nodes only; {names[w]} links to switch {names[other]}")
        direct = {(l.src, l.dst) for l in fabric.links if fabric.is_compute(l.src) and fabric.is_compute(l.dst)}
        links, via, origin = [], [], []
        kappa, delay, cap = [], [], []
        for i, l in enumerate(fabric.links):
            if fabric.is_compute(l.src) and fabric.is_compute(l.dst):
                links.append(l)
                via.append(None)
                origin.append(i)
                kappa.append(t.kappa[i])
                delay.append(t.delay[i])
                cap.append(t.window_cap[i])
        lag = t.lag
        for w in fabric.switch_nodes:
            ins = [i for i, l in enumerate(fabric.links) if l.dst == w and l.src != w]
            outs = [i for i, l in enumerate(fabric.links) if l.src == w and l.dst != w]
            for a in ins:
                for b in outs:
                    i, j = fabric.links[a].src, fabric.links[b].dst
                    if i == j or (i, j) in direct:
                        continue
                    la, lb = fabric.links[a], fabric.links[b]
                    links.append(Link(i, j, min(la.bandwidth, lb.bandwidth), la.alpha + lb.alpha))
                    via.append((w, a, b))
                    origin.append(None)
                    k = max(t.kappa[a], t.kappa[b])
                    kappa.append(k)
                    delay.append(lag[a] + lag[b] - k)
                    cap.append(k * min(t.window_cap[a] / t.kappa[a], t.window_cap[b] / t.kappa[b]))
        topo = Topology(fabric.names, fabric.kinds, tuple(links), name=f"{fabric.name} (hyper-edges)",
                        expr=fabric.expr)
        return cls(fabric, topo, Timing(t.tau_us, t.chunk_bytes, tuple(kappa), tuple(delay), tuple(cap)), via,
                   origin, t.lag, t.kappa, t.window_cap)

    def add_rows(self, fm) -> int:
        """Appendix C's rows and the physical links' capacities on the model built over ``topo``; returns the
        number of use binaries U added."""
        m: Linear = fm.model
        per: dict = {}                       # (hyper-edge, k) -> flow columns
        for idx, (_, _, i, k) in enumerate(fm.keys):
            if self.via[i] is not None:
                per.setdefault((i, k), []).append(idx)
        use = m.add_vars(len(per), integer=True)
        sends: dict = {}                     # (switch, node, k) -> U columns, one side each
        takes: dict = {}
        total: dict = {}
        physical: dict = {}                  # (fabric link, epoch it is used) -> flow columns
        lag = self.fabric_lag
        for u, ((i, k), cols) in zip(use, per.items()):
            w, a, b = self.via[i]
            m.add_row([*cols, u], [1.0] * len(cols) + [-float(math.floor(self.timing.window_cap[i]))], -INF, 0.0)
            sends.setdefault((w, self.topo.links[i].src, k), []).append(u)
            takes.setdefault((w, self.topo.links[i].dst, k + lag[a]), []).append(u)
            total.setdefault((w, k), []).append(u)
            physical.setdefault((a, k), []).extend(cols)
            physical.setdefault((b, k + lag[a]), []).extend(cols)
        for group in (sends, takes):
            for cols in group.values():
                if len(cols) > 1:
                    m.add_row(cols, [1.0] * len(cols), -INF, 1.0)
        bound = {w: min(sum(1 for l in self.fabric.links if l.src == w), sum(1 for l in self.fabric.links
                                                                              if l.dst == w))
                 for w in self.fabric.switch_nodes}
        for (w, _), cols in total.items():
            if len(cols) > bound[w]:
                m.add_row(cols, [1.0] * len(cols), -INF, float(bound[w]))
        by_link: dict = {}
        for (p, e), cols in physical.items():
            by_link.setdefault(p, {})[e] = cols
        for p, epochs in by_link.items():
            kap, cap = self.fabric_kappa[p], math.floor(self.fabric_cap[p])
            for e in epochs:
                window = [j for ee in range(e - kap + 1, e + 1) for j in epochs.get(ee, ())]
                if len(window) > cap:
                    m.add_row(window, [1.0] * len(window), -INF, float(cap))
        return len(per)

    def lower(self, demand: Demand, kept, algo: str = "teccl", notes: dict | None = None):
        """The schedule on the fabric: a link's flow as it is, a hyper-edge's as its up- and down-link sends."""
        C = demand.chunks
        lag_h, lag = self.timing.lag, self.fabric_lag
        transfers = []
        for (s, c, i, k), times in kept:
            lo, hi = Fraction(c, C), Fraction(c + 1, C)
            if self.via[i] is None:
                transfers.extend([Transfer(s, lo, hi, self.origin[i], k + lag_h[i])] * times)
            else:
                _, a, b = self.via[i]
                transfers.append(Transfer(s, lo, hi, a, k + lag[a]))
                transfers.append(Transfer(s, lo, hi, b, k + lag[a] + lag[b]))
        return make_schedule(demand, transfers, algo, notes)


def switch_notes(topo: Topology, method: str, copy_demand: bool, switch_copy: bool, limit: int | None,
                 model: str) -> list[str]:
    """One line on the copy and switch model a result was solved with (none for the defaults)."""
    notes = []
    if method == "lp" and copy_demand:
        notes.append("no copy (TE-CCL Fig. 9): the LP routes each destination's copy as a commodity of its own")
    if not topo.switch_nodes or method == "lp":
        return notes
    if model == "hyperedge":
        notes.append("switches as hyper-edges (TE-CCL App. C): one hyper-edge per node and direction per epoch")
    elif limit != 0:
        size = "unlimited buffers" if limit is None else f"buffers of {limit} chunk(s)"
        notes.append(f"switches with {size} (TE-CCL App. B's limit at switches), "
                     f"{'copying' if switch_copy else 'not copying'}")
    return notes
