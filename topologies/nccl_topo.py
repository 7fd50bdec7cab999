"""A fabric from NCCL's own view of a machine: the topology XML it writes with ``NCCL_TOPO_DUMP_FILE`` and reads back
with ``NCCL_TOPO_FILE`` (issue 41, item 1; the format in ``../shared/notes/runtime-truth.md``)::

    <system version="1">
      <cpu numaid="0" arch="x86_64" vendor="AuthenticAMD" ...>
        <pci busid="0000:03:00.0" class="0x060400" link_speed="16.0 GT/s PCIe" link_width="16">   (a PCIe switch)
          <pci busid="0000:07:00.0" class="0x030200" link_speed="16.0 GT/s PCIe" link_width="16">
            <gpu dev="0" sm="80" rank="0" gdr="1">
              <nvlink target="0000:c8:00.0" count="2" tclass="0x068000"/>                        (to an NVSwitch)
            </gpu>
          </pci>
          <pci busid="0000:0c:00.0" class="0x020700" ...><nic><net name="mlx5_0" dev="0" speed="200000" .../></nic>
        </pci>
      </cpu>
    </system>

How it becomes a topology, following what NCCL itself builds of the file (``src/graph/topo.cc`` and ``topo.h`` of
NVIDIA/nccl; every choice below is listed in ``Imported.assumed``):

* every ``<gpu>`` is a compute node ``GPU<dev>`` (``b<i>.GPU<dev>`` when several files make several boxes);
* NVLink bandwidth is ``count`` x NCCL's per-link figure for the GPU's ``sm`` (``ncclTopoNVLinkBw``: SM60 18.0,
  SM70 20.0, SM80 20.0, SM86 12.0, SM90 20.6, SM100 40.1 GB/s, ``NVLINK_GBS``);
* an ``<nvlink>`` whose ``tclass`` is the NVSwitch class ``0x068000`` (``PCI_NVSWITCH_CLASS``, ``src/graph/xml.h``)
  goes to the box's one switch node ``nvswitch``: NCCL, too, folds every NVSwitch of a system into a single NVS node
  (``ncclTopoAddNvLinks`` creates one and links each GPU to it both ways at count x per-link bandwidth); a GPU's
  several switch ``<nvlink>`` elements (one per NVSwitch chip) add up. The switch model: one non-blocking crossbar
  per box, each GPU's port as wide as all its switch NVLinks;
* an ``<nvlink>`` to a GPU class (``0x03...``) is a direct link from this GPU to the GPU at ``target`` (NCCL links
  one way per element: the peer lists its own); to the CPU class ``0x068001`` it joins the GPU's CPU both ways;
* PCIe and CPU paths are modelled only where a GPU has no NVLink (NCCL moves GPU-to-GPU traffic over NVLink where
  there is any): then every GPU, PCIe switch (a ``<pci>`` holding others) and CPU is a node, each ``<pci>`` joined
  to its parent at its own width x per-lane rate / 80 GB/s (NCCL's ``kvDictPciGen``: 16.0 GT/s is 120, 32.0 GT/s
  240 in 100 Mb/s per lane; width 0 read as 16; an unknown rate as 60), CPUs to each other at the inter-CPU figure
  of ``ncclTopoGetInterCpuBw`` (Intel 6.0, the Broadwell QPI_BW that NCCL raises for later models; AMD 16.0;
  POWER 32.0; ARM 6.0);
* several files are several boxes: each ``<net>`` of a box is a switch node joined both ways to one ``network``
  switch at its ``speed`` in Mb/s / 8000 GB/s (NCCL's ``ncclTopoAddNet``; a speed of 0 or below is 10000 Mb/s), and
  each GPU to the NICs nearest it in the PCI tree (those under its deepest shared PCIe switch, else its CPU, else
  all of the box's) at the narrowest of the GPU's PCIe link, the NIC's PCIe link and the NIC's speed. One file is
  one box: its NICs lead nowhere and are read past (a note says so).

What no machine can hold is refused, not built: a bus id repeated among the ``<pci>`` elements (NCCL itself reads
such a file without a word: ``ncclTopoAddPci`` creates a second node of the same id and every later look-up finds
the first; here it would have been one node joined twice to its parent, or to itself), an ``<nvlink>`` from a GPU
to its own bus id (NCCL's ``ncclTopoConnectNodes`` would link the GPU to itself), and a GPU whose NVLink counts add
up to more than NCCL probes on a GPU of its ``sm`` (``max_nvlinks``, ``src/graph/xml.cc``: 4 from sm 60, 6 from
sm 70, 12 from sm 80, 18 from sm 90; none below sm 60). So the fabric has no
self-loop, and two links between one pair only where the file names two paths.

The file is read through defusedxml with DTDs forbidden, bounded in size and element count before anything is
built; a file it cannot read is one ``TopologyError`` naming the element and why, and nothing is half-built.
Elements it does not model (``<c2c>``, ``<gin>``, attributes NCCL adds later) are read past with a note.
"""
from __future__ import annotations

