"""Textbook schedules of the rooted collectives (broadcast, reduce, gather, scatter) on any strongly connected fabric.

* ``direct`` (TACOS section VII's Direct): every chunk travels on its own along one shortest path, with no tree
  shared. Broadcast and scatter: the root sends one copy per destination, farthest destination first, the copy
  for the i-th destination leaving in step i + 1 and moving one hop a step; gather: every node's shard starts at
  once and moves one hop a step; allgather (``direct_allgather``, where not every pair is linked): every node
  scatters its own shard so. A Direct reduce would need nodes that forward a contribution without adding
  theirs, which the schedule IR has no place for (a compute node reduces what it receives): it is not built, and
  TACOS prices it as its broadcast reversed in time (Table IV's single "Broadcast (Reduce)" row).
* ``sptree``: one breadth-first shortest-path tree from the root: a broadcast reaches every node in the root's
  eccentricity in steps, the optimum for one chunk; its reverse on G^T is the reduce, which takes the root's
  eccentricity on G^T.
* ``chain``: a pipelined chain (NCCL's ring broadcast): the nodes in breadth-first order, each forwarding to the
  next over a shortest path, the buffer in ``pieces`` pieces that follow each other, piece j leaving hop h in
  step j + h (hops through other nodes count as steps); reduce is its reverse on G^T.
* ``binomial``: the binomial tree over ranks relative to the root (MPI's broadcast): in round r every holder
  i < 2^r sends to i + 2^r over a shortest path; the reduce is its reverse on G^T.

Gather and scatter come from ``direct`` (each shard on its shortest path) and the TACOS synthesizers; ``sptree``,
``chain`` and ``binomial`` build broadcast and reduce.
"""
from __future__ import annotations

from fractions import Fraction

from topologies.model import Topology
from topologies.properties import is_strongly_connected

from ..core.errors import NotApplicable
from ..core.schedule import ONE, ZERO, Collective, Schedule, Transfer
from ..core.transform import reverse
from .sptree import _depths


def _check(topo: Topology) -> None:
    if not is_strongly_connected(topo):
        raise NotApplicable("the topology is not strongly connected: some compute node cannot reach another")


def _tree(topo: Topology, root: int) -> list[int | None]:
    """A shortest-path parent link of every node from ``root``: among the links into a node from nodes one hop
    nearer the root, the one whose sender's index is farthest from the node's (then the lowest-numbered link).
    On a grid numbered row-major (``topologies.tacos_fabrics``) a path then moves along the lowest dimension first,
    the dimension-order (XY) routing TACOS's Direct runs on its meshes (section III, Fig. 6)."""
    depth = _depths(topo, root)
    parent: list[int | None] = [None] * topo.num_nodes
    for w in range(topo.num_nodes):
        if depth[w] > 0:
            near = [i for i in topo.in_links[w] if depth[topo.links[i].src] == depth[w] - 1]
            parent[w] = min(near, key=lambda i: (-abs(topo.links[i].src - w), i))
    return parent


def path(topo: Topology, parent: list[int | None], dst: int) -> list[int]:
    """The links from the tree's root to ``dst``, in order."""
    out = []
    while parent[dst] is not None:
        out.append(parent[dst])
        dst = topo.links[parent[dst]].src
    return out[::-1]


def _whole(topo: Topology) -> list[tuple[int, Fraction, Fraction]]:
    return [(s, ZERO, ONE) for s in topo.compute_nodes]


def direct(topo: Topology, collective: Collective, root: int, shard: int | None = None) -> Schedule:
    """TACOS's Direct (module docstring); ``shard``: a scatter that sends this one shard to every node instead of
    shard v to node v (a one-shard broadcast, what ``direct_allgather`` runs from every node)."""
    _check(topo)
    if collective is Collective.REDUCE:
        raise NotApplicable("direct reduce needs relays that forward without adding their own contribution, which "
                            "the schedule IR has no place for; its time is direct broadcast's on the transposed "
                            "graph (TACOS Table IV prices them as one row)")
    transfers = []
    if collective is Collective.GATHER:
        tree = _tree(topo.transpose(), root)
        for s in topo.compute_nodes:
            for hop, link in enumerate(reversed(path(topo.transpose(), tree, s)), start=1):
                transfers.append(Transfer(s, ZERO, ONE, link, hop))
        return Schedule(collective, transfers, "direct", root=root)
    tree = _tree(topo, root)
    depth = {v: len(path(topo, tree, v)) for v in topo.compute_nodes}
    order = sorted((v for v in topo.compute_nodes if v != root), key=lambda v: (-depth[v], v))
    for i, v in enumerate(order):
        pieces = _whole(topo) if collective is Collective.BROADCAST else [(v if shard is None else shard, ZERO, ONE)]
        for hop, link in enumerate(path(topo, tree, v)):
            transfers.extend(Transfer(s, lo, hi, link, i + hop + 1) for s, lo, hi in pieces)
    return Schedule(collective, transfers, "direct", root=root)


def direct_allgather(topo: Topology) -> Schedule:
    """Direct's allgather on any strongly connected fabric (TACOS section VII's Direct): every node sends its shard
    to every other node along one shortest path, each destination's copy leaving one step after the previous
    (farthest first) and moving one hop a step; the union over the sources."""
    _check(topo)
    transfers = []
    for s in topo.compute_nodes:
        transfers.extend(direct(topo, Collective.SCATTER, s, shard=s).transfers)
    return Schedule(Collective.ALLGATHER, transfers, "direct")


