"""The hierarchical allreduce on multi-box switched fabrics: reduce-scatter in the box, allreduce across the
boxes, allgather in the box.

This is the two-level allreduce that NCCL-based training stacks run across servers: Horovod's hierarchical
allreduce (``HOROVOD_HIERARCHICAL_ALLREDUCE``: an NCCL reduce-scatter among the GPUs of a node, an allreduce
across the nodes on each GPU's part, an NCCL allgather in the node) and GenModel's "Hierarchical g x n" plan of
its GPU testbed (``solvers.genmodel.plans``: ring reduce-scatter in the node, allreduce across nodes on S/g, ring
allgather in the node). Every phase here is a ring (direct-connect paper App. F.1).

Definition. Boxes are ``boxes.boxes``: the compute nodes joined by links faster than the fabric's slowest
link (NVSwitch or xGMI inside a DGX A100 or MI250 box; NICs and the IB switch are the slowest). There must be
B >= 2 boxes of G >= 2 compute nodes each; box b holds its nodes in rank order and node (b, j) is the one of
local index j. The N = B G shards fall in G *classes*: class j is the B shards of the nodes (0, j) .. (B-1, j).
Inside box b a ring c_0 -> c_1 -> ... -> c_{G-1} -> c_0 of local indices runs over *fast* logical edges
(``fabric``; every link of the route faster than the slowest): rank order where it fits, else the first
directed Hamiltonian cycle ``hamiltonian.hamiltonian_cycle`` finds. Across boxes, for each j, the ring
(0, j) -> (1, j) -> ... -> (B-1, j) -> (0, j) runs over logical edges (GPU -> NIC -> IB switch -> NIC -> GPU).

1. Reduce-scatter in the box, G-1 rounds: in round r node (b, c_i) sends box b's partial sums of the whole class
   c_{i-r} (B shards) to (b, c_{i+1}), which adds them. Afterwards (b, j) holds box b's sum of class j.
2. Allreduce across the boxes, for every j at once, on class j: reduce-scatter (B-1 rounds: in round r node
   (b, j) sends shard (b-r, j), a sum over boxes b-r+1 .. b, to (b+1, j), which adds its own) then allgather
   (B-1 rounds: in round r node (b, j) sends the reduced shard (b-r+1, j) to (b+1, j)); indices mod B. The
   class is cut in its B shards, so after the reduce-scatter node (b, j) holds its own shard fully reduced.
3. Allgather in the box, G-1 rounds: in round r node (b, c_i) sends the reduced class c_{i-r+1} to (b, c_{i+1}).

2(G-1) + 2(B-1) rounds in all. Allgather and reduce-scatter are not built (the hierarchy is the allreduce's).

Step model (``closed_form``, ``fabric.evaluate``). A round of phase 1 or 3 puts B shards (M/G bytes) on every
in-box ring edge, a round of phase 2 one shard (M/N) on every cross-box ring edge; every round takes H IR steps,
H the longest route (4 on DGX A100 clusters: GPU -> NIC -> IB -> NIC -> GPU; in-box rounds use the last 2
steps, through the NVSwitch). So steps = (2(G-1) + 2(B-1)) H - idle, idle = H - the first round's longest
route. On dgx_a100(boxes=2) (G = 8, B = 2, N = 16, node bandwidth 325 GB/s): 16 rounds, 16 * 4 - 2 = 62 steps,
tb = 14 rounds * 2 hops * (2 shards / 300) * 325/16 + 2 rounds * 4 hops * (1 shard / 25) * 325/16 = 247/24.

Analytic time when pipelined (``pipelined_algbw_gbs``). With the buffer cut in many slices the phases of
successive slices overlap, so the collective lasts as long as its busiest link needs for all the bytes it
carries: T = max over links l of bytes_l / bw_l, algbw = M / T, busbw = algbw 2(N-1)/N (nccl-tests). Each link
of an in-box ring edge carries 2(G-1) rounds of M/G, i.e. 2(G-1)/G M; each link of a cross-box ring edge
carries 2(B-1) rounds of M/N, i.e. 2(B-1)/B * M/G. With one bandwidth b_box on the in-box routes and b_x on the
cross-box ones,

    T = max( 2(G-1)/G * M / b_box,  2(B-1)/B * M/G / b_x ).

On dgx_a100(boxes=2): NVSwitch ports carry 1.75 M at 300 GB/s, each NIC link (GPU -> NIC, NIC -> IB and back,
both ways) M/8 at 25 GB/s, so the NVSwitch ports bind: algbw = 300/1.75 = 171.4 GB/s, busbw 321.4 GB/s
(the NICs alone would allow 200 GB/s algbw). On dgx_a100(boxes=4) the NICs carry 3/16 M and bind: algbw
133.3 GB/s. On direct-connect boxes (MI250's xGMI) one ring uses one link (group) per node, so the in-box phases
bind far below what the box's other links could add; NCCL would run several rings there. The schedule's notes
carry the figure (``pipelined_algbw_gbs``, ``pipelined_busbw_gbs``); the tests hold the runtime model to it.
"""
from __future__ import annotations

