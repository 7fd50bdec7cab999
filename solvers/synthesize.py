"""One entry point for every schedule: look the synthesizer up in the registry, build, verify, cost.

Every schedule that leaves this module has passed the verifier (``solvers.core.verify``); a schedule that fails
is a bug of its algorithm and raises ScheduleError instead of being shown, exported or counted. The synthesizers
themselves are declared in their wings (``solvers/<wing>/synthesizers.py``, see ``solvers.registry``).
"""
from __future__ import annotations

from dataclasses import dataclass
from typing import Any, Mapping

from topologies.model import Topology

from .core.cost import Cost, cost
from .core.detail import Detail
from .core.errors import NotApplicable, ScheduleError
from .core.schedule import Collective, Schedule, rooted_request
from .core.verify import Verification, verify
from .registry import ALGORITHMS, Progress, Synthesizer, Work, get

__all__ = ["ALGORITHMS", "Result", "synthesize"]


@dataclass
class Result:
    """A verified schedule with its costs and its synthesizer's typed ``detail`` (None when it has nothing to
    add). ``topology`` is the fabric the schedule runs on (TACOS's is the unwound one). ``as_dict(workload=W)``
    adds the runtime model's time, algbw, busbw, pipelining depth and lower bound for the workload W
    (``solvers.runtime.Workload``: M and its prices), which it names, and the step model as the second figure
    ``step_model_us``; ``as_dict(M)`` is the same with the fabric's own link prices."""

    topology: Topology
    schedule: Schedule
    verification: Verification
    cost: Cost
    detail: Detail | None = None
    options: Any = None             # the synthesizer's Options instance it ran with

    def as_dict(self, total_bytes: float | None = None, workload=None) -> dict:
        detail = self.detail or Detail()
        out = {"algo": self.schedule.algo, "collective": self.schedule.collective.value,
               **({} if self.schedule.root is None else {"root": self.topology.names[self.schedule.root]}),
               "topology": self.topology.expr, **self.cost.as_dict(), "verified": self.verification.ok,
               "transfers": self.schedule.count, **detail.leading_fields(),
               "bw_optimal": self.cost.tb_factor == self.cost.tb_lower_bound, **detail.fields(self)}
        if workload is None and total_bytes is not None:
            from .runtime import Workload

            workload = Workload(total_bytes, "links")
        if workload is not None:
            out.update(workload.figures(self))
            out.update(detail.timed_fields(self, workload.total_bytes))
        return out


def bytes_for(synth: type[Synthesizer], topo: Topology, total_bytes: float | None) -> float | None:
    """The M a build of ``synth`` on ``topo`` is told: ``total_bytes`` where the schedule depends on it
    (``Synthesizer.uses_bytes``), else None, so that one question gets one schedule from every door."""
    return total_bytes if total_bytes is not None and synth.uses_bytes(topo) else None


def resolve_root(topo: Topology, root: int | str | None) -> int:
    """The node index of a rooted collective's root: a compute node's name, or its rank (position among the
    compute nodes, which is its index on a fabric without switches); 0 when None. NotApplicable with one line
    for anything else."""
    comp = topo.compute_nodes
    if root is None:
        root = 0
    if isinstance(root, str):
        text = root.strip()
        if text.isdigit():
            root = int(text)
        elif text in topo.names and topo.is_compute(topo.names.index(text)):
            return topo.names.index(text)
        else:
            raise NotApplicable(f"root {text[:40]!r} is not a GPU of {topo.name or topo.expr or 'the topology'} "
                                f"(give a rank 0..{len(comp) - 1} or a compute node's name)")
    if isinstance(root, bool) or not isinstance(root, int) or not 0 <= root < len(comp):
        raise NotApplicable(f"root {root!r} is not a rank of the topology (0..{len(comp) - 1})")
    return comp[root]


def synthesize(topo: Topology, algo: str | type[Synthesizer], collective: Collective | str,
               progress: Progress | None = None, total_bytes: float | None = None,
               options: Mapping[str, Any] | Any = None, root: int | str | None = None) -> Result:
    """Build ``collective`` on ``topo`` with the synthesizer ``algo`` (a registered name or class), verify it and
    cost it.

    ``options`` is the synthesizer's ``Options`` instance or a mapping of its field names (unknown names and
    values out of bounds raise NotApplicable). ``total_bytes`` is the vector size M when the synthesizer's choice
    depends on it (BFB solves LP (14) for it on links with alpha, GenTree picks its plan, TACOS and TE-CCL size
    their chunks); the others are not told it (``bytes_for``). ``progress(phase, fraction)`` hears about long
    work. Raises NotApplicable (with the reason) when the algorithm does not fit the topology or collective, and
    ScheduleError when the schedule it built fails verification; a design of fewer than two GPUs is
    NotApplicable before any synthesizer runs (as ``fail(...)`` refuses to make one, ``topologies.failures``).
    ``root`` (rooted collectives only; default rank 0) is a rank or a compute node's name (``resolve_root``); a
    collective given as text may carry it after an ``@`` (``"broadcast@3"``, ``core.schedule.rooted_request``).
    """
    if not isinstance(collective, Collective):
        collective, named = rooted_request(collective)
        root = named if root is None else root
    synth = algo if isinstance(algo, type) else get(algo)
    if len(topo.compute_nodes) < 2:
        raise NotApplicable(f"{topo.name or topo.expr or 'the design'} has {len(topo.compute_nodes)} GPU"
                            f"{'' if len(topo.compute_nodes) == 1 else 's'}: a collective needs two or more")
    chosen = synth.options_from(options)
    total_bytes = bytes_for(synth, topo, total_bytes)
    node = None
    if collective.rooted:
        if not synth.builds(collective):
            serves = ", ".join(c.value for c in Collective.every() if synth.builds(c))
            raise NotApplicable(f"{synth.name} does not build {collective.value} (it builds {serves})")
        node = resolve_root(topo, root)
    elif root is not None:
        raise NotApplicable(f"{collective.value} has no root (--root is for broadcast, reduce, gather, scatter)")
    built = synth().build(topo, collective, chosen, Work(total_bytes, progress, node))
    fabric, schedule = built.topology or topo, built.schedule
    if collective.rooted and (schedule.root is None
                              or fabric.names[schedule.root] != topo.names[node]):
        raise ScheduleError(f"{synth.name} returned a {collective.value} without the root asked for "
                            f"({topo.names[node]})")
    schedule.algo = synth.name
    if progress is not None:
        progress("verify", 0.0)
    verification = verify(fabric, schedule)
    verification.raise_if_failed()
    return Result(fabric, schedule, verification, cost(fabric, schedule), built.detail, chosen)
