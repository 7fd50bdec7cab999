"""An MSCCL program as flat numpy columns, read straight from a file exactly as ``to_xml`` writes it.

A 256-rank program has about a million steps; reading them into ``Step`` objects and checking them one by one
costs seconds, while the same file as columns (one row per step, per threadblock and per rank) is checked by a few
array passes (``flat_check``). ``read_flat`` accepts exactly the files ``msccl_xml._read_as_written`` reads line
by line, minus any step whose type or buffer is not a known word, any value of more than 18 digits (so every
value fits 64 bits) and any value with a leading zero (``010``: the runtimes read integers with
``strtol(str, NULL, 0)``, to which that is octal 8; ``to_xml`` never writes one, and ``msccl_xml.parse_xml``
names it); for anything else it gives None and the caller reads the file into objects as before. It
makes no Python object per value: the body's digits all read as 0 leave a few distinct line shapes, each matched
once against the line formats; the lines of one shape have their values at the same places, so each value of a
shape is read for all its lines at once. ``FlatProgram.to_algo`` gives the very objects ``parse_xml`` would
have, for the messages of the object checker when a fast check finds a fault.
"""
from __future__ import annotations

import re
from dataclasses import dataclass

import numpy as np

from .msccl_xml import Lines, _algo, _parse, check_references
from .program import STEP_TYPES, Algo, Gpu, Step, Tb, XmlError

TYPE_CODE = {name: k for k, name in enumerate(STEP_TYPES)}
BUFFERS = ("i", "o", "s")
BUF_CODE = {name: k for k, name in enumerate(BUFFERS)}
_INT = rb'"-?0{1,18}"'           # a value read with its digits as 0: at most 18 digits, always within int64
_WORD = rb'"([a-z]+)"'
_STEP_SHAPE = re.compile(rb"      <step s=%s type=%s srcbuf=%s srcoff=%s dstbuf=%s dstoff=%s cnt=%s depid=%s "
                         rb"deps=%s hasdep=%s/>" % (_INT, _WORD, _WORD, _INT, _WORD, _INT, _INT, _INT, _INT, _INT))
_TB_SHAPE = re.compile(rb"    <tb id=%s send=%s recv=%s chan=%s>" % ((_INT,) * 4))
_GPU_SHAPE = re.compile(rb"  <gpu id=%s i_chunks=%s o_chunks=%s s_chunks=%s>" % ((_INT,) * 4))
_GRAMMAR = re.compile(rb"(?:G(?:TS*t)*g)*")     # lines by kind: rank, threadblock, step and their ends
_DIGITS_AS_ZERO = bytes.maketrans(b"123456789", b"000000000")
_VALUE_RUN = re.compile(rb"-?(0+)")          # a value in a line whose digits read as 0
_VALUES_PER_KIND = np.zeros(256, np.int64)
_VALUES_PER_KIND[[ord("G"), ord("T"), ord("S")]] = 4, 4, 7
INT_FIELDS = ("s", "srcoff", "dstoff", "cnt", "depid", "deps", "hasdep")


@dataclass
class FlatProgram:
    """``header``: the ``<algo>`` attributes (an ``Algo`` without GPUs). Per rank in file order ``gpu_id``,
    ``i_chunks``, ``o_chunks``, ``s_chunks``; per threadblock in file order ``tb_gpu`` (its rank's row),
    ``tb_id``, ``tb_send``, ``tb_recv``, ``tb_chan`` and ``tb_start`` (its first step's row; ``tb_start[-1]`` is
    the number of steps); per step in file order ``steps``: the integer fields of ``INT_FIELDS`` and ``type``,
    ``srcbuf``, ``dstbuf`` as codes (``TYPE_CODE``, ``BUF_CODE``)."""

    header: Algo
    gpu_id: np.ndarray
    i_chunks: np.ndarray
    o_chunks: np.ndarray
    s_chunks: np.ndarray
    tb_gpu: np.ndarray
    tb_id: np.ndarray
    tb_send: np.ndarray
    tb_recv: np.ndarray
    tb_chan: np.ndarray
    tb_start: np.ndarray
    steps: dict

    @property
    def tb_len(self) -> np.ndarray:
        return np.diff(self.tb_start)

    def to_algo(self) -> Algo:
        """The program as ``parse_xml`` reads it: ``Algo``/``Gpu``/``Tb``/``Step`` objects."""
        st = self.steps
        types = np.array(STEP_TYPES, dtype=object)[st["type"]].tolist()
        bufs = np.array(BUFFERS, dtype=object)
        steps = list(map(Step, st["s"].tolist(), types, bufs[st["srcbuf"]].tolist(), st["srcoff"].tolist(),
                         bufs[st["dstbuf"]].tolist(), st["dstoff"].tolist(), st["cnt"].tolist(),
                         st["depid"].tolist(), st["deps"].tolist(), st["hasdep"].tolist()))
        gpus = [Gpu(*row) for row in zip(self.gpu_id.tolist(), self.i_chunks.tolist(), self.o_chunks.tolist(),
                                          self.s_chunks.tolist())]
        bounds = self.tb_start.tolist()
        for t, (g, ident, send, recv, chan) in enumerate(zip(self.tb_gpu.tolist(), self.tb_id.tolist(),
                                                            self.tb_send.tolist(), self.tb_recv.tolist(),
                                                            self.tb_chan.tolist())):
            gpus[g].tbs.append(Tb(ident, send, recv, chan, steps[bounds[t]:bounds[t + 1]]))
        algo = Algo(**{k: getattr(self.header, k) for k in ("name", "proto", "nchannels", "nchunksperloop", "ngpus",
                                                             "coll", "inplace", "outofplace", "min_bytes",
                                                             "max_bytes")})
        algo.gpus = gpus
        return algo


