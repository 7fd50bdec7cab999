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

Beside them, one ``lower bound`` row per topology and collective: D(G) steps (2 D(G) for allreduce) and the
bandwidth bound T_B* of ``solvers.core.cost.tb_lower_bound``.

Time (``time_us``) for the workload's vector of M = ``total_bytes`` bytes:

* with ``alpha_us`` and ``bandwidth_gbs`` given, the abstract alpha-beta runtime of the app's sidebar
  (``studio.workload.Workload.runtime_us``): steps * alpha + tb_factor * M / B, B in GB/s (1e3 bytes per us);
* without them, the runtime on the topology's own links (``solvers.core.cost.time_us``: each step lasts as long as
  its slowest link, alpha_l + bytes_l / bandwidth_l); the bound row then uses the smallest link alpha per step
  and the smallest node egress bandwidth for B.

``algbw_GBps`` is M / time, except for ForestColl, whose trees are pipelined: its algbw is N / the flow-model
factor (``solvers.core.cost.pipelined_factor``), in the links' GB/s, scaled so that a node's egress is B in the
alpha-beta model.

``curves`` turns rows into runtime-against-M lines (alpha-beta: a line a + b M per row) and ``winners`` finds,
exactly, which row is fastest over each range of message sizes.
"""
from __future__ import annotations

import time
from dataclasses import dataclass, field
from fractions import Fraction
from typing import Iterable, NamedTuple, Sequence

from topologies.model import Topology

from .core.cost import alpha_beta_us, node_bandwidth, steps_lower_bound, time_us, tb_lower_bound
from .core.errors import NotApplicable, ScheduleError
from .core.schedule import Collective
from .registry import SKIP_BUDGET, Progress
from .synthesize import ALGORITHMS, synthesize

BOUND = "lower bound"
OK = "ok"
SKIPPED_BUDGET = SKIP_BUDGET
DEFAULT_BUDGET_S = 60.0
DEFAULT_BYTES = 1.0e6
DEFAULT_ALPHA_US = 10.0             # the app's sidebar defaults, for curves when no alpha-beta model was given
DEFAULT_BANDWIDTH_GBS = 12.5
EXPORT_MAX_TRANSFERS = 20_000       # MSCCL export is tried up to this many transfers
SIZES = tuple(10.0 ** k for k in range(3, 11))
PLOT_SIZES = tuple(10.0 ** (3 + k / 8) for k in range(57))      # the same range, eight points a decade
COLUMNS = ("topology", "name", "N", "collective", "algo", "status", "steps", "tb_factor", "tb_factor_exact",
           "steps_lower_bound", "tb_lower_bound", "tb_lower_bound_exact", "time_us", "algbw_GBps", "synthesis_s",
           "verified", "exportable", "transfers", "detail")


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
    """The rows of a comparison (dicts with the keys of ``COLUMNS``) and the workload they were priced for."""

    rows: list[dict]
    total_bytes: float
    alpha_us: float | None = None
    bandwidth_gbs: float | None = None
    budget_s: float = DEFAULT_BUDGET_S
    elapsed_s: float = 0.0
    algos: list[str] = field(default_factory=list)

    @property
    def time_model(self) -> str:
        return "links" if self.alpha_us is None else "alpha-beta"

    def curves(self, sizes: Sequence[float] = SIZES) -> list["Curve"]:
        """Runtime against M (alpha-beta) for every verified row and bound; without an alpha-beta model, the
        sidebar's defaults (10 us, 12.5 GB/s)."""
        alpha = DEFAULT_ALPHA_US if self.alpha_us is None else self.alpha_us
        bw = DEFAULT_BANDWIDTH_GBS if self.bandwidth_gbs is None else self.bandwidth_gbs
        return curves(self.rows, sizes, alpha, bw)

    def winners(self, sizes: Sequence[float] = SIZES) -> list["Winner"]:
        return winners(self.curves(sizes))

    def to_frame(self):
        import pandas as pd

        frame = pd.DataFrame(self.rows, columns=list(COLUMNS))
        return frame.astype({**dict.fromkeys(("N", "steps", "steps_lower_bound", "transfers"), "Int64"),
                             **dict.fromkeys(("tb_factor", "tb_lower_bound", "time_us", "algbw_GBps", "synthesis_s"),
                                             "float64")})

    def as_dict(self, sizes: Sequence[float] = SIZES) -> dict:
        alpha = DEFAULT_ALPHA_US if self.alpha_us is None else self.alpha_us
        bw = DEFAULT_BANDWIDTH_GBS if self.bandwidth_gbs is None else self.bandwidth_gbs
        return {"rows": self.rows, "winners": [w._asdict() for w in self.winners(sizes)],
                "workload": {"bytes": self.total_bytes, "alpha_us": self.alpha_us,
                             "bandwidth_gbs": self.bandwidth_gbs, "time_model": self.time_model},
                "winners_model": {"alpha_us": alpha, "bandwidth_gbs": bw, "from_bytes": min(sizes),
                                  "to_bytes": max(sizes)},
                "budget_s": self.budget_s, "elapsed_s": round(self.elapsed_s, 3), "algos": self.algos}