import re
from collections import Counter
from dataclasses import dataclass, field
from fractions import Fraction

from .imported import Imported
from .limits import check_counts
from .model import COMPUTE, SWITCH, Link, Topology, TopologyError

__all__ = ["NVLINK_GBS", "PRICES", "from_nccl_topology", "from_nccl_topologies", "nvlink_gbs"]

NVLINK_GBS = {60: 18.0, 70: 20.0, 80: 20.0, 86: 12.0, 90: 20.6, 100: 40.1}
INTER_CPU_GBS = {"intel": 6.0, "amd": 16.0, "power": 32.0, "arm": 6.0}
PCI_GEN = {"2.5 GT/s": 15, "5 GT/s": 30, "8 GT/s": 60, "16 GT/s": 120, "32 GT/s": 240, "2.5 GT/s PCIe": 15,
           "5.0 GT/s PCIe": 30, "8.0 GT/s PCIe": 60, "16.0 GT/s PCIe": 120, "32.0 GT/s PCIe": 240,
           "64.0 GT/s PCIe": 480}
PRICES = {"nvlink": None, "inter_cpu": None}     # None: NCCL's figure for the sm / the CPU; a number overrides it
NVSWITCH_CLASS, CPU_CLASS = "0x068000", "0x068001"
MAX_BOXES = 256
MAX_ELEMENTS = 200_000
MAX_NVLINK_COUNT = 64
# The most NVLinks NCCL probes on one GPU (NVIDIA/nccl ``src/graph/xml.cc``, ``ncclTopoGetXmlFromGpu``: none
# below sm 60, 4 below sm 70, 6 below sm 80, 12 below sm 90, 18 from sm 90 on): a GPU whose ``<nvlink>`` counts
# add up to more is no machine NCCL has described.
MAX_GPU_NVLINKS = 18


def max_nvlinks(sm: int) -> int:
    """How many NVLinks NCCL looks for on a GPU of compute capability ``sm`` (``src/graph/xml.cc``)."""
    return 0 if sm < 60 else 4 if sm < 70 else 6 if sm < 80 else 12 if sm < 90 else MAX_GPU_NVLINKS
_KNOWN = {"system", "cpu", "pci", "gpu", "nvlink", "nic", "net"}
_INT = re.compile(r"-?(0x[0-9a-f]+|\d+)$", re.IGNORECASE)


def nvlink_gbs(sm: int) -> float:
    """NCCL's per-NVLink GB/s for a compute capability (``ncclTopoNVLinkBw`` in ``src/graph/topo.h``)."""
    return (NVLINK_GBS[100] if sm >= 100 else NVLINK_GBS[90] if sm >= 90 else NVLINK_GBS[86] if sm == 86
            else NVLINK_GBS[80] if sm >= 80 else NVLINK_GBS[70] if sm >= 70 else NVLINK_GBS[60] if sm >= 60
            else NVLINK_GBS[80])


def _gbs(value) -> Fraction:
    """A GB/s figure as the exact decimal it is written as (a product of Fractions stays exact)."""
    return value if isinstance(value, Fraction) else Fraction(repr(float(value)))


@dataclass
class _Gpu:
    dev: int
    sm: int
    busid: str
    pci_gbs: float
    chain: tuple            # ids of the CPU and PCIe switch elements above it, outermost first
    nvlinks: list = field(default_factory=list)      # (tclass, target busid, count)


@dataclass
class _Net:
    name: str
    gbs: float
    pci_gbs: float | None
    chain: tuple


