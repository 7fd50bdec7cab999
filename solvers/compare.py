"""Every applicable synthesizer on several topologies and collectives, side by side, under one time budget.

``compare`` runs each synthesizer of the registry (``solvers.registry``) on each topology and collective, the cheap
ones first (the textbook baselines, then shortest-path trees, expansions, BFB, TACOS, ForestColl and last TE-CCL,
whose MILP runs only on small fabrics under a time limit taken from what is left of the budget). Once the budget
is spent the remaining runs are reported as ``skipped: budget``; a run that has started is not interrupted (only
TE-CCL is bounded from inside). Every row says what happened (``status``):

* ``ok``: a schedule that the verifier accepted, with its costs;
* ``not applicable: <reason>``: the algorithm does not fit the topology or collective (``NotApplicable``);
* ``failed verification``: the algorithm produced an unsound schedule (``ScheduleError``; ``detail`` says why);
* ``skipped: ...``: the budget ran out, or TE-CCL was not tried on a fabric this large;
* ``error: ...``: anything else the algorithm raised (a bug to report; the other rows are still good).

Beside them, one ``lower bound`` row per topology and collective: D(G) steps (2 D(G) for allreduce), the
tightest bandwidth factor we prove (``tb_factor``, units of M/B: T_B* of ``solvers.core.cost.tb_lower_bound``,
or ForestColl's cut bound where it is larger) and the time of ``solvers.runtime.bounds.tightest_bound``, whose
``detail`` names the bound that sets it ("bound: ForestColl optimum (cut bound, 1/x* = ...)", "bound: latency
bound ...") and, for allreduce, says that ForestColl's RS+AG time bounds RS+AG schedules only; where self-loops
put T_B* out of reach, ``detail`` says so too and gives the bound without them (``self_loop_tb_bound``); and
it names the link rates every row of its design is priced at. A row whose schedule another synthesizer already
returned, transfer for transfer (``schedule_digest``), says whose (``same_as``).

Time (``time_us``) for the workload's vector of M = ``total_bytes`` bytes comes from the runtime model
(``solvers.runtime``): the schedule run as a runtime runs it, pipelined over the best number of slices
(``slices``), sends sharing links; ``algbw_GBps`` = M / time and ``busbw_GBps`` as nccl-tests define them. Links
are priced

* with ``alpha_us`` and ``bandwidth_gbs`` given, by the alpha-beta model of the app's sidebar: every link alpha,
  bandwidths scaled so that a node's egress is B (``solvers.runtime.Execution.alpha_beta``); the papers' step
  model steps * alpha + tb_factor * M / B is the second figure ``step_model_us``;
* without them, at the topology's own link alphas and bandwidths.

The bound row's time is the largest of the lower bounds of ``solvers.runtime.bounds`` in the same prices:
the farthest alpha distance, and each bandwidth bound (ForestColl's cut bound (M/N)/x* for allgather and, on the
links into the cut, reduce-scatter, M over the smallest cut between GPUs for allreduce, the per-GPU and volume
bounds) plus the least alpha of its links. No modelled time is below it. Latency plus bandwidth is not a bound
in the runtime model (a pipeline overlaps them); the papers' step model D(G) alpha + tb M/B, where it is one,
is the row's ``step_model_us``.

``curves`` samples every row's modelled time against M and ``winners`` reads, from the samples, which row is
fastest over each range of sizes (the crossovers interpolated on the log-log curves).
"""
from __future__ import annotations

import math
import time
from bisect import bisect_right
from dataclasses import dataclass, field
from typing import Iterable, NamedTuple, Sequence

from topologies.model import Topology

from .core.cost import alpha_beta_us, self_loop_tb_bound, steps_lower_bound, tb_lower_bound
from .core.errors import NotApplicable, ScheduleError
from .core.schedule import Collective
from .registry import SKIP_BUDGET, Progress
from .runtime import Execution, Model, Workload, busbw_factor
from .runtime.bounds import bound_terms, isolated, tightest_bound
from .synthesize import ALGORITHMS, synthesize

