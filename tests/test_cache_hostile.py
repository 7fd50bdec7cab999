"""The results cache against someone else's files (issue 39, defect 1): a cache folder another user made (shared
/tmp, NFS) with a key and a tagged pickle planted in it, a ``.secret`` that is a folder, a cache folder that is a
symbolic link, entries that are a link to /dev/zero or a FIFO, a correctly tagged entry holding a wrong schedule,
and a pickle planted with a valid tag. Each one is refused or treated as a miss, in one line on standard error,
and the request is solved (and the schedule shown is one the verifier passed); no planted code runs, nothing is
written through a link, nothing is read past its limit.

These tests use only what the cache offered before issue 39 (``cached_synthesize``, ``ResultsCache``,
``solve_key``) besides the tag and the encoding an attacker would copy, so that they run against the pickling
cache as well: there every one of them fails."""
from __future__ import annotations

import hmac
import os
import pickle
import signal
import stat
from contextlib import contextmanager

import pytest

from solvers import results_cache
from solvers.core.verify import verify
from solvers.registry import get
from solvers.results_cache import ResultsCache, cached_synthesize, solve_key
from solvers.synthesize import synthesize
from studio.cli import main
from topologies import parse_topology

EXPR, ALGO, COLL = "ring(6)", "ring", "allgather"
OTHER_UID = 12345


class _Planted:
    """A pickle that creates ``marker`` when it is unpickled (any code would run the same way)."""

    def __init__(self, marker: str):
        self.marker = marker

    def __reduce__(self):
        return open, (self.marker, "w")


def _key(topo, collective=COLL):
    return solve_key(topo, ALGO, collective, get(ALGO).options_from(None), None)


def _tagged(secret: bytes, key: str, body: bytes) -> bytes:
    """An entry as the cache tags it (the attacker holds the secret)."""
    if hasattr(results_cache, "_tag"):
        return results_cache._tag(secret, key, body) + body
    return hmac.new(secret, body, "sha256").digest() + body


def _encoded(result, topo) -> bytes:
    """A result's body as the cache writes it."""
    if hasattr(results_cache, "encode_result"):
        return results_cache.encode_result(result, topo)
    return pickle.dumps(result)


def _one_line(capsys, *words: str) -> str:
    lines = [line for line in capsys.readouterr().err.splitlines() if line.strip()]
    assert len(lines) == 1, lines
    assert all(w in lines[0] for w in words), lines[0]
    assert "Traceback" not in lines[0]
    return lines[0]


def _solved_and_verified(result, hit, topo, collective=COLL) -> None:
    assert hit is None
    assert result.schedule.collective.value == collective and verify(topo, result.schedule).ok
    fresh = synthesize(topo, ALGO, collective)
    assert result.schedule.count == fresh.schedule.count and result.as_dict() == fresh.as_dict()


@pytest.fixture
def store(tmp_path, monkeypatch):
    monkeypatch.setenv(results_cache.ENV, str(tmp_path / "cache"))
    return ResultsCache.default()


@contextmanager
def _memory_cap(extra: int = 2 * 2 ** 30):
    """The process's address space capped at what it holds now plus ``extra``: a cache that reads a link to
    /dev/zero fails with MemoryError instead of taking the machine's memory."""
    import resource

    soft, hard = resource.getrlimit(resource.RLIMIT_AS)
    try:
        with open("/proc/self/status") as fh:
            size = next(int(line.split()[1]) * 1024 for line in fh if line.startswith("VmSize:"))
    except (OSError, StopIteration):
        yield
        return
    cap = size + extra if hard == resource.RLIM_INFINITY else min(size + extra, hard)
    resource.setrlimit(resource.RLIMIT_AS, (cap, hard))
    try:
        yield
    finally:
        resource.setrlimit(resource.RLIMIT_AS, (soft, hard))


class _Blocked(Exception):
    """Not an OSError: a cache that blocked must not take it for a missing file."""


