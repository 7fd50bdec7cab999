"""Several collectives sharing one fabric ("tenants"; TACOS section VIII-G, Table V; TE-CCL section 5, "Use in
multi-tenant clusters").

A tenants file is JSON or YAML: a list (or ``{"tenants": [...]}``) of entries ``{"name", "collective", "root",
"bytes", "group"}``; ``root`` (a rank or a GPU's name) goes with broadcast, reduce, gather and scatter only,
``bytes`` is the tenant's M, ``group`` the GPUs it runs among (a list of ranks or GPU names; omitted or ``"all"``:
every GPU of the fabric). A tenant on a group holds and wants data on its members only (its shards are
M/|group| bytes) and may relay through any GPU; it is synthesized jointly (the separate synthesizers build
collectives over every GPU).

Two ways to synthesize them (``synthesize_tenants``):

* ``joint``: one synthesis over the union of the tenants' chunks, the links shared in the synthesizer's own
  model: TACOS's greedy (``tacos``) and TEN ILP (``tacos_ilp``; ``taccl_like`` without congestion), and TE-CCL
  over the summed demand, multicast kept (``teccl``, copy collectives only: ``solvers.teccl.rooted``); all
  chunks have the size of the largest tenant's chunk (a broadcast or reduce of M bytes is one chunk of M, a
  gather, scatter, allgather or reduce-scatter N chunks of M/N; Table V's set-up gives every chunk one size);
* ``separate``: each tenant synthesized alone by the chosen synthesizer, then laid over the others.

Either way every tenant's schedule is verified on its own postcondition, and the runtime model times them
together with the links shared (``solvers.runtime.overlay``): each tenant's finish, its time alone, and the
makespan. Direct has no reduce in the schedule IR (``solvers.baselines.rooted``); a direct reduce tenant is
priced as what TACOS's Direct moves, every node's whole buffer gathered to the root along its shortest path (the
root then adds them), i.e. a direct gather of N buffers of M bytes, verified as that gather.
"""
from __future__ import annotations

import json
import time
from dataclasses import dataclass, field
from typing import Any

from topologies.model import Topology

from .core.errors import NotApplicable, ScheduleError
from .core.schedule import Collective, Schedule
from .core.verify import verify

MAX_TENANTS = 64
MAX_JOINT_CHUNKS = 16_384      # chunks of all tenants in one joint TACOS run (the greedy's bitsets, the ILP's rows)
MAX_FILE_BYTES = 256 * 1024
JOINT = ("tacos", "tacos_ilp", "taccl_like", "teccl")
MODES = ("joint", "separate")


class TenantsError(ValueError):
    """A tenants file or request that cannot be used; the message is one line."""


@dataclass(frozen=True)
class Tenant:
    """One collective of a multi-tenant request (module docstring)."""

    name: str
    collective: Collective
    total_bytes: float
    root: int | str | None = None
    group: tuple | None = None        # ranks or GPU names; None: every GPU


def _yaml_without_aliases(text: str):
    """YAML read safely, refused when it has anchors or aliases (a few lines of them expand into billions of
    entries)."""
    import yaml

    try:
        for event in yaml.parse(text, Loader=yaml.SafeLoader):
            if isinstance(event, yaml.AliasEvent) or getattr(event, "anchor", None):
                raise TenantsError("the tenants file uses YAML anchors or aliases, which are not accepted")
        return yaml.safe_load(text)
    except yaml.YAMLError as exc:
        where = getattr(exc, "problem_mark", None)
        line = f" at line {where.line + 1}" if where is not None else ""
        raise TenantsError(f"the tenants file is neither JSON nor YAML{line}") from None