def sptree(topo: Topology, collective: Collective, root: int) -> Schedule:
    """The shortest-path tree of the module docstring."""
    _check(topo)
    if collective is Collective.REDUCE:
        return reverse(sptree(topo.transpose(), Collective.BROADCAST, root))
    if collective is not Collective.BROADCAST:
        raise NotApplicable(f"sptree builds broadcast and reduce from a root, not {collective.value} (direct "
                            f"sends each shard along its shortest path)")
    tree = _tree(topo, root)
    transfers = []
    for v in range(topo.num_nodes):
        if tree[v] is not None:
            hops = len(path(topo, tree, v))
            for _ in range(_below(topo, tree, v)):
                transfers.extend(Transfer(s, lo, hi, tree[v], hops) for s, lo, hi in _whole(topo))
    return Schedule(collective, transfers, "sptree", root=root)


def _below(topo: Topology, tree: list[int | None], v: int) -> int:
    """Copies a tree edge into ``v`` carries: one for a compute node (which copies on), one per compute node below
    for a switch (which only forwards)."""
    if topo.is_compute(v):
        return 1
    kids = [w for w in range(topo.num_nodes) if tree[w] is not None and topo.links[tree[w]].src == v]
    return sum(_below(topo, tree, w) for w in kids)


def first_receipts(topo: Topology, schedule: Schedule) -> Schedule:
    """A copy schedule (broadcast, allgather, gather, scatter) with every copy into a compute node that already
    holds that piece (from its start or an earlier or the same step) left out. Still the same collective (a node
    forwards from its first receipt, which came no later), and now each node receives each piece once, so its
    reverse on G^T adds every contribution once."""
    if schedule.collective.root_holds_all:
        held = {(schedule.root, s, ZERO, ONE) for s in topo.compute_nodes}
    else:
        held = {(s, s, ZERO, ONE) for s in topo.compute_nodes}
    kept = []
    for t in sorted(schedule.transfers, key=lambda t: t.step):
        w = topo.links[t.link].dst
        if topo.is_compute(w):
            key = (w, t.shard, t.lo, t.hi)
            if key in held or (w, t.shard, ZERO, ONE) in held:
                continue
            held.add(key)
        kept.append(t)
    if topo.switch_nodes:
        kept = _balanced_switches(topo, kept)
    return Schedule(schedule.collective, kept, schedule.algo, schedule.notes, root=schedule.root)


def _balanced_switches(topo: Topology, transfers: list[Transfer]) -> list[Transfer]:
    """``transfers`` with, at every switch, as many copies of each piece coming in as going out: a copy whose
    onward send was left out is not sent to the switch either (the latest of its arrivals go first, and a switch
    that loses an arrival from another switch passes the surplus up), so that the schedule run backwards on G^T
    has every switch forward only what it received."""
    out = list(transfers)
    while True:
        count: dict[tuple, int] = {}
        for t in out:
            link = topo.links[t.link]
            if not topo.is_compute(link.dst):
                count[(link.dst, t.shard, t.lo, t.hi)] = count.get((link.dst, t.shard, t.lo, t.hi), 0) + 1
            if not topo.is_compute(link.src):
                count[(link.src, t.shard, t.lo, t.hi)] = count.get((link.src, t.shard, t.lo, t.hi), 0) - 1
        surplus = {k: v for k, v in count.items() if v > 0}
        if not surplus:
            return out
        drop = set()
        for i in sorted(range(len(out)), key=lambda i: -out[i].step):
            t = out[i]
            key = (topo.links[t.link].dst, t.shard, t.lo, t.hi)
            if surplus.get(key, 0) > 0:
                surplus[key] -= 1
                drop.add(i)
        out = [t for i, t in enumerate(out) if i not in drop]


def chain(topo: Topology, collective: Collective, root: int, pieces: int = 8) -> Schedule:
    """The pipelined chain of the module docstring."""
    _check(topo)
    if collective is Collective.REDUCE:
        return reverse(chain(topo.transpose(), Collective.BROADCAST, root, pieces))
    if collective is not Collective.BROADCAST:
        raise NotApplicable(f"chain builds broadcast and reduce, not {collective.value} (sptree builds it)")
    tree = _tree(topo, root)
    order = sorted(topo.compute_nodes, key=lambda v: (len(path(topo, tree, v)), v))
    hops = []                                   # the links from each node of the chain to the next
    for a, b in zip(order, order[1:]):
        hops.extend(path(topo, _tree(topo, a), b))
    transfers = []
    width = Fraction(1, pieces)
    for j in range(pieces):
        lo, hi = j * width, (j + 1) * width
        for h, link in enumerate(hops):
            transfers.extend(Transfer(s, lo, hi, link, j + h + 1) for s in topo.compute_nodes)
    return first_receipts(topo, Schedule(collective, transfers, "chain", root=root))


def binomial(topo: Topology, collective: Collective, root: int) -> Schedule:
    """The binomial tree of the module docstring."""
    _check(topo)
    if collective is Collective.REDUCE:
        return reverse(binomial(topo.transpose(), Collective.BROADCAST, root))
    if collective is not Collective.BROADCAST:
        raise NotApplicable(f"binomial builds broadcast and reduce, not {collective.value} (sptree builds it)")
    comp = list(topo.compute_nodes)
    at = comp.index(root)
    ranks = comp[at:] + comp[:at]                # rank i relative to the root
    n, step, transfers = len(ranks), 0, []
    span = 1
    while span < n:
        longest = 0
        for i in range(min(span, n - span)):
            route = path(topo, _tree(topo, ranks[i]), ranks[i + span])
            for h, link in enumerate(route):
                transfers.extend(Transfer(s, lo, hi, link, step + h + 1) for s, lo, hi in _whole(topo))
            longest = max(longest, len(route))
        step += longest
        span *= 2
    return first_receipts(topo, Schedule(collective, transfers, "binomial", root=root))
