"""Reading and checking NCCL graph files (``NCCL_GRAPH_FILE``) against NCCL's reader and a design: the reader and
checker half of ``solvers.export.nccl_graph`` (whose docstring states the format and cites NCCL's sources).

``host_of(topo, box)`` is the host a graph file describes: the GPUs of one box of the design in device order
(dev 0, 1, ... = the box's compute nodes in rank order) and, on a fabric of several boxes, its NICs (net dev k =
the k-th compute node of the box with a link at the fabric's slowest bandwidth leaving the box, the NIC nodes of
``solvers.baselines.boxes``).

``check_graph(text, topo, box=0)`` reads a file the way NCCL does and returns a ``GraphCheck``: the problems
(each one line naming the graph, channel and GPU), the notes (what NCCL reads but its own dump never writes), and
what it read. The rules, each from NCCL's source (github.com/NVIDIA/nccl, src/graph; RCCL's reader is the same):

* the text: NCCL's hand-written reader (xml.cc ``xmlGetNode``/``xmlGetToken``/``xmlGetValue``) takes only
  ``<name attr="value" ...>`` tags, one space between attributes, blanks (space, newline, carriage return, no
  tab) between tags, comments; no XML declaration (``<?xml ...?>`` fails with "expected >"), no text, values
  of at most 255 characters read literally (no entities), at most 16 attributes (xml.h ``MAX_ATTR_COUNT``);
  then, for its structure, the file is parsed with defusedxml, DTDs forbidden, and capped at ``MAX_BYTES``;
* ``<graphs version="1">`` (xml.cc ``ncclTopoXmlGraphLoadGraphs``: any other version is an error);
* each ``<graph>`` has ``id crossnic pattern nchannels speedintra speedinter typeintra typeinter samechannels``
  (search.cc ``ncclTopoGetGraphFromXmlSub`` reads them with ``xmlGetAttrStr``, which fails on a missing one;
  ``latencyinter`` is optional). Integers are read with ``strtol(s, NULL, 0)`` (xml.h ``xmlGetAttrInt``), so
  "010" is octal 8: a leading zero is an error here. Ids: 0 ring, 1 tree, 2 collnet chain, 3 nvls, 4 collnet
  direct (init.cc ``ncclInitTransportsRank``); NCCL loads every ``<graph>`` whose id matches into the same
  graph, so an id given twice is an error. Patterns (graph.h ``NCCL_TOPO_PATTERN_*``): 1 balanced tree,
  2 split tree, 3 tree, 4 ring, 5 nvls, 6 collnet direct; graph 0 must be a ring (4), graph 1 a tree (1-3).
  ``typeintra``/``typeinter`` are looked up by prefix in ``kvDictLinkType`` (search.cc: LOC NVL NVB PIX PXB P2C
  PXN PHB SYS; RCCL's has no P2C); any other name (NET, XGMI, C2C) silently reads as LOC;
* ``nchannels`` equals the number of ``<channel>`` elements (NCCL uses the attribute: fewer channels leave
  channels of zeros, more are dropped) and is at most 32 (init.cc: the ring graph's ``maxChannels`` is
  ``MAXCHANNELS/2``; the tree's channels are then duplicated, connect.cc ``ncclTopoPreset``);
* each ``dev`` is read with ``strtol(s, NULL, 16)`` (search.cc ``ncclTopoGetChannelFromXml``): hex, as the dump
  writes it with ``%#lx`` (xml.h ``xmlSetAttrLong``: "0", "0x1", "0xa"). A dev written in decimal of 10 or more
  is an error naming both readings (dev="10" is GPU 16 to NCCL); one that strtol stops short on is an error;
  a GPU dev not on the host is an error (NCCL: "XML Import Channel : dev %ld not found");
* ring and tree channels list every GPU of the host once (``ncclTopoGetChannelFromXml`` copies them into
  ``intra[ngpus * c + g]`` without a count check: a missing GPU leaves a stale slot, an extra one spills into
  the next channel); on a host of a multi-box fabric a channel starts and ends with ``<net dev>`` (the NIC the
  channel enters by, used by its first GPU, and the NIC it leaves by: search.cc ``ncclTopoGetNetDev``), on a
  single box it has none (``ncclTopoGetXmlFromChannel`` writes nets only when ``system->inter``);
* a tree graph has as many channels as the ring graph (init.cc: ``comm->nChannels`` is the smaller);
* on the design: consecutive GPUs of a ring (last to first too on a single box) are joined by a link (single
  box) or a route over the box's fast links (``solvers.baselines.boxes.fast``); on a single box no link
  carries two rings in the same direction (parallel links one ring each); consecutive GPUs of a tree chain are
  joined both ways (connect.cc: ``tree.up`` is the GPU before, ``tree.down[0]`` the one after).
"""
from __future__ import annotations

