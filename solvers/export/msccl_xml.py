"""MSCCL XML text: writing the program IR of ``program.py`` in both dialects (``to_xml``) and reading any file
back as the runtime parser would (``parse_xml``); notes/msccl-xml-and-anchors.md section 3. Named ``msccl_xml``
so that it never shadows the standard library's ``xml`` package.
"""
from __future__ import annotations

import re
import xml.etree.ElementTree as ET

from defusedxml import DefusedXmlException
from defusedxml.ElementTree import fromstring as _defused_fromstring

from .program import DIALECT_COLL, Algo, Gpu, Step, Tb, XmlError


# the lines of a rank, a threadblock and a step (also written straight from columns by ``place.Placed.text``)
GPU_LINE = '  <gpu id="%d" i_chunks="%d" o_chunks="%d" s_chunks="%d">'
TB_LINE = '    <tb id="%d" send="%d" recv="%d" chan="%d">'
STEP_LINE = ('      <step s="%d" type="%s" srcbuf="%s" srcoff="%d" dstbuf="%s" dstoff="%d" cnt="%d" depid="%d" '
             'deps="%d" hasdep="%d"/>')


def to_xml(algo: Algo, dialect: str = "executor") -> str:
    """The file text. ``executor`` (MSCCL executor / RCCL, the default): coll="reducescatter", inplace,
    outofplace, minBytes and maxBytes. ``msccl``: the msccl-tools writer's attributes. No <?xml?> line."""
    lines = [algo_tag(algo, dialect)]
    for g in algo.gpus:
        lines.append(GPU_LINE % (g.id, g.i_chunks, g.o_chunks, g.s_chunks))
        for tb in g.tbs:
            lines.append(TB_LINE % (tb.id, tb.send, tb.recv, tb.chan))
            for st in tb.steps:
                lines.append(STEP_LINE % (st.s, st.type, st.srcbuf, st.srcoff, st.dstbuf, st.dstoff, st.cnt,
                                          st.depid, st.deps, st.hasdep))
            lines.append("    </tb>")
        lines.append("  </gpu>")
    lines.append("</algo>")
    return "\n".join(lines) + "\n"


def algo_tag(algo: Algo, dialect: str = "executor") -> str:
    """The opening ``<algo ...>`` tag of ``algo``'s file: the first line of ``to_xml``."""
    if dialect not in DIALECT_COLL:
        raise ValueError(f"unknown dialect {dialect!r} (executor or msccl)")
    coll = DIALECT_COLL[dialect].get(algo.coll, algo.coll)
    head = (f'<algo name="{_escape(algo.name)}" proto="{algo.proto}" nchannels="{algo.nchannels}" '
            f'nchunksperloop="{algo.nchunksperloop}" ngpus="{algo.ngpus}" coll="{coll}" inplace="{algo.inplace}"')
    if dialect == "executor":
        head += f' outofplace="{algo.outofplace}" minBytes="{algo.min_bytes}" maxBytes="{algo.max_bytes}"'
    return head + ">"


def _escape(text: str) -> str:
    return text.replace("&", "&amp;").replace('"', "&quot;").replace("<", "&lt;").replace(">", "&gt;")


_ALGO_REQUIRED = {"executor": ("nchunksperloop", "nchannels", "ngpus", "proto", "coll", "minBytes", "maxBytes",
                               "inplace", "outofplace"),
                  "msccl": ("name", "ngpus", "nchunksperloop", "nchannels", "proto", "coll", "inplace")}
_STEP_ATTRS = ("s", "type", "srcbuf", "srcoff", "dstbuf", "dstoff", "cnt", "depid", "deps", "hasdep")


def _parse(text: str) -> ET.Element:
    """``text`` as an element tree, read through defusedxml with DTDs forbidden: no DOCTYPE, so no entity (billion
    laughs) and no external DTD or entity (XXE) is ever expanded or fetched; the runtimes' own readers have no DTD
    support either. XmlError in one line for that or for XML that is not well formed."""
    try:
        return _defused_fromstring(text, forbid_dtd=True)
    except DefusedXmlException as exc:
        raise XmlError(f"DOCTYPE and ENTITY declarations are not allowed ({type(exc).__name__})") from None
    except ET.ParseError as exc:
        raise XmlError(f"not well-formed XML: {exc}") from None


def parse_xml(text: str, dialect: str | None = None) -> tuple[Algo, str]:
    """Read an MSCCL file as the runtime parser would; (Algo, dialect). The dialect is guessed from the
    attributes when not given (executor when outofplace/minBytes are present)."""
    stripped = text.lstrip()
    while stripped.startswith("<!--"):
        end = stripped.find("-->")
        if end < 0:
            raise XmlError("an XML comment is not closed")
        stripped = stripped[end + 3:].lstrip()
    if stripped.startswith("<?xml"):
        raise XmlError("the file starts with an <?xml ...?> declaration, which the runtime's XML reader cannot "
                       "parse (it expects the <algo> element first); remove that line")
    if text.startswith("<algo "):
        got = _read_as_written(text, dialect)
        if got is not None:
            return got
    root = _parse(text)
    if root.tag != "algo":
        raise XmlError(f"the top element is <{root.tag}>, not <algo>")
    algo, dialect = _algo(root.attrib, dialect)
    for g in root.findall("gpu"):
        for key in ("id", "i_chunks", "o_chunks", "s_chunks"):
            if key not in g.attrib:
                raise XmlError(f"attribute {key} of <gpu> is missing")
        gpu = Gpu(_int(g.attrib, "id", "gpu"), _int(g.attrib, "i_chunks", "gpu"), _int(g.attrib, "o_chunks", "gpu"),
                  _int(g.attrib, "s_chunks", "gpu"))
        for t in g.findall("tb"):
            for key in ("id", "send", "recv", "chan"):
                if key not in t.attrib:
                    raise XmlError(f"attribute {key} of <tb> on gpu {gpu.id} is missing")
            tb = Tb(*(_int(t.attrib, k, "tb") for k in ("id", "send", "recv", "chan")))
            tb.steps = _steps(t.findall("step"), tb.id, gpu.id)
            gpu.tbs.append(tb)
        algo.gpus.append(gpu)
    return algo, dialect


