"""The one reader of the files a user names (issue 58): nccl-tests logs, price files, MSCCL XML and MSCCL++ plans
today; topology files, machine imports and rows files may move onto it.

``read_input(path, limit, what)`` gives the file's bytes, and ``read_input_text`` its text, under these rules:

- only a regular file is read (a symbolic link to one is followed): a FIFO, a socket, a device (``/dev/zero``,
  ``/dev/full``) or a folder is refused in one line naming the path, never read;
- the file is opened with ``O_NONBLOCK`` (and ``O_CLOEXEC``), so opening a FIFO can never wait for a writer, and
  its kind is checked on the open descriptor (``fstat``), so a file swapped for a FIFO after a check is still
  caught;
- at most ``limit`` + 1 bytes are read whatever the size on disk says, and a file above ``limit`` is refused;
- text is UTF-8 (a byte-order mark allowed), and bytes that are not are refused naming the file and the offset.

Every refusal is an ``InputFileError`` (a ``TopologyError``, so a ``ValueError``) of one line that starts with
the path as given.

Numbers in such files are read with ``read_figure``: the text is bounded first by ``topologies.numbers``'
limits (``MAX_TEXT`` characters, ``MAX_DIGITS`` significant digits, a decimal exponent of at most
``MAX_EXPONENT``), and only then converted, so no door converts an integer of hundreds of digits (an
``OverflowError`` as a float) or an exponent of millions (minutes as a Fraction); the value is then held to the
caller's range.
"""
from __future__ import annotations

import errno
import math
import os
import re
import stat

from .model import TopologyError
from .numbers import MAX_DIGITS, MAX_EXPONENT, MAX_TEXT, shown

__all__ = ["InputFileError", "display_name", "file_kind", "read_input", "read_input_text", "read_figure",
           "figure_problem"]

_NUMBER = re.compile(r"([+-]?)([0-9]*)(?:\.([0-9]*))?(?:[eE]([+-]?[0-9]+))?", re.ASCII)
_PLAIN = re.compile(r"[0-9]{1,15}", re.ASCII)
_PLAIN_FLOAT = re.compile(r"[0-9]{1,15}(?:\.[0-9]{1,15})?", re.ASCII)


class InputFileError(TopologyError):
    """A named input file that cannot be read; one line that starts with the path. ``why`` is the message
    without the path."""

    def __init__(self, name: str, why: str):
        super().__init__(f"{name}: {why}")
        self.why = why


def file_kind(mode: int) -> str | None:
    """What a file that is not a regular file is, in words; None for a regular file."""
    if stat.S_ISREG(mode):
        return None
    if stat.S_ISDIR(mode):
        return "a folder"
    if stat.S_ISFIFO(mode):
        return "a FIFO (named pipe)"
    if stat.S_ISSOCK(mode):
        return "a socket"
    if stat.S_ISCHR(mode) or stat.S_ISBLK(mode):
        return "a device"
    return "a special file"


def _why(exc: OSError) -> str:
    if exc.errno == errno.ENOENT:
        return "no such file"
    if exc.errno == errno.ELOOP:
        return "a loop of symbolic links"
    return (exc.strerror or str(exc) or type(exc).__name__).replace("\n", " ")


def display_name(name: str | bytes) -> str:
    """A path as messages show it: as given up to 200 characters, control characters escaped."""
    if isinstance(name, bytes):
        name = name.decode("utf-8", "backslashreplace")
    text = name if len(name) <= 200 else name[:200] + "..."
    return text if text.isprintable() else repr(text)[1:-1]


def read_input(path: str | os.PathLike, limit: int, what: str = "file") -> bytes:
    """The bytes of the regular file at ``path``, at most ``limit`` (module docstring); ``what`` names the kind
    of file in the messages ("benchmark log", "price file")."""
    name = os.fspath(path)
    shown_name = display_name(name)
    if not name:
        raise InputFileError("(no name)", f"the {what} needs a file name")
    try:
        fd = os.open(name, os.O_RDONLY | getattr(os, "O_NONBLOCK", 0) | getattr(os, "O_CLOEXEC", 0))
    except OSError as exc:
        raise InputFileError(shown_name, f"cannot read the {what}: {_why(exc)}") from None
    try:
        info = os.fstat(fd)
        kind = file_kind(info.st_mode)
        if kind is not None:
            raise InputFileError(shown_name, f"the {what} is {kind}, not a regular file")
        if info.st_size > limit:
            raise InputFileError(shown_name, f"the {what} is above the limit of {limit:,} bytes")
        os.set_blocking(fd, True)
        chunks, got = [], 0
        while got <= limit:
            chunk = os.read(fd, min(1 << 20, limit + 1 - got))
            if not chunk:
                break
            chunks.append(chunk)
            got += len(chunk)
    except OSError as exc:
        raise InputFileError(shown_name, f"cannot read the {what}: {_why(exc)}") from None
    finally:
        os.close(fd)
    if got > limit:
        raise InputFileError(shown_name, f"the {what} is above the limit of {limit:,} bytes")
    return b"".join(chunks)


def read_input_text(path: str | os.PathLike, limit: int, what: str = "file") -> str:
    """``read_input`` decoded as UTF-8 (a leading byte-order mark dropped); InputFileError naming the file and the
    first byte that is not UTF-8."""
    data = read_input(path, limit, what)
    try:
        return data.decode("utf-8-sig")
    except UnicodeDecodeError as exc:
        raise InputFileError(display_name(os.fspath(path)), f"the {what} is not UTF-8 text (byte {exc.start})") \
            from None


def figure_problem(token: str) -> str | None:
    """Why the text ``token`` is not a bounded decimal number (module docstring), or None when it is one."""
    if len(token) > MAX_TEXT:
        return f"has more than {MAX_TEXT} characters"
    m = _NUMBER.fullmatch(token)
    if token.strip("+-").lower() in ("nan", "inf", "infinity"):
        return "must be a finite number"
    if m is None or not (m.group(2) or m.group(3)):
        return "is not a number"
    whole, part, exponent = m.group(2), m.group(3) or "", m.group(4)
    digits = (whole + part).lstrip("0")
    if not digits:
        return None
    if len(digits.rstrip("0")) > MAX_DIGITS:
        return f"has more than {MAX_DIGITS} significant digits"
    lead = len(digits) - 1 + (int(exponent) if exponent else 0) - len(part)
    if abs(lead) > MAX_EXPONENT:
        return f"is beyond 10^{MAX_EXPONENT} in size"
    return None


def read_figure(token: str, what: str, where: str, low: float = 0.0, high: float = 1e30,
                whole: bool = False) -> float | int:
    """The number written as ``token`` (a decimal, bounded by ``figure_problem`` before it is converted), held to
    ``low`` .. ``high``; an int when ``whole`` (then the text must be an integer). ValueError of one line
    ``where: what ...`` otherwise (callers wrap it in their own error type)."""
    if (_PLAIN if whole else _PLAIN_FLOAT).fullmatch(token) is not None:   # short and plain: bounded as it is
        value = int(token) if whole else float(token)
        if low <= value <= high:
            return value
    problem = figure_problem(token)
    if problem is None and whole and not re.fullmatch(r"[+-]?[0-9]+", token, re.ASCII):
        problem = "is not a whole number"
    if problem is not None:
        raise ValueError(f"{where}: {what} {problem}: {shown(token[:40], quoted=True)}")
    value = int(token) if whole else float(token)
    if not math.isfinite(value) or not low <= value <= high:
        raise ValueError(f"{where}: {what} must be a finite number of at least {low:g} and at most {high:g}, got "
                         f"{shown(token[:40], quoted=True)}")
    return value
