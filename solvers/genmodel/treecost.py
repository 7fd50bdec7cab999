"""GenModel on a switch tree: the time of a plan given as communication steps between servers.

The paper prices plans on one switch (Table 2) and leaves the tree-level cost that GenTree and the simulated
baselines need unspecified (digest §2.5, pitfalls P8, P9). This module is that cost, defined as follows [I].

A step is a traffic matrix T (T[i, j] floats from server i to server j, sent at once) plus, per server, the floats
it adds (gamma) and the floats its reductions read and write (delta). Its time is the three parts of Fig. 2 in
sequence (pitfall P13):

    latency + max over directed links l of load_l·(beta_l + max(w_l - w_t,l, 0)·epsilon_l)
            + max over servers i of (adds_i·gamma + memory_i·delta)

* A link l is the cable between a node and its parent, one per direction; its beta, epsilon, w_t and alpha are
  those of the parent switch's tier. ``load_l`` is the floats crossing it; ``w_l`` is the number of distinct
  servers whose flows cross it (plus one with ``fan_in="group"``: the receiving side counts as a member of the
  group, as in Eq. 8). On one switch this is exactly the receiver incast of Table 2; on a tree it also charges the
  fan-in at a switch's uplink port (the beta' = beta + max(w - w_t, 0)·epsilon reading of Eqs. 9-10).
* latency: with a numeric ``alpha_steps`` mu, mu times the largest tier alpha on any flow's path; with ``"path"``
  the largest sum along a path of the sending server's alpha and each link's alpha (a join's cable is counted
  once), i.e. one alpha per node passed: 3 inside a switch, 5 through a root, as the Table 7 intercepts show.
* The reduction of a block with c partial copies adds (c-1) blocks and reads c and writes 1: (c+1) blocks of
  memory traffic (§3.1).

On one switch the costs of Ring, CPS and HCPS built by ``group_steps`` equal the Table 2 formulas of ``plans``
(RHD too when N is a power of two). An AllGather step is the reverse of its ReduceScatter step without compute.
"""
from __future__ import annotations

import math
from dataclasses import dataclass

import numpy as np

from .params import ModelOptions
from .plans import TERMS, ordered_factorizations
from .tree import Node, SwitchTree

TINY = 1e-300


@dataclass
class Step:
    """One communication step on the servers of a subtree (local indices): traffic, per-server adds and memory
    floats, and how many identical steps it stands for."""

    traffic: np.ndarray
    adds: np.ndarray | None = None
    memory: np.ndarray | None = None
    count: int = 1


@dataclass
class TreeCost:
    """Seconds per GenModel term and the number of steps."""

    alpha: float = 0.0
    beta: float = 0.0
    gamma: float = 0.0
    delta: float = 0.0
    epsilon: float = 0.0
    steps: int = 0

    @property
    def total(self) -> float:
        return self.alpha + self.beta + self.gamma + self.delta + self.epsilon

    def terms(self) -> dict[str, float]:
        return {t: getattr(self, t) for t in TERMS}

    def __add__(self, other: "TreeCost") -> "TreeCost":
        return TreeCost(*(getattr(self, t) + getattr(other, t) for t in TERMS), self.steps + other.steps)


