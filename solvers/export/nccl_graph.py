"""NCCL graph files: one host's rings and trees for plain NCCL and RCCL (``NCCL_GRAPH_FILE``), and RCCL's ring
string (``NCCL_RINGS``).

NCCL searches its rings and trees itself unless ``NCCL_GRAPH_FILE`` names a file in the format that
``NCCL_GRAPH_DUMP_FILE`` writes (read at github.com/NVIDIA/nccl, src/graph; RCCL's reader, github.com/ROCm/rccl
src/graph/search.cc, is the same)::

    <graphs version="1">
      <graph id="0" pattern="4" crossnic="0" nchannels="2" speedintra="20" speedinter="20" latencyinter="0"
             typeintra="NVL" typeinter="PIX" samechannels="0">      (one line in the file)
        <channel>
          <gpu dev="0"/>
          <gpu dev="0x1"/>
          ...
        </channel>
        ...

* The dump (search.cc ``ncclTopoGetXmlFromGraphs``/``ncclTopoGetXmlFromGraph``/``ncclTopoGetXmlFromChannel``,
  xml.cc ``ncclTopoDumpXmlRec``) writes ``<graphs version="1">`` (xml.h ``NCCL_GRAPH_XML_VERSION``), then per
  graph ``id pattern crossnic nchannels speedintra speedinter latencyinter typeintra typeinter samechannels``
  in that order, two spaces of indent per level, empty elements as ``<x .../>``, no XML declaration. Integers
  with ``%d``, floats with ``%g`` (xml.h ``xmlSetAttrFloat``: "20", "42.8571"), devs with ``%#lx`` (xml.h
  ``xmlSetAttrLong``: "0", "0x1", "0xa"); the reader takes devs with ``strtol(s, NULL, 16)`` (search.cc
  ``ncclTopoGetChannelFromXml``), so a dev is always hex.
* ``id``: 0 ring, 1 tree, 2 collnet chain, 3 nvls, 4 collnet direct (init.cc, the graphs' set-up before
  ``ncclTopoCompute``); ``ncclTopoCompute`` (search.cc) loads a graph file per graph, keeping the ``<graph>``
  whose id matches (``ncclTopoGetGraphFromXmlSub``), and searches only where the file gives no channels.
  ``pattern`` (graph.h ``NCCL_TOPO_PATTERN_*``): 1 balanced tree, 2 split tree, 3 tree, 4 ring, 5 nvls,
  6 collnet direct.
* A channel lists the host's GPUs in order between the NIC it enters by and the NIC it leaves by; the nets are
  written only on a job of several hosts (``system->inter``, which paths.cc sets when the host's GPUs are not
  all the ranks), so a single-host file has no ``<net>``. A ring inside one host closes last to first
  (connect.cc ``connectRings``); across hosts the last GPU sends by the second NIC to the next host's first
  GPU, which receives by its first NIC (search.cc ``ncclTopoGetNetDev``: the first GPU of a channel uses
  ``inter[0]``, the others ``inter[1]``). A tree channel is a chain: ``tree.up`` the GPU before, ``tree.down``
  the GPU after (connect.cc ``ncclTopoPreset``); the tree pattern says which GPUs meet the network: 3 (tree)
  the first for parent and children, 1 (balanced) the parent and one child on the first and the other child on
  the second, 2 (split) the parent on the first and the children on the second.
* ``speedintra``/``speedinter`` are each channel's bandwidth in GB/s inside and across hosts (tuning.cc prices
  a ring at nchannels times them); ``typeintra``/``typeinter`` path type names (search.cc ``kvDictLinkType``:
  LOC NVL NVB PIX PXB P2C PXN PHB SYS; no NET: across hosts the type is the GPU-to-NIC path's). RCCL names its
  xGMI paths NVL in this dictionary (its log prints them XGMI). ``crossnic`` is 1 where a channel enters and
  leaves by different NICs (NCCL then skips the graph under NCCL_CROSS_NIC=0); ``samechannels`` 1 when every
  channel is the same order.
* RCCL also reads ``NCCL_RINGS`` (rccl src/graph/search.cc ``ncclTopoCompute``; rome_models.cc ``parseGraph``):
  channels separated by ``|``, each the host's GPU numbers in decimal separated by spaces, optionally a NIC
  ``N<k>`` first and last: "0 1 2 3|3 2 1 0", "N0 0 2 3 1 N1". A channel whose GPU count is not the host's is
  skipped; RCCL runs the rings backwards on odd-numbered hosts, and uses the same orders for its trees unless
  ``RCCL_TREES`` is set (a nested form "(4(2(3)(1))(6(5)))", rome_models.cc ``parseGraphLight``). NVIDIA's
  NCCL does not read ``NCCL_RINGS``.

What this module writes (``export_graph``), from ``check.host_of``'s host (dev k = the box's k-th GPU in rank
order; net dev k = its k-th NIC node):

* a switch-free design of up to 16 GPUs is one host: graph 0 holds the link-disjoint Hamiltonian rings of
  ``solvers.baselines.ringset.ring_set`` (the ``ring`` synthesizer's), one channel each, without nets; graph 1
  the same orders as tree chains where every hop is linked both ways;
* a fabric of several boxes: graph 0 holds, for one box, the part of each of NCCL's rings of
  ``solvers.baselines.multiring.nccl_ring_orders`` (one per NIC) inside it, between the NIC of its first GPU
  (where the ring enters) and the NIC of its last (where it leaves); graph 1 the chains of
  ``solvers.baselines.dbt``'s trees across boxes inside that box (pattern 3: the head GPU meets the network
  for parent and children), with the head's NIC at both ends, where dbt's trees apply.

The speeds are each channel's share of the busiest link under it when every channel sends over all its hops at
once (the multi-ring's ``ring_busbw_gbs`` is nchannels times the smaller of the two); ``typeintra`` is NVL
(every hop is an NVLink, NVSwitch or xGMI link or route: the designs model no PCIe) and ``typeinter`` PIX (each
GPU's NIC beside it, NCCL's starting type in ``ncclTopoCompute``; a real DGX A100 dump may say PXB).

Checked against the real thing: NCCL 2.28.9 on an H100 loaded a file of ``write_graphs`` (its log: "Pattern 4,
crossNic 0, nChannels 4, bw 42.857101/42.857101, type NVL/PIX", then pattern 3) and ran an allreduce with it,
read ``dev="10"`` as 0x10 ("dev 16 not found") and refused an ``<?xml?>`` declaration; the recording is in
tests/data/real/h100-nccl-2.28.9 and tests/test_nccl_graph_real.py holds the writer and reader to it.
"""
from __future__ import annotations