import re
import xml.etree.ElementTree as ET
from collections import defaultdict
from dataclasses import dataclass, field
from fractions import Fraction

from defusedxml import DefusedXmlException
from defusedxml.ElementTree import fromstring as _defused_fromstring

from topologies.model import Topology

from ..baselines.boxes import boxes, fast, nic_nodes
from ..baselines.fabric import Fabric
from ..core.errors import NotApplicable
from .c_numbers import strtol_scan

MAX_BYTES = 4 * 1024 * 1024       # NCCL's own reader stops at NCCL_GRAPH_XML_MAX_NODES = 65536 nodes (topo.h)
MAX_NODES = 65536
MAX_HOST_GPUS = 16                # the largest host this writer makes a file for (MI250: 16 GCDs)
MAX_CHANNELS = 32                 # init.cc: ringGraph->maxChannels = MAXCHANNELS / 2 (device.h: MAXCHANNELS 64)
MAX_STR_LEN = 255                 # xml.h
MAX_ATTR_COUNT = 16               # xml.h
GRAPH_VERSION = 1                 # xml.h NCCL_GRAPH_XML_VERSION
GRAPH_IDS = {0: "ring", 1: "tree", 2: "collnet chain", 3: "nvls", 4: "collnet direct"}
PATTERNS = {1: "balanced tree", 2: "split tree", 3: "tree", 4: "ring", 5: "nvls", 6: "collnet direct"}
RING, TREE_PATTERNS = 4, (1, 2, 3)
PATH_TYPES = ("LOC", "NVL", "NVB", "PIX", "PXB", "P2C", "PXN", "PHB", "SYS")    # search.cc kvDictLinkType
REQUIRED = ("id", "crossnic", "pattern", "nchannels", "speedintra", "speedinter", "typeintra", "typeinter",
            "samechannels")


def hex_dev(value: int) -> str:
    """A dev as NCCL's dump writes it: C's ``%#lx`` ("0" for zero, "0x" and lower-case hex otherwise)."""
    return "0" if value == 0 else f"0x{value:x}"


# ------------------------------------------------------------------------------------------------- the host
@dataclass(frozen=True)
class Host:
    """The host a graph file describes: ``gpus[dev]`` the design's node of GPU dev, ``nics[k]`` the GPU whose
    NIC is net dev k (empty on a single box), ``hosts`` how many boxes the design has, ``index`` which one."""

    topo: Topology
    gpus: tuple[int, ...]
    nics: tuple[int, ...]
    hosts: int
    index: int
    fabric: Fabric | None = None
    slow: Fraction | None = None
    box_list: tuple[tuple[int, ...], ...] = ()

    @property
    def multi(self) -> bool:
        return self.hosts > 1

    def name(self, dev: int) -> str:
        return f"GPU {hex_dev(dev)} ({self.topo.names[self.gpus[dev]]})"


