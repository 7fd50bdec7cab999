"""Fitting the runtime model's prices to a measured log (issue 41, item 3).

Given a verified schedule on a topology (the algorithm the measured library ran, NCCL's ring for instance) and a
``measured.BenchLog`` of the same collective, ``calibrate`` finds the uniform prices, alpha per send and a node's
bandwidth B (``Execution.alpha_beta``), under which the runtime model's time is closest to the measured one at
every size: a robust least-squares fit (``scipy.optimize.least_squares``, soft-L1 loss) of the relative error
log(model / measured), in log-parameters so both stay positive. The message graph is built once and repriced for
every trial (``Model.with_execution``).

The result names its residual per size (model / measured - 1) and becomes a calibrated ``Workload``
(``Calibration.workload``) that every page and command takes as a price file (``--prices FILE``).

Two finer fits beside it, reported with it (``Calibration.classes``, ``Calibration.segments``):

* per link class: the links the schedule uses, grouped by their nominal bandwidth (within ``SAME_CLASS``; on an
  imported machine: NVLink, PCIe, NIC), each class with its own alpha (per send on its links) and its own GB/s per link, fitted together on
  the links' own prices (``Model.with_link_prices``); each comes with its standard error from the fit's Jacobian,
  so a class the log cannot tell apart from another says so instead of giving a number that means nothing;
* protocol switch points: NCCL moves from LL to LL128 to Simple as messages grow, each with its own latency and
  throughput, so a log can be two or three alpha-beta regimes, not one. A switch is kept only where the data show
  it: the best split (found from the single fit's residuals and Jacobian, then refitted on each side) must lower
  the Bayesian information criterion of the log residuals, the two sides' alpha or B must differ by at least
  ``DISTINCT`` (noise alone splits a regime into two alike), and each side keeps at least ``MIN_SEGMENT`` sizes;
  at most two switches (three protocols).

What a log must show (issue 58), checked before any fit (``FitError``, one line, for each): one test (a log of
appended runs is cut to the schedule's collective, and to the first datatype / reduction / root it times, with a
note saying so); no time above ``MAX_TIME_US``; no size above ``MAX_GPU_BYTES`` (every rank holds the whole
buffer); at least two different sizes (rows of one size are merged into their median); times that do not fall as
sizes grow (none below ``FALLING`` times the largest at a smaller size). Above ``MAX_FIT_SIZES`` sizes the log is
fitted as that many log-spaced groups (median size, median time), so the fit's work does not grow with the rows.
After the uniform fit, a value within ``ON_BOUND`` of its search's bound, a price whose doubling changes no
modelled time by ``DETERMINED`` (the log does not determine it), or a relative error above ``MAX_RMS_ERROR`` rms,
is a failed fit, not prices.

The finer fits share a time budget (``DETAIL_BUDGET_S``, after the uniform fit); what they could not finish is
said in ``Calibration.notes``. The price file holds the single uniform fit: a workload prices every size with one alpha and one B, so the
per-class and per-protocol prices are reported, not used for pricing.
"""
from __future__ import annotations

import json
import math
import time
from dataclasses import dataclass

import numpy as np

from topologies.model import Topology

from ..core.cost import cost
from ..core.schedule import Schedule
from .model import Execution, Model
from .measured import BenchLog
from .workload import MAX_ALPHA_US, MAX_BANDWIDTH_GBS, MIN_BANDWIDTH_GBS, Workload

__all__ = ["Calibration", "FitError", "LinkClass", "Segment", "calibrate"]

