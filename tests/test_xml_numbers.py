"""Integer attributes of MSCCL files read as the runtimes read them: ``strtol(str, NULL, 0)`` on the text between the
quotes (ROCm/rccl and Azure/msccl-executor-nccl ``msccl_parser.h`` ``mscclXmlGetAttrInt``). ``c_numbers`` against a
table, a plain reference and the C library's own strtol; then files through ``check_xml`` and the ``check-xml``
command: a number the runtime reads otherwise than it shows is an error naming line, element, attribute and both
readings; hexadecimal, signed and spaced numbers are read with the runtime's values."""
import ctypes
import ctypes.util
import re
import subprocess
import sys

import pytest
from hypothesis import given, settings
from hypothesis import strategies as st

import solvers.export.msccl_xml as msccl_xml
from solvers.export import XmlError, check_xml, export, parse_xml
from solvers.export.c_numbers import LONG_MAX, LONG_MIN, differs, plain_reading, read_int, strtol_reading
from solvers.export.flat import read_flat
from solvers.synthesize import synthesize
from studio.cli import main
from topologies import load

from .conftest import ROOT

STRTOL = [
    ("  -0x1f", -31), ("+7", 7), ("010", 8), ("0x", 0), ("0x1g", 1), ("09", 0), ("0_1", 0), ("١", 0), ("１０", 0),
    ("", 0), ("   ", 0), ("2147483648", 2147483648), ("0X1F", 31), ("-0", 0), ("\t\n\v\f\r 5", 5), ("0777", 511),
    ("12abc", 12), ("1 2", 1), ("- 1", 0), ("+-1", 0), ("x1", 0), ("0x-1", 0), ("1\x002", 1), ("00", 0),
    ("99999999999999999999", LONG_MAX), ("-99999999999999999999", LONG_MIN), ("0x8000000000000000", LONG_MAX),
    ("-9223372036854775808", LONG_MIN), ("\u00a01", 0), ("1e3", 1), ("1.5", 1), ("0b1", 0),
]


@pytest.mark.parametrize("text, value", STRTOL)
def test_strtol_reading_table(text, value):
    assert strtol_reading(text) == value


@pytest.mark.parametrize("text, value", [
    ("010", 10), (" +7 ", 7), ("-1", -1), ("09", 9), ("0x10", None), ("0_1", None), ("١", None), ("１０", None),
    ("", None), ("   ", None), ("1 2", None), ("12abc", None), ("- 1", None), ("1_0", None)])
def test_plain_reading_table(text, value):
    assert plain_reading(text) == value


@pytest.mark.parametrize("text, value", [
    ("0x10", 16), ("+1", 1), (" 1", 1), ("1 ", 1), ("-1", -1), ("0", 0), ("00", 0), ("07", 7), ("-0x1f", -31),
    ("2147483648", 2147483648), ("99999999999999999999", LONG_MAX)])
def test_read_int_accepts_what_the_runtime_reads_as_shown(text, value):
    assert read_int(text) == (value, None)


@pytest.mark.parametrize("text, words", [
    ("010", ["is 8 to the runtime", "octal", "not 10"]), ("08", ["is 0 to the runtime", 'stops at "8"', "not 8"]),
    ("09", ["is 0", "not 9"]), ("0_1", ["is 0", 'stops at "_"', "not an integer"]),
    ("12abc", ["is 12", 'stops at "a"', "not an integer"]), ("١", ["is 0", "ASCII digits only", "not an integer"]),
    ("１０", ["is 0", "ASCII"]), ("", ["is 0", "empty"]), ("   ", ["is 0", "blank"]),
    ("0x", ["is 0", 'stops at "x"']), ("0x1g", ["is 1", 'stops at "g"']), ("x", ["is 0", "no digits"])])
def test_read_int_names_both_readings(text, words):
    value, problem = read_int(text)
    assert value == strtol_reading(text) and problem is not None and "\n" not in problem
    for w in words:
        assert w in problem, (w, problem)


def test_differs_compares_the_readings():
    assert differs("010") and differs("0_1") and differs("0x10") and differs("١")
    assert not differs("10") and not differs(" +10 ") and not differs("07") and not differs("-1")