@dataclass
class _Box:
    """One file read: its GPUs, NICs, PCIe switches and CPUs (elements by ``id()``), and what it read past."""

    source: str
    gpus: list = field(default_factory=list)
    nets: list = field(default_factory=list)
    cpus: dict = field(default_factory=dict)        # id -> (label, inter-CPU GB/s)
    bridges: dict = field(default_factory=dict)     # id -> (busid, GB/s to its parent, parent id)
    skipped: Counter = field(default_factory=Counter)


def _attr_int(element, key: str, where: str, required: bool = True, default: int | None = None) -> int | None:
    text = element.get(key)
    if text is None:
        if required:
            raise TopologyError(f"{where} has no '{key}'")
        return default
    text = text.strip()
    if not _INT.match(text) or len(text) > 20:
        raise TopologyError(f"{where}: {key}={text[:20]!r} is not an integer")
    return int(text, 16 if text.lower().lstrip("-").startswith("0x") else 10)


def _pci_gbs(pci, where: str) -> float:
    """A ``<pci>`` element's link in GB/s as NCCL reads it: width x per-lane rate (100 Mb/s) / 80."""
    width = _attr_int(pci, "link_width", where, required=False, default=0)
    if not 0 <= width <= 64:
        raise TopologyError(f"{where}: link_width={width} is not a PCIe width (0 to 64)")
    speed = PCI_GEN.get((pci.get("link_speed") or "").strip(), 60)
    return (width or 16) * speed / 80.0


def _cpu_gbs(cpu) -> tuple[str, float]:
    arch, vendor = (cpu.get("arch") or "").lower(), (cpu.get("vendor") or "").lower()
    if arch.startswith("ppc") or "power" in arch:
        return "POWER", INTER_CPU_GBS["power"]
    if arch.startswith(("arm", "aarch")):
        return "ARM", INTER_CPU_GBS["arm"]
    if "amd" in vendor:
        return "AMD", INTER_CPU_GBS["amd"]
    return "Intel" if "intel" in vendor else (vendor or "x86"), INTER_CPU_GBS["intel"]


def _parse(text: str, source: str):
    import xml.etree.ElementTree as ET

    from defusedxml import DefusedXmlException
    from defusedxml.ElementTree import fromstring

    try:
        root = fromstring(text, forbid_dtd=True)
    except DefusedXmlException:
        raise TopologyError(f"{source}: an XML file with a DOCTYPE or entity declarations is not accepted") from None
    except ET.ParseError as exc:
        raise TopologyError(f"{source}: not valid XML ({exc})") from None
    if root.tag != "system":
        raise TopologyError(f"{source}: the root element is <{str(root.tag)[:30]}>, not <system>: not an NCCL "
                            "topology file (NCCL_TOPO_DUMP_FILE)")
    count = sum(1 for _ in root.iter())
    if count > MAX_ELEMENTS:
        raise TopologyError(f"{source}: {count} elements, above the limit of {MAX_ELEMENTS}")
    return root


