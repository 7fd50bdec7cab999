"""ForestColl's synthesizer: throughput-optimal spanning-tree packing on switched and mixed-bandwidth fabrics
(ForestColl sections 3-5; Algorithm 3 for a fixed k)."""
from __future__ import annotations

from dataclasses import dataclass, field
from fractions import Fraction

from ..core.cost import pipelined_factor
from ..core.detail import Detail
from ..registry import Built, Synthesizer, option, register
from . import MAX_FIXED_K, collective_schedule


@dataclass
class ForestDetail(Detail):
    """The packing's figures: k trees per root, U, the optimal 1/x* and the optimal allgather algbw N x*
    (GB/s), and the paper's flow model of the schedule (``solvers.core.cost.pipelined_factor``: every link busy
    for all it carries, no latency) as ``flow_algbw_GBps`` and ``flow_time_us``, beside the runtime model's
    figures that ``synthesize`` adds."""

    k: int
    u: Fraction
    inv_x_star: Fraction
    optimal_algbw: Fraction
    _factor: Fraction | None = field(default=None, repr=False, compare=False)

    def factor(self, result) -> Fraction:
        """The flow-model time factor of the result's schedule, computed once (it sums every link's load)."""
        if self._factor is None:
            self._factor = pipelined_factor(result.topology, result.schedule)
        return self._factor

    def fields(self, result) -> dict:
        factor = self.factor(result)
        return {"k": self.k, "U": str(self.u), "inv_x_star": str(self.inv_x_star),
                "flow_algbw_GBps": float(result.topology.n / factor),
                "optimal_allgather_algbw_GBps": float(self.optimal_algbw), "pipelined_factor": str(factor)}

    def timed_fields(self, result, total_bytes: float) -> dict:
        return {"flow_time_us": float(self.factor(result)) * total_bytes / result.topology.n / 1e3}


@dataclass(frozen=True)
class ForestcollOptions:
    fixed_k: int | None = option(None, "k trees per root (Algorithm 3) instead of the optimum", minimum=1,
                                 maximum=MAX_FIXED_K, label="Trees per root k (0 = optimal)")


@register
class ForestColl(Synthesizer):
    name = "forestcoll"
    summary = "throughput-optimal spanning-tree packing (ForestColl), switches and mixed bandwidths included"
    paper = "Zhao et al., ForestColl, sections 3-5"
    rank = 80
    reports_progress = True
    Options = ForestcollOptions

    def build(self, topo, collective, options: ForestcollOptions, work) -> Built:
        schedule = collective_schedule(topo, collective, options.fixed_k, progress=work.prefixed("forestcoll"))
        n = schedule.notes
        return Built(schedule, detail=ForestDetail(n["k"], n["U"], n["inv_x_star"], n["optimal_algbw_GBps"]))
