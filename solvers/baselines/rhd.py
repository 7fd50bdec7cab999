"""Recursive halving and doubling (RHD; GenModel Table 1, notes genmodel-gentree.md section 1.1; Thakur,
Rabenseifner and Gropp 2005).

Ranks 0..N-1 are the compute nodes in order. With m = floor(log2 N), p = 2^m core ranks and r = N - p extra
ranks, extra rank e = p + i is paired with core rank i < r. Partners i and i XOR 2^k (k < m), and every extra
rank and its core partner, must be logical edges both ways (``fabric``: a link, or a path through switches).

* allgather, recursive doubling: (r > 0) extra e first sends its shard to its partner; then in round k = 0..m-1
  every core rank i sends everything it holds to i XOR 2^k: the shards of its aligned group of 2^k core ranks
  and of their extra partners; (r > 0) each partner finally sends the N-1 shards its extra lacks.
* reduce-scatter, recursive halving: shard s is *owned* by core rank s (s < p) or s - p (an extra's shard). (r > 0)
  extra e first sends its contributions to every shard but its own to its partner (reduce); then in round
  k = 0..m-1, with d = p / 2^(k+1), rank i sends to i XOR d the partial sums of the shards owned by the half of
  its current group that the partner keeps (reduce); (r > 0) each partner finally sends the extra's shard,
  summed over everyone else, to the extra (reduce).
* allreduce, Rabenseifner's algorithm: (r > 0) extra e folds its whole vector (N shards) into its partner;
  the p core ranks split the vector into p equal blocks (block b = [bN/p, (b+1)N/p) in shard units, cutting
  shards when p does not divide N), halve (round k: N/2^(k+1) shards to i XOR p/2^(k+1)) until rank i holds
  block i fully reduced, then double (round k: 2^k N/p shards to i XOR 2^k); (r > 0) each partner sends the
  whole result back to its extra. For N a power of two this is the reduce-scatter followed by the allgather.

Closed forms, chi = 1 when N is not a power of two (else 0), H = IR steps per round (1 direct, 2 through one
switch), B the smallest egress bandwidth of a compute node; on a topology whose RHD edges are links of one
bandwidth b (direct) the per-round tb is (max shards on an edge) * B / (N b):

    allgather, reduce-scatter: steps (m + 2 chi) H
        tb = B/(N b) * [ sum_{k<m} (2^k + min(2^k, r)) + chi (1 + N - 1) ]        (= (N-1)/N * B/b for N = 2^m)
    allreduce: steps (2m + 2 chi) H = 2 ceil(log2 N) H      (GenModel's 2 ceil(log N) alpha)
        tb = B/b * [ 2 (p-1)/p + 2 chi ]

The allreduce's chi term is the two extra steps that move the whole vector (GenModel's chi(N) (2 S beta); GenModel
writes the bandwidth part as 2(N-1)/N + 2 chi, the algorithm's exact count is 2(p-1)/p + 2 chi). On complete(N)
(B = N-1, b = 1) RHD uses one of the N-1 links per round, so its tb is N-1 times the ring's; on the hypercube Q_m
(B = m) the AR tb is 2m(N-1)/N. Through one switch of bandwidth b every IR step carries the same load as the
round's logical edge, so the tb doubles: 2 (N-1)/N * B/b for a power-of-two allgather. ``fabric.evaluate``
computes them exactly on any topology from the per-pair loads.
"""
from __future__ import annotations

from fractions import Fraction
from math import ceil, floor

from topologies.model import Topology

from ..core.errors import NotApplicable
from ..core.schedule import ONE, ZERO, Collective, Schedule
from .fabric import Fabric, Send, add_load, evaluate, need_two, realize

ALGO = "rhd"


class _Shape:
    """N, m, p, r and the compute node of each rank."""

    def __init__(self, fabric: Fabric):
        need_two(fabric, ALGO)
        self.node = list(fabric.ranks)
        self.n = len(self.node)
        self.m = self.n.bit_length() - 1
        self.p = 1 << self.m
        self.r = self.n - self.p

    def extras(self):
        """(extra rank, its core partner)."""
        return [(self.p + i, i) for i in range(self.r)]

    def owned(self, core: int) -> list[int]:
        """The shards (as ranks) owned by a core rank in the reduce-scatter."""
        return [core, core + self.p] if core < self.r else [core]


def _check(fabric: Fabric, shape: _Shape) -> None:
    for k in range(shape.m):
        for i in range(shape.p):
            j = i ^ (1 << k)
            if i < j:
                why = fabric.missing(shape.node[i], shape.node[j])
                if why:
                    raise NotApplicable(f"{ALGO} needs partner i XOR 2^k adjacent to i: {why}")
    for e, i in shape.extras():
        why = fabric.missing(shape.node[e], shape.node[i])
        if why:
            raise NotApplicable(f"{ALGO} needs extra rank {e} (N = {shape.n} is not a power of two) adjacent to its "
                                f"partner {i}: {why}")


def _whole(node, ranks) -> tuple:
    return tuple((node[s], ZERO, ONE) for s in ranks)


def _block_pieces(shape: _Shape, first: int, count: int) -> tuple:
    """Blocks first .. first+count-1 of the allreduce's p blocks as pieces of shards."""
    lo, hi = Fraction(first * shape.n, shape.p), Fraction((first + count) * shape.n, shape.p)
    pieces = []
    for s in range(floor(lo), ceil(hi)):
        a, b = max(lo - s, ZERO), min(hi - s, ONE)
        if a < b:
            pieces.append((shape.node[s], a, b))
    return tuple(pieces)