MIN_SEGMENT = 4          # sizes on each side of a protocol switch
MAX_CLASSES = 4          # link classes fitted apart; more are one class
MAX_CLASS_EVALUATIONS = 15   # fit steps the per-class fit may take (each runs every size, 2k + 1 times)
DETAIL_BUDGET_S = 20.0       # seconds the per-class and protocol fits may take together, after the uniform fit
SAME_CLASS = 1.10            # nominal bandwidths within this factor are one class (a NIC's 25 and its PCIe's 24)
MAX_SIDE_EVALUATIONS = 30    # model runs a side of a candidate protocol switch may take
DISTINCT = 1.25          # two regimes are two protocols only where alpha or B differ by this factor
MIN_ALPHA_US = 1e-4      # the search's lower bound on alpha (its upper bounds are the workload's)
MAX_TIME_US = 1e9        # a benchmark call timed above this (1000 s) is not a row to fit
MAX_GPU_BYTES = 2 ** 40  # a size above this (1 TiB) no rank holds: every rank keeps the whole buffer
FALLING = 0.5            # a time below this times the largest at a smaller size: times that fall as sizes grow
MAX_FIT_SIZES = 200      # sizes fitted; more are grouped (log-spaced) so the fit's work does not grow with rows
MAX_RMS_ERROR = 0.5      # a uniform fit missing the log by more than this (relative, rms) has failed
DETERMINED = 0.005       # doubling a fitted price must change some modelled time by more than this (log-relative)
ON_BOUND = 1.01          # a fitted value within this factor of its search bound has landed on it


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
    classes: tuple = ()          # LinkClass per nominal link bandwidth the schedule uses
    segments: tuple = ()         # Segment per protocol regime; one segment where the log shows no switch
    notes: tuple = ()            # what the finer fits left out (a time budget reached)

    @property
    def switch_points(self) -> tuple[float, ...]:
        """Bytes where the log moves from one regime to the next (between the last size of one segment and the
        first of the next, their geometric mean)."""
        return tuple(math.sqrt(a.hi_bytes * b.lo_bytes) for a, b in zip(self.segments, self.segments[1:]))

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
                             for m, t, p in zip(self.sizes, self.measured_us, self.model_us)],
                "link_classes": [c.as_dict() for c in self.classes],
                "protocols": [g.as_dict() for g in self.segments], "switch_points_bytes": list(self.switch_points),
                "notes": list(self.notes)}


@dataclass(frozen=True)
class LinkClass:
    """The links of one nominal bandwidth and their fitted prices: alpha per send on them and GB/s per link,
    each with its standard error (``None`` where the log does not determine it)."""

    nominal_gbs: float
    links: int
    alpha_us: float
    bandwidth_gbs: float
    alpha_se_us: float | None
    bandwidth_se_gbs: float | None

    @property
    def determined(self) -> bool:
        """Whether the log pins both prices to within half their value."""
        return (self.alpha_se_us is not None and self.bandwidth_se_gbs is not None
                and self.bandwidth_se_gbs < 0.5 * self.bandwidth_gbs)

    def as_dict(self) -> dict:
        return {"nominal_gbs": self.nominal_gbs, "links": self.links, "alpha_us": self.alpha_us,
                "bandwidth_gbs": self.bandwidth_gbs, "alpha_se_us": self.alpha_se_us,
                "bandwidth_se_gbs": self.bandwidth_se_gbs, "determined": self.determined}


@dataclass(frozen=True)
class Segment:
    """One protocol regime of the log: its sizes and the uniform prices fitted to them alone."""

    lo_bytes: float
    hi_bytes: float
    sizes: int
    alpha_us: float
    bandwidth_gbs: float
    rms: float

    def as_dict(self) -> dict:
        return {"from_bytes": self.lo_bytes, "to_bytes": self.hi_bytes, "sizes": self.sizes,
                "alpha_us": self.alpha_us, "bandwidth_gbs": self.bandwidth_gbs, "rms_relative_error": self.rms}