from fractions import Fraction

from topologies.model import Topology

from ..core.errors import NotApplicable
from ..core.schedule import ONE, ZERO, Collective, Schedule
from .fabric import Fabric, Loads, Plan, Send, add_load, bottleneck, evaluate, need_two, realize, route_loads
from .hamiltonian import hamiltonian_cycle
from .boxes import boxes as find_boxes, fast

ALGO = "hierarchical"


def _gbs(x: Fraction) -> str:
    return f"{float(x):g} GB/s"


def _layout(fabric: Fabric, collective: Collective) -> tuple[list[list[int]], list[list[int]]]:
    """(boxes, rings): the compute nodes of every box in rank order, and every box's ring as local indices
    (module docstring); NotApplicable with the reason where the fabric does not fit."""
    if collective is not Collective.ALLREDUCE:
        raise NotApplicable(f"{ALGO} builds allreduce only (reduce-scatter in the box, allreduce across, "
                            f"allgather in the box), not {collective.value}")
    need_two(fabric, ALGO)
    topo = fabric.topo
    speeds = {Fraction(link.bandwidth) for link in topo.links}
    if len(speeds) == 1:
        raise NotApplicable(f"{ALGO} needs two or more boxes joined by slower links; every link of the fabric "
                            f"is declared at the same speed ({_gbs(next(iter(speeds)))}; the workload's prices scale "
                            f"them all alike), so the fabric is one box")
    boxes, slow = find_boxes(fabric)
    if len(boxes) == 1:
        raise NotApplicable(f"{ALGO} needs two or more boxes; all {len(boxes[0])} compute nodes form one box "
                            f"(joined by links faster than the slowest, {_gbs(slow)})")
    sizes = sorted({len(box) for box in boxes})
    if len(sizes) > 1:
        shown = ", ".join(f"{len(box)} ({topo.names[box[0]]})" for box in boxes[:6])
        raise NotApplicable(f"{ALGO} needs boxes of equal size; the {len(boxes)} boxes (joined by links faster "
                            f"than {_gbs(slow)}) hold {shown}{', ...' if len(boxes) > 6 else ''} compute nodes")
    if sizes[0] == 1:
        raise NotApplicable(f"{ALGO} needs boxes of two or more compute nodes; no two compute nodes are joined by "
                            f"links faster than the slowest ({_gbs(slow)}), so every box is one node")
    size = sizes[0]
    rings = []
    for box in boxes:
        pairs = [(a, b) for a in range(size) for b in range(size) if a != b and fast(fabric, box[a], box[b], slow)]
        inside = Topology.from_edges(size, pairs, node_names=[topo.names[u] for u in box])
        try:
            rings.append(hamiltonian_cycle(inside))
        except NotApplicable as exc:
            why = "search budget exhausted" if "budget" in str(exc) else "none exists"
            raise NotApplicable(f"{ALGO} needs a ring through the box of {topo.names[box[0]]} over routes of links "
                                f"faster than {_gbs(slow)} ({why})") from None
    count = len(boxes)
    for j in range(size):
        for b in range(count):
            u, v = boxes[b][j], boxes[(b + 1) % count][j]
            if not fabric.linked(u, v):
                raise NotApplicable(f"{ALGO} needs the ring across the boxes of local index {j}: "
                                    f"{fabric.missing(u, v, both_ways=False)}")
    return boxes, rings