def read_tenants(data: bytes | str) -> list[Tenant]:
    """The tenants of a JSON or YAML text (module docstring); TenantsError with one line otherwise."""
    if isinstance(data, bytes):
        if len(data) > MAX_FILE_BYTES:
            raise TenantsError(f"the tenants file is {len(data)} bytes; at most {MAX_FILE_BYTES} are read")
        try:
            data = data.decode("utf-8")
        except UnicodeDecodeError:
            raise TenantsError("the tenants file is not UTF-8 text") from None
    if len(data) > MAX_FILE_BYTES:
        raise TenantsError(f"the tenants file is {len(data)} characters; at most {MAX_FILE_BYTES} are read")
    try:
        doc = json.loads(data)
    except ValueError:
        doc = _yaml_without_aliases(data)
    if isinstance(doc, dict) and set(doc) == {"tenants"}:
        doc = doc["tenants"]
    if not isinstance(doc, list) or not doc:
        raise TenantsError("a tenants file is a non-empty list of {collective, bytes, root, name, group} entries")
    if len(doc) > MAX_TENANTS:
        raise TenantsError(f"{len(doc)} tenants; at most {MAX_TENANTS} share a fabric here")
    out, names = [], set()
    for i, entry in enumerate(doc):
        where = f"tenant {i + 1}"
        if not isinstance(entry, dict):
            raise TenantsError(f"{where} is not a mapping of collective, bytes, root, name")
        unknown = sorted(str(k)[:20] for k in entry if k not in ("name", "collective", "root", "bytes", "group"))
        if unknown:
            raise TenantsError(f"{where} has unknown keys {', '.join(unknown)} (name, collective, root, bytes, group)")
        name = entry.get("name", f"tenant{i + 1}")
        if not isinstance(name, str) or not name.strip() or len(name) > 64:
            raise TenantsError(f"{where}: its name is a text of 1 to 64 characters")
        name = name.strip()
        if name in names:
            raise TenantsError(f"two tenants are named {name!r}")
        names.add(name)
        try:
            coll = Collective.parse(str(entry.get("collective", "")))
        except ValueError as exc:
            raise TenantsError(f"{name}: {exc}") from None
        if coll in (Collective.CUSTOM, Collective.ALLTOALL):
            raise TenantsError(f"{name}: {coll.value} tenants are not taken (allgather, reduce_scatter, allreduce, "
                               f"broadcast, reduce, gather, scatter are)")
        size = entry.get("bytes")
        if isinstance(size, bool) or not isinstance(size, (int, float)) or not (1 <= size <= 1e13):
            raise TenantsError(f"{name}: bytes must be a number from 1 to 1e13")
        root = entry.get("root")
        if root is not None and not coll.rooted:
            raise TenantsError(f"{name}: a {coll.value} has no root")
        if root is not None and (isinstance(root, bool) or not isinstance(root, (int, str)) or len(str(root)) > 64):
            raise TenantsError(f"{name}: the root is a rank or a GPU's name")
        group = entry.get("group", "all")
        if group == "all":
            group = None
        elif not isinstance(group, list) or not 2 <= len(group) <= 4096 or not all(
                isinstance(v, (int, str)) and not isinstance(v, bool) and len(str(v)) <= 64 for v in group):
            raise TenantsError(f"{name}: group is \"all\" or a list of 2 or more ranks or GPU names")
        else:
            group = tuple(group)
        if coll.rooted and root is None and group is not None:
            root = group[0]
        out.append(Tenant(name, coll, float(size), root if not coll.rooted else (0 if root is None else root),
                          group))
    return out


@dataclass
class TenantRow:
    """One tenant's verified schedule and its times (microseconds)."""

    tenant: Tenant
    root_name: str | None
    schedule: Schedule
    steps: int
    transfers: int
    finish_us: float
    alone_us: float
    note: str = ""

    def as_dict(self) -> dict:
        group = None if self.schedule.group is None else len(self.schedule.group)
        return {"name": self.tenant.name, "collective": self.tenant.collective.value, "root": self.root_name,
                "gpus": group,
                "bytes": self.tenant.total_bytes, "steps": self.steps, "transfers": self.transfers, "verified": True,
                "finish_us": self.finish_us, "alone_us": self.alone_us,
                "slowdown": self.finish_us / self.alone_us if self.alone_us > 0 else None, "note": self.note}


@dataclass
class TenantsResult:
    """Every tenant's row, the makespan, how they were synthesized and what it took."""

    algo: str
    mode: str
    rows: list[TenantRow]
    makespan_us: float
    slices: int
    fabric: Topology
    synthesis_s: float
    detail: dict = field(default_factory=dict)

    def as_dict(self) -> dict:
        return {"algo": self.algo, "mode": self.mode, "topology": self.fabric.expr or self.fabric.name,
                "makespan_us": self.makespan_us, "slices": self.slices, "synthesis_s": self.synthesis_s,
                "tenants": [r.as_dict() for r in self.rows], **({"detail": self.detail} if self.detail else {})}


def _node(topo: Topology, tenant: Tenant) -> int | None:
    """The tenant's root as a node index of ``topo`` (None for an unrooted collective); it must be in its group."""
    from .synthesize import resolve_root

    if not tenant.collective.rooted:
        return None
    node = resolve_root(topo, tenant.root)
    members = _members(topo, tenant)
    if members is not None and node not in members:
        raise NotApplicable(f"{tenant.name}: the root {topo.names[node]} is not in its group")
    return node