def _fit_uniform(base: Model, steps: int, tb: float, sizes: np.ndarray, measured: np.ndarray,
                 near: tuple[float, float] | None = None, deadline: float | None = None):
    """The soft-L1 fit of uniform (alpha, B) to ``measured`` at ``sizes``: (alpha, B, model times, fit); ``near``
    starts it from a fit already made (a side of a protocol switch), with fewer model runs allowed."""
    from scipy.optimize import least_squares

    # a start from the step model: the smallest size is all latency, the largest mostly bandwidth
    alpha0 = max(measured[0] / max(steps, 1), 1e-3)
    bw0 = max(tb, 1e-6) * sizes[-1] / max(measured[-1] - steps * alpha0, measured[-1] / 2) / 1e3
    bw0 = min(max(bw0, MIN_BANDWIDTH_GBS), MAX_BANDWIDTH_GBS)

    def times(params) -> np.ndarray:
        _check(deadline)
        alpha, bw = math.exp(params[0]), math.exp(params[1])
        got, _ = base.with_execution(Execution.alpha_beta(alpha, bw)).times(list(sizes))
        return np.asarray(got, dtype=float)

    def residual(params) -> np.ndarray:
        return np.log(np.maximum(times(params), 1e-12)) - np.log(measured)

    lower = [math.log(MIN_ALPHA_US), math.log(MIN_BANDWIDTH_GBS)]
    upper = [math.log(MAX_ALPHA_US), math.log(MAX_BANDWIDTH_GBS)]
    start = [min(max(math.log(alpha0), lower[0]), upper[0]), math.log(bw0)]
    if near is not None:
        start = [min(max(math.log(near[0]), lower[0]), upper[0]), min(max(math.log(near[1]), lower[1]), upper[1])]
    fit = least_squares(residual, start, bounds=(lower, upper), loss="soft_l1", f_scale=0.05, diff_step=1e-3,
                        max_nfev=None if near is None else MAX_SIDE_EVALUATIONS)
    return math.exp(fit.x[0]), math.exp(fit.x[1]), times(fit.x), fit


class FitError(ValueError):
    """A log ``calibrate`` will not turn into prices: one no machine produces, or a fit that failed (module
    docstring, "What a log must show"); the message is one line starting "the log" or "the fit"."""


class _OverBudget(Exception):
    """The finer fits ran past their time budget (``calibrate``'s ``budget_s``)."""


def _check(deadline: float | None) -> None:
    if deadline is not None and time.monotonic() > deadline:
        raise _OverBudget


def _bic(sse: float, n: int, params: int) -> float:
    return n * math.log(max(sse, 1e-300) / n) + params * math.log(n)


def _segments(base: Model, steps: int, tb: float, sizes: np.ndarray, measured: np.ndarray, fit,
              deadline: float | None = None) -> tuple[list[Segment], bool]:
    """The log's protocol regimes (module docstring): binary splitting while the information criterion falls;
    and whether it stopped at ``deadline`` (the regimes found so far are kept)."""
    def segment(lo: int, hi: int, alpha: float | None = None, bw: float | None = None, model=None) -> Segment:
        if alpha is None:
            alpha, bw, model, _ = _fit_uniform(base, steps, tb, sizes[lo:hi], measured[lo:hi])
        r = np.asarray(model) / measured[lo:hi] - 1
        return Segment(float(sizes[lo]), float(sizes[hi - 1]), hi - lo, alpha, bw, float(np.sqrt(np.mean(r * r))))

    def split(lo: int, hi: int, residual: np.ndarray, jac: np.ndarray):
        """The best place to split [lo, hi) by the linearised refit of each side; None when too short."""
        best = None
        for k in range(lo + MIN_SEGMENT, hi - MIN_SEGMENT + 1):
            sse = 0.0
            for a, b in ((lo, k), (k, hi)):
                r, j = residual[a - lo:b - lo], jac[a - lo:b - lo]
                delta = np.linalg.lstsq(j, r, rcond=None)[0]
                sse += float(np.sum((r - j @ delta) ** 2))
            if best is None or sse < best[0]:
                best = (sse, k)
        return None if best is None else best[1]

    whole = segment(0, len(sizes), math.exp(fit.x[0]), math.exp(fit.x[1]),
                    np.exp(fit.fun + np.log(measured)))
    out = [(0, len(sizes), whole, fit.fun, fit.jac)]
    fitted = {}

    def grow() -> None:
        """Split ``out`` in place while a split pays (module docstring)."""
        for _ in range(2):                                   # at most two switches
            changed = False
            for i, (lo, hi, seg, residual, jac) in enumerate(out):
                k = split(lo, hi, residual, jac)
                if k is None:
                    continue
                sse_one = float(np.sum(residual ** 2))
                sse_two, parts = math.inf, None
                # the linearised choice is refined among its neighbours by full fits (sides are fitted once each)
                for kk in range(max(lo + MIN_SEGMENT, k - 1), min(hi - MIN_SEGMENT, k + 1) + 1):
                    trial = []
                    for a, b in ((lo, kk), (kk, hi)):
                        if (a, b) not in fitted:
                            fitted[(a, b)] = _fit_uniform(base, steps, tb, sizes[a:b], measured[a:b],
                                                          (seg.alpha_us, seg.bandwidth_gbs), deadline)
                        alpha, bw, model, f = fitted[(a, b)]
                        trial.append((a, b, segment(a, b, alpha, bw, model), f.fun, f.jac))
                    sse = sum(float(np.sum(p[3] ** 2)) for p in trial)
                    if sse < sse_two:
                        sse_two, parts = sse, trial
                one, two = parts[0][2], parts[1][2]
                distinct = (abs(math.log(one.alpha_us / two.alpha_us)) > math.log(DISTINCT)
                            or abs(math.log(one.bandwidth_gbs / two.bandwidth_gbs)) > math.log(DISTINCT))
                if distinct and _bic(sse_two, hi - lo, 5) < _bic(sse_one, hi - lo, 2):
                    out[i:i + 1] = parts
                    changed = True
                    break
            if not changed:
                break

    try:
        grow()
    except _OverBudget:
        return [seg for _, _, seg, _, _ in out], True
    return [seg for _, _, seg, _, _ in out], False


