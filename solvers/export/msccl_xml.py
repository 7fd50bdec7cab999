"""MSCCL XML text: writing the program IR of ``program.py`` in both dialects (``to_xml``) and reading any file
back as the runtime parser would (``parse_xml``); notes/msccl-xml-and-anchors.md section 3. Named ``msccl_xml``
so that it never shadows the standard library's ``xml`` package.

Every integer attribute is read as the runtimes read it, with ``strtol(str, NULL, 0)`` on the text between the
quotes (``c_numbers``: ROCm/rccl and Azure/msccl-executor-nccl ``msccl_parser.h`` ``mscclXmlGetAttrInt``); a
value the runtime reads otherwise than the decimal number it shows (``010`` is 8 to the runtime, ``0_1`` is 0,
``&#49;`` is 0: the runtime decodes no XML reference) is an XmlError naming the line, the element, the
attribute and both readings.
"""
from __future__ import annotations

import html
import re
import xml.etree.ElementTree as ET
from xml.parsers import expat

from defusedxml import DefusedXmlException, DTDForbidden, EntitiesForbidden, ExternalReferenceForbidden
from defusedxml.ElementTree import fromstring as _defused_fromstring

from .c_numbers import number, plain_reading, read_int, show, strtol_reading
from .program import DIALECT_COLL, MAX_NODES_PER_RANK, Algo, Gpu, Step, Tb, XmlError


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
INT_ATTRS = {"algo": ("nchannels", "nchunksperloop", "ngpus", "inplace", "outofplace", "minBytes", "maxBytes"),
             "gpu": ("id", "i_chunks", "o_chunks", "s_chunks"), "tb": ("id", "send", "recv", "chan"),
             "step": ("s", "srcoff", "dstoff", "cnt", "depid", "deps", "hasdep")}


MAX_ATTRIBUTES = 16            # MSCCL_MAX_ATTR_COUNT: attributes the runtime's reader keeps per element
MAX_TOKEN_BYTES = 1 << 20      # bytes of one tag, comment or run of text (the reader's names and values: 255)
_FEED = 1 << 16                # bytes handed to expat at a time while counting


def element_limit(ngpus: int) -> int:
    """The most XML elements a file for ``ngpus`` ranks can hold and still load: each rank's reader holds at most
    ``MAX_NODES_PER_RANK`` XML nodes (MSCCL_MAX_NODES, 4096: ROCm/rccl and Azure/msccl-executor-nccl
    ``msccl_parser.h``), the ``<algo>``, all ``ngpus`` ``<gpu>`` elements and that rank's own threadblocks and
    steps, so a rank's ``<gpu>`` holds at most ``MAX_NODES_PER_RANK - 1 - ngpus`` of them and the file
    ``1 + ngpus + ngpus * (MAX_NODES_PER_RANK - 1 - ngpus)``: 4096 for one rank, 16,369 for four, 4,194,305 at
    most (2048 ranks). An ``ngpus`` below 1 (or unreadable) counts as 1; one that no rank's reader holds
    (``ngpus + 1 > MAX_NODES_PER_RANK``) allows ``MAX_NODES_PER_RANK``."""
    g = max(1, ngpus)
    if g + 1 >= MAX_NODES_PER_RANK:
        return MAX_NODES_PER_RANK
    return 1 + g + g * (MAX_NODES_PER_RANK - 1 - g)