from dataclasses import dataclass, field
from fractions import Fraction

from topologies.model import Topology

from ..baselines.boxes import nic_nodes
from ..baselines.dbt import _box_parents
from ..baselines.fabric import Fabric, route_loads
from ..baselines.multiring import nccl_ring_orders
from ..baselines.ringset import ring_set
from ..core.errors import NotApplicable
from .nccl_graph_check import (GRAPH_VERSION, MAX_CHANNELS, RING, GraphCheck, Host, check_graph, hex_dev,
                               host_of)

__all__ = ["ChannelOrder", "GraphError", "GraphExport", "GraphSpec", "check_graph", "export_graph", "host_of",
           "nccl_rings", "write_graphs"]

TREE = 3                    # graph.h NCCL_TOPO_PATTERN_TREE
TYPE_INTRA, TYPE_INTER = "NVL", "PIX"


class GraphError(ValueError):
    """A graph file that fails its own check after writing; the message is the first problem."""


@dataclass(frozen=True)
class ChannelOrder:
    """One channel: GPU devs in order, and (net in, net out) on a host of a multi-box fabric."""

    gpus: tuple[int, ...]
    nets: tuple[int, int] | None = None


@dataclass(frozen=True)
class GraphSpec:
    id: int
    pattern: int
    channels: tuple[ChannelOrder, ...]
    speedintra: float
    speedinter: float

    @property
    def crossnic(self) -> int:
        return int(any(c.nets is not None and c.nets[0] != c.nets[1] for c in self.channels))

    @property
    def samechannels(self) -> int:
        return int(len({c for c in self.channels}) == 1)


