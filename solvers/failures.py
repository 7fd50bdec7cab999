"""Failures (issue 42): what a broken link, GPU, NIC, switch or box does to a design and to every schedule on it,
and the schedule to run instead.

The failure models themselves (what can fail, ``failure_sets``, ``degrade``, the ``fail(G, ...)`` expression)
are ``topologies.failures``; this module analyses them.

The analysis of one failure set (``analyse``, one task of the sweep machinery): whether the compute nodes stay
strongly connected; the lower bounds on the degraded fabric (steps, ``tb_factor`` as ``solvers.core.cost``
defines them, and ForestColl's optimal allgather algbw as the bandwidth reference, eq. (1) of the ForestColl
paper: N x*); each chosen synthesizer run again on the degraded fabric (``solvers.synthesize`` verifies it, through
the results cache), timed by the runtime model for the workload.

Prices. A failure must not be priced away: with uniform prices ``Execution.alpha_beta`` scales the links so the
slowest node's egress is B, which on a degraded fabric would make the surviving links faster. Every failure set is
therefore priced at the healthy design's scale: GB/s of a link = its bandwidth x B / (the healthy design's node
bandwidth), alpha per send from a compute node (uniform and calibrated prices); with the links' own prices, each
link's own. On the healthy design this is exactly ``Workload.model``.
"""
from __future__ import annotations

import math
import time
from dataclasses import dataclass
from fractions import Fraction
from typing import Sequence

import numpy as np

from topologies.failures import (KINDS, MAX_SAMPLES, MAX_SETS, Element, FailureError, connectivity, cut_off,
                                 degrade, describe, elements, failure_expr, failure_sets)
from topologies.model import Topology

from .core.errors import NotApplicable, ScheduleError
from .core.schedule import rooted_request

__all__ = ["CELLS", "HEALTHY", "KINDS", "MAX_SAMPLES", "MAX_SETS", "ROW_BASE", "STAMP", "Element", "FailureError",
           "FailureTask", "analyse", "connectivity", "cut_off", "degrade", "describe", "elements", "failure_expr",
           "failure_sets", "lost_failure", "read_rows_file", "row_columns", "solve_failure", "summarize_rows"]

HEALTHY = "(none: the healthy design)"       # the healthy design's row's ``failed``
# a row's columns in a rows file (``failures -o rows.csv``): ROW_BASE, CELLS per synthesizer, then these
ROW_BASE = ("failed", "kind", "expr", "what", "gpus", "connected", "cut_off", "steps_bound", "tb_bound",
            "optimum_algbw_GBps")
CELLS = ("status", "time_us", "algbw_GBps", "verified", "message", "flow_algbw_GBps")
STAMP = ("collective", "bytes", "prices")    # the run's own: every row of a file carries them
FASTER_SLACK = 1e-9                          # an algbw above the healthy design's by more than this share is faster


# ------------------------------------------------------------------------------------------------ one task
@dataclass(frozen=True)
class FailureTask:
    """One failure set of one design, with what to run on it: a task of ``solvers.sweep.run``."""

    expr: str
    kind: str
    failed: tuple[str, ...]               # element names; () is the healthy design
    algos: tuple[str, ...]
    collective: str
    workload: tuple                       # ``Workload.key``
    max_nodes: int | None = None
    refresh: bool = False                 # solve again: no row or schedule read from the results cache

    @property
    def key(self) -> tuple:
        return (self.expr, self.kind, self.failed, self.algos, self.collective, self.workload)

    @property
    def label(self) -> str:
        return " + ".join(self.failed) if self.failed else HEALTHY


def _priced(fabric: Topology, schedule, work, factor: float):
    """The runtime model of ``schedule`` at the healthy design's price scale (module docstring, "Prices")."""
    from .runtime import Execution, Model

    model = Model(fabric, schedule, Execution())
    if work.prices == "links":
        return model
    bw = np.array([float(l.bandwidth) for l in fabric.links]) * factor
    alpha = np.array([work.alpha_us if fabric.is_compute(l.src) else 0.0 for l in fabric.links])
    return model.with_link_prices(alpha, 1.0 / (bw * 1e3))


