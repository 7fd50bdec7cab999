"""Collectives as pre- and postconditions over chunks (TACOS section II-A, Fig. 2-3), for the rooted collectives
and several collectives sharing one fabric ("tenants", Table V).

A ``ChunkSpec`` is one chunk: the nodes that hold it at the start (``sources``), the nodes that must end holding it
(``targets``), the pieces of the schedule IR it stands for (``pieces``: (shard, lo, hi)), the tenant it belongs to,
``reverse``: synthesized on the transposed graph with sources and targets swapped and run backwards in time, and
``reduce``: whether its transfers reduce. A reduction is reversed (TACOS section II-A: Reduce is the inverse of
Broadcast; the schedule IR's reduce of one chunk is an in-tree whose time reverse is a broadcast tree), and so is a
scatter, whose reverse, a gather, the greedy matches well (every request is at the root, so no relay path is
guessed for the last hops).

Chunks of a collective with root r on N nodes and k chunks per NPU (chunk j of k is [j/k, (j+1)/k) of a shard):

* broadcast: k chunks, each all N shards' part j, from r to every node;
* reduce: the broadcast's chunks, ``reverse`` and ``reduce``;
* scatter: N k chunks, chunk (j, s) from r to s, ``reverse`` (as gathers on G^T);
* gather: N k chunks, chunk (j, s) from s to r;
* allgather: N k chunks, chunk (j, s) from s to every node;
* reduce-scatter: N k chunks, chunk (j, s) from every node to s, ``reverse`` and ``reduce`` (allgathers on G^T).

Relays (pitfall T4). The greedy pulls a chunk only into a node that asks for it, so a chunk whose targets no
holder neighbours (gather and scatter on a mesh) would never move. ``with_relays`` adds, per restart, the inner
nodes of a random shortest path from a source to each target as targets of the chunk; ``prune`` later drops sends
that deliver to a relay that never forwards.
"""
from __future__ import annotations

import heapq
import math
import random
from dataclasses import dataclass, replace
from fractions import Fraction

from topologies.model import Topology

from ..core.errors import NotApplicable
from ..core.schedule import Collective, Transfer

Piece = tuple[int, Fraction, Fraction]


@dataclass(frozen=True)
class ChunkSpec:
    """One chunk of a collective (module docstring)."""

    sources: frozenset[int]
    targets: frozenset[int]
    pieces: tuple[Piece, ...]
    tenant: int = 0
    reverse: bool = False
    reduce: bool = False

    def travelling(self) -> "ChunkSpec":
        """The chunk as it is synthesized: sources and targets swapped when ``reverse`` (on G^T)."""
        if not self.reverse:
            return self
        return replace(self, sources=self.targets, targets=self.sources - self.targets)


def collective_chunks(topo: Topology, collective: Collective, root: int | None, chunks: int,
                      tenant: int = 0, group=None) -> list[ChunkSpec]:
    """The chunks of ``collective`` on the compute nodes of ``topo`` (module docstring), or among ``group`` (node
    indices; the other nodes may relay); ``root`` is a node index."""
    if isinstance(chunks, bool) or not isinstance(chunks, int) or chunks < 1:
        raise NotApplicable(f"chunks per NPU must be a positive integer, got {chunks!r}")
    nodes = list(topo.compute_nodes) if group is None else sorted(group)
    every = frozenset(nodes)
    parts = [(Fraction(j, chunks), Fraction(j + 1, chunks)) for j in range(chunks)]
    if collective in (Collective.BROADCAST, Collective.REDUCE):
        if collective is Collective.REDUCE:        # every node contributes, the root ends with the sum
            return [ChunkSpec(every, frozenset({root}), tuple((s, lo, hi) for s in nodes), tenant, True, True)
                    for lo, hi in parts]
        return [ChunkSpec(frozenset({root}), every - {root}, tuple((s, lo, hi) for s in nodes), tenant)
                for lo, hi in parts]
    out = []
    for lo, hi in parts:
        for s in nodes:
            if collective is Collective.SCATTER:
                src, dst = frozenset({root}), frozenset({s}) - {root}
            elif collective is Collective.GATHER:
                src, dst = frozenset({s}), frozenset({root}) - {s}
            elif collective is Collective.ALLGATHER:
                src, dst = frozenset({s}), every - {s}
            elif collective is Collective.REDUCE_SCATTER:     # every node's contribution to s, summed at s
                out.append(ChunkSpec(every, frozenset({s}), ((s, lo, hi),), tenant, True, True))
                continue
            else:
                raise NotApplicable(f"chunks of a {collective.value} are not defined here (broadcast, reduce, "
                                    f"gather, scatter, allgather and reduce-scatter are)")
            if dst:
                reverse = collective is Collective.SCATTER
                out.append(ChunkSpec(src, dst, ((s, lo, hi),), tenant, reverse))
    return out


