"""TACOS-ILP's two speed-ups (TACOS section V-B and V-C, Table II; notes tacos.md 1.7-1.8), over copy chunks
(``demands.ChunkSpec`` without ``reverse``: an allgather, a broadcast, a gather, or the travelling form of a
reduction or scatter, which the caller runs backwards).

* Time clustering (``clustered``): solve a short TEN of ``window`` steps without the postcondition
  (``ten_ilp.build(complete=False)``: deliver what fits, move the rest closer), take what every node holds at its
  end as the next window's precondition, and repeat until every target holds its chunks; the windows' sends are
  concatenated. Each window is small, and no solve is thrown away.
* Early termination (``early_terminated``): search the horizon as ``ten_ilp`` does, but within ``budget_s``
  seconds in all; when it runs out, solve the last horizon tried without its postcondition for what is left of
  the budget, then deliver what is still missing from the holdings at its end by TACOS's greedy (the paper
  appends shortest paths without looking at congestion, pitfall of notes 1.7; the greedy's matching keeps one
  chunk per link at a time).

Both return the sends (start, end, chunk, link) in TEN steps, the first delivery of each (chunk, node) kept and
everything that reaches no target pruned (``demands.prune``), and a note of how they ended.
"""
from __future__ import annotations

import math
import random
import time
from dataclasses import replace

from topologies.model import Topology

from ..core.errors import NotApplicable
from ..teccl.solve import solve
from .demands import ChunkSpec, bitsets, first_deliveries, prune, with_relays
from .ten_ilp import build, ten_ilp

MAX_WINDOWS = 500
WINDOW_GAP = 0.05      # a window's solve stops within 5 % of its best reward: the windows trade optimality for speed


def _window(topo: Topology, specs: list[ChunkSpec], link_steps: list[int], window: int, time_limit: float):
    """One window without the postcondition: its sends (start, end, chunk, link), first deliveries only."""
    lm, _h, xs = build(topo, specs, link_steps, window, complete=False)
    outcome = solve(lm, time_limit, gap=WINDOW_GAP)
    if not outcome.has_solution:
        return None
    return first_deliveries(topo, [(t, t + link_steps[e], c, e) for c, e, t, j in xs if lm.values[j] > 0.5])


def _advance(topo: Topology, specs: list[ChunkSpec], sends) -> list[ChunkSpec]:
    """The chunks after ``sends``: every receiver holds what it got; targets that hold theirs are met."""
    holders = [set(s.sources) for s in specs]
    for _a, _b, c, e in sends:
        holders[c].add(topo.links[e].dst)
    return [replace(s, sources=frozenset(h), targets=frozenset(s.targets - h)) for s, h in zip(specs, holders)]


def clustered(topo: Topology, specs: list[ChunkSpec], link_steps: list[int], window: int, time_limit: float,
              progress=None) -> tuple[list, int, str]:
    """Time clustering (module docstring): (sends, horizon in steps, note)."""
    if any(s.reverse for s in specs):
        raise NotApplicable("time clustering runs copy chunks (a reduction runs as its broadcast, reversed)")
    if window < 1:
        raise NotApplicable("a time-clustering window is at least one step")
    left, offset, sends, windows = specs, 0, [], 0
    while any(s.targets for s in left):
        windows += 1
        if windows > MAX_WINDOWS:
            raise NotApplicable(f"time clustering stopped after {MAX_WINDOWS} windows without finishing")
        live = [i for i, s in enumerate(left) if s.targets]
        part = _window(topo, [left[i] for i in live], link_steps, window, time_limit)
        if part is None:
            raise NotApplicable(f"time clustering: window {windows} found no schedule in {time_limit:g} s")
        moved = [(a + offset, b + offset, live[c], e) for a, b, c, e in part]
        if not moved:
            raise NotApplicable(f"time clustering: window {windows} of {window} steps moved nothing")
        sends += moved
        left = _advance(topo, left, moved)
        offset += window
        if progress is not None:
            progress(windows, "window")
    kept = prune(topo, specs, sends)
    end = max((b for _a, b, _c, _e in kept), default=0)
    return kept, end, f"time clustering: {windows} window{'s' if windows != 1 else ''} of {window} steps"


def early_terminated(topo: Topology, specs: list[ChunkSpec], link_steps: list[int], budget_s: float,
                     quantum: float, chunk_bytes: float, progress=None) -> tuple[list, int, str]:
    """Early termination (module docstring): (sends, horizon in steps, note)."""
    from .greedy import greedy_demands

    if any(s.reverse for s in specs):
        raise NotApplicable("early termination runs copy chunks (a reduction runs as its broadcast, reversed)")
    start = time.perf_counter()
    found = ten_ilp(topo, specs, link_steps, budget_s, progress=progress, budget_s=budget_s)
    if found.steps is not None:
        return [s[:4] for s in found.sends], found.steps, f"the ILP finished within {budget_s:g} s ({found.status})"
    horizon = found.tried[-1][0] if found.tried else 1
    rest = max(1.0, budget_s - (time.perf_counter() - start))
    part = _window(topo, specs, link_steps, horizon, rest) or []
    left = _advance(topo, specs, part)
    sends = list(part)
    missing = sum(len(s.targets) for s in left)
    if missing:
        live = [i for i, s in enumerate(left) if s.targets]
        chunks = with_relays(topo, [left[i] for i in live], random.Random(0))
        has, need = bitsets(topo, chunks)
        run = greedy_demands(topo, has, need, chunk_bytes)
        sends += [(horizon + a / quantum, horizon + b / quantum, live[c], e) for a, b, c, e in run.sends]
    kept = prune(topo, specs, sends)
    end = max((b for _a, b, _c, _e in kept), default=0)
    return kept, math.ceil(end - 1e-9), (f"early termination after {budget_s:g} s: the ILP at horizon {horizon} "
                                         f"delivered what it could, TACOS's greedy the other {missing}")