def analyse(task: FailureTask, cache=None) -> dict:
    """The row of one failure set (module docstring): ``failed``, ``kind``, ``expr`` (the degraded fabric as
    ``fail(...)``, for the Schedule page and every command), ``what`` (``describe``), ``gpus``,
    ``connected``, ``cut_off`` (the GPUs a disconnecting failure cut off), ``steps_bound``, ``tb_bound``,
    ``optimum_algbw_GBps`` (ForestColl's optimal allgather algbw, in the links' own GB/s as its flow model
    counts them), then per synthesizer ``<algo>_status``, ``<algo>_time_us`` and ``<algo>_algbw_GBps`` (the
    runtime model at the workload's prices), ``<algo>_verified``, ``<algo>_message`` and, where the synthesizer
    has one, ``<algo>_flow_algbw_GBps`` (its own flow model, the optimum's units); ``seconds``, ``cached``
    (synthesizer results read from the results cache) and ``from_cache`` (the whole row read back: the results
    cache keeps every row, tagged like its schedules, under the task and the code version). Never raises for what
    a failure does."""
    from topologies import load
    from topologies.properties import is_strongly_connected

    from .core.cost import node_bandwidth, steps_lower_bound, tb_lower_bound
    from .forestcoll.search import fabric as forest_fabric, optimal_ratio
    from .results_cache import ResultsCache, UnsafeCache, cached_synthesize
    from .runtime.workload import Workload
    from .synthesize import resolve_root

    start = time.perf_counter()
    if cache is None:
        cache = ResultsCache.default()
    healthy = load(task.expr, max_nodes=task.max_nodes)
    key = _row_key(task, healthy)
    if cache is not None and not task.refresh:
        try:
            row = cache.get_record(key)
        except UnsafeCache:
            cache, row = None, None
        if row is not None and row.get("failed") == task.label:
            return {**row, "from_cache": True}
    coll, root_text = rooted_request(task.collective)
    root_name = healthy.names[resolve_root(healthy, root_text)] if coll.rooted else None
    work = Workload(*task.workload)
    by_name = {e.name: e for e in elements(healthy, task.kind)}
    missing = [n for n in task.failed if n not in by_name]
    if missing:
        raise FailureError(f"{task.expr} has no {task.kind} element named {missing[0]!r}")
    failed = [by_name[n] for n in task.failed]
    topo = degrade(healthy, failed) if failed else healthy
    factor = float(work.bandwidth_gbs) / float(node_bandwidth(healthy))
    row = {"failed": task.label, "kind": task.kind, "expr": _degraded_expr(task.expr, healthy, failed),
           "what": "; ".join(describe(healthy, e) for e in failed),
           "gpus": topo.n, "connected": False, "cut_off": "", "steps_bound": None, "tb_bound": None,
           "optimum_algbw_GBps": None}
    connected = topo.n >= 2 and is_strongly_connected(topo)
    row["connected"] = connected
    if not connected and topo.n >= 2:
        lost = cut_off(topo)
        row["cut_off"] = ", ".join(lost[:8]) + (f" and {len(lost) - 8} more" if len(lost) > 8 else "")
    root = topo.names.index(root_name) if root_name in topo.names else None      # None: unrooted, or failed
    if connected and (root_name is None or root is not None):
        row["steps_bound"] = steps_lower_bound(topo, coll, root)
        row["tb_bound"] = str(tb_lower_bound(topo, coll, root))
    hits = 0
    for algo in task.algos:
        cells = {"status": "disconnected", "time_us": None, "algbw_GBps": None, "verified": False, "message": ""}
        if connected and root_name is not None and root is None:
            cells.update(status="not applicable", message=f"the root {root_name} failed")
        elif connected:
            try:
                result, hit = cached_synthesize(topo, algo, coll, cache=cache, refresh=task.refresh,
                                                total_bytes=work.total_bytes, warn=None,
                                                root=None if root is None else topo.compute_nodes.index(root))
                hits += hit is not None
                run = _priced(result.topology, result.schedule, work, factor).run(work.total_bytes)
                cells.update(status="ok", time_us=run.time_us, algbw_GBps=run.algbw_gbs,
                             verified=bool(result.verification.ok),
                             message=result.detail.compare_note() if result.detail is not None else "")
                flow = _flow_algbw(result)
                if flow is not None:
                    cells["flow_algbw_GBps"] = flow
                optimum = getattr(result.detail, "optimal_algbw", None)
                if optimum is not None and result.topology is topo:    # ForestColl's own search: not done twice
                    row["optimum_algbw_GBps"] = float(optimum)
            except NotApplicable as exc:
                cells.update(status="not applicable", message=_line(exc))
            except (ScheduleError, ValueError, ArithmeticError, MemoryError, RecursionError) as exc:
                cells.update(status="error", message=f"{type(exc).__name__}: {_line(exc)}")
        row.update({f"{algo}_{k}": v for k, v in cells.items()})
    if connected and row["optimum_algbw_GBps"] is None:
        try:
            fab = forest_fabric(topo)
            row["optimum_algbw_GBps"] = float(Fraction(fab.size) / (optimal_ratio(fab).ratio * fab.scale))
        except NotApplicable:
            pass
    row["cached"] = hits
    row["seconds"] = round(time.perf_counter() - start, 4)
    if cache is not None:
        try:
            cache.put_record(key, row)
        except (UnsafeCache, OSError):       # not kept: the row is still good
            pass
    return {**row, "from_cache": False}