@contextmanager
def _deadline(seconds: int):
    """SIGALRM after ``seconds``: a cache that blocks opening a FIFO fails instead of hanging."""
    def expired(*_):
        raise _Blocked(f"still blocked after {seconds} s")
    old = signal.signal(signal.SIGALRM, expired)
    signal.alarm(seconds)
    try:
        yield
    finally:
        signal.alarm(0)
        signal.signal(signal.SIGALRM, old)


@pytest.mark.parametrize("owner", ["folder", "group-writable folder", "secret"])
def test_a_key_and_pickle_planted_by_another_user_never_run(tmp_path, monkeypatch, capsys, owner):
    """Another uid made the folder (or could write into it, or made the secret) and planted a key and an entry
    tagged with it that runs code when unpickled: the folder is refused in one line and the request solved."""
    folder = tmp_path / "shared"
    folder.mkdir(mode=0o700)
    secret = b"k" * 32
    (folder / ".secret").write_bytes(secret)
    os.chmod(folder / ".secret", 0o600)
    topo = parse_topology(EXPR)
    key = _key(topo)
    marker = tmp_path / "planted-code-ran"
    entry = folder / f"{key}.result"
    entry.write_bytes(_tagged(secret, key, pickle.dumps(_Planted(str(marker)))))
    planted = {"folder": [folder, folder / ".secret", entry], "group-writable folder": [folder / ".secret", entry],
               "secret": [folder / ".secret"]}[owner]
    try:
        for path in planted:
            os.chown(path, OTHER_UID, OTHER_UID)
    except PermissionError:
        pytest.skip("making files of another uid needs root (os.chown)")
    if owner == "group-writable folder":
        os.chmod(folder, 0o777)
    before = sorted(os.listdir(folder))
    monkeypatch.setenv(results_cache.ENV, str(folder))
    result, hit = cached_synthesize(topo, ALGO, COLL, cache=ResultsCache.default())
    assert not marker.exists()
    _solved_and_verified(result, hit, topo)
    _one_line(capsys, "results cache", str(folder),
              "writable by group or others" if owner == "group-writable folder" else f"uid {OTHER_UID}")
    assert sorted(os.listdir(folder)) == before             # nothing written into it either


def test_a_secret_that_is_a_folder_is_refused_in_one_line(store, capsys):
    topo = parse_topology(EXPR)
    cached_synthesize(topo, ALGO, COLL, cache=store)
    (store.root / ".secret").unlink()
    (store.root / ".secret").mkdir()
    result, hit = cached_synthesize(topo, ALGO, COLL, cache=store)
    _solved_and_verified(result, hit, topo)
    _one_line(capsys, ".secret", "not a regular file")
    assert main(["schedule", EXPR, "--algo", ALGO, "--collective", COLL, "--json"]) == 0
    out = capsys.readouterr()
    assert '"verified": true' in out.out and ".secret is not a regular file" in out.err


def test_a_cache_folder_that_is_a_symbolic_link_is_not_followed(tmp_path, monkeypatch, capsys):
    target = tmp_path / "elsewhere"
    target.mkdir(mode=0o700)
    link = tmp_path / "cache"
    link.symlink_to(target)
    monkeypatch.setenv(results_cache.ENV, str(link))
    topo = parse_topology(EXPR)
    for _ in range(2):
        result, hit = cached_synthesize(topo, ALGO, COLL, cache=ResultsCache.default())
        _solved_and_verified(result, hit, topo)
        _one_line(capsys, str(link), "symbolic link")
    assert os.listdir(target) == []
    assert main(["cache", "info"]) != 0 and "symbolic link" in capsys.readouterr().err


