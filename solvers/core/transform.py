"""Schedule transforms: reversal (allgather <-> reduce-scatter) and composition into allreduce.

Direct-connect paper Def 5 and Theorem 1 (digest section 3): for a schedule A on G with t_max steps, the reverse
A^T sends ((v,C),(w,u), t_max - t + 1) on the transpose G^T for every ((v,C),(u,w),t) in A; an allgather becomes a
reduce-scatter and back, with the same T_L and T_B. ``Topology.transpose`` keeps link indices, so the reverse
schedule names the same links. Cor. 1.1: the reduce-scatter on G is the reverse of an allgather on G^T.
Allreduce is reduce-scatter followed by allgather (section 3.4).
"""
from __future__ import annotations

from dataclasses import replace
from typing import Callable

import numpy as np

from topologies.model import Topology

from .errors import NotApplicable
from .schedule import Collective, Schedule, Transfer, columns, concat, narrowest

_REVERSED = {Collective.ALLGATHER: Collective.REDUCE_SCATTER, Collective.REDUCE_SCATTER: Collective.ALLGATHER,
             Collective.BROADCAST: Collective.REDUCE, Collective.REDUCE: Collective.BROADCAST,
             Collective.GATHER: Collective.SCATTER, Collective.SCATTER: Collective.GATHER}
_REDUCES = (Collective.REDUCE_SCATTER, Collective.REDUCE)


def reverse(schedule: Schedule) -> Schedule:
    """A^T: the reverse of a schedule, valid on the transposed topology: allgather and reduce-scatter, broadcast
    and reduce (TACOS section II-A: Reduce is the inverse of Broadcast), gather and scatter (copies both ways)
    become each other; a root stays the root, a group the group."""
    if schedule.collective not in _REVERSED:
        raise ValueError(f"only allgather, reduce-scatter and the rooted collectives reverse, not "
                         f"{schedule.collective.value}")
    last = schedule.steps
    target = _REVERSED[schedule.collective]
    to_reduce = target in _REDUCES
    root = schedule.root
    cols = schedule.stored_columns()
    if cols is not None:
        step = cols.step.astype(narrowest(last + 1))
        np.subtract(last + 1, step, out=step)
        flipped = replace(cols, step=step, reduce=np.full(len(cols.step), to_reduce))
        return Schedule(target, algo=schedule.algo, notes=schedule.notes, cols=flipped, root=root,
                        group=schedule.group)
    transfers = [Transfer(t.shard, t.lo, t.hi, t.link, last - t.step + 1, to_reduce) for t in schedule.transfers]
    return Schedule(target, transfers, schedule.algo, dict(schedule.notes), root=root, group=schedule.group)


def compose_allreduce(rs: Schedule, ag: Schedule) -> Schedule:
    """Allreduce = the reduce-scatter, then the allgather shifted to start after its last step."""
    return _composed([rs, ag], release=False)


def join_allreduce(phases: list[Schedule]) -> Schedule:
    """``compose_allreduce(*phases)`` for ``phases`` = [reduce-scatter, allgather] handed over by the caller: the
    list is emptied and each phase's columns are let go as soon as they are copied into the allreduce's, so the
    join holds the allreduce and at most one column of one phase beside it (not both phases and their
    concatenation). A phase the caller still holds elsewhere keeps its columns; only the memory is not freed."""
    if len(phases) != 2:
        raise ValueError("join_allreduce takes [reduce-scatter, allgather]")
    return _composed(phases, release=True)


def _composed(phases: list[Schedule], release: bool) -> Schedule:
    rs, ag = phases
    if release:
        phases.clear()
    if rs.collective is not Collective.REDUCE_SCATTER or ag.collective is not Collective.ALLGATHER:
        raise ValueError("compose_allreduce takes a reduce-scatter and an allgather")
    shift, algo = rs.steps, ag.algo or rs.algo
    if rs.stored_columns() is not None or ag.stored_columns() is not None:
        a, b = columns(rs, compact=True), columns(ag, compact=True)
        if a is not None and b is not None:
            if release:
                del rs, ag          # the phases now live only in a and b, which concat lets go of
            steps = b.step.astype(narrowest(shift + int(b.step.max(initial=0))))
            np.add(steps, shift, out=steps)
            parts = [a, replace(b, step=steps)]
            del a, b, steps
            return Schedule(Collective.ALLREDUCE, algo=algo, notes={"rs_steps": shift},
                            cols=concat(parts, release=release))
    transfers = list(rs.transfers) + [t._replace(step=t.step + shift) for t in ag.transfers]
    return Schedule(Collective.ALLREDUCE, transfers, algo, {"rs_steps": shift})


AllgatherBuilder = Callable[[Topology], Schedule]


def build_collective(topo: Topology, collective: Collective, allgather: AllgatherBuilder) -> Schedule:
    """Any of the three collectives on ``topo`` from an allgather builder (Cor. 1.1 for reduce-scatter)."""
    if collective is Collective.ALLGATHER:
        return allgather(topo)
    if collective not in (Collective.REDUCE_SCATTER, Collective.ALLREDUCE):
        raise NotApplicable(f"an allgather builder gives allgather, reduce-scatter and allreduce, not "
                            f"{collective.value} (all-to-all and custom demands come from teccl)")
    phases = [reverse(allgather(topo.transpose()))]     # held only by the list, which join_allreduce empties
    if collective is Collective.REDUCE_SCATTER:
        return phases[0]
    phases.append(allgather(topo))
    return join_allreduce(phases)