def count_elements(text: str) -> int:
    """The elements of ``text``, counted by expat before any tree is built (nothing is kept of them), DTDs
    forbidden; XmlError in one line, naming the limit, as soon as there are more than ``element_limit`` of the
    first element's ``ngpus`` (as the runtime's strtol reads it), an element has more than ``MAX_ATTRIBUTES``
    attributes (the runtime's reader keeps 16 and drops the rest), or a tag, comment or run of text is longer
    than ``MAX_TOKEN_BYTES`` (expat would hold it whole). DefusedXmlException for a DOCTYPE, ExpatError for text
    that is not well formed."""
    parser = expat.ParserCreate("utf-8")
    parser.ordered_attributes = True
    seen = [0, MAX_NODES_PER_RANK, 0]       # elements, their limit, byte index of the last tag

    def start(name, attrs):
        seen[0] += 1
        seen[2] = parser.CurrentByteIndex
        if seen[0] == 1:
            ngpus = next((attrs[k + 1] for k in range(0, len(attrs), 2) if attrs[k] == "ngpus"), "")
            seen[1] = element_limit(strtol_reading(ngpus[:64]))
        elif seen[0] > seen[1]:
            raise XmlError(f"line {parser.CurrentLineNumber}: more than {seen[1]} XML elements, above what the "
                           f"runtime's reader loads for this <algo>'s ngpus: {MAX_NODES_PER_RANK} XML nodes per "
                           "rank (MSCCL_MAX_NODES), the <algo>, every <gpu> and the rank's threadblocks and steps")
        if len(attrs) > 2 * MAX_ATTRIBUTES:
            raise XmlError(f"line {parser.CurrentLineNumber}: <{name[:40]}> has {len(attrs) // 2} attributes, above "
                           f"the {MAX_ATTRIBUTES} the runtime's reader keeps (MSCCL_MAX_ATTR_COUNT; it drops the rest)")

    def end(_name):
        seen[2] = parser.CurrentByteIndex

    def doctype(name, sysid, pubid, _internal):
        raise DTDForbidden(name, sysid, pubid)

    def entity(name, _parameter, value, base, sysid, pubid, _notation):
        raise EntitiesForbidden(name, value, base, sysid, pubid, _notation)

    def external(_context, base, sysid, pubid):
        raise ExternalReferenceForbidden(_context, base, sysid, pubid)

    parser.StartElementHandler, parser.EndElementHandler = start, end
    parser.StartDoctypeDeclHandler, parser.EntityDeclHandler = doctype, entity
    parser.ExternalEntityRefHandler = external
    fed = 0
    for at in range(0, len(text), _FEED):
        piece = text[at:at + _FEED].encode("utf-8", "surrogatepass")
        fed += len(piece)
        parser.Parse(piece, False)
        if fed - seen[2] > MAX_TOKEN_BYTES:
            raise XmlError(f"line {parser.CurrentLineNumber}: a tag, comment or run of text longer than "
                           f"{MAX_TOKEN_BYTES} bytes (the runtime's reader takes names and values of at most 255 "
                           "characters)")
    parser.Parse(b"", True)
    return seen[0]


def _parse(text: str) -> ET.Element:
    """``text`` as an element tree, read through defusedxml with DTDs forbidden: no DOCTYPE, so no entity (billion
    laughs) and no external DTD or entity (XXE) is ever expanded or fetched; the runtimes' own readers have no DTD
    support either. The elements are counted first, streaming, without a tree (``count_elements``: a file of
    16.7 million empty elements is refused after 16,369 of them for 4 ranks). XmlError in one line for that or for
    XML that is not well formed."""
    try:
        count_elements(text)
        return _defused_fromstring(text, forbid_dtd=True)
    except DefusedXmlException as exc:
        raise XmlError(f"DOCTYPE and ENTITY declarations are not allowed ({type(exc).__name__})") from None
    except (ET.ParseError, expat.ExpatError) as exc:
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
    if "&" in text:
        check_references(text)
    lines = Lines(text, root)
    numbers = _Numbers()
    algo, dialect = _algo(root, dialect, lines)
    for g in root.findall("gpu"):
        for key in ("id", "i_chunks", "o_chunks", "s_chunks"):
            if key not in g.attrib:
                raise XmlError(f"attribute {key} of <gpu> is missing")
        gpu = Gpu(*(_int(g, k, lines) for k in ("id", "i_chunks", "o_chunks", "s_chunks")))
        for t in g.findall("tb"):
            for key in ("id", "send", "recv", "chan"):
                if key not in t.attrib:
                    raise XmlError(f"attribute {key} of <tb> on gpu {gpu.id} is missing")
            tb = Tb(*(_int(t, k, lines) for k in ("id", "send", "recv", "chan")))
            tb.steps = _steps(t.findall("step"), tb.id, gpu.id, lines, numbers)
            gpu.tbs.append(tb)
        algo.gpus.append(gpu)
    return algo, dialect


