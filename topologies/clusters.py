"""Switched GPU clusters of the ForestColl paper (section 5) and the k-ary fat-tree, one small pure function each.

Every function returns a bidirectional Topology (each cable is two opposite links of equal bandwidth, GB/s,
alpha 0) whose compute nodes (GPUs, hosts) come first, in rank order and box-major, followed by its switch
nodes. Node ids are readable (``b0.g3``, ``b0.nvs``, ``b0.nic3``, ``ib0``), ``expr`` rebuilds the topology in
canonical keyword form and ``name`` is a display name.

Each family also has an exact ``*_size`` function (nodes, links) for the expression language's size check; a
size function only does arithmetic (a non-integer argument raises TypeError) and leaves the validation of the
values to the builder, so that its error message is the one the user sees.
"""
from __future__ import annotations

from fractions import Fraction

from .model import COMPUTE, SWITCH, Link, Topology, TopologyError, need_int as _need_int

# The intra-cluster xGMI adjacency of a 16-GPU (16-GCD) AMD MI250 cluster, from ForestColl's reference code
# (notes forestcoll.md 5.2, paper Fig. 7a): entry [i][j] is the number of parallel 50 GB/s Infinity Fabric
# cables between GPU i and GPU j. Symmetric; every row sums to 7.
MI250_XGMI = (
    (0, 4, 0, 0, 2, 0, 0, 0, 1, 0, 0, 0, 0, 0, 0, 0),
    (4, 0, 0, 0, 0, 1, 0, 0, 0, 1, 1, 0, 0, 0, 0, 0),
    (0, 0, 0, 4, 0, 0, 1, 0, 0, 1, 1, 0, 0, 0, 0, 0),
    (0, 0, 4, 0, 0, 0, 0, 2, 0, 0, 0, 1, 0, 0, 0, 0),
    (2, 0, 0, 0, 0, 4, 1, 0, 0, 0, 0, 0, 0, 0, 0, 0),
    (0, 1, 0, 0, 4, 0, 1, 1, 0, 0, 0, 0, 0, 0, 0, 0),
    (0, 0, 1, 0, 1, 1, 0, 4, 0, 0, 0, 0, 0, 0, 0, 0),
    (0, 0, 0, 2, 0, 1, 4, 0, 0, 0, 0, 0, 0, 0, 0, 0),
    (1, 0, 0, 0, 0, 0, 0, 0, 0, 4, 0, 0, 2, 0, 0, 0),
    (0, 1, 1, 0, 0, 0, 0, 0, 4, 0, 0, 0, 0, 1, 0, 0),
    (0, 1, 1, 0, 0, 0, 0, 0, 0, 0, 0, 4, 0, 0, 1, 0),
    (0, 0, 0, 1, 0, 0, 0, 0, 0, 0, 4, 0, 0, 0, 0, 2),
    (0, 0, 0, 0, 0, 0, 0, 0, 2, 0, 0, 0, 0, 4, 1, 0),
    (0, 0, 0, 0, 0, 0, 0, 0, 0, 1, 0, 0, 4, 0, 1, 1),
    (0, 0, 0, 0, 0, 0, 0, 0, 0, 0, 1, 0, 1, 1, 0, 4),
    (0, 0, 0, 0, 0, 0, 0, 0, 0, 0, 0, 2, 0, 1, 4, 0),
)
MI250_XGMI_BW = 50
MI250_IB_BW = 16
A100_NVSWITCH_BW = 300
A100_NIC_BW = 25
A100_GPUS = 8


class _Net:
    """Accumulates nodes, cables and links; a cable is two opposite links of equal bandwidth and alpha (alpha 0
    unless given), a link one directed link."""

    def __init__(self):
        self.names: list[str] = []
        self.kinds: list[str] = []
        self.links: list[Link] = []

    def node(self, name: str, kind: str) -> int:
        self.names.append(name)
        self.kinds.append(kind)
        return len(self.names) - 1

    def cable(self, u: int, v: int, bw: int, count: int = 1, alpha=0) -> None:
        b, a = Fraction(bw), Fraction(alpha)
        for _ in range(count):
            self.links.append(Link(u, v, b, a))
            self.links.append(Link(v, u, b, a))

    def link(self, u: int, v: int, bw, alpha=0) -> None:
        self.links.append(Link(u, v, Fraction(bw), Fraction(alpha)))

    def topology(self, name: str, expr: str) -> Topology:
        return Topology(tuple(self.names), tuple(self.kinds), tuple(self.links), name=name, expr=expr)


def _ints(*values) -> None:
    """TypeError unless every value is an int (the expression language turns it into a usage message)."""
    for v in values:
        if isinstance(v, bool) or not isinstance(v, int):
            raise TypeError("integer arguments expected")


def _times(count: int) -> str:
    return f" x{count}" if count > 1 else ""


