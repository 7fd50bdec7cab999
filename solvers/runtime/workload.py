"""The workload: the one question every page, panel and command answers with the same number.

A workload is the vector size M (bytes) and one price list for the links:

* ``uniform`` (the default everywhere): the papers' alpha-beta model, alpha microseconds for every send a GPU
  makes and bandwidths scaled so that a node's egress is B GB/s (``Execution.alpha_beta``); alpha 10 us,
  B 12.5 GB/s (100 Gb/s) unless told otherwise;
* ``links``: each link's own alpha and bandwidth, as the fabric declares them (``Execution()``);
* ``calibrated``: uniform prices read from a price file (``read_price_file``), measured on a real machine, with
  the source it names.

``Workload.price(topo, schedule)`` gives a verified schedule's runtime-model figures (time, algbw, busbw, the
pipelining depth) and the lower bound in the same prices (``bounds.tightest_bound``: its time ``bound_us`` and
the name of the term that sets it, ``bound_name``); the papers' step model, steps x alpha + tb_factor x
M / B, is the named second figure (``step_model_us``). A synthesizer's own
clock (TACOS's collective time, TE-CCL's epochs) is never the workload's time: it stays in its ``Detail``.
With the links' own prices the step model is the fabric's (``solvers.core.cost.step_model_us``: each step lasts
as long as its slowest link).

The defaults (``DEFAULT``) are the app sidebar's and every CLI command's (``--bytes``, ``--prices``, ``--alpha``,
``--bandwidth``).
"""
from __future__ import annotations

import json
import math
from dataclasses import dataclass

from topologies.model import Topology

from ..core.cost import alpha_beta_us
from ..core.schedule import Schedule
from .bounds import schedule_bound
from .model import Execution, Model, RuntimeResult

__all__ = ["DEFAULT", "PRICES", "Priced", "Workload", "WorkloadError", "read_price_file"]

PRICES = ("uniform", "links", "calibrated")
PRICE_LABELS = {"uniform": "uniform alpha and B", "links": "the fabric's own link prices",
                "calibrated": "a calibrated price file"}
DEFAULT_BYTES = 1.0e6
DEFAULT_ALPHA_US = 10.0
DEFAULT_BANDWIDTH_GBS = 12.5
MAX_BYTES = 1.0e13
MAX_ALPHA_US = 1.0e6
MIN_BANDWIDTH_GBS, MAX_BANDWIDTH_GBS = 1.0e-3, 1.0e7
MAX_PRICE_FILE_BYTES = 64 * 1024
# The runtime model's message graph holds about 300 bytes a transfer (dependencies widened, sorted and joined):
# 4.8 GB at this limit, 160 GB for BFB's allreduce on gkautz(4,16384). Above it a schedule is not priced by the
# model (``Workload.figures`` says so) and keeps its bound and step-model figures.
MODEL_MAX_TRANSFERS = 16_000_000
MAX_SOURCE_CHARS = 300


class WorkloadError(ValueError):
    """A workload or price file that cannot be used; the message is one line."""


class _Written(str):
    """A price file's number as its text: converted by ``_finite`` only once its digits and exponent are bounded
    (``topologies.input_file.read_figure``), so an alpha of 400 digits is one line, not an OverflowError."""


def _finite(value, what: str) -> float:
    if isinstance(value, _Written):
        from topologies.input_file import read_figure

        try:
            return float(read_figure(str(value), what, "the price file", -1e30, 1e30))
        except ValueError as exc:
            raise WorkloadError(str(exc)) from None
    if isinstance(value, bool) or not isinstance(value, (int, float)):
        raise WorkloadError(f"{what} must be a number, got {value!r}"[:200])
    value = float(value)
    if not math.isfinite(value):
        raise WorkloadError(f"{what} must be a finite number, got {value}")
    return value


