"""Fitting the runtime model's prices to a measured log (issue 41, item 3).

Given a verified schedule on a topology (the algorithm the measured library ran, NCCL's ring for instance) and a
``measured.BenchLog`` of the same collective, ``calibrate`` finds the uniform prices, alpha per send and a node's
bandwidth B (``Execution.alpha_beta``), under which the runtime model's time is closest to the measured one at
every size: a robust least-squares fit (``scipy.optimize.least_squares``, soft-L1 loss) of the relative error
log(model / measured), in log-parameters so both stay positive. The message graph is built once and repriced for
every trial (``Model.with_execution``).

The result names its residual per size (model / measured - 1) and becomes a calibrated ``Workload``
(``Calibration.workload``) that every page and command takes as a price file (``--prices FILE``).
"""
from __future__ import annotations

import json
import math
from dataclasses import dataclass

import numpy as np

from topologies.model import Topology

from ..core.cost import cost
from ..core.schedule import Schedule
from . import Execution, Model
from .measured import BenchLog
from .workload import MAX_ALPHA_US, MAX_BANDWIDTH_GBS, MIN_BANDWIDTH_GBS, Workload

__all__ = ["Calibration", "calibrate"]


@dataclass(frozen=True)
class Calibration:
    """Fitted uniform prices and how well they fit: ``residuals`` is model / measured - 1 at each size."""

    alpha_us: float
    bandwidth_gbs: float
    sizes: tuple[float, ...]
    measured_us: tuple[float, ...]
    model_us: tuple[float, ...]
    placement: str
    source: str

    @property
    def residuals(self) -> tuple[float, ...]:
        return tuple(m / t - 1 for m, t in zip(self.model_us, self.measured_us))

    @property
    def rms(self) -> float:
        r = self.residuals
        return math.sqrt(sum(x * x for x in r) / len(r)) if r else 0.0

    def workload(self, total_bytes: float = 1.0e6) -> Workload:
        return Workload(total_bytes, "calibrated", self.alpha_us, self.bandwidth_gbs, self.source)

    def price_file(self) -> str:
        """The fitted prices as a price file (``solvers.runtime.workload.read_price_file`` reads it back)."""
        return json.dumps({"alpha_us": self.alpha_us, "bandwidth_gbs": self.bandwidth_gbs,
                           "source": self.source[:300]}, indent=1) + "\n"

    def as_dict(self) -> dict:
        return {"alpha_us": self.alpha_us, "bandwidth_gbs": self.bandwidth_gbs, "placement": self.placement,
                "source": self.source, "rms_relative_error": self.rms,
                "per_size": [{"bytes": m, "measured_us": t, "model_us": p, "residual": p / t - 1}
                             for m, t, p in zip(self.sizes, self.measured_us, self.model_us)]}


def calibrate(topo: Topology, schedule: Schedule, log: BenchLog, placement: str = "out-of-place",
              source: str = "") -> Calibration:
    """The uniform prices that best fit ``log``'s times for ``placement`` (module docstring). ValueError (one
    line) when the log has fewer than two sizes with a positive time, or the schedule is of another collective."""
    from scipy.optimize import least_squares

    if log.collective is not None and log.collective is not schedule.collective:
        raise ValueError(f"the log times {log.collective.value} and the schedule is a "
                         f"{schedule.collective.value}: fit a schedule of the collective measured")
    rows = log.placement(placement)
    rows = rows[rows["time_us"] > 0]
    if len(rows) < 2:
        raise ValueError(f"the log has {len(rows)} {placement} size(s) with a time: at least two are needed")
    sizes = np.array(rows["bytes"], dtype=float)
    measured = np.array(rows["time_us"], dtype=float)
    base = Model(topo, schedule)
    c = cost(topo, schedule)
    # a start from the step model: the smallest size is all latency, the largest mostly bandwidth
    alpha0 = max(measured[0] / max(c.steps, 1), 1e-3)
    bw0 = max(float(c.tb_factor), 1e-6) * sizes[-1] / max(measured[-1] - c.steps * alpha0, measured[-1] / 2) / 1e3
    bw0 = min(max(bw0, MIN_BANDWIDTH_GBS), MAX_BANDWIDTH_GBS)

    def times(params) -> np.ndarray:
        alpha, bw = math.exp(params[0]), math.exp(params[1])
        got, _ = base.with_execution(Execution.alpha_beta(alpha, bw)).times(list(sizes))
        return np.asarray(got, dtype=float)

    def residual(params) -> np.ndarray:
        return np.log(np.maximum(times(params), 1e-12)) - np.log(measured)

    lower = [math.log(1e-4), math.log(MIN_BANDWIDTH_GBS)]
    upper = [math.log(MAX_ALPHA_US), math.log(MAX_BANDWIDTH_GBS)]
    start = [min(max(math.log(alpha0), lower[0]), upper[0]), math.log(bw0)]
    fit = least_squares(residual, start, bounds=(lower, upper), loss="soft_l1", f_scale=0.05, diff_step=1e-3)
    alpha, bw = math.exp(fit.x[0]), math.exp(fit.x[1])
    return Calibration(alpha, bw, tuple(float(m) for m in sizes), tuple(float(t) for t in measured),
                       tuple(float(t) for t in times(fit.x)), placement,
                       source or f"fit to {log.program or 'a benchmark log'}")