def read_flat(text: str, dialect: str | None) -> tuple[FlatProgram, str] | None:
    """The file as columns and its dialect, when it is written exactly as ``to_xml`` writes (module docstring);
    None otherwise. An ``<algo>`` tag the runtime would drop raises XmlError, as ``parse_xml`` does."""
    end = text.find("\n")
    if not text.startswith("<algo ") or not text.endswith("\n</algo>\n") or end + 9 > len(text):
        return None
    first = text[:end]
    if first.endswith("/>"):
        return None
    try:
        head = _parse(first + "</algo>")
    except XmlError:
        return None
    if len(head) or head.text is not None:
        return None
    if "&" in first:
        check_references(first)
    header, dialect = _algo(head, dialect, Lines(first + "</algo>", head))
    # the body line by line without a Python object per value: every digit is read as 0, so the distinct line
    # shapes are few and each is matched once; the values are then every run of digits and minus signs, in order
    # (no other character of a line written so is one of those)
    try:
        raw = text[end + 1:len(text) - 8].encode("ascii")      # between the <algo> line and "</algo>\n"
    except UnicodeEncodeError:
        return None
    shapes = raw.translate(_DIGITS_AS_ZERO).split(b"\n")
    shapes.pop()                                   # the body ends with a newline
    code = dict.fromkeys(shapes)
    kinds, words, runs = bytearray(), [], []
    for k, shape in enumerate(code):
        got = _shape(shape)
        if got is None:
            return None
        code[shape] = k
        kinds.append(got[0])
        words.append(got[1:])
        runs.append([(m.start(1), m.end(1) - m.start(1), m.group(0).startswith(b"-"))
                     for m in _VALUE_RUN.finditer(shape)])
    line_code = np.fromiter(map(code.__getitem__, shapes), np.int64, len(shapes))
    line_kind = np.frombuffer(bytes(kinds), np.uint8)[line_code]
    if _GRAMMAR.fullmatch(line_kind.tobytes()) is None:   # ranks holding threadblocks holding steps
        return None
    per_line = _VALUES_PER_KIND[line_kind]
    at = np.cumsum(per_line) - per_line                    # each line's first value
    values = _values(np.frombuffer(raw, np.uint8), np.array([len(s) + 1 for s in code])[line_code], line_code,
                     runs, at, int(per_line.sum()))
    if values is None:                                     # a value with a leading zero
        return None
    is_step = line_kind == ord("S")
    first = at[is_step]
    word = np.array(words, dtype=np.int64).reshape(-1, 3)[line_code[is_step]]
    steps = {name: values[first + k] for k, name in enumerate(INT_FIELDS)}
    steps.update(type=word[:, 0], srcbuf=word[:, 1], dstbuf=word[:, 2])
    g = values[at[line_kind == ord("G")][:, None] + np.arange(4)]
    is_tb = line_kind == ord("T")
    t = values[at[is_tb][:, None] + np.arange(4)]
    tb_gpu = (np.cumsum(line_kind == ord("G")) - 1)[is_tb]
    start = np.append(np.cumsum(is_step)[is_tb], np.count_nonzero(is_step)).astype(np.int64)
    return FlatProgram(header, g[:, 0], g[:, 1], g[:, 2], g[:, 3], tb_gpu, t[:, 0], t[:, 1], t[:, 2], t[:, 3],
                       start, steps), dialect


def _values(body: np.ndarray, length: np.ndarray, line_code: np.ndarray, runs: list, at: np.ndarray,
            total: int) -> np.ndarray | None:
    """Every value of the body in order (``length``: of each line with its newline; ``at``: each line's first
    value); None when a value of more than one digit starts with 0, which the runtime reads as octal (or stops
    at an 8 or 9) where this reads decimal. The lines of one shape have their values at the same places
    (``runs``: per shape, each value's first digit, its digits and sign), so each value of a shape is read for
    all its lines at once, digit by digit."""
    line_start = np.cumsum(length) - length
    order = np.argsort(line_code, kind="stable")
    bounds = np.searchsorted(line_code[order], np.arange(len(runs) + 1))
    values = np.empty(total, np.int64)
    for k, shape_runs in enumerate(runs):
        lines = order[bounds[k]:bounds[k + 1]]
        start, first = line_start[lines], at[lines]
        for r, (pos, width, negative) in enumerate(shape_runs):
            where = start + pos
            value = np.take(body, where).astype(np.int64) - ord("0")
            if width > 1 and not value.all():      # "010": octal 8 to strtol; parse_xml names it
                return None
            for _ in range(1, width):               # Horner's rule, one digit of every line at a time
                where += 1
                value *= 10
                value += np.take(body, where)
                value -= ord("0")
            values[first + r] = -value if negative else value
    return values


def _shape(line: bytes) -> tuple[int, int, int, int] | None:
    """(kind letter, type code, source buffer code, destination buffer code) of a line whose digits read as 0
    (``read_flat``); None for a line ``to_xml`` does not write. A step's fields are in ``_STEP_SHAPE``'s order."""
    if line == b"    </tb>":
        return ord("t"), 0, 0, 0
    if line == b"  </gpu>":
        return ord("g"), 0, 0, 0
    if _TB_SHAPE.fullmatch(line):
        return ord("T"), 0, 0, 0
    if _GPU_SHAPE.fullmatch(line):
        return ord("G"), 0, 0, 0
    m = _STEP_SHAPE.fullmatch(line)
    if m is None:
        return None
    kind, src, dst = (w.decode() for w in m.groups())
    if kind not in TYPE_CODE or src not in BUF_CODE or dst not in BUF_CODE:      # the object reader names it
        return None
    return ord("S"), TYPE_CODE[kind], BUF_CODE[src], BUF_CODE[dst]
