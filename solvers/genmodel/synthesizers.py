"""GenTree's synthesizer on one switch or a complete graph: GenModel's best plan for the vector size (ring, RHD,
co-located PS or hierarchical CPS f_0 x ... x f_{m-1}) lowered into the IR (GenModel paper sections 4-5)."""
from __future__ import annotations

from dataclasses import dataclass

from ..core.detail import Detail
from ..registry import Built, Synthesizer, register
from .lower import gentree_schedule


@dataclass
class GentreePlan(Detail):
    """The plan GenModel chose for this size and its modelled AllReduce time (seconds)."""

    plan: str
    allreduce_s: float

    def fields(self, result) -> dict:
        return {"gentree_plan": self.plan, "genmodel_allreduce_s": self.allreduce_s}


@register
class GenTree(Synthesizer):
    name = "gentree"
    summary = "GenTree on one switch: GenModel's best of ring, RHD, co-located PS and hierarchical CPS for M"
    paper = "Xiong et al., Revisiting the time cost model of AllReduce, sections 4-5"
    rank = 30

    @classmethod
    def uses_bytes(cls, topo):
        return True

    def build(self, topo, collective, options, work) -> Built:
        schedule = gentree_schedule(topo, collective, work.total_bytes)    # the plan depends on M (4e8 if unknown)
        notes = schedule.notes
        detail = GentreePlan(notes["plan"], notes["genmodel_allreduce_s"]) if "plan_kind" in notes else None
        return Built(schedule, detail=detail)
