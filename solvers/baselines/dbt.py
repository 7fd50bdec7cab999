"""Double binary tree (DBT): NCCL's two complementary binary trees, each carrying half of the data (direct-connect
paper section 8.2, digest 10.2; ``topologies.baseline_fabrics.nccl_double_binary_tree`` builds the trees).

Ranks 0..N-1 are the compute nodes in order. Tree 1 carries [0, 1/2) of every shard, tree 2 [1/2, 1); every tree
edge must be a logical edge both ways (``fabric``). Each half is pipelined in ``chunks`` = c equal chunks. With
height(v) the height of v in its tree (0 for a leaf) and depth(v) its distance from the root,

* allreduce (native reduce, then broadcast): in round height(v) + 1 + j every non-root v sends chunk j of its
  tree's half of all N shards, summed over its subtree, to its parent (reduce); after the reduce phase of
  h + c - 1 rounds (h = the larger of the two trees' heights) the roots hold the sums, and in round
  h + c - 1 + depth(v) + j the parent of v sends v chunk j of the reduced half (copy): 2(h + c - 1) rounds.
  The two phases do not overlap (reduce then broadcast, as in the step model).
* allgather (gather, then broadcast): the same timetable; going up v sends chunk j of the shards of its subtree,
  coming down it receives chunk j of every other shard.
* reduce-scatter: the reverse of the allgather on the transpose (``solvers.core.transform``), so scatter-reduce
  down the trees, then reduce up.

Closed forms, H = IR steps per round (1 direct, 2 through one switch), B the smallest egress bandwidth of a
compute node: steps = 2(h + c - 1) H for every collective. An active tree edge carries N/(2c) shards per round in
the allreduce (|subtree(v)|/(2c) going up, (N - |subtree(v)|)/(2c) going down in the allgather), so where the two
trees never put chunks on one directed link in the same round and every tree link has bandwidth b (direct),

    allreduce: tb = 2(h + c - 1) * N/(2c) * B/(N b) = (h + c - 1)/c * B/b,

e.g. complete(8) (h = 3, B = 7): 21 for c = 1, 7 * 10/8 for c = 8; dbt_graph(8) (B = 2): 6 for c = 1. (The
condition holds for NCCL's trees on every N from 2 to 16 but N = 3 with c >= 2, where both trees hold 2 -> 0.) As c grows
the tb tends to B/b (each tree moves half the vector over each edge twice, once per phase) while the steps grow
by 2 per chunk: the pipelining trade-off of NCCL's trees. ``fabric.evaluate`` computes the exact value on any
topology from the tree timetable (adding both trees' loads where they share a directed link in a round).

Across boxes (NCCL's tree on several machines). On a fabric of two or more equal boxes (``boxes``: compute
nodes joined by links faster than the slowest, each box with nodes that have a slow link out, its NICs),
the trees are NCCL's: for each channel k (one per NIC, k < the fewest NIC nodes of a box) and each of the two
binary trees over the *boxes* (``nccl_double_binary_tree(B)``), a rank tree whose box-level edges join the boxes'
k-th NIC nodes (the heads) and which runs, inside every box, down a chain from the head through the other nodes
in rank order. The 2K trees carry 1/(2K) of the data each; everything else above holds with 1/(2K) for 1/2.
Pipelined, the allreduce approaches ``pipelined_allreduce_gbs``: M over the busiest link's time when every tree
edge moves its tree's share of M up and then down over its route (160 GB/s on two DGX A100 boxes, where the
NVSwitch ports carry the chains; 8 NICs x 25 GB/s would allow 200). Elsewhere the two flat trees above are used.
"""
from __future__ import annotations

from fractions import Fraction

from topologies.baseline_fabrics import nccl_double_binary_tree
from topologies.model import Topology

from ..core.cost import node_bandwidth
from ..core.errors import NotApplicable
from ..core.schedule import Collective, Schedule
from ..core.transform import build_collective
from .boxes import boxes, fast, nic_nodes
from .fabric import Fabric, Send, add_load, bottleneck, evaluate, need_two, realize, route_loads

ALGO = "dbt"


