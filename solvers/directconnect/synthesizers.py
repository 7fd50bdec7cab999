"""The direct-connect paper's synthesizers: BFB (section 5, LP (1) solved exactly; LP (14) for links with
alpha, App. E.3) and the expansion schedules that follow an expression through line-graph, degree and
Cartesian-power expansions (section 6, with the theorems' predicted steps and tb_factor)."""
from __future__ import annotations

from dataclasses import dataclass

from ..core.detail import Detail
from ..core.errors import NotApplicable
from ..core.schedule import Collective
from ..registry import AllgatherSynthesizer, option, register
from .bfb import bfb_allgather, bfb_chunked, bfb_timed, shared_workers
from .expansion import expansion_allgather


@dataclass
class DirectConnectDetail(Detail):
    """What BFB and the expansions report beside the schedule: the expansion theorems' prediction of steps and
    tb_factor (``predicted``: steps, tb_factor, whether the theorem is exact) and why each BFB step costs what
    it costs (``report``: the bottleneck receiver's U and Hall set per step, Theorem 19)."""

    predicted: tuple | None = None
    report: list | None = None

    @classmethod
    def of(cls, notes: dict) -> "DirectConnectDetail | None":
        predicted = (notes["predicted_steps"], notes["predicted_tb_factor"], notes["prediction_exact"]) \
            if "predicted_steps" in notes else None
        report = notes.get("report")
        return cls(predicted, report) if predicted is not None or report is not None else None

    def leading_fields(self) -> dict:
        if self.predicted is None:
            return {}
        steps, tb, exact = self.predicted
        return {"predicted_steps": steps, "predicted_tb_factor": float(tb), "predicted_tb_factor_exact": str(tb),
                "prediction_exact": exact}

    def fields(self, result) -> dict:
        if self.report is None:
            return {}
        return {"steps_report": [{"step": r.step, "U": str(r.u), "receiver": r.receiver, "sources": r.sources,
                                  "in_links": r.in_links, "hall_sources": r.tight_sources,
                                  "hall_links": r.tight_links, "balanced": r.balanced} for r in self.report]}


@dataclass(frozen=True)
class BfbOptions:
    chunks: int = option(0, "App. E.2: every shard in P equal chunks, LP (1)'s shares rounded to whole chunks "
                            "(Theorem 20 bounds the loss); 0: the exact fractional shares", minimum=0,
                         maximum=4096, page_maximum=64, key="bfb_chunks", label="Chunks per shard (0 = exact)")


@register
class Bfb(AllgatherSynthesizer):
    name = "bfb"
    summary = "optimal breadth-first-broadcast schedule (LP (1), solved exactly; --chunks P: whole chunks)"
    paper = "Zhao et al., Efficient Direct-Connect Topologies, section 5 and App. E.2-E.3"
    rank = 60
    reports_progress = True
    Options = BfbOptions

    @classmethod
    def uses_bytes(cls, topo):
        return any(l.alpha for l in topo.links)            # LP (14) weighs alpha against M / B

    def allgather(self, topo, options, work, progress):
        if work.total_bytes is not None and any(l.alpha for l in topo.links):
            if options.chunks:
                raise NotApplicable("chunked BFB rounds LP (1)'s shares; on links with alpha BFB solves LP (14) "
                                    "for M instead (leave out --chunks)")
            return bfb_timed(topo, work.total_bytes)         # LP (14): U in microseconds for this M
        if options.chunks:
            return bfb_chunked(topo, options.chunks)
        return bfb_allgather(topo, progress=progress)

    def build(self, topo, collective, options, work):
        timed = work.total_bytes is not None and any(l.alpha for l in topo.links)
        both = [topo.transpose(), topo] if collective is Collective.ALLREDUCE and not timed else []
        with shared_workers(both):                         # one pool for both phases, forked before either
            return super().build(topo, collective, options, work)

    def detail(self, schedule):
        return DirectConnectDetail.of(schedule.notes)


@register
class Expansion(AllgatherSynthesizer):
    name = "expansion"
    summary = "follow the expression: base schedules through line/degree/power/bidir expansions"
    paper = "Zhao et al., Efficient Direct-Connect Topologies, section 6"
    rank = 50

    def allgather(self, topo, options, work, progress):
        return expansion_allgather(topo)

    def detail(self, schedule):
        return DirectConnectDetail.of(schedule.notes)
