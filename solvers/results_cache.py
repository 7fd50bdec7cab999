"""Finished solves kept on disk and reused by the CLI, the app and sweeps (issue 24, the results cache; issue 39).

A solve is named by its key: the topology (node names and kinds, every link with its bandwidth and alpha, its
display name and expression), the synthesizer, the collective, the options it ran with, the vector size M where
the synthesizer reads it, and the code version (a digest of every ``.py`` file under ``solvers/`` and
``topologies/``: any change to the code that builds or verifies a schedule starts a fresh cache). Only verified
results are stored (``solvers.synthesize`` raises for any other), and every hit is verified again.

Storage: one file per key under the cache folder (``TOPOLOGY_STUDIO_CACHE``, an absolute path or one from ``~``,
default ``~/.cache/topology-studio/results``; the value ``off`` turns the cache off; a relative value is refused
as ``UnsafeCache``, so no stray setting makes a folder in the current directory): an HMAC-SHA256 tag over the key and
the body, then the body, an uncompressed ``.npz`` read with ``np.load(..., allow_pickle=False)``. The body is data
only (``solvers.core.safe_codec``): the schedule's columns as arrays (exact bounds as integers, a list of
transfers as columns with its Fractions as "num/den" strings), the request's topology and the fabric the schedule
runs on, and the synthesizer's ``Detail`` as JSON naming only registered dataclasses (``codec``). Nothing is
unpickled: a result that does not encode is not kept, an entry that does not decode is a miss. The tag's key is
a random secret made on first use in the folder (``.secret``, mode 0600); a file that fails the tag (not written
here, altered, or moved to another key's name) is deleted unread.

What a hit must pass besides the tag: the entry's topology is the request's, its schedule is of the requested
collective and synthesizer, and ``solvers.core.verify`` passes it on the fabric (cost and verification are
computed again, not read); a hit that fails is deleted, named in one line, and solved again.

The folder is used only when this user alone controls it, as ssh treats ``~/.ssh``: the folder (not a symbolic
link) and its ``.secret`` (a regular file, not a link, 32 bytes) must belong to the current uid, the folder must
not be writable by group or others and the secret not readable or writable by them. Otherwise
``UnsafeCache`` says why in one line and ``cached_synthesize`` solves without the cache. Inside the folder no
symbolic link is followed (every file is opened relative to the folder's descriptor with ``O_NOFOLLOW``), an
entry must be a regular file of this user, and every read stops at its limit (``MAX_ENTRY_BYTES``) plus one
byte, whatever the file's size says. Anything else under an entry's name (a folder planted there) is a miss: an
empty folder is removed like a bad entry, one that is not empty is left alone and never written into, and
``clear`` removes every entry and empty folder it can. Files are written to a temporary name and renamed. Results whose body is
over ``MAX_ENTRY_BYTES`` are not kept, and once the folder holds more than ``MAX_TOTAL_BYTES`` the least recently
used files go.
"""
from __future__ import annotations

import errno
import hashlib
import hmac
import json
import os
import secrets
import stat
import sys
import time
from contextlib import contextmanager
from dataclasses import dataclass, fields, is_dataclass
from functools import lru_cache
from pathlib import Path
from typing import Any, Callable, Iterator

from topologies.model import Topology

from .core.safe_codec import CodecError
from .core.schedule import COLUMN_FIELDS
from .result_codec import FORMAT, codec, decode_result, encode_result, topology_digest  # noqa: F401

ENV = "TOPOLOGY_STUDIO_CACHE"
MAX_ENTRY_BYTES = 256 * 2 ** 20
MAX_TOTAL_BYTES = 2 * 2 ** 30
MAX_RECORD_BYTES = 2 ** 20      # a JSON record (``put_record``): a row of figures, not a schedule
_TAG = 32
_SECRET = ".secret"
_SECRET_BYTES = 32
_SUFFIX = ".result"
_NOFOLLOW = os.O_NOFOLLOW | os.O_CLOEXEC
Warn = Callable[[str], None]


class UnsafeCache(ValueError):
    """The cache folder or its secret is not this user's alone (or not what it should be): the cache is not
    used. The message is one line naming the path and what is wrong."""


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



