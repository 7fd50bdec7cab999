"""The direct baseline: every node sends straight to every other (GenModel's co-located PS, notes
genmodel-gentree.md section 1.1; the one-step allgather of a complete graph).

* allgather: one round, node u sends its shard to every v.
* reduce-scatter: one round, node u sends its contribution to shard v to v, which reduces (v is the parameter
  server of its own shard).
* allreduce: the reduce-scatter round, then the allgather round (co-located PS: 2 alpha, 2(N-1)/N * S * beta).

Every ordered pair of compute nodes must be a logical edge (``fabric``): a complete graph, or GPUs on one switch.

Closed forms, B the smallest egress bandwidth of a compute node:

* complete graph of links of bandwidth b: allgather and reduce-scatter 1 step, tb = B/(N b) (= (N-1)/N on
  complete(N) with unit links, B = N-1: BW-optimal); allreduce 2 steps, tb = 2 B/(N b).
* one switch, links of bandwidth b: each round is 2 IR steps and a node's uplink (downlink) carries the N-1
  shards it sends (receives): allgather and reduce-scatter 2 steps, tb = 2(N-1)/N * B/b; allreduce 4 steps,
  tb = 4(N-1)/N * B/b (star(N): B = b, so 2(N-1)/N and 4(N-1)/N).

``fabric.evaluate`` computes these exactly on any topology from the loads (1 shard per ordered pair per round).
"""
from __future__ import annotations

from fractions import Fraction

from topologies.model import Topology

from ..core.schedule import ONE, ZERO, Collective, Schedule
from .fabric import Fabric, Send, evaluate, need_all_pairs, realize

ALGO = "direct"


def _check(fabric: Fabric) -> list[int]:
    return need_all_pairs(fabric, ALGO, f"{ALGO} needs every pair of compute nodes adjacent")


def _round(ranks: list[int], reduce: bool) -> list[Send]:
    if reduce:
        return [Send(u, v, ((v, ZERO, ONE),), True) for u in ranks for v in ranks if u != v]
    return [Send(u, v, ((u, ZERO, ONE),)) for u in ranks for v in ranks if u != v]


def _rounds(collective: Collective) -> list[bool]:
    """Whether each round reduces."""
    return {Collective.ALLGATHER: [False], Collective.REDUCE_SCATTER: [True],
            Collective.ALLREDUCE: [True, False]}[collective]


def build(topo: Topology, collective: Collective) -> Schedule:
    fabric = Fabric(topo)
    ranks = _check(fabric)
    plan = [_round(ranks, reduce) for reduce in _rounds(collective)]
    schedule = realize(fabric, plan, collective, ALGO)
    if collective is Collective.ALLREDUCE:
        schedule.notes["rs_steps"] = schedule.notes["ir_steps_per_round"]
    return schedule


def closed_form(topo: Topology, collective: Collective) -> tuple[Fraction, Fraction]:
    fabric = Fabric(topo)
    ranks = _check(fabric)
    one = {(u, v): Fraction(1) for u in ranks for v in ranks if u != v}
    return evaluate(fabric, [one for _ in _rounds(collective)])
