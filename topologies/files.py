"""Reading and writing topologies: the project's JSON interchange format (below) and GraphML.

JSON::

    {"name": "optional display name",
     "nodes": [{"id": "g0", "kind": "compute"}, {"id": "sw", "kind": "switch"}],
     "links": [{"src": "g0", "dst": "sw", "bandwidth": 25.0, "alpha": 0.0}]}

Links are directed; ``bandwidth`` defaults to 1.0 and ``alpha`` to 0.0; two entries with the same src and dst
are two parallel links. ``kind`` defaults to ``compute``. Every problem is reported as a one-line
TopologyError that names it.

GraphML: a directed (multi)graph whose nodes may carry a ``kind`` attribute and whose edges may carry
``bandwidth`` and ``alpha``.
"""
from __future__ import annotations

import json
import os
from pathlib import Path

from .model import COMPUTE, Link, Topology, TopologyError, as_fraction

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


def from_dict(data, *, source: str = "") -> Topology:
    """Build a topology from the parsed JSON format, naming the first problem found."""
    if not isinstance(data, dict):
        raise TopologyError("a topology file must hold a JSON object with 'nodes' and 'links'")
    nodes, links = data.get("nodes"), data.get("links", [])
    if not isinstance(nodes, list) or not nodes:
        raise TopologyError("'nodes' must be a non-empty list")
    if not isinstance(links, list):
        raise TopologyError("'links' must be a list")
    names, kinds, index = [], [], {}
    for i, node in enumerate(nodes):
        if isinstance(node, (str, int)) and not isinstance(node, bool):
            node = {"id": node}
        if not isinstance(node, dict) or "id" not in node:
            raise TopologyError(f"node {i} needs an 'id'")
        nid = node["id"]
        if not isinstance(nid, (str, int)) or isinstance(nid, bool):
            raise TopologyError(f"node {i} has an id that is not a string: {nid!r}")
        nid = str(nid)
        if nid in index:
            raise TopologyError(f"duplicate node id {nid!r}")
        index[nid] = len(names)
        names.append(nid)
        kinds.append(node.get("kind", COMPUTE))
    out = []
    for i, link in enumerate(links):
        if not isinstance(link, dict) or "src" not in link or "dst" not in link:
            raise TopologyError(f"link {i} needs 'src' and 'dst'")
        ends = []
        for end in ("src", "dst"):
            nid = str(link[end])
            if nid not in index:
                raise TopologyError(f"link {i} names unknown node {nid!r} as its {end}")
            ends.append(index[nid])
        bw = as_fraction(link.get("bandwidth", 1), f"link {i} bandwidth")
        alpha = as_fraction(link.get("alpha", 0), f"link {i} alpha")
        out.append(Link(ends[0], ends[1], bw, alpha))
    name = data.get("name") or (Path(source).stem if source else "")
    return Topology(tuple(names), tuple(kinds), tuple(out), name=str(name), expr=source or str(data.get("expr", "")))


def from_json(text: str, *, source: str = "") -> Topology:
    if len(text) > MAX_FILE_BYTES:
        raise TopologyError(f"topology file larger than {MAX_FILE_BYTES // (1024 * 1024)} MiB")
    try:
        data = json.loads(text)
    except json.JSONDecodeError as exc:
        raise TopologyError(f"not valid JSON: {exc.msg} at line {exc.lineno} column {exc.colno}") from None
    except (ValueError, RecursionError) as exc:       # a number of thousands of digits, nesting thousands deep
        raise TopologyError(f"not valid JSON: {str(exc).splitlines()[0][:100] or type(exc).__name__}") from None
    return from_dict(data, source=source)


def to_graphml(topo: Topology) -> str:
    import networkx as nx

    g = nx.MultiDiGraph()
    g.graph["name"] = topo.name
    for nm, kind in zip(topo.names, topo.kinds):
        g.add_node(nm, kind=kind)
    for l in topo.links:
        g.add_edge(topo.names[l.src], topo.names[l.dst], bandwidth=float(l.bandwidth), alpha=float(l.alpha))
    return "\n".join(nx.generate_graphml(g))


def from_graphml(text: str, *, source: str = "") -> Topology:
    import io
    import xml.etree.ElementTree as ET

    import networkx as nx

    if len(text) > MAX_FILE_BYTES:
        raise TopologyError(f"topology file larger than {MAX_FILE_BYTES // (1024 * 1024)} MiB")
    from defusedxml import DefusedXmlException
    from defusedxml.ElementTree import fromstring

    try:        # read through defusedxml first: no DOCTYPE, so no entity expansion (billion laughs) and no XXE
        fromstring(text, forbid_dtd=True)
    except DefusedXmlException:
        raise TopologyError("GraphML with a DOCTYPE or entity declarations is not accepted") from None
    except ET.ParseError as exc:
        raise TopologyError(f"not valid GraphML: {exc}") from None
    try:
        g = nx.read_graphml(io.BytesIO(text.encode("utf-8")), force_multigraph=True)
    except (ET.ParseError, nx.NetworkXError, ValueError, KeyError) as exc:
        raise TopologyError(f"not valid GraphML: {str(exc).splitlines()[0] if str(exc) else type(exc).__name__}") \
            from None
    if not g.is_directed():
        g = g.to_directed()
    data = {
        "name": g.graph.get("name", ""),
        "nodes": [{"id": str(n), "kind": attrs.get("kind", COMPUTE)} for n, attrs in g.nodes(data=True)],
        "links": [{"src": str(s), "dst": str(d), "bandwidth": a.get("bandwidth", 1.0), "alpha": a.get("alpha", 0.0)}
                  for s, d, a in g.edges(data=True)],
    }
    return from_dict(data, source=source)


def read_topology(path: str | os.PathLike) -> Topology:
    """Read a ``.json`` or ``.graphml`` topology file."""
    p = Path(path)
    if p.suffix.lower() not in TOPOLOGY_SUFFIXES:
        raise TopologyError(f"{p.name}: a topology file must end in .json or .graphml")
    try:
        size = p.stat().st_size
    except OSError as exc:
        raise TopologyError(f"cannot read {p}: {exc.strerror}") from None
    if size > MAX_FILE_BYTES:
        raise TopologyError(f"{p.name} is {size} bytes, above the limit of {MAX_FILE_BYTES} bytes")
    try:
        text = p.read_text(encoding="utf-8")
    except (OSError, UnicodeDecodeError) as exc:
        raise TopologyError(f"cannot read {p}: {exc}") from None
    reader = from_json if p.suffix.lower() == ".json" else from_graphml
    return reader(text, source=str(path))


def write_topology(topo: Topology, path: str | os.PathLike) -> None:
    p = Path(path)
    if p.suffix.lower() == ".graphml":
        p.write_text(to_graphml(topo), encoding="utf-8")
    elif p.suffix.lower() == ".json":
        p.write_text(to_json(topo), encoding="utf-8")
    else:
        raise TopologyError(f"{p.name}: write .json or .graphml")


def load(spec: str, max_nodes: int | None = None) -> Topology:
    """A topology from an expression or from the path of a topology file (the CLI's EXPR-or-file argument)."""
    from .expression import parse_topology

    s = spec.strip()
    if s.lower().endswith(TOPOLOGY_SUFFIXES) and "(" not in s:
        topo = read_topology(s)
        limit = max_nodes
        if limit is None:
            from .expression import DEFAULT_MAX_NODES as limit
        if topo.num_nodes > limit:
            raise TopologyError(f"{s} has {topo.num_nodes} nodes, above the limit of {limit}")
        return topo
    return parse_topology(s, max_nodes=max_nodes)