def _speed(value: float) -> str:
    """A speed as the dump writes a float: C's ``%g``."""
    return "%g" % value


def _safe_name(text: str) -> str:
    """The design's name as an attribute NCCL's reader takes literally (no quote, '&' or '<'), 200 chars."""
    return "".join(c if c.isalnum() or c in "()[],=_.+-: " else "_" for c in text)[:200]


def write_graphs(graphs: list[GraphSpec], name: str = "") -> str:
    """The graph file of ``graphs``, laid out as NCCL's dump lays it out (module docstring)."""
    head = f'<graphs version="{GRAPH_VERSION}"' + (f' name="{_safe_name(name)}"' if name else "") + ">"
    lines = [head]
    for g in graphs:
        lines.append(f'  <graph id="{g.id}" pattern="{g.pattern}" crossnic="{g.crossnic}" '
                     f'nchannels="{len(g.channels)}" speedintra="{_speed(g.speedintra)}" '
                     f'speedinter="{_speed(g.speedinter)}" latencyinter="0" typeintra="{TYPE_INTRA}" '
                     f'typeinter="{TYPE_INTER}" samechannels="{g.samechannels}">')
        for chan in g.channels:
            lines.append("    <channel>")
            if chan.nets is not None:
                lines.append(f'      <net dev="{hex_dev(chan.nets[0])}"/>')
            lines.extend(f'      <gpu dev="{hex_dev(d)}"/>' for d in chan.gpus)
            if chan.nets is not None:
                lines.append(f'      <net dev="{hex_dev(chan.nets[1])}"/>')
            lines.append("    </channel>")
        lines.append("  </graph>")
    lines.append("</graphs>")
    return "\n".join(lines) + "\n"


def nccl_rings(channels) -> str:
    """RCCL's ``NCCL_RINGS`` string of ring channels (module docstring): decimal GPU numbers, N<k> for NICs."""
    parts = []
    for chan in channels:
        body = " ".join(str(d) for d in chan.gpus)
        parts.append(body if chan.nets is None else f"N{chan.nets[0]} {body} N{chan.nets[1]}")
    return "|".join(parts)


# ------------------------------------------------------------------------------------------------ the orders
def _share(topo: Topology, load: dict[int, Fraction], keep) -> float | None:
    """min over the loaded links that ``keep`` accepts of bandwidth / load, or None if none is loaded."""
    rates = [Fraction(topo.links[i].bandwidth) / amount for i, amount in load.items() if amount and keep(i)]
    return float(min(rates)) if rates else None


def _single_box(host: Host) -> tuple[GraphSpec, GraphSpec | None, str, str]:
    """Graphs 0 and 1 of a switch-free host, the tree's note, and how the rings were found."""
    topo = host.topo
    found = ring_set(topo)
    dev = {u: d for d, u in enumerate(host.gpus)}
    rings = tuple(ChannelOrder(tuple(dev[u] for u in order)) for order in found.rings)
    load: dict[int, Fraction] = {}
    for hops in found.links:
        for li in hops:
            load[li] = load.get(li, Fraction(0)) + 1
    speed = _share(topo, load, lambda i: True)
    ring = GraphSpec(0, RING, rings, speed, speed)
    linked = {(link.src, link.dst) for link in topo.links}
    for k, order in enumerate(found.rings):
        for u, v in zip(order, order[1:]):
            if (v, u) not in linked:
                return ring, None, (f"no tree graph: ring {k}'s hop {topo.names[u]} -> {topo.names[v]} has no "
                                    "link back, and a tree chain runs both ways; NCCL searches its own trees"), \
                    found.describe()
    fabric = Fabric(topo)
    chains = [(u, v, 1) for order in found.rings for a, b in zip(order, order[1:]) for u, v in ((a, b), (b, a))]
    tree_speed = _share(topo, route_loads(fabric, chains), lambda i: True)
    tree = GraphSpec(1, TREE, tuple(ChannelOrder(c.gpus) for c in rings), tree_speed, tree_speed)
    return ring, tree, "tree chains: the ring orders, each hop linked both ways", found.describe()


