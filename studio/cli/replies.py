"""Whole replies of the CLI's solving commands, kept in the results cache so that asking the same question again
answers in about the time Python takes to start.

A reply is what the command printed on standard output and its exit status, kept as a tagged JSON record
(``ResultsCache.put_record``: HMAC-tagged, at most ``MAX_RECORD_BYTES``; a larger reply is simply not kept) under a
key made of

* the command and every argument that can change what it prints (progress and cluster flags cannot);
* the content (SHA-256) of every file an argument names: a topology file, a machine's description (several:
  comma-joined however long, a folder or a glob, expanded as ``topologies.imports.import_paths`` reads them), a
  price file, a benchmark log, a demand matrix;
* the ``STUDIO_MAX_NODES`` setting, the version of the solvers and topologies (``code_version``) and of the
  code that prints (``studio/``).

A run that writes a file (``-o``, ``--plot``) is not answered from a reply: the file must be written. Only a run
that succeeded is kept. ``--no-cache`` runs the command again and replaces the reply. The answer says on standard
error that it came from the cache and how old it is, as ``schedule`` always has.
"""
from __future__ import annotations

import contextlib
import hashlib
import io
import json
import os
import sys
import time
from functools import lru_cache
from pathlib import Path

REPLIED = frozenset({"forestcoll", "schedule", "find", "alltoall", "compare", "failures", "calibrate",
                     "allreduce-lp", "train"})
NOT_IN_KEY = frozenset({"no_cache", "progress", "quiet", "workers", "scheduler", "in_process", "force"})
WRITES = ("output", "plot", "chakra")
FORMAT = 1
MAX_HASHED_BYTES = 1 << 30        # the files a run names are hashed up to this much in all (sizes are in the key too)


@lru_cache(maxsize=1)
def studio_version() -> str:
    """A digest of the source of ``studio/`` (what formats the replies)."""
    root = Path(__file__).resolve().parents[1]
    h = hashlib.sha256()
    for path in sorted(root.rglob("*.py")):
        h.update(str(path.relative_to(root)).encode())
        h.update(path.read_bytes())
    return h.hexdigest()[:16]


def _file_digest(path: str) -> str | None:
    """SHA-256 of a regular file's content with its size, or None when ``path`` names no regular file."""
    try:
        with open(path, "rb") as fh:
            st = os.fstat(fh.fileno())
            if not (st.st_mode & 0o170000) == 0o100000:          # a regular file only: never a FIFO or device
                return None
            h = hashlib.sha256()
            left = MAX_HASHED_BYTES
            while left > 0:
                block = fh.read(min(1 << 20, left))
                if not block:
                    break
                h.update(block)
                left -= len(block)
            return f"{st.st_size}:{h.hexdigest()}"
    except (OSError, ValueError):
        return None


def _parts(text: str) -> list[str]:
    """The files a string argument may name: a machine description's files (``import_paths``: comma-joined, a
    folder, a glob), else each comma-joined part."""
    from topologies.imports import MAX_SPEC_CHARS, import_paths, is_import
    from topologies.model import TopologyError

    if len(text) > MAX_SPEC_CHARS:
        return []
    if is_import(text):
        try:
            return import_paths(text)
        except TopologyError:           # the command itself says what is wrong with it
            return []
    return text.split(",")


class _TooMuch(Exception):
    """The files a run names hold more than ``MAX_HASHED_BYTES`` in all: the run is not answered from a reply."""


def _files(value, budget: list[int]) -> dict[str, str]:
    """The digests of the files that a string argument (or each part of it, ``_parts``) names; ``budget``: the
    bytes still to hash for this run (``_TooMuch`` past it: 256 files of a folder are not hashed a GiB each)."""
    out: dict[str, str] = {}
    values = value if isinstance(value, list) else [value]
    for text in values:
        if not isinstance(text, str):
            continue
        for part in _parts(text):
            part = part.strip()
            if part and os.path.isfile(part):
                try:
                    budget[0] -= os.path.getsize(part)
                except OSError:
                    continue
                if budget[0] < 0:
                    raise _TooMuch
                digest = _file_digest(part)
                if digest is not None:
                    out[part] = digest
    return out


def reply_key(args) -> str | None:
    """The key of this run's reply, or None when the run is not one to answer from a reply (a command that is not
    replied, one that writes a file, or one whose files hold more than ``MAX_HASHED_BYTES`` in all)."""
    if args.command not in REPLIED or any(getattr(args, name, None) is not None for name in WRITES):
        return None
    from solvers.results_cache import code_version
    from topologies.expression import MAX_NODES_ENV

    asked = {k: v for k, v in sorted(vars(args).items()) if k not in NOT_IN_KEY}
    files: dict[str, str] = {}
    budget = [MAX_HASHED_BYTES]
    try:
        for value in asked.values():
            files.update(_files(value, budget))
    except _TooMuch:
        return None
    try:
        text = json.dumps({"format": FORMAT, "args": asked, "files": files, "code": code_version(),
                           "studio": studio_version(), "max_nodes": os.environ.get(MAX_NODES_ENV, "")},
                          sort_keys=True, default=repr)
    except (TypeError, ValueError):
        return None
    return "reply-" + hashlib.sha256(text.encode("utf-8")).hexdigest()


def _store():
    from solvers.results_cache import ResultsCache

    return ResultsCache.default()


def _warn(text: str) -> None:
    print(f"results cache: {text}", file=sys.stderr)


def _age(seconds: float) -> str:
    for unit, size in (("days", 86400), ("h", 3600), ("min", 60)):
        if seconds >= size:
            return f"{seconds / size:.1f} {unit}"
    return f"{seconds:.0f} s"


def answered(args, run) -> int:
    """Run the command ``run(args)`` through the reply cache (module docstring): the kept reply when there is one
    and ``--no-cache`` is not given, else the command itself, whose reply is kept when it succeeds."""
    from solvers.results_cache import UnsafeCache

    key = reply_key(args)
    store = _store() if key is not None else None
    if store is None:
        return run(args)
    if not getattr(args, "no_cache", False):
        try:
            record = store.get_record(key, _warn)
        except UnsafeCache as exc:
            _warn(f"{exc}; solving without it")
            return run(args)
        if _valid(record):
            sys.stdout.write(record["stdout"])
            sys.stdout.flush()
            print(f"answered from the results cache (solved {_age(max(time.time() - record['solved_at'], 0))} ago; "
                  f"--no-cache solves again)", file=sys.stderr)
            return record["status"]
    captured = io.StringIO()
    try:
        with contextlib.redirect_stdout(captured):
            status = run(args)
    finally:                                 # what was printed before an error or an interrupt is still shown
        text = captured.getvalue()
        sys.stdout.write(text)
        sys.stdout.flush()
    if status == 0:
        try:
            store.put_record(key, {"stdout": text, "status": status, "solved_at": time.time()})
        except (UnsafeCache, OSError):       # a folder not this user's alone, a full disk: the reply stands
            pass
    return status


def _valid(record) -> bool:
    return (isinstance(record, dict) and isinstance(record.get("stdout"), str) and record.get("status") == 0
            and isinstance(record.get("solved_at"), (int, float)) and not isinstance(record.get("solved_at"), bool))
