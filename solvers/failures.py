"""Failures (issue 42): what a broken link, GPU, NIC, switch or box does to a design and to every schedule on it,
and the schedule to run instead.

Failure models on any ``Topology`` (``elements(topo, kind)``), each element named so rows and drawings line up:

* ``links``: a cable, both directions of a link (a link and its reverse, ``Topology.reverse_link``; on a
  directed design, where a link has no reverse, the link alone), named ``a<->b`` (``a->b`` alone; ``#k`` for the
  k-th of parallel cables); self-loops carry nothing between nodes and are never failed;
* ``directed-links``: one direction of a link, ``a->b``;
* ``gpus``: a compute node; the collective then runs on the others;
* ``nics``: a switch node joined to exactly one compute node (a GPU's own NIC, as ``dgx_a100``'s ``b0.nic3``);
* ``switches``: any switch node (NVSwitches, NICs, network switches);
* ``boxes``: every node whose name starts with the same ``prefix.`` (``b0.`` of ``dgx_a100``, ``c1.`` of
  ``mi250``), where a design has at least two such groups of GPUs.

``failure_sets``: every single element of a kind (exhaustive), every K-subset when there are at most
``MAX_SETS``, or K random elements sampled S times from a seeded ``random.Random`` (the same seed, the same sets).
``degrade`` removes the elements and keeps every other node's name and every other link's bandwidth and alpha.

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

import itertools
import math
import random
import time
from dataclasses import dataclass
from fractions import Fraction
from typing import Sequence

import numpy as np

from topologies.model import Link, Topology

from .core.errors import NotApplicable, ScheduleError

__all__ = ["KINDS", "Element", "FailureError", "FailureTask", "analyse", "connectivity", "cut_off", "degrade",
           "describe", "elements", "failure_sets", "lost_failure", "solve_failure", "summarize_rows"]

KINDS = {"links": "cables (both directions of a link)", "directed-links": "one direction of a link",
         "gpus": "compute nodes", "nics": "NICs (switch nodes of one GPU)", "switches": "switch nodes",
         "boxes": "whole boxes (nodes named prefix.*)"}
MAX_SETS = 10_000
MAX_SAMPLES = 10_000


class FailureError(ValueError):
    """A failure model that cannot be applied: an unknown kind, K above the elements there are, too many sets."""


@dataclass(frozen=True)
class Element:
    """One thing that can fail: its kind, its name, the links and the nodes that go with it."""

    kind: str
    name: str
    links: tuple[int, ...] = ()
    nodes: tuple[int, ...] = ()


def _cables(topo: Topology, both: bool) -> list[Element]:
    pair = topo.reverse_link if both else None
    seen: set[int] = set()
    count: dict[tuple[int, int], int] = {}
    out = []
    for i, l in enumerate(topo.links):
        if i in seen or l.src == l.dst:
            continue
        back = pair[i] if pair is not None else None
        ends = (min(l.src, l.dst), max(l.src, l.dst)) if back is not None else (l.src, l.dst)
        k = count[ends] = count.get(ends, 0) + 1
        a, b = topo.names[ends[0]], topo.names[ends[1]]
        name = f"{a}<->{b}" if back is not None else f"{a}->{b}"
        if k > 1:
            name += f"#{k}"
        links = (i, back) if back is not None else (i,)
        seen.update(links)
        out.append(Element("links" if both else "directed-links", name, links))
    return out


def _neighbours(topo: Topology, v: int) -> set[int]:
    return {topo.links[i].dst for i in topo.out_links[v]} | {topo.links[i].src for i in topo.in_links[v]}


def elements(topo: Topology, kind: str) -> list[Element]:
    """Every element of ``kind`` (module docstring) in the design, in node or link order."""
    if kind not in KINDS:
        raise FailureError(f"no failure kind {kind!r}: choose from {', '.join(KINDS)}")
    if kind in ("links", "directed-links"):
        return _cables(topo, kind == "links")
    if kind == "gpus":
        return [Element(kind, topo.names[v], nodes=(v,)) for v in topo.compute_nodes]
    if kind == "switches":
        return [Element(kind, topo.names[v], nodes=(v,)) for v in topo.switch_nodes]
    if kind == "nics":
        return [Element(kind, topo.names[v], nodes=(v,)) for v in topo.switch_nodes
                if sum(1 for u in _neighbours(topo, v) if topo.is_compute(u)) == 1]
    groups: dict[str, list[int]] = {}
    for v, name in enumerate(topo.names):
        head, dot, _ = name.partition(".")
        if dot:
            groups.setdefault(head, []).append(v)
    boxes = [Element(kind, head, nodes=tuple(vs)) for head, vs in groups.items()
             if any(topo.is_compute(v) for v in vs)]
    return boxes if len(boxes) >= 2 else []


def failure_sets(topo: Topology, kind: str, k: int = 1, samples: int | None = None, seed: int = 0
                 ) -> list[tuple[Element, ...]]:
    """The failure sets to analyse: with ``samples`` None, every K-subset of the kind's elements (every single
    one for K = 1), refused above ``MAX_SETS``; else ``samples`` random K-subsets (``random.Random(seed)``)."""
    pool = elements(topo, kind)
    if not pool:
        raise FailureError(f"the design has no {KINDS[kind]} to fail")
    if isinstance(k, bool) or not isinstance(k, int) or not 1 <= k <= len(pool):
        raise FailureError(f"K must be between 1 and the {len(pool)} {KINDS[kind]} of the design, got {k!r}")
    if samples is None:
        count = math.comb(len(pool), k)
        if count > MAX_SETS:
            raise FailureError(f"{count:,} sets of {k} of the {len(pool)} {KINDS[kind]}: above {MAX_SETS:,}; "
                               "sample them (--samples S)")
        return [tuple(c) for c in itertools.combinations(pool, k)]
    if isinstance(samples, bool) or not isinstance(samples, int) or not 1 <= samples <= MAX_SAMPLES:
        raise FailureError(f"samples must be between 1 and {MAX_SAMPLES}, got {samples!r}")
    rng = random.Random(seed)
    return [tuple(pool[i] for i in sorted(rng.sample(range(len(pool)), k))) for _ in range(samples)]


def degrade(topo: Topology, failed: Sequence[Element]) -> Topology:
    """``topo`` without the failed elements' nodes and links (and the links of the failed nodes); every other node
    keeps its name and kind, every other link its bandwidth and alpha."""
    gone_nodes = {v for e in failed for v in e.nodes}
    gone_links = {i for e in failed for i in e.links}
    keep = [v for v in range(topo.num_nodes) if v not in gone_nodes]
    index = {v: j for j, v in enumerate(keep)}
    links = tuple(Link(index[l.src], index[l.dst], l.bandwidth, l.alpha) for i, l in enumerate(topo.links)
                  if i not in gone_links and l.src in index and l.dst in index)
    label = " + ".join(e.name for e in failed)
    return Topology(tuple(topo.names[v] for v in keep), tuple(topo.kinds[v] for v in keep), links,
                    name=f"{topo.name or topo.expr} without {label}"[:300], expr=f"{topo.expr} - {label}"[:2000])


def describe(topo: Topology, element: Element) -> str:
    """What an element is in its design, in a few words (the failure rows' ``what``)."""
    if element.links:
        l = topo.links[element.links[0]]
        both = "each way" if len(element.links) > 1 else "one way"
        return f"link {element.name} ({float(l.bandwidth):g} GB/s {both})"
    if element.kind == "boxes":
        gpus = sum(1 for v in element.nodes if topo.is_compute(v))
        return f"box {element.name} ({gpus} GPUs, {len(element.nodes) - gpus} switches)"
    (v,) = element.nodes
    if topo.is_compute(v):
        return f"GPU {element.name} (the collective runs on the other {topo.n - 1})"
    near = _neighbours(topo, v)
    gpus = sorted(topo.names[u] for u in near if topo.is_compute(u))
    others = sum(1 for u in near if not topo.is_compute(u))
    switches = f"{others} switch{'' if others == 1 else 'es'}"
    if len(gpus) == 1:
        return f"NIC {element.name} of GPU {gpus[0]}" + (f", cabled to {switches}" if others else "")
    if not gpus:
        return f"switch {element.name} joining {switches}"
    shown = ", ".join(gpus[:4]) + (" ..." if len(gpus) > 4 else "")
    return f"switch {element.name} joining {len(gpus)} GPUs ({shown})" + (f" and {switches}" if others else "")


def cut_off(topo: Topology) -> list[str]:
    """The compute nodes outside the strongly connected part that holds most of them (what a failure cut off)."""
    import networkx as nx

    g = nx.DiGraph()
    g.add_nodes_from(range(topo.num_nodes))
    g.add_edges_from((l.src, l.dst) for l in topo.links)
    parts = sorted(nx.strongly_connected_components(g), key=lambda c: -sum(1 for v in c if topo.is_compute(v)))
    main = parts[0] if parts else set()
    return [topo.names[v] for v in topo.compute_nodes if v not in main]


def connectivity(topo: Topology) -> dict:
    """The design's node and link connectivity (networkx, on the simple directed graph of its links: parallel
    links are one arc, self-loops none): how many nodes, and how many links, must fail to disconnect it."""
    import networkx as nx

    g = nx.DiGraph()
    g.add_nodes_from(range(topo.num_nodes))
    g.add_edges_from((l.src, l.dst) for l in topo.links if l.src != l.dst)
    return {"node_connectivity": nx.node_connectivity(g), "link_connectivity": nx.edge_connectivity(g)}


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

    @property
    def key(self) -> tuple:
        return (self.expr, self.kind, self.failed, self.algos, self.collective, self.workload)

    @property
    def label(self) -> str:
        return " + ".join(self.failed) if self.failed else "(none: the healthy design)"


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
    """The row of one failure set (module docstring): ``failed``, ``kind``, ``what`` (``describe``), ``gpus``,
    ``connected``, ``cut_off`` (the GPUs a disconnecting failure cut off), ``steps_bound``, ``tb_bound``,
    ``optimum_algbw_GBps`` (ForestColl's optimal allgather algbw, in the links' own GB/s as its flow model
    counts them), then per synthesizer ``<algo>_status``, ``<algo>_time_us`` and ``<algo>_algbw_GBps`` (the
    runtime model at the workload's prices), ``<algo>_verified``, ``<algo>_message`` and, where the synthesizer
    has one, ``<algo>_flow_algbw_GBps`` (its own flow model, the optimum's units); ``seconds`` and ``cached``
    (synthesizer results read from the results cache). Never raises for what a failure does."""
    from topologies import load
    from topologies.properties import is_strongly_connected

    from .core.cost import node_bandwidth, steps_lower_bound, tb_lower_bound
    from .forestcoll.search import fabric as forest_fabric, optimal_ratio
    from .results_cache import ResultsCache, UnsafeCache, cached_synthesize
    from .runtime.workload import Workload

    start = time.perf_counter()
    if cache is None:
        cache = ResultsCache.default()
    key = _row_key(task)
    if cache is not None:
        try:
            row = cache.get_record(key)
        except UnsafeCache:
            cache, row = None, None
        if row is not None and row.get("failed") == task.label:
            return {**row, "from_cache": True}
    work = Workload(*task.workload)
    healthy = load(task.expr, max_nodes=task.max_nodes)
    by_name = {e.name: e for e in elements(healthy, task.kind)}
    missing = [n for n in task.failed if n not in by_name]
    if missing:
        raise FailureError(f"{task.expr} has no {task.kind} element named {missing[0]!r}")
    failed = [by_name[n] for n in task.failed]
    topo = degrade(healthy, failed) if failed else healthy
    factor = float(work.bandwidth_gbs) / float(node_bandwidth(healthy))
    row = {"failed": task.label, "kind": task.kind, "what": "; ".join(describe(healthy, e) for e in failed),
           "gpus": topo.n, "connected": False, "cut_off": "", "steps_bound": None, "tb_bound": None,
           "optimum_algbw_GBps": None}
    connected = topo.n >= 2 and is_strongly_connected(topo)
    row["connected"] = connected
    if not connected and topo.n >= 2:
        lost = cut_off(topo)
        row["cut_off"] = ", ".join(lost[:8]) + (f" and {len(lost) - 8} more" if len(lost) > 8 else "")
    if connected:
        row["steps_bound"] = steps_lower_bound(topo, task.collective)
        row["tb_bound"] = str(tb_lower_bound(topo, task.collective))
    hits = 0
    for algo in task.algos:
        cells = {"status": "disconnected", "time_us": None, "algbw_GBps": None, "verified": False, "message": ""}
        if connected:
            try:
                result, hit = cached_synthesize(topo, algo, task.collective, cache=cache,
                                                total_bytes=work.total_bytes, warn=None)
                hits += hit is not None
                run = _priced(result.topology, result.schedule, work, factor).run(work.total_bytes)
                cells.update(status="ok", time_us=run.time_us, algbw_GBps=run.algbw_gbs,
                             verified=bool(result.verification.ok))
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


def _row_key(task: FailureTask) -> str:
    """The results cache's name for a failure set's row: the task and the code version (any change to the code
    that builds, verifies or times a schedule starts afresh, as for schedules)."""
    import hashlib
    import json

    from .results_cache import code_version

    text = json.dumps(["failures", code_version(), list(task.key)], default=str)
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
    of the healthy design's, the worst failure set, and how many sets it could not run (``not ok``)."""
    total = len(rows)
    out = {"sets": total, "disconnected": sum(1 for r in rows if not r["connected"]) / total if total else 0.0,
           "per_synthesizer": {}}
    for algo in algos:
        base = healthy.get(f"{algo}_algbw_GBps")
        ratios = []
        for r in rows:
            bw = r.get(f"{algo}_algbw_GBps")
            if not r["connected"]:
                ratios.append((0.0, r["failed"]))
            elif bw is not None and base:
                ratios.append((bw / base, r["failed"]))
        worst = min(ratios, default=None)
        values = sorted(x for x, _ in ratios)
        out["per_synthesizer"][algo] = {
            "healthy_algbw_GBps": base,
            "median_algbw_fraction": float(np.median(values)) if values else None,
            "worst_algbw_fraction": worst[0] if worst else None,
            "worst_failure": worst[1] if worst else None,
            "not_ok": sum(1 for r in rows if r["connected"] and r.get(f"{algo}_status") != "ok")}
    return out