def _degraded_expr(expr: str, healthy: Topology, failed) -> str:
    """The degraded fabric as an expression every page and command takes (``fail(expr, ...)``), or "" where the
    design is a file (a file's path is not an expression) or where fewer than two GPUs are left (no design)."""
    from topologies.files import TOPOLOGY_SUFFIXES
    from topologies.imports import is_import

    if not failed:
        return expr
    if len(degrade(healthy, failed).compute_nodes) < 2:      # fail(...) refuses a design of one GPU
        return ""
    if is_import(expr) or expr.strip().lower().endswith(TOPOLOGY_SUFFIXES):
        return ""
    return failure_expr(expr, healthy, failed)


def _row_key(task: FailureTask, healthy: Topology) -> str:
    """The results cache's name for a failure set's row: the task, the design's content (a file's path may name
    another machine tomorrow) and the code version (any change to the code that builds, verifies or times a
    schedule starts afresh, as for schedules)."""
    import hashlib
    import json

    from .results_cache import code_version, topology_digest

    text = json.dumps(["failures", code_version(), topology_digest(healthy), list(task.key)], default=str)
    return "failures-" + hashlib.sha256(text.encode("utf-8")).hexdigest()


def _flow_algbw(result) -> float | None:
    """A synthesizer's own flow-model algbw where its detail gives one (ForestColl's, in the links' own GB/s)."""
    fields = getattr(result.detail, "fields", None)
    if fields is None:
        return None
    try:
        value = fields(result).get("flow_algbw_GBps")
    except (TypeError, ValueError, ArithmeticError):
        return None
    return None if value is None else float(value)


def solve_failure(task: FailureTask) -> list[dict]:
    """``analyse`` as ``solvers.sweep.run`` calls it: the task's rows (one)."""
    return [analyse(task)]


def lost_failure(task: FailureTask, message: str) -> list[dict]:
    """The row of a failure set whose worker raised or was lost."""
    return [{"failed": task.label, "kind": task.kind, "connected": None, "error": message}]


def _line(exc: BaseException) -> str:
    text = str(exc)
    return text.splitlines()[0][:300] if text else type(exc).__name__


