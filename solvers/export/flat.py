"""An MSCCL program as flat numpy columns, read straight from a file exactly as ``to_xml`` writes it.

A 256-rank program has about a million steps; reading them into ``Step`` objects and checking them one by one
costs seconds, while the same file as columns (one row per step, per threadblock and per rank) is checked by a few
array passes (``flat_check``). ``read_flat`` accepts exactly the files ``msccl_xml._read_as_written`` reads line
by line, minus any step whose type or buffer is not a known word or whose numbers do not fit 64 bits; for anything
else it gives None and the caller reads the file into objects as before. ``FlatProgram.to_algo`` gives the very
objects ``parse_xml`` would have, for the messages of the object checker when a fast check finds a fault.
"""
from __future__ import annotations

import re
import xml.etree.ElementTree as ET
from dataclasses import dataclass

import numpy as np

from .msccl_xml import _GPU_LINE, _TB_LINE, _algo
from .program import STEP_TYPES, Algo, Gpu, Step, Tb

TYPE_CODE = {name: k for k, name in enumerate(STEP_TYPES)}
BUFFERS = ("i", "o", "s")
BUF_CODE = {name: k for k, name in enumerate(BUFFERS)}
_INT = r'"(-?[0-9]{1,18})"'           # at most 18 digits: always within int64
_WORD = r'"([a-z]+)"'
_STEP_LINES = re.compile(f"^      <step s={_INT} type={_WORD} srcbuf={_WORD} srcoff={_INT} dstbuf={_WORD} "
                         f"dstoff={_INT} cnt={_INT} depid={_INT} deps={_INT} hasdep={_INT}/>$", re.MULTILINE)
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
        head = ET.fromstring(first + "</algo>")
    except ET.ParseError:
        return None
    if len(head) or head.text is not None:
        return None
    header, dialect = _algo(head.attrib, dialect)
    gpus: list[tuple] = []
    tbs: list[tuple] = []
    tb_steps: list[int] = []
    in_gpu = False
    pieces = text[end + 1:len(text) - 8].split("    </tb>\n")     # each but the last ends in a threadblock
    for k, piece in enumerate(pieces):
        at = len(piece) if k == len(pieces) - 1 else piece.find("    <tb ")
        if at < 0 or (at and piece[at - 1] != "\n"):
            return None
        for line in piece[:at].split("\n")[:-1]:           # ranks opening and closing before the threadblock
            if not in_gpu and (m := _GPU_LINE.fullmatch(line)) is not None:
                gpus.append(tuple(map(int, m.groups())))
                in_gpu = True
            elif line == "  </gpu>" and in_gpu:
                in_gpu = False
            else:
                return None
        if at == len(piece):
            break
        tb_end = piece.find("\n", at)
        m = _TB_LINE.fullmatch(piece, at, tb_end) if tb_end >= 0 else None
        if m is None or not in_gpu:
            return None
        tbs.append((len(gpus) - 1, *map(int, m.groups())))
        tb_steps.append(piece.count("\n", tb_end + 1))       # its step lines: each must match _STEP_LINES
    if in_gpu:
        return None
    found = _STEP_LINES.findall(text)
    if len(found) != sum(tb_steps):          # a line inside a threadblock not written as to_xml writes a step
        return None
    values = list(zip(*found)) if found else [()] * 10
    steps = {}
    for name, col in zip(("s", "type", "srcbuf", "srcoff", "dstbuf", "dstoff", "cnt", "depid", "deps", "hasdep"),
                         values):
        if name in ("type", "srcbuf", "dstbuf"):
            try:
                got = np.fromiter(map((TYPE_CODE if name == "type" else BUF_CODE).__getitem__, col), np.int64,
                                  len(col))
            except KeyError:                 # an unknown word: the object reader names it
                return None
        else:
            got = np.fromstring(" ".join(col), dtype=np.int64, sep=" ") if col else np.empty(0, np.int64)
            if len(got) != len(col):
                return None
        steps[name] = got
    g = np.array(gpus, dtype=np.int64).reshape(-1, 4)
    t = np.array(tbs, dtype=np.int64).reshape(-1, 5)
    start = np.zeros(len(tbs) + 1, np.int64)
    np.cumsum(tb_steps, out=start[1:])
    return FlatProgram(header, g[:, 0], g[:, 1], g[:, 2], g[:, 3], t[:, 0], t[:, 1], t[:, 2], t[:, 3], t[:, 4],
                       start, steps), dialect
