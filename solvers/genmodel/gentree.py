"""GenTree: AllReduce plans for switch trees (GenModel paper §4.2, Algorithms 1 and 2; digest §2.3-2.5).

Bottom-up over the switches (post-order), for switch A with children C_0 .. C_{c-1}:

1. placement: Algorithm 1 with the matching repair of ``placement`` (every block owned exactly once under A);
2. data rearrangement (Algorithm 2 lines 8-16, optional): a child switch C_i may first gather its scattered
   results onto k of its servers, so that only they send out of C_i. k comes from the convergence ratio
   r = (bandwidth of C_i's child links) / (bandwidth of its uplink) as k = ceil(n_i / r); one server and one per
   child subtree are tried too [I]. It is applied when GenModel says gather + transfer-out (+ the mirrored
   scatter in the AllGather) beats the direct transfer-out; its cost is added to C_i's finish time;
3. plan selection: when no child was rearranged and the children end in the same placement (equal server counts
   and the same block sets), the servers form groups of c, one per child, owning the same blocks, and every group
   runs the same switch-local plan at once: Ring, RHD, CPS or any HCPS factorization of c. Otherwise the plan is
   Asymmetric CPS (ACPS): each partial goes straight to its block's owner and comes back in the AllGather.
   Every candidate is costed with ``treecost`` on A's subtree (the tier's links, the servers' gamma and delta),
   the cheapest kept (ties: fewer steps, then CPS before HCPS before Ring and RHD);
4. finish(A) = max_i (finish(C_i) + rearrangement_i) + T_A. The costs are whole AllReduces of A's level (the
   ReduceScatter going up and its mirror AllGather coming down, as Table 2 counts them), so finish(root) is the
   AllReduce time on the critical path.

``select="table2"`` replaces step 3's choice among the group plans by the literal reading of Algorithm 2 that
reproduces the paper's Table 6 (``papersim``: the Table 2 cost of c participants holding the whole S, with the
servers' link parameters, mu = 3, w = senders); the times reported stay those of ``treecost``.

``flatten`` (an extension, on by default [I]): a switch above the leaf level may instead run a flat Ring, CPS or
RHD over all its servers, its children doing nothing, when that is faster than its hierarchical plan. At the root
this includes the flat baselines, so the result is never worse than them. The paper's GenTree is
``flatten=False``; it loses to a flat CPS on many small trees (e.g. 4 + 7 servers under one root: two CPS levels
cost twice the steps of one flat CPS), while on the paper's presets both agree.

Baselines (the Table 7 comparison, on the same tree and cost): flat Ring (servers in depth-first order), flat CPS
and flat RHD (RHD only for a power-of-two N unless asked), each one group of all N servers in ``treecost``.
"""
from __future__ import annotations

import math
from dataclasses import dataclass, field

import numpy as np

from .params import ModelOptions
from .papersim import PaperSim
from .placement import SwitchPlacement, place
from .plans import hcps_label
from .treecost import Step, TreeCost, TreeCoster
from .tree import Node, SwitchTree

DEFAULT_KINDS = ("ring", "rhd", "cps", "hcps")
SELECTIONS = ("tree", "table2")
LABELS = {"ring": "Ring", "rhd": "RHD", "cps": "CPS"}


def plan_label(plan) -> str:
    return LABELS.get(plan, plan) if isinstance(plan, str) else hcps_label(plan)


def _servers(k: int) -> str:
    return "1 server" if k == 1 else f"{k} servers"


def _scaled(unit: TreeCost, size: float) -> TreeCost:
    return TreeCost(unit.alpha, unit.beta * size, unit.gamma * size, unit.delta * size, unit.epsilon * size,
                    unit.steps)


@dataclass
class SwitchDecision:
    """What GenTree did at one switch (one row of the Table 6-style decision table)."""

    switch: str
    tier: str
    height: int
    children: int
    servers: int
    participants: str
    algorithm: str
    mode: str                    # "groups", "acps", "flat", "single child", "skipped"
    rearranged: dict = field(default_factory=dict)     # child name -> subset size k
    start: float = 0.0
    time: float = 0.0
    finish: float = 0.0
    terms: dict = field(default_factory=dict)
    candidates: dict = field(default_factory=dict)     # label -> seconds
    unheld_blocks: int = 0

    def row(self) -> dict:
        rearr = ", ".join(f"{c}→{k}" for c, k in self.rearranged.items())
        return {"switch": self.switch, "tier": self.tier, "level": self.height, "participants": self.participants,
                "algorithm": self.algorithm, "rearranged": rearr or "no", "start_s": self.start,
                "time_s": self.time, "finish_s": self.finish}


