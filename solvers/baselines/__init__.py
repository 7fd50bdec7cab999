"""The textbook baselines as schedules in the IR, for any topology that fits, with their closed-form costs.

``BASELINES[name]`` is a ``Baseline``: ``build(topo, collective, **options)`` returns the schedule (allgather,
reduce-scatter or allreduce) and ``closed_form(topo, collective, **options)`` its alpha-beta cost
``(steps, tb_factor)`` as exact Fractions, equal to ``solvers.core.cost.cost(topo, build(...))``'s steps and tb_factor
but computed from the algorithm's analytic loads without building transfers (each module's docstring states
the formulas). A topology that does not fit raises ``NotApplicable`` with a one-line reason naming the missing
pair or structure.

=================  ====================================================================================
``ring_uni``       one directed Hamiltonian cycle, one direction (``rings``)
``ring_bi``        the cycle both ways, half a shard each: ``solvers.baselines.hamiltonian`` (``rings`` on switched fabrics)
``shifted_ring``   ShiftedRing: two edge-disjoint Hamiltonian cycles, each a bidirectional ring on half the data
``dbt``            NCCL's double binary tree: reduce up both trees, broadcast down; option ``chunks`` (pipelining)
``rhd``            recursive halving (RS) and doubling (AG); Rabenseifner's AR; fold/unfold for N != 2^m
``direct``         every node sends straight to every other (co-located PS): 1 round, 2 for allreduce
``hierarchical``   allreduce on multi-box fabrics: ring reduce-scatter in the box, ring allreduce across the
                   boxes, ring allgather in the box (Horovod's hierarchical allreduce)
=================  ====================================================================================

Ring, ShiftedRing and DBT's reduce-scatter are the reverse of their allgather on the transpose, and the ring
allreduces are reduce-scatter then allgather (``solvers.core.transform``); DBT's allreduce and all of RHD and direct
are built natively so that their structure is the textbook one.

Fabrics (``fabric``). A baseline is written over logical edges between compute nodes; each is a direct link, or
where there is none the shortest path through switches only. A round then takes H IR steps, H the longest path
used: 1 on direct-connect topologies, 2 for GPUs around one switch (``tests.helpers.star``,
``dgx_a100(boxes=1)``: up to the switch, then forwarded down, since a switch stores and forwards in a later
step and never copies). So on a single switch every baseline takes twice the textbook's steps, and T_B counts
both hops: on star(N) (B = b) a round whose busiest node sends and receives x shards costs x/N up plus x/N
down. Ring allgather: 2(N-1) steps, tb 2(N-1)/N; direct allgather: 2 steps, 2(N-1)/N; RHD allreduce for
N = 2^m: 4m steps, 4(N-1)/N.
"""
from __future__ import annotations

from dataclasses import dataclass
from fractions import Fraction
from typing import Callable

from topologies.model import Topology

from ..core.errors import NotApplicable
from ..core.schedule import Collective, Schedule
from . import dbt, direct, hierarchical, rhd, rings

_BUILT = (Collective.ALLGATHER, Collective.REDUCE_SCATTER, Collective.ALLREDUCE)


def _collective(collective: Collective | str) -> Collective:
    coll = collective if isinstance(collective, Collective) else Collective.parse(collective)
    if coll not in _BUILT:
        raise NotApplicable(f"the baselines build allgather, reduce_scatter and allreduce, not {coll.value}")
    return coll


@dataclass(frozen=True)
class Baseline:
    """One textbook algorithm: ``build`` and ``closed_form`` take (topo, collective, **options)."""

    name: str
    summary: str
    _build: Callable[..., Schedule]
    _closed_form: Callable[..., tuple[Fraction, Fraction]]
    options: tuple[str, ...] = ()

    def build(self, topo: Topology, collective: Collective | str, **options) -> Schedule:
        """The schedule of ``collective`` on ``topo``; NotApplicable where the topology does not fit."""
        self._check_options(options)
        schedule = self._build(topo, _collective(collective), **options)
        schedule.algo = self.name
        return schedule

    def closed_form(self, topo: Topology, collective: Collective | str, **options) -> tuple[Fraction, Fraction]:
        """(steps, tb_factor) of ``build(topo, collective)`` by the algorithm's formulas, exact."""
        self._check_options(options)
        steps, tb = self._closed_form(topo, _collective(collective), **options)
        return Fraction(steps), Fraction(tb)

    def _check_options(self, options: dict) -> None:
        unknown = sorted(set(options) - set(self.options))
        if unknown:
            takes = f"takes {', '.join(self.options)}" if self.options else "takes no options"
            raise NotApplicable(f"{self.name} {takes}, not {', '.join(unknown)}")


BASELINES: dict[str, Baseline] = {b.name: b for b in [
    Baseline("ring_uni", "ring in one direction around a Hamiltonian cycle, N-1 steps per phase",
             rings.build_ring_uni, rings.closed_form_ring_uni),
    Baseline("ring_bi", "bidirectional ring: the cycle both ways, half a shard each (solvers.baselines.hamiltonian)",
             rings.build_ring_bi, rings.closed_form_ring_bi),
    Baseline("shifted_ring", "ShiftedRing: two edge-disjoint Hamiltonian cycles, each a bidirectional ring on "
             "half the data", rings.build_shifted_ring, rings.closed_form_shifted_ring),
    Baseline("dbt", "NCCL double binary tree: reduce up both trees, broadcast down, half the data each",
             dbt.build, dbt.closed_form, ("chunks",)),
    Baseline("rhd", "recursive halving and doubling (Rabenseifner), 2 ceil(log2 N) allreduce steps",
             rhd.build, rhd.closed_form),
    Baseline("direct", "every node sends straight to every other (co-located PS), 1 step per phase",
             direct.build, direct.closed_form),
    Baseline("hierarchical", "hierarchical allreduce: ring reduce-scatter in each box, ring allreduce across the "
             "boxes, ring allgather in each box", hierarchical.build, hierarchical.closed_form),
]}


def baseline(name: str) -> Baseline:
    """The baseline called ``name``; NotApplicable naming the choices otherwise."""
    try:
        return BASELINES[name]
    except KeyError:
        raise NotApplicable(f"unknown baseline {name!r} (choose from {', '.join(BASELINES)})") from None


__all__ = ["BASELINES", "Baseline", "baseline"]