BOUND = "lower bound"
OK = "ok"
SKIPPED_BUDGET = SKIP_BUDGET
DEFAULT_BUDGET_S = 60.0
DEFAULT_BYTES = 1.0e6
EXPORT_MAX_TRANSFERS = 20_000       # MSCCL export is tried up to this many transfers
SIZES = tuple(10.0 ** k for k in range(3, 11))
PLOT_SIZES = tuple(10.0 ** (3 + k / 8) for k in range(57))      # the same range, eight points a decade
COLUMNS = ("topology", "name", "N", "collective", "algo", "status", "steps", "tb_factor", "tb_factor_exact",
           "steps_lower_bound", "tb_lower_bound", "tb_lower_bound_exact", "time_us", "algbw_GBps", "busbw_GBps",
           "slices", "step_model_us", "synthesis_s", "verified", "exportable", "export_limits", "transfers", "detail",
           "same_as")


def __getattr__(name: str):
    if name == "ORDER":              # the registry's names, cheap first (read live: plug-ins count)
        return tuple(ALGORITHMS)
    raise AttributeError(name)


def algorithm_order(algos: Iterable[str] | None = None) -> list[str]:
    """The algorithms to run, cheap ones first (the registry's ``rank``: closed-form baselines, then graph
    searches, LPs, the greedy, the tree packing and the MILP last); ``algos`` (names) restricts them. Unknown
    names: ValueError."""
    every = list(ALGORITHMS)
    if algos is None:
        return every
    wanted = [a.strip() for a in algos if a and a.strip()]
    unknown = [a for a in wanted if a not in ALGORITHMS]
    if unknown:
        raise ValueError(f"unknown algorithm {unknown[0]!r} (choose from {', '.join(every)})")
    if not wanted:
        raise ValueError("no algorithm to compare")
    return [a for a in every if a in wanted]


def _collectives(collectives) -> list[Collective]:
    if isinstance(collectives, (str, Collective)):
        collectives = [collectives]
    out: list[Collective] = []
    for c in collectives:
        coll = c if isinstance(c, Collective) else Collective.parse(str(c).strip())
        if coll is Collective.CUSTOM:
            raise ValueError("compare takes allgather, reduce_scatter, allreduce and alltoall; a custom demand "
                             "needs its matrix (use schedule --algo teccl --collective custom)")
        if coll not in out:
            out.append(coll)
    if not out:
        raise ValueError("no collective to compare")
    return out


def _label(topo: Topology) -> tuple[str, str]:
    expr = topo.expr or topo.name or "topology"
    return expr, topo.name or expr


@dataclass
class CompareResult:
    """The rows of a comparison (dicts with the keys of ``COLUMNS``), the workload they were priced for, and the
    runtime model of every verified row (for curves at other sizes)."""

    rows: list[dict]
    total_bytes: float
    alpha_us: float | None = None
    bandwidth_gbs: float | None = None
    budget_s: float = DEFAULT_BUDGET_S
    elapsed_s: float = 0.0
    algos: list[str] = field(default_factory=list)
    models: dict[int, Model] = field(default_factory=dict, repr=False)      # row index -> its model
    topologies: dict[int, Topology] = field(default_factory=dict, repr=False)   # bound row index -> fabric
    workload: Workload | None = None
    _curves: dict = field(default_factory=dict, repr=False, compare=False)

    def __post_init__(self):
        if self.workload is None:
            self.workload = _workload(self.total_bytes, self.alpha_us, self.bandwidth_gbs)

    @property
    def time_model(self) -> str:
        return "links" if self.workload.prices == "links" else "alpha-beta"

    @property
    def execution(self) -> Execution:
        return self.workload.execution

    def curves(self, sizes: Sequence[float] = SIZES) -> list["Curve"]:
        """The modelled time against M of every verified row and every bound (kept per set of sizes)."""
        key = tuple(float(m) for m in sizes)
        if key not in self._curves:
            self._curves[key] = curves(self, sizes)
        return self._curves[key]

    def winners(self, sizes: Sequence[float] = PLOT_SIZES) -> list["Winner"]:
        return winners(self.curves(sizes))

    def to_frame(self):
        import pandas as pd

        frame = pd.DataFrame(self.rows, columns=list(COLUMNS))
        return frame.astype({**dict.fromkeys(("N", "steps", "steps_lower_bound", "transfers", "slices"), "Int64"),
                             **dict.fromkeys(("tb_factor", "tb_lower_bound", "time_us", "algbw_GBps", "busbw_GBps",
                                              "step_model_us", "synthesis_s"), "float64")})

    def as_dict(self, sizes: Sequence[float] = PLOT_SIZES) -> dict:
        return {"rows": self.rows, "winners": [w._asdict() for w in self.winners(sizes)],
                "workload": {**self.workload.as_dict(), "time_model": self.time_model},
                "winners_model": {"model": self.workload.price_label, "from_bytes": min(sizes), "to_bytes": max(sizes)},
                "budget_s": self.budget_s, "elapsed_s": round(self.elapsed_s, 3), "algos": self.algos}


