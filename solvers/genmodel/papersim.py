"""The paper's GenTree plans (Table 6) and simulated times (Table 7), reconstructed from its printed numbers.

GenModel paper §5.3 runs GenTree and three flat baselines on six trees (Fig. 11) in an unpublished flow-level
simulator with the Table 5 parameters. ``treecost`` prices a plan the way the studio executes it (bottom-up, a
bottleneck link per step); on one switch that matches Table 7 within 3 %, but on the two-level trees it does not
(SYM384 at 1e8 floats: GenTree 1.71 s against 3.575, Ring 26.6 against 5.742). This module is the reading of the
paper that its own numbers support. Every rule below is [I], each checked against the digest's fits of Table 7
(notes/genmodel-gentree.md §3.9: every baseline row is exactly affine in S, T = a + b·S) [C].

**Plan choice (Table 6).** Algorithm 2 passes the same S to ``GenModel(algo, ..., S)`` at every switch. Read
literally, a switch whose c children end alike compares the Table 2 costs of CPS, every HCPS factorization of c,
Ring and RHD for c participants holding S floats each, with the parameters of the servers' links (Middle-SW +
Server rows: every flow ends at a server NIC, whose incast Table 5 measures), mu = 3 (a switch-local plan is priced
as on one switch: server, switch, server) and w = senders (the SS24/SS32 fit); unequal children give ACPS. This is
what turns the root of SYM384 from 4 x 4 (the bottom-up tree cost, where 16-way groups hold only S/24 and the
uplinks dominate) into the paper's 8 x 2: on S floats a 16-way CPS pays 2·(15/16)·S·6·eps = 1.37e-9·S of incast,
more than the two extra steps and the extra memory pass of 8 x 2 (2·3·alpha + 0.25·S·delta) from S = 3.0e7 on.

It gives 39 of Table 6's 42 cells. The three others (SYM512 middle, ASY384 middle 0-7 and CDC384 DC0 middle, all
32-way at 1e7: CPS in print, 8 x 4 here) contradict the table itself: SS32 is the same 32 servers on one switch
with the same S and parameters, and prints 8 x 4. A per-switch cost depending on (c, S, parameters, mu) cannot give
both; a larger mu for switches under a root cannot either, because in ASY384 the 32-way middles need CPS at
1e7 (2·mu·alpha >= 2·(31/32)·1e7·22·eps - 0.25·1e7·delta, mu >= 3.92) while the 16-way middles of the same level
need 8 x 2 at 3.2e7 (2·mu·alpha + 0.25·3.2e7·delta <= 2·(15/16)·3.2e7·6·eps, mu <= 3.22).

**Simulated times (Table 7).** A step costs its latency, then the slowest of its links, then its computation (the
sequence of Fig. 2, pitfall P13):

* latency: one alpha per node on the step's longest path: 3·alpha inside a switch, 5·alpha through a root,
  4·alpha + alpha_x across the two data centres (their roots and cable count as one node). Table 7's intercepts:
  CPS 2 steps = 6, 10 alpha; RHD on SYM512 10 in-rack + 8 cross-rack steps = 70 alpha; GenTree on SYM 4·3 + 4·5 =
  32 alpha, on ASY 4·3 + 2·5 = 22 alpha; CDC384 CPS 2·(4·6.58 ms + 30 ms) = 0.1126 s (printed 0.1129).
* a server NIC receiving ``r`` floats from ``w`` senders costs r·(beta + max(w - w_t, 0)·eps) with the
  Middle-SW row; a cable above a subtree of n servers, each sending x floats out of it, costs n·x·beta of the
  cable's tier (Root-SW, Cross-DC), without incast.
* hierarchical plans run **top level first**: the cross-rack exchange moves every server's full vector, and the
  racks then finish on S/k. This is the reading that reproduces the two-level slopes; bottom-up (the order of
  Algorithm 2, which the studio's ``Planner`` follows) sends only S/n per server through the uplinks. Slopes in
  s/float (printed: from the 3.2e7 and 1e8 columns of Table 7; beta_R = Root-SW beta = 6.4e-10):

  ==============  =====================================================  ===========  =========  =======
  row             top level first, its dominant term                      top first    bottom-up  printed
  ==============  =====================================================  ===========  =========  =======
  SYM384 Ring     ring over 16 racks on S: 2·(15/16)·24·beta_R = 2.88e-8  3.07e-8      1.39e-8    3.11e-8
  SYM512 Ring     2·(15/16)·32·beta_R = 3.84e-8                           4.03e-8      1.39e-8    4.13e-8
  SYM512 RHD      halving by 256, 128, 64, 32 first: the same 3.84e-8     4.03e-8      1.50e-8    4.35e-8
  SYM384 GenTree  root 8 x 2 on S: 2.88e-8; racks 8 x 3 on S/16           3.04e-8      1.60e-8    3.36e-8
  SYM512 GenTree  root 8 x 2 on S: 3.84e-8; racks 8 x 4 on S/16           4.00e-8      1.67e-8    4.43e-8
  ==============  =====================================================  ===========  =========  =======

* across two data centres the data rearrangement decides the order, as the intercepts show: GenTree's 0.2571 s
  is racks (4·3·alpha) + data-centre roots (2·5·alpha) + cross-DC ACPS (2·(4·alpha + alpha_x)) = 0.2574 s, and
  GenTree*'s 0.1910 s the same without the data-centre level, 0.1916 s. With rearrangement every data centre first
  aggregates over its racks on S (that is what rearrangement is for: fewer, fuller flows over the WAN link), the
  cross-DC cable then carries 256 servers x S/16 = 16·S per phase (6.4e-9 s/float), and the racks finish on S/16:
  slope 2.41e-7 against the printed 2.51e-7. GenTree* exchanges among all 16 racks first, on S.
* Ring is the two-dimensional ring of those intercepts: a ring over the racks (servers of equal index in
  consecutive racks) on S, then a ring inside every rack on S/k; every step is charged the tree's longest path and
  the step count is 2·(k + N/k) (Table 7: 10·(24 + 16)·alpha = 400 alpha for SYM384 *and* ASY384, 480 for SYM512).
  The flat CPS is one all-to-all step per phase.

What stays unexplained (``known`` rows of the bench):

* the flat CPS on SYM384/SYM512/ASY384 costs 1.9-2.5x the NIC incast of its N - 1 senders (printed slopes 2.21e-7,
  3.41e-7, 1.99e-7 s/float against 1.05e-7, 1.36e-7, 1.05e-7), while the same rule gives CDC384's CPS within 8 %.
  Adding the rack downlink with Root-SW incast of its N - n senders to the NIC's cost fits SYM384 (+3 %) and
  SYM512 (+1 %), but not ASY384 (+32 % through a 32-server rack), and a sum of link costs breaks every other row
  (the 2-D ring would pay its NIC and its uplink: +38 %). No cost that grows with each link's load can give these
  rows: ASY384's CPS is printed 10 % cheaper than SYM384's (19.925 against 22.148 s at 1e8) although both have 384
  servers, every NIC carries the same, and ASY384's 32-server uplinks carry 32·352/384·S = 29.3·S per phase against
  24·360/384·S = 22.5·S;
* GenTree at 1e7 on SYM384 (CPS at both levels): 0.41 s against 0.503;
* CDC384's GenTree*: among 16 racks on S, the one cross-DC cable carries 8 racks x 16 servers x S/2 = 64·S per
  phase, 1.9x the printed time; the printed slope (4.29e-7) needs about 34·S, which is one 32-server rack's
  2·(15/16)·32·S·beta_x = 3.84e-7, as if every rack had its own cross-DC link. CDC384's CPS and Ring need the
  shared cable (its 85·S per phase gives the CPS within 8 %), so one simulator cannot give all three rows.
"""
from __future__ import annotations

