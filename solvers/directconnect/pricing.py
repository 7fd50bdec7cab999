"""Pricing a Finder design with the runtime model (``solvers.runtime``), the step model beside it.

A frontier design is an expression (``Candidate.expr``). Its price for a collective is the runtime model's time of
the best verified schedule the studio builds for it: each synthesizer of ``SYNTHESIZERS`` that applies builds one
(``synthesize(topo, algo, collective)``), and the least time over the workload wins (``Price.algo`` names it, and
the Finder's "Schedule it" opens it). The expansion has no reduce-scatter, and so no allreduce, where a design
lacks a reverse symmetry (Π_{d,N} and DBJMod powers among them); BFB beats the expansion schedule on some designs
(L(UniRing(1,8)^{□2}): tb 127/128 against 1). The links are priced by the workload's prices
(``solvers.runtime.Workload``: by default the alpha-beta model, alpha per send and a node's egress B; or the
links' own, or a calibrated file), and a size mix costs the weighted sum of the model's times at its sizes.

Building the schedule and its message graph is the cost; on a 2-core machine a whole frontier at N = 64 takes
about half a second, at N = 128 one to two seconds and at N = 256 four to sixteen (N = 512, about twenty for four
designs). Designs up to ``RUNTIME_MAX_NODES`` are priced this way; above it, and for the all-to-all (the MCF LP
prices it), only the step model is offered, named as such (``selection.step_model_mix_us``, the paper's Table 4).
"""
from __future__ import annotations

from dataclasses import dataclass
from typing import Callable, Sequence

from topologies.expression import parse_topology

from ..core.errors import NotApplicable
from ..runtime import Execution, Model, Workload
from .selection import COLLECTIVES, SizeMix, best_index, step_model_mix_us

RUNTIME_MAX_NODES = 256
RUNTIME_COLLECTIVES = COLLECTIVES            # allreduce, allgather, reduce_scatter
SYNTHESIZERS = ("expansion", "bfb")          # each is priced; the first wins a tie
RUNTIME_MODEL = "runtime model"
STEP_MODEL = "step model"


def runtime_priced(nodes: int, collective: str) -> bool:
    """Whether a design of ``nodes`` nodes is priced by the runtime model for ``collective``."""
    return nodes <= RUNTIME_MAX_NODES and collective in RUNTIME_COLLECTIVES


@dataclass(frozen=True)
class DesignModel:
    """The runtime model of one design's verified schedule for one collective, on the links' own prices (re-priced
    for a workload by ``price``). ``algo``: the synthesizer that built the schedule."""

    expr: str
    collective: str
    algo: str
    model: Model

    def times_us(self, sizes: Sequence[float], alpha_us: float | None = None, bandwidth_gbs: float | None = None,
                 execution: Execution | None = None) -> list[float]:
        """The runtime model's time at each size, links priced by ``execution`` (or the alpha-beta model of
        alpha and B)."""
        execution = execution or Execution.alpha_beta(alpha_us, bandwidth_gbs)
        times, _ = self.model.with_execution(execution).times(sizes)
        return [float(t) for t in times]

    def mix_us(self, mix: SizeMix, alpha_us: float | None = None, bandwidth_gbs: float | None = None,
               execution: Execution | None = None) -> float:
        """The weighted sum of the runtime model's times over a size mix."""
        times = self.times_us(mix.sizes, alpha_us, bandwidth_gbs, execution)
        return sum(w * t for w, t in zip(mix.weights, times))


def design_model(expr: str, collective: str, algo: str | None = None,
                 max_nodes: int = RUNTIME_MAX_NODES) -> DesignModel:
    """Build ``collective`` on the design ``expr`` with ``algo`` (default: the first synthesizer of
    ``SYNTHESIZERS`` that applies), verified (``solvers.synthesize``), and its runtime model. Raises NotApplicable
    above ``max_nodes`` nodes, for a collective the runtime model does not price here, or when no synthesizer
    applies."""
    from ..synthesize import synthesize

    if collective not in RUNTIME_COLLECTIVES:
        raise NotApplicable(f"the runtime model prices {', '.join(RUNTIME_COLLECTIVES)} here, not {collective}")
    topo = parse_topology(expr, max_nodes=max_nodes)
    reasons = []
    for algo in (algo,) if algo else SYNTHESIZERS:
        try:
            result = synthesize(topo, algo, collective)
        except NotApplicable as exc:
            reasons.append(f"{algo}: {exc}")
            continue
        return DesignModel(expr, collective, algo, Model(result.topology, result.schedule))
    raise NotApplicable(f"no schedule for {collective} on {expr} ({'; '.join(reasons)})")


