"""Reading uploads in the app: the one path every page's file uploader goes through (a size cap before decoding,
UTF-8, one-line errors). At most the cap + 1 bytes are read from the upload, whatever size it reports."""
from __future__ import annotations

import hashlib

from topologies import TopologyError
from topologies.files import MAX_FILE_BYTES, from_graphml, from_json
from topologies.imported import Imported
from topologies.imports import IMPORT_SUFFIXES, import_texts
from topologies.model import Topology


class UploadError(ValueError):
    """An upload the page cannot read: too large or not UTF-8; the message names it in one line."""


def read_upload_text(upload, max_chars: int, what: str) -> str:
    """The text of a Streamlit ``UploadedFile`` of at most ``max_chars`` characters (``what`` names it in the
    message). Bytes beyond 4 per character are refused before decoding; the character count itself is the
    reader's own check (``read_demand_matrix``, ``read_measurements``)."""
    data = read_at_most(upload, 4 * max_chars)
    if len(data) > 4 * max_chars:
        raise UploadError(f"{what} is larger than {max_chars:,} characters")
    try:
        return data.decode("utf-8")
    except UnicodeDecodeError:
        raise UploadError(f"{upload.name} is not UTF-8 text") from None


def read_at_most(upload, limit: int) -> bytes:
    """The first ``limit`` + 1 bytes of an upload at most (so ``len(...) > limit`` tells an upload above the
    cap): read from its start as from a file where it can be read so, else its ``getvalue()``; its position is
    put back at the start."""
    read, seek = getattr(upload, "read", None), getattr(upload, "seek", None)
    if read is None or seek is None:
        return upload.getvalue()[:limit + 1]
    seek(0)
    try:
        return read(limit + 1)
    finally:
        seek(0)


def read_topology(upload, max_nodes: int | None = None) -> tuple[Topology, str]:
    """(topology, SHA-256 hex digest of the bytes) of a Streamlit ``UploadedFile``, or of a list of them (several
    NCCL topology files, one per box): ``read_machine`` without what an import assumed."""
    topo, digest, _ = read_machine(upload, max_nodes)
    return topo, digest


def read_machine(uploads, max_nodes: int | None = None) -> tuple[Topology, str, Imported | None]:
    """(topology, SHA-256 hex digest of the bytes, what an import assumed or None) of one ``UploadedFile`` or a
    list of them: each refused above ``MAX_FILE_BYTES`` (at most that + 1 bytes are read), UTF-8 text; GraphML
    and JSON by their extension, a machine's own description (``.xml`` NCCL topology, one per box; ``.txt``
    nvidia-smi topo -m or rocm-smi --showtopo) through ``topologies.imports``; refused above ``max_nodes`` nodes
    (default: ``STUDIO_MAX_NODES``, the CLI's limit) as soon as they are counted. A TopologyError names the file
    in one line."""
    if max_nodes is None:
        from topologies.expression import DEFAULT_MAX_NODES as max_nodes
    uploads = list(uploads) if isinstance(uploads, (list, tuple)) else [uploads]
    if not uploads:
        raise TopologyError("no file uploaded")
    texts, digest = [], hashlib.sha256()
    for upload in uploads:
        data = read_at_most(upload, MAX_FILE_BYTES)
        if len(data) > MAX_FILE_BYTES:
            raise TopologyError(f"{upload.name} is larger than {MAX_FILE_BYTES // (1024 * 1024)} MiB")
        try:
            texts.append((upload.name, data.decode("utf-8")))
        except UnicodeDecodeError:
            raise TopologyError(f"{upload.name} is not UTF-8 text") from None
        digest.update(hashlib.sha256(data).digest() if len(uploads) > 1 else data)
    name = uploads[0].name
    try:
        if name.lower().endswith(IMPORT_SUFFIXES) or len(uploads) > 1:
            imported = import_texts(texts, max_nodes=max_nodes)
            return imported.topology, digest.hexdigest(), imported
        reader = from_graphml if name.lower().endswith(".graphml") else from_json
        return reader(texts[0][1], source=name, max_nodes=max_nodes), digest.hexdigest(), None
    except TopologyError as exc:
        message = str(exc).splitlines()[0] if str(exc) else type(exc).__name__
        raise TopologyError(message if any(u.name in message for u in uploads) else f"{name}: {message}") from None
