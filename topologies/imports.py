"""One door for the machine descriptions the studio imports (issue 41, item 1), by file name and content:

* ``.xml``: NCCL's topology file (``NCCL_TOPO_DUMP_FILE``; ``nccl_topo``); several files, one per box, make a
  multi-box fabric, named in one of three ways (``import_paths``): the paths joined by commas
  (``node0.xml,node1.xml``), a folder (every ``*.xml`` file in it, in name order), or a glob (``boxes/*.xml``,
  expanded here, so no shell or OS limit on one argument's length or file name's length is met by the join);
* ``.txt``: ``rocm-smi --showtopo`` output when it holds the "Link Type between two GPUs" table (``rocm_smi``),
  else an ``nvidia-smi topo -m`` table (``smi``).

``topologies.load`` and ``read_topology``, the Compose and Clusters uploads and every CLI command come through
here; ``topo FILE --json`` adds what the import assumed and read past (``Imported``).
"""
from __future__ import annotations

import glob
import itertools
import os
from pathlib import Path

from .imported import Imported
from .limits import check_counts
from .model import TopologyError

__all__ = ["IMPORT_SUFFIXES", "import_texts", "is_import", "read_import"]

IMPORT_SUFFIXES = (".xml", ".txt")
MAX_IMPORT_BYTES = 20 * 1024 * 1024
MAX_SPEC_CHARS = 4 * 1024 * 1024     # the text naming the files: 256 boxes of the longest paths fit many times over
_GLOB = ("*", "?", "[")


def is_import(spec: str) -> bool:
    """Whether ``spec`` names machine-description files: a path or glob ending in ``.xml`` or ``.txt``, ``.xml``
    paths joined by commas, or a folder (an expression has parentheses and is never one)."""
    s = spec.strip()
    if "(" in s or not s:
        return False
    if s.lower().endswith(IMPORT_SUFFIXES):
        return True
    parts = [p.strip() for p in s.split(",")]
    if len(parts) > 1 and all(p.lower().endswith(".xml") for p in parts):
        return True
    return len(s) <= MAX_SPEC_CHARS and os.path.isdir(s)       # os.path: False, never an error, for any text


def _folder_files(folder: str) -> list[str]:
    """The ``*.xml`` entries of ``folder`` that are not folders, in name order (a FIFO or device among them is
    refused by name when read); TopologyError naming the folder when it holds none or more than
    ``nccl_topo.MAX_BOXES``."""
    from .nccl_topo import MAX_BOXES

    found = []
    try:
        with os.scandir(folder) as entries:
            for entry in entries:
                if entry.name.lower().endswith(".xml") and not entry.is_dir():
                    found.append(os.path.join(folder, entry.name))
                    if len(found) > MAX_BOXES:
                        raise TopologyError(f"{folder}: more than {MAX_BOXES} .xml files: at most {MAX_BOXES} boxes")
    except OSError as exc:
        raise TopologyError(f"cannot read the folder {folder}: {exc.strerror or exc}") from None
    if not found:
        raise TopologyError(f"{folder}: a folder with no .xml file (a folder import reads every NCCL topology file "
                            "in it, one per box)")
    return sorted(found)


def import_paths(spec: str | os.PathLike) -> list[str]:
    """The files a machine-description argument names (module docstring): a file; a folder (its ``*.xml`` files);
    a glob; or any of these joined by commas (a file whose own name holds a comma is taken whole). Only
    ``os.path`` tests touch the text, so a joined argument longer than a path may be is split, never refused as
    "File name too long". TopologyError, one line naming the path, for a folder inside a list, a glob matching
    nothing, or more than ``nccl_topo.MAX_BOXES`` files."""
    from .nccl_topo import MAX_BOXES

    s = str(spec).strip()
    if len(s) > MAX_SPEC_CHARS:
        raise TopologyError(f"the list of files is {len(s)} characters long, above the limit of {MAX_SPEC_CHARS}")
    if os.path.isdir(s):
        return _folder_files(s)
    parts = [s] if os.path.exists(s) or "," not in s else [p.strip() for p in s.split(",") if p.strip()]
    paths: list[str] = []
    for part in parts:
        if not os.path.exists(part) and any(c in part for c in _GLOB):
            matched = sorted(itertools.islice((p for p in glob.iglob(part) if not os.path.isdir(p)), MAX_BOXES + 1))
            if not matched:
                raise TopologyError(f"{part}: no file matches")
            paths.extend(matched)
        elif os.path.isdir(part):
            raise TopologyError(f"{part} is a folder, not a file: name its files, or give the folder alone to read "
                                "every .xml file in it")
        else:
            paths.append(part)
        if len(paths) > MAX_BOXES:
            raise TopologyError(f"{len(paths)}+ files named: at most {MAX_BOXES} boxes")
    if not paths:
        raise TopologyError("no file given")
    return paths


def import_texts(files: list[tuple[str, str]], max_nodes: int | None = None) -> Imported:
    """The topology of ``[(file name, text), ...]``: NCCL XML files (one per box), or one ``.txt`` table of
    ``nvidia-smi topo -m`` or ``rocm-smi --showtopo``. TopologyError, one line naming the file, otherwise."""
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
    """``import_texts`` of the files ``spec`` names (``import_paths``: comma-joined paths, a folder or a glob of
    ``.xml`` files are boxes), each through the one reader of named files (``input_file.read_input_text``: a
    regular file only, at most ``MAX_IMPORT_BYTES``, UTF-8, one line naming the path)."""
    from .input_file import read_input_text

    files = [(p, read_input_text(p, MAX_IMPORT_BYTES, "machine description")) for p in import_paths(spec)]
    return import_texts(files, max_nodes=max_nodes)