def _workload(total_bytes: float, alpha_us: float | None, bandwidth_gbs: float | None) -> Workload:
    if (alpha_us is None) != (bandwidth_gbs is None):
        raise ValueError("give alpha and bandwidth together (the alpha-beta model), or neither (the topology's "
                         "own link alphas and bandwidths)")
    if alpha_us is None:
        return Workload(total_bytes, "links")
    return Workload(total_bytes, "uniform", alpha_us, bandwidth_gbs)


def compare(topologies: Sequence[Topology | str], collectives=("allreduce",), total_bytes: float = DEFAULT_BYTES,
            alpha_us: float | None = None, bandwidth_gbs: float | None = None,
            budget_s: float = DEFAULT_BUDGET_S, algos: Iterable[str] | None = None,
            progress: Progress | None = None, workload: Workload | None = None,
            root: int | str | None = None) -> CompareResult:
    """Run every applicable synthesizer on every topology and collective within ``budget_s`` seconds (module
    docstring). ``topologies`` are Topology objects or expressions/file paths. ``progress(label, fraction)``
    hears before each run (and inside the long ones), fraction of all runs done. ``workload`` (M and its prices,
    ``solvers.runtime.Workload``) replaces ``total_bytes``, ``alpha_us`` and ``bandwidth_gbs``: the app and the CLI
    pass theirs, so that a row's time is the one their other pages and commands show. ``root`` is the root of
    the rooted collectives (a rank or a compute node's name, ``solvers.synthesize.resolve_root``; default rank 0);
    their rows name it under ``root``."""
    from topologies import load

    from .synthesize import resolve_root

    topos = [load(t) if isinstance(t, str) else t for t in topologies]
    if not topos:
        raise ValueError("no topology to compare")
    colls = _collectives(collectives)
    order = algorithm_order(algos)
    if workload is None:
        if not (total_bytes > 0):
            raise ValueError("the vector size M must be positive")
        if alpha_us is not None and bandwidth_gbs is not None and not (alpha_us >= 0 and bandwidth_gbs > 0):
            raise ValueError("alpha must be non-negative and the bandwidth positive")
        workload = _workload(total_bytes, alpha_us, bandwidth_gbs)
    total_bytes = workload.total_bytes
    if not (budget_s >= 0):
        raise ValueError("the budget must be non-negative")
    rooted = any(c.rooted for c in colls)
    if root is not None and not rooted:
        raise ValueError("a root goes with broadcast, reduce, gather or scatter")
    nodes: list[int | None] = []
    unrooted: dict[int, str] = {}               # designs the root does not name a GPU of: why
    for i, t in enumerate(topos):
        try:
            nodes.append(resolve_root(t, root) if rooted else None)
        except NotApplicable as exc:
            nodes.append(None)
            unrooted[i] = f"not applicable: {_first_line(exc)}"
    start = time.monotonic()
    bounds = {(i, c): (_base_row(t, c, BOUND, unrooted[i]) if c.rooted and i in unrooted
                       else _bound_row(t, c, workload, nodes[i])) for i, t in enumerate(topos) for c in colls}
    jobs = [(a, i, c) for a in order for i in range(len(topos)) for c in colls]
    done: dict[tuple[str, int, Collective], dict] = {}
    for k, (algo, i, coll) in enumerate(jobs):
        topo = topos[i]
        label = f"{algo} on {_label(topo)[1]} ({coll.value})"
        if progress is not None:
            progress(label, k / len(jobs))
        hear = (lambda phase, f, k=k, label=label: progress(f"{label}: {phase}",
                                                           (k + min(max(f, 0.0), 1.0)) / len(jobs))) \
            if progress is not None else None
        if coll.rooted and i in unrooted:
            done[(algo, i, coll)] = (_base_row(topo, coll, algo, unrooted[i]), None)
            continue
        done[(algo, i, coll)] = _run(topo, algo, coll, workload, budget_s - (time.monotonic() - start), hear,
                                     nodes[i] if coll.rooted else None)
    if progress is not None:
        progress("done", 1.0)
    rows, models, fabrics = [], {}, {}
    for i in range(len(topos)):
        for c in colls:
            fabrics[len(rows)] = topos[i]
            rows.append(bounds[(i, c)])
            digests = {}
            for a in order:
                row, model = done[(a, i, c)]
                if model is not None:
                    models[len(rows)] = model
                    digests[len(rows)] = schedule_digest(model.topo, model.schedule)
                rows.append(row)
            _note_same(rows, digests)
    uniform = workload.prices != "links"
    return CompareResult(rows, total_bytes, workload.alpha_us if uniform else None,
                         workload.bandwidth_gbs if uniform else None, budget_s, time.monotonic() - start, order,
                         models, fabrics, workload)