def _read_capped(fd: int, limit: int) -> bytes:
    """At most ``limit`` + 1 bytes of ``fd``, whatever its size says (more than ``limit`` means too large)."""
    chunks, left = [], limit + 1
    while left > 0:
        chunk = os.read(fd, min(left, 1 << 20))
        if not chunk:
            break
        chunks.append(chunk)
        left -= len(chunk)
    return b"".join(chunks)


def _tag(secret: bytes, key: str, body: bytes) -> bytes:
    mac = hmac.new(secret, key.encode() + b"\n", "sha256")
    mac.update(body)
    return mac.digest()


class ResultsCache:
    """The cache folder ``root`` (module docstring)."""

    def __init__(self, root: str | os.PathLike):
        self.root = Path(root)
        self._key: bytes | None = None
        self._key_id: tuple | None = None          # (device, inode, mtime, size) of the secret it was read from

    @classmethod
    def default(cls) -> "ResultsCache | None":
        """The cache that ``TOPOLOGY_STUDIO_CACHE`` names (None when it says ``off``; ``~`` is the home folder). A
        relative value is kept as given and refused on first use (``_folder``): no folder is made in the current
        directory from a stray setting."""
        where = os.environ.get(ENV, "").strip()
        if where.lower() == "off":
            return None
        return cls(Path(where).expanduser() if where else Path.home() / ".cache" / "topology-studio" / "results")

    # -- the folder and its secret
    @contextmanager
    def _folder(self, create: bool) -> Iterator[int | None]:
        """A descriptor of the folder, checked (module docstring); None when it does not exist and ``create`` is
        False. UnsafeCache when it is not this user's alone."""
        root = self.root
        if not root.is_absolute():
            raise UnsafeCache(f"{root} is not an absolute path (name the cache folder from /, or {ENV}=off); "
                              "no folder is made relative to the current directory")
        try:
            st = os.lstat(root)
        except FileNotFoundError:
            if not create:
                yield None
                return
            root.parent.mkdir(parents=True, exist_ok=True)
            try:
                os.mkdir(root, 0o700)
            except FileExistsError:
                pass
            st = os.lstat(root)
        if stat.S_ISLNK(st.st_mode):
            raise UnsafeCache(f"{root} is a symbolic link (name the folder itself)")
        if not stat.S_ISDIR(st.st_mode):
            raise UnsafeCache(f"{root} is not a folder")
        try:
            fd = os.open(root, os.O_RDONLY | os.O_DIRECTORY | _NOFOLLOW)
        except OSError as exc:
            if exc.errno in (errno.ELOOP, errno.ENOTDIR):
                raise UnsafeCache(f"{root} is a symbolic link (name the folder itself)") from None
            raise
        try:
            _owned(os.fstat(fd), root, 0o022, "writable by group or others", "go-w")
            yield fd
        finally:
            os.close(fd)

    def _secret(self, folder: int, create: bool) -> bytes | None:
        """The folder's HMAC key (read again only when the file changed; made on first use when ``create``); None
        when there is none and ``create`` is False."""
        path = self.root / _SECRET
        for _ in range(3):
            try:
                fd = os.open(_SECRET, os.O_RDONLY | os.O_NONBLOCK | _NOFOLLOW, dir_fd=folder)
            except FileNotFoundError:
                if not create:
                    return None
                made = self._make_secret(folder)
                if made is not None:
                    return made
                continue                                # another process made it first: read that one
            except OSError as exc:
                if exc.errno == errno.ELOOP:
                    raise UnsafeCache(f"{path} is a symbolic link") from None
                raise
            try:
                st = os.fstat(fd)
                if not stat.S_ISREG(st.st_mode):
                    raise UnsafeCache(f"{path} is not a regular file")
                _owned(st, path, 0o077, "readable or writable by group or others", "go-rwx")
                ident = (st.st_dev, st.st_ino, st.st_mtime_ns, st.st_size)
                if self._key is not None and ident == self._key_id:
                    return self._key
                data = _read_capped(fd, _SECRET_BYTES)
            finally:
                os.close(fd)
            if len(data) != _SECRET_BYTES:
                raise UnsafeCache(f"{path} does not hold a key of {_SECRET_BYTES} bytes")
            self._key, self._key_id = data, ident
            return data
        raise UnsafeCache(f"{path} keeps changing")

    def _make_secret(self, folder: int) -> bytes | None:
        """A new secret, written whole under a temporary name and linked as ``.secret`` (None when one appeared
        meanwhile)."""
        secret = secrets.token_bytes(_SECRET_BYTES)
        tmp = f".writing-{secrets.token_hex(8)}"
        fd = os.open(tmp, os.O_WRONLY | os.O_CREAT | os.O_EXCL | _NOFOLLOW, 0o600, dir_fd=folder)
        try:
            with os.fdopen(fd, "wb") as fh:
                fh.write(secret)
                fh.flush()
                st = os.fstat(fh.fileno())
            os.link(tmp, _SECRET, src_dir_fd=folder, dst_dir_fd=folder, follow_symlinks=False)
        except FileExistsError:
            return None
        finally:
            os.unlink(tmp, dir_fd=folder)
        self._key, self._key_id = secret, (st.st_dev, st.st_ino, st.st_mtime_ns, st.st_size)
        return secret

    def _path(self, key: str) -> Path:
        return self.root / f"{key}{_SUFFIX}"

    # -- entries
    def get(self, key: str, topo: Topology | None = None, *, algo: str | None = None, collective: str | None = None,
            options: Any = None, warn: Warn | None = None) -> Hit | None:
        """The stored result for ``key``, verified again, or None. ``topo``, ``algo``, ``collective``: what the
        entry must be for (the request); ``options`` go into the Result. An entry that fails any check (module
        docstring) is deleted, and ``warn`` hears why in one line. UnsafeCache for a folder not this user's."""
        with self._entry(key, MAX_ENTRY_BYTES, warn, "deleted, solving again") as entry:
            if entry is None:
                return None
            body, fd, st, reject = entry
            result, why = decode_result(body, topo, options)
            if result is None:
                return reject(why)
            if collective is not None and result.schedule.collective.value != collective:
                return reject(f"holds a {result.schedule.collective.value} schedule, not {collective}")
            if algo is not None and result.schedule.algo != algo:
                return reject(f"holds a schedule of {result.schedule.algo!r}, not {algo!r}")
            os.utime(fd, (time.time(), st.st_mtime))   # the access time orders the trim; mtime stays the age
            return Hit(result, st.st_mtime)

    @contextmanager
    def _entry(self, key: str, limit: int, warn: Warn | None, then: str):
        """The entry for ``key`` as (body, open fd, its stat, reject) once it passes ``_read_tagged``'s checks, or
        None (no folder, no secret, no entry, or rejected); ``reject(why)`` deletes it and tells ``warn`` "the
        entry ... why; ``then``". The fd is closed on leaving."""
        name = f"{key}{_SUFFIX}"
        with self._folder(create=False) as folder:
            secret = None if folder is None else self._secret(folder, create=False)
            if secret is None:
                yield None
                return

            def reject(why: str) -> None:
                gone = _unlink(folder, name)
                if warn is not None:
                    warn(f"the entry {self.root / name} {why}; " + (then if gone else "it cannot be removed (a "
                         "folder that is not empty), so it is left in place and read as a miss"))
            read = self._read_tagged(folder, secret, key, limit, reject)
            if read is None:
                yield None
                return
            body, fd, st = read
            try:
                yield body, fd, st, reject
            finally:
                os.close(fd)

    @staticmethod
    def _read_tagged(folder: int, secret: bytes, key: str, limit: int, reject):
        """(body, open fd, its stat) of the entry for ``key`` once it passes the module docstring's checks (a
        regular file of this user, not a link, at most ``limit`` bytes plus the tag, its tag right); None when there
        is none, else ``reject(why)``'s answer. The caller closes the fd."""
        name = f"{key}{_SUFFIX}"
        try:
            fd = os.open(name, os.O_RDONLY | os.O_NONBLOCK | _NOFOLLOW, dir_fd=folder)
        except FileNotFoundError:
            return None
        except OSError as exc:
            if exc.errno == errno.ELOOP:
                return reject("is a symbolic link")
            raise
        why = None
        try:
            st = os.fstat(fd)
            if not stat.S_ISREG(st.st_mode):
                why = "is not a regular file"
            elif st.st_uid != os.geteuid():
                why = f"belongs to uid {st.st_uid}, not to this user"
            else:
                data = _read_capped(fd, limit + _TAG)
                tag, body = data[:_TAG], data[_TAG:]
                if len(data) > limit + _TAG:
                    why = f"is over {limit} bytes"
                elif len(tag) != _TAG or not hmac.compare_digest(tag, _tag(secret, key, body)):
                    why = "fails its tag (not written here for this key, or altered)"
        except BaseException:
            os.close(fd)
            raise
        if why is not None:
            os.close(fd)
            return reject(why)
        return body, fd, st

    # -- records: small JSON rows (the failure analysis's), tagged and kept like results
    def get_record(self, key: str, warn: Warn | None = None) -> dict | None:
        """The JSON object stored under ``key`` (``put_record``), or None; an entry failing its checks is deleted
        and ``warn`` hears why. Nothing but JSON is read: numbers, strings, booleans, lists and objects."""
        with self._entry(key, MAX_RECORD_BYTES, warn, "deleted") as entry:
            if entry is None:
                return None
            body, fd, st, reject = entry
            try:
                record = json.loads(body.decode("utf-8"))
            except (UnicodeDecodeError, ValueError, RecursionError):
                return reject("is not a JSON record")
            if not isinstance(record, dict):
                return reject("is not a JSON object")
            os.utime(fd, (time.time(), st.st_mtime))
            return record

    def put_record(self, key: str, record: dict) -> bool:
        """Keep the JSON object ``record`` under ``key``; False when it does not encode as JSON or is over
        ``MAX_RECORD_BYTES``."""
        try:
            body = json.dumps(record, allow_nan=False, sort_keys=True).encode("utf-8")
        except (TypeError, ValueError):
            return False
        if len(body) > MAX_RECORD_BYTES:
            return False
        self._write(key, body)
        return True

    def put(self, key: str, result: Any, topo: Topology | None = None) -> bool:
        """Keep ``result`` (solved on ``topo``, default its fabric) under ``key``; False when it is too large to
        keep (known from its schedule's columns before encoding, where they alone are over the limit: BFB on 16384
        nodes holds 2.7 GB of them) or holds anything the codec does not encode. UnsafeCache for a folder not this
        user's."""
        if _columns_bytes(result) > MAX_ENTRY_BYTES:
            return False
        try:
            body = encode_result(result, topo)
        except CodecError:
            return False
        if len(body) > MAX_ENTRY_BYTES:
            return False
        self._write(key, body)
        return True

    def _write(self, key: str, body: bytes) -> None:
        """``body`` under ``key`` with its tag: written to a temporary name, then renamed; the folder trimmed."""
        with self._folder(create=True) as folder:
            tag = _tag(self._secret(folder, create=True), key, body)
            tmp = f".writing-{secrets.token_hex(8)}"
            fd = os.open(tmp, os.O_WRONLY | os.O_CREAT | os.O_EXCL | _NOFOLLOW, 0o600, dir_fd=folder)
            try:
                with os.fdopen(fd, "wb") as fh:
                    fh.write(tag)
                    fh.write(body)
                os.replace(tmp, f"{key}{_SUFFIX}", src_dir_fd=folder, dst_dir_fd=folder)
            except BaseException:
                try:
                    os.unlink(tmp, dir_fd=folder)
                except FileNotFoundError:
                    pass
                raise
            self._trim(folder)

    def _names(self, folder: int) -> list[str]:
        return sorted(n for n in os.listdir(folder) if n.endswith(_SUFFIX) and not n.startswith("."))

    def entries(self) -> list[Path]:
        with self._folder(create=False) as folder:
            return [] if folder is None else [self.root / n for n in self._names(folder)]

    def size_bytes(self) -> int:
        with self._folder(create=False) as folder:
            if folder is None:
                return 0
            return sum(self._lstat(folder, n).st_size for n in self._names(folder))

    @staticmethod
    def _lstat(folder: int, name: str) -> os.stat_result:
        return os.stat(name, dir_fd=folder, follow_symlinks=False)

    def _trim(self, folder: int) -> None:
        stats = []
        for name in self._names(folder):
            try:
                st = self._lstat(folder, name)
            except OSError:                # deleted by another process meanwhile
                continue
            stats.append((max(st.st_atime, st.st_mtime), st.st_size, name))
        stats.sort(key=lambda item: item[0])
        total = sum(size for _, size, _ in stats)
        for _, size, name in stats:
            if total <= MAX_TOTAL_BYTES:
                break
            total -= size
            _unlink(folder, name)

    def clear(self) -> int:
        """Delete every stored result; the number deleted. A folder planted under an entry's name is removed when
        empty and otherwise left (never emptied: it is not the cache's), and not counted."""
        with self._folder(create=False) as folder:
            if folder is None:
                return 0
            return sum(_unlink(folder, name) for name in self._names(folder))


