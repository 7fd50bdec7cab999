"""GenTree's plan for one switch as a schedule in the IR, so that it is verified, exported and compared like every
other synthesizer (GenModel paper §4.2: at a switch whose children are servers, GenTree picks the cheapest of
Ring, RHD, co-located PS and hierarchical co-located PS under GenModel).

Hierarchical co-located PS (HCPS, §3.3) with fan-ins f_0 x ... x f_{m-1} (N = prod f_i): write rank r in mixed
radix, digit i in 0..f_i - 1 with digit 0 varying fastest; group i of r is the f_i ranks that differ from r in
digit i only. Reduce-scatter step i: every rank sends each group peer p the partial sums of the shards s it still
holds that p will keep, those agreeing with p on digits 0..i (prod_{j>i} f_j shards, S/P_i of data); p adds them
(fan-in f_i). After step m-1 rank r holds shard r fully reduced. The allgather runs the steps backwards, copying:
in step i every rank sends each peer the shards it has gathered so far, those agreeing with it on digits 0..i.
m = 1 is co-located PS (every rank sends every other its shard: ``solvers.baselines.direct``). An allreduce is the
reduce-scatter then the allgather: 2m logical steps, as the 2m alpha of Table 2's HCPS row.

Every logical send is routed like the baselines' (``solvers.baselines.fabric``: a direct link, or a path through
switches only), so this applies wherever every ordered pair of compute nodes is such a logical edge: a complete
graph, or servers on one switch. Ring and RHD choices are the baselines' own schedules.

The choice itself is GenModel's (``best_plan``) for N servers and the vector's size in floats, with the given
parameters (the paper's Table 5 Middle-SW + Server rows by default): the topology's own link bandwidths price the
schedule afterwards (alpha-beta, or ``--cost genmodel``) but do not enter the choice.
"""
from __future__ import annotations

from math import prod

from topologies.model import Topology

from ..baselines import BASELINES
from ..baselines.fabric import Fabric, Send, need_all_pairs, need_two, realize
from ..core.errors import NotApplicable
from ..core.schedule import ONE, ZERO, Collective, Schedule
from .params import FLOAT_BYTES, PRESETS, GenModelParams
from .plans import best_plan

ALGO = "gentree"
DEFAULT_BYTES = 4e8                       # 1e8 floats, the size of the paper's CPU-testbed table
LOWERED = ("cps", "ring", "rhd", "hcps")


def _digits(rank: int, fanins: tuple[int, ...]) -> tuple[int, ...]:
    out = []
    for f in fanins:
        out.append(rank % f)
        rank //= f
    return tuple(out)


def _peers(r: int, i: int, fanins: tuple[int, ...], digits) -> list[int]:
    stride = prod(fanins[:i])
    return [r + (d - digits[r][i]) * stride for d in range(fanins[i]) if d != digits[r][i]]


def hcps_rounds(fanins: tuple[int, ...], collective: Collective) -> list[list[tuple[int, int, list[int], bool]]]:
    """The logical rounds of HCPS over ranks 0..N-1: (sender, receiver, shards, reduce) per send."""
    n = prod(fanins)
    digits = [_digits(r, fanins) for r in range(n)]

    def agree(s: int, p: int, upto: int) -> bool:
        return digits[s][:upto + 1] == digits[p][:upto + 1]

    rs = [[(r, p, [s for s in range(n) if agree(s, p, i)], True)
           for r in range(n) for p in _peers(r, i, fanins, digits)] for i in range(len(fanins))]
    ag = [[(r, p, [s for s in range(n) if agree(s, r, i)], False)
           for r in range(n) for p in _peers(r, i, fanins, digits)] for i in reversed(range(len(fanins)))]
    return {Collective.REDUCE_SCATTER: rs, Collective.ALLGATHER: ag, Collective.ALLREDUCE: rs + ag}[collective]


def hcps_schedule(topo: Topology, fanins: tuple[int, ...], collective: Collective) -> Schedule:
    """HCPS with ``fanins`` on ``topo`` (module docstring)."""
    fabric = Fabric(topo)
    need_two(fabric, ALGO)
    ranks = list(fabric.ranks)
    if prod(fanins) != len(ranks):
        raise NotApplicable(f"HCPS {'x'.join(map(str, fanins))} needs {prod(fanins)} compute nodes, "
                            f"not {len(ranks)}")
    plan = []
    for rnd in hcps_rounds(tuple(fanins), collective):
        sends = []
        for a, b, shards, reduce in rnd:
            u, v = ranks[a], ranks[b]
            if not fabric.linked(u, v):
                raise NotApplicable(f"{ALGO} needs every pair of compute nodes adjacent: "
                                    f"{fabric.missing(u, v, both_ways=False)}")
            sends.append(Send(u, v, tuple((ranks[s], ZERO, ONE) for s in shards), reduce))
        plan.append(sends)
    schedule = realize(fabric, plan, collective, ALGO, {"fanins": list(fanins)})
    if collective is Collective.ALLREDUCE:
        schedule.notes["rs_steps"] = len(fanins) * schedule.notes["ir_steps_per_round"]
    return schedule


def gentree_schedule(topo: Topology, collective: Collective | str, total_bytes: float | None = None,
                     params: GenModelParams | None = None) -> Schedule:
    """GenTree on one switch (or a complete graph): GenModel's best plan for N servers and M = ``total_bytes``
    (4e8 bytes by default), built in the IR. Other fabrics raise NotApplicable."""
    coll = collective if isinstance(collective, Collective) else Collective.parse(collective)
    if coll not in (Collective.ALLGATHER, Collective.REDUCE_SCATTER, Collective.ALLREDUCE):
        raise NotApplicable(f"{ALGO} builds allgather, reduce_scatter and allreduce, not {coll.value}")
    ranks = need_all_pairs(Fabric(topo), ALGO, f"{ALGO} is lowered for one switch or a complete graph (every "
                           "pair adjacent)", "; the GenModel page plans trees")
    size = (DEFAULT_BYTES if total_bytes is None else total_bytes) / FLOAT_BYTES
    ranking = best_plan(len(ranks), size, params or PRESETS["middle_sw+server"])
    chosen = next(c for c in ranking.costs if c.kind in LOWERED)
    if chosen.kind in ("cps", "hcps"):
        schedule = hcps_schedule(topo, tuple(chosen.fanins) or (len(ranks),), coll)
    else:
        schedule = BASELINES[chosen.kind].build(topo, coll)
    schedule.algo = ALGO
    schedule.notes.update({"plan": chosen.label, "plan_kind": chosen.kind,
                           "genmodel_allreduce_s": chosen.total, "size_floats": size})
    return schedule