def _algo(a: dict, dialect: str | None) -> tuple[Algo, str]:
    """The program's ``<algo>`` attributes (no GPUs yet) and the dialect, guessed when not given."""
    if dialect is None:
        dialect = "executor" if ("outofplace" in a or "minBytes" in a) else "msccl"
    for key in _ALGO_REQUIRED[dialect]:
        if key not in a:
            raise XmlError(f"attribute {key} of <algo> is missing ({dialect} dialect): the runtime drops the algorithm")
    algo = Algo(a.get("name", ""), a["proto"], _int(a, "nchannels", "algo"), _int(a, "nchunksperloop", "algo"),
                _int(a, "ngpus", "algo"), a["coll"], _int(a, "inplace", "algo"),
                _int(a, "outofplace", "algo") if "outofplace" in a else 0,
                _int(a, "minBytes", "algo") if "minBytes" in a else 0,
                _int(a, "maxBytes", "algo") if "maxBytes" in a else 1 << 27)
    return algo, dialect


_INT = r'"(-?[0-9]+)"'
_WORD = r'"([a-z]+)"'
_GPU_LINE = re.compile(f"  <gpu id={_INT} i_chunks={_INT} o_chunks={_INT} s_chunks={_INT}>")
_TB_LINE = re.compile(f"    <tb id={_INT} send={_INT} recv={_INT} chan={_INT}>")
_STEP_LINE = re.compile(f"      <step s={_INT} type={_WORD} srcbuf={_WORD} srcoff={_INT} dstbuf={_WORD} "
                        f"dstoff={_INT} cnt={_INT} depid={_INT} deps={_INT} hasdep={_INT}/>")


def _read_as_written(text: str, dialect: str | None) -> tuple[Algo, str] | None:
    """A file exactly as ``to_xml`` writes it, read line by line (a 256-rank program has about a million steps);
    None as soon as a line is not written so, and the file is then read whole by ElementTree. Every value such a
    line holds is a plain integer or lowercase word, which ElementTree would read the same; the ``<algo>`` tag is
    read by ElementTree itself (its name may hold escaped characters)."""
    lines = text.split("\n")
    if len(lines) < 3 or lines[-1] != "" or lines[-2] != "</algo>" or lines[0].endswith("/>"):
        return None
    try:
        head = _parse(lines[0] + "</algo>")
    except XmlError:
        return None
    if len(head) or head.text is not None:          # the first line holds more than the tag
        return None
    algo, dialect = _algo(head.attrib, dialect)
    gpu = tb = None
    step_line, tb_line, gpu_line = _STEP_LINE.fullmatch, _TB_LINE.fullmatch, _GPU_LINE.fullmatch
    for k in range(1, len(lines) - 2):
        line = lines[k]
        m = step_line(line)
        if m is not None:
            if tb is None:
                return None
            s, kind, src, soff, dst, doff, cnt, depid, deps, hasdep = m.groups()
            tb.steps.append(Step(int(s), kind, src, int(soff), dst, int(doff), int(cnt), int(depid), int(deps),
                                 int(hasdep)))
        elif line == "    </tb>" and tb is not None:
            gpu.tbs.append(tb)
            tb = None
        elif (m := tb_line(line)) is not None and gpu is not None and tb is None:
            tb = Tb(*map(int, m.groups()))
        elif (m := gpu_line(line)) is not None and gpu is None:
            gpu = Gpu(*map(int, m.groups()))
        elif line == "  </gpu>" and gpu is not None and tb is None:
            algo.gpus.append(gpu)
            gpu = None
        else:
            return None
    return (algo, dialect) if gpu is None else None


def _steps(elements, tb: int, gpu: int) -> list[Step]:
    """The <step> elements of one threadblock. Files are large (a 256-rank program has about a million steps), so
    the common case reads every attribute at once and only a step that fails is looked at again for the message."""
    out = []
    append = out.append
    try:
        for e in elements:
            b = e.attrib
            append(Step(int(b["s"]), b["type"], b["srcbuf"], int(b["srcoff"]), b["dstbuf"], int(b["dstoff"]),
                        int(b["cnt"]), int(b["depid"]), int(b["deps"]), int(b["hasdep"])))
    except (KeyError, ValueError):
        b = elements[len(out)].attrib
        for key in _STEP_ATTRS:
            if key not in b:
                raise XmlError(f"attribute {key} of <step> in tb {tb} on gpu {gpu} is missing") from None
        for key in _STEP_ATTRS:
            if key not in ("type", "srcbuf", "dstbuf"):
                _int(b, key, "step")
        raise
    return out


def _int(attrs, key, where) -> int:
    try:
        return int(attrs[key])
    except ValueError:
        raise XmlError(f"attribute {key} of <{where}> is not an integer: {attrs[key]!r}") from None
