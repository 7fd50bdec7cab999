"""Lower bounds on TE-CCL's epoch count K from cuts (digest sections 6 and 12.3: the paper's K search only has a
loose upper bound; a tight lower bound lets the search start where a schedule likely exists and proves that K - 1
has none without solving it).

A set S of nodes and the chunks x wanted in S whose source σ is outside it. Every such chunk enters S on a link
e = (u, h) into S in some epoch k, which needs

* k >= dist(σ, u): the sender holds x only once it could have reached u (lag distances), and
* k + L_e + dist(h, d) <= K for the destination d ∈ S that the entry serves: the chunk reaches d from the head.

Some entry of x must serve the destination d* of x in S farthest from every head, so each x needs at least one
slot (e, k) meeting both with d = d*; link e carries at most ⌊κ_e τ / t_e⌋ chunks in each block of κ_e epochs (the
MILP's sliding window, Appendix F, taken on disjoint windows). If no assignment of the chunks to slots within the
capacities exists (a bipartite b-matching, ``b_matching``), no schedule fits in K epochs. The bound is the first K
where every set tried admits one: single compute nodes (their ingress, with the chunks' release epochs), the
complement of each source (its egress) and the boxes of ``instance.boxes`` (chassis behind slow cross links: on
NDv2 x 2, 8 chunks cross one link per direction, one an epoch, and the last still has two hops to go: K >= 10,
Table 8(e)'s 10 epochs).
"""
from __future__ import annotations

import math

from topologies.model import Topology

from ..core.errors import NotApplicable
from .instance import Demand, Timing, boxes, lag_distances


def b_matching(options: list[list[int]], capacity: list[int]) -> list[int | None]:
    """A maximum assignment of items to slots (item i may take any slot in ``options[i]``, slot j takes at most
    ``capacity[j]`` items), found by augmenting paths, items in the given order: an earlier item is never left out
    for a later one. Returns each item's slot or None."""
    used: list[list[int]] = [[] for _ in capacity]
    slot_of: list[int | None] = [None] * len(options)

    def augment(i: int, seen: set) -> bool:
        for j in options[i]:                 # a free slot first, then a path that frees one
            if len(used[j]) < capacity[j]:
                used[j].append(i)
                slot_of[i] = j
                return True
        for j in options[i]:
            if j in seen:
                continue
            seen.add(j)
            for other in list(used[j]):
                if augment(other, seen):
                    used[j].remove(other)
                    used[j].append(i)
                    slot_of[i] = j
                    return True
        return False

    for i in range(len(options)):
        augment(i, set())
    return slot_of


def _set_fits(topo: Topology, demand: Demand, t: Timing, dist, inside: frozenset, horizon: int) -> bool:
    """Whether the chunks wanted in ``inside`` from outside it can enter it in time (module docstring)."""
    cut = [i for i, l in enumerate(topo.links) if l.dst in inside and l.src not in inside]
    wanted = [(s, [d for d in dests if d in inside]) for (s, _), dests in demand.commodities.items()
              if s not in inside]
    wanted = [(s, ds) for s, ds in wanted if ds]
    if not wanted:
        return True
    if not cut:
        return False
    slots: dict[tuple[int, int], int] = {}
    options = []
    for s, ds in wanted:
        far = max(ds, key=lambda d: min(dist[topo.links[e].dst, d] for e in cut))
        mine = []
        for e in cut:
            first = dist[s, topo.links[e].src]
            last = min(horizon - 1, horizon - t.lag[e] - dist[topo.links[e].dst, far])
            if not (math.isfinite(first) and math.isfinite(last)):
                continue
            blocks = range(int(first) // t.kappa[e], int(last) // t.kappa[e] + 1) if last >= first else ()
            mine.extend(slots.setdefault((e, b), len(slots)) for b in blocks)
        options.append(mine)
    capacity = [0] * len(slots)
    for (e, _), j in slots.items():
        capacity[j] = math.floor(t.window_cap[e])
    return all(x is not None for x in b_matching(options, capacity))


def cut_sets(topo: Topology, demand: Demand) -> list[frozenset]:
    """The sets the bound tries: each compute node, each source's complement and the boxes."""
    nodes = frozenset(range(len(topo.names)))
    sources = sorted({s for s, _ in demand.commodities})
    return ([frozenset([d]) for d in topo.compute_nodes] + [nodes - {s} for s in sources] + boxes(topo))


def cut_epoch_bound(topo: Topology, demand: Demand, t: Timing, start: int = 1) -> int:
    """The smallest K >= ``start`` at which every set of ``cut_sets`` admits its chunks (module docstring)."""
    dist = lag_distances(topo, t.lag)
    finite = dist[dist < math.inf]
    # by this K every chunk has a block of its own on some link into any set it can reach at all
    enough = start + 2 * int(finite.max(initial=0)) + max(t.lag) + len(demand.wants) * max(t.kappa) + 1
    k = start
    for inside in cut_sets(topo, demand):
        while not _set_fits(topo, demand, t, dist, inside, k):
            k += 1
            if k > enough:
                raise NotApplicable("some destination cannot be reached from its source")
    return k


def fluid_epoch_bound(topo: Topology, demand: Demand, t: Timing, start: int = 1) -> int:
    """The smallest K >= ``start`` at which, for every box S of ``instance.boxes`` and its complement, the links
    into S can carry what is wanted in S from outside, when chunks may be split (the LP, section 4.1: every
    wanted (σ, c, d) is its own flow, there is no copy). A link e = (u, h) into S carries at most κ_e τ / t_e
    chunks (exact, not floored) in each block of κ_e epochs (Appendix F's window, on disjoint blocks), and only in the
    epochs from the lag distance of the nearest outside source to u up to K - L_e - dist(h, nearest wanting
    destination in S). For copy-free demands on fabrics of chassis behind slow cross links (NDv2 x 4 all-to-all:
    192 chunks leave each chassis on one link) this is what makes K large, and the per-node bounds miss it."""
    dist = lag_distances(topo, t.lag)
    nodes = frozenset(range(len(topo.names)))
    sets = []
    for box in boxes(topo):
        sets += [box, nodes - box]
    k = start
    for inside in sets:
        wanted = [(s, d) for s, _, d in demand.wants if s not in inside and d in inside]
        if not wanted:
            continue
        froms = sorted({s for s, _ in wanted})
        tos = sorted({d for _, d in wanted})
        cut = [i for i, l in enumerate(topo.links) if l.dst in inside and l.src not in inside]
        lead = [(dist[froms, topo.links[e].src].min(), t.lag[e] + dist[topo.links[e].dst, tos].min(), e)
                for e in cut]
        lead = [(int(a), int(b), e) for a, b, e in lead if math.isfinite(a) and math.isfinite(b)]
        if not lead:
            raise NotApplicable("some destination cannot be reached from its source")

        def room(horizon: int):
            total = 0
            for first, tail, e in lead:
                last = horizon - tail            # the last epoch a send on e can still serve a destination
                if last >= first:
                    total += (last // t.kappa[e] - first // t.kappa[e] + 1) * t.window_cap[e]
            return total

        while room(k) < len(wanted):
            k += 1
    return k
