"""Fit GenModel's parameters to measured Co-located PS runs (GenModel paper §3.4, §5.1; digest §1.6).

A measurement is one CPS AllReduce of ``size`` floats on ``servers`` = N servers that took ``time`` seconds.
Table 2's CPS row, with the incast fan-in w = N (or N - 1 with ``fan_in="senders"``), is linear in four unknowns:

    time = 2·alpha + (N-1)/N·S·(2·beta + gamma) + (N+1)/N·S·delta + 2(N-1)/N·S·max(w - w_t, 0)·epsilon

For every candidate threshold w_t (2 .. largest N) the unknowns (alpha, 2·beta + gamma, delta, epsilon) are
fitted by non-negative least squares on relative errors (each row divided by its measured time, so small and
large runs weigh alike), and the w_t with the smallest residual is kept (ties: the larger w_t, i.e. no incast
claimed without evidence).

Only 2·beta + gamma is identifiable from CPS runs: in every Table 2 row the beta coefficient is twice the gamma
coefficient. Split it with a beta from the link bandwidth (``FitResult.params(beta=...)``). (2·beta + gamma) and
delta are told apart only by the 1/N in (N -/+ 1)/N, so the split is poorly conditioned at large N; alpha needs
at least two sizes.

The CSV has a header with ``servers``, ``size`` (floats; or ``bytes``, divided by 4) and ``time`` (seconds).
"""
from __future__ import annotations

import csv
import io
import math
from dataclasses import dataclass, field

import numpy as np

from .params import FLOAT_BYTES, GenModelParams, ModelOptions

UNKNOWNS = ("alpha", "beta2_gamma", "delta", "epsilon")
MAX_ROWS = 100_000


class FitError(ValueError):
    """Measurements that cannot be fitted; the message names the problem in one line."""


@dataclass(frozen=True)
class Measurement:
    servers: int
    size: float      # floats
    time: float      # seconds


def _number(text: str, column: str, line: int) -> float:
    try:
        value = float(text)
    except (TypeError, ValueError):
        raise FitError(f"line {line}: {column} is not a number: {text!r}") from None
    if not math.isfinite(value):
        raise FitError(f"line {line}: {column} must be finite, got {text!r}")
    if value < 0:
        raise FitError(f"line {line}: {column} must not be negative, got {text!r}")
    return value


MAX_CSV_CHARS = 10_000_000       # characters of a measurements CSV (upload, paste or file)


def read_measurements(text: str) -> list[Measurement]:
    """Parse the CSV text of the module docstring (at most ``MAX_CSV_CHARS`` characters); a ``FitError`` names
    the first problem."""
    if not isinstance(text, str) or not text.strip():
        raise FitError("the CSV is empty")
    if len(text) > MAX_CSV_CHARS:
        raise FitError(f"the CSV is larger than {MAX_CSV_CHARS:,} characters")
    reader = csv.reader(io.StringIO(text.lstrip("\ufeff")))
    try:
        header = [h.strip().lower() for h in next(reader)]
    except csv.Error as exc:
        raise FitError(f"not a CSV file: {exc}") from None
    for needed in ("servers", "time"):
        if needed not in header:
            raise FitError(f"missing column {needed!r} (the header needs servers, size or bytes, time)")
    if "size" not in header and "bytes" not in header:
        raise FitError("missing column 'size' (floats) or 'bytes' (the header needs servers, size or bytes, time)")
    i_n, i_t = header.index("servers"), header.index("time")
    i_s, scale = (header.index("size"), 1.0) if "size" in header else (header.index("bytes"), 1 / FLOAT_BYTES)
    rows = []
    try:
        for line, row in enumerate(reader, start=2):
            if not row or all(not c.strip() for c in row):
                continue
            if len(row) < len(header):
                raise FitError(f"line {line}: expected {len(header)} columns, got {len(row)}")
            n = _number(row[i_n], "servers", line)
            if n != int(n) or n < 2:
                raise FitError(f"line {line}: servers must be a whole number >= 2, got {row[i_n]!r}")
            rows.append(Measurement(int(n), _number(row[i_s], "size", line) * scale, _number(row[i_t], "time", line)))
            if len(rows) > MAX_ROWS:
                raise FitError(f"more than {MAX_ROWS} rows")
    except csv.Error as exc:
        raise FitError(f"not a CSV file: {exc}") from None
    if len(rows) < len(UNKNOWNS):
        raise FitError(f"{len(rows)} measurement rows: at least {len(UNKNOWNS)} are needed for 4 unknowns")
    if any(r.time <= 0 for r in rows):
        raise FitError("every time must be positive")
    return rows


def design_matrix(rows, w_t: int, options: ModelOptions = ModelOptions()) -> np.ndarray:
    """The CPS coefficients of (alpha, 2·beta + gamma, delta, epsilon) for each measurement."""
    out = np.empty((len(rows), 4))
    for k, r in enumerate(rows):
        n, s = r.servers, r.size
        out[k] = (2.0, (n - 1) / n * s, (n + 1) / n * s, 2 * (n - 1) / n * s * max(options.width(n) - w_t, 0))
    return out


