"""The baselines' synthesizers: a ring around a Hamiltonian cycle (both ways where it can), one shortest-path
broadcast tree per node, and the textbook algorithms of ``solvers.baselines`` (unidirectional ring, ShiftedRing,
NCCL's double binary tree, recursive halving/doubling, direct), each building every collective itself."""
from __future__ import annotations

from ..core.schedule import Collective
from ..registry import AllgatherSynthesizer, Built, Synthesizer, register
from . import BASELINES
from .hamiltonian import ring_allgather
from .sptree import sptree_allgather


@register
class Ring(AllgatherSynthesizer):
    name = "ring"
    summary = "ring allgather on a directed Hamiltonian cycle (both ways where it can)"
    paper = "textbook ring (baselines)"
    rank = 10

    def allgather(self, topo, options, work, progress):
        return ring_allgather(topo)


@register
class ShortestPathTrees(AllgatherSynthesizer):
    name = "sptree"
    summary = "one shortest-path broadcast tree per node, D(G) steps"
    paper = "textbook broadcast trees (baselines)"
    rank = 40

    def allgather(self, topo, options, work, progress):
        return sptree_allgather(topo)


class _Textbook(Synthesizer):
    """A baseline of ``solvers.baselines.BASELINES``: it builds each collective natively."""

    paper = "textbook algorithms (baselines)"

    def build(self, topo, collective: Collective, options, work) -> Built:
        return Built(BASELINES[self.name].build(topo, collective))


def _textbook(name: str, rank: int) -> type[Synthesizer]:
    cls = type(f"Baseline_{name}", (_Textbook,), {"name": name, "summary": BASELINES[name].summary, "rank": rank})
    return register(cls)


for _rank, _name in enumerate(("ring_uni", "shifted_ring", "dbt", "rhd", "direct"), start=20):
    _textbook(_name, _rank)