def _members(topo: Topology, tenant: Tenant) -> tuple[int, ...] | None:
    """The tenant's group as node indices of ``topo`` (None: every compute node)."""
    from .synthesize import resolve_root

    if tenant.group is None:
        return None
    nodes = sorted({resolve_root(topo, str(v)) for v in tenant.group})
    if len(nodes) < 2:
        raise NotApplicable(f"{tenant.name}: a group needs two or more different GPUs")
    return tuple(nodes)


def _joint(topo: Topology, tenants: list[Tenant], algo: str, options: dict, progress) -> tuple[Topology, list, dict]:
    """(the fabric, one schedule per tenant, what the synthesizer reports) of a joint synthesis."""
    from topologies.unwind import unwind

    from .tacos import DEFAULT_RESTARTS, chunk_size, flat_root, rooted_chunk_bytes
    from .tacos.demands import collective_chunks
    from .tacos.greedy import link_times
    from .tacos.joint import TenantCall, best_joint, lower_tenants
    from .tacos.ten_ilp import link_step_counts, ten_ilp

    if algo not in JOINT:
        raise NotApplicable(f"joint synthesis of several tenants is {', '.join(JOINT)}'s; {algo} runs with "
                            f"--mode separate")
    allreduce = [t.name for t in tenants if t.collective is Collective.ALLREDUCE]
    if allreduce:
        raise NotApplicable(f"{allreduce[0]}: an allreduce runs its two phases in order, which the joint "
                            f"synthesis does not hold; use --mode separate")
    if algo == "teccl":
        return _teccl_joint(topo, tenants, options, progress)
    known = {"chunks", "restarts", "seed", "unwind_degree", "time_limit"}
    unknown = sorted(set(options) - known)
    if unknown:
        raise NotApplicable(f"joint synthesis takes chunks, restarts, seed, unwind_degree, time_limit, not "
                            f"{', '.join(unknown)}")
    degree = options.get("unwind_degree", "auto")
    flat = unwind(topo, int(degree) if str(degree).isdigit() else degree)
    chunks = int(options.get("chunks", 1))
    specs, calls, size = [], [], 0.0
    for i, t in enumerate(tenants):
        node = _node(topo, t)
        fnode = None if node is None else flat_root(topo, flat, node)
        members = _members(topo, t)
        fgroup = None if members is None else tuple(flat_root(topo, flat, v) for v in members)
        n = flat.n if fgroup is None else len(fgroup)
        specs += collective_chunks(flat, t.collective, fnode, chunks, tenant=i, group=fgroup)
        calls.append(TenantCall(t.collective, fnode, fgroup))
        each = (rooted_chunk_bytes(t.collective, t.total_bytes, n, chunks) if t.collective.rooted
                else chunk_size(t.total_bytes, n, chunks))
        size = max(size, each)
    if len(specs) > MAX_JOINT_CHUNKS:
        raise NotApplicable(f"the tenants have {len(specs)} chunks in all, more than the joint synthesis takes "
                            f"({MAX_JOINT_CHUNKS}); use --mode separate, fewer chunks or fewer tenants")
    if algo == "tacos":
        report = None if progress is None else (lambda f: progress("tacos joint", f))
        run = best_joint(flat, specs, size, int(options.get("restarts", DEFAULT_RESTARTS)),
                         int(options.get("seed", 0)), report)
        schedules = lower_tenants(flat, specs, run.sends, calls, algo)
        return flat, schedules, {"synthesizer_time_us": run.time, "chunk_bytes": size, "restarts": len(run.spread)}
    steps, quantum = link_step_counts(link_times(flat, size))
    congestion = algo == "tacos_ilp"
    report = None if progress is None else (lambda h, status: progress(f"{algo}: horizon {h} {status}", 0.0))
    out = ten_ilp(flat, specs, steps, float(options.get("time_limit", 30.0)), congestion=congestion,
                  progress=report)
    if out.steps is None:
        raise NotApplicable(f"{algo}: no joint schedule found ({out.status} after {out.seconds:.1f} s; raise "
                            f"--time-limit or use tacos)")
    schedules = lower_tenants(flat, specs, out.sends, calls, algo)
    return flat, schedules, {"ilp_status": out.status, "ten_steps": out.steps, "quantum_us": quantum,
                             "chunk_bytes": size, "tried": [list(x) for x in out.tried]}