@dataclass
class GenTreeResult:
    tree: SwitchTree
    size: float
    options: ModelOptions
    rearrange: bool
    decisions: list[SwitchDecision]
    placement: dict[str, SwitchPlacement]
    total: float
    baselines: dict[str, TreeCost]

    def decision(self, switch: str) -> SwitchDecision:
        return next(d for d in self.decisions if d.switch == switch)

    def rows(self) -> list[dict]:
        return [d.row() for d in self.decisions]

    def to_frame(self):
        import pandas as pd
        return pd.DataFrame(self.rows())

    def comparison(self) -> dict[str, float]:
        """GenTree's total beside every baseline's, in seconds."""
        return {"GenTree": self.total, **{k: v.total for k, v in self.baselines.items()}}

    def as_dict(self) -> dict:
        return {"tree": self.tree.spec, "name": self.tree.name, "servers": self.tree.n, "size": self.size,
                "rearrange": self.rearrange, "total_s": self.total, "decisions": self.rows(),
                "baselines": {k: {"total_s": v.total, **v.terms()} for k, v in self.baselines.items()}}


class Planner:
    """GenTree on one tree under one ``ModelOptions``; reuse it for several sizes (costs are cached per unit size:
    every term but alpha grows linearly with S)."""

    def __init__(self, tree: SwitchTree, options: ModelOptions = ModelOptions(), kinds=DEFAULT_KINDS,
                 select: str = "tree"):
        if select not in SELECTIONS:
            raise ValueError(f"select must be 'tree' or 'table2', got {select!r}")
        self.tree, self.options, self.kinds, self.select = tree, options, tuple(kinds), select
        self.paper = PaperSim(tree) if select == "table2" else None
        self.coster = TreeCoster(tree, options)
        self.placement = place(tree)
        self.index = {name: i for i, name in enumerate(tree.server_names)}
        self._unit: dict = {}

    # ------------------------------------------------------------------------------------------------ costing
    def _cost(self, top: Node, key, build, size: float) -> TreeCost:
        k = (top.name, key)
        if k not in self._unit:
            self._unit[k] = self.coster.cost(top, build())
        return _scaled(self._unit[k], size)

    def flat(self, top: Node, plan, size: float) -> TreeCost:
        """A flat ``plan`` over every server under ``top``, each with the full vector."""
        m = top.servers
        return self._cost(top, ("flat", plan), lambda: self.coster.group_steps(plan, [list(range(m))], [1.0], m),
                          size)

    def baselines(self, size: float, rhd: bool | None = None) -> dict[str, TreeCost]:
        """Flat Ring, CPS and RHD on the whole tree (RHD when N is a power of two, or when ``rhd`` is True)."""
        n, root = self.tree.n, self.tree.root
        out = {"Ring": self.flat(root, "ring", size), "CPS": self.flat(root, "cps", size)}
        if rhd or (rhd is None and n & (n - 1) == 0):
            out["RHD"] = self.flat(root, "rhd", size)
        return out

    def _groups(self, sw: Node):
        """Groups of c servers (one per child, same block set) when the children end alike, else None."""
        children = sw.children
        if len({c.servers for c in children}) != 1:
            return None
        if all(c.is_server for c in children):
            return [[self.index[c.name] for c in children]], [self.tree.n]
        if any(c.is_server for c in children):
            return None
        owned = [self.placement[c.name].owned for c in children]
        families = [{frozenset(b): s for s, b in o.items()} for o in owned]
        if any(set(f) != set(families[0]) for f in families[1:]):
            return None
        order = [frozenset(owned[0][s]) for s in owned[0]]
        return [[f[b] for f in families] for b in order], [len(b) for b in order]

    def _acps_steps(self, sw: Node, holders: np.ndarray, owner: np.ndarray) -> list[Step]:
        """ACPS: every partial (``holders[b]``, one per child) goes to the owner of block b, which reduces the c
        partials ((c-1) adds and (c+1) reads/writes per float); the AllGather sends the result back."""
        lo = self.tree.ranges[sw.name][0]
        m, n = sw.servers, self.tree.n
        T, adds, mem = np.zeros((m, m)), np.zeros(m), np.zeros(m)
        hs = holders - lo
        ow = owner - lo
        c = hs.shape[1]
        src, dst = hs.ravel(), np.repeat(ow, c)
        keep = src != dst
        np.add.at(T, (src[keep], dst[keep]), 1.0 / n)
        np.add.at(adds, ow, (c - 1) / n)
        np.add.at(mem, ow, (c + 1) / n)
        return [Step(T, adds, mem), Step(T.T.copy())]

    def _transfer_out(self, sw: Node, child: Node, holders, owner) -> list[Step]:
        """The flows leaving ``child`` for their owners elsewhere under ``sw``, and their AllGather mirror."""
        lo = self.tree.ranges[sw.name][0]
        clo, chi = self.tree.ranges[child.name]
        m, n = sw.servers, self.tree.n
        T = np.zeros((m, m))
        outside = (owner < clo) | (owner >= chi)
        mask = (holders >= clo) & (holders < chi) & outside[:, None]
        dst = np.broadcast_to(owner[:, None], holders.shape)[mask]
        np.add.at(T, (holders[mask] - lo, dst - lo), 1.0 / n)
        return [Step(T), Step(T.T.copy())]

    def _subset_sizes(self, child: Node) -> list[int]:
        up = self.tree.link_params(child).beta
        down = sum(1 / max(self.tree.link_params(g).beta, 1e-30) for g in child.children)
        ratio = down * up if up > 0 else math.inf
        conv = 1 if math.isinf(ratio) else max(1, math.ceil(child.servers / ratio))
        return sorted({k for k in (1, conv, len(child.children)) if 1 <= k < child.servers})

    def _gather(self, child: Node, k: int):
        """Members (evenly spaced servers of ``child``), server -> member, and the gather steps (in child's
        subtree) that move each server's owned blocks to its member, plus the mirrored scatter."""
        clo, chi = self.tree.ranges[child.name]
        nc, n = chi - clo, self.tree.n
        member = np.arange(n)
        for x in range(clo, chi):
            member[x] = clo + (((x - clo) * k // nc) * nc + k - 1) // k
        T = np.zeros((nc, nc))
        for x, blocks in self.placement[child.name].owned.items():
            if member[x] != x:
                T[x - clo, member[x] - clo] += len(blocks) / n
        return member, [Step(T), Step(T.T.copy())]

    # ----------------------------------------------------------------------------------------------- planning
    def run(self, size: float, rearrange: bool = True, flatten: bool = True, rhd_baseline: bool | None = None):
        """GenTree for a vector of ``size`` floats (module docstring)."""
        if not (isinstance(size, (int, float)) and size > 0 and math.isfinite(size)):
            raise ValueError(f"the size must be a positive number of floats, got {size!r}")
        t = self.tree
        finish: dict[str, float] = {}
        decisions: dict[str, SwitchDecision] = {}
        for sw in t.switches:
            decisions[sw.name] = d = self._decide(sw, size, rearrange, finish)
            if flatten and t.height(sw) >= 2:
                flats = {f"flat {plan_label(p)}": self.flat(sw, p, size) for p in ("ring", "cps", "rhd")}
                label, best = min(flats.items(), key=lambda kv: (round(kv[1].total, 12), kv[1].steps))
                d.candidates.update({k: v.total for k, v in flats.items()})
                if best.total < d.finish:
                    self._skip(sw, decisions)
                    d.algorithm, d.mode, d.rearranged = label, "flat", {}
                    d.participants = _servers(sw.servers)
                    d.start, d.time, d.finish, d.terms = 0.0, best.total, best.total, best.terms()
            finish[sw.name] = d.finish
        order = [decisions[sw.name] for sw in t.switches]
        return GenTreeResult(t, float(size), self.options, rearrange, order, self.placement, finish[t.root.name],
                             self.baselines(size, rhd_baseline))

    def _skip(self, sw: Node, decisions):
        stack = [c for c in sw.children if not c.is_server]
        while stack:
            v = stack.pop()
            d = decisions[v.name]
            d.mode, d.algorithm, d.start, d.time, d.finish, d.rearranged = "skipped", "(in flat plan)", 0.0, 0.0, 0.0, {}
            stack.extend(c for c in v.children if not c.is_server)

    def _decide(self, sw: Node, size: float, rearrange: bool, finish: dict) -> SwitchDecision:
        t, sp = self.tree, self.placement[sw.name]
        child_done = [0.0 if c.is_server else finish[c.name] for c in sw.children]
        d = SwitchDecision(sw.name, sw.tier, t.height(sw), len(sw.children), sw.servers, "", "", "",
                           unheld_blocks=len(sp.unheld))
        if len(sw.children) == 1:
            d.participants, d.algorithm, d.mode = _servers(sw.servers), "—", "single child"
            d.start = d.finish = child_done[0]
            return d
        holders, owner = np.array(sp.holders, dtype=np.int64), np.array(sp.owner, dtype=np.int64)
        extra = [0.0] * len(sw.children)
        if rearrange:
            for i, child in enumerate(sw.children):
                if child.is_server or child.servers < 2:
                    continue
                chosen = self._rearrange(sw, child, holders, owner, size)
                if chosen is not None:
                    k, cost, member = chosen
                    d.rearranged[child.name] = k
                    extra[i] = cost
                    holders = member[holders]
        cands: dict[str, TreeCost] = {}
        grouping = None if d.rearranged else self._groups(sw)
        if grouping is not None:
            groups, blocks = grouping
            lo = t.ranges[sw.name][0]
            local = [[s - lo for s in g] for g in groups]
            sizes = [b / t.n for b in blocks]
            for plan in self.coster.group_candidates(len(groups[0]), self.kinds):
                key = ("group", plan)
                cands[plan_label(plan)] = self._cost(
                    sw, key, lambda p=plan: self.coster.group_steps(p, local, sizes, sw.servers), size)
            d.mode = "groups"
            d.participants = (f"{len(groups)} groups of {len(groups[0])}" if len(groups) > 1
                              else _servers(len(groups[0])))
        else:
            key = ("acps", tuple(sorted(d.rearranged.items())))
            cands["ACPS"] = self._cost(sw, key, lambda: self._acps_steps(sw, holders, owner), size)
            d.mode, d.participants = "acps", _servers(sw.servers)
        label, best = min(cands.items(), key=lambda kv: (round(kv[1].total, 12), kv[1].steps))
        if self.paper is not None and grouping is not None:
            wanted = self.paper.choose(sw, size).label
            if wanted in cands:
                label, best = wanted, cands[wanted]
        d.algorithm, d.time, d.terms = label, best.total, best.terms()
        d.candidates = {k: v.total for k, v in cands.items()}
        d.start = max(a + b for a, b in zip(child_done, extra))
        d.finish = d.start + d.time
        return d

    def _rearrange(self, sw: Node, child: Node, holders, owner, size):
        """(k, gather + scatter cost, server -> member) when rearranging ``child`` pays off, else None."""
        origin = self._cost(sw, ("out", child.name, 0), lambda: self._transfer_out(sw, child, holders, owner), size)
        best = None
        for k in self._subset_sizes(child):
            member, steps = self._gather(child, k)
            moved = member[holders]
            gather = self._cost(child, ("gather", k), lambda s=steps: s, size)
            out = self._cost(sw, ("out", child.name, k), lambda mv=moved: self._transfer_out(sw, child, mv, owner),
                             size)
            if gather.total + out.total < origin.total and (best is None or gather.total + out.total < best[0]):
                best = (gather.total + out.total, k, gather.total, member)
        return None if best is None else (best[1], best[2], best[3])


def gentree(tree: SwitchTree, size: float, options: ModelOptions = ModelOptions(), rearrange: bool = True,
            flatten: bool = True, kinds=DEFAULT_KINDS, rhd_baseline: bool | None = None,
            select: str = "tree") -> GenTreeResult:
    """GenTree's plan for ``tree`` and a vector of ``size`` floats, with the flat baselines (module docstring)."""
    return Planner(tree, options, kinds, select).run(size, rearrange, flatten, rhd_baseline)
