"""Several verified schedules on one fabric at once (tenants; TACOS Table V, TE-CCL section 5's multi-tenant
clusters), priced by the runtime model with the links shared.

Each tenant's schedule becomes its message graph (``dag.message_graph``) as if alone; the graphs are laid over each
other on one clock: their messages are merged in step order (a tenant's step t beside every other tenant's step
t: synthesized jointly, the tenants already share one step numbering; synthesized apart, each starts at step 1),
every dependency stays inside its tenant, and a link serves the messages of all tenants in that order, so two
tenants on one link wait for each other. A tenant's buffer of M_i bytes is its own: its shards are M_i / N_i
bytes (N_i the GPUs of its group, every GPU by default), so its loads are scaled to shards of M / N, with M the
largest tenant's buffer and N the fabric's GPUs; the pipelining depth P (the same for every tenant, as one
runtime loop would) is the one with the least makespan, tried as ``Model.times`` does.

``overlay(topo, schedules, sizes, execution)`` gives each tenant's finish time (the end of its last message),
the makespan, and each tenant's time alone for comparison.
"""
from __future__ import annotations

from dataclasses import dataclass

import numpy as np

from topologies.model import Topology

from ..core.schedule import Schedule
from .dag import MessageGraph, message_graph


@dataclass
class OverlayResult:
    """Times in microseconds: ``finish_us[i]`` when tenant i's last message ends with all tenants running,
    ``alone_us[i]`` its time on the fabric alone, ``makespan_us`` the latest finish; ``slices`` the depth used."""

    finish_us: list[float]
    alone_us: list[float]
    makespan_us: float
    slices: int
    messages: int

    def as_dict(self) -> dict:
        return {"finish_us": self.finish_us, "alone_us": self.alone_us, "makespan_us": self.makespan_us,
                "slices": self.slices, "messages": self.messages}


def merged_graph(graphs: list[MessageGraph], scales: list[float]) -> tuple[MessageGraph, np.ndarray]:
    """The graphs laid over each other (module docstring), loads times ``scales``; and each message's tenant."""
    sizes = [g.size for g in graphs]
    offsets = np.concatenate([[0], np.cumsum(sizes)]).astype(np.int64)
    tenant = np.repeat(np.arange(len(graphs)), sizes)
    step = np.concatenate([g.step for g in graphs]).astype(np.int64)
    order = np.lexsort((np.arange(len(step)), tenant, step))       # step order, then tenant, then own order
    where = np.empty(len(order), dtype=np.int64)
    where[order] = np.arange(len(order))

    def cat(field, scaled=False):
        parts = [getattr(g, field) * (s if scaled else 1) for g, s in zip(graphs, scales)]
        return np.concatenate(parts)[order]
    owners, targets = [], []
    for i, g in enumerate(graphs):
        owners.append(where[offsets[i] + np.repeat(np.arange(g.size), np.diff(g.ptr))])
        targets.append(where[offsets[i] + g.deps])
    owner, target = np.concatenate(owners), np.concatenate(targets)
    edges = np.lexsort((target, owner))
    deps = target[edges]
    ptr = np.zeros(len(order) + 1, dtype=np.int64)
    np.cumsum(np.bincount(owner, minlength=len(order)), out=ptr[1:])
    reduced = [g.reduced if g.reduced is not None else np.zeros(g.size) for g in graphs]
    merged = MessageGraph(step[order], cat("link"), cat("load", True), ptr, deps, cat("src"), cat("dst"),
                          sum(g.transfers for g in graphs),
                          np.concatenate([r * s for r, s in zip(reduced, scales)])[order])
    return merged, tenant[order]


def overlay(topo: Topology, schedules: list[Schedule], sizes: list[float], execution=None) -> OverlayResult:
    """Each tenant's finish with all of them on ``topo`` at once (module docstring); ``sizes`` are their M_i."""
    from .model import Execution, Model

    if not schedules or len(schedules) != len(sizes):
        raise ValueError("give one buffer size per schedule")
    if any(not (m > 0) for m in sizes):
        raise ValueError("buffer sizes must be positive")
    execution = execution or Execution()
    top = float(max(sizes))
    graphs = [message_graph(topo, s) for s in schedules]
    alone = [float(Model(topo, s, execution, g).times([m])[0][0]) for s, g, m in zip(schedules, graphs, sizes)]
    shard = [m / (topo.n if s.group is None else len(s.group)) for s, m in zip(schedules, sizes)]
    merged, tenant = merged_graph(graphs, [x / (top / topo.n) for x in shard])
    model = Model(topo, schedules[0], execution, merged)
    model.n = topo.n                 # loads are scaled to shards of the largest M over the whole fabric
    _, depth = model.times([top])
    slices = int(depth[0])
    run = model._run(np.array([top]), slices)
    finish = np.zeros(len(schedules))
    np.maximum.at(finish, tenant, run.last_finish[:, 0])
    return OverlayResult([float(x) for x in finish], alone, float(finish.max(initial=0.0)), slices, merged.size)