@dataclass(frozen=True)
class Workload:
    """M bytes and a price list (module docstring). ``source`` says where calibrated prices were measured."""

    total_bytes: float = DEFAULT_BYTES
    prices: str = "uniform"
    alpha_us: float = DEFAULT_ALPHA_US
    bandwidth_gbs: float = DEFAULT_BANDWIDTH_GBS
    source: str = ""

    def __post_init__(self):
        m = _finite(self.total_bytes, "M, the vector size in bytes,")
        a = _finite(self.alpha_us, "alpha")
        b = _finite(self.bandwidth_gbs, "B, the node bandwidth,")
        if not 0 < m <= MAX_BYTES:
            raise WorkloadError(f"M must be above 0 and at most {MAX_BYTES:g} bytes, got {m:g}")
        if not 0 <= a <= MAX_ALPHA_US:
            raise WorkloadError(f"alpha must be between 0 and {MAX_ALPHA_US:g} us, got {a:g}")
        if not MIN_BANDWIDTH_GBS <= b <= MAX_BANDWIDTH_GBS:
            raise WorkloadError(f"B must be between {MIN_BANDWIDTH_GBS:g} and {MAX_BANDWIDTH_GBS:g} GB/s, got {b:g}")
        if self.prices not in PRICES:
            raise WorkloadError(f"prices must be one of {', '.join(PRICES)}, got {self.prices!r}"[:200])
        object.__setattr__(self, "total_bytes", m)
        object.__setattr__(self, "alpha_us", a)
        object.__setattr__(self, "bandwidth_gbs", b)

    @property
    def key(self) -> tuple:
        """The fields as a tuple (``Workload(*key)`` is this workload): a hashable key for caches."""
        return (self.total_bytes, self.prices, self.alpha_us, self.bandwidth_gbs, self.source)

    @property
    def execution(self) -> Execution:
        """The runtime model's link prices for this workload."""
        if self.prices == "links":
            return Execution()
        return Execution.alpha_beta(self.alpha_us, self.bandwidth_gbs)

    @property
    def price_label(self) -> str:
        """Which prices the figures used, in a few words (every figure says it)."""
        if self.prices == "links":
            return "the fabric's own link prices"
        text = f"alpha {self.alpha_us:g} µs, B {self.bandwidth_gbs:g} GB/s per node"
        return f"calibrated ({self.source or 'price file'}): {text}" if self.prices == "calibrated" \
            else f"uniform {text}"

    def as_dict(self) -> dict:
        out = {"bytes": self.total_bytes, "prices": self.prices, "label": self.price_label}
        if self.prices != "links":
            out.update(alpha_us=self.alpha_us, bandwidth_gbs=self.bandwidth_gbs)
        if self.prices == "calibrated":
            out["source"] = self.source
        return out

    # -- the figures
    def model(self, topo: Topology, schedule: Schedule) -> Model:
        return Model(topo, schedule, self.execution)

    def price(self, topo: Topology, schedule: Schedule, model: Model | None = None, costs=None) -> "Priced":
        """The runtime model's figures of a verified ``schedule`` on ``topo`` (the fabric it runs on) for this
        workload, its lower bound and the step model. ``model``: one already built for this schedule (it is
        repriced with this workload's prices); ``costs``: its ``solvers.core.cost`` figures, when known."""
        from ..core.cost import cost, step_model_us

        if model is None:
            model = self.model(topo, schedule)
        elif model.execution != self.execution:
            model = model.with_execution(self.execution)
        run = model.run(self.total_bytes)
        bound = schedule_bound(topo, schedule, self.total_bytes, self.execution)
        if self.prices == "links":
            step = step_model_us(topo, schedule, self.total_bytes)
        else:
            c = costs if costs is not None else cost(topo, schedule)
            step = alpha_beta_us(c.steps, c.tb_factor, self.total_bytes, self.alpha_us, self.bandwidth_gbs)
        return Priced(self, run, bound.time_us, step, bound.name)

    def figures(self, result) -> dict:
        """``price_result(result).as_dict()``, or for a schedule over MODEL_MAX_TRANSFERS the same keys with the
        runtime model's figures None, the bound and the step model kept, and ``runtime_note`` saying why."""
        schedule = result.schedule
        if schedule.count <= MODEL_MAX_TRANSFERS:
            return self.price_result(result).as_dict()
        step = None
        if self.prices != "links":
            c = result.cost
            step = alpha_beta_us(c.steps, c.tb_factor, self.total_bytes, self.alpha_us, self.bandwidth_gbs)
        bound = schedule_bound(result.topology, schedule, self.total_bytes, self.execution)
        return {"bytes": self.total_bytes, "time_us": None, "algbw_GBps": None, "busbw_GBps": None, "slices": None,
                "bound_us": bound.time_us, "bound_name": bound.name, "step_model_us": step, "prices": self.price_label,
                "runtime_note": f"not priced by the runtime model: {schedule.count} transfers are more than it "
                                f"takes ({MODEL_MAX_TRANSFERS}, about 300 bytes each); step_model_us is the "
                                f"alpha-beta figure"}

    def price_result(self, result, model: Model | None = None) -> "Priced":
        """``price`` of a ``solvers.synthesize.Result`` (its fabric, schedule and costs)."""
        return self.price(result.topology, result.schedule, model, result.cost)