def host_of(topo: Topology, box: int = 0) -> Host:
    """Box ``box`` of the design as one NCCL host; NotApplicable with a one-line reason where a graph file does
    not describe it (fewer than two GPUs, one switched box, a host of more than ``MAX_HOST_GPUS`` GPUs)."""
    comp = topo.compute_nodes
    if len(comp) < 2:
        raise NotApplicable("an NCCL graph file needs a host of at least two GPUs")
    if not topo.switch_nodes:
        if len(comp) > MAX_HOST_GPUS:
            raise NotApplicable(f"a switch-free design is one NCCL host, and {len(comp)} GPUs are more than the "
                                f"{MAX_HOST_GPUS} of any box this writer knows (a graph file describes one host)")
        if box != 0:
            raise NotApplicable(f"a switch-free design is one host: box {box} does not exist")
        return Host(topo, tuple(comp), (), 1, 0)
    fabric = Fabric(topo)
    box_list, slow = boxes(fabric)
    if len(box_list) == 1:
        raise NotApplicable("one box joined through switches: every ring order is alike through the switch and "
                            "NCCL's own search picks its channels; the graph file is for switch-free boxes and "
                            "fabrics of several boxes")
    if not 0 <= box < len(box_list):
        raise NotApplicable(f"the design has {len(box_list)} boxes: box {box} does not exist")
    members = box_list[box]
    if len(members) > MAX_HOST_GPUS:
        raise NotApplicable(f"a box of {len(members)} GPUs is more than the {MAX_HOST_GPUS} of any host this "
                            "writer knows")
    nics = nic_nodes(fabric, members, slow)
    if not nics:
        raise NotApplicable(f"the box of {topo.names[members[0]]} has no NIC (no link at the fabric's slowest "
                            f"bandwidth, {float(slow):g} GB/s, leaves it)")
    return Host(topo, tuple(members), tuple(nics), len(box_list), box, fabric, slow,
                tuple(tuple(b) for b in box_list))


# ------------------------------------------------------------------------------------------- C number reads
def c_strtol(text: str, base: int) -> tuple[int, int]:
    """C's ``strtol(text, &end, base)`` for base 0 or 16 (``c_numbers.strtol_scan``): (value, characters read);
    (0, 0) when no digits."""
    value, end, _ = strtol_scan(text, base)
    return value, end


def c_strtof(text: str) -> float | None:
    """The float C's strtof reads from all of ``text``, or None when it would stop early or read nothing."""
    if not re.fullmatch(r"\s*[+-]?(\d+\.?\d*|\.\d+)([eE][+-]?\d+)?", text):
        return None
    return float(text)


# ------------------------------------------------------------------------------------------------ the reader
_BLANK = re.compile(r"[ \n\r]*")
_COMMENT = re.compile(r"<!--.*?-->", re.S)
_TAG = re.compile(r"<(/?)([A-Za-z_][A-Za-z0-9_]*)((?: [A-Za-z_][A-Za-z0-9_]*=(?:\"[^\"]*\"|'[^']*'))*)(/?)>")
_ATTR = re.compile(r" ([A-Za-z_][A-Za-z0-9_]*)=(?:\"([^\"]*)\"|'([^']*)')")


def _nccl_syntax(text: str) -> str | None:
    """The first place NCCL's hand-written reader (xml.cc ``xmlGetNode``) would stop, or misread, in one line."""
    pos, n = 0, len(text)
    while True:
        pos = _BLANK.match(text, pos).end()
        if pos >= n:
            return None
        line = text.count("\n", 0, pos) + 1
        comment = _COMMENT.match(text, pos)
        if comment:
            pos = comment.end()
            continue
        tag = _TAG.match(text, pos)
        if not tag:
            got = text[pos:pos + 20].split("\n")[0]
            why = ("an XML declaration, which NCCL's reader fails on (expected >)" if got.startswith("<?") else
                   "a tab, which NCCL's reader does not skip" if got.startswith("\t") else
                   "not a tag NCCL's reader takes (<name attr=\"value\" ...>, one space between attributes)")
            return f"line {line}: {got!r} is {why}"
        attrs = _ATTR.findall(tag.group(3))
        for key, v1, v2 in attrs:
            value = v1 or v2
            if len(value) >= MAX_STR_LEN or len(key) >= MAX_STR_LEN:
                return f"line {line}: the value of {key} is longer than NCCL's {MAX_STR_LEN - 1} characters"
            if "&" in value or "<" in value:
                return (f"line {line}: {key}=\"{value}\" holds '&' or '<': NCCL reads values literally, XML "
                        "readers decode them")
        pos = tag.end()


