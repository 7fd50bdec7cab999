"""Writing a set of trace files into a folder so that each is whole or absent (the solver-level twin of
``studio.cli.common.write_atomically``, which solvers may not import).

``output_folder(path)`` refuses, in one line, a path that is a symbolic link or exists and is not a folder, or whose
parent folder is missing or not writable, and makes the folder when it does not exist. ``write_whole(folder,
filename, data)`` writes to a hidden temporary file in the folder, syncs it and renames it into place, so a reader
never sees part of a file; a failure removes the temporary file and is one ``ChakraError`` line.

A whole export (the CLI's ``export --format chakra -o DIR`` and ``train --chakra DIR``) is published as one folder:
``check_target(DIR)`` refuses, creating nothing, a DIR that is a symbolic link, a file, or a folder that is not
empty (an export never mixes its files with another's, nor leaves an earlier run's extra ranks beside its own);
``staged_folder(DIR)`` then yields a hidden temporary sibling (same parent, ``.DIR.partial-*``) to write and check
everything in, and renames it to DIR at the end (over DIR where DIR is an empty folder); on any failure the
temporary folder is removed, so DIR is either the whole export or untouched. ``check_size`` caps the trace nodes
one export writes (``MAX_WRITE_NODES``), checked before any trace is built.
"""
from __future__ import annotations

import os
import re
import shutil
import stat
import tempfile
from contextlib import contextmanager

__all__ = ["ChakraError", "MAX_WRITE_NODES", "check_name", "check_size", "check_target", "output_folder",
           "staged_folder", "write_whole"]

# Trace nodes one export may write, over all ranks and files. Measured (issue 57) on the project's 2-core machine:
# building, writing, reading back and checking run at 30,000-40,000 nodes a second, so the cap is ~10-13 s of
# work and ~40 MB of files (a 10k-layer profile on gkautz(2,16) made ~10^6 nodes, 55 s and 1.1 GB of memory).
MAX_WRITE_NODES = 400_000

_NAME = re.compile(r"[A-Za-z0-9][A-Za-z0-9_.+-]{0,127}")


class ChakraError(ValueError):
    """A trace set that cannot be written, read or trusted; the message is one line."""


def check_name(name: str) -> str:
    """A trace prefix: letters, digits and ``_.+-``, no folder part, at most 128 characters."""
    if not isinstance(name, str) or not _NAME.fullmatch(name):
        raise ChakraError(f"trace name {name!r} must be 1-128 letters, digits or _.+- (no folder part)"[:200])
    return name


def _existing_folder(path: str) -> bool:
    """Whether ``path`` names an existing folder (False: nothing there); ChakraError, one line, for an empty name,
    a symbolic link, something that is not a folder, or a path that cannot be looked at."""
    if not path:
        raise ChakraError("the output folder needs a name")
    if os.path.islink(path):
        raise ChakraError(f"{path} is a symbolic link: name a real folder")
    try:
        st = os.stat(path)
    except FileNotFoundError:
        return False
    except OSError as exc:
        raise ChakraError(f"cannot use {path}: {exc.strerror or exc}") from None
    if not stat.S_ISDIR(st.st_mode):
        raise ChakraError(f"{path} exists and is not a folder: the traces need a folder")
    return True


def output_folder(path: str) -> str:
    """``path`` as a folder to write traces in (made when absent); ChakraError, one line, otherwise."""
    exists = _existing_folder(path)
    if not exists:
        parent = os.path.dirname(os.path.abspath(path))
        if not os.path.isdir(parent):
            raise ChakraError(f"cannot make {path}: the folder {parent} does not exist")
        try:
            os.mkdir(path)
        except OSError as exc:
            raise ChakraError(f"cannot make {path}: {exc.strerror or exc}") from None
    if not os.access(path, os.W_OK | os.X_OK):
        raise ChakraError(f"cannot write in {path}: the folder is not writable")
    return path


def write_whole(folder: str, filename: str, data: bytes) -> str:
    """Write ``data`` to ``folder/filename`` through a temporary file and a rename; the path written."""
    target = os.path.join(folder, filename)
    if os.path.islink(target) or (os.path.lexists(target) and not os.path.isfile(target)):
        raise ChakraError(f"{target} exists and is not a regular file: not replaced")
    try:
        fd, tmp = tempfile.mkstemp(prefix=".partial-", dir=folder)
    except OSError as exc:
        raise ChakraError(f"cannot write in {folder}: {exc.strerror or exc}") from None
    try:
        with os.fdopen(fd, "wb") as fh:
            fh.write(data)
            fh.flush()
            os.fsync(fh.fileno())
        os.chmod(tmp, 0o644)
        os.replace(tmp, target)
    except BaseException as exc:
        if os.path.lexists(tmp):
            os.unlink(tmp)
        if isinstance(exc, OSError):
            raise ChakraError(f"cannot write {target}: {exc.strerror or exc}") from None
        raise
    return target


def check_size(nodes: int, what: str) -> None:
    """ChakraError, one line naming the numbers, where ``nodes`` trace nodes (``what``: how they arise) are over
    ``MAX_WRITE_NODES``."""
    if nodes > MAX_WRITE_NODES:
        raise ChakraError(f"{what} make {nodes:,} trace nodes, over the cap of {MAX_WRITE_NODES:,} (about 10 s "
                          "of writing): export a smaller design or profile")


def check_target(path: str) -> str:
    """``path`` as the name of a folder an export may become: absent or an empty folder, not a symbolic link, its
    parent an existing writable folder. Creates nothing; ChakraError, one line, otherwise."""
    exists = _existing_folder(path)
    if exists:
        try:
            if os.listdir(path):
                raise ChakraError(f"{path} is not empty: name a new or empty folder (an export is never mixed "
                                  "with other files)")
        except OSError as exc:
            raise ChakraError(f"cannot read {path}: {exc.strerror or exc}") from None
    parent = os.path.dirname(os.path.normpath(os.path.abspath(path)))
    if not os.path.isdir(parent):
        raise ChakraError(f"cannot make {path}: the folder {parent} does not exist")
    if not os.access(parent, os.W_OK | os.X_OK):
        raise ChakraError(f"cannot make {path}: the folder {parent} is not writable")
    return path


@contextmanager
def staged_folder(path: str):
    """Yield a hidden temporary sibling of ``path`` to write an export in; at the end rename it to ``path``
    (module docstring). Any exception inside removes the temporary folder and ``path`` is left as it was."""
    check_target(path)
    full = os.path.normpath(os.path.abspath(path))
    try:
        tmp = tempfile.mkdtemp(prefix=f".{os.path.basename(full)[:64]}.partial-", dir=os.path.dirname(full))
    except OSError as exc:
        raise ChakraError(f"cannot make {path}: {exc.strerror or exc}") from None
    try:
        yield tmp
        mask = os.umask(0o022)
        os.umask(mask)
        os.chmod(tmp, 0o777 & ~mask)
        check_target(path)            # still absent or empty: rename(2) replaces an empty folder only
        try:
            os.rename(tmp, full)
        except OSError as exc:
            raise ChakraError(f"cannot make {path}: {exc.strerror or exc}") from None
    except BaseException:
        shutil.rmtree(tmp, ignore_errors=True)
        raise