def _owned(st: os.stat_result, path: Path, forbidden: int, what: str, fix: str) -> None:
    uid = os.geteuid()
    if st.st_uid != uid:
        raise UnsafeCache(f"{path} belongs to uid {st.st_uid}, not to this user (uid {uid})")
    if st.st_mode & forbidden:
        raise UnsafeCache(f"{path} is {what} (mode {stat.S_IMODE(st.st_mode):o}; chmod {fix} it)")


def _unlink(folder: int, name: str) -> bool:
    """Remove the entry ``name`` of ``folder``: a file or link, or an empty folder planted under its name. False
    when a folder that is not empty stands there (left alone: the entry is a miss and is never written)."""
    try:
        os.unlink(name, dir_fd=folder)
    except FileNotFoundError:
        return True
    except (IsADirectoryError, PermissionError):    # Linux says EISDIR for a folder, POSIX allows EPERM
        try:
            os.rmdir(name, dir_fd=folder)
        except FileNotFoundError:
            return True
        except OSError:
            return False
    return True


def _columns_bytes(result: Any) -> int:
    """The bytes of the numpy columns a result's schedule stores (0 when it stores a list of transfers)."""
    schedule = getattr(result, "schedule", None)
    cols = schedule.stored_columns() if hasattr(schedule, "stored_columns") else None
    if cols is None:
        return 0
    return sum(getattr(cols, f).nbytes for f in COLUMN_FIELDS)