def summarize_rows(healthy: dict, rows: Sequence[dict], algos: Sequence[str]) -> dict:
    """Per synthesizer over the failure sets: the fraction disconnected, the median and worst algbw as a fraction
    of the healthy design's, the worst failure set, how many sets it could not run (``not ok``) and how many it
    ran faster than on the healthy design (``faster_than_healthy``: a schedule of the degraded fabric is one of
    the healthy design too, so a synthesizer that gains from a failure left time on the table); ``lost``:
    the sets whose worker failed (``lost_failure``; counted nowhere else). A synthesizer with no algbw on the
    healthy design (not applicable there, or an error) has no fractions: its median, worst and worst failure are
    None, and ``healthy_status`` says why."""
    total = len(rows)
    out = {"sets": total, "disconnected": sum(1 for r in rows if r["connected"] is False) / total if total else 0.0,
           "lost": sum(1 for r in rows if r["connected"] is None), "per_synthesizer": {}}
    for algo in algos:
        base = healthy.get(f"{algo}_algbw_GBps")
        ratios = []
        for r in rows:
            bw = r.get(f"{algo}_algbw_GBps")
            if r["connected"] is False:
                ratios.append((0.0, r["failed"]))
            elif bw is not None and base:
                ratios.append((bw / base, r["failed"]))
        if not base:                     # nothing to be a fraction of
            ratios = []
        worst = min(ratios, default=None)
        values = sorted(x for x, _ in ratios)
        out["per_synthesizer"][algo] = {
            "healthy_algbw_GBps": base, "healthy_status": healthy.get(f"{algo}_status"),
            "median_algbw_fraction": float(np.median(values)) if values else None,
            "worst_algbw_fraction": worst[0] if worst else None,
            "worst_failure": worst[1] if worst else None,
            "not_ok": sum(1 for r in rows if r["connected"] and r.get(f"{algo}_status") != "ok"),
            "faster_than_healthy": sum(1 for x, _ in ratios if x > 1 + FASTER_SLACK)}
    return out


# ------------------------------------------------------------------------------------------------ the rows file
MAX_GBPS = 1e9          # 1 EB/s: no algbw of any machine comes near; a row above it was not written by ``analyse``
MAX_TIME_US = 1e15      # about 31 years


def row_columns(algos: Sequence[str]) -> list[str]:
    """The columns of a rows file: ``ROW_BASE``, ``CELLS`` per synthesizer, ``cached``, ``seconds``, ``STAMP``."""
    return list(ROW_BASE) + [f"{a}_{c}" for a in algos for c in CELLS] + ["cached", "seconds", *STAMP]


def read_rows_file(path, algos: Sequence[str], stamp: dict, expr: str, kind: str, gpus: int) -> dict[str, dict]:
    """The rows of a ``failures -o rows.csv`` file to resume a run with: {failed: row}, each row typed as
    ``analyse`` made it. The file is read by ``solvers.sweep.iter_rows`` (a regular file only, its header the
    run's ``row_columns``, a last line cut short by a crash dropped), then every row is checked against the run
    and the ranges ``analyse`` writes: its ``STAMP`` (collective, bytes, prices) and ``kind`` the run's, ``expr``
    the design's (or a ``fail(...)`` of it), ``gpus`` 0 to ``gpus``, booleans True/False, bounds and counts
    non-negative integers, ``tb_bound`` a non-negative fraction, times in (0, ``MAX_TIME_US``], GB/s finite in
    (0, ``MAX_GBPS``] and ``algbw`` = bytes / time (the runtime model's definition) to 1e-6, a status one of
    ``analyse``'s and an ``ok`` one verified. FailureError, one line naming the file and the line, for the first
    row that is not; a row whose worker was lost (no ``connected``) is left out, so the run solves it again."""
    from .sweep import SweepError, iter_rows

    columns = row_columns(algos)
    out: dict[str, dict] = {}
    try:
        for line, raw in iter_rows(path, columns):
            if raw["connected"] == "":
                continue
            if any(raw[k] != str(v) for k, v in stamp.items()):
                said = [_printable(raw[k], n) for k, n in (("collective", 40), ("bytes", 40), ("prices", 60))]
                raise FailureError(f"{path} line {line} holds another run's rows ({said[0]}, {said[1]} bytes, "
                                   f"{said[2]}); name another file")
            try:
                row = _checked_row(raw, algos, float(stamp["bytes"]), expr, kind, gpus)
            except ValueError as exc:
                raise FailureError(f"{path} line {line}: {exc}; not a row this run wrote (name another file)") \
                    from None
            out[row["failed"]] = row
    except SweepError as exc:
        raise FailureError(str(exc)) from None
    return out


def _printable(text: str, limit: int) -> str:
    """``text`` cut to ``limit`` characters, each one that does not print (a newline, a control) as ``?``."""
    return "".join(c if c.isprintable() else "?" for c in text[:limit])