def _read_box(text: str, source: str) -> _Box:
    """The GPUs, NICs and PCI tree of one NCCL topology file (module docstring); TopologyError naming the element."""
    root = _parse(text, source)
    box = _Box(source)
    seen_bus: set[str] = set()

    def walk(element, chain: tuple, pci=None):
        tag = element.tag if isinstance(element.tag, str) else "?"
        if tag not in _KNOWN:
            box.skipped[tag] += 1
            return
        if tag == "cpu":
            box.cpus[id(element)] = _cpu_gbs(element)
            chain = chain + (id(element),)
        elif tag == "pci":
            busid = (element.get("busid") or "").strip().lower()
            if not busid:
                raise TopologyError(f"{source}: a <pci> element has no 'busid'")
            where = f"{source}: <pci busid={busid[:20]!r}>"
            if busid in seen_bus:      # NCCL would make two nodes of one id (topo.cc ncclTopoAddPci), we one of two
                raise TopologyError(f"{where} is repeated: a bus id names one PCI device (a PCI tree holds each "
                                    "once; a repeated one is a cycle or two devices at one address)")
            seen_bus.add(busid)
            gbs = _pci_gbs(element, where)
            if any(child.tag == "pci" for child in element):   # a PCIe switch: a node on the PCIe paths
                box.bridges[id(element)] = (busid, gbs, chain[-1] if chain else None)
                chain = chain + (id(element),)
            pci = (busid, gbs)
        elif tag == "gpu":
            if pci is None:
                raise TopologyError(f"{source}: a <gpu> outside any <pci> element (no bus id)")
            where = f"{source}: <gpu> at {pci[0][:20]}"
            dev = _attr_int(element, "dev", where)
            sm = _attr_int(element, "sm", where)
            if not 0 <= dev < 4096 or not 10 <= sm < 1000:
                raise TopologyError(f"{where}: dev={dev}, sm={sm} out of range (dev 0 to 4095, sm 10 to 999)")
            gpu = _Gpu(dev, sm, pci[0], pci[1], chain)
            for link in element:
                ltag = link.tag if isinstance(link.tag, str) else "?"
                if ltag != "nvlink":
                    box.skipped[f"gpu/{ltag}"] += 1
                    continue
                lwhere = f"{source}: <nvlink> of GPU {dev}"
                count = _attr_int(link, "count", lwhere)
                if not 1 <= count <= MAX_NVLINK_COUNT:
                    raise TopologyError(f"{lwhere}: count={count} (1 to {MAX_NVLINK_COUNT})")
                tclass = (link.get("tclass") or "").strip().lower()
                if not tclass:
                    raise TopologyError(f"{lwhere} has no 'tclass'")
                target = (link.get("target") or "").strip().lower()
                if tclass.startswith("0x03") and target == pci[0]:
                    raise TopologyError(f"{lwhere} targets {target[:20]}, the GPU itself: an NVLink joins two "
                                        "devices (NCCL would build a self-loop)")
                gpu.nvlinks.append((tclass, target, count))
            total = sum(c for _, _, c in gpu.nvlinks)
            if total > max_nvlinks(sm):
                raise TopologyError(f"{source}: <gpu> GPU {dev} has {total} NVLinks in its <nvlink> counts, above the "
                                    f"{max_nvlinks(sm)} NCCL probes on an sm {sm} GPU (src/graph/xml.cc; 18 from "
                                    "sm 90 on)")
            box.gpus.append(gpu)
            return
        elif tag == "net":
            where = f"{source}: <net name={(element.get('name') or '')[:20]!r}>"
            mbps = _attr_int(element, "speed", where, required=False, default=0)
            if mbps > 10 ** 8:
                raise TopologyError(f"{where}: speed={mbps} Mb/s is above 100 Pb/s")
            name = (element.get("name") or f"net{len(box.nets)}").strip()[:40]
            box.nets.append(_Net(name, (mbps if mbps > 0 else 10000) / 8000.0, pci[1] if pci else None, chain))
            return
        elif tag == "nvlink":
            raise TopologyError(f"{source}: an <nvlink> outside any <gpu>")
        for child in element:
            walk(child, chain, pci)

    walk(root, ())
    if not box.gpus:
        raise TopologyError(f"{source}: no <gpu> element: no GPU to build a fabric of")
    devs = Counter(g.dev for g in box.gpus)
    twice = [d for d, c in devs.items() if c > 1]
    if twice:
        raise TopologyError(f"{source}: GPU dev {twice[0]} appears {devs[twice[0]]} times")
    return box


class _Builder:
    def __init__(self):
        self.names, self.kinds, self.links, self.index = [], [], [], {}

    def node(self, name: str, kind: str) -> int:
        if name not in self.index:
            self.index[name] = len(self.names)
            self.names.append(name)
            self.kinds.append(kind)
        return self.index[name]

    def cable(self, a: int, b: int, gbs: float, both: bool = True) -> None:
        self.links.append(Link(a, b, _gbs(gbs)))
        if both:
            self.links.append(Link(b, a, _gbs(gbs)))


