"""One entry point for every schedule: build it with a named algorithm, verify it, cost it.

Every schedule that leaves this module has passed the verifier (``solvers.verify``); a schedule that fails is a
bug of its algorithm and raises ScheduleError instead of being shown, exported or counted.
"""
from __future__ import annotations

from dataclasses import dataclass
from typing import Callable

from topologies.model import Topology

from .cost import Cost, cost, pipelined_factor, time_us
from .baselines import BASELINES
from .bfb import bfb_allgather, bfb_timed
from .errors import NotApplicable
from .expansion import expansion_allgather
from .genmodel.lower import gentree_schedule
from .forestcoll import collective_schedule as forestcoll_schedule, forestcoll
from .ring import ring_allgather
from .schedule import Collective, Schedule
from .sptree import sptree_allgather
from .tacos import tacos
from .teccl import collective_schedule as teccl_schedule
from .transform import build_collective
from .verify import Verification, verify


@dataclass(frozen=True)
class Algorithm:
    name: str
    allgather: Callable[..., Schedule]
    summary: str
    reports_progress: bool = False
    collective: Callable[[Topology, Collective], Schedule] | None = None   # builds every collective itself


def _baseline(name: str) -> Algorithm:
    """A textbook baseline (``solvers.baselines``): it builds each collective natively."""
    base = BASELINES[name]
    return Algorithm(name, lambda g, progress=None: base.build(g, Collective.ALLGATHER), base.summary,
                     collective=base.build)


ALGORITHMS: dict[str, Algorithm] = {a.name: a for a in [
    Algorithm("ring", ring_allgather, "ring allgather on a directed Hamiltonian cycle (both ways where it can)"),
    Algorithm("sptree", sptree_allgather, "one shortest-path broadcast tree per node, D(G) steps"),
    Algorithm("bfb", bfb_allgather, "optimal breadth-first-broadcast schedule (LP (1), solved exactly)", True),
    Algorithm("expansion", expansion_allgather,
              "follow the expression: base schedules through line/degree/power/bidir expansions"),
    Algorithm("forestcoll", lambda g, progress=None: forestcoll(g, progress=progress).allgather(),
              "throughput-optimal spanning-tree packing (ForestColl), switches and mixed bandwidths included", True),
    Algorithm("teccl", lambda g, progress=None: teccl_schedule(g, Collective.ALLGATHER, progress).schedule,
              "time-expanded multi-commodity flow (TE-CCL): MILP with copy, LP without; any demand", True),
    Algorithm("tacos", lambda g, progress=None: tacos(g, progress=(lambda p, f: progress(f)) if progress else None
                                                      ).schedule,
              "TACOS greedy link-chunk matching over the time-expanded network; switches unwound", True),
    *(_baseline(name) for name in ("ring_uni", "shifted_ring", "dbt", "rhd", "direct")),
    Algorithm("gentree", lambda g, progress=None: gentree_schedule(g, Collective.ALLGATHER),
              "GenTree on one switch: GenModel's best of ring, RHD, co-located PS and hierarchical CPS for M",
              collective=gentree_schedule),
]}


@dataclass
class Result:
    """A verified schedule with its costs."""

    topology: Topology
    schedule: Schedule
    verification: Verification
    cost: Cost
    detail: object = None           # the synthesizer's own result where it has one (TE-CCL's, for its epoch view)

    def as_dict(self, total_bytes: float | None = None) -> dict:
        out = {"algo": self.schedule.algo, "collective": self.schedule.collective.value,
               "topology": self.topology.expr, **self.cost.as_dict(), "verified": self.verification.ok,
               "transfers": self.schedule.count}
        notes = self.schedule.notes
        if "predicted_steps" in notes:
            out["predicted_steps"] = notes["predicted_steps"]
            out["predicted_tb_factor"] = float(notes["predicted_tb_factor"])
            out["predicted_tb_factor_exact"] = str(notes["predicted_tb_factor"])
            out["prediction_exact"] = notes["prediction_exact"]
        out["bw_optimal"] = self.cost.tb_factor == self.cost.tb_lower_bound
        if "report" in notes:
            out["steps_report"] = [{"step": r.step, "U": str(r.u), "receiver": r.receiver, "sources": r.sources,
                                    "in_links": r.in_links, "hall_sources": r.tight_sources,
                                    "hall_links": r.tight_links, "balanced": r.balanced} for r in notes["report"]]
        if "algbw_GBps" in notes:            # a pipelined (tree) schedule: ForestColl's flow model
            factor = pipelined_factor(self.topology, self.schedule)
            out.update({"k": notes["k"], "U": str(notes["U"]), "inv_x_star": str(notes["inv_x_star"]),
                        "algbw_GBps": float(self.topology.n / factor),
                        "optimal_allgather_algbw_GBps": float(notes["optimal_algbw_GBps"]),
                        "pipelined_factor": str(factor)})
        if "plan_kind" in notes:             # GenTree: the plan GenModel chose for this size
            out["gentree_plan"] = notes["plan"]
            out["genmodel_allreduce_s"] = notes["genmodel_allreduce_s"]
        if "tacos" in notes:                 # the greedy's continuous-time estimate beside its ingress bound
            out["tacos"] = notes["tacos"]
            out["synthesizer_time_us"] = notes["tacos"]["time_us"]
            out["synthesizer_bound_us"] = notes["tacos"]["bound_us"]
        if "teccl" in notes:                 # the time-expanded model's own clock
            out["teccl"] = notes["teccl"]
            out["transfer_time_us"] = notes["teccl"]["transfer_time_us"]
        if total_bytes is not None:
            out["bytes"] = total_bytes
            out["time_us"] = time_us(self.topology, self.schedule, total_bytes)
            if "algbw_GBps" in notes:
                out["pipelined_time_us"] = float(pipelined_factor(self.topology, self.schedule)) * total_bytes \
                    / self.topology.n / 1e3
        return out


