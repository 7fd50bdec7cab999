"""ForestColl at a finite size M: the forest's allgather chosen among candidates by the runtime model.

ForestColl's forest is optimal as a flow (section 3.2: every link busy for all it carries, no latency), i.e. for
M -> infinity. At a finite M the runtime model (``solvers.runtime``) charges an alpha per send and runs the steps
in order, so the same forest can lose twice over: at 1 GB on torus(4,4) its depth lowering (``mapping``) holds
links idle in some steps and hides that only with 32 slices of 10 alphas each (94.5 % of the optimum), and at 1 MB
its deep trees (10 steps) pay more alpha than the shallower forest a failed cable forced on the fabric, so the
degraded fabric came out faster than the healthy one.

The candidates, each k spanning out-trees per root (a forest in ForestColl's sense, verified like any schedule),
in the order they are tried:

* ``depth``: the optimal forest as ForestColl lowers it (the step of a hop is its depth); with no M the only one;
* ``shortest k``: shortest-path trees, each step's pieces spread over the in-links (``flood.shortest_allgather``;
  switch-free fabrics): as few steps as any allgather, and on torus(4,4), hypercube(4) and circulant(16,[1,4])
  D alpha + (N-1)/N M/B at every M (diameter D; the alpha-beta model's optimum);
* ``balanced``: the optimal forest's trees with list-scheduled steps (``retime``), one or two pieces per link
  and step;
* ``k=1 ...``, ``k=2 ...``: the same lowerings of Algorithm 3's forests with 1 and 2 trees per root (the least
  U for that k; section 4.5 recommends a small k where the optimum's is large): fewer sends at small M;
* ``flood k``: trees grown slot by slot so that no link idles (``flood.flood_allgather``; switch-free fabrics),
  one or two pieces per link and slot, the fewest slots of a few tie orders kept.

The k tried by the last two kinds are 1, 2, 3, 4, the optimum's k and twice it (a fixed k: that k alone). Each
candidate is timed by the runtime model at M with the default workload's prices
(``solvers.runtime.workload.DEFAULT``: a build is told M, not the prices). The fastest is kept -- ``depth``
unless another is faster by more than ``MARGIN`` (ties keep ForestColl's own lowering) -- once the verifier
(``solvers.core.verify``) accepts it (else the next; the depth lowering always verifies). The model picks each
one's pipelining depth itself. A candidate that takes the time of ``solvers.runtime.bound_time_us`` (a lower
bound on any schedule in these prices) ends the search: none can be faster. Where M is not given, or the fabric
has more than ``MAX_GPUS`` compute nodes, the depth lowering alone is built, as before.

Failures. A schedule valid on a subgraph is valid on the whole graph, with the same sends on the same links at
the same prices (the Failures analysis prices a degraded fabric at the healthy design's scale), so whatever a
degraded fabric's forest achieves, the healthy design could have run too. The candidate set is built so that the
healthy design does: the kinds of forest a failure leaves (fewer trees, shallower trees, trees grown around the
missing link) are all among its candidates, built over every link the degraded fabric has and more, and where
the kept one reaches the alpha-beta optimum D alpha + (N-1)/N M/B (the shortest-path forests on torus(4,4),
hypercube(4), circulant(16,[1,4])) no single-cable failure comes near it. This is checked, not proven:
``tests/test_forestcoll_finite.py`` runs every single-cable failure of the Failures page's default designs at
1 MB; the Failures summary counts the sets where a synthesizer ran faster than on the healthy design
(``faster_than_healthy``).
"""
from __future__ import annotations

import math
from dataclasses import dataclass
from typing import Iterator

from topologies.model import Topology

from ..core.schedule import Collective, Schedule
from ..core.verify import verify
from .flood import MAX_PIECES, flood_allgather, shortest_allgather, slot_lower_bound
from .retime import MAX_UNITS, hop_units, retimed_allgather, unit_count

FEWER_KS = (1, 2)            # the trees per root of the Algorithm 3 forests tried besides the optimum's
MAX_GPUS = 128               # fabrics up to this many compute nodes get the finite-M choice
MARGIN = 1e-9                # a candidate replaces ``depth`` only when faster by more than this share
FLOOD_SEEDS = 4              # tie orders a flood tries (the fewest slots kept)


@dataclass
class Choice:
    """The allgather kept for M: ``label`` (which candidate), its trees per root ``k``, its ``steps``, the
    runtime model's ``time_us`` and ``slices`` at M, and every candidate's time (``priced``: label -> us)."""

    schedule: Schedule
    label: str
    k: int
    steps: int
    time_us: float
    slices: int
    priced: dict

    def notes(self) -> dict:
        return {"finite_choice": self.label, "finite_k": self.k, "finite_steps": self.steps,
                "finite_candidates": len(self.priced)}


