"""From solver flows to the schedule IR: the reverse-DFS post-processing (TE-CCL section 3, digest 2.6) and the
lowering of whole chunks to transfers.

The objective does not penalise flows that serve no demand, so a solution may carry some. Starting from every
demand (σ, c, d), the flow that delivered the chunk to d is kept, then the one that delivered it to that flow's
sender, and so on back to σ; everything not reached is dropped. A compute node receives a chunk at most once, so
its delivering flow is unique; at a switch (no buffer) the out-flow of epoch k pairs with an in-flow arriving at
the start of epoch k, each in-flow serving one out-flow when the switch does not copy.

Lowering: flow (σ, c, e, k) becomes Transfer(shard σ, [c/C, (c+1)/C), link e, step k + L_e): the chunk is in the
receiver's buffer at the start of epoch k + L_e, and its sender held it at the start of epoch k <= k + L_e - 1,
which is the IR's causality. When a copying switch forwards one arrival on several links, the arrival is lowered
once per forward (the IR's switches, like MSCCL's, do not multicast), so the uplink shows the extra sends.
"""
from __future__ import annotations

from fractions import Fraction

from topologies.model import Topology

from ..core.schedule import Collective, Schedule, Transfer
from .instance import Demand


def prune(topo: Topology, demand: Demand, lag, flows, buffered: bool = False
          ) -> list[tuple[tuple[int, int, int, int], int]]:
    """The flows the demands use, each with how many times it is sent (module docstring). ``buffered``: switches
    may keep a chunk (``switches``), so an out-flow of epoch k pairs with the latest in-flow that landed by k."""
    into_gpu: dict = {}
    into_switch: dict = {}
    for f in flows:
        s, c, i, k = f
        dst = topo.links[i].dst
        if topo.is_compute(dst):
            key = (s, c, dst)
            if key in into_gpu:
                raise AssertionError(f"node {topo.names[dst]} receives chunk {c} of {topo.names[s]} twice")
            into_gpu[key] = f
        else:
            into_switch.setdefault((s, c, dst, k + lag[i]), []).append(f)
    used: dict = {}
    done_gpu: set = set()
    paired: dict = {}                  # switch out-flow -> the in-flow chosen for it
    taken: set = set()                 # in-flows of non-copying switches already paired

    def feed(f) -> None:
        """Keep flow f and everything upstream of it."""
        stack = [f]
        while stack:
            g = stack.pop()
            used[g] = used.get(g, 0) + 1
            s, c, i, k = g
            u = topo.links[i].src
            if u == s:
                continue
            if topo.is_compute(u):
                if (s, c, u) in done_gpu:
                    continue
                done_gpu.add((s, c, u))
                up = into_gpu.get((s, c, u))
                if up is None:
                    raise AssertionError(f"{topo.names[u]} sends chunk {c} of {topo.names[s]} it never received")
                stack.append(up)
            else:
                if g in paired:
                    stack.append(paired[g])
                    continue
                options = into_switch.get((s, c, u, k), []) if not buffered else \
                    [h for a in range(k, -1, -1) for h in into_switch.get((s, c, u, a), ())]
                free = [h for h in options if h not in taken] or options
                if not free:
                    raise AssertionError(f"switch {topo.names[u]} forwards chunk {c} of {topo.names[s]} it never got")
                paired[g] = free[0]
                taken.add(free[0])
                stack.append(free[0])

    for s, c, d in demand.wants:
        f = into_gpu.get((s, c, d))
        if f is None:
            raise AssertionError(f"{topo.names[d]} never receives chunk {c} of {topo.names[s]}")
        if (s, c, d) not in done_gpu:
            done_gpu.add((s, c, d))
            feed(f)
    # a GPU's delivering flow is counted once per downstream use; it is sent once
    return sorted((f, n if not topo.is_compute(topo.links[f[2]].dst) else 1) for f, n in used.items())


def lower(topo: Topology, demand: Demand, lag, kept, algo: str = "teccl", notes: dict | None = None) -> Schedule:
    """The schedule IR of the kept flows (module docstring)."""
    C = demand.chunks
    transfers = []
    for (s, c, i, k), times in kept:
        tr = Transfer(s, Fraction(c, C), Fraction(c + 1, C), i, k + lag[i])
        transfers.extend([tr] * times)
    return make_schedule(demand, transfers, algo, notes)


def make_schedule(demand: Demand, transfers: list, algo: str, notes: dict | None) -> Schedule:
    """The transfers in step order as a Schedule of the demand's collective (a custom one carries its demand)."""
    C = demand.chunks
    transfers.sort(key=lambda t: (t.step, t.link, t.shard, t.lo))
    wanted = None
    if demand.collective is Collective.CUSTOM:
        wanted = tuple((d, s, Fraction(c, C), Fraction(c + 1, C)) for s, c, d in demand.wants)
    kwargs = {"demand": wanted} if wanted is not None else {}
    return Schedule(demand.collective, transfers, algo, notes, **kwargs)