def _teccl_joint(topo: Topology, tenants: list[Tenant], options: dict, progress) -> tuple[Topology, list, dict]:
    """TE-CCL over the tenants' summed demand (``solvers.teccl.rooted``)."""
    from fractions import Fraction

    from .teccl.rooted import solve_parts

    known = {"chunks", "time_limit", "gap", "epoch", "epochs", "multiplier", "switch_copy", "method"}
    unknown = sorted(set(options) - known)
    if unknown:
        raise NotApplicable(f"joint TE-CCL takes {', '.join(sorted(known))}, not {', '.join(unknown)}")
    chunks = int(options.pop("chunks", 1))
    parts, size = [], Fraction(0)
    for t in tenants:
        members = _members(topo, t)
        parts.append((t.collective, _node(topo, t), chunks, members))
        whole = t.collective in (Collective.BROADCAST, Collective.REDUCE)
        n = topo.n if members is None else len(members)
        size = max(size, Fraction(t.total_bytes) / (chunks if whole else chunks * n))
    report = None if progress is None else (lambda text, f: progress(f"teccl: {text}", f))
    found, schedules = solve_parts(topo, parts, size, report, **options)
    return topo, schedules, {"teccl_status": found.status, "epochs": found.epochs,
                             "epoch_us": float(found.timing.tau_us), "chunk_bytes": float(size)}


def synthesize_tenants(topo: Topology, tenants: list[Tenant], algo: str = "tacos", mode: str = "joint",
                       options: dict | None = None, workload=None, progress=None) -> TenantsResult:
    """Synthesize ``tenants`` on ``topo`` (module docstring), verify each tenant's schedule on its own
    postcondition and time them together with the workload's prices (``workload.execution``; default: the
    fabric's own links). NotApplicable / ScheduleError with one line when a tenant cannot be served."""
    from .runtime.overlay import overlay
    from .synthesize import synthesize

    if mode not in MODES:
        raise NotApplicable(f"mode is joint or separate, not {mode!r}")
    if not tenants:
        raise NotApplicable("no tenants")
    options = dict(options or {})
    start = time.perf_counter()
    notes = [""] * len(tenants)
    sizes = [t.total_bytes for t in tenants]
    detail: dict[str, Any] = {}
    if mode == "joint":
        fabric, schedules, detail = _joint(topo, tenants, algo, options, progress)
    else:
        grouped = [t.name for t in tenants if t.group is not None]
        if grouped:
            raise NotApplicable(f"{grouped[0]} runs on a group of GPUs, which only the joint synthesis serves "
                                f"({', '.join(JOINT)}); use --mode joint")
        fabric, schedules = topo, []
        for i, t in enumerate(tenants):
            if progress is not None:
                progress(f"{algo} {t.name}", i / len(tenants))
            if algo == "direct" and t.collective is Collective.REDUCE:
                result = synthesize(topo, "direct", Collective.GATHER, total_bytes=t.total_bytes, root=t.root)
                sizes[i] = t.total_bytes * topo.n
                notes[i] = ("direct reduce priced as every node's whole buffer gathered to the root, which adds "
                            "them (the IR reduces at every hop; TACOS's Direct does not)")
            else:
                result = synthesize(topo, algo, t.collective, total_bytes=t.total_bytes, options=options or None,
                                    root=t.root if t.collective.rooted else None)
            if result.topology.names != topo.names:
                raise NotApplicable(f"{algo} schedules {t.name} on a fabric of its own (switches unwound); lay "
                                    f"tenants over each other with --mode joint")
            schedules.append(result.schedule)
    rows = []
    for i, (t, s) in enumerate(zip(tenants, schedules)):
        check = verify(fabric, s)
        if not check.ok:
            raise ScheduleError(f"{t.name}: {check.errors[0]}")
        rows.append([t, None if s.root is None else fabric.names[s.root], s, s.steps, s.count])
    seconds = time.perf_counter() - start
    execution = None if workload is None else workload.execution
    timed = overlay(fabric, schedules, sizes, execution)
    out = [TenantRow(t, root, s, steps, count, timed.finish_us[i], timed.alone_us[i], notes[i])
           for i, (t, root, s, steps, count) in enumerate(rows)]
    return TenantsResult(algo, mode, out, timed.makespan_us, timed.slices, fabric, seconds, detail)