@dataclass
class Channel:
    """One ``<channel>`` as read: its GPU devs and net devs in order, and where the nets stood."""

    gpus: list[int] = field(default_factory=list)
    nets: list[int] = field(default_factory=list)
    net_at: list[int] = field(default_factory=list)      # positions of the net elements among all children


@dataclass
class Graph:
    """One ``<graph>`` as NCCL reads it."""

    id: int
    pattern: int
    nchannels: int
    crossnic: int
    speedintra: float
    speedinter: float
    typeintra: str
    typeinter: str
    channels: list[Channel]


@dataclass
class GraphCheck:
    """``check_graph``'s answer: ``problems`` (empty when the file is sound), ``notes``, the graphs read, and on
    a single box whether the rings are link-disjoint (on several boxes: whether any link carries two)."""

    problems: list[str]
    notes: list[str]
    graphs: list[Graph]
    host: Host | None
    link_disjoint: bool | None = None
    most_on_a_link: int = 0

    @property
    def ok(self) -> bool:
        return not self.problems

    @property
    def first(self) -> str:
        return self.problems[0] if self.problems else ""

    def graph(self, gid: int) -> Graph | None:
        return next((g for g in self.graphs if g.id == gid), None)


def _int_attr(el: ET.Element, key: str, where: str, problems: list[str]) -> int | None:
    text = el.get(key)
    if text is None:
        problems.append(f"{where}: attribute {key} is missing (NCCL: \"Attribute {key} of node {el.tag} not found\")")
        return None
    value, used = c_strtol(text, 0)
    if used != len(text) or not text:
        problems.append(f"{where}: {key}=\"{text}\" is not an integer; NCCL's strtol reads {value}")
        return None
    if len(text) > 1 and text[0] == "0" and text[1] in "0123456789":
        problems.append(f"{where}: {key}=\"{text}\" starts with 0, so NCCL reads it as octal ({value}), not "
                        f"{int(text, 10) if text.isdigit() else text}")
        return None
    return value


def _dev(text: str | None, where: str, problems: list[str], notes: list[str]) -> int | None:
    """A dev read as NCCL reads it (strtol base 16), with the problems of the module docstring."""
    if text is None:
        problems.append(f"{where}: no dev attribute (NCCL: \"Attribute dev of node ... not found\")")
        return None
    value, used = c_strtol(text, 16)
    if not text or used != len(text):
        problems.append(f"{where}: dev=\"{text}\" is not a hex number; NCCL's strtol(..., 16) reads {value}")
        return None
    if value < 0:
        problems.append(f"{where}: dev=\"{text}\" is negative")
        return None
    body = text.lstrip("+")
    if not body.lower().startswith("0x") and len(body) > 1 and body.isdigit():
        meant = int(body, 10)
        problems.append(f"{where}: dev=\"{text}\" looks decimal, but NCCL reads devs as hex: {text} is "
                        f"{hex_dev(value)} = {value} to NCCL, not {meant} (write dev=\"{hex_dev(meant)}\" for "
                        f"{meant})")
        return None
    if text != hex_dev(value):
        notes.append(f"{where}: dev=\"{text}\" reads as {value}; NCCL writes it \"{hex_dev(value)}\"")
    return value