SAME_MAX_TRANSFERS = 2_000_000     # schedules compared transfer for transfer up to this size


def schedule_digest(topo: Topology, schedule) -> str | None:
    """A digest of a schedule's transfers (step, link, shard, [lo, hi), reduce) as a set, bounds in lowest
    terms, with the fabric's size: two synthesizers whose digests agree returned the same schedule. None above
    ``SAME_MAX_TRANSFERS`` or where the bounds do not fit 64-bit columns."""
    import hashlib

    import numpy as np

    from .core.schedule import columns

    if schedule.count > SAME_MAX_TRANSFERS:
        return None
    cols = columns(schedule)
    if cols is None:
        return None
    g = np.gcd(np.gcd(cols.lo, cols.hi), np.int64(cols.one)) if len(cols.lo) else np.int64(1)
    rows = np.stack([cols.step, cols.link, cols.shard, cols.lo // g, cols.hi // g, np.int64(cols.one) // g,
                     cols.reduce.astype(np.int64)], axis=1) if len(cols.lo) else np.zeros((0, 7), np.int64)
    rows = np.unique(rows, axis=0)
    head = f"{topo.num_nodes}:{len(topo.links)}:{schedule.collective.value}:".encode()
    return hashlib.sha256(head + np.ascontiguousarray(rows).tobytes()).hexdigest()


def _note_same(rows: list[dict], digests: dict[int, str | None]) -> None:
    """Tell, on each row whose schedule another synthesizer already returned, whose it is."""
    first: dict[str, str] = {}
    for i, digest in digests.items():
        if digest is None:
            continue
        if digest in first:
            note = f"the same schedule as {first[digest]}"
            rows[i]["detail"] = "; ".join(x for x in (note, rows[i]["detail"]) if x)
            rows[i]["same_as"] = first[digest]
        else:
            first[digest] = rows[i]["algo"]


def _base_row(topo: Topology, coll: Collective, algo: str, status: str, node: int | None = None) -> dict:
    """A row of ``COLUMNS``; a rooted collective's row adds ``root`` (the root's name)."""
    expr, name = _label(topo)
    row = dict.fromkeys(COLUMNS)
    row.update(topology=expr, name=name, N=topo.n, collective=coll.value, algo=algo, status=status, verified=False,
               detail="")
    if node is not None:
        row["root"] = topo.names[node]
    return row