# ------------------------------------------------------------------------------------------------ DGX A100
def dgx_a100(boxes: int = 1) -> Topology:
    """``boxes`` NVIDIA DGX A100 boxes as modelled by ForestColl (paper section 5.3, reference code
    ``a100_topology``; notes forestcoll.md 5.2).

    Box b has GPUs ``b{b}.g0`` .. ``b{b}.g7``, each cabled to the box's NVSwitch ``b{b}.nvs`` at 300 GB/s each
    way. When boxes > 1 each GPU j also has its own InfiniBand NIC ``b{b}.nic{j}`` (GPU <-> NIC at 25 GB/s each
    way, no PCIe switch node), and NIC j is cabled to the global IB switch ``ib{j % 2}`` (one for the even, one
    for the odd NICs) at 25 GB/s each way. Per-GPU ingress is 300 GB/s (one box) or 325 GB/s; the 2-box model
    reproduces the paper's optimal allgather algbw of 346.67 GB/s.

    Node order: all GPUs (box-major), then per box its NVSwitch and NICs, then ``ib0``, ``ib1``.
    """
    boxes = _need_int(boxes, "boxes", 1)
    net = _Net()
    gpus = [[net.node(f"b{b}.g{j}", COMPUTE) for j in range(A100_GPUS)] for b in range(boxes)]
    nics = []
    for b in range(boxes):
        nvs = net.node(f"b{b}.nvs", SWITCH)
        for g in gpus[b]:
            net.cable(g, nvs, A100_NVSWITCH_BW)
        if boxes > 1:
            nics.append([net.node(f"b{b}.nic{j}", SWITCH) for j in range(A100_GPUS)])
            for g, nic in zip(gpus[b], nics[b]):
                net.cable(g, nic, A100_NIC_BW)
    if boxes > 1:
        ib = [net.node(f"ib{i}", SWITCH) for i in range(2)]
        for b in range(boxes):
            for j, nic in enumerate(nics[b]):
                net.cable(nic, ib[j % 2], A100_NIC_BW)
    return net.topology(f"DGX A100{_times(boxes)}", f"dgx_a100(boxes={boxes})")


def dgx_a100_size(boxes: int = 1) -> tuple[int, int]:
    _ints(boxes)
    g = A100_GPUS * boxes
    if boxes > 1:
        return g + boxes + g + 2, 2 * (3 * g)
    return g + boxes, 2 * g


# --------------------------------------------------------------------------------------------------- MI250
def _xgmi_pairs(gpus: int) -> list[tuple[int, int, int]]:
    """(i, j, parallel cables) for i < j < gpus with at least one xGMI cable."""
    return [(i, j, MI250_XGMI[i][j]) for i in range(gpus) for j in range(i + 1, gpus) if MI250_XGMI[i][j]]


def mi250(clusters: int = 1, gpus_per_cluster: int = 16) -> Topology:
    """``clusters`` AMD MI250 clusters as modelled by ForestColl (paper section 5.2 and Fig. 7; notes
    forestcoll.md 5.2).

    Each cluster c has 16 GPUs (GCDs) ``c{c}.g0`` .. ``c{c}.g15`` joined by the xGMI adjacency ``MI250_XGMI``:
    every cable is a separate 50 GB/s link each way, and every GPU has 7 of them (350 GB/s). When clusters > 1
    every GPU is also cabled to one global InfiniBand switch ``ib`` at 16 GB/s each way (the paper's
    simplification of 8 NICs x 256 GB/s per cluster, which reproduces its 354.13 / 341.33 GB/s); per-GPU ingress
    is then 366 GB/s. ``gpus_per_cluster=8`` keeps only GPUs 0-7 of each cluster and the xGMI cables among them
    (the paper's "8+8" setting, the left half of Fig. 7a).
    """
    clusters = _need_int(clusters, "clusters", 1)
    gpus_per_cluster = _need_int(gpus_per_cluster, "gpus_per_cluster", 1)
    if gpus_per_cluster not in (8, 16):
        raise TopologyError(f"gpus_per_cluster must be 16 or 8, got {gpus_per_cluster}")
    net = _Net()
    gpus = [[net.node(f"c{c}.g{j}", COMPUTE) for j in range(gpus_per_cluster)] for c in range(clusters)]
    pairs = _xgmi_pairs(gpus_per_cluster)
    for c in range(clusters):
        for i, j, count in pairs:
            net.cable(gpus[c][i], gpus[c][j], MI250_XGMI_BW, count)
    if clusters > 1:
        ib = net.node("ib", SWITCH)
        for row in gpus:
            for g in row:
                net.cable(g, ib, MI250_IB_BW)
    half = "" if gpus_per_cluster == 16 else " (GPUs 0-7 of each)"
    return net.topology(f"MI250{_times(clusters)}{half}",
                        f"mi250(clusters={clusters},gpus_per_cluster={gpus_per_cluster})")