def read_graphs(text: str) -> tuple[list[Graph], list[str], list[str]]:
    """The graphs of a graph file as NCCL reads them, with the problems and notes of reading (no design)."""
    problems: list[str] = []
    notes: list[str] = []
    if len(text.encode("utf-8")) > MAX_BYTES:
        return [], [f"the file is larger than {MAX_BYTES // 2 ** 20} MiB"], notes
    stop = _nccl_syntax(text)
    if stop:
        return [], [stop], notes
    try:
        root = _defused_fromstring(text, forbid_dtd=True)
    except DefusedXmlException as exc:
        return [], [f"DOCTYPE and ENTITY declarations are not allowed ({type(exc).__name__})"], notes
    except ET.ParseError as exc:
        return [], [f"not well-formed XML: {exc}"], notes
    if sum(1 for _ in root.iter()) > MAX_NODES:
        return [], [f"more than NCCL's {MAX_NODES} XML nodes"], notes
    if root.tag != "graphs":
        return [], [f"the root element is <{root.tag}>; NCCL loads graphs only from <graphs>"], notes
    version = _int_attr(root, "version", "<graphs>", problems)
    if version is not None and version != GRAPH_VERSION:
        problems.append(f"<graphs version=\"{root.get('version')}\">: NCCL needs version {GRAPH_VERSION} "
                        "(\"XML Graph has wrong version\")")
    graphs: list[Graph] = []
    seen: dict[int, int] = {}
    for gi, el in enumerate(root):
        if el.tag != "graph":
            notes.append(f"<{el.tag}> under <graphs> is ignored by NCCL")
            continue
        where = f"graph {gi + 1}"
        missing = [k for k in REQUIRED if el.get(k) is None]
        if missing:
            problems.append(f"{where}: attribute {missing[0]} is missing (NCCL: \"Attribute {missing[0]} of node "
                            "graph not found\")")
            continue
        ints = {k: _int_attr(el, k, where, problems) for k in ("id", "pattern", "nchannels", "crossnic",
                                                              "samechannels")}
        if any(v is None for v in ints.values()):
            continue
        gid = ints["id"]
        where = f"graph {gid} ({GRAPH_IDS.get(gid, 'unknown id')})"
        if gid in seen:
            problems.append(f"{where}: id {gid} appears twice; NCCL loads both into the same graph, the second "
                            "over the first")
        seen[gid] = gi
        if gid not in GRAPH_IDS:
            known = ", ".join(f"{k} {v}" for k, v in GRAPH_IDS.items())
            problems.append(f"{where}: NCCL searches graphs 0-4 only ({known}); id {gid} is never loaded")
        if ints["pattern"] not in PATTERNS:
            problems.append(f"{where}: pattern {ints['pattern']} is none of NCCL's "
                            f"({', '.join(f'{k} {v}' for k, v in PATTERNS.items())})")
        elif gid == 0 and ints["pattern"] != RING:
            problems.append(f"{where}: pattern {ints['pattern']} ({PATTERNS[ints['pattern']]}); the ring graph's "
                            f"pattern is {RING}")
        elif gid == 1 and ints["pattern"] not in TREE_PATTERNS:
            problems.append(f"{where}: pattern {ints['pattern']} ({PATTERNS[ints['pattern']]}); the tree graph's "
                            "pattern is 1, 2 or 3")
        if ints["crossnic"] not in (0, 1, 2):
            problems.append(f"{where}: crossnic {ints['crossnic']} is none of 0, 1, 2")
        elif ints["crossnic"] == 1:
            notes.append(f"{where}: crossnic=\"1\": NCCL skips this graph when NCCL_CROSS_NIC=0")
        speeds = {}
        for key in ("speedintra", "speedinter"):
            speeds[key] = c_strtof(el.get(key))
            if speeds[key] is None:
                problems.append(f"{where}: {key}=\"{el.get(key)}\" is not a number strtof reads whole")
            elif not speeds[key] > 0 and gid in (0, 1):
                problems.append(f"{where}: {key}=\"{el.get(key)}\": NCCL's tuning would price the graph at 0 GB/s")
        latency = el.get("latencyinter")
        if latency is not None and c_strtof(latency) is None:
            problems.append(f"{where}: latencyinter=\"{latency}\" is not a number strtof reads whole")
        for key in ("typeintra", "typeinter"):
            name = el.get(key)
            if name not in PATH_TYPES:
                problems.append(f"{where}: {key}=\"{name}\" is not one of NCCL's graph path types "
                                f"({' '.join(PATH_TYPES)}; search.cc kvDictLinkType), so NCCL reads it as LOC")
            elif name == "P2C":
                notes.append(f"{where}: {key}=\"P2C\" is not in RCCL's list; RCCL reads it as LOC")
        channels = []
        for ci, ch in enumerate(el):
            if ch.tag != "channel":
                notes.append(f"{where}: <{ch.tag}> is ignored by NCCL")
                continue
            chan = Channel()
            for pos, sub in enumerate(ch):
                cw = f"{where} channel {len(channels)}"
                if sub.tag not in ("gpu", "net"):
                    notes.append(f"{cw}: <{sub.tag}> is ignored by NCCL")
                    continue
                if sub.tag == "gpu" and sub.get("rank") is not None:
                    notes.append(f"{cw}: a gpu with rank=\"{sub.get('rank')}\": NVIDIA's NCCL takes that rank and "
                                 "ignores dev (a rank is one job's), RCCL reads dev")
                dev = _dev(sub.get("dev"), f"{cw}, {sub.tag} {pos + 1}", problems, notes)
                if dev is None:
                    continue
                if sub.tag == "gpu":
                    chan.gpus.append(dev)
                else:
                    chan.nets.append(dev)
                    chan.net_at.append(pos)
            channels.append(chan)
        if ints["nchannels"] != len(channels):
            problems.append(f"{where}: nchannels=\"{ints['nchannels']}\" but {len(channels)} <channel> elements; "
                            "NCCL runs nchannels channels, reading missing ones as zeros")
        if len(channels) > MAX_CHANNELS and gid in (0, 1):
            problems.append(f"{where}: {len(channels)} channels, more than NCCL's {MAX_CHANNELS} "
                            "(MAXCHANNELS/2, init.cc)")
        graphs.append(Graph(gid, ints["pattern"], ints["nchannels"], ints["crossnic"], speeds["speedintra"] or 0.0,
                            speeds["speedinter"] or 0.0, el.get("typeintra"), el.get("typeinter"), channels))
    if not graphs and not problems:
        problems.append("no <graph> in the file: NCCL would search its own graphs")
    return graphs, problems, notes