@dataclass(frozen=True)
class Priced:
    """One schedule's figures for one workload: ``run`` (the runtime model), ``bound_us`` (no schedule of the
    collective is faster in these prices: ``bounds.tightest_bound``, whose term ``bound_name`` names) and
    ``step_model_us`` (the papers' step model, a second figure)."""

    workload: Workload
    run: RuntimeResult
    bound_us: float
    step_model_us: float
    bound_name: str = ""

    @property
    def time_us(self) -> float:
        return self.run.time_us

    def as_dict(self) -> dict:
        return {"bytes": self.workload.total_bytes, "time_us": self.run.time_us, "algbw_GBps": self.run.algbw_gbs,
                "busbw_GBps": self.run.busbw_gbs, "slices": self.run.slices, "bound_us": self.bound_us,
                "bound_name": self.bound_name, "step_model_us": self.step_model_us, "prices": self.workload.price_label}


DEFAULT = Workload()


def read_price_file(data: bytes | str, total_bytes: float = DEFAULT_BYTES) -> Workload:
    """A calibrated workload from a price file: a JSON object ``{"alpha_us": a, "bandwidth_gbs": b, "source":
    "where and how they were measured"}`` (at most 64 KiB; other keys are refused so that a misspelt one is not
    silently ignored). WorkloadError (one line) for anything else."""
    if isinstance(data, str):
        data = data.encode("utf-8")
    if len(data) > MAX_PRICE_FILE_BYTES:
        raise WorkloadError(f"a price file holds at most {MAX_PRICE_FILE_BYTES // 1024} KiB, this one is larger")
    try:
        text = data.decode("utf-8")
    except UnicodeDecodeError:
        raise WorkloadError("a price file is UTF-8 JSON; this one is not UTF-8") from None
    try:
        doc = json.loads(text, parse_constant=lambda c: (_ for _ in ()).throw(ValueError(c)), parse_int=_Written,
                         parse_float=_Written)
    except (ValueError, RecursionError) as exc:
        raise WorkloadError(f"the price file is not JSON: {str(exc).splitlines()[0][:120]}") from None
    if not isinstance(doc, dict):
        raise WorkloadError("a price file is a JSON object with alpha_us, bandwidth_gbs and source")
    unknown = sorted(set(doc) - {"alpha_us", "bandwidth_gbs", "source"})
    if unknown:
        raise WorkloadError(f"the price file has unknown keys: {', '.join(map(str, unknown))}"[:200])
    missing = [k for k in ("alpha_us", "bandwidth_gbs") if k not in doc]
    if missing:
        raise WorkloadError(f"the price file lacks {' and '.join(missing)}")
    source = doc.get("source", "")
    if not isinstance(source, str) or len(source) > MAX_SOURCE_CHARS or any(ord(ch) < 32 for ch in source):
        raise WorkloadError(f"the price file's source must be one line of text, at most {MAX_SOURCE_CHARS} "
                            "characters")
    return Workload(total_bytes, "calibrated", _finite(doc["alpha_us"], "alpha_us"),
                    _finite(doc["bandwidth_gbs"], "bandwidth_gbs"), source)
