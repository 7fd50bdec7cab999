"""Reading and writing topologies: the project's JSON interchange format (below) and GraphML.

JSON::

    {"name": "optional display name",
     "nodes": [{"id": "g0", "kind": "compute"}, {"id": "sw", "kind": "switch"}],
     "links": [{"src": "g0", "dst": "sw", "bandwidth": 25.0, "alpha": 0.0}]}

Links are directed; ``bandwidth`` defaults to 1.0 and ``alpha`` to 0.0; two entries with the same src and dst
are two parallel links. ``kind`` defaults to ``compute``. Every problem is reported as a one-line
TopologyError that names it.

GraphML: a directed (multi)graph whose nodes may carry a ``kind`` attribute and whose edges may carry
``bandwidth`` and ``alpha`` (a key's ``<default>`` applies to the edges without the value). It is read through
defusedxml with DTDs forbidden, from the text: a file is UTF-8 (its bytes are decoded as UTF-8 before anything
else, and bytes that are not UTF-8 are refused), so an XML declaration naming another encoding is not followed
(a UTF-8 file declaring ISO-8859-1 keeps its node ``gé``, not ``gÃ©``).

Every number of both formats (``bandwidth``, ``alpha``) is read by ``topologies.numbers.read_number``, bounded
before any Fraction is built and held to its physical range; JSON float literals and ``NaN``/``Infinity`` are
kept as their text for it (``numbers.Written``), never made floats. Files are read at most ``MAX_FILE_BYTES`` + 1
bytes whatever their size on disk says (a link to ``/dev/zero`` is refused at the limit), and with a node limit
(``load`` passes its own) the node and link counts are checked as soon as the file is parsed, before anything
is built of them.
"""
from __future__ import annotations

import json
import os
from pathlib import Path

from .model import COMPUTE, Link, Topology, TopologyError
from .limits import check_counts
from .numbers import Written, read_number, shown

MAX_FILE_BYTES = 20 * 1024 * 1024
TOPOLOGY_SUFFIXES = (".json", ".graphml")


def _number(value) -> float | int:
    """A Fraction written as an int when whole, else as the nearest float (JSON has no fractions)."""
    return int(value) if value.denominator == 1 else float(value)


def to_dict(topo: Topology) -> dict:
    """The JSON-ready dict of a topology."""
    return {
        "name": topo.name,
        "expr": topo.expr,
        "nodes": [{"id": nm, "kind": k} for nm, k in zip(topo.names, topo.kinds)],
        "links": [{"src": topo.names[l.src], "dst": topo.names[l.dst],
                   "bandwidth": _number(l.bandwidth), "alpha": _number(l.alpha)} for l in topo.links],
    }


def to_json(topo: Topology) -> str:
    return json.dumps(to_dict(topo), indent=1)


def from_dict(data, *, source: str = "", max_nodes: int | None = None) -> Topology:
    """Build a topology from the parsed JSON format, naming the first problem found. With ``max_nodes``, more
    nodes (or more links than ``limits.max_links_for`` allows with them) are refused before any is read."""
    if not isinstance(data, dict):
        raise TopologyError("a topology file must hold a JSON object with 'nodes' and 'links'")
    nodes, links = data.get("nodes"), data.get("links", [])
    if not isinstance(nodes, list) or not nodes:
        raise TopologyError("'nodes' must be a non-empty list")
    if not isinstance(links, list):
        raise TopologyError("'links' must be a list")
    check_counts(len(nodes), len(links), source, max_nodes)
    names, kinds, index = [], [], {}
    for i, node in enumerate(nodes):
        if isinstance(node, (str, int)) and not isinstance(node, bool):
            node = {"id": node}
        if not isinstance(node, dict) or "id" not in node:
            raise TopologyError(f"node {i} needs an 'id'")
        nid = node["id"]
        if not isinstance(nid, (str, int)) or isinstance(nid, bool):
            raise TopologyError(f"node {i} has an id that is not a string: {shown(nid)}")
        nid = str(nid)
        if nid in index:
            raise TopologyError(f"duplicate node id {shown(nid)}")
        kind = node.get("kind", COMPUTE)
        if not isinstance(kind, str):
            raise TopologyError(f"node {shown(nid)} has a kind that is not a string: {shown(kind)}")
        index[nid] = len(names)
        names.append(nid)
        kinds.append(kind)
    out = []
    for i, link in enumerate(links):
        if not isinstance(link, dict) or "src" not in link or "dst" not in link:
            raise TopologyError(f"link {i} needs 'src' and 'dst'")
        ends = []
        for end in ("src", "dst"):
            nid = link[end]
            if not isinstance(nid, (str, int)) or isinstance(nid, bool):
                raise TopologyError(f"link {i} has a {end} that is not a node id: {shown(nid)}")
            nid = str(nid)
            if nid not in index:
                raise TopologyError(f"link {i} names unknown node {shown(nid)} as its {end}")
            ends.append(index[nid])
        where = f"link {i} ({shown(names[ends[0]], False)} -> {shown(names[ends[1]], False)})"
        bw = read_number(link.get("bandwidth", 1), "bandwidth", where)
        alpha = read_number(link.get("alpha", 0), "alpha", where)
        out.append(Link(ends[0], ends[1], bw, alpha))
    name = _text(data.get("name"), "name") or (Path(source).stem if source else "")
    return Topology(tuple(names), tuple(kinds), tuple(out), name=name,
                    expr=source or _text(data.get("expr"), "expr"))


