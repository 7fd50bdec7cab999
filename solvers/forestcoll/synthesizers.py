"""ForestColl's synthesizers: throughput-optimal spanning-tree packing on switched and mixed-bandwidth fabrics
(ForestColl sections 3-5; Algorithm 3 for a fixed k), and its Blink+Switch baseline (section 5.2,
``blink.py``)."""
from __future__ import annotations

from dataclasses import dataclass, field
from fractions import Fraction

from ..core.cost import pipelined_factor
from ..core.detail import Detail
from ..core.errors import NotApplicable
from ..registry import Built, Synthesizer, option, register
from . import MAX_FIXED_K, collective_schedule, finite


@dataclass
class ForestDetail(Detail):
    """The packing's figures: k trees per root, U, the optimal 1/x* and the optimal allgather algbw N x*
    (GB/s), and the paper's flow model of the schedule (``solvers.core.cost.pipelined_factor``: every link busy
    for all it carries, no latency) as ``flow_algbw_GBps`` and ``flow_time_us``, beside the runtime model's
    figures that ``synthesize`` adds. ``k``, ``U`` and 1/x* are the optimum's (Prop 3); where the build was told
    M, ``choice`` names the candidate the runtime model kept (``finite``: ``depth`` is ForestColl's own lowering)
    and ``choice_k`` its trees per root."""

    k: int
    u: Fraction
    inv_x_star: Fraction
    optimal_algbw: Fraction
    choice: str | None = None
    choice_k: int | None = None
    _factor: Fraction | None = field(default=None, repr=False, compare=False)

    def factor(self, result) -> Fraction:
        """The flow-model time factor of the result's schedule, computed once (it sums every link's load)."""
        if self._factor is None:
            self._factor = pipelined_factor(result.topology, result.schedule)
        return self._factor

    def fields(self, result) -> dict:
        factor = self.factor(result)
        out = {"k": self.k, "U": str(self.u), "inv_x_star": str(self.inv_x_star),
               "flow_algbw_GBps": float(result.topology.n / factor),
               "optimal_allgather_algbw_GBps": float(self.optimal_algbw), "pipelined_factor": str(factor)}
        if self.choice is not None:
            out.update(finite_choice=self.choice, finite_trees_per_root=self.choice_k)
        return out

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

    @classmethod
    def uses_bytes(cls, topo):
        return finite.applies(topo)                        # the candidates are timed at M (``finite``)

    def build(self, topo, collective, options: ForestcollOptions, work) -> Built:
        schedule = collective_schedule(topo, collective, options.fixed_k, progress=work.prefixed("forestcoll"),
                                       total_bytes=work.total_bytes)
        n = schedule.notes
        return Built(schedule, detail=ForestDetail(n["k"], n["U"], n["inv_x_star"], n["optimal_algbw_GBps"],
                                                   n.get("finite_choice"), n.get("finite_k")))


@dataclass
class BlinkDetail(Detail):
    """Blink+Switch's packing (``solvers.forestcoll.blink``): its root, K trees in ForestColl's logical topology,
    the broadcast rate R = K / U and the allreduce algbw R / 2 of the flow model (GB/s), beside ForestColl's
    RS+AG algbw N x* / 2 on the same fabric."""

    root: str
    trees: int
    rate: Fraction
    allreduce_algbw: Fraction
    forestcoll_allreduce_algbw: Fraction

    def fields(self, result) -> dict:
        factor = pipelined_factor(result.topology, result.schedule)
        return {"blink_root": self.root, "trees": self.trees, "broadcast_rate_GBps": float(self.rate),
                "blink_allreduce_algbw_GBps": float(self.allreduce_algbw),
                "forestcoll_allreduce_algbw_GBps": float(self.forestcoll_allreduce_algbw),
                "flow_algbw_GBps": float(result.topology.n / factor)}

    def compare_note(self) -> str:
        return (f"root {self.root}, {self.trees} trees, broadcast {float(self.rate):.4g} GB/s, allreduce "
                f"{float(self.allreduce_algbw):.4g} GB/s (ForestColl {float(self.forestcoll_allreduce_algbw):.4g})")


@dataclass(frozen=True)
class BlinkOptions:
    root: int | None = option(None, "the GPU (rank among the compute nodes) all trees are rooted at; default: the "
                              "one with the most trees", minimum=0, flag="--blink-root", key="blink_root",
                              label="Root GPU", page=False)


@register
class BlinkSwitch(Synthesizer):
    name = "blink_switch"
    summary = ("Blink+Switch: Blink's single-root spanning-tree packing on ForestColl's switch-free logical "
               "topology; allreduce = reduce then broadcast (ForestColl's baseline)")
    paper = "Zhao et al., ForestColl, section 5.2 (Blink, Wang et al. 2020)"
    rank = 81
    reports_progress = True
    Options = BlinkOptions
    COMPARE_MAX_GPUS = 32

    @classmethod
    def compare_plan(cls, topo, collective, left_s: float) -> dict | str:
        """Compare runs it up to ``COMPARE_MAX_GPUS`` GPUs: its transfers grow as N^2 times the batches (64 GPUs
        of dgx_a100(boxes=8): 1M transfers, 16 s; mi250(clusters=4): 3.3M, 52 s). A fabric it does not apply to
        says so first, whatever its size."""
        from .blink import check_fabric

        try:
            check_fabric(topo)
        except NotApplicable as exc:
            return f"not applicable: {exc}"
        if topo.n > cls.COMPARE_MAX_GPUS:
            return (f"skipped: Compare runs Blink+Switch up to {cls.COMPARE_MAX_GPUS} GPUs (every tree hop carries "
                    f"every shard), this has {topo.n}")
        return {}

    def build(self, topo, collective, options: BlinkOptions, work) -> Built:
        from .blink import blink_schedule

        root = None
        if options.root is not None:
            compute = list(topo.compute_nodes)
            if options.root >= len(compute):
                raise NotApplicable(f"--blink-root must be a GPU rank from 0 to {len(compute) - 1}, "
                                    f"not {options.root}")
            root = compute[options.root]
        schedule, packing = blink_schedule(topo, collective, root, progress=work.prefixed("blink_switch"))
        return Built(schedule, detail=BlinkDetail(topo.names[packing.root], packing.trees, packing.rate,
                                                  packing.allreduce_algbw, packing.forestcoll_allreduce_algbw))