def applies(topo: Topology) -> bool:
    """Whether a build for a given M chooses among candidates (module docstring)."""
    return 2 <= topo.n <= MAX_GPUS


def candidates(topo: Topology, forest, fewer=()) -> Iterator[tuple[str, int, Schedule]]:
    """(label, trees per root, allgather) of every candidate of the module docstring, in its order, not yet
    verified; ``fewer``: Algorithm 3's forests with fewer trees per root (labelled with their k)."""
    ks = []
    if not topo.switch_nodes:
        ks = [forest.k] if forest.fixed_k else sorted({1, 2, 3, 4, forest.k, 2 * forest.k})
        ks = [k for k in ks if topo.n * k <= MAX_PIECES]
    lowered = _lowerings(topo, forest, "")
    yield next(lowered)
    for k in ks:
        yield f"shortest k={k}", k, shortest_allgather(topo, k)
    yield from lowered
    for other in fewer:
        yield from _lowerings(topo, other, f"k={other.k} ")
    for k in ks:
        for per_slot in (1, 2):
            best, floor = None, slot_lower_bound(topo, k, per_slot)
            for seed in range(FLOOD_SEEDS):
                sched = flood_allgather(topo, k, per_slot, seed)
                if best is None or sched.steps < best.steps:
                    best = sched
                if sched.steps <= floor:
                    break
            yield f"flood k={k} x{per_slot}", k, best


def _lowerings(topo: Topology, forest, prefix: str) -> Iterator[tuple[str, int, Schedule]]:
    """The depth lowering of ``forest`` and, where its pieces are whole and not too many, its balanced steps."""
    yield prefix + "depth", forest.k, forest.allgather()
    if unit_count(forest.batches, forest.routes) > MAX_UNITS:
        return
    try:
        units = hop_units(forest.batches, forest.routes)
    except ValueError:                           # a piece cut between parallel links: the depth lowering only
        return
    for per_slot in (1, 2):
        yield (f"{prefix}balanced x{per_slot}", forest.k,
               retimed_allgather(topo, forest.batches, forest.routes, forest.k, per_slot, units))


def _forwards_whole(topo: Topology, schedule: Schedule) -> bool:
    """Whether every switch of ``topo`` sends each piece whole after it received it
    (``core.switch_paths.network_view``, which every export of a switched fabric goes through)."""
    if not topo.switch_nodes:
        return True
    from ..core.errors import NotApplicable
    from ..core.switch_paths import network_view

    try:
        network_view(topo, schedule)
    except NotApplicable:
        return False
    return True


def choose(topo: Topology, forest, total_bytes: float, execution=None, fewer=()) -> Choice:
    """The fastest verified candidate at ``total_bytes`` (module docstring); ``fewer``: Algorithm 3's forests with
    fewer trees per root. ``priced`` of the result holds the candidates tried (label -> us)."""
    from ..runtime import Model, bound_time_us
    from ..runtime.workload import DEFAULT

    execution = execution or DEFAULT.execution
    floor = bound_time_us(topo, Collective.ALLGATHER, float(total_bytes), execution) * (1 + MARGIN)
    priced = []
    for i, (label, k, sched) in enumerate(candidates(topo, forest, fewer)):
        t, p = Model(topo, sched, execution).times([float(total_bytes)])
        priced.append((float(t[0]), i, label, k, sched, int(p[0])))
        if t[0] <= floor:                        # the bound's time: nothing is faster
            break
    depth = priced[0][0]
    # fastest first; ``depth`` unless another beats it by more than MARGIN; the first that verifies is kept
    order = sorted(priced, key=lambda row: (row[0] if row[0] < depth * (1 - MARGIN) or row[1] == 0 else math.inf,
                                            row[1]))
    for time_us, i, label, k, sched, slices in order:
        # never counted unless verified (the depth lowering always is); on a switched fabric another candidate
        # only where its switches forward every piece whole, as an export's GPU-to-GPU view needs
        if verify(topo, sched).ok and (i == 0 or _forwards_whole(topo, sched)):
            best = Choice(sched, label, k, sched.steps, time_us, slices, {row[2]: row[0] for row in priced})
            break
    else:
        raise AssertionError("ForestColl's depth lowering failed the verifier")
    best.schedule.notes.update(forest.notes())
    best.schedule.notes.update(best.notes())
    return best