def _classes(base: Model, topo: Topology, sizes: np.ndarray, measured: np.ndarray, alpha: float, bw: float,
             deadline: float | None = None) -> list[LinkClass]:
    """Per link class (nominal bandwidth) alpha and GB/s per link, fitted together on the links' own prices
    (module docstring), from the uniform fit as start; standard errors from the Jacobian."""
    from scipy.optimize import least_squares

    nominal = np.array([float(l.bandwidth) for l in topo.links])
    used = np.zeros(len(topo.links), dtype=bool)
    used[np.unique(base.graph.link)] = True
    values = []
    for v in sorted({float(v) for v in nominal[used]}, reverse=True):
        if not values or v < values[-1] / SAME_CLASS:       # within SAME_CLASS of a wider one: the same class
            values.append(v)
    if not values:
        return []
    if len(values) > MAX_CLASSES:
        values = values[:MAX_CLASSES - 1] + [values[-1]]
    which = np.array([min(range(len(values)), key=lambda c: abs(values[c] - v)) for v in nominal])
    from ..core.cost import node_bandwidth

    scale = bw / float(node_bandwidth(topo))              # the uniform fit's B as a scale of every link
    sender = np.array([topo.is_compute(l.src) for l in topo.links])
    links_model = base.with_execution(Execution())

    def times(params) -> np.ndarray:
        _check(deadline)
        k = len(values)
        alphas, scales = np.exp(params[:k]), np.exp(params[k:])
        a = np.where(sender, alphas[which], 0.0)
        per_byte = 1.0 / (nominal * scales[which] * 1e3)
        got, _ = links_model.with_link_prices(a, per_byte).times(list(sizes))
        return np.asarray(got, dtype=float)

    def residual(params) -> np.ndarray:
        return np.log(np.maximum(times(params), 1e-12)) - np.log(measured)

    k = len(values)
    if k == 1:          # one class: the uniform fit is its fit (its B is a scale of every link); no new search
        r = np.log(np.maximum(base.with_execution(Execution.alpha_beta(alpha, bw)).times(list(sizes))[0], 1e-12)) \
            - np.log(measured)
        rel = math.sqrt(float(np.sum(r ** 2)) / max(len(sizes) - 2, 1))
        return [LinkClass(values[0], int(np.sum(used)), alpha, values[0] * scale, alpha * rel, values[0] * scale * rel)]
    start = np.array([math.log(max(alpha, 1e-3))] * k + [math.log(scale)] * k)
    lower = np.array([math.log(1e-4)] * k + [math.log(1e-6)] * k)
    upper = np.array([math.log(MAX_ALPHA_US)] * k + [math.log(1e6)] * k)
    fit = least_squares(residual, np.clip(start, lower, upper), bounds=(lower, upper), loss="soft_l1",
                        f_scale=0.05, diff_step=1e-3, max_nfev=MAX_CLASS_EVALUATIONS)
    dof = max(len(sizes) - 2 * k, 1)
    sigma2 = float(np.sum(fit.fun ** 2)) / dof
    try:
        cov = np.linalg.inv(fit.jac.T @ fit.jac) * sigma2
        se = np.sqrt(np.clip(np.diag(cov), 0, None))
        if not np.all(np.isfinite(se)):
            raise np.linalg.LinAlgError
    except np.linalg.LinAlgError:
        se = np.full(2 * k, np.inf)
    out = []
    for c, v in enumerate(values):
        a, s = math.exp(fit.x[c]), math.exp(fit.x[k + c])
        sa, ss = se[c], se[k + c]
        ok = sa < 5 and ss < 5          # a log-parameter's error of e^5 means the log does not pin it
        out.append(LinkClass(v, int(np.sum(which[used] == c)), a, v * s,
                             a * float(sa) if ok else None, v * s * float(ss) if ok else None))
    return out