def synthesize(topo: Topology, algo: str, collective: Collective | str,
               progress: Callable[[str, float], None] | None = None, total_bytes: float | None = None,
               fixed_k: int | None = None, teccl_options: dict | None = None,
               tacos_options: dict | None = None) -> Result:
    """Build ``collective`` on ``topo`` with algorithm ``algo``, verify it and cost it.

    Raises NotApplicable (with the reason) when the algorithm does not fit the topology, and ScheduleError
    when the produced schedule fails verification. ``progress(phase, fraction)`` hears about long work.
    With ``total_bytes`` on a topology whose links have alpha, ``bfb`` solves LP (14) for that vector size
    (App. E.3) instead of LP (1). ``fixed_k`` asks ForestColl for k trees per root (Algorithm 3).
    ``teccl_options`` go to ``solvers.teccl.teccl`` (chunks, epochs, time_limit, gap, method, epoch, ...); its
    output buffer is ``total_bytes`` when given. ``tacos_options`` go to ``solvers.tacos.tacos`` (chunks,
    restarts, seed, unwind_degree); TACOS schedules the unwound fabric, so ``Result.topology`` is that one.
    ``gentree`` picks its plan by GenModel for ``total_bytes`` (4e8 bytes when not given).
    """
    if isinstance(collective, str):
        collective = Collective.parse(collective)
    try:
        algorithm = ALGORITHMS[algo]
    except KeyError:
        raise NotApplicable(f"unknown algorithm {algo!r} (choose from {', '.join(ALGORITHMS)})") from None
    builder = algorithm.allgather
    detail = None
    if algo == "bfb" and total_bytes is not None and any(l.alpha for l in topo.links):
        def builder(g: Topology) -> Schedule:
            return bfb_timed(g, total_bytes)
    elif progress is not None and algorithm.reports_progress:
        calls = iter(range(1, 3))

        def builder(g: Topology) -> Schedule:
            phase = f"{algorithm.name} allgather {next(calls)}" if collective is Collective.ALLREDUCE else algorithm.name
            return algorithm.allgather(g, progress=lambda f: progress(phase, f))
    if fixed_k is not None and algo != "forestcoll":
        raise NotApplicable("--fixed-k applies to forestcoll only")
    if teccl_options and algo != "teccl":
        raise NotApplicable("the TE-CCL options (chunks, epochs, time limit, gap) apply to teccl only")
    if tacos_options and algo != "tacos":
        raise NotApplicable("the TACOS options (restarts, seed, unwinding) apply to tacos only")
    if algo == "tacos":
        found = tacos(topo, collective, buffer_bytes=total_bytes, progress=progress, **(tacos_options or {}))
        topo, schedule, detail = found.topology, found.schedule, found
        schedule.notes["tacos"] = found.as_dict()
    elif algo == "teccl":
        options = dict(teccl_options or {})
        if total_bytes is not None:
            options.setdefault("buffer_bytes", total_bytes)
        found = teccl_schedule(topo, collective, progress=(lambda p, f: progress(f"teccl: {p}", f))
                               if progress else None, **options)
        schedule = found.schedule
        schedule.notes["teccl"] = found.as_dict()
        detail = found
    elif algo == "forestcoll":
        schedule = forestcoll_schedule(topo, collective, fixed_k,
                                       progress=(lambda p, f: progress(f"forestcoll: {p}", f)) if progress else None)
    elif algo == "gentree":                      # the plan GenModel picks depends on the vector's size
        schedule = gentree_schedule(topo, collective, total_bytes)
    elif algorithm.collective is not None:
        schedule = algorithm.collective(topo, collective)
    else:
        schedule = build_collective(topo, collective, builder)
    schedule.algo = algorithm.name
    if progress is not None:
        progress("verify", 0.0)
    verification = verify(topo, schedule)
    verification.raise_if_failed()
    return Result(topo, schedule, verification, cost(topo, schedule), detail)