@dataclass(frozen=True)
class Price:
    """One design's price for a workload. ``time_us`` is the figure designs are ranked by: ``runtime_us`` where
    the runtime model priced the design (``model`` = RUNTIME_MODEL), else ``step_model_us`` (STEP_MODEL).
    ``step_model_us`` is the papers' step model of the theorems' (steps, tb); ``algo`` the synthesizer whose
    schedule the runtime model timed."""

    time_us: float
    model: str
    step_model_us: float
    runtime_us: float | None = None
    algo: str | None = None

    def as_dict(self) -> dict:
        return {"runtime_us": self.runtime_us, "runtime_algo": self.algo, "step_model_us": self.step_model_us}


def _work(alpha_us: float | None, bandwidth_gbs: float | None, work: Workload | None) -> Workload:
    if work is not None:
        return work
    if alpha_us is None or bandwidth_gbs is None:
        raise ValueError("price with a workload, or with alpha and B")
    return Workload(prices="uniform", alpha_us=alpha_us, bandwidth_gbs=bandwidth_gbs)


def price(row: dict, collective: str, mix: SizeMix, alpha_us: float | None = None,
          bandwidth_gbs: float | None = None, model_of: Callable[[str, str, str], DesignModel] | None = None,
          work: Workload | None = None) -> Price:
    """The price of a frontier row (``Candidate.as_dict()``: ``expr``, ``nodes``, ``steps``, ``tb_factor``):
    the least runtime-model time over the synthesizers of ``SYNTHESIZERS`` that apply, with ``work``'s prices
    (or the alpha-beta model of ``alpha_us`` and ``bandwidth_gbs``); the step model at its alpha and B.
    ``model_of(expr, collective, algo)`` builds one runtime model (default ``design_model``; the studio passes a
    cached one)."""
    work = _work(alpha_us, bandwidth_gbs, work)
    step = step_model_mix_us(row["steps"], row["tb_factor"], work.alpha_us, mix, work.bandwidth_gbs, collective)
    if not runtime_priced(row["nodes"], collective):
        return Price(step, STEP_MODEL, step)
    build = model_of or design_model
    best: tuple[float, str] | None = None
    reasons = []
    for algo in SYNTHESIZERS:
        try:
            built = build(row["expr"], collective, algo)
        except NotApplicable as exc:
            reasons.append(f"{algo}: {exc}")
            continue
        runtime = built.mix_us(mix, execution=work.execution)
        if best is None or runtime < best[0]:
            best = (runtime, algo)
    if best is None:
        raise NotApplicable(f"no schedule for {collective} on {row['expr']} ({'; '.join(reasons)})")
    return Price(best[0], RUNTIME_MODEL, step, best[0], best[1])


def price_frontier(rows: Sequence[dict], collective: str, mix: SizeMix, alpha_us: float | None = None,
                   bandwidth_gbs: float | None = None, model_of: Callable[[str, str], DesignModel] | None = None,
                   progress: Callable[[int, dict], None] | None = None,
                   work: Workload | None = None) -> tuple[list[Price], int]:
    """Every row's ``price`` and the position of the recommended one: the least ``time_us`` (the first of equal
    ones). ``progress(i, row)`` is told before row i is priced."""
    work = _work(alpha_us, bandwidth_gbs, work)
    prices = []
    for i, row in enumerate(rows):
        if progress is not None:
            progress(i, row)
        prices.append(price(row, collective, mix, model_of=model_of, work=work))
    return prices, best_index([p.time_us for p in prices])