class _Tree:
    """One of the two trees over ranks: parent, children, height, depth and subtree of every rank."""

    def __init__(self, parents: tuple[int, ...], index: int, chunks: int, count: int = 2):
        n = len(parents)
        self.index, self.parent = index, parents
        self.children: list[list[int]] = [[] for _ in range(n)]
        for v, u in enumerate(parents):
            if u >= 0:
                self.children[u].append(v)
        self.root = parents.index(-1)
        self.depth = [0] * n
        order = [self.root]
        for u in order:                                   # BFS from the root
            for w in self.children[u]:
                self.depth[w] = self.depth[u] + 1
                order.append(w)
        self.height = [0] * n
        self.subtree: list[list[int]] = [[v] for v in range(n)]
        for u in reversed(order):
            for w in self.children[u]:
                self.height[u] = max(self.height[u], self.height[w] + 1)
                self.subtree[u] += self.subtree[w]
        share = Fraction(1, count)                        # tree ``index`` of ``count`` carries this part
        width = share / chunks
        self.chunk = [(index * share + j * width, index * share + (j + 1) * width) for j in range(chunks)]

    def edges(self) -> list[tuple[int, int]]:
        """(child, parent) pairs."""
        return [(v, u) for v, u in enumerate(self.parent) if u >= 0]


def _trees(fabric: Fabric, chunks: int) -> list[_Tree]:
    need_two(fabric, ALGO)
    if isinstance(chunks, bool) or not isinstance(chunks, int) or chunks < 1:
        raise NotApplicable(f"{ALGO} needs chunks to be a positive integer, got {chunks!r}")
    node = fabric.ranks
    layout = _box_parents(fabric) or list(nccl_double_binary_tree(len(node)))
    trees = [_Tree(parents, k, chunks, len(layout)) for k, parents in enumerate(layout)]
    for tree in trees:
        for v, u in tree.edges():
            why = fabric.missing(node[v], node[u])
            if why:
                raise NotApplicable(f"{ALGO} needs the NCCL tree {tree.index + 1} edge between ranks {v} and {u} "
                                    f"({u} is {v}'s parent) linked both ways: {why}")
    return trees


def _box_parents(fabric: Fabric) -> list[tuple[int, ...]] | None:
    """NCCL's trees across boxes (module docstring), as parent tuples over ranks; None where the fabric is not
    two or more boxes of equal size with a NIC node each and fast routes both ways along every chain."""
    box_list, slow = boxes(fabric)
    if len(box_list) < 2 or len({len(box) for box in box_list}) != 1:
        return None
    rank = {u: r for r, u in enumerate(fabric.ranks)}
    nics = [nic_nodes(fabric, box, slow) for box in box_list]
    if not all(nics):
        return None
    layout = []
    for channel in range(min(len(out) for out in nics)):
        heads = [out[channel] for out in nics]
        for box_parent in nccl_double_binary_tree(len(box_list)):
            parent = [-1] * len(rank)
            for b, box in enumerate(box_list):
                chain = [heads[b]] + [u for u in box if u != heads[b]]
                for up, down in zip(chain, chain[1:]):
                    if not (fast(fabric, up, down, slow) and fast(fabric, down, up, slow)):
                        return None
                    parent[rank[down]] = rank[up]
                if box_parent[b] >= 0:
                    head, above = heads[b], heads[box_parent[b]]
                    if fabric.route(head, above) is None or fabric.route(above, head) is None:
                        return None
                    parent[rank[head]] = rank[above]
            layout.append(tuple(parent))
    return layout


def pipelined_allreduce_gbs(topo: Topology, chunks: int = 1) -> Fraction:
    """The allreduce algbw the trees approach when pipelined (module docstring): M over the busiest link's time,
    every tree edge moving its tree's share of M up and then down over its route."""
    fabric = Fabric(topo)
    return _pipelined(fabric, _trees(fabric, chunks))


def _pipelined(fabric: Fabric, trees: list[_Tree]) -> Fraction:
    node, share = fabric.ranks, Fraction(1, len(trees))
    amounts = [(node[a], node[b], share) for tree in trees for v, u in tree.edges() for a, b in ((v, u), (u, v))]
    return bottleneck(fabric.topo, route_loads(fabric, amounts))


