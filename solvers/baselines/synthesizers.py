"""The baselines' synthesizers: NCCL's multi-ring (``multiring``), one shortest-path broadcast tree per node,
and the textbook algorithms of ``solvers.baselines`` (unidirectional ring, ShiftedRing, NCCL's double binary tree,
recursive halving/doubling, direct, the hierarchical allreduce), each building its collectives itself."""
from __future__ import annotations

from dataclasses import dataclass

from ..core.detail import Detail
from ..core.errors import NotApplicable
from ..core.schedule import Collective
from ..core.transform import build_collective
from ..registry import AllgatherSynthesizer, Built, NoOptions, Synthesizer, option, register
from . import BASELINES, rooted, routed
from .multiring import multiring_allgather
from .sptree import sptree_allgather

_PHASED = frozenset({Collective.ALLGATHER, Collective.REDUCE_SCATTER, Collective.ALLREDUCE})


@dataclass
class RingDetail(Detail):
    """The multi-ring's channels: how many rings, the most the topology allows (direct-connect), how the search
    ended, and the ring bandwidth of ``multiring`` (the busbw the rings reach when pipelined, in GB/s)."""

    rings: int
    max_rings: int | None
    search: str
    ring_busbw_gbs: float

    def leading_fields(self) -> dict:
        out = {"rings": self.rings}
        if self.max_rings is not None:
            out["max_rings"] = self.max_rings
        return {**out, "ring_search": self.search, "ring_busbw_GBps": self.ring_busbw_gbs}

    def compare_note(self) -> str:
        bound = f" of {self.max_rings}" if self.max_rings is not None else ""
        routed = f" ({self.search})" if self.search.startswith("no Hamiltonian") else ""
        return f"{self.rings}{bound} rings, ring busbw {self.ring_busbw_gbs:.4g} GB/s{routed}"


@dataclass
class RingOptions:
    order: str = option("nccl", "ring order: nccl (link-disjoint Hamiltonian rings, one per NIC on switched "
                                "fabrics) or npu (one ring over the NPUs in index order, each edge routed on a "
                                "shortest path: TACOS's naive Ring baseline, its Tables I and III)",
                        choices=("nccl", "npu"), flag="--ring-order", key="ring_order", label="Ring order")


def _ring(order: str):
    return routed.npu_order_ring_allgather if order == "npu" else multiring_allgather


@register
class Ring(AllgatherSynthesizer):
    name = "ring"
    summary = ("NCCL's multi-ring: as many link-disjoint Hamiltonian rings as the topology allows (one per NIC "
               "on switched fabrics), each carrying its share of the buffer")
    paper = "NCCL ring channels (baselines)"
    rank = 10
    Options = RingOptions

    def allgather(self, topo, options, work, progress):
        return _ring(options.order)(topo)

    def build(self, topo, collective: Collective, options, work) -> Built:
        """As every allgather synthesizer, then the ring notes of the phases on the whole schedule: for an
        allreduce the ring bandwidth is the harmonic mean of its two phases' (each phase's time is
        (N-1)/N M / its ring bandwidth, and busbw counts both phases)."""
        phases = []

        def builder(g):
            schedule = _ring(options.order)(g)
            phases.append(schedule.notes)
            return schedule
        schedule = build_collective(topo, collective, builder)
        if collective is Collective.ALLREDUCE:
            rs, ag = phases
            schedule.notes = {**ag, **schedule.notes, "rings": max(rs["rings"], ag["rings"]),
                              "ring_busbw_gbs": 2 / (1 / rs["ring_busbw_gbs"] + 1 / ag["ring_busbw_gbs"])}
        notes = schedule.notes
        return Built(schedule, detail=RingDetail(notes["rings"], notes.get("max_rings"), notes["ring_search"],
                                                 notes["ring_busbw_gbs"]))


@register
class ShortestPathTrees(AllgatherSynthesizer):
    name = "sptree"
    summary = ("one shortest-path broadcast tree per node, D(G) steps; broadcast and reduce: the root's tree, "
               "its eccentricity in steps")
    paper = "textbook broadcast trees (baselines)"
    rank = 40
    collectives = _PHASED | {Collective.BROADCAST, Collective.REDUCE}

    def allgather(self, topo, options, work, progress):
        return sptree_allgather(topo)

    def build(self, topo, collective: Collective, options, work) -> Built:
        if collective.rooted:
            return Built(rooted.sptree(topo, collective, work.root))
        return super().build(topo, collective, options, work)


@dataclass(frozen=True)
class ChainOptions:
    pieces: int = option(8, "pieces of the buffer that follow each other down the chain", minimum=1, maximum=1024,
                         page_maximum=64, label="Pieces")


@register
class Chain(Synthesizer):
    name = "chain"
    summary = "a pipelined chain from the root (NCCL's ring broadcast) for broadcast and reduce"
    paper = "textbook pipelined broadcast (baselines)"
    rank = 41
    collectives = frozenset({Collective.BROADCAST, Collective.REDUCE})
    Options = ChainOptions

    def build(self, topo, collective: Collective, options: ChainOptions, work) -> Built:
        return Built(rooted.chain(topo, collective, work.root, options.pieces))


@register
class Binomial(Synthesizer):
    name = "binomial"
    summary = "the binomial tree over ranks from the root (MPI's broadcast) for broadcast and reduce"
    paper = "textbook binomial tree (baselines)"
    rank = 42
    collectives = frozenset({Collective.BROADCAST, Collective.REDUCE})
    Options = NoOptions

    def build(self, topo, collective: Collective, options, work) -> Built:
        return Built(rooted.binomial(topo, collective, work.root))


class _Textbook(Synthesizer):
    """A baseline of ``solvers.baselines.BASELINES``: it builds each collective natively (``direct`` also the
    rooted ones it has, ``rooted.direct``)."""

    paper = "textbook algorithms (baselines)"

    def build(self, topo, collective: Collective, options, work) -> Built:
        if collective.rooted:
            return Built(rooted.direct(topo, collective, work.root))
        try:
            return Built(BASELINES[self.name].build(topo, collective))
        except NotApplicable:
            if self.name != "direct" or collective not in _PHASED:
                raise
            return Built(routed.phased(topo, collective, rooted.direct_allgather))   # not every pair linked


def _textbook(name: str, rank: int) -> type[Synthesizer]:
    serves = _PHASED | (set(Collective.rooted_ones()) if name == "direct" else set())   # reduce: says why not
    cls = type(f"Baseline_{name}", (_Textbook,), {"name": name, "summary": BASELINES[name].summary, "rank": rank,
                                                  "collectives": frozenset(serves)})
    return register(cls)


for _rank, _name in enumerate(("ring_uni", "shifted_ring", "dbt", "rhd", "direct", "hierarchical"), start=20):
    _textbook(_name, _rank)
