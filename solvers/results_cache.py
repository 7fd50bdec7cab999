"""Finished solves kept on disk and reused by the CLI, the app and sweeps (issue 24, the results cache).

A solve is named by its key: the topology (node names and kinds, every link with its bandwidth and alpha, its
display name and expression), the synthesizer, the collective, the options it ran with, the vector size M where
the synthesizer reads it, and the code version (a digest of every ``.py`` file under ``solvers/`` and
``topologies/``: any change to the code that builds or verifies a schedule starts a fresh cache). Only verified
results are stored (``solvers.synthesize`` raises for any other), so a hit is a schedule the simulator passed.

Storage: one file per key under the cache folder (``TOPOLOGY_STUDIO_CACHE``, default
``~/.cache/topology-studio/results``; the value ``off`` turns the cache off): an HMAC-SHA256 tag over the
pickled Result, then the pickle. The tag's key is a random secret made on first use in the folder (mode 0600), so
a file that this installation did not write (or one that was altered) fails the tag and is deleted unread, never
unpickled. Files are written to a temporary name and renamed. Results whose pickle is over ``MAX_ENTRY_BYTES`` are
not kept, and once the folder holds more than ``MAX_TOTAL_BYTES`` the least recently used files go.
"""
from __future__ import annotations

import hashlib
import hmac
import json
import os
import pickle
import secrets
import tempfile
import time
from dataclasses import dataclass, fields, is_dataclass
from functools import lru_cache
from pathlib import Path
from typing import Any

from topologies.model import Topology

from .core.schedule import COLUMN_FIELDS

ENV = "TOPOLOGY_STUDIO_CACHE"
MAX_ENTRY_BYTES = 256 * 2 ** 20
MAX_TOTAL_BYTES = 2 * 2 ** 30
_TAG = 32
_SUFFIX = ".result"


@lru_cache(maxsize=1)
def code_version() -> str:
    """A digest of the source of ``solvers/`` and ``topologies/`` (paths and contents)."""
    root = Path(__file__).resolve().parents[1]
    h = hashlib.sha256()
    for package in ("solvers", "topologies"):
        for path in sorted((root / package).rglob("*.py")):
            h.update(str(path.relative_to(root)).encode())
            h.update(path.read_bytes())
    return h.hexdigest()[:16]


def topology_digest(topo: Topology) -> str:
    """The topology as the key sees it: names, kinds, links (bandwidth and alpha exact), name and expression."""
    h = hashlib.sha256()
    h.update(json.dumps([topo.name, topo.expr, list(topo.names), list(topo.kinds)]).encode())
    for link in topo.links:
        h.update(f"{link.src} {link.dst} {link.bandwidth} {link.alpha};".encode())
    return h.hexdigest()


def _plain(value: Any) -> Any:
    """Options as JSON-able data, the same for equal options (dataclass fields, tuples as lists)."""
    if is_dataclass(value) and not isinstance(value, type):
        return {f.name: _plain(getattr(value, f.name)) for f in fields(value)}
    if isinstance(value, dict):
        return {str(k): _plain(v) for k, v in sorted(value.items(), key=lambda kv: str(kv[0]))}
    if isinstance(value, (list, tuple)):
        return [_plain(v) for v in value]
    if value is None or isinstance(value, (bool, int, float, str)):
        return value
    return str(value)


def solve_key(topo: Topology, algo: str, collective: str, options: Any, total_bytes: float | None) -> str:
    """The key of one solve (module docstring)."""
    text = json.dumps({"topology": topology_digest(topo), "algo": algo, "collective": collective,
                       "options": _plain(options), "bytes": total_bytes, "code": code_version()}, sort_keys=True)
    return hashlib.sha256(text.encode()).hexdigest()


@dataclass(frozen=True)
class Hit:
    """A result answered from the cache; ``saved_at``: when it was stored (seconds since the epoch)."""

    result: Any
    saved_at: float

    @property
    def age_s(self) -> float:
        return max(0.0, time.time() - self.saved_at)

    def age_text(self) -> str:
        """'12 s', '3 min', '5 h' or '2 days'."""
        age = self.age_s
        for unit, seconds in (("days", 86400), ("h", 3600), ("min", 60)):
            if age >= seconds:
                return f"{age / seconds:.0f} {unit}"
        return f"{age:.0f} s"


