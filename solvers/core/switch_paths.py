"""A schedule on a switched fabric seen as the GPU-to-GPU sends a runtime issues (docs/ARCHITECTURE.md, "Data flow": the export).

An MSCCL program only names peers: a GPU sends to another GPU and the network (NVSwitch, NIC, InfiniBand) carries
it. A verified schedule on a topology with switches moves each piece hop by hop, and a switch forwards only what
it received (``solvers.core.verify``). ``network_view`` follows every piece from the compute node that sent it, through
the switches that forwarded it, to the compute node that took it, and replaces the chain by one send between
the two, in the step it arrived. The result lives on a compute-only topology with one link per GPU pair that
exchanges data; it is checked by the verifier like any other schedule before it is lowered.
"""
from __future__ import annotations

from collections import defaultdict, deque

from topologies.model import Topology

from .errors import NotApplicable
from .schedule import Schedule, Transfer


def network_view(topo: Topology, schedule: Schedule) -> tuple[Topology, Schedule]:
    """(compute-only topology of the GPU pairs that talk, the schedule as sends between them)."""
    if not topo.switch_nodes:
        return topo, schedule
    index = {v: i for i, v in enumerate(topo.compute_nodes)}
    pending: dict[tuple, deque] = defaultdict(deque)      # (switch, shard, lo, hi, reduce) -> origins
    sends: list[tuple[int, int, Transfer]] = []           # (origin, destination, transfer as it arrived)
    by_step: dict[int, list[Transfer]] = defaultdict(list)
    for t in schedule.transfers:
        by_step[t.step].append(t)
    for step in sorted(by_step):
        arrivals = []
        for t in by_step[step]:
            link = topo.links[t.link]
            key = (t.shard, t.lo, t.hi, t.reduce)
            if topo.is_compute(link.src):
                origin = link.src
            else:
                queue = pending.get((link.src, *key))
                if not queue:
                    raise NotApplicable(f"switch {topo.names[link.src]} sends a piece in step {step} that it did not "
                                        "receive whole before (the network view needs pieces forwarded unchanged)")
                origin = queue.popleft()
            if topo.is_compute(link.dst):
                if origin != link.dst:
                    sends.append((origin, link.dst, t))
            else:
                arrivals.append(((link.dst, *key), origin))
        for key, origin in arrivals:
            pending[key].append(origin)
    left = [key for key, q in pending.items() if q]
    if left:
        raise NotApplicable(f"switch {topo.names[left[0][0]]} keeps a piece it never forwards")
    pairs = sorted({(index[a], index[b]) for a, b, _ in sends})
    link_of = {p: i for i, p in enumerate(pairs)}
    net = Topology.from_edges(len(index), pairs, name=f"GPU-to-GPU view of {topo.name or topo.expr}",
                              expr=topo.expr, node_names=[topo.names[v] for v in topo.compute_nodes])
    transfers = [Transfer(index[t.shard], t.lo, t.hi, link_of[(index[a], index[b])], t.step, t.reduce)
                 for a, b, t in sends]
    root = None if schedule.root is None else index[schedule.root]
    return net, Schedule(schedule.collective, transfers, schedule.algo, dict(schedule.notes), root=root)