def _add_box(net: _Builder, box: _Box, prefix: str, prices: dict, assumed: list, notes: list, boxes: int) -> dict:
    """Add one box's GPUs and their NVLink (and, where needed, PCIe and CPU) links; returns each GPU's node by the
    ``id`` of its ``_Gpu`` for the NIC pass."""
    ordered = sorted(box.gpus, key=lambda g: g.dev)
    gpu_node = {i: net.node(f"{prefix}GPU{g.dev}", COMPUTE) for i, g in enumerate(ordered)}
    by_bus = {g.busid: i for i, g in enumerate(ordered)}
    sms = sorted({g.sm for g in ordered})
    per_link = {sm: _gbs(prices["nvlink"] if prices.get("nvlink") else nvlink_gbs(sm)) for sm in sms}
    switch_ports, direct, cpu_links, no_nvlink = {}, Counter(), {}, []
    for i, g in enumerate(ordered):
        if not g.nvlinks:
            no_nvlink.append(i)
        for tclass, target, count in g.nvlinks:
            if tclass == NVSWITCH_CLASS:
                switch_ports[i] = switch_ports.get(i, 0) + count
            elif tclass.startswith("0x03"):
                if target not in by_bus:
                    raise TopologyError(f"{box.source}: <nvlink> of GPU {g.dev} targets {target[:20] or '(none)'}, "
                                        "not a GPU of the file")
                direct[(i, by_bus[target])] += count
            elif tclass == CPU_CLASS:
                cpu_links[i] = cpu_links.get(i, 0) + count
            else:
                notes.append(f"{box.source}: an <nvlink> of GPU {g.dev} to class {tclass[:12]} was read past")
    if switch_ports:
        nvs = net.node(f"{prefix}nvswitch", SWITCH)
        for i, count in switch_ports.items():
            net.cable(gpu_node[i], nvs, count * per_link[ordered[i].sm])
        widths = sorted(set(switch_ports.values()))
        if not prefix or prefix == "b0.":
            assumed.append(f"NVSwitch: the {len(switch_ports)} GPUs' switch NVLinks ({'/'.join(map(str, widths))} "
                           f"per GPU) end at one crossbar node per box, as NCCL folds every NVSwitch of a system "
                           "into one NVS node")
    for (i, j), count in direct.items():
        net.cable(gpu_node[i], gpu_node[j], count * per_link[ordered[i].sm], both=False)
    if not prefix or prefix == "b0.":
        assumed.append("NVLink: " + ", ".join(f"sm {sm}: {float(per_link[sm]):g} GB/s per link" for sm in sms)
                       + (" (set by the caller)" if prices.get("nvlink") else
                          " (NCCL's ncclTopoNVLinkBw, src/graph/topo.h)"))
    if no_nvlink or cpu_links:
        cpu_node = {}
        for cid, (label, gbs) in box.cpus.items():
            cpu_node[cid] = net.node(f"{prefix}cpu{len(cpu_node)}", SWITCH)
        bridge_node = {bid: net.node(f"{prefix}pci{busid}", SWITCH) for bid, (busid, _, _) in box.bridges.items()}
        if no_nvlink:
            for bid, (busid, gbs, parent) in box.bridges.items():
                up = bridge_node.get(parent, cpu_node.get(parent))
                if up is not None:
                    net.cable(bridge_node[bid], up, gbs)
            for i, g in enumerate(ordered):
                up = bridge_node.get(g.chain[-1], cpu_node.get(g.chain[-1])) if g.chain else None
                if up is None:
                    raise TopologyError(f"{box.source}: GPU {g.dev} has no NVLink and sits under no <cpu>: no path "
                                        "joins it to the others")
                net.cable(gpu_node[i], up, g.pci_gbs)
            cpus = list(box.cpus)
            for a in range(len(cpus)):
                for b in range(a + 1, len(cpus)):
                    gbs = float(prices["inter_cpu"]) if prices.get("inter_cpu") else box.cpus[cpus[a]][1]
                    net.cable(cpu_node[cpus[a]], cpu_node[cpus[b]], gbs)
            if not prefix or prefix == "b0.":
                assumed.append(f"PCIe/CPU paths: GPU {', '.join(str(ordered[i].dev) for i in no_nvlink[:8])} "
                               "ha" + ("s" if len(no_nvlink) == 1 else "ve") + " no NVLink, so every GPU, PCIe switch "
                               "and CPU is a node, each PCIe link at width x rate / 80 GB/s and CPUs joined at "
                               + ", ".join(sorted({f'{v[0]} {v[1]:g} GB/s' for v in box.cpus.values()}))
                               + " (NCCL's kvDictPciGen and ncclTopoGetInterCpuBw)")
        for i, count in cpu_links.items():
            g = ordered[i]
            cpu = next((c for c in g.chain if c in cpu_node), None)
            if cpu is not None:
                net.cable(gpu_node[i], cpu_node[cpu], count * per_link[g.sm])
    if box.skipped:
        notes.append(f"{box.source}: read past " + ", ".join(f"<{t}> x{c}" for t, c in sorted(box.skipped.items())))
    if boxes == 1 and box.nets:
        notes.append(f"{box.source}: {len(box.nets)} NIC(s) read past: one file is one box (give one file per box "
                     "for a multi-box fabric)")
    return {id(g): gpu_node[i] for i, g in enumerate(ordered)}