def _checked_row(raw: dict, algos: Sequence[str], total_bytes: float, expr: str, kind: str, gpus: int) -> dict:
    """One rows-file row typed and checked (``read_rows_file``); ValueError naming the first bad column."""
    import re

    def num(key, lo, hi, empty=False, low_open=True):
        text = raw[key]
        if text == "" and empty:
            return None
        if len(text) > 40 or not re.fullmatch(r"[+-]?(\d+\.?\d*|\.\d+)([eE][+-]?\d{1,3})?", text):
            raise ValueError(f"{key} {text[:40]!r} is not a number")
        x = float(text)
        if not (math.isfinite(x) and (lo < x if low_open else lo <= x) and x <= hi):
            raise ValueError(f"{key} {text[:40]} is outside {'(' if low_open else '['}{lo:g}, {hi:g}]")
        return x

    def integer(key, hi, empty=False):
        text = raw[key]
        if text == "" and empty:
            return None
        if not re.fullmatch(r"\d{1,12}", text) or int(text) > hi:
            raise ValueError(f"{key} {text[:40]!r} is not a count from 0 to {hi:,}")
        return int(text)

    def boolean(key):
        if raw[key] not in ("True", "False"):
            raise ValueError(f"{key} {raw[key][:40]!r} is not True or False")
        return raw[key] == "True"

    row = {k: raw[k] for k in ("failed", "kind", "expr", "what", "cut_off")}
    if not row["failed"]:
        raise ValueError("failed is empty")
    if row["kind"] != kind:
        raise ValueError(f"kind {row['kind'][:40]!r} is not this run's {kind}")
    healthy = row["failed"] == HEALTHY
    if (row["expr"] != expr) if healthy else (row["expr"] and not row["expr"].startswith(f"fail({expr},")):
        raise ValueError(f"expr {row['expr'][:60]!r} is not the design {expr[:60]} or a fail(...) of it")
    row["gpus"] = integer("gpus", gpus)
    row["connected"] = connected = boolean("connected")
    row["steps_bound"] = integer("steps_bound", 10**9, empty=not connected)
    tb = raw["tb_bound"]
    if connected or tb:
        if not re.fullmatch(r"\d{1,40}(/[1-9]\d{0,39})?", tb):
            raise ValueError(f"tb_bound {tb[:40]!r} is not a non-negative fraction")
    row["tb_bound"] = tb or None
    row["optimum_algbw_GBps"] = num("optimum_algbw_GBps", 0.0, MAX_GBPS, empty=True)
    for a in algos:
        status = raw[f"{a}_status"]
        if status not in ("ok", "not applicable", "error", "disconnected") or (status == "disconnected") == connected:
            raise ValueError(f"{a}_status {status[:40]!r} is not one of analyse's for a "
                             f"{'connected' if connected else 'disconnected'} set")
        ok = status == "ok"
        cells = {"status": status, "message": raw[f"{a}_message"], "verified": boolean(f"{a}_verified")}
        cells["time_us"] = num(f"{a}_time_us", 0.0, MAX_TIME_US, empty=not ok)
        cells["algbw_GBps"] = num(f"{a}_algbw_GBps", 0.0, MAX_GBPS, empty=not ok)
        if ok and not cells["verified"]:
            raise ValueError(f"{a}_verified is False on an ok schedule (every counted schedule is verified)")
        if ok and not math.isclose(cells["algbw_GBps"], total_bytes / (cells["time_us"] * 1e3), rel_tol=1e-6):
            raise ValueError(f"{a}_algbw_GBps {raw[f'{a}_algbw_GBps'][:40]} is not the bytes over {a}_time_us")
        if not ok and (cells["time_us"] is not None or cells["algbw_GBps"] is not None):
            raise ValueError(f"{a} has a time on a {status!r} set")
        flow = num(f"{a}_flow_algbw_GBps", 0.0, MAX_GBPS, empty=True, low_open=False)
        if flow is not None:
            cells["flow_algbw_GBps"] = flow
        row.update({f"{a}_{k}": v for k, v in cells.items()})
    row["cached"] = integer("cached", len(algos))
    row["seconds"] = num("seconds", 0.0, 1e9, low_open=False)
    return row
