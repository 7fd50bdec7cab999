"""Choosing a frontier topology for a workload (direct-connect paper §5.4 "Selection"; digest §7.2 step 6).

Two prices. The studio ranks designs by the runtime model of their verified schedules
(``solvers.directconnect.pricing``); this module holds the papers' step model, which the paper's Table 4 and the
Finder's prediction (no schedule built) use: an allgather or reduce-scatter of an M-byte vector on a schedule with
``steps`` comm steps and bandwidth factor ``tb`` takes T_L + T_B = steps * alpha + tb * M / B
(``solvers.core.cost.alpha_beta_us``, the one place that formula is written); an allreduce (reduce-scatter then
allgather) takes twice that. A training job uses one topology for many collectives of different sizes (layer
sizes, DDP buckets), so a workload may be a distribution: the cost is the weighted sum. All-to-all has no alpha
term: T = (M / B) * d / (N * f) with f the multi-commodity-flow rate (App. A.5).

Units: alpha in microseconds, M in bytes, B in GB/s (1 GB/s = 1e3 bytes per microsecond).
"""
from __future__ import annotations

from dataclasses import dataclass
from typing import Iterable, Sequence

from ..core.cost import alpha_beta_us

COLLECTIVES = ("allreduce", "allgather", "reduce_scatter")


@dataclass(frozen=True)
class SizeMix:
    """Message sizes in bytes with weights (e.g. how often each occurs); one size with weight 1 by default."""

    sizes: tuple[float, ...]
    weights: tuple[float, ...]

    @classmethod
    def single(cls, size: float) -> "SizeMix":
        return cls((float(size),), (1.0,))

    @classmethod
    def of(cls, sizes: Iterable[float], weights: Iterable[float] | None = None) -> "SizeMix":
        sizes = tuple(float(s) for s in sizes)
        weights = tuple(float(w) for w in weights) if weights is not None else (1.0,) * len(sizes)
        if not sizes or len(sizes) != len(weights):
            raise ValueError("a size mix needs one weight per size and at least one size")
        if any(s <= 0 for s in sizes) or any(w < 0 for w in weights) or sum(weights) <= 0:
            raise ValueError("sizes must be positive and weights non-negative with a positive sum")
        return cls(sizes, weights)


def step_model_time_us(steps: int, tb, alpha_us: float, size_bytes: float, bandwidth_gbs: float,
                       collective: str = "allreduce") -> float:
    """The step model of one collective: ``alpha_beta_us(steps, tb, M, alpha, B)`` for an allgather or a
    reduce-scatter whose schedule has ``steps`` and ``tb``, twice that for the allreduce built from them."""
    if collective not in COLLECTIVES:
        raise ValueError(f"unknown collective {collective!r}; one of {', '.join(COLLECTIVES)}")
    one = alpha_beta_us(steps, tb, size_bytes, alpha_us, bandwidth_gbs)
    return 2 * one if collective == "allreduce" else one


def step_model_mix_us(steps: int, tb, alpha_us: float, mix: SizeMix, bandwidth_gbs: float,
                      collective: str = "allreduce") -> float:
    """The step model of a size mix: the weighted sum of ``step_model_time_us`` over its sizes."""
    return sum(w * step_model_time_us(steps, tb, alpha_us, s, bandwidth_gbs, collective)
               for s, w in zip(mix.sizes, mix.weights))


def alltoall_time_us(f: float, nodes: int, degree: int, total_bytes: float, bandwidth_gbs: float) -> float:
    """(M / B) * d / (N * f): every node sends M bytes in all (M/N to each other node) at rate f per pair."""
    return total_bytes / (bandwidth_gbs * 1e3) * degree / (nodes * f)


def best_index(times: Sequence[float]) -> int:
    """The position of the least time (the first of equal ones: the frontier lists lower latency first)."""
    if not times:
        raise ValueError("nothing to choose from")
    return min(range(len(times)), key=lambda i: (times[i], i))