def test_an_entry_that_links_to_dev_zero_is_not_read(store, capsys):
    topo = parse_topology(EXPR)
    cached_synthesize(topo, ALGO, COLL, cache=store)
    (entry,) = store.entries()
    entry.unlink()
    entry.symlink_to("/dev/zero")
    with _memory_cap():
        result, hit = cached_synthesize(topo, ALGO, COLL, cache=store)
    _solved_and_verified(result, hit, topo)
    _one_line(capsys, entry.name, "symbolic link")
    assert stat.S_ISREG(os.lstat(entry).st_mode)            # the link deleted, the verified result stored
    again, hit = cached_synthesize(topo, ALGO, COLL, cache=store)
    assert hit is not None and again.as_dict() == result.as_dict()


def test_an_entry_that_is_a_fifo_does_not_block(store, capsys):
    topo = parse_topology(EXPR)
    cached_synthesize(topo, ALGO, COLL, cache=store)
    (entry,) = store.entries()
    entry.unlink()
    os.mkfifo(entry, 0o600)
    with _deadline(20):
        result, hit = cached_synthesize(topo, ALGO, COLL, cache=store)
    _solved_and_verified(result, hit, topo)
    _one_line(capsys, entry.name, "not a regular file")


@pytest.mark.parametrize("forgery", ["a transfer dropped", "another collective's schedule"])
def test_a_correctly_tagged_entry_with_a_wrong_schedule_is_solved_again(store, capsys, forgery):
    """Whoever holds the key can tag anything: the schedule is verified again and the request's collective
    checked, and the result shown is the one solved and verified now."""
    topo = parse_topology(EXPR)
    collective = COLL if forgery == "a transfer dropped" else "allreduce"
    cached_synthesize(topo, ALGO, collective, cache=store)
    capsys.readouterr()
    forged = synthesize(topo, ALGO, COLL)
    if forgery == "a transfer dropped":
        forged.schedule.transfers = forged.schedule.transfers[:-1]      # no longer an allgather
    key = _key(topo, collective)
    secret = (store.root / ".secret").read_bytes()
    store._path(key).write_bytes(_tagged(secret, key, _encoded(forged, topo)))
    result, hit = cached_synthesize(topo, ALGO, collective, cache=store)
    _solved_and_verified(result, hit, topo, collective)
    _one_line(capsys, key, "fails verification" if forgery == "a transfer dropped" else "allgather schedule")
    again, hit = cached_synthesize(topo, ALGO, collective, cache=store)   # the verified one replaced it
    assert hit is not None and again.as_dict() == result.as_dict()


def test_a_pickle_planted_with_a_valid_tag_never_runs(store, tmp_path, capsys):
    topo = parse_topology(EXPR)
    cached_synthesize(topo, ALGO, COLL, cache=store)
    key = _key(topo)
    marker = tmp_path / "planted-code-ran"
    secret = (store.root / ".secret").read_bytes()
    store._path(key).write_bytes(_tagged(secret, key, pickle.dumps(_Planted(str(marker)))))
    result, hit = cached_synthesize(topo, ALGO, COLL, cache=store)
    assert not marker.exists()
    _solved_and_verified(result, hit, topo)
    _one_line(capsys, key, "is unreadable")


def test_an_entry_over_the_limit_is_read_no_further_than_the_limit(store, capsys, monkeypatch):
    """A file whose size is over the limit (here a sparse one) is read to the limit plus one byte, not further,
    whatever its size said when it was opened."""
    topo = parse_topology(EXPR)
    cached_synthesize(topo, ALGO, COLL, cache=store)
    (entry,) = store.entries()
    limit = entry.stat().st_size * 2
    with open(entry, "r+b") as fh:
        fh.truncate(64 * 2 ** 20)
    monkeypatch.setattr(results_cache, "MAX_ENTRY_BYTES", limit)
    read = []
    real = os.read
    monkeypatch.setattr(os, "read", lambda fd, n: read.append(n) or real(fd, n))
    result, hit = cached_synthesize(topo, ALGO, COLL, cache=store)
    _solved_and_verified(result, hit, topo)
    _one_line(capsys, entry.name, f"is over {limit} bytes")
    assert sum(read) <= limit + 32 + 1 + 64                 # the entry's limit and tag, plus the secret's read
