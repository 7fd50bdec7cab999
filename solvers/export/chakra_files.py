"""Writing a set of trace files into a folder so that each is whole or absent (the solver-level twin of
``studio.cli.common.write_atomically``, which solvers may not import).

``output_folder(path)`` refuses, in one line, a path that is a symbolic link or exists and is not a folder, or whose
parent folder is missing or not writable, and makes the folder when it does not exist. ``write_whole(folder,
filename, data)`` writes to a hidden temporary file in the folder, syncs it and renames it into place, so a reader
never sees part of a file; a failure removes the temporary file and is one ``ChakraError`` line.
"""
from __future__ import annotations

import os
import re
import stat
import tempfile

__all__ = ["ChakraError", "check_name", "output_folder", "write_whole"]

_NAME = re.compile(r"[A-Za-z0-9][A-Za-z0-9_.+-]{0,127}")


class ChakraError(ValueError):
    """A trace set that cannot be written, read or trusted; the message is one line."""


def check_name(name: str) -> str:
    """A trace prefix: letters, digits and ``_.+-``, no folder part, at most 128 characters."""
    if not isinstance(name, str) or not _NAME.fullmatch(name):
        raise ChakraError(f"trace name {name!r} must be 1-128 letters, digits or _.+- (no folder part)"[:200])
    return name


def output_folder(path: str) -> str:
    """``path`` as a folder to write traces in (made when absent); ChakraError, one line, otherwise."""
    if not path:
        raise ChakraError("the output folder needs a name")
    if os.path.islink(path):
        raise ChakraError(f"{path} is a symbolic link: name a real folder")
    try:
        st = os.stat(path)
    except FileNotFoundError:
        st = None
    except OSError as exc:
        raise ChakraError(f"cannot use {path}: {exc.strerror or exc}") from None
    if st is not None and not stat.S_ISDIR(st.st_mode):
        raise ChakraError(f"{path} exists and is not a folder: the traces need a folder")
    if st is None:
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