def _bound_row(topo: Topology, coll: Collective, workload: Workload, node: int | None = None) -> dict:
    """The ``lower bound`` row: the tightest bound's time and name (``tightest_bound``), D(G) steps, and the
    larger of T_B* and the cut bound as the bandwidth factor."""
    total_bytes, execution = workload.total_bytes, workload.execution
    node = node if coll.rooted else None
    if isolated(topo):             # no schedule exists, and every bandwidth ratio would divide by zero
        row = _base_row(topo, coll, BOUND, "not applicable", node)
        row["detail"] = "no bound: a GPU of this fabric cannot send or receive, so no schedule exists"
        return row
    row = _base_row(topo, coll, BOUND, "bound", node)
    steps = steps_lower_bound(topo, coll, node)
    bound = tightest_bound(topo, coll, total_bytes, execution, node)
    tb = max(tb_lower_bound(topo, coll, node), bound.tb)
    t = bound.time_us
    row.update(steps=steps, tb_factor=float(tb), tb_factor_exact=str(tb), steps_lower_bound=steps,
               tb_lower_bound=float(tb), tb_lower_bound_exact=str(tb), time_us=t,
               algbw_GBps=total_bytes / t / 1e3 if t > 0 else None, verified=None)
    if t > 0:
        row["busbw_GBps"] = row["algbw_GBps"] * busbw_factor(coll, topo.n)
    if workload.prices != "links":
        row["step_model_us"] = alpha_beta_us(steps, tb, total_bytes, workload.alpha_us, workload.bandwidth_gbs)
    notes = [f"bound: {bound.name}"] + ([bound.note] if bound.note else []) + [_link_rates(topo, workload)]
    tight = self_loop_tb_bound(topo, coll)
    if tight is not None:
        notes.append(f"out of reach: tb bound {tb_lower_bound(topo, coll)} counts {tight[1]} self-loop(s), which "
                     f"carry nothing; without them no schedule beats tb {tight[0]}")
    row["detail"] = "; ".join(notes)
    return row


def _link_rates(topo: Topology, workload: Workload) -> str:
    """The link speeds every row of this design is priced at (issue 59, finding 9: a note read as if every link
    ran at its declared 1 GB/s beside the sidebar's 12.5): the declared speeds, scaled in uniform prices by B
    over the slowest GPU's egress."""
    from fractions import Fraction

    from .core.cost import node_bandwidth

    speeds = sorted({l.bandwidth for l in topo.links if l.src != l.dst}) or [Fraction(0)]
    declared = ", ".join(f"{float(b):g}" for b in speeds[:4]) + (" ..." if len(speeds) > 4 else "")
    if workload.prices == "links":
        return f"links priced at their declared {declared} GB/s"
    egress = float(node_bandwidth(topo))
    scale = workload.bandwidth_gbs / egress
    rates = ", ".join(f"{float(b) * scale:.4g}" for b in speeds[:4]) + (" ..." if len(speeds) > 4 else "")
    return (f"links priced at {rates} GB/s (declared {declared} GB/s, times B / the slowest GPU's egress = "
            f"{workload.bandwidth_gbs:g}/{egress:g})")


def _first_line(exc: BaseException) -> str:
    text = str(exc).strip()
    return text.splitlines()[0] if text else type(exc).__name__


