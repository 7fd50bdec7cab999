"""The session's current design (issue 59): the one design every page opens with and names its downloads after.

A design is named by a key: an expression (``biring(8)``, ``dgx_a100(boxes=2)``), or, for a machine imported on
Compose (an NCCL topology file, an nvidia-smi or rocm-smi table, a JSON or GraphML topology, one file or several),
``import:`` and the SHA-256 digest of the upload's bytes. An import is held in this process for every session
(``hold_import``, content-addressed, so the same bytes are one entry) and, so that a shared link still names it in
another session or after a restart, kept as a JSON record in the results cache (``solvers.results_cache``, HMAC
tagged) when the cache is on. A link carries a small design inline (``?expr=<expression>``) and an import by its key
(``?expr=import:<digest>``); a receiver that holds neither gets one line saying to upload the file.
"""
from __future__ import annotations

from collections import OrderedDict

import streamlit as st

from topologies import TopologyError
from topologies.expression import DEFAULT_MAX_NODES, parse_topology
from topologies.files import from_dict, to_dict
from topologies.model import Topology

DEFAULT_EXPR = "biring(8)"           # Compose's and Schedule's design before the user names one
IMPORT_PREFIX = "import:"           # a design key naming an imported topology by its upload's content digest
RECORD_PREFIX = "design-import-"     # the results cache's record of an import, by its digest
MAX_HELD_IMPORTS = 32
_HELD: "OrderedDict[str, tuple[Topology, str]]" = OrderedDict()     # key -> (topology, name), every session's


def is_import(key: str) -> bool:
    return key.startswith(IMPORT_PREFIX)


def _digest(key: str) -> str | None:
    digest = key[len(IMPORT_PREFIX):]
    return digest if len(digest) == 64 and all(c in "0123456789abcdef" for c in digest) else None


def _store():
    from solvers.results_cache import ResultsCache

    try:
        return ResultsCache.default()
    except (OSError, ValueError):
        return None


def hold_import(key: str, topo: Topology, name: str, *, record: bool = True) -> None:
    """Keep an imported topology and its name under its key, the ``MAX_HELD_IMPORTS`` most recent in this process;
    the first time, also as a record in the results cache (best effort: a cache that is off, not this user's
    alone, full, or a topology over the record limit only means a link to it works in this process alone);
    ``record`` False where it was just read from there."""
    new = key not in _HELD
    _HELD[key] = (topo, name)
    _HELD.move_to_end(key)
    while len(_HELD) > MAX_HELD_IMPORTS:
        _HELD.popitem(last=False)
    digest = _digest(key)
    if new and record and digest is not None:
        store = _store()
        if store is not None:
            from solvers.results_cache import UnsafeCache

            try:
                store.put_record(RECORD_PREFIX + digest, {"name": name, "topology": to_dict(topo)})
            except (UnsafeCache, OSError, TypeError, ValueError):
                pass


def _from_cache(key: str) -> tuple[Topology, str] | None:
    digest = _digest(key)
    store = _store() if digest is not None else None
    if store is None:
        return None
    from solvers.results_cache import UnsafeCache

    try:
        record = store.get_record(RECORD_PREFIX + digest)
    except (UnsafeCache, OSError):
        return None
    if not record or not isinstance(record.get("name"), str):
        return None
    try:
        topo = from_dict(record.get("topology"), source="the results cache", max_nodes=DEFAULT_MAX_NODES)
    except (TopologyError, TypeError, ValueError, KeyError, AttributeError):     # a record not shaped as ours
        return None
    return topo, record["name"][:200]


def held_import(key: str) -> tuple[Topology, str]:
    """(topology, name) of an import key: this session's import, one held in this process, or the results cache's
    record of it; TopologyError (one line) when none holds it."""
    held = st.session_state.get("design_import") or {}
    cached = False
    if held.get("key") == key:
        found = (held["topology"], held["name"])
    else:
        found = _HELD.get(key)
        if found is None:
            found = _from_cache(key)
            cached = found is not None
    if found is None:
        shown = key[len(IMPORT_PREFIX):][:12] or "?"
        raise TopologyError(f"the imported design {IMPORT_PREFIX}{shown}… is not held here (a link from another "
                            "studio, or one restarted without its results cache): upload the file on Compose")
    hold_import(key, *found, record=not cached)        # a record just read is not written back
    return found