def _timetable(trees: list[_Tree], chunks: int):
    """Rounds of (tree, child, parent, chunk, going_up), both phases: the module docstring's schedule."""
    span = max(t.height[t.root] for t in trees) + chunks - 1
    up: list[list] = [[] for _ in range(span)]
    down: list[list] = [[] for _ in range(span)]
    for tree in trees:
        for v, u in tree.edges():
            for j in range(chunks):
                up[tree.height[v] + j].append((tree, v, u, j))
                down[tree.depth[v] - 1 + j].append((tree, v, u, j))
    return up, down


def _allreduce_plan(node, trees, chunks) -> list[list[Send]]:
    n = len(node)
    up, down = _timetable(trees, chunks)
    plan = []
    for rnd in up:
        plan.append([Send(node[v], node[u], tuple((node[s], *tree.chunk[j]) for s in range(n)), True)
                     for tree, v, u, j in rnd])
    for rnd in down:
        plan.append([Send(node[u], node[v], tuple((node[s], *tree.chunk[j]) for s in range(n)))
                     for tree, v, u, j in rnd])
    return plan


def _allgather_plan(node, trees, chunks) -> list[list[Send]]:
    n = len(node)
    up, down = _timetable(trees, chunks)
    plan = []
    for rnd in up:
        plan.append([Send(node[v], node[u], tuple((node[s], *tree.chunk[j]) for s in sorted(tree.subtree[v])))
                     for tree, v, u, j in rnd])
    for rnd in down:
        rest = []
        for tree, v, u, j in rnd:
            inside = set(tree.subtree[v])
            rest.append(Send(node[u], node[v], tuple((node[s], *tree.chunk[j]) for s in range(n) if s not in inside)))
        plan.append(rest)
    return plan


def _loads(node, trees, chunks, collective: Collective) -> list[dict]:
    n = len(node)
    up, down = _timetable(trees, chunks)
    rounds = []
    for phase, going_up in ((up, True), (down, False)):
        for rnd in phase:
            loads: dict = {}
            for tree, v, u, j in rnd:
                if collective is Collective.ALLREDUCE:
                    shards = n
                else:
                    shards = len(tree.subtree[v]) if going_up else n - len(tree.subtree[v])
                a, b = (v, u) if going_up else (u, v)
                add_load(loads, node[a], node[b], Fraction(shards, len(trees) * chunks))
            rounds.append(loads)
    return rounds


def _allgather(chunks: int):
    def allgather(topo: Topology) -> Schedule:
        fabric = Fabric(topo)
        trees = _trees(fabric, chunks)
        return realize(fabric, _allgather_plan(fabric.ranks, trees, chunks), Collective.ALLGATHER, ALGO,
                       {"chunks": chunks, "roots": [topo.names[fabric.ranks[t.root]] for t in trees]})
    return allgather


def build(topo: Topology, collective: Collective, chunks: int = 1) -> Schedule:
    if collective is not Collective.ALLREDUCE:
        _trees(Fabric(topo), chunks)          # NotApplicable in terms of topo, not of its transpose
        schedule = build_collective(topo, collective, _allgather(chunks))
        schedule.algo = ALGO
        return schedule
    fabric = Fabric(topo)
    trees = _trees(fabric, chunks)
    plan = _allreduce_plan(fabric.ranks, trees, chunks)
    schedule = realize(fabric, plan, collective, ALGO,
                       {"chunks": chunks, "roots": [topo.names[fabric.ranks[t.root]] for t in trees],
                        "trees": len(trees), "pipelined_algbw_gbs": float(_pipelined(fabric, trees))})
    schedule.notes["rs_steps"] = len(plan) // 2 * schedule.notes["ir_steps_per_round"]
    return schedule


def closed_form(topo: Topology, collective: Collective, chunks: int = 1) -> tuple[Fraction, Fraction]:
    def cost_on(on: Topology, coll: Collective):
        fabric = Fabric(on)
        trees = _trees(fabric, chunks)
        return evaluate(fabric, _loads(fabric.ranks, trees, chunks, coll), big_b=node_bandwidth(topo))
    _trees(Fabric(topo), chunks)
    if collective is Collective.ALLREDUCE:
        return cost_on(topo, collective)
    if collective is Collective.ALLGATHER:
        return cost_on(topo, Collective.ALLGATHER)
    return cost_on(topo.transpose(), Collective.ALLGATHER)