def _add_nics(net: _Builder, box: _Box, prefix: str, gpu_nodes: dict, network: int) -> None:
    if not box.nets:
        raise TopologyError(f"{box.source}: no <net> element: boxes are joined through their NICs")
    net_nodes = []
    for k, n in enumerate(box.nets):
        node = net.node(f"{prefix}{n.name}" if f"{prefix}{n.name}" not in net.index else f"{prefix}net{k}", SWITCH)
        net.cable(node, network, n.gbs)
        net_nodes.append(node)
    for g in box.gpus:
        def shared(n: _Net) -> int:
            depth = 0
            for a, b in zip(g.chain, n.chain):
                if a != b:
                    break
                depth += 1
            return depth

        best = max(shared(n) for n in box.nets)
        for n, node in zip(box.nets, net_nodes):
            if shared(n) == best:
                gbs = min(x for x in (g.pci_gbs, n.pci_gbs, n.gbs) if x is not None)
                net.cable(gpu_nodes[id(g)], node, gbs)


def from_nccl_topologies(files: list[tuple[str, str]], prices: dict | None = None,
                         max_nodes: int | None = None) -> Imported:
    """The fabric of one or several NCCL topology files, ``[(source name, text), ...]``, one per box (module
    docstring); TopologyError, one line naming the file and the element, for anything it cannot read."""
    price = {**PRICES, **(prices or {})}
    for key in ("nvlink", "inter_cpu"):
        v = price.get(key)
        if v is not None and not (isinstance(v, (int, float)) and not isinstance(v, bool) and 0 < v < 1e7):
            raise TopologyError(f"the {key} price must be a number of GB/s above 0 and below 1e7, got {v!r}"[:120])
    if not files:
        raise TopologyError("no NCCL topology file given")
    if len(files) > MAX_BOXES:
        raise TopologyError(f"{len(files)} files: at most {MAX_BOXES} boxes")
    boxes = [_read_box(text, source) for source, text in files]
    nodes = sum(len(b.gpus) + 1 + len(b.nets) + len(b.cpus) + len(b.bridges) for b in boxes) + 1
    check_counts(nodes, 0, files[0][0] if len(files) == 1 else f"{len(files)} files", max_nodes)
    net, assumed, notes = _Builder(), [], []
    multi = len(boxes) > 1
    gpu_nodes = [_add_box(net, b, f"b{i}." if multi else "", price, assumed, notes, len(boxes))
                 for i, b in enumerate(boxes)]
    if multi:
        network = net.node("network", SWITCH)
        for i, b in enumerate(boxes):
            _add_nics(net, b, f"b{i}.", gpu_nodes[i], network)
        speeds = sorted({f"{n.gbs:g}" for b in boxes for n in b.nets})
        assumed.append(f"{len(boxes)} boxes joined by one network switch; NICs at {'/'.join(speeds)} GB/s (speed in "
                       "Mb/s / 8000, NCCL's ncclTopoAddNet); each GPU to its nearest NICs in the PCI tree at the "
                       "narrowest of its PCIe link, the NIC's and the NIC's speed")
    gpus = sum(len(b.gpus) for b in boxes)
    name = files[0][0].rsplit("/", 1)[-1] if not multi else f"{len(boxes)} boxes"
    topo = Topology(tuple(net.names), tuple(net.kinds), tuple(net.links), name=f"{name}: {gpus} GPUs (NCCL topology)",
                    expr=",".join(source for source, _ in files))
    from .properties import is_strongly_connected

    if not is_strongly_connected(topo):
        raise TopologyError(f"{name}: the GPUs are not all joined (some have no NVLink or PCIe path to the others)")
    return Imported(topo, assumed, notes)


def from_nccl_topology(text: str, source: str = "NCCL topology", prices: dict | None = None,
                       max_nodes: int | None = None) -> Imported:
    """The fabric of one box's NCCL topology file (``from_nccl_topologies`` with one file)."""
    return from_nccl_topologies([(source, text)], prices, max_nodes)