def reference(text: str) -> int:
    """strtol(text, NULL, 0) as the C standard words it: white space, a sign, then the longest prefix that is a
    hexadecimal (0x and a hex digit), octal (0 ...) or decimal constant; 0 without one; clamped to a long."""
    m = re.match(r"[ \t\n\v\f\r]*([+-]?)(0[xX][0-9a-fA-F]+|0[0-7]*|[1-9][0-9]*)", text)
    if m is None:
        return 0
    sign, body = m.groups()
    value = int(body[2:], 16) if body[:2] in ("0x", "0X") else int(body, 8) if body[0] == "0" else int(body)
    return max(LONG_MIN, min(LONG_MAX, -value if sign == "-" else value))


def _libc_strtol():
    name = ctypes.util.find_library("c")
    if sys.platform != "linux" or name is None or ctypes.sizeof(ctypes.c_long) != 8:
        return None
    f = ctypes.CDLL(name).strtol
    f.restype, f.argtypes = ctypes.c_long, (ctypes.c_char_p, ctypes.POINTER(ctypes.c_char_p), ctypes.c_int)
    return f


LIBC_STRTOL = _libc_strtol()


def libc(text: str) -> int:
    return LIBC_STRTOL(text.encode("utf-8"), None, 0)


ALPHABET = st.text(st.sampled_from("0123456789abcdefxX+- _\t"), max_size=24)


@settings(max_examples=600, deadline=None)
@given(ALPHABET)
def test_strtol_reading_matches_the_reference(text):
    assert strtol_reading(text) == reference(text)
    value, problem = read_int(text)
    assert value == strtol_reading(text)
    if not differs(text):                          # the same number either way: always accepted
        assert problem is None
    if problem is None:                            # accepted: the runtime read all of it (trailing blanks aside)
        assert re.fullmatch(r"[ \t]*[+-]?(0[xX][0-9a-fA-F]+|[0-9]+)[ \t]*", text), text


@pytest.mark.skipif(LIBC_STRTOL is None, reason="needs the C library's strtol with a 64-bit long")
@pytest.mark.parametrize("text, value", STRTOL)
def test_the_table_is_what_libc_strtol_says(text, value):
    assert libc(text.split("\0")[0]) == value


@pytest.mark.skipif(LIBC_STRTOL is None, reason="needs the C library's strtol with a 64-bit long")
@settings(max_examples=600, deadline=None)
@given(ALPHABET)
def test_strtol_reading_matches_libc(text):
    assert strtol_reading(text) == libc(text)


# --- files ---------------------------------------------------------------------------------------------------
@pytest.fixture(scope="module")
def written():
    topo = load("ring(4)")
    text, report = export(topo, synthesize(topo, "ring", "allgather").schedule)
    assert report.ok
    return text


def rewrite_first(text: str, attr: str, old: str, new: str) -> tuple[str, int]:
    """``text`` with the first ``attr="old"`` as ``attr="new"``, and that line's number."""
    lines = text.split("\n")
    k = next(k for k, line in enumerate(lines) if f' {attr}="{old}"' in line)
    lines[k] = lines[k].replace(f' {attr}="{old}"', f' {attr}="{new}"', 1)
    return "\n".join(lines), k + 1


def rewrite_all(text: str, attrs: tuple, form) -> str:
    return re.sub(r' (%s)="(-?\d+)"' % "|".join(attrs), lambda m: f' {m[1]}="{form(int(m[2]))}"', text)


def test_the_writers_files_take_the_fast_paths(written):
    assert msccl_xml._read_as_written(written, None) is not None and read_flat(written, None) is not None
    assert check_xml(written).ok


def test_an_octal_offset_is_an_error_naming_line_attribute_and_both_readings(written, tmp_path, capsys):
    bad, line = rewrite_first(written, "srcoff", "1", "010")
    assert read_flat(bad, None) is None and msccl_xml._read_as_written(bad, None) is None
    message = f'line {line}: <step> srcoff="010" is 8 to the runtime (strtol reads a leading 0 as octal), not 10'
    with pytest.raises(XmlError) as err:
        parse_xml(bad)
    assert str(err.value) == message
    report = check_xml(bad)
    assert not report.ok and report.first == message
    path = tmp_path / "octal.xml"
    path.write_text(bad)
    assert main(["check-xml", str(path)]) == 1
    err = capsys.readouterr().err
    assert message in err and err.count("\n") == 1
    proc = subprocess.run([sys.executable, "-m", "studio", "check-xml", str(path)], cwd=ROOT, capture_output=True,
                          text=True, timeout=120)
    assert proc.returncode == 1 and message in proc.stderr and "Traceback" not in proc.stderr