def compare(topologies: Sequence[Topology | str], collectives=("allreduce",), total_bytes: float = DEFAULT_BYTES,
            alpha_us: float | None = None, bandwidth_gbs: float | None = None,
            budget_s: float = DEFAULT_BUDGET_S, algos: Iterable[str] | None = None,
            progress: Progress | None = None) -> CompareResult:
    """Run every applicable synthesizer on every topology and collective within ``budget_s`` seconds (module
    docstring). ``topologies`` are Topology objects or expressions/file paths. ``progress(label, fraction)``
    hears before each run (and inside the long ones), fraction of all runs done."""
    from topologies import load

    topos = [load(t) if isinstance(t, str) else t for t in topologies]
    if not topos:
        raise ValueError("no topology to compare")
    colls = _collectives(collectives)
    order = algorithm_order(algos)
    if not (total_bytes > 0):
        raise ValueError("the vector size M must be positive")
    if (alpha_us is None) != (bandwidth_gbs is None):
        raise ValueError("give alpha and bandwidth together (the alpha-beta model), or neither (the topology's "
                         "own link alphas and bandwidths)")
    if alpha_us is not None and not (alpha_us >= 0 and bandwidth_gbs > 0):
        raise ValueError("alpha must be non-negative and the bandwidth positive")
    if not (budget_s >= 0):
        raise ValueError("the budget must be non-negative")
    start = time.monotonic()
    bounds = {(i, c): _bound_row(t, c, total_bytes, alpha_us, bandwidth_gbs)
              for i, t in enumerate(topos) for c in colls}
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
        done[(algo, i, coll)] = _run(topo, algo, coll, total_bytes, alpha_us, bandwidth_gbs,
                                     budget_s - (time.monotonic() - start), hear)
    if progress is not None:
        progress("done", 1.0)
    rows = []
    for i in range(len(topos)):
        for c in colls:
            rows.append(bounds[(i, c)])
            rows.extend(done[(a, i, c)] for a in order)
    return CompareResult(rows, float(total_bytes), alpha_us, bandwidth_gbs, budget_s, time.monotonic() - start,
                         order)


def _base_row(topo: Topology, coll: Collective, algo: str, status: str) -> dict:
    expr, name = _label(topo)
    row = dict.fromkeys(COLUMNS)
    row.update(topology=expr, name=name, N=topo.n, collective=coll.value, algo=algo, status=status, verified=False,
               detail="")
    return row


def _bound_row(topo: Topology, coll: Collective, total_bytes: float, alpha_us, bandwidth_gbs) -> dict:
    row = _base_row(topo, coll, BOUND, "bound")
    steps, tb = steps_lower_bound(topo, coll), tb_lower_bound(topo, coll)
    if alpha_us is not None:
        t = alpha_beta_us(steps, tb, total_bytes, alpha_us, bandwidth_gbs)
    else:
        alpha = min((float(l.alpha) for l in topo.links), default=0.0)
        t = alpha_beta_us(steps, tb, total_bytes, alpha, float(node_bandwidth(topo)))
    row.update(steps=steps, tb_factor=float(tb), tb_factor_exact=str(tb), steps_lower_bound=steps,
               tb_lower_bound=float(tb), tb_lower_bound_exact=str(tb), time_us=t,
               algbw_GBps=total_bytes / t / 1e3 if t > 0 else None, verified=None)
    return row


def _first_line(exc: BaseException) -> str:
    text = str(exc).strip()
    return text.splitlines()[0] if text else type(exc).__name__