@dataclass
class FitResult:
    """Fitted values (s and s/float), the chosen w_t, relative residuals per row and the search over w_t."""

    alpha: float
    beta2_gamma: float
    delta: float
    epsilon: float
    w_t: int
    residuals: list[float]
    rms_relative: float
    max_relative: float
    by_w_t: list[dict] = field(default_factory=list)
    warnings: list[str] = field(default_factory=list)

    def params(self, beta: float | None = None) -> GenModelParams:
        """GenModelParams from the fit. With ``beta`` (e.g. from the link bandwidth), gamma = (2β+γ) - 2β (at least
        0); without it, gamma = 0 and beta = (2β+γ)/2."""
        if beta is None:
            b, g = self.beta2_gamma / 2, 0.0
        else:
            b, g = beta, max(self.beta2_gamma - 2 * beta, 0.0)
        return GenModelParams(self.alpha, b, g, self.delta, self.epsilon, self.w_t)

    def as_dict(self) -> dict:
        return {"alpha": self.alpha, "beta2_gamma": self.beta2_gamma, "delta": self.delta, "epsilon": self.epsilon,
                "w_t": self.w_t, "rms_relative": self.rms_relative, "max_relative": self.max_relative,
                "residuals": self.residuals, "warnings": self.warnings}


def _solve(rows, w_t, options):
    from scipy.optimize import nnls       # here: scipy.optimize takes half a second to import, and only a fit needs it

    a = design_matrix(rows, w_t, options)
    t = np.array([r.time for r in rows])
    weighted = a / t[:, None]
    norms = np.linalg.norm(weighted, axis=0)
    usable = norms > 0
    x = np.zeros(4)
    if usable.any():
        sol, _ = nnls(weighted[:, usable] / norms[usable], np.ones(len(rows)), maxiter=1000)
        x[usable] = sol / norms[usable]
    rel = (a @ x - t) / t
    return x, rel


def fit(rows, options: ModelOptions = ModelOptions(), w_t_candidates=None) -> FitResult:
    """Fit (alpha, 2β+γ, delta, epsilon, w_t) to ``rows`` (Measurements or CSV text)."""
    if isinstance(rows, str):
        rows = read_measurements(rows)
    rows = list(rows)
    if len(rows) < len(UNKNOWNS):
        raise FitError(f"{len(rows)} measurement rows: at least {len(UNKNOWNS)} are needed for 4 unknowns")
    top = max(r.servers for r in rows)
    cands = list(w_t_candidates) if w_t_candidates is not None else list(range(2, top + 1))
    if not cands:
        raise FitError("no candidate w_t")
    best, table = None, []
    for w_t in cands:
        x, rel = _solve(rows, w_t, options)
        ss = float(np.sum(rel ** 2))
        table.append({"w_t": w_t, "sum_sq_relative": ss, **dict(zip(UNKNOWNS, map(float, x)))})
        if best is None or ss < best[0] * (1 - 1e-9) or (ss <= best[0] * (1 + 1e-9) and w_t > best[1]):
            best = (ss, w_t, x, rel)
    ss, w_t, x, rel = best
    warnings = ["only 2β+γ is identifiable from CPS runs (every Table 2 row has twice as much β as γ); "
                "give β from the link bandwidth to split it"]
    if len({r.size for r in rows}) < 2:
        warnings.append("all runs have one size: alpha is not separated from the per-float terms")
    if len({r.servers for r in rows}) < 3:
        warnings.append("fewer than three server counts: 2β+γ, delta and epsilon are poorly separated")
    if x[3] == 0 or w_t >= top:
        warnings.append(f"no incast seen up to {top} servers: epsilon and w_t are not determined")
    return FitResult(float(x[0]), float(x[1]), float(x[2]), float(x[3]), int(w_t), [float(v) for v in rel],
                     float(np.sqrt(np.mean(rel ** 2))), float(np.max(np.abs(rel))), table, warnings)


def synthesize_measurements(params: GenModelParams, servers, sizes, options: ModelOptions = ModelOptions(),
                            noise: float = 0.0, seed: int = 0) -> list[Measurement]:
    """CPS times predicted by GenModel for every (N, S), optionally with relative Gaussian noise: test data and a
    template for users."""
    rng = np.random.default_rng(seed)
    out = []
    for n in servers:
        for s in sizes:
            coef = design_matrix([Measurement(n, s, 1.0)], params.w_t, options)[0]
            t = float(coef @ np.array([params.alpha, 2 * params.beta + params.gamma, params.delta, params.epsilon]))
            if noise:
                t *= 1 + noise * float(rng.standard_normal())
            out.append(Measurement(int(n), float(s), t))
    return out


def to_csv(rows) -> str:
    """Measurements as the CSV this module reads."""
    lines = ["servers,size,time"] + [f"{r.servers},{r.size!r},{r.time!r}" for r in rows]
    return "\n".join(lines) + "\n"