class ResultsCache:
    """The cache folder ``root`` (module docstring)."""

    def __init__(self, root: str | os.PathLike):
        self.root = Path(root)
        self._key: bytes | None = None

    @classmethod
    def default(cls) -> "ResultsCache | None":
        """The cache that ``TOPOLOGY_STUDIO_CACHE`` names (None when it says ``off``)."""
        where = os.environ.get(ENV, "").strip()
        if where.lower() == "off":
            return None
        return cls(Path(where) if where else Path.home() / ".cache" / "topology-studio" / "results")

    def _secret(self) -> bytes:
        """The folder's HMAC key, read once per instance (made on first use; read again if the folder was wiped)."""
        if self._key is None or not (self.root / ".secret").exists():
            self._key = self._read_or_make_secret()
        return self._key

    def _read_or_make_secret(self) -> bytes:
        path = self.root / ".secret"
        try:
            return path.read_bytes()
        except FileNotFoundError:
            pass
        self.root.mkdir(parents=True, exist_ok=True)
        secret = secrets.token_bytes(32)
        try:
            fd = os.open(path, os.O_WRONLY | os.O_CREAT | os.O_EXCL, 0o600)
        except FileExistsError:            # another process made it first
            return path.read_bytes()
        with os.fdopen(fd, "wb") as fh:
            fh.write(secret)
        return secret

    def _path(self, key: str) -> Path:
        return self.root / f"{key}{_SUFFIX}"

    def get(self, key: str) -> Hit | None:
        """The stored result for ``key``, or None (missing, or a file that fails its tag: deleted unread)."""
        path = self._path(key)
        try:
            data = path.read_bytes()
            saved_at = path.stat().st_mtime
        except OSError:
            return None
        tag, body = data[:_TAG], data[_TAG:]
        if len(tag) != _TAG or not hmac.compare_digest(tag, hmac.new(self._secret(), body, "sha256").digest()):
            path.unlink(missing_ok=True)
            return None
        try:
            result = pickle.loads(body)
        except Exception:                  # a file of an older layout of the same code cannot happen; be safe
            path.unlink(missing_ok=True)
            return None
        os.utime(path, (time.time(), saved_at))     # the access time orders the trim; mtime stays the age
        return Hit(result, saved_at)

    def put(self, key: str, result: Any) -> bool:
        """Keep ``result`` under ``key``; False when it is too large to keep (known from its schedule's columns
        before pickling, where they alone are over the limit: BFB on 16384 nodes holds 2.7 GB of them)."""
        if _columns_bytes(result) > MAX_ENTRY_BYTES:
            return False
        body = pickle.dumps(result, protocol=pickle.HIGHEST_PROTOCOL)
        if len(body) > MAX_ENTRY_BYTES:
            return False
        tag = hmac.new(self._secret(), body, "sha256").digest()
        fd, tmp = tempfile.mkstemp(dir=self.root, prefix=".writing-")
        try:
            with os.fdopen(fd, "wb") as fh:
                fh.write(tag + body)
            os.replace(tmp, self._path(key))
        except BaseException:
            Path(tmp).unlink(missing_ok=True)
            raise
        self._trim()
        return True

    def entries(self) -> list[Path]:
        return sorted(self.root.glob(f"*{_SUFFIX}")) if self.root.is_dir() else []

    def size_bytes(self) -> int:
        return sum(p.stat().st_size for p in self.entries())

    def _trim(self) -> None:
        stats = []
        for p in self.entries():
            try:
                st = p.stat()
            except OSError:                # deleted by another process meanwhile
                continue
            stats.append((max(st.st_atime, st.st_mtime), st.st_size, p))
        stats.sort(key=lambda item: item[0])
        total = sum(size for _, size, _ in stats)
        for _, size, path in stats:
            if total <= MAX_TOTAL_BYTES:
                break
            total -= size
            path.unlink(missing_ok=True)

    def clear(self) -> int:
        """Delete every stored result; the number deleted."""
        files = self.entries()
        for p in files:
            p.unlink(missing_ok=True)
        return len(files)


def _columns_bytes(result: Any) -> int:
    """The bytes of the numpy columns a result's schedule stores (0 when it stores a list of transfers)."""
    schedule = getattr(result, "schedule", None)
    cols = schedule.stored_columns() if hasattr(schedule, "stored_columns") else None
    if cols is None:
        return 0
    return sum(getattr(cols, f).nbytes for f in COLUMN_FIELDS)


def cached_synthesize(topo: Topology, algo, collective, *, cache: ResultsCache | None, refresh: bool = False,
                      total_bytes: float | None = None, options: Any = None, progress=None,
                      solve=None) -> tuple[Any, Hit | None]:
    """``solvers.synthesize`` through ``cache``: (the verified Result, the Hit when it came from the cache).
    ``solve(topo, algo, collective, progress, total_bytes, options)`` replaces ``synthesize`` (the app runs it
    in a child process). With ``cache`` None it always solves; with ``refresh`` it solves and replaces the stored
    result."""
    from .registry import get
    from .synthesize import synthesize

    synth = get(algo) if isinstance(algo, str) else algo
    key = solve_key(topo, synth.name, str(getattr(collective, "value", collective)), synth.options_from(options),
                    total_bytes)
    if cache is not None and not refresh:
        hit = cache.get(key)
        if hit is not None:
            return hit.result, hit
    run = solve or (lambda t, a, c, p, m, o: synthesize(t, a, c, progress=p, total_bytes=m, options=o))
    result = run(topo, algo, collective, progress, total_bytes, options)
    if cache is not None and result.verification.ok:
        try:
            cache.put(key, result)
        except OSError:                    # a full or read-only disk: the result is still good
            pass
    return result, None