import math
from dataclasses import dataclass, field

from .params import ModelOptions, combine
from .plans import best_plan, ordered_factorizations
from .treecost import TreeCost
from .tree import Node, SwitchTree

FAN_IN = "senders"
CHOICE_MU = 3


def plan_code(label: str, participants: int = 0) -> int:
    """A number for a Table 6 plan label (the bench compares plans through it): "CPS" over p participants -> p,
    HCPS "a × b" -> 100·a + b ("8 × 2" -> 802, "2 × 2 × 4" -> 20204), "ACPS" -> 0, "Ring" -> -1, "RHD" -> -2."""
    if label == "CPS" and participants < 2:
        raise ValueError("a CPS label needs its number of participants")
    fixed = {"ACPS": 0, "Ring": -1, "RHD": -2, "CPS": participants}
    if label in fixed:
        return fixed[label]
    code = 0
    for part in label.replace("×", "x").split("x"):
        if not part.strip().isdigit():
            raise ValueError(f"not a plan label: {label!r}")
        code = code * 100 + int(part)
    return code


@dataclass
class Choice:
    """The plan the literal Algorithm 2 picks at one switch: ``label`` as Table 6 prints it."""

    switch: str
    participants: int
    plan: object                 # "acps", "ring", "rhd" or a tuple of HCPS fan-ins ((c,) = CPS)
    label: str
    candidates: dict = field(default_factory=dict)

    @property
    def code(self) -> int:
        return plan_code(self.label, self.participants)


