"""Reading uploads in the app: the one path every page's file uploader goes through (a size cap before decoding,
UTF-8, one-line errors). At most the cap + 1 bytes are read from the upload, whatever size it reports."""
from __future__ import annotations

import hashlib

from topologies import TopologyError
from topologies.files import MAX_FILE_BYTES, from_graphml, from_json
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
    """(topology, SHA-256 hex digest of the bytes) of a Streamlit ``UploadedFile``: refused above
    ``MAX_FILE_BYTES`` (at most that + 1 bytes are read), UTF-8 text, GraphML by its extension and JSON
    otherwise, refused above ``max_nodes`` nodes (default: ``STUDIO_MAX_NODES``, the CLI's limit) as soon as they
    are counted. A TopologyError names the file in one line."""
    if max_nodes is None:
        from topologies.expression import DEFAULT_MAX_NODES as max_nodes
    data = read_at_most(upload, MAX_FILE_BYTES)
    if len(data) > MAX_FILE_BYTES:
        raise TopologyError(f"{upload.name} is larger than {MAX_FILE_BYTES // (1024 * 1024)} MiB")
    try:
        text = data.decode("utf-8")
    except UnicodeDecodeError:
        raise TopologyError(f"{upload.name} is not UTF-8 text") from None
    reader = from_graphml if upload.name.lower().endswith(".graphml") else from_json
    try:
        topo = reader(text, source=upload.name, max_nodes=max_nodes)
    except TopologyError as exc:
        message = str(exc).splitlines()[0] if str(exc) else type(exc).__name__
        raise TopologyError(message if upload.name in message else f"{upload.name}: {message}") from None
    return topo, hashlib.sha256(data).hexdigest()