def _text(value, key: str) -> str:
    """A file's ``name`` or ``expr``: text (a number is taken as written); one line for anything else."""
    if value is None:
        return ""
    if isinstance(value, (str, Written)) or (isinstance(value, int) and not isinstance(value, bool)):
        return str(value)
    raise TopologyError(f"'{key}' must be a string, got {shown(value)}")


def _too_large(what: str, limit: int | None = None) -> TopologyError:
    limit = MAX_FILE_BYTES if limit is None else limit
    return TopologyError(f"{what} is above the limit of {limit} bytes ({limit / 2 ** 20:.3g} MiB)")


def from_json(text: str, *, source: str = "", max_nodes: int | None = None) -> Topology:
    if len(text) > MAX_FILE_BYTES:
        raise _too_large(Path(source).name if source else "the topology file")
    try:        # float literals and NaN/Infinity stay text: topologies.numbers reads them, bounded
        data = json.loads(text, parse_float=Written, parse_constant=Written)
    except json.JSONDecodeError as exc:
        raise TopologyError(f"not valid JSON: {exc.msg} at line {exc.lineno} column {exc.colno}") from None
    except (ValueError, RecursionError) as exc:       # a number of thousands of digits, nesting thousands deep
        raise TopologyError(f"not valid JSON: {str(exc).splitlines()[0][:100] or type(exc).__name__}") from None
    return from_dict(data, source=source, max_nodes=max_nodes)


def to_graphml(topo: Topology) -> str:
    import networkx as nx

    g = nx.MultiDiGraph()
    g.graph["name"] = topo.name
    for nm, kind in zip(topo.names, topo.kinds):
        g.add_node(nm, kind=kind)
    for l in topo.links:
        g.add_edge(topo.names[l.src], topo.names[l.dst], bandwidth=float(l.bandwidth), alpha=float(l.alpha))
    return "\n".join(nx.generate_graphml(g))


def from_graphml(text: str, *, source: str = "", max_nodes: int | None = None) -> Topology:
    """A topology from GraphML text (module docstring): defusedxml first, no DTD; the ``<node>`` and ``<edge>``
    elements counted against ``max_nodes`` before networkx builds a graph of them; every value kept as its text
    for ``read_number``."""
    import xml.etree.ElementTree as ET

    import networkx as nx

    if len(text) > MAX_FILE_BYTES:
        raise _too_large(Path(source).name if source else "the topology file")
    from defusedxml import DefusedXmlException
    from defusedxml.ElementTree import fromstring

    def parse(body: str):
        try:    # read through defusedxml: no DOCTYPE, so no entity expansion (billion laughs) and no XXE
            return fromstring(body, forbid_dtd=True)
        except DefusedXmlException:
            raise TopologyError("GraphML with a DOCTYPE or entity declarations is not accepted") from None
        except ET.ParseError as exc:
            raise TopologyError(f"not valid GraphML: {exc}") from None

    root = parse(text)
    counts = {"node": 0, "edge": 0}
    for element in root.iter():
        tag = element.tag if isinstance(element.tag, str) else ""
        local = tag.rpartition("}")[2]
        if local in counts:
            counts[local] += 1
    check_counts(counts["node"], counts["edge"], source, max_nodes)
    try:
        graphs = _graphml_reader()(root)
        if not graphs and root.tag == "graphml":       # no namespace: read as networkx's parse_graphml does
            graphs = _graphml_reader()(parse(text.replace("<graphml>", f'<graphml xmlns="{_GRAPHML_NS}">', 1)))
        if not graphs:
            raise nx.NetworkXError("file not successfully read as graphml")
    except (nx.NetworkXError, ValueError, KeyError, TypeError, AttributeError) as exc:
        raise TopologyError(f"not valid GraphML: {str(exc).splitlines()[0] if str(exc) else type(exc).__name__}") \
            from None
    g = graphs[0]
    if not g.is_directed():
        g = g.to_directed()
    node_default = g.graph.get("node_default", {})
    edge_default = g.graph.get("edge_default", {})
    data = {
        "name": g.graph.get("name", ""),
        "nodes": [{"id": str(n), "kind": attrs.get("kind", node_default.get("kind", COMPUTE))}
                  for n, attrs in g.nodes(data=True)],
        "links": [{"src": str(s), "dst": str(d), "bandwidth": a.get("bandwidth", edge_default.get("bandwidth", 1)),
                   "alpha": a.get("alpha", edge_default.get("alpha", 0))} for s, d, a in g.edges(data=True)],
    }
    return from_dict(data, source=source, max_nodes=max_nodes)