def mi250_size(clusters: int = 1, gpus_per_cluster: int = 16) -> tuple[int, int]:
    _ints(clusters, gpus_per_cluster)
    g = gpus_per_cluster if gpus_per_cluster in (8, 16) else 16   # the builder rejects other values
    xgmi = 2 * sum(count for _, _, count in _xgmi_pairs(g))
    if clusters > 1:
        return clusters * g + 1, clusters * xgmi + 2 * clusters * g
    return clusters * g, clusters * xgmi


# --------------------------------------------------------------------------------------- generic cluster
def cluster(boxes: int, gpus: int, box_bw: int, spine_bw: int) -> Topology:
    """A two-level switched cluster: box b has GPUs ``b{b}.g0`` .. cabled to its box switch ``b{b}.sw`` at
    ``box_bw`` GB/s each way; when boxes > 1 every GPU is also cabled to the one global switch ``spine`` at
    ``spine_bw`` GB/s each way. ``cluster(2,4,10,1)`` is ForestColl's Figure 2 example (cluster switches w1,
    w2 with 10b links, global switch w0 with b links, b = 1; optimal allgather algbw 8b).

    Node order: all GPUs (box-major), then the box switches, then ``spine``.
    """
    boxes, gpus = _need_int(boxes, "boxes", 1), _need_int(gpus, "gpus", 1)
    box_bw, spine_bw = _need_int(box_bw, "box_bw", 1), _need_int(spine_bw, "spine_bw", 1)
    net = _Net()
    ranks = [[net.node(f"b{b}.g{j}", COMPUTE) for j in range(gpus)] for b in range(boxes)]
    for b in range(boxes):
        sw = net.node(f"b{b}.sw", SWITCH)
        for g in ranks[b]:
            net.cable(g, sw, box_bw)
    if boxes > 1:
        spine = net.node("spine", SWITCH)
        for row in ranks:
            for g in row:
                net.cable(g, spine, spine_bw)
    return net.topology(f"Cluster {boxes}x{gpus} ({box_bw}/{spine_bw} GB/s)",
                        f"cluster(boxes={boxes},gpus={gpus},box_bw={box_bw},spine_bw={spine_bw})")


def cluster_size(boxes: int, gpus: int, box_bw: int, spine_bw: int) -> tuple[int, int]:
    _ints(boxes, gpus, box_bw, spine_bw)
    if boxes > 1:
        return boxes * gpus + boxes + 1, 4 * boxes * gpus
    return boxes * gpus + boxes, 2 * boxes * gpus


# ------------------------------------------------------------------------------------------------ fat-tree
def fat_tree(k: int, bw: int = 25) -> Topology:
    """The k-ary fat-tree (Al-Fares, Loukissas and Vahdat, "A Scalable, Commodity Data Center Network
    Architecture", SIGCOMM 2008), k even: k pods, each with k/2 edge switches ``p{p}.e{e}`` and k/2 aggregation
    switches ``p{p}.a{a}``; (k/2)^2 core switches ``core{c}``. Edge switch e of pod p serves the k/2 hosts
    ``p{p}.e{e}.h{h}`` (the compute nodes, k^3/4 of them); edge and aggregation switches of a pod form a
    complete bipartite graph; aggregation switch i of every pod is cabled to core switches i*(k/2) ..
    i*(k/2) + k/2 - 1. Every cable carries ``bw`` GB/s each way. k^3/4 + 5k^2/4 nodes, 3k^3/4 cables.

    Node order: hosts, then edge switches (pod-major), aggregation switches (pod-major), core switches.
    """
    k, bw = _need_int(k, "k", 2), _need_int(bw, "bw", 1)
    if k % 2:
        raise TopologyError(f"fat_tree needs an even k, got {k}")
    h = k // 2
    net = _Net()
    hosts = [[[net.node(f"p{p}.e{e}.h{i}", COMPUTE) for i in range(h)] for e in range(h)] for p in range(k)]
    edges = [[net.node(f"p{p}.e{e}", SWITCH) for e in range(h)] for p in range(k)]
    aggs = [[net.node(f"p{p}.a{a}", SWITCH) for a in range(h)] for p in range(k)]
    cores = [net.node(f"core{c}", SWITCH) for c in range(h * h)]
    for p in range(k):
        for e in range(h):
            for host in hosts[p][e]:
                net.cable(host, edges[p][e], bw)
    for p in range(k):
        for e in range(h):
            for a in range(h):
                net.cable(edges[p][e], aggs[p][a], bw)
    for p in range(k):
        for a in range(h):
            for c in range(a * h, a * h + h):
                net.cable(aggs[p][a], cores[c], bw)
    return net.topology(f"FatTree(k={k})", f"fat_tree(k={k},bw={bw})")


def fat_tree_size(k: int, bw: int = 25) -> tuple[int, int]:
    _ints(k, bw)
    return (k ** 3 + 5 * k * k) // 4, 3 * k ** 3 // 2