def _bfs(topo: Topology, start: frozenset[int]) -> list[float]:
    dist = [math.inf] * topo.num_nodes
    frontier = sorted(start)
    for v in frontier:
        dist[v] = 0
    while frontier:
        nxt = []
        for u in frontier:
            for i in topo.out_links[u]:
                w = topo.links[i].dst
                if dist[w] == math.inf:
                    dist[w] = dist[u] + 1
                    nxt.append(w)
        frontier = nxt
    return dist


def with_relays(topo: Topology, specs: list[ChunkSpec], rng: random.Random) -> list[ChunkSpec]:
    """``specs`` with the inner nodes of one random shortest path from the sources to each target added to the
    targets, where the target does not neighbour a source (module docstring). ``topo`` is the graph the chunks
    travel on and ``specs`` the chunks as they travel (``ChunkSpec.travelling``)."""
    out = []
    cache: dict[frozenset[int], list[float]] = {}
    for spec in specs:
        dist = cache.get(spec.sources)
        if dist is None:
            dist = cache[spec.sources] = _bfs(topo, spec.sources)
        extra: set[int] = set()
        for t in sorted(spec.targets):
            if dist[t] == math.inf:
                raise NotApplicable(f"no path reaches {topo.names[t]} from the nodes that hold its data (the "
                                    f"topology is not strongly connected)")
            v = t
            while dist[v] > 1:
                back = sorted({topo.links[i].src for i in topo.in_links[v] if dist[topo.links[i].src] == dist[v] - 1})
                v = rng.choice(back)
                extra.add(v)
        out.append(replace(spec, targets=spec.targets | frozenset(extra)) if extra - spec.targets else spec)
    return out


def bitsets(topo: Topology, specs: list[ChunkSpec]) -> tuple[list[int], list[int]]:
    """(has, need) per node as bitsets over the chunk indices of ``specs``, for ``greedy.greedy_demands``."""
    has, need = [0] * topo.num_nodes, [0] * topo.num_nodes
    for c, spec in enumerate(specs):
        for v in spec.sources:
            has[v] |= 1 << c
        for v in spec.targets:
            need[v] |= 1 << c
    return has, need


def first_deliveries(topo: Topology, sends) -> list[tuple[float, float, int, int]]:
    """Of the sends (start, end, chunk, link), the first to arrive per (chunk, receiving node), in arrival order."""
    first: dict[tuple[int, int], tuple[float, float, int, int]] = {}
    for send in sorted(sends, key=lambda s: (s[1], s[0], s[3])):
        first.setdefault((send[2], topo.links[send[3]].dst), send)
    return list(first.values())


def prune(topo: Topology, specs: list[ChunkSpec], sends: list[tuple[float, float, int, int]]
          ) -> list[tuple[float, float, int, int]]:
    """The sends (start, end, chunk, link) that matter: a send stays when its receiver is a target of the chunk (in
    the specs without relays, as they travel on ``topo``) or forwards the chunk in a send that stays; the first
    delivery per (chunk, node)."""
    kept, wanted = [], set()
    for send in sorted(first_deliveries(topo, sends), key=lambda s: (-s[0], -s[1], s[3])):
        _start, _end, c, link = send
        u, w = topo.links[link].src, topo.links[link].dst
        if w in specs[c].targets or (c, w) in wanted:
            kept.append(send)
            if u not in specs[c].sources:
                wanted.add((c, u))
    kept.reverse()
    return kept