def _run(topo: Topology, algo: str, coll: Collective, workload: Workload, left_s: float,
         progress, node: int | None = None) -> tuple[dict, Model | None]:
    """One synthesizer on one topology and collective (rooted at node ``node``): a row whatever happens, and the
    runtime model of its schedule when it has one."""
    if left_s <= 0:
        return _base_row(topo, coll, algo, SKIPPED_BUDGET, node), None
    plan = ALGORITHMS[algo].compare_plan(topo, coll, left_s)
    if isinstance(plan, str):                    # the synthesizer declines this run (size, time left)
        return _base_row(topo, coll, algo, plan, node), None
    options = plan or None
    t0 = time.monotonic()
    root = None if node is None else topo.names[node]
    try:
        result = synthesize(topo, algo, coll, progress=progress, total_bytes=workload.total_bytes, options=options,
                            root=root)
    except NotApplicable as exc:
        return _base_row(topo, coll, algo, f"not applicable: {_first_line(exc)}", node), None
    except ScheduleError as exc:
        row = _base_row(topo, coll, algo, "failed verification", node)
        row.update(detail=_first_line(exc), synthesis_s=time.monotonic() - t0)
        return row, None
    except Exception as exc:     # noqa: BLE001  one synthesizer's bug must not lose the other rows
        row = _base_row(topo, coll, algo, f"error: {type(exc).__name__}: {_first_line(exc)}", node)
        row["synthesis_s"] = time.monotonic() - t0
        return row, None
    seconds = time.monotonic() - t0
    row = _base_row(topo, coll, algo, OK, node)
    c, schedule, fabric = result.cost, result.schedule, result.topology
    model = workload.model(fabric, schedule)
    priced = workload.price_result(result, model)
    run = priced.run
    row.update(steps=c.steps, tb_factor=float(c.tb_factor), tb_factor_exact=str(c.tb_factor),
               steps_lower_bound=c.steps_lower_bound, tb_lower_bound=float(c.tb_lower_bound),
               tb_lower_bound_exact=str(c.tb_lower_bound), time_us=run.time_us, algbw_GBps=run.algbw_gbs,
               busbw_GBps=run.busbw_gbs, slices=run.slices, synthesis_s=seconds,
               verified=bool(result.verification.ok), transfers=schedule.count,
               detail=result.detail.compare_note() if result.detail is not None else "")
    row["step_model_us"] = priced.step_model_us
    left_s -= time.monotonic() - t0
    if schedule.count <= EXPORT_MAX_TRANSFERS and left_s > 0:
        from .export import TARGETS, export

        try:
            _, report = export(fabric, schedule)
            row["exportable"] = True
            limits = TARGETS[report.runtime]
            row["export_limits"] = (f"{report.runtime}: {report.tbs_per_rank} of {limits.max_tbs} threadblocks/rank, "
                                    f"{report.steps_per_tb} of {limits.max_steps} steps/threadblock"
                                    + (f"; coarsened, time {report.coarsened.loss:+.1%}" if report.coarsened else ""))
        except Exception as exc:     # noqa: BLE001  XmlError, NotApplicable, or a lowering limit
            row["exportable"] = False
            row["detail"] = "; ".join(x for x in (row["detail"], f"MSCCL export: {_first_line(exc)}") if x)
    return row, model


# ------------------------------------------------------------------------------------------ curves and winners
class Curve(NamedTuple):
    """The modelled time of one row (or a bound) at each of ``sizes``, with the pipelining depth it used."""

    label: str
    topology: str
    name: str
    collective: str
    algo: str
    sizes: tuple[float, ...]
    times_us: tuple[float, ...]
    slices: tuple[int, ...] = ()

    @property
    def bound(self) -> bool:
        return self.algo == BOUND

    def at(self, m: float) -> float:
        """The time at ``m``, interpolated linearly in log-log between the samples (the end segments extended)."""
        xs, ys = self.sizes, self.times_us
        if len(xs) == 1:
            return ys[0]
        j = min(max(bisect_right(xs, m) - 1, 0), len(xs) - 2)
        if ys[j] <= 0 or ys[j + 1] <= 0:
            return ys[j] + (ys[j + 1] - ys[j]) * (m - xs[j]) / (xs[j + 1] - xs[j])
        w = (math.log(m) - math.log(xs[j])) / (math.log(xs[j + 1]) - math.log(xs[j]))
        return math.exp(math.log(ys[j]) + w * (math.log(ys[j + 1]) - math.log(ys[j])))