# ------------------------------------------------------------------------------------------------------ plans
def _allgather_plan(shape: _Shape) -> list[list[Send]]:
    node, n, p, r = shape.node, shape.n, shape.p, shape.r
    plan = []
    if r:
        plan.append([Send(node[e], node[i], _whole(node, [e])) for e, i in shape.extras()])
    for k in range(shape.m):
        size = 1 << k
        rnd = []
        for i in range(p):
            base = i >> k << k
            group = list(range(base, base + size))
            held = group + [x + p for x in group if x < r]
            rnd.append(Send(node[i], node[i ^ size], _whole(node, held)))
        plan.append(rnd)
    if r:
        plan.append([Send(node[i], node[e], _whole(node, [s for s in range(n) if s != e]))
                     for e, i in shape.extras()])
    return plan


def _reduce_scatter_plan(shape: _Shape) -> list[list[Send]]:
    node, n, p, m = shape.node, shape.n, shape.p, shape.m
    plan = []
    if shape.r:
        plan.append([Send(node[e], node[i], _whole(node, [s for s in range(n) if s != e]), True)
                     for e, i in shape.extras()])
    for k in range(m):
        d = p >> (k + 1)
        rnd = []
        for i in range(p):
            j = i ^ d
            base = j // d * d
            shards = [s for x in range(base, base + d) for s in shape.owned(x)]
            rnd.append(Send(node[i], node[j], _whole(node, shards), True))
        plan.append(rnd)
    if shape.r:
        plan.append([Send(node[i], node[e], _whole(node, [e]), True) for e, i in shape.extras()])
    return plan


def _allreduce_plan(shape: _Shape) -> list[list[Send]]:
    node, n, p, m = shape.node, shape.n, shape.p, shape.m
    everything = _whole(node, range(n))
    plan = []
    if shape.r:
        plan.append([Send(node[e], node[i], everything, True) for e, i in shape.extras()])
    for k in range(m):                       # halving: keep the half of the blocks that holds block i
        d = p >> (k + 1)
        plan.append([Send(node[i], node[i ^ d], _block_pieces(shape, (i ^ d) // d * d, d), True)
                     for i in range(p)])
    for k in range(m):                       # doubling: send the 2^k reduced blocks of the aligned group
        size = 1 << k
        plan.append([Send(node[i], node[i ^ size], _block_pieces(shape, i >> k << k, size)) for i in range(p)])
    if shape.r:
        plan.append([Send(node[i], node[e], everything) for e, i in shape.extras()])
    return plan


# ------------------------------------------------------------------------------------------------------ loads
def _loads(shape: _Shape, collective: Collective) -> list[dict]:
    """Shards per logical edge per round: the formulas of the module docstring."""
    node, n, p, r, m = shape.node, shape.n, shape.p, shape.r, shape.m
    rounds: list[dict] = []

    def extra_round(to_core: bool, amount) -> None:
        rnd: dict = {}
        for e, i in shape.extras():
            add_load(rnd, *((node[e], node[i]) if to_core else (node[i], node[e])), amount)
        rounds.append(rnd)

    def core_round(distance: int, amount_of) -> None:
        rnd: dict = {}
        for i in range(p):
            add_load(rnd, node[i], node[i ^ distance], amount_of(i))
        rounds.append(rnd)

    def extras_below(base: int, size: int) -> int:
        return min(max(r - base, 0), size)

    if collective is Collective.ALLGATHER:
        if r:
            extra_round(True, 1)
        for k in range(m):
            core_round(1 << k, lambda i, k=k: (1 << k) + extras_below(i >> k << k, 1 << k))
        if r:
            extra_round(False, n - 1)
    elif collective is Collective.REDUCE_SCATTER:
        if r:
            extra_round(True, n - 1)
        for k in range(m):
            d = p >> (k + 1)
            core_round(d, lambda i, d=d: d + extras_below((i ^ d) // d * d, d))
        if r:
            extra_round(False, 1)
    else:
        if r:
            extra_round(True, n)
        for k in range(m):
            core_round(p >> (k + 1), lambda i, k=k: Fraction(n, 1 << (k + 1)))
        for k in range(m):
            core_round(1 << k, lambda i, k=k: Fraction(n << k, p))
        if r:
            extra_round(False, n)
    return rounds


# ------------------------------------------------------------------------------------------------ public API
_PLANS = {Collective.ALLGATHER: _allgather_plan, Collective.REDUCE_SCATTER: _reduce_scatter_plan,
          Collective.ALLREDUCE: _allreduce_plan}


def build(topo: Topology, collective: Collective) -> Schedule:
    fabric = Fabric(topo)
    shape = _Shape(fabric)
    _check(fabric, shape)
    notes = {"core_ranks": shape.p, "extra_ranks": shape.r}
    schedule = realize(fabric, _PLANS[collective](shape), collective, ALGO, notes)
    if collective is Collective.ALLREDUCE:
        schedule.notes["rs_steps"] = (shape.m + (1 if shape.r else 0)) * schedule.notes["ir_steps_per_round"]
    return schedule


def closed_form(topo: Topology, collective: Collective) -> tuple[Fraction, Fraction]:
    fabric = Fabric(topo)
    shape = _Shape(fabric)
    _check(fabric, shape)
    return evaluate(fabric, _loads(shape, collective))
