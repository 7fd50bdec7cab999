"""TE-CCL for the rooted collectives and for several copy collectives at once (TE-CCL section 5, "Use in
multi-tenant clusters": the demand is the sum of the tenants' demands and the links' capacity is shared).

Each part (a tenant, or the one collective) is given chunks of its sources in one TE-CCL demand (``Demand``,
triples (source, chunk, destination)); a chunk several destinations want is a multicast, which the MILP with copy
serves (section 4):

* broadcast from r, k chunks: r's chunks j, wanted by every other GPU;
* gather to r: every GPU s's chunks j, wanted by r; scatter from r: r's chunks (j, s), each wanted by s;
* allgather: every GPU s's chunks j, wanted by every other GPU.

Every source's chunks are numbered across the parts (C = the most any source has), and each chunk remembers the
part and the pieces of that part's own schedule it stands for: a broadcast's chunk j is part [j/k, (j+1)/k) of
every one of the N shards (``solvers.core.schedule``), a gather's or scatter's chunk (j, s) that part of shard s.
The solved schedule (custom, verified against the summed demand) is then cut into one schedule per part, each
verified on its own collective's postcondition. A reduce is the broadcast on the transposed fabric run backwards
(``core.transform.reverse``); reductions have no place in a joint TE-CCL demand (its flows copy), so reduce,
reduce-scatter and allreduce tenants go to TACOS's joint synthesis or to ``--mode separate``.
"""
from __future__ import annotations

from fractions import Fraction

from topologies.model import Topology

from ..core.errors import NotApplicable
from ..core.schedule import Collective, Schedule, Transfer
from ..core.transform import reverse
from ..core.verify import check
from .instance import MAX_DEMAND_CHUNKS, Demand

Part = tuple  # (collective, root node or None, chunks k[, group: node indices or None for every compute node])


def joint_demand(topo: Topology, parts: list[Part]) -> tuple[Demand, dict[tuple[int, int], tuple[int, list]]]:
    """(the summed demand, per (source, chunk) the part and the pieces (shard, lo, hi) it stands for)."""
    count: dict[int, int] = {s: 0 for s in topo.compute_nodes}
    wants: list[tuple[int, int, int]] = []
    meaning: dict[tuple[int, int], tuple[int, list]] = {}

    def new(source: int, part: int, pieces: list, dests) -> None:
        c = count[source]
        count[source] += 1
        meaning[(source, c)] = (part, pieces)
        wants.extend((source, c, d) for d in dests if d != source)

    for p, (coll, root, k, *rest) in enumerate(parts):
        group = rest[0] if rest else None
        gpus = list(topo.compute_nodes) if group is None else sorted(group)
        spans = [(Fraction(j, k), Fraction(j + 1, k)) for j in range(k)]
        for lo, hi in spans:
            if coll is Collective.BROADCAST:
                new(root, p, [(s, lo, hi) for s in gpus], gpus)
            elif coll is Collective.ALLGATHER:
                for s in gpus:
                    new(s, p, [(s, lo, hi)], gpus)
            elif coll is Collective.GATHER:
                for s in gpus:
                    if s != root:
                        new(s, p, [(s, lo, hi)], [root])
            elif coll is Collective.SCATTER:
                for s in gpus:
                    if s != root:
                        new(root, p, [(s, lo, hi)], [s])
            else:
                raise NotApplicable(f"TE-CCL's joint demand copies; a {coll.value} reduces (synthesize it with tacos "
                                    f"jointly, or each tenant apart with --mode separate)")
    chunks = max(count.values())
    if chunks > MAX_DEMAND_CHUNKS:
        raise NotApplicable(f"a source has {chunks} chunks in the joint demand, more than {MAX_DEMAND_CHUNKS}")
    return Demand(Collective.CUSTOM, chunks, tuple(sorted(wants))), meaning


def split(schedule: Schedule, demand: Demand, meaning, parts: list[Part], algo: str) -> list[Schedule]:
    """The solved custom schedule cut into one schedule per part (module docstring)."""
    C = demand.chunks
    rows: list[list[Transfer]] = [[] for _ in parts]
    for t in schedule.transfers:
        c = t.lo * C
        if c.denominator != 1 or t.hi * C != c + 1:
            raise NotApplicable("a TE-CCL transfer does not carry one whole chunk")
        part, pieces = meaning[(t.shard, int(c))]
        rows[part].extend(Transfer(s, lo, hi, t.link, t.step, False) for s, lo, hi in pieces)
    return [Schedule(part[0], r, algo, dict(schedule.notes), root=part[1], group=part[3] if len(part) > 3 else None)
            for part, r in zip(parts, rows)]


def solve_parts(topo: Topology, parts: list[Part], chunk_bytes, progress=None, **options):
    """(the TE-CCL result on the summed demand, one verified schedule per part)."""
    from . import teccl

    demand, meaning = joint_demand(topo, parts)
    found = teccl(topo, Collective.CUSTOM, chunk_bytes=chunk_bytes, demand=demand, progress=progress, **options)
    schedules = split(found.schedule, demand, meaning, parts, "teccl")
    for s in schedules:
        check(topo, s)
    return found, schedules


def rooted_schedule(topo: Topology, collective: Collective, root: int, chunks: int = 1, buffer_bytes=None,
                    progress=None, **options):
    """(TE-CCL's result, the verified schedule) of one rooted collective; a reduce is the broadcast on G^T run
    backwards. The chunk is M / k for broadcast and reduce, M / (N k) for gather and scatter."""
    from . import DEFAULT_BUFFER_BYTES

    buffer = Fraction(DEFAULT_BUFFER_BYTES if buffer_bytes is None else buffer_bytes)
    if collective is Collective.REDUCE:
        found, [bcast] = solve_parts(topo.transpose(), [(Collective.BROADCAST, root, chunks)], buffer / chunks,
                                     progress, **options)
        schedule = reverse(bcast)
        check(topo, schedule)
        return found, schedule
    size = buffer / chunks if collective is Collective.BROADCAST else buffer / (chunks * topo.n)
    found, [schedule] = solve_parts(topo, [(collective, root, chunks)], size, progress, **options)
    return found, schedule