class TreeCoster:
    """Evaluates steps on the subtrees of one tree under one ``ModelOptions`` (module docstring)."""

    def __init__(self, tree: SwitchTree, options: ModelOptions = ModelOptions()):
        self.tree, self.options = tree, options
        self.n = tree.n
        self.ranges = tree.ranges
        self.gamma = tree.server_params.gamma
        self.delta = tree.server_params.delta
        self._links: dict[str, tuple] = {}
        self.latency = self._latency_matrix()
        self._ancestors()

    def _ancestors(self) -> None:
        """``anc[i, d]``: the id of server i's ancestor at depth d (-1 past the server), and per id the
        parameters of the cable to its parent, for the sparse path of ``step_cost``."""
        t = self.tree
        ids = {v.name: k for k, v in enumerate(t.nodes)}
        depth = {t.root.name: 0}
        for v in t.nodes:
            for c in v.children:
                depth[c.name] = depth[v.name] + 1
        width = max(depth.values()) + 1
        anc = -np.ones((self.n, width), dtype=np.int64)
        for i, name in enumerate(t.server_names):
            v = name
            while v is not None:
                anc[i, depth[v]] = ids[v]
                p = t.parent[v]
                v = None if p is None else p.name
        self.anc = anc
        self.node_params = np.zeros((len(t.nodes), 3))
        for v in t.nodes:
            if t.parent[v.name] is not None:
                p = t.link_params(v)
                self.node_params[ids[v.name]] = (p.beta, p.epsilon, p.w_t)

    # ------------------------------------------------------------------------------------------- structure
    def _descendants(self, top: Node) -> list[Node]:
        out, stack = [], list(top.children)
        while stack:
            v = stack.pop()
            out.append(v)
            stack.extend(v.children)
        return out

    def links_below(self, top: Node):
        """Arrays (lo, hi, beta, epsilon, w_t) of the cables below ``top``, ranges local to ``top``'s servers."""
        if top.name not in self._links:
            base = self.ranges[top.name][0]
            rows = []
            for v in self._descendants(top):
                p = self.tree.link_params(v)
                lo, hi = self.ranges[v.name]
                rows.append((lo - base, hi - base, p.beta, p.epsilon, p.w_t))
            arr = np.array(rows, dtype=float).reshape(-1, 5)
            self._links[top.name] = (arr[:, 0].astype(int), arr[:, 1].astype(int), arr[:, 2], arr[:, 3], arr[:, 4])
        return self._links[top.name]

    def _latency_matrix(self) -> np.ndarray:
        t, n, mu = self.tree, self.n, self.options.alpha_steps
        lat = np.zeros((n, n))
        if mu == "path":
            up: dict[str, float] = {t.root.name: 0.0}
            for v in t.nodes:                         # pre-order: parents first
                for c in v.children:
                    a = t.tiers[v.tier].alpha
                    up[c.name] = up[v.name] + (a / 2 if v.join else a)
            a_srv = t.server_params.alpha
            per_server = np.array([up[name] for name in t.server_names])
            for v in t.nodes:
                if v.is_server:
                    continue
                lo, hi = self.ranges[v.name]
                s = per_server[lo:hi]
                lat[lo:hi, lo:hi] = a_srv + s[:, None] + s[None, :] - 2 * up[v.name]
            return lat
        mu = float(mu)
        worst: dict[str, np.ndarray] = {}              # worst tier alpha from each server up to the node
        for v in t.switches:                          # post-order: children first
            a = t.tiers[v.tier].alpha
            parts = [np.array([a]) if c.is_server else np.maximum(worst[c.name], a) for c in v.children]
            worst[v.name] = np.concatenate(parts)
        for v in reversed(t.switches):                # parents first, children overwrite their blocks
            lo, hi = self.ranges[v.name]
            w = worst[v.name]
            lat[lo:hi, lo:hi] = mu * np.maximum(w[:, None], w[None, :])
        return lat

    # ---------------------------------------------------------------------------------------------- costs
    def step_cost(self, top: Node, step: Step) -> TreeCost:
        """The time of ``step`` on ``top``'s servers (module docstring), times ``step.count``."""
        T = step.traffic
        m = T.shape[0]
        base = self.ranges[top.name][0]
        sent = T > TINY
        if not sent.any() and step.adds is None:
            return TreeCost()
        cost = TreeCost(steps=step.count)
        if sent.any():
            cost.alpha = float(self.latency[base:base + m, base:base + m][sent].max())
        if sent.any() and int(sent.sum()) * self.anc.shape[1] < m * len(self.links_below(top)[0]):
            b, e = self._sparse_links(T, sent, base)
            k = int(np.argmax(b + e))
            cost.beta, cost.epsilon = float(b[k]), float(e[k])
        elif sent.any():
            lo, hi, beta, eps, wt = self.links_below(top)
            cum = np.zeros((m, m + 1))
            np.cumsum(T, axis=1, out=cum[:, 1:])
            inside = cum[:, hi] - cum[:, lo]                          # (m x K): floats from row i into node k
            rows = np.arange(m)[:, None]
            member = (rows >= lo[None, :]) & (rows < hi[None, :])
            out_of = cum[:, m][:, None] - inside                     # floats from i leaving node k's range
            up_load = np.where(member, out_of, 0.0).sum(axis=0)
            up_src = (member & (out_of > TINY)).sum(axis=0)
            down_load = np.where(member, 0.0, inside).sum(axis=0)
            down_src = (~member & (inside > TINY)).sum(axis=0)
            extra = 1 if self.options.fan_in == "group" else 0
            load = np.concatenate([up_load, down_load])
            width = np.concatenate([up_src, down_src]) + extra
            b = load * np.concatenate([beta, beta])
            e = load * np.maximum(width - np.concatenate([wt, wt]), 0) * np.concatenate([eps, eps])
            if len(load):
                k = int(np.argmax(b + e))
                cost.beta, cost.epsilon = float(b[k]), float(e[k])
        if step.adds is not None:
            g = step.adds * self.gamma
            d = step.memory * self.delta
            k = int(np.argmax(g + d))
            cost.gamma, cost.delta = float(g[k]), float(d[k])
        if step.count != 1:
            for t in TERMS:
                setattr(cost, t, getattr(cost, t) * step.count)
        return cost

    def _sparse_links(self, T: np.ndarray, sent: np.ndarray, base: int):
        """(beta part, epsilon part) of every cable carrying data, from the list of flows: a flow i -> j climbs
        the cables of i's ancestors below their lowest common ancestor and descends those of j's."""
        i, j = np.nonzero(sent)
        amount = T[i, j]
        gi, gj = i + base, j + base
        nodes = len(self.node_params)
        up_load, down_load = np.zeros(nodes), np.zeros(nodes)
        up_keys, down_keys = [], []
        for d in range(1, self.anc.shape[1]):
            ai, aj = self.anc[gi, d], self.anc[gj, d]
            mu, md = (ai != aj) & (ai >= 0), (ai != aj) & (aj >= 0)
            up_load += np.bincount(ai[mu], amount[mu], minlength=nodes)
            down_load += np.bincount(aj[md], amount[md], minlength=nodes)
            up_keys.append(ai[mu] * self.n + gi[mu])
            down_keys.append(aj[md] * self.n + gi[md])
        up_src = np.bincount(np.unique(np.concatenate(up_keys)) // self.n, minlength=nodes)
        down_src = np.bincount(np.unique(np.concatenate(down_keys)) // self.n, minlength=nodes)
        extra = 1 if self.options.fan_in == "group" else 0
        beta, eps, wt = self.node_params[:, 0], self.node_params[:, 1], self.node_params[:, 2]
        load = np.concatenate([up_load, down_load])
        width = np.concatenate([up_src, down_src]) + extra
        b = load * np.concatenate([beta, beta])
        e = load * np.maximum(width - np.concatenate([wt, wt]), 0) * np.concatenate([eps, eps])
        return b, e

    def cost(self, top: Node, steps) -> TreeCost:
        total = TreeCost()
        for s in steps:
            total = total + self.step_cost(top, s)
        return total

    # -------------------------------------------------------------------------------------------- builders
    def group_steps(self, plan, groups, sizes, m: int) -> list[Step]:
        """The steps of ``plan`` ("ring", "rhd", "cps" or HCPS fan-ins) run at once by every group of
        ``groups`` (lists of local server indices, all of one length p) on ``sizes[g]`` floats per member."""
        p = len(groups[0])
        if p < 2:
            return []                                  # one member: nothing to exchange or reduce
        if plan == "cps":
            plan = (p,)
        if plan == "ring":
            return _ring(groups, sizes, m)
        if plan == "rhd":
            return _rhd(groups, sizes, m)
        if isinstance(plan, tuple) and math.prod(plan) == p:
            return _hcps(plan, groups, sizes, m)
        raise ValueError(f"plan {plan!r} does not fit groups of {p}")

    def group_candidates(self, p: int, kinds=("ring", "rhd", "cps", "hcps")) -> list:
        """The switch-local plans GenTree compares for groups of p (§4.2 plan type selection), in the order that
        breaks ties: CPS, the HCPS factorizations (largest first step first), Ring, RHD."""
        out = ["cps"] if "cps" in kinds else []
        if "hcps" in kinds:
            out += [f for f in ordered_factorizations(p) if len(f) >= 2]
        return out + [k for k in ("ring", "rhd") if k in kinds]


def _empty(m):
    return np.zeros((m, m)), np.zeros(m), np.zeros(m)


def _as_arrays(groups, sizes):
    return np.asarray(groups, dtype=int).reshape(len(groups), -1), np.asarray(sizes, dtype=float)


def _with_reverse(rs: list[Step]) -> list[Step]:
    """ReduceScatter steps, then the AllGather: the same steps reversed in order and direction, no compute."""
    ag = [Step(s.traffic.T.copy(), None, None, s.count) for s in reversed(rs)]
    return rs + ag


def _ring(groups, sizes, m) -> list[Step]:
    G, s = _as_arrays(groups, sizes)
    p = G.shape[1]
    T, adds, mem = _empty(m)
    nxt = np.roll(G, -1, axis=1)
    T[G, nxt] += (s / p)[:, None]
    adds[nxt] += (s / p)[:, None]
    mem[nxt] += (3 * s / p)[:, None]
    return [Step(T, adds, mem, p - 1), Step(T.T.copy(), None, None, p - 1)]


def _hcps(fanins, groups, sizes, m) -> list[Step]:
    """HCPS: in step i the members that differ only in mixed-radix digit i (radix f_i) form a group of f_i; each
    holds S/P_{i-1} and sends each other member S/P_i, then reduces f_i pieces of S/P_i."""
    G, s = _as_arrays(groups, sizes)
    q = np.arange(G.shape[1])
    steps, prefix = [], 1
    for f in fanins:
        stride, prefix = prefix, prefix * f
        piece = (s / prefix)[:, None]
        T, adds, mem = _empty(m)
        digit = (q // stride) % f
        for d in range(1, f):
            partner = q + ((digit + d) % f - digit) * stride
            T[G, G[:, partner]] += piece
        adds[G] += (f - 1) * piece
        mem[G] += (f + 1) * piece
        steps.append(Step(T, adds, mem))
    return _with_reverse(steps)


def _rhd(groups, sizes, m) -> list[Step]:
    """Recursive halving (partner distance 1, 2, 4, ...) then doubling. With p not a power of two, the first
    2r members pair up (r = p - 2^floor(log p)): odd ones hand their data to the even one first and get the
    result back last (the chi(N) term of Table 2)."""
    G, s = _as_arrays(groups, sizes)
    p = G.shape[1]
    top = 1 << (p.bit_length() - 1)
    r = p - top
    steps = []
    if r:
        T, adds, mem = _empty(m)
        odd, even = G[:, 1:2 * r:2], G[:, 0:2 * r:2]
        T[odd, even] += s[:, None]
        adds[even] += s[:, None]
        mem[even] += 3 * s[:, None]
        steps.append(Step(T, adds, mem))
    A = np.concatenate([G[:, 0:2 * r:2], G[:, 2 * r:]], axis=1)
    a = np.arange(top)
    div = 1
    for j in range(top.bit_length() - 1):
        div *= 2
        piece = (s / div)[:, None]
        T, adds, mem = _empty(m)
        T[A, A[:, a ^ (1 << j)]] += piece
        adds[A] += piece
        mem[A] += 3 * piece
        steps.append(Step(T, adds, mem))
    return _with_reverse(steps)