# ------------------------------------------------------------------------------------------------ the check
def _links(topo: Topology) -> dict[tuple[int, int], int]:
    """How many direct links join each ordered pair of distinct nodes."""
    count: dict[tuple[int, int], int] = defaultdict(int)
    for link in topo.links:
        if link.src != link.dst:
            count[(link.src, link.dst)] += 1
    return count


def _shape(graph: Graph, host: Host, problems: list[str]) -> None:
    """Every channel of a ring or tree graph a permutation of the host's GPUs, nets where the host needs them."""
    n = len(host.gpus)
    where = f"graph {graph.id} ({GRAPH_IDS[graph.id]})"
    for c, chan in enumerate(graph.channels):
        cw = f"{where} channel {c}"
        first_at: dict[int, int] = {}
        for pos, dev in enumerate(chan.gpus):
            if not 0 <= dev < n:
                problems.append(f"{cw}: GPU {hex_dev(dev)} ({dev}) is not on this host of {n} GPUs "
                                f"(0..{hex_dev(n - 1)}); NCCL: \"XML Import Channel : dev {dev} not found\"")
            elif dev in first_at:
                problems.append(f"{cw}: {host.name(dev)} appears twice (positions {first_at[dev]} and {pos}); a "
                                f"channel lists each of the host's {n} GPUs once")
            else:
                first_at[dev] = pos
        for dev in range(n):
            if dev not in first_at:
                problems.append(f"{cw}: {host.name(dev)} is missing; a channel lists each of the host's {n} GPUs "
                                "once")
                break
        nets_ok = chan.net_at == ([0, len(chan.gpus) + 1] if host.multi else [])
        if not nets_ok:
            if host.multi:
                problems.append(f"{cw}: a host of a multi-box fabric enters and leaves a channel by its NICs: "
                                "one <net dev> first and one last")
            else:
                problems.append(f"{cw}: a <net dev> on a single box, which has no NIC in this design")
        for dev in chan.nets:
            if dev >= len(host.nics):
                problems.append(f"{cw}: net {hex_dev(dev)} ({dev}) is not on this host of {len(host.nics)} NICs")


