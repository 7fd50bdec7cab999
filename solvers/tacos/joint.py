"""TACOS over any chunks (``demands``): the rooted collectives alone and several collectives at once on one fabric,
by the greedy (section VI) or the ILP (section V-A, ``ten_ilp``), lowered to one schedule per tenant on a shared
step numbering.

Greedy. Reductions (``reverse`` chunks) go first: their broadcast on G^T is matched by the greedy and run
backwards, which fixes when each link is taken by them; the copies are then matched around those windows
(``greedy.greedy_demands(busy=...)``), every chunk of every tenant in one run, so the tenants contend for links as
in the TEN. Each restart draws new random choices and new relay paths; the run that ends first is kept.

Lowering. Every distinct start time of a kept send, over all tenants, is one step, in time order; each tenant's
schedule takes the steps of its own sends (with gaps where others run), so the runtime model can lay the tenants
over each other on one clock (``solvers.runtime.overlay``).
"""
from __future__ import annotations

import random
from dataclasses import dataclass, field

from topologies.model import Topology

from ..core.schedule import Collective, Schedule
from .demands import ChunkSpec, bitsets, lower_bound, prune, to_transfers, with_relays
from .greedy import TIE, greedy_demands, link_times


@dataclass
class JointRun:
    """One run over all chunks: the makespan (us, or steps for the ILP), the forward-time sends (start, end, chunk,
    link, reduce), and the seed."""

    time: float
    sends: list[tuple[float, float, int, int, bool]]
    seed: int = 0
    spread: list[float] = field(default_factory=list)
    bound: float = 0.0                  # ``demands.lower_bound`` of the chunks (``best_joint``)


def greedy_joint(flat: Topology, specs: list[ChunkSpec], chunk_bytes: float, seed: int = 0) -> JointRun:
    """One greedy run over ``specs`` on the compute-only ``flat`` (module docstring)."""
    rng = random.Random(seed)
    travel = [s.travelling() for s in specs]
    backward = [c for c, s in enumerate(specs) if s.reverse]
    forward = [c for c, s in enumerate(specs) if not s.reverse]
    sends: list[tuple[float, float, int, int, bool]] = []
    busy: dict[int, list[tuple[float, float]]] = {}
    makespan = 0.0
    if backward:
        g = flat.transpose()
        part = with_relays(g, [travel[c] for c in backward], rng)
        has, need = bitsets(g, part)
        run = greedy_demands(g, has, need, chunk_bytes, rng.randrange(1 << 30))
        rows = [(a, b, backward[c], link) for a, b, c, link in run.sends]
        total = run.time_us
        for a, b, c, link in prune(g, travel, rows):
            sends.append((total - b, total - a, c, link, specs[c].reduce))
            busy.setdefault(link, []).append((total - b, total - a))
        makespan = total
    if forward:
        part = with_relays(flat, [travel[c] for c in forward], rng)
        has, need = bitsets(flat, part)
        run = greedy_demands(flat, has, need, chunk_bytes, rng.randrange(1 << 30), busy)
        rows = [(a, b, forward[c], link) for a, b, c, link in run.sends]
        for a, b, c, link in prune(flat, travel, rows):
            sends.append((a, b, c, link, specs[c].reduce))
        makespan = max(makespan, run.time_us)
    sends.sort()
    return JointRun(makespan, sends, seed)


def best_joint(flat: Topology, specs: list[ChunkSpec], chunk_bytes: float, restarts: int = 8, seed: int = 0,
               progress=None) -> JointRun:
    """The best of ``restarts`` greedy runs (least makespan, then fewest sends); stops early at the lower bound."""
    bound = lower_bound(flat, specs, link_times(flat, chunk_bytes))
    best, spread = None, []
    runs = max(1, restarts)
    for i in range(runs):
        run = greedy_joint(flat, specs, chunk_bytes, seed + i)
        spread.append(run.time)
        if best is None or (run.time, len(run.sends)) < (best.time - TIE, len(best.sends)):
            best = run
        if progress is not None:
            progress((i + 1) / runs)
        if best.time <= bound * (1 + TIE):
            break
    best.spread, best.bound = spread, bound
    return best


@dataclass(frozen=True)
class TenantCall:
    """What a tenant asks for, on the fabric the chunks run on: its collective, root (a node index) and group
    (node indices; None for every compute node)."""

    collective: Collective
    root: int | None
    group: tuple[int, ...] | None = None


def lower_tenants(flat: Topology, specs: list[ChunkSpec], sends, calls: list[TenantCall], algo: str,
                  notes: dict | None = None) -> list[Schedule]:
    """One schedule per tenant from the sends of a joint run (module docstring, "Lowering")."""
    starts = sorted({s[0] for s in sends})
    step_of = {t: i + 1 for i, t in enumerate(starts)}
    rows = to_transfers(flat, specs, sends, step_of)
    return [Schedule(call.collective, rows.get(i, []), algo, dict(notes or {}), root=call.root, group=call.group)
            for i, call in enumerate(calls)]
