"""One door for the machine descriptions the studio imports (issue 41, item 1), by file name and content:

* ``.xml``: NCCL's topology file (``NCCL_TOPO_DUMP_FILE``; ``nccl_topo``); several files, one per box, make a
  multi-box fabric (on the command line: the paths joined by commas, ``node0.xml,node1.xml``);
* ``.txt``: ``rocm-smi --showtopo`` output when it holds the "Link Type between two GPUs" table (``rocm_smi``),
  else an ``nvidia-smi topo -m`` table (``smi``).

``topologies.load`` and ``read_topology``, the Compose and Clusters uploads and every CLI command come through
here; ``topo FILE --json`` adds what the import assumed and read past (``Imported``).
"""
from __future__ import annotations

import os
from pathlib import Path

from .imported import Imported
from .model import TopologyError

__all__ = ["IMPORT_SUFFIXES", "import_texts", "is_import", "read_import"]

IMPORT_SUFFIXES = (".xml", ".txt")
MAX_IMPORT_BYTES = 20 * 1024 * 1024


def is_import(spec: str) -> bool:
    """Whether ``spec`` names machine-description files: a path ending in ``.xml`` or ``.txt``, or ``.xml`` paths
    joined by commas (an expression has parentheses and is never one)."""
    s = spec.strip()
    if "(" in s:
        return False
    if s.lower().endswith(IMPORT_SUFFIXES):
        return True
    parts = [p.strip() for p in s.split(",")]
    return len(parts) > 1 and all(p.lower().endswith(".xml") for p in parts)


def import_texts(files: list[tuple[str, str]], max_nodes: int | None = None) -> Imported:
    """The topology of ``[(file name, text), ...]``: NCCL XML files (one per box), or one ``.txt`` table of
    ``nvidia-smi topo -m`` or ``rocm-smi --showtopo``. TopologyError, one line naming the file, otherwise."""
    from .files import check_counts

    if not files:
        raise TopologyError("no file given")
    names = [name for name, _ in files]
    if all(n.lower().endswith(".xml") for n in names):
        from .nccl_topo import from_nccl_topologies

        return from_nccl_topologies(files, max_nodes=max_nodes)
    if len(files) > 1:
        raise TopologyError(f"{', '.join(names[:3])}: several files make several boxes only as NCCL topology XML; "
                            "give one nvidia-smi or rocm-smi table at a time")
    name, text = files[0]
    if not name.lower().endswith(".txt"):
        raise TopologyError(f"{name}: a machine description ends in .xml (NCCL topology) or .txt (nvidia-smi topo -m, "
                            "rocm-smi --showtopo)")
    if "Link Type between two GPUs" in text or "ROCm System Management" in text:
        from .rocm_smi import from_rocm_smi as reader
    else:
        from .smi import from_nvidia_smi as reader
    imported = reader(text, name=Path(name).name)
    check_counts(imported.topology.n, len(imported.topology.links), name, max_nodes)
    topo = imported.topology.with_identity(expr=name)
    return Imported(topo, list(imported.assumed), list(getattr(imported, "notes", [])))


def read_import(spec: str | os.PathLike, max_nodes: int | None = None) -> Imported:
    """``import_texts`` of the files ``spec`` names (comma-joined ``.xml`` paths are boxes), each read at most
    ``MAX_IMPORT_BYTES`` (``files.read_bytes``: no FIFO, no unbounded read) and decoded as UTF-8."""
    from .files import read_bytes

    s = str(spec).strip()
    paths = [p.strip() for p in s.split(",")] if "," in s and not Path(s).exists() else [s]
    files = []
    for p in paths:
        data = read_bytes(p, MAX_IMPORT_BYTES)
        try:
            files.append((p, data.decode("utf-8")))
        except UnicodeDecodeError as exc:
            raise TopologyError(f"cannot read {p}: not UTF-8 text (byte {exc.start})") from None
    return import_texts(files, max_nodes=max_nodes)