def _server_depths(tree: SwitchTree):
    stack = [(tree.root, 0)]
    while stack:
        v, d = stack.pop()
        if v.is_server:
            yield d
        stack.extend((c, d + 1) for c in v.children)


def _check_size(size) -> None:
    if isinstance(size, bool) or not isinstance(size, (int, float)) or not (size > 0 and math.isfinite(size)):
        raise ValueError(f"the size must be a positive number of floats, got {size!r}")


class PaperSim:
    """Table 6 choices and Table 7 times on one tree (module docstring)."""

    def __init__(self, tree: SwitchTree, fan_in: str = FAN_IN):
        depths = set(_server_depths(tree))
        if len(depths) != 1:
            raise ValueError("the paper simulator needs every server at the same depth (as in the paper's trees)")
        self.tree, self.fan_in = tree, fan_in
        self.racks = [v for v in tree.switches if all(c.is_server for c in v.children)]
        rack_tier = self.racks[0].tier
        self.nic = combine(tree.tiers[rack_tier], tree.server_params)
        self.srv_alpha = tree.server_params.alpha
        self._node = {v.name: v for v in tree.nodes}

    # ------------------------------------------------------------------------------------------------ latency
    def latency(self, top: Node) -> float:
        """One alpha per node on a path whose highest node is ``top`` (module docstring); a join with its two
        data-centre roots is one node charged the cross tier's alpha."""
        t = self.tree
        total = 2 * self.srv_alpha + t.tiers[top.tier].alpha
        v = top.children[0]
        if top.join and not v.is_server:
            v = v.children[0]
        while not v.is_server:
            total += 2 * t.tiers[v.tier].alpha
            v = v.children[0]
        return total

    def longest(self) -> float:
        return self.latency(self.tree.root)

    # ------------------------------------------------------------------------------------------ plan choices
    def choose(self, sw: Node, size: float, mu: float | None = None) -> Choice:
        """Algorithm 2 at ``sw`` read literally (module docstring)."""
        _check_size(size)
        c = len(sw.children)
        if c == 1:
            return Choice(sw.name, 1, "none", "—")
        if len({ch.servers for ch in sw.children}) != 1 or sw.join:
            return Choice(sw.name, c, "acps", "ACPS")
        opts = ModelOptions(fan_in=self.fan_in, alpha_steps=CHOICE_MU if mu is None else mu)
        cands = ["cps", "ring"] + (["rhd"] if c & (c - 1) == 0 else [])
        cands += [f for f in ordered_factorizations(c) if len(f) >= 2]
        ranking = best_plan(c, size, self.nic, opts, cands)
        best = ranking.best
        plan = best.fanins if best.kind in ("cps", "hcps") else best.kind
        return Choice(sw.name, c, plan, best.label, {x.label: x.total for x in ranking.costs})

    def choices(self, size: float, mu: float | None = None) -> dict[str, Choice]:
        return {sw.name: self.choose(sw, size, mu) for sw in self.tree.switches}

    # ----------------------------------------------------------------------------------------------- steps
    def _out(self, top: Node, out: float) -> float:
        """Seconds on the slowest cable below ``top`` when every server sends ``out`` floats out of its child."""
        if all(c.is_server for c in top.children):
            return 0.0
        return max(c.servers for c in top.children) * out * self.tree.tiers[top.tier].beta

    def _step(self, top: Node, recv: float, senders: int, out: float, adds: float = 0.0, mem: float = 0.0,
              count: float = 1, latency: float | None = None, cable: float | None = None) -> TreeCost:
        """``count`` identical steps below ``top``: every server receives ``recv`` from ``senders`` servers and
        sends ``out`` floats out of its child of ``top`` (or the slowest cable takes ``cable`` seconds);
        ``adds``/``mem`` floats of reduction per server."""
        p = self.nic
        w = senders + (1 if self.fan_in == "group" else 0)
        nic_b, nic_e = recv * p.beta, recv * max(w - p.w_t, 0) * p.epsilon
        cable = self._out(top, out) if cable is None else cable
        if cable > nic_b + nic_e:
            nic_b, nic_e = cable, 0.0
        lat = self.latency(top) if latency is None else latency
        return TreeCost(lat * count, nic_b * count, adds * p.gamma * count, mem * p.delta * count, nic_e * count,
                        int(round(count)))

    def group_plan(self, top: Node, plan, s: float, latency: float | None = None) -> TreeCost:
        """``plan`` run by groups of one server per child of ``top`` on ``s`` floats each, the AllGather mirrored."""
        c = len(top.children)
        if plan == "none" or c < 2:
            return TreeCost()
        if plan == "ring":
            rs = self._step(top, s / c, 1, s / c, s / c, 3 * s / c, c - 1, latency)
            ag = self._step(top, s / c, 1, s / c, count=c - 1, latency=latency)
            extra = self._step(top, 0, 0, 0, count=2, latency=latency)       # 2c steps of alpha (Table 7)
            return rs + ag + TreeCost(alpha=extra.alpha, steps=2)
        if plan == "rhd":
            total, piece = TreeCost(), s
            for _ in range(int(math.log2(c))):
                piece /= 2
                total = total + self._step(top, piece, 1, piece, piece, 3 * piece, latency=latency)
                total = total + self._step(top, piece, 1, piece, latency=latency)
            return total
        fanins = (c,) if plan == "acps" else tuple(plan)
        total, prefix = TreeCost(), 1
        for f in fanins:
            prefix *= f
            piece = s / prefix
            total = total + self._step(top, (f - 1) * piece, f - 1, (f - 1) * piece, (f - 1) * piece,
                                       (f + 1) * piece, latency=latency)
            total = total + self._step(top, (f - 1) * piece, f - 1, (f - 1) * piece, latency=latency)
        return total

    def hierarchical(self, plans: dict, size: float, node: Node | None = None) -> TreeCost:
        """Top level first: ``plans[switch]`` at every switch, each child then finishing on s / c floats."""
        node = node or self.tree.root
        if node.is_server:
            return TreeCost()
        here = self.group_plan(node, plans[node.name], size)
        below = [self.hierarchical(plans, size / len(node.children), c) for c in node.children if not c.is_server]
        return here + max(below, key=lambda x: x.total) if below else here

    # ----------------------------------------------------------------------------------------------- costs
    def gentree(self, size: float, mu: float | None = None, rearrange: bool = True) -> tuple[TreeCost, dict]:
        """GenTree's time with the Table 6 choices. Across two data centres (a join at the root) the order
        depends on the data rearrangement (module docstring): with it every data centre first aggregates over its
        racks on S, the cross-DC exchange then moves S/c per server, and the racks finish; without it (GenTree*)
        the cross-DC exchange runs first among all the racks on S."""
        choices = self.choices(size, mu)
        plans = {k: v.plan for k, v in choices.items()}
        root = self.tree.root
        if not root.join or any(c.is_server for c in root.children):
            return self.hierarchical(plans, size), choices
        racks = lambda s: max((self.hierarchical(plans, s, r) for r in self.racks), key=lambda x: x.total)
        if not rearrange:
            return self._cross_first(size) + racks(size / max(len(dc.children) for dc in root.children) / 2), \
                choices
        dcs = max((self.group_plan(dc, plans[dc.name], size) for dc in root.children), key=lambda x: x.total)
        s = size / min(len(dc.children) for dc in root.children)
        return dcs + self.group_plan(root, "acps", s) + racks(s / len(root.children)), choices

    def _cross_first(self, size: float) -> TreeCost:
        """GenTree* across two data centres: ACPS among all the racks on S, servers of equal index in every rack
        exchanging directly (the data-centre roots only forward); the cross-DC cable carries what the racks of one
        side send to the other."""
        t, root, p = self.tree, self.tree.root, self.nic
        side = {r.name: next(i for i, dc in enumerate(root.children)
                             if t.ranges[dc.name][0] <= t.ranges[r.name][0] < t.ranges[dc.name][1])
                for r in self.racks}
        cross = [0.0, 0.0]
        recv = adds = mem = 0.0
        worst_w = 0
        for j in range(max(r.servers for r in self.racks)):
            members = [r for r in self.racks if r.servers > j]
            m = len(members)
            if m < 2:
                continue
            for r in members:
                other = sum(1 for q in members if side[q.name] != side[r.name])
                cross[side[r.name]] += size * other / m
            recv, worst_w = max(recv, (m - 1) / m * size), max(worst_w, m - 1)
            adds, mem = max(adds, (m - 1) / m * size), max(mem, (m + 1) / m * size)
        cable = max(cross) * t.tiers[root.tier].beta
        rs = self._step(root, recv, worst_w, 0.0, adds, mem, cable=cable)
        return rs + self._step(root, recv, worst_w, 0.0, cable=cable)

    def cps(self, size: float) -> TreeCost:
        """The flat CPS: every server sends (N-1)/N·S to the others, NIC incast of N - 1 senders."""
        t, n = self.tree, self.tree.n
        share = (n - 1) / n * size
        cable = max((v.servers * (n - v.servers) / n * size * t.link_params(v).beta
                     for v in t.nodes if v is not t.root and not v.is_server), default=0.0)
        rs = self._step(t.root, share, n - 1, 0.0, share, (n + 1) / n * size, cable=cable)
        ag = self._step(t.root, share, n - 1, 0.0, cable=cable)
        return rs + ag

    def ring(self, size: float) -> TreeCost:
        """The 2-D ring: over the racks on S, then inside the racks on S/k; 2·(k + N/k) steps of the longest path."""
        k, n = len(self.racks), self.tree.n
        lat = self.longest()
        rack_n = max(r.servers for r in self.racks)
        total = TreeCost()
        if k > 1:
            piece = size / k
            cable = self._ring_cable(piece)
            p = self.nic
            nic = piece * p.beta
            bw = max(cable, nic)
            per = (k - 1)
            total = total + TreeCost(0.0, 2 * per * bw, per * piece * p.gamma, 3 * per * piece * p.delta, 0.0, 0)
        s = size / k
        per = rack_n - 1
        piece = s / rack_n
        p = self.nic
        total = total + TreeCost(0.0, 2 * per * piece * p.beta, per * piece * p.gamma, 3 * per * piece * p.delta,
                                 0.0, 0)
        steps = 2 * (k + n // k) if k > 1 else 2 * n
        return total + TreeCost(alpha=steps * lat, steps=steps)

    def _ring_cable(self, piece: float) -> float:
        """The slowest cable of one step of the ring over the racks: rack r's servers send ``piece`` each to
        rack r + 1 (mod k), up to their common ancestor and down."""
        t = self.tree
        load: dict[tuple[str, str], float] = {}
        for i, r in enumerate(self.racks):
            nxt = self.racks[(i + 1) % len(self.racks)]
            up = self._ancestors(r)
            down = self._ancestors(nxt)
            common = next(a for a in up if a in down)
            for path, way in ((up, "up"), (down, "down")):
                for a in path:
                    if a == common:
                        break
                    load[(a, way)] = load.get((a, way), 0.0) + r.servers * piece
        return max((amount * t.link_params(self._node[name]).beta for (name, _), amount in load.items()),
                   default=0.0)

    def _ancestors(self, v: Node) -> list[str]:
        out, name = [], v.name
        while name is not None:
            out.append(name)
            p = self.tree.parent[name]
            name = None if p is None else p.name
        return out

    def rhd(self, size: float) -> TreeCost:
        """RHD over all N = 2^q servers (depth-first order), halving with the largest distance first."""
        t, n = self.tree, self.tree.n
        if n & (n - 1):
            raise ValueError(f"RHD needs a power-of-two number of servers, got {n}")
        total, piece, d = TreeCost(), size, n // 2
        while d >= 1:
            piece /= 2
            top = self._lca_of_distance(d)
            total = total + self._step(top, piece, 1, piece, piece, 3 * piece)
            total = total + self._step(top, piece, 1, piece)
            d //= 2
        return total

    def _lca_of_distance(self, d: int) -> Node:
        """The lowest switch under which server 0 and server d both lie (the trees here are regular per level)."""
        t = self.tree
        best = t.root
        for v in t.switches:
            lo, hi = t.ranges[v.name]
            if lo <= 0 < hi and lo <= d < hi and v.servers < best.servers:
                best = v
        return best

    def table7(self, size: float, rhd: bool | None = None) -> dict[str, TreeCost]:
        """GenTree and the flat baselines (RHD when N is a power of two), seconds per term."""
        _check_size(size)
        out = {"GenTree": self.gentree(size)[0], "Ring": self.ring(size), "CPS": self.cps(size)}
        if self.tree.root.join:
            out["GenTree*"] = self.gentree(size, rearrange=False)[0]
        n = self.tree.n
        if rhd or (rhd is None and n & (n - 1) == 0):
            out["RHD"] = self.rhd(size)
        return out


def table6(tree: SwitchTree, size: float, mu: float | None = None) -> dict[str, str]:
    """Switch name -> the plan label Algorithm 2 picks at ``size`` (Table 6's cells)."""
    return {k: v.label for k, v in PaperSim(tree).choices(size, mu).items()}