def least_times(g: Topology, sources, weights, inward: bool = False) -> list[float]:
    """The least total link weight from any of ``sources`` to every node of ``g`` (``inward``: from every node to
    any of them), ``inf`` where none reaches; Dijkstra."""
    dist = [math.inf] * g.num_nodes
    heap = [(0, v) for v in sources]
    for v in sources:
        dist[v] = 0
    while heap:
        d, u = heapq.heappop(heap)
        if d > dist[u]:
            continue
        for i in (g.in_links[u] if inward else g.out_links[u]):
            w = g.links[i].src if inward else g.links[i].dst
            nd = d + weights[i]
            if nd < dist[w]:
                dist[w] = nd
                heapq.heappush(heap, (nd, w))
    return dist


def distance_bound(topo: Topology, specs: list[ChunkSpec], times: list[float]) -> float:
    """The longest, over chunks and targets, of the least total link time from a source: no schedule of the
    chunks ends before it (the distance half of TACOS's lower bound; the ingress half is ``ingress_need``)."""
    best = 0.0
    seen: dict[frozenset[int], list[float]] = {}
    for spec in specs:
        dist = seen.get(spec.sources)
        if dist is None:
            dist = seen[spec.sources] = least_times(topo, spec.sources, times)
        best = max([best] + [dist[t] for t in spec.targets])
    return best


def ingress_need(topo: Topology, specs: list[ChunkSpec]) -> dict[int, int]:
    """Per node, the chunks it must receive (targets that are not sources)."""
    out: dict[int, int] = {}
    for spec in specs:
        for t in spec.targets - spec.sources:
            out[t] = out.get(t, 0) + 1
    return out


def ingress_bound(topo: Topology, specs: list[ChunkSpec], times: list[float]) -> float:
    """Node d receives ``ingress_need`` chunks, one at a time per in-link of time t_l: T >= the least T with
    sum_l floor(T / t_l) >= need (notes tacos.md 1.13, for any postcondition)."""
    best = 0.0
    for d, need in ingress_need(topo, specs).items():
        own = sorted(times[i] for i in topo.in_links[d])
        if not own:
            return math.inf
        ends = sorted({m * x for x in own for m in range(1, need + 1)})
        for t in ends:
            if sum(int(t / x + 1e-9) for x in own) >= need:
                best = max(best, t)
                break
    return best


def lower_bound(topo: Topology, specs: list[ChunkSpec], times: list[float], ingress: bool = True) -> float:
    """max(distance bound, ingress bound), each on the graph a chunk travels (the transpose for ``reverse``
    chunks, where its time reverse takes as long); ``ingress=False``: the distance bound alone (links shared
    without limit, as in the TEN ILP without its congestion constraint)."""
    forward = [s for s in specs if not s.reverse]
    backward = [s.travelling() for s in specs if s.reverse]
    out = 0.0
    for g, part in ((topo, forward), (topo.transpose(), backward)):
        if part:
            out = max(out, distance_bound(g, part, times), ingress_bound(g, part, times) if ingress else 0.0)
    return out


def to_transfers(topo: Topology, specs: list[ChunkSpec], sends, step_of: dict) -> dict[int, list[Transfer]]:
    """Per tenant, the transfers of the forward-time ``sends`` (start, end, chunk, link, reduce): each send is one
    transfer per piece of its chunk, in the step ``step_of[start]``."""
    out: dict[int, list[Transfer]] = {}
    for start, _end, c, link, reduce in sends:
        spec = specs[c]
        rows = out.setdefault(spec.tenant, [])
        for shard, lo, hi in spec.pieces:
            rows.append(Transfer(shard, lo, hi, link, step_of[start], reduce))
    return out