def _segments(host: Host, cycle: list[int]) -> list[list[int]]:
    """A ring across boxes cut into its part in each box (``nccl_ring_orders`` joins them box after box)."""
    out, at = [], 0
    for box in host.box_list:
        part = cycle[at:at + len(box)]
        if set(part) != set(box):
            raise NotApplicable("NCCL's ring does not run through the boxes one after the other")
        out.append(part)
        at += len(box)
    return out


def _multi_box(host: Host) -> tuple[GraphSpec, GraphSpec | None, str, bool]:
    """Graphs 0 and 1 of a host of a multi-box fabric, the tree's note, and whether every host has the same
    orders and NICs (so that the one file serves every host)."""
    topo, fabric, slow = host.topo, host.fabric, host.slow
    cycles = nccl_ring_orders(fabric)
    if len(cycles) > MAX_CHANNELS:
        cycles = cycles[:MAX_CHANNELS]
    per_box: list[list[ChannelOrder]] = [[] for _ in host.box_list]
    for cycle in cycles:
        for b, part in enumerate(_segments(host, cycle)):
            members = host.box_list[b]
            local = {u: d for d, u in enumerate(members)}
            nics = nic_nodes(fabric, list(members), slow)
            if part[0] not in nics or part[-1] not in nics:
                who = part[0] if part[0] not in nics else part[-1]
                raise NotApplicable(f"NCCL's ring enters or leaves the box at {topo.names[who]}, which has no NIC")
            per_box[b].append(ChannelOrder(tuple(local[u] for u in part),
                                           (nics.index(part[0]), nics.index(part[-1]))))
    same = all(chans == per_box[0] for chans in per_box)
    edges = [(c[i], c[(i + 1) % len(c)], 1) for c in cycles for i in range(len(c))]
    load = route_loads(fabric, edges)
    is_fast = lambda i: Fraction(topo.links[i].bandwidth) > slow          # noqa: E731
    intra = _share(topo, load, is_fast)
    inter = _share(topo, load, lambda i: not is_fast(i))
    ring = GraphSpec(0, RING, tuple(per_box[host.index]), intra or inter, inter)
    layout = _box_parents(fabric)
    if layout is None:
        return ring, None, ("no tree graph: dbt's trees across boxes need boxes of equal size whose chains from "
                            "each NIC run over fast links both ways; NCCL searches its own trees"), same
    ranks = fabric.ranks
    members = host.box_list[host.index]
    local = {u: d for d, u in enumerate(members)}
    chains = []
    for k in range(0, len(layout), 2):
        parent = layout[k]
        head = next(u for u in members if parent[ranks.index(u)] < 0 or ranks[parent[ranks.index(u)]] not in local)
        chain, below = [head], {ranks[parent[ranks.index(u)]]: u for u in members if u != head}
        while chain[-1] in below:
            chain.append(below[chain[-1]])
        nic = host.nics.index(head)
        chains.append(ChannelOrder(tuple(local[u] for u in chain), (nic, nic)))
    tree_edges = [(ranks[v], ranks[u], 1) for parent in layout for v, u in enumerate(parent) if u >= 0]
    tree_load = route_loads(fabric, tree_edges + [(b, a, 1) for a, b, _ in tree_edges])
    t_inter = _share(topo, tree_load, lambda i: not is_fast(i))
    t_intra = _share(topo, tree_load, is_fast) or t_inter
    tree = GraphSpec(1, TREE, tuple(chains[:len(ring.channels)]), t_intra, t_inter)
    return ring, tree, "tree chains: dbt's trees across boxes, from each NIC's GPU through the box", same