def _log_rows(log: BenchLog, collective, placement: str, notes: list[str]) -> tuple[np.ndarray, np.ndarray]:
    """(sizes, times) of the one test ``calibrate`` fits (module docstring, "What a log must show"), sorted by
    size, one time per size; FitError (one line) for what no machine produces."""
    if log.programs:
        log = log.only(collective)              # LogError (a ValueError) when it holds no such rows
        notes += [n for n in log.notes if n.startswith("the log also times")]
    rows = log.placement(placement)
    if len(rows):
        keys = list(zip(rows["type"], rows["redop"], rows["root"]))
        first = keys[0]
        same = np.array([k == first for k in keys], dtype=bool)
        if not same.all():
            others = sorted({f"{t} {r} root {o}" for t, r, o in keys if (t, r, o) != first})
            notes.append(f"the log times several tests ({', '.join(others[:3])} besides {first[0]} {first[1]} root "
                         f"{first[2]}): only the first is fitted")
            rows = rows[same]
    times = np.array(rows["time_us"], dtype=float)
    sizes = np.array(rows["bytes"], dtype=float)
    keep = (times > 0) & (sizes > 0) & np.isfinite(times) & np.isfinite(sizes)
    sizes, times = sizes[keep], times[keep]
    if len(times) and times.max() > MAX_TIME_US:
        k = int(np.argmax(times))
        raise FitError(f"the log times {sizes[k]:.0f} bytes at {times[k]:.3g} us: no benchmark call takes more than "
                       f"{MAX_TIME_US:.0e} us ({MAX_TIME_US / 1e6:g} s); not a log to fit")
    if len(sizes) and sizes.max() > MAX_GPU_BYTES:
        raise FitError(f"the log has a size of {sizes.max():.4g} bytes: every rank holds the whole buffer, and no GPU "
                       f"holds more than {MAX_GPU_BYTES / 2 ** 40:g} TiB; not a log to fit")
    order = np.argsort(sizes, kind="stable")
    sizes, times = sizes[order], times[order]
    distinct, start = np.unique(sizes, return_index=True)
    if len(distinct) < len(sizes):            # several rows of one size (runs appended): their median
        ends = list(start[1:]) + [len(sizes)]
        times = np.array([float(np.median(times[a:b])) for a, b in zip(start, ends)])
        notes.append(f"the log times some sizes more than once ({len(sizes)} rows, {len(distinct)} sizes): the "
                     "median of each size is fitted")
        sizes = distinct
    if len(sizes) < 2:
        raise FitError(f"the log has {len(sizes)} {placement} size(s) above 0 bytes with a time: at least two "
                       "different sizes are needed to fit alpha and B")
    peak = np.maximum.accumulate(times)
    falling = np.nonzero(times[1:] < FALLING * peak[:-1])[0]
    if len(falling):
        k = int(falling[0]) + 1
        j = int(np.argmax(times[:k]))
        raise FitError(f"the log's times fall as sizes grow: {sizes[k]:.0f} bytes take {times[k]:.4g} us, less than "
                       f"{FALLING:g} x the {times[j]:.4g} us of {sizes[j]:.0f} bytes; not a log to fit")
    if len(sizes) > MAX_FIT_SIZES:            # bounded work whatever the rows: log-spaced groups, their medians
        edges = np.linspace(np.log(sizes[0]), np.log(sizes[-1]) + 1e-9, MAX_FIT_SIZES + 1)
        group = np.searchsorted(edges, np.log(sizes), side="right") - 1
        cuts = np.flatnonzero(np.diff(group)) + 1
        parts = list(zip(np.r_[0, cuts], np.r_[cuts, len(sizes)]))
        notes.append(f"the log has {len(sizes):,} sizes: fitted as {len(parts)} log-spaced groups of sizes "
                     "(each its median size and median time)")
        sizes = np.array([float(np.median(sizes[a:b])) for a, b in parts])
        times = np.array([float(np.median(times[a:b])) for a, b in parts])
    return sizes, times