class Winner(NamedTuple):
    """The fastest verified row over [from_bytes, to_bytes] (a tie goes to the row listed first)."""

    from_bytes: float
    to_bytes: float
    algo: str
    topology: str
    collective: str
    name: str
    ties: tuple[str, ...] = ()          # other rows as fast over the whole range ("algo on name")


TIE_RTOL = 1e-9


def curves(result: "CompareResult", sizes: Sequence[float] = SIZES) -> list[Curve]:
    """The modelled time against M of every verified row and every bound row of ``result``."""
    if not sizes or min(sizes) <= 0:
        raise ValueError("sizes must be positive")
    sizes = tuple(float(m) for m in sorted(sizes))
    out = []
    for i, r in enumerate(result.rows):
        if r["algo"] == BOUND:
            if r["status"] != "bound":              # no bound where the root names no GPU of the design
                continue
            topo = result.topologies[i]
            coll = Collective.parse(r["collective"])
            node = topo.names.index(r["root"]) if r.get("root") is not None else None
            terms = bound_terms(topo, coll, result.execution, node)
            times = tuple(terms.at(m).time_us for m in sizes)
            slices: tuple[int, ...] = ()
        elif r["status"] == OK and r["verified"] and i in result.models:
            t, p = result.models[i].times(sizes)
            times, slices = tuple(float(x) for x in t), tuple(int(x) for x in p)
        else:
            continue
        out.append(Curve(f"{r['algo']} on {r['name']}", r["topology"], r["name"], r["collective"], r["algo"],
                         sizes, times, slices))
    return out


def crossing_size(sizes: Sequence[float], a: Sequence[float], b: Sequence[float], j: int) -> float:
    """Where times ``b`` overtake times ``a`` (both sampled at ``sizes``) between samples j and j+1, linear in
    log-log and clamped to the interval; the later sample where a time is zero or the two do not meet."""
    x0, x1 = math.log(sizes[j]), math.log(sizes[j + 1])
    try:
        d0 = math.log(a[j]) - math.log(b[j])
        d1 = math.log(a[j + 1]) - math.log(b[j + 1])
    except ValueError:               # a zero time (alpha 0 and nothing to send): the next sample
        return sizes[j + 1]
    if d0 == d1:
        return sizes[j + 1]
    w = min(max(d0 / (d0 - d1), 0.0), 1.0)
    return math.exp(x0 + w * (x1 - x0))


def _crossing(a: Curve, b: Curve, j: int) -> float:
    """Where ``b`` overtakes ``a`` between samples j and j+1 (``crossing_size``)."""
    return crossing_size(a.sizes, a.times_us, b.times_us, j)


def winners(curve_list: Sequence[Curve]) -> list[Winner]:
    """The fastest curve at each sampled size, per collective, merged into ranges; where the winner changes
    between two samples the range ends where the two curves cross. Bound curves are left out."""
    out: list[Winner] = []
    by_coll: dict[str, list[Curve]] = {}
    for c in curve_list:
        if not c.bound:
            by_coll.setdefault(c.collective, []).append(c)
    for coll, cs in by_coll.items():
        sizes = cs[0].sizes
        best = []
        for j in range(len(sizes)):          # the first row listed within TIE_RTOL of the fastest
            fastest = min(c.times_us[j] for c in cs)
            best.append(next(k for k, c in enumerate(cs) if c.times_us[j] <= fastest * (1 + TIE_RTOL)))
        lo, start = sizes[0], 0
        for j in range(len(sizes)):
            last = j == len(sizes) - 1
            if last or best[j + 1] != best[j]:
                hi = sizes[j] if last else _crossing(cs[best[j]], cs[best[j + 1]], j)
                b = cs[best[j]]
                ties = tuple(c.label for c in cs if c is not b and all(
                    abs(c.times_us[i] - b.times_us[i]) <= TIE_RTOL * max(b.times_us[i], 1e-300)
                    for i in range(start, j + 1)))
                out.append(Winner(lo, hi, b.algo, b.topology, coll, b.name, ties))
                lo, start = hi, j + 1
    return out