def _algo(head: ET.Element, dialect: str | None, lines: "Lines | None" = None) -> tuple[Algo, str]:
    """The program's ``<algo>`` attributes (no GPUs yet) and the dialect, guessed when not given; ``lines``
    finds the line of a number the runtime reads otherwise (``_int``)."""
    a = head.attrib
    if dialect is None:
        dialect = "executor" if ("outofplace" in a or "minBytes" in a) else "msccl"
    for key in _ALGO_REQUIRED[dialect]:
        if key not in a:
            raise XmlError(f"attribute {key} of <algo> is missing ({dialect} dialect): the runtime drops the algorithm")
    algo = Algo(a.get("name", ""), a["proto"], _int(head, "nchannels", lines), _int(head, "nchunksperloop", lines),
                _int(head, "ngpus", lines), a["coll"], _int(head, "inplace", lines),
                _int(head, "outofplace", lines) if "outofplace" in a else 0,
                _int(head, "minBytes", lines) if "minBytes" in a else 0,
                _int(head, "maxBytes", lines) if "maxBytes" in a else 1 << 27)
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
    line holds is an integer of ASCII digits or a lowercase word, which ElementTree would read the same; a number
    the runtime reads otherwise (``010``, octal to its strtol: ``_Numbers``) also gives None, and the reading
    that follows names it. The ``<algo>`` tag is read by ElementTree itself (its name may hold escaped
    characters)."""
    lines = text.split("\n")
    if len(lines) < 3 or lines[-1] != "" or lines[-2] != "</algo>" or lines[0].endswith("/>"):
        return None
    try:
        head = _parse(lines[0] + "</algo>")
    except XmlError:
        return None
    if len(head) or head.text is not None:          # the first line holds more than the tag
        return None
    if "&" in lines[0]:
        check_references(lines[0])
    algo, dialect = _algo(head, dialect, Lines(lines[0] + "</algo>", head))
    gpu = tb = None
    step_line, tb_line, gpu_line = _STEP_LINE.fullmatch, _TB_LINE.fullmatch, _GPU_LINE.fullmatch
    n = _Numbers()
    try:
        for k in range(1, len(lines) - 2):
            line = lines[k]
            m = step_line(line)
            if m is not None:
                if tb is None:
                    return None
                s, kind, src, soff, dst, doff, cnt, depid, deps, hasdep = m.groups()
                tb.steps.append(Step(n[s], kind, src, n[soff], dst, n[doff], n[cnt], n[depid], n[deps], n[hasdep]))
            elif line == "    </tb>" and tb is not None:
                gpu.tbs.append(tb)
                tb = None
            elif (m := tb_line(line)) is not None and gpu is not None and tb is None:
                tb = Tb(*map(n.__getitem__, m.groups()))
            elif (m := gpu_line(line)) is not None and gpu is None:
                gpu = Gpu(*map(n.__getitem__, m.groups()))
            elif line == "  </gpu>" and gpu is not None and tb is None:
                algo.gpus.append(gpu)
                gpu = None
            else:
                return None
    except _Unreadable:
        return None
    return (algo, dialect) if gpu is None else None


class _Unreadable(ValueError):
    """A number the runtime reads otherwise than it is written (``_Numbers``)."""


class _Numbers(dict):
    """Attribute text -> value, for the texts the runtime reads as what they show (``c_numbers.read_int``), each
    worked out once; _Unreadable for any other text. A file repeats few distinct values, so its numbers are
    mostly dictionary hits (faster than int()); a miss that ``%d`` could have written is checked by int() and
    str(), anything else by ``read_int``."""

    __slots__ = ()

    def __missing__(self, text: str) -> int:
        try:
            value = int(text)
            if str(value) != text:
                raise ValueError(text)
        except ValueError:
            value, problem = read_int(text)
            if problem is not None:
                raise _Unreadable(text) from None
        self[text] = value
        return value


def _steps(elements, tb: int, gpu: int, lines: "Lines | None" = None, n: "_Numbers | None" = None) -> list[Step]:
    """The <step> elements of one threadblock. Files are large (a 256-rank program has about a million steps), so
    the common case reads every attribute at once and only a step that fails is looked at again for the message
    (``n``: the numbers read so far, shared by a file's threadblocks)."""
    out = []
    append = out.append
    if n is None:
        n = _Numbers()
    try:
        for e in elements:
            b = e.attrib
            append(Step(n[b["s"]], b["type"], b["srcbuf"], n[b["srcoff"]], b["dstbuf"], n[b["dstoff"]],
                        n[b["cnt"]], n[b["depid"]], n[b["deps"]], n[b["hasdep"]]))
    except (KeyError, ValueError):
        e = elements[len(out)]
        for key in _STEP_ATTRS:
            if key not in e.attrib:
                raise XmlError(f"attribute {key} of <step> in tb {tb} on gpu {gpu} is missing") from None
        for key in INT_ATTRS["step"]:
            _int(e, key, lines)
        raise
    return out


def _int(element: ET.Element, key: str, lines: "Lines | None" = None) -> int:
    """Integer attribute ``key`` of ``element`` as the runtime reads it (``c_numbers.read_int``); XmlError naming
    the line (``lines``), the element, the attribute and both readings where the runtime reads it otherwise."""
    text = element.attrib[key]
    value, problem = read_int(text)
    if problem is None:
        return value
    line = lines(element, key) if lines is not None else None
    raise XmlError(f"{'' if line is None else f'line {line}: '}<{element.tag}> {key}={show(text)} {problem}")


class _Found(Exception):
    pass


class Lines:
    """The line of an element's attribute in ``text`` (which ``root`` was parsed from), worked out only when a
    message needs it: ElementTree keeps no line numbers, so the text is read again by expat up to the element
    (the same one in document order: ``root.iter()``), and the attribute is looked for from where its tag starts.
    The text went through ``_parse`` already, so it holds no DTD to expand."""

    def __init__(self, text: str, root: ET.Element):
        self.text, self.root = text, root

    def __call__(self, element: ET.Element, key: str) -> int | None:
        ordinal = next((k for k, e in enumerate(self.root.iter()) if e is element), None)
        if ordinal is None:
            return None
        data = self.text.encode("utf-8")
        parser = expat.ParserCreate()
        seen = [0]

        def start(_name, _attrs):
            if seen[0] == ordinal:
                raise _Found(parser.CurrentByteIndex)
            seen[0] += 1

        parser.StartElementHandler = start
        try:
            parser.Parse(data, True)
            return None
        except _Found as found:
            at = found.args[0]
        except expat.ExpatError:
            return None
        end = data.find(b"<", at + 1)            # no "<" inside a tag: not even in an attribute value
        m = re.compile(rb"\s%s\s*=" % re.escape(key.encode())).search(data, at, len(data) if end < 0 else end)
        return data.count(b"\n", 0, m.start() + 1 if m else at) + 1


_ATTR = re.compile(r'\s+([A-Za-z_][\w.:-]*)\s*=\s*"([^"]*)"')
_TAG = re.compile(r"<([A-Za-z_][\w.:-]*)")


def check_references(text: str) -> None:
    """XmlError for an integer attribute written with an XML reference (``cnt="&#49;"``): the runtime's reader
    (``mscclXmlGetValue``, msccl_parser.cc) takes the characters between the quotes as they stand and strtol reads
    ``&#49;`` as 0, where ElementTree decodes 1. Only the tags that hold an ``&`` are looked at."""
    done = -1
    at = text.find("&")
    while at >= 0:
        start = text.rfind("<", 0, at)
        if start > done:
            done = start
            tag = _TAG.match(text, start)
            keys = INT_ATTRS.get(tag.group(1), ()) if tag else ()
            pos = tag.end() if tag else start
            while keys and (m := _ATTR.match(text, pos)) is not None:
                pos = m.end()
                key, raw = m.groups()
                if key in keys and "&" in raw:
                    meant = plain_reading(html.unescape(raw))
                    line = text.count("\n", 0, m.start(1)) + 1
                    raise XmlError(f"line {line}: <{tag.group(1)}> {key}={show(raw)} is {strtol_reading(raw)} to the "
                                   "runtime (its reader decodes no XML reference: strtol reads the text between the "
                                   f"quotes as it stands), not {number(meant)}")
        at = text.find("&", at + 1)