def _check_fit(base: Model, sizes: np.ndarray, model: np.ndarray, alpha: float, bw: float, rms: float) -> None:
    """FitError where the uniform fit landed on a bound of its search, where doubling alpha or B changes no
    modelled time by ``DETERMINED`` (the log does not determine it: a flat log leaves B free), or where it misses
    the log by more than ``MAX_RMS_ERROR``: a failed fit, not prices."""
    for name, value, low, high, unit in (("alpha", alpha, MIN_ALPHA_US, MAX_ALPHA_US, "us"),
                                         ("B", bw, MIN_BANDWIDTH_GBS, MAX_BANDWIDTH_GBS, "GB/s")):
        if value <= low * ON_BOUND or value >= high / ON_BOUND:
            raise FitError(f"the fit failed: {name} {value:.4g} {unit} lands on the bound of its search "
                           f"({low:g} .. {high:g} {unit}); the log does not determine it")
    for name, a, b in (("alpha", 2 * alpha, bw), ("B", alpha, 2 * bw)):
        other, _ = base.with_execution(Execution.alpha_beta(a, b)).times(list(sizes))
        change = float(np.max(np.abs(np.log(np.maximum(np.asarray(other, dtype=float), 1e-300) / model))))
        if not change > DETERMINED:
            raise FitError(f"the fit failed: {name} is not determined by the log (doubling it changes no modelled "
                           f"time by {DETERMINED:.1%}): time more sizes, from a few bytes to where bandwidth rules")
    if not math.isfinite(rms) or rms > MAX_RMS_ERROR:
        raise FitError(f"the fit failed: its relative error is {rms:.3g} rms, above the limit of {MAX_RMS_ERROR:g} "
                       "(the log is not one alpha-beta collective on this schedule)")


def calibrate(topo: Topology, schedule: Schedule, log: BenchLog, placement: str = "out-of-place",
              source: str = "", detail: bool = True, budget_s: float = DETAIL_BUDGET_S) -> Calibration:
    """The uniform prices that best fit ``log``'s times for ``placement`` and, with ``detail``, the per-class and
    per-protocol fits beside them (module docstring). ValueError (one line) when the log is of another collective;
    FitError (a ValueError) for a log no machine produces or a fit that fails ("What a log must show")."""
    if log.collective is not None and log.collective is not schedule.collective \
            and schedule.collective not in log.collectives:
        raise ValueError(f"the log times {log.collective.value} and the schedule is a "
                         f"{schedule.collective.value}: fit a schedule of the collective measured")
    notes: list[str] = []
    sizes, measured = _log_rows(log, schedule.collective, placement, notes)
    base = Model(topo, schedule)
    c = cost(topo, schedule)
    alpha, bw, model, fit = _fit_uniform(base, c.steps, float(c.tb_factor), sizes, measured)
    model = np.asarray(model, dtype=float)
    _check_fit(base, sizes, model, alpha, bw, math.sqrt(float(np.mean((model / measured - 1) ** 2))))
    classes, segments = (), ()
    if detail:
        deadline = time.monotonic() + budget_s
        try:
            classes = tuple(_classes(base, topo, sizes, measured, alpha, bw, deadline))
        except _OverBudget:
            notes.append(f"the per-link-class fit stopped at its {budget_s:g} s budget: not reported")
        found, stopped = _segments(base, c.steps, float(c.tb_factor), sizes, measured, fit, deadline)
        segments = tuple(found)
        if stopped:
            notes.append(f"the search for protocol switches stopped at the {budget_s:g} s budget: the regimes "
                         "found by then are reported")
    return Calibration(alpha, bw, tuple(float(m) for m in sizes), tuple(float(t) for t in measured),
                       tuple(float(t) for t in model), placement,
                       source or f"fit to {log.program or 'a benchmark log'}", classes, segments, tuple(notes))