@pytest.mark.parametrize("attr, old, new, words", [
    ("dstoff", "2", "0_2", ['dstoff="0_2" is 0 to the runtime', "not an integer"]),
    ("cnt", "1", "1abc", ['cnt="1abc" is 1 to the runtime', 'stops at "a"']),
    ("s", "1", "١", ['s="١" is 0 to the runtime', "ASCII"]),
    ("depid", "-1", "", ['depid="" is 0 to the runtime', "empty"]),
    ("deps", "0", "09", ['deps="09" is 0 to the runtime', "not 9"]),
    ("hasdep", "0", "&#48;", ['hasdep="&#48;" is 0 to the runtime', "decodes no XML reference", "not 0"]),
    ("cnt", "1", "&#49;", ['cnt="&#49;" is 0 to the runtime', "not 1"]),
    ("send", "1", "01_", ['<tb> send="01_" is 1 to the runtime', "not an integer"]),
    ("i_chunks", "0", "0x", ['<gpu> i_chunks="0x" is 0 to the runtime', 'stops at "x"']),
    ("nchannels", "1", "010", ['line 1: <algo> nchannels="010" is 8 to the runtime', "not 10"]),
    ("inplace", "1", "&#49;", ['line 1: <algo> inplace="&#49;" is 0 to the runtime', "not 1"]),
    ("ngpus", "4", "4 x", ['line 1: <algo> ngpus="4 x" is 4 to the runtime']),
    ("maxBytes", "1099511627776", "0x10_0", ['<algo> maxBytes="0x10_0" is 16 to the runtime']),
])
def test_numbers_the_runtime_reads_otherwise_are_errors(written, attr, old, new, words):
    bad, line = rewrite_first(written, attr, old, new)
    report = check_xml(bad)
    assert not report.ok and report.first.startswith(f"line {line}: <"), report.first
    assert "\n" not in report.first
    for w in words:
        assert w in report.first, (w, report.first)


def test_the_line_is_the_attributes_line(written):
    text = "<!-- a comment\n over two lines -->\n" + written.replace(
        '<gpu id="2" i_chunks="0"', '<gpu id="2"\n      i_chunks="08"', 1)
    line = text.split("\n").index('      i_chunks="08" o_chunks="4" s_chunks="0">') + 1
    with pytest.raises(XmlError, match=rf'^line {line}: <gpu> i_chunks="08" is 0 to the runtime .*, not 8$'):
        parse_xml(text)


@pytest.mark.parametrize("form", [lambda v: f"0x{v:x}" if v >= 0 else f"-0x{-v:x}", lambda v: f"{v:+d}",
                                  lambda v: f" {v}", lambda v: f"{v} ", lambda v: f"0{v}" if 0 <= v < 8 else str(v)],
                         ids=["hex", "signed", "leading space", "trailing space", "octal digit"])
def test_numbers_the_runtime_reads_as_shown_are_read_so(written, form):
    fields = ("srcoff", "dstoff", "depid", "deps", "cnt", "s", "send", "recv", "chan", "i_chunks", "o_chunks",
              "s_chunks", "nchannels", "ngpus")
    other = rewrite_all(written, fields, form)
    assert other != written
    assert read_flat(other, None) is None
    report = check_xml(other)
    assert report.ok, report.first
    assert parse_xml(other) == parse_xml(written)
    assert report.steps == check_xml(written).steps


def test_hex_offsets_have_their_hex_values(written):
    text, _ = rewrite_first(written, "srcoff", "1", "0x3")
    steps = [st for g in parse_xml(text)[0].gpus for t in g.tbs for st in t.steps]
    before = [st for g in parse_xml(written)[0].gpus for t in g.tbs for st in t.steps]
    changed = [(a.srcoff, b.srcoff) for a, b in zip(steps, before) if a != b]
    assert changed == [(3, 1)]


def test_values_above_a_c_int_are_kept_for_the_checker(written):
    text, _ = rewrite_first(written, "nchannels", "1", "2147483648")
    report = check_xml(text)
    assert not report.ok and "2147483648" in report.first and "outside" in report.first
    text, _ = rewrite_first(written, "nchannels", "1", "0x80000000")
    report = check_xml(text)
    assert not report.ok and "2147483648" in report.first