_GRAPHML_NS = "http://graphml.graphdrawing.org/xmlns"
_READER = []


def _graphml_reader():
    """``read(root)``: the graphs of a parsed GraphML tree, by networkx's reader with every typed value (int,
    long, float, double, string) kept as its text, booleans as networkx reads them: ``read_number`` reads the
    numbers (networkx would make ``1e-400`` a 0.0 and ``1e9999999`` an infinity)."""
    if not _READER:
        from networkx.readwrite.graphml import GraphMLReader

        class TextReader(GraphMLReader):
            def construct_types(self):
                super().construct_types()
                self.python_type = {k: (bool if t is bool else str) for k, t in self.python_type.items()}

        def read(root):
            reader = TextReader(node_type=str, edge_key_type=int, force_multigraph=True)
            reader.xml = root
            keys, defaults = reader.find_graphml_keys(root)
            return [reader.make_graph(g, keys, defaults) for g in root.findall(f"{{{_GRAPHML_NS}}}graph")]

        _READER.append(read)
    return _READER[0]


def read_bytes(path: str | os.PathLike, limit: int, what: str = "topology file") -> bytes:
    """At most ``limit`` bytes of the regular file at ``path``, through the one reader of named files
    (``input_file.read_input``: a FIFO, socket, device or folder refused without waiting, one line naming the
    path; above the limit refused whatever the size on disk says)."""
    from .input_file import read_input

    return read_input(path, limit, what)


def read_topology(path: str | os.PathLike, max_nodes: int | None = None) -> Topology:
    """Read a ``.json`` or ``.graphml`` topology file: at most ``MAX_FILE_BYTES``, UTF-8; with ``max_nodes``,
    refused above that many nodes as soon as they are counted. A machine's own description (``.xml`` NCCL
    topology, ``.txt`` nvidia-smi or rocm-smi table) is imported by ``topologies.imports``."""
    from .imports import IMPORT_SUFFIXES, read_import

    p = Path(path)
    if p.suffix.lower() in IMPORT_SUFFIXES:
        return read_import(p, max_nodes=max_nodes).topology
    if p.suffix.lower() not in TOPOLOGY_SUFFIXES:
        raise TopologyError(f"{p.name}: a topology file must end in .json or .graphml (or .xml for an NCCL "
                            "topology, .txt for nvidia-smi topo -m or rocm-smi --showtopo)")
    data = read_bytes(p, MAX_FILE_BYTES)
    try:
        text = data.decode("utf-8")
    except UnicodeDecodeError as exc:
        raise TopologyError(f"cannot read {p}: not UTF-8 text (byte {exc.start})") from None
    reader = from_json if p.suffix.lower() == ".json" else from_graphml
    return reader(text, source=str(path), max_nodes=max_nodes)


def write_topology(topo: Topology, path: str | os.PathLike) -> None:
    p = Path(path)
    if p.suffix.lower() == ".graphml":
        p.write_text(to_graphml(topo), encoding="utf-8")
    elif p.suffix.lower() == ".json":
        p.write_text(to_json(topo), encoding="utf-8")
    else:
        raise TopologyError(f"{p.name}: write .json or .graphml")


def load(spec: str, max_nodes: int | None = None) -> Topology:
    """A topology from an expression or from the path of a topology file (the CLI's EXPR-or-file argument),
    or of a machine's own description (``topologies.imports``: NCCL XML, comma-joined for several boxes;
    nvidia-smi or rocm-smi tables)."""
    from .expression import parse_topology
    from .imports import is_import, read_import

    s = spec.strip()
    if is_import(s):
        limit = max_nodes
        if limit is None:
            from .expression import DEFAULT_MAX_NODES as limit
        return read_import(s, max_nodes=limit).topology
    if s.lower().endswith(TOPOLOGY_SUFFIXES) and "(" not in s:
        limit = max_nodes
        if limit is None:
            from .expression import DEFAULT_MAX_NODES as limit
        return read_topology(s, max_nodes=limit)
    return parse_topology(s, max_nodes=max_nodes)