def _run(topo: Topology, algo: str, coll: Collective, total_bytes: float, alpha_us, bandwidth_gbs,
         left_s: float, progress) -> dict:
    """One synthesizer on one topology and collective: a row whatever happens."""
    if left_s <= 0:
        return _base_row(topo, coll, algo, SKIPPED_BUDGET)
    plan = ALGORITHMS[algo].compare_plan(topo, coll, left_s)
    if isinstance(plan, str):                    # the synthesizer declines this run (size, time left)
        return _base_row(topo, coll, algo, plan)
    options = plan or None
    t0 = time.monotonic()
    try:
        result = synthesize(topo, algo, coll, progress=progress, total_bytes=total_bytes, options=options)
    except NotApplicable as exc:
        return _base_row(topo, coll, algo, f"not applicable: {_first_line(exc)}")
    except ScheduleError as exc:
        row = _base_row(topo, coll, algo, "failed verification")
        row.update(detail=_first_line(exc), synthesis_s=time.monotonic() - t0)
        return row
    except Exception as exc:     # noqa: BLE001  one synthesizer's bug must not lose the other rows
        row = _base_row(topo, coll, algo, f"error: {type(exc).__name__}: {_first_line(exc)}")
        row["synthesis_s"] = time.monotonic() - t0
        return row
    seconds = time.monotonic() - t0
    row = _base_row(topo, coll, algo, OK)
    c, schedule, fabric = result.cost, result.schedule, result.topology
    if alpha_us is not None:
        t = alpha_beta_us(c.steps, c.tb_factor, total_bytes, alpha_us, bandwidth_gbs)
    else:
        t = time_us(fabric, schedule, total_bytes)
    algbw = total_bytes / t / 1e3 if t > 0 else None
    pipelined = result.detail.pipelined_algbw(result) if result.detail is not None else None
    if pipelined is not None:                    # ForestColl: pipelined trees, the flow model's algbw
        if alpha_us is not None:                 # links scaled so that a node's egress is B
            pipelined = pipelined * Fraction(bandwidth_gbs) / node_bandwidth(fabric)
        algbw = float(pipelined)
    row.update(steps=c.steps, tb_factor=float(c.tb_factor), tb_factor_exact=str(c.tb_factor),
               steps_lower_bound=c.steps_lower_bound, tb_lower_bound=float(c.tb_lower_bound),
               tb_lower_bound_exact=str(c.tb_lower_bound), time_us=t, algbw_GBps=algbw, synthesis_s=seconds,
               verified=bool(result.verification.ok), transfers=schedule.count,
               detail=result.detail.compare_note() if result.detail is not None else "")
    left_s -= seconds
    if schedule.count <= EXPORT_MAX_TRANSFERS and left_s > 0:
        from .export import export

        try:
            export(fabric, schedule)
            row["exportable"] = True
        except Exception as exc:     # noqa: BLE001  XmlError, NotApplicable, or a lowering limit
            row["exportable"] = False
            row["detail"] = "; ".join(x for x in (row["detail"], f"MSCCL export: {_first_line(exc)}") if x)
    return row


# ------------------------------------------------------------------------------------------ curves and winners
class Curve(NamedTuple):
    """Runtime T(M) = latency_us + us_per_byte * M of one row (alpha-beta), sampled at ``sizes``."""

    label: str
    topology: str
    name: str
    collective: str
    algo: str
    latency_us: float
    us_per_byte: float
    sizes: tuple[float, ...]
    times_us: tuple[float, ...]

    @property
    def bound(self) -> bool:
        return self.algo == BOUND

    def at(self, m: float) -> float:
        return self.latency_us + self.us_per_byte * m


class Winner(NamedTuple):
    """The fastest verified row over [from_bytes, to_bytes] (a tie goes to the row listed first)."""

    from_bytes: float
    to_bytes: float
    algo: str
    topology: str
    collective: str
    name: str
    ties: tuple[str, ...] = ()          # other rows with the very same line ("algo on name")


def curves(rows: Sequence[dict], sizes: Sequence[float] = SIZES, alpha_us: float = DEFAULT_ALPHA_US,
           bandwidth_gbs: float = DEFAULT_BANDWIDTH_GBS) -> list[Curve]:
    """Runtime against vector size M for every verified row and every bound row: steps * alpha + tb * M / B."""
    if not sizes or min(sizes) <= 0:
        raise ValueError("sizes must be positive")
    if not (alpha_us >= 0 and bandwidth_gbs > 0):
        raise ValueError("alpha must be non-negative and the bandwidth positive")
    sizes = tuple(float(m) for m in sorted(sizes))
    out = []
    for r in rows:
        if r["algo"] != BOUND and not (r["status"] == OK and r["verified"]):
            continue
        a, b = r["steps"] * alpha_us, r["tb_factor"] / (bandwidth_gbs * 1e3)     # alpha_beta_us as a + b M
        out.append(Curve(f"{r['algo']} on {r['name']}", r["topology"], r["name"], r["collective"], r["algo"],
                         a, b, sizes, tuple(a + b * m for m in sizes)))
    return out


def winners(curve_list: Sequence[Curve]) -> list[Winner]:
    """The fastest curve per range of M, per collective, exactly (the lower envelope of the lines a + b M over
    the sampled range); bound curves are left out."""
    out: list[Winner] = []
    by_coll: dict[str, list[Curve]] = {}
    for c in curve_list:
        if not c.bound:
            by_coll.setdefault(c.collective, []).append(c)
    for coll, cs in by_coll.items():
        lo, hi = min(cs[0].sizes), max(cs[0].sizes)
        m = lo
        best = min(range(len(cs)), key=lambda j: (cs[j].at(lo), cs[j].us_per_byte, j))
        while True:
            b = cs[best]
            nxt, pick = hi, None
            for j, c in enumerate(cs):
                if c.us_per_byte < b.us_per_byte:          # a flatter line overtakes where they cross
                    cross = (c.latency_us - b.latency_us) / (b.us_per_byte - c.us_per_byte)
                    if m * (1 + 1e-12) < cross < nxt or (pick is not None and cross == nxt
                                                         and c.us_per_byte < cs[pick].us_per_byte):
                        nxt, pick = cross, j
            ties = tuple(c.label for c in cs if c is not b and (c.latency_us, c.us_per_byte) == (b.latency_us,
                                                                                                    b.us_per_byte))
            out.append(Winner(m, nxt, b.algo, b.topology, coll, b.name, ties))
            if pick is None:
                break
            m, best = nxt, pick
    return out