# -------------------------------------------------------------------------------------------------- export
@dataclass
class GraphExport:
    """What ``export_graph`` wrote: the host (``box`` of ``hosts``), its GPUs, the ring and tree channels, the
    speeds, whether the rings are link-disjoint, RCCL's ``NCCL_RINGS`` string and the file's check."""

    design: str
    box: int
    hosts: int
    gpus: int
    ring_channels: int
    tree_channels: int
    speedintra: float
    speedinter: float
    link_disjoint: bool
    most_on_a_link: int
    nccl_rings: str
    same_on_every_host: bool
    rings_found: str
    tree_note: str
    check: GraphCheck = field(repr=False)

    @property
    def ring_busbw_gbs(self) -> float:
        """nchannels times the per-channel speed of the slower side: the ring bandwidth NCCL's tuning sees."""
        return self.ring_channels * min(self.speedintra, self.speedinter)

    def summary(self, where: str = "<file>") -> str:
        """The one line the CLI prints after writing ``where``."""
        host = f"host {self.box} of {self.hosts}" if self.hosts > 1 else "one host"
        if self.link_disjoint:
            shared = "link-disjoint"
        else:
            shared = f"sharing links (at most {self.most_on_a_link} channels on one link)"
        tree = f"{self.tree_channels} tree channels" if self.tree_channels else "no tree graph"
        every = "" if self.hosts == 1 or self.same_on_every_host else " (this host's orders: other hosts differ)"
        return (f"{self.ring_channels} ring channels of {self.gpus} GPUs each on {host}{every}, {shared}, "
                f"speedintra {self.speedintra:.4g} GB/s per channel inside a box / speedinter "
                f"{self.speedinter:.4g} GB/s between boxes, {tree}; "
                f"NCCL_RINGS=\"{self.nccl_rings}\"; load with NCCL_GRAPH_FILE={where}")


def export_graph(topo: Topology, box: int = 0, trees: bool = True, name: str | None = None
                 ) -> tuple[str, GraphExport]:
    """The NCCL graph file of host ``box`` of ``topo`` (module docstring), read back and checked
    (``check_graph``) before it is returned; NotApplicable with a one-line reason where it does not apply,
    GraphError if the written file fails its own check."""
    host = host_of(topo, box)
    if host.multi:
        ring, tree, note, same = _multi_box(host)
        how = f"NCCL's rings across boxes, one per NIC ({len(ring.channels)})"
    else:
        ring, tree, note, how = _single_box(host)
        same = True
    if not trees:
        tree, note = None, "no tree graph (not asked for)"
    specs = [ring] + ([tree] if tree is not None else [])
    text = write_graphs(specs, name if name is not None else (topo.name or topo.expr))
    check = check_graph(text, topo, box)
    if not check.ok:
        raise GraphError(f"the written NCCL graph file fails its own check: {check.first}")
    for spec in specs:
        read = check.graph(spec.id)
        got = [ChannelOrder(tuple(c.gpus), tuple(c.nets) if c.nets else None) for c in read.channels]
        if got != list(spec.channels) or (read.speedintra, read.speedinter) != (
                float(_speed(spec.speedintra)), float(_speed(spec.speedinter))):
            raise GraphError(f"graph {spec.id} reads back other channels or speeds than were written")
    report = GraphExport(topo.name or topo.expr, box, host.hosts, len(host.gpus), len(ring.channels),
                         len(tree.channels) if tree is not None else 0, ring.speedintra, ring.speedinter,
                         bool(check.link_disjoint), check.most_on_a_link, nccl_rings(ring.channels), same, how,
                         note, check)
    return text, report