def _stderr(text: str) -> None:
    print(f"results cache: {text}", file=sys.stderr)


def cached_synthesize(topo: Topology, algo, collective, *, cache: ResultsCache | None, refresh: bool = False,
                      total_bytes: float | None = None, options: Any = None, progress=None,
                      solve=None, warn: Warn | None = _stderr, root: int | str | None = None
                      ) -> tuple[Any, Hit | None]:
    """``solvers.synthesize`` through ``cache``: (the verified Result, the Hit when it came from the cache).
    ``solve(topo, algo, collective, progress, total_bytes, options)`` replaces ``synthesize`` (the app runs it
    in a child process). With ``cache`` None it always solves; with ``refresh`` it solves and replaces the stored
    result. A cache folder that is not this user's alone, and a stored entry that fails its checks, are named
    in one line to ``warn`` (default: standard error), and the request is solved without them. ``root``: a rooted
    collective's root (``solvers.synthesize.resolve_root``), part of the key as the node it names; given here,
    ``solve`` is called with ``root=`` as well (a collective written ``"broadcast@3"`` carries its own)."""
    from .core.schedule import Collective, rooted_request
    from .registry import get
    from .synthesize import bytes_for, resolve_root, synthesize

    synth = get(algo) if isinstance(algo, str) else algo
    chosen = synth.options_from(options)
    total_bytes = bytes_for(synth, topo, total_bytes)
    coll = _collective_value(collective)
    given = root                       # handed on to ``solve``; a root in the text travels with the collective
    if not isinstance(collective, Collective) and root is None:
        root = rooted_request(collective)[1]
    rooted = Collective(coll).rooted
    if rooted:
        coll = f"{coll}@{topo.names[resolve_root(topo, root)]}"
    key = solve_key(topo, synth.name, coll, chosen, total_bytes)
    if cache is not None and not refresh:
        try:
            hit = cache.get(key, topo, algo=synth.name, collective=_collective_value(collective), options=chosen,
                            warn=warn)
        except UnsafeCache as exc:
            if warn is not None:
                warn(f"{exc}; solving without it")
            cache, hit = None, None
        if hit is not None:
            return hit.result, hit
    run = solve or (lambda t, a, c, p, m, o, **kw: synthesize(t, a, c, progress=p, total_bytes=m, options=o, **kw))
    extra = {"root": given} if rooted and given is not None else {}
    result = run(topo, algo, collective, progress, total_bytes, options, **extra)
    if cache is not None and result.verification.ok:
        try:
            cache.put(key, result, topo)
        except UnsafeCache as exc:
            if warn is not None:
                warn(f"{exc}; not kept")
        except OSError:                    # a full or read-only disk: the result is still good
            pass
    return result, None


def _collective_value(collective) -> str:
    from .core.schedule import Collective, rooted_request

    return (collective if isinstance(collective, Collective) else rooted_request(str(collective))[0]).value