def _hops(graph: Graph, host: Host, problems: list[str], check: GraphCheck) -> None:
    """The design's links under each channel (module docstring)."""
    topo, gpus = host.topo, host.gpus
    where = f"graph {graph.id} ({GRAPH_IDS[graph.id]})"
    ring = graph.id == 0
    count = _links(topo) if not host.multi else {}
    used: dict[tuple[int, int], list[int]] = defaultdict(list)
    link_use: dict[int, Fraction] = defaultdict(Fraction)
    for c, chan in enumerate(graph.channels):
        order = chan.gpus
        if len(order) < 2 or any(not 0 <= d < len(gpus) for d in order):
            continue
        pairs = list(zip(order, order[1:]))
        if ring and not host.multi:
            pairs.append((order[-1], order[0]))
        for a, b in pairs:
            u, v = gpus[a], gpus[b]
            ways = [(a, b, u, v)] if ring else [(a, b, u, v), (b, a, v, u)]
            for x, y, p, q in ways:
                if host.multi:
                    if not fast(host.fabric, p, q, host.slow):
                        problems.append(f"{where} channel {c}: {host.name(x)} -> {host.name(y)} has no route over "
                                        "the box's fast links")
                        return
                    if ring:
                        for hop in host.fabric.route(p, q):
                            for li in hop:
                                link_use[li] += Fraction(1, len(hop))
                elif count.get((p, q), 0) == 0:
                    why = " (a tree chain runs both ways)" if not ring else ""
                    problems.append(f"{where} channel {c}: {host.name(x)} -> {host.name(y)} has no link in the "
                                    f"design{why}")
                    return
                elif ring:
                    used[(p, q)].append(c)
    if not ring:
        return
    if host.multi:
        most = max(link_use.values(), default=Fraction(0))
        check.most_on_a_link = int(-(-most // 1))
        check.link_disjoint = most <= 1
        return
    check.link_disjoint = True
    for (p, q), chans in used.items():
        if len(chans) > count[(p, q)]:
            check.link_disjoint = False
            a, b = gpus.index(p), gpus.index(q)
            links = f"{count[(p, q)]} link{'s' if count[(p, q)] != 1 else ''}"
            problems.append(f"{where}: channels {', '.join(map(str, chans))} all use the link {host.name(a)} -> "
                            f"{host.name(b)} (the design has {links} that way); the rings must be link-disjoint")
    check.most_on_a_link = max((len(c) for c in used.values()), default=0)


def check_graph(text: str, topo: Topology, box: int = 0) -> GraphCheck:
    """Read ``text`` as NCCL reads a graph file and check it against host ``box`` of ``topo`` (module
    docstring); the answer lists every problem found, each one line."""
    graphs, problems, notes = read_graphs(text)
    try:
        host = host_of(topo, box)
    except NotApplicable as exc:
        return GraphCheck(problems + [f"the design has no NCCL host to check against: {exc}"], notes, graphs, None)
    check = GraphCheck(problems, notes, graphs, host)
    for graph in graphs:
        if graph.id not in (0, 1):
            if graph.id in GRAPH_IDS:
                notes.append(f"graph {graph.id} ({GRAPH_IDS[graph.id]}) is read but not checked against the "
                             "design (this checker knows rings and trees)")
            continue
        before = len(problems)
        _shape(graph, host, problems)
        if len(problems) == before:
            _hops(graph, host, problems, check)
    ring, tree = check.graph(0), check.graph(1)
    if ring is not None and tree is not None and len(tree.channels) != len(ring.channels):
        problems.append(f"graph 1 (tree) has {len(tree.channels)} channels and graph 0 (ring) "
                        f"{len(ring.channels)}: NCCL runs the smaller number of both")
    return check