def load_design(key: str, max_nodes: int | None = None) -> Topology:
    """The topology a design key names: an expression or file path (``topologies.load``), or an import."""
    if is_import(key):
        topo = held_import(key)[0]
        if max_nodes is not None and topo.num_nodes > max_nodes:
            raise TopologyError(f"{design_name(key)} has {topo.num_nodes} nodes, above the limit of {max_nodes}")
        return topo
    return load_expression(key, max_nodes)


PATH_HINTS = ("/", "\\", "~")
FILE_SUFFIXES = (".json", ".graphml", ".xml", ".txt")


def load_expression(text: str, max_nodes: int | None = None) -> Topology:
    """A design typed on a page or carried by a link: an expression, never a path. ``topologies.load`` also takes a
    file, a folder or a glob, which the CLI's user owns; on a shared studio a link or a text box that reached
    it could load or probe the server's own files. Files come in through the pages' uploads."""
    try:
        return parse_topology(text, max_nodes=max_nodes)
    except TopologyError:
        if any(h in text for h in PATH_HINTS) or text.strip().lower().endswith(FILE_SUFFIXES):
            raise TopologyError("the pages take expressions, not the server's files: upload a file on Compose "
                                "(the CLI reads paths)") from None
        raise


def line_key(line: str) -> str:
    """The design key of a line typed on a page that takes several designs (Compare, Training, Failures): the
    current import's name names the import (those pages open with it), anything else is an expression."""
    held = st.session_state.get("design_import")
    if held and line == held.get("name") and current_design()[0] == held.get("key"):
        return held["key"]
    return line


def load_line(line: str, max_nodes: int | None = None) -> Topology:
    """``load_design`` of ``line_key(line)``."""
    return load_design(line_key(line), max_nodes)


def design_name(key: str) -> str:
    """What pages and downloads call a design: the expression, or the import's file name."""
    if is_import(key):
        try:
            return held_import(key)[1]
        except TopologyError:
            return key[:len(IMPORT_PREFIX) + 12] + "…"
    return key


def adopt_import(key: str) -> None:
    """Make the import ``key`` (held somewhere: ``held_import``) the session's current design, as Compose does
    after an upload; TopologyError when nothing holds it."""
    topo, name = held_import(key)
    held = st.session_state.get("design_import") or {}
    st.session_state["design_import"] = {"key": key, "name": name, "topology": topo,
                                         "imported": held.get("imported") if held.get("key") == key else None,
                                         "over": st.session_state.get("design_expr")}


def current_design() -> tuple[str, str]:
    """(key, name) of the session's current design: the topology imported on Compose while it is the latest design
    chosen (``design_import``, kept until an expression, a catalogue base, a built design or another page's choice
    replaces it), else the last expression that loaded (``design_expr``) or the default."""
    held = st.session_state.get("design_import")
    if held and held.get("over") == st.session_state.get("design_expr"):
        return held["key"], held["name"]
    expr = st.session_state.get("design_expr") or DEFAULT_EXPR
    return expr, expr


def current_or(default: str) -> str:
    """The current design as a page's design line (its expression, or the import's name: ``line_key`` reads it
    back) where the session has chosen one (typed, picked, built or imported) other than Compose's default,
    else ``default``."""
    key, name = current_design()
    return default if key == DEFAULT_EXPR else name


def safe_stem(text: str, limit: int = 80) -> str:
    """A download's file name stem made from ``text`` (a design expression, an upload's name): its ASCII letters
    and digits, every other character ``_`` (no path separator, dot, quote, control or non-ASCII character ever
    reaches a file name), ``limit`` characters at most, "download" when nothing is left."""
    stem = "".join(c if c.isascii() and c.isalnum() else "_" for c in text)[:limit]
    return stem if stem.strip("_") else "download"


def design_stem(name: str) -> str:
    """A download's file name stem for a design: its expression's (``biring_8_``), or an imported file's name
    without its suffix (``nccl_topo_dgx_a100_``: the same separator before what follows)."""
    if name.lower().endswith((".xml", ".txt", ".json", ".graphml")) or " and " in name:
        first = name.split(" and ")[0]
        return safe_stem(first.rsplit(".", 1)[0], 49) + "_"
    return safe_stem(name, 50)