def _rounds(boxes: list[list[int]], rings: list[list[int]]):
    """Every round of the module docstring as (phase, [(src, dst, shards, reduce)]), phase 'box' or 'across'."""
    count, size = len(boxes), len(boxes[0])

    def klass(j: int) -> tuple[int, ...]:
        return tuple(boxes[b][j] for b in range(count))

    def in_box(r: int, offset: int, reduce: bool):
        return ("box", [(box[ring[i]], box[ring[(i + 1) % size]], klass(ring[(i - r + offset) % size]), reduce)
                        for box, ring in zip(boxes, rings) for i in range(size)])

    def across(r: int, offset: int, reduce: bool):
        return ("across", [(boxes[b][j], boxes[(b + 1) % count][j], (boxes[(b - r + offset) % count][j],), reduce)
                           for j in range(size) for b in range(count)])

    return ([in_box(r, 0, True) for r in range(1, size)] + [across(r, 0, True) for r in range(1, count)]
            + [across(r, 1, False) for r in range(1, count)] + [in_box(r, 1, False) for r in range(1, size)])


def _plan(boxes, rings) -> Plan:
    return [[Send(u, v, tuple((s, ZERO, ONE) for s in shards), reduce) for u, v, shards, reduce in sends]
            for _, sends in _rounds(boxes, rings)]


def _loads(boxes, rings) -> Loads:
    out = []
    for _, sends in _rounds(boxes, rings):
        rnd: dict = {}
        for u, v, shards, _ in sends:
            add_load(rnd, u, v, len(shards))
        out.append(rnd)
    return out


def pipelined_algbw_gbs(topo: Topology) -> Fraction:
    """M / T for T = max over links of the bytes it carries over its bandwidth (module docstring): N times the
    smallest bw_l / load_l, load_l in shards (M/N) summed over every round, parallel links of a hop sharing it."""
    fabric = Fabric(topo)
    return _pipelined(fabric, *_layout(fabric, Collective.ALLREDUCE))


def _pipelined(fabric: Fabric, boxes, rings) -> Fraction:
    amounts = [(u, v, amount) for rnd in _loads(boxes, rings) for (u, v), amount in rnd.items()]
    return fabric.topo.n * bottleneck(fabric.topo, route_loads(fabric, amounts))


def build(topo: Topology, collective: Collective) -> Schedule:
    """The hierarchical allreduce (module docstring)."""
    fabric = Fabric(topo)
    boxes, rings = _layout(fabric, collective)
    count, size = len(boxes), len(boxes[0])
    algbw = _pipelined(fabric, boxes, rings)
    n = topo.n
    notes = {"boxes": count, "box_size": size,
             "box_rings": [[topo.names[box[j]] for j in ring] for box, ring in zip(boxes[:4], rings[:4])],
             "pipelined_algbw_gbs": float(algbw), "pipelined_busbw_gbs": float(algbw * 2 * (n - 1) / n)}
    schedule = realize(fabric, _plan(boxes, rings), collective, ALGO, notes)
    height = schedule.notes["ir_steps_per_round"]
    first = max(len(fabric.route(box[ring[i]], box[ring[(i + 1) % size]]))
                for box, ring in zip(boxes, rings) for i in range(size))
    schedule.notes["rs_steps"] = (size - 1 + count - 1) * height - (height - first)
    return schedule


def closed_form(topo: Topology, collective: Collective) -> tuple[Fraction, Fraction]:
    fabric = Fabric(topo)
    boxes, rings = _layout(fabric, collective)
    return evaluate(fabric, _loads(boxes, rings))
