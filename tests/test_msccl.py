"""MSCCL XML: every export validates and simulates to its collective; hand-broken files are rejected for the
right reason; the real files that runtimes executed are accepted."""
import re
from pathlib import Path

import pytest

from solvers.export import (Algo, Gpu, Step, Tb, XmlError, check_xml, export, lower, parse_xml, simulate, to_xml,
                            validate)
from solvers.synthesize import synthesize
from studio.cli import main
from topologies import parse_topology

EXAMPLES = Path(__file__).resolve().parent / "data" / "msccl-examples"

CATALOGUE = [
    ("ring(4)", "ring"), ("biring(8)", "bfb"), ("uniring(2,5)", "bfb"), ("torus(3,4)", "bfb"),
    ("torus(3,3,3)", "bfb"), ("circulant(7,[2,3])", "bfb"), ("circulant(16,[3,4])", "bfb"),
    ("circulant(64)", "bfb"), ("kautz(2,2)", "bfb"), ("kautz(2,3)", "bfb"), ("gkautz(2,7)", "bfb"),
    ("gkautz(4,64)", "bfb"), ("debruijn(2,3)", "bfb"), ("line(kautz(2,1))", "expansion"),
    ("line(bipartite(2))", "expansion"), ("power(complete(3),2)", "expansion"),
    ("power(uniring(1,4),2)", "expansion"), ("degree(complete(3),2)", "expansion"),
    ("bidir(uniring(1,5))", "expansion"), ("hypercube(4)", "bfb"), ("complete(5)", "sptree"),
    ("bipartite(4)", "bfb"), ("twisted_torus(4,8)", "bfb"), ("dbjmod(2,3)", "expansion"),
]


@pytest.mark.parametrize("expr, algo", CATALOGUE)
@pytest.mark.parametrize("collective", ["allgather", "reduce_scatter", "allreduce"])
def test_every_export_validates_and_simulates(expr, algo, collective):
    topo = parse_topology(expr)
    result = synthesize(topo, algo, collective)
    text, report = export(topo, result.schedule)
    assert report.ok and report.ranks == topo.n
    assert not text.lstrip().startswith("<?xml")
    algo_ir, dialect = parse_xml(text)
    assert dialect == "executor" and validate(algo_ir) == [] and simulate(algo_ir) == []
    coll = {"reduce_scatter": "reducescatter"}.get(collective, collective)
    assert f'coll="{coll}"' in text and 'outofplace="' in text and 'minBytes="' in text


def test_catalogue_spans_the_sizes_asked_for():
    sizes = [parse_topology(e).n for e, _ in CATALOGUE]
    assert len(CATALOGUE) >= 20 and min(sizes) <= 4 and max(sizes) == 64


def test_msccl_tools_dialect():
    topo = parse_topology("circulant(8,[2,3])")
    text, report = export(topo, synthesize(topo, "bfb", "reduce_scatter").schedule, dialect="msccl")
    assert report.ok and 'coll="reduce_scatter"' in text and "minBytes" not in text and "outofplace" not in text
    assert check_xml(text).dialect == "msccl"


@pytest.mark.parametrize("path", sorted(EXAMPLES.glob("*.xml")), ids=lambda p: p.name)
def test_real_runtime_files_are_accepted(path, capsys):
    assert main(["check-xml", str(path)]) == 0
    assert capsys.readouterr().out.startswith("ok:")


# --- hand-broken files ---------------------------------------------------------------------------------------
def ring_allreduce_xml() -> str:
    topo = parse_topology("ring(4)")
    return export(topo, synthesize(topo, "ring", "allreduce").schedule, runtime="rccl")[0]


def first_match(text, pattern):
    m = re.search(pattern, text)
    assert m, pattern
    return m


def break_missing_attribute(text):
    return re.sub(r' maxBytes="\d+"', "", text, count=1)


def break_coll_spelling(_):
    topo = parse_topology("ring(4)")
    text = export(topo, synthesize(topo, "ring", "reduce_scatter").schedule)[0]
    return text.replace('coll="reducescatter"', 'coll="reduce_scatter"')


def break_send_order(text):
    """Swap the first two sends of gpu 0's first threadblock: the receiver stores each chunk in the wrong slot."""
    gpu0 = text.index('<gpu id="0"')
    steps = list(re.finditer(r'<step s="(\d+)" type="s" srcbuf="(\w)" srcoff="(\d+)" dstbuf="\w" dstoff="(\d+)"',
                             text[gpu0:]))
    a, b = steps[0], steps[1]
    out = text[gpu0:]
    sa, sb = a.group(0), b.group(0)
    swapped_a = sa.replace(f'srcoff="{a.group(3)}"', f'srcoff="{b.group(3)}"').replace(
        f'dstoff="{a.group(4)}"', f'dstoff="{b.group(4)}"')
    swapped_b = sb.replace(f'srcoff="{b.group(3)}"', f'srcoff="{a.group(3)}"').replace(
        f'dstoff="{b.group(4)}"', f'dstoff="{a.group(4)}"')
    out = out[:b.start()] + swapped_b + out[b.end():]
    out = out[:a.start()] + swapped_a + out[a.end():]
    return text[:gpu0] + out


def break_double_reduction(text):
    """Turn an allgather-phase receive into a receive-reduce: the final sum gets every contribution twice (checked
    for msccl-executor, whose kernels run ``rrc``; RCCL's refuse the step type first)."""
    last_r = list(re.finditer(r'type="r" srcbuf="i"', text))[-1]
    return text[:last_r.start()] + 'type="rrc" srcbuf="i"' + text[last_r.end():]


def break_hasdep(text):
    return re.sub(r'hasdep="1"', 'hasdep="0"', text)


def break_deadlock(text):
    """gpu 0's first send waits for the last receive of gpu 0, which needs that send to have gone round."""
    gpu0 = text.index('<gpu id="0"')
    end0 = text.index("</gpu>", gpu0)
    block = text[gpu0:end0]
    recv_tb = first_match(block, r'<tb id="(\d+)" send="-1" recv="\d+" chan="0">')
    tb_text = block[recv_tb.start():block.index("</tb>", recv_tb.start())]
    last = list(re.finditer(r'<step s="(\d+)"[^>]*hasdep="(\d)"/>', tb_text))[-1]
    new_tb = tb_text[:last.start()] + last.group(0)[:-len('hasdep="0"/>')] + 'hasdep="1"/>' + tb_text[last.end():]
    block = block.replace(tb_text, new_tb)
    first_send = first_match(block, r'type="s"([^>]*)depid="-1" deps="-1"')
    block = (block[:first_send.start()] + first_send.group(0).replace(
        'depid="-1" deps="-1"', f'depid="{recv_tb.group(1)}" deps="{last.group(1)}"') + block[first_send.end():])
    return text[:gpu0] + block + text[end0:]


def break_offset(text):
    m = first_match(text, r'type="re"([^>]*)dstoff="\d+"')
    return text[:m.start()] + re.sub(r'dstoff="\d+"', 'dstoff="99"', m.group(0)) + text[m.end():]


def break_peer_channel(text):
    """A second threadblock on gpu 0 that sends to the same peer on the same channel."""
    gpu0 = text.index('<gpu id="0"')
    m = first_match(text[gpu0:], r'<tb id="(\d+)" send="(\d+)" recv="-1" chan="0">')
    count = len(re.findall(r"<tb id=", text[gpu0:text.index("</gpu>", gpu0)]))
    extra = f'    <tb id="{count}" send="{m.group(2)}" recv="-1" chan="0">\n    </tb>\n'
    at = text.index("</gpu>", gpu0)
    return text[:at] + extra + "  " + text[at:]


def break_declaration(text):
    return '<?xml version="1.0" encoding="utf-8"?>\n' + text


def break_too_many_nodes(_):
    gpus = [Gpu(r, 2, 2, 0, [Tb(t, -1, -1, 0, [Step(k, "nop", "i", -1, "o", -1, 0) for k in range(250)])
                             for t in range(20)]) for r in range(2)]
    return to_xml(Algo("big", "Simple", 1, 2, 2, "allreduce", 1, 0, 0, 1 << 30, gpus))


def break_count(text):
    return re.sub(r'cnt="1"', 'cnt="72"', text, count=1)


def break_protocol(text):
    return text.replace('proto="Simple"', 'proto="simple"')


def break_tb_gap(text):
    return text.replace('<tb id="1"', '<tb id="9"', 1)


BROKEN = [
    (break_missing_attribute, "attribute maxBytes of <algo> is missing"),
    (break_coll_spelling, 'spells it "reducescatter"'),
    (break_send_order, "holds input chunk"),
    (break_double_reduction, "counted twice"),
    (break_hasdep, "hasdep=0"),
    (break_deadlock, "deadlock"),
    (break_offset, "outside its"),
    (break_peer_channel, "on channel 0; a connection is one FIFO"),
    (break_declaration, "<?xml"),
    (break_too_many_nodes, "XML nodes for this rank"),
    (break_count, "cnt=72"),
    (break_protocol, 'proto="simple"'),
    (break_tb_gap, "without gaps"),
]


BROKEN_FOR = {break_double_reduction: "msccl-executor"}     # checked for this runtime (default: rccl)


@pytest.mark.parametrize("breaker, reason", BROKEN, ids=[b.__name__ for b, _ in BROKEN])
def test_hand_broken_files_are_rejected_for_the_right_reason(breaker, reason, tmp_path, capsys):
    good = ring_allreduce_xml()
    assert check_xml(good).ok
    bad = breaker(good)
    assert bad != good
    report = check_xml(bad, runtime=BROKEN_FOR.get(breaker))
    assert not report.ok and reason in report.first, report.first
    path = tmp_path / "bad.xml"
    path.write_text(bad)
    assert main(["check-xml", str(path)]) == 1
    err = capsys.readouterr().err
    assert err.startswith("rejected:") and err.count("\n") == 1


def test_export_refuses_what_the_runtime_would_not_run(capsys):
    topo = parse_topology("circulant(16,[3,4])")
    schedule = synthesize(topo, "bfb", "allgather").schedule
    # 4 threadblocks per rank after send/receive pairs are merged: a budget of 2 cannot hold them
    with pytest.raises(XmlError, match="threadblocks, above the budget of 2"):
        export(topo, schedule, sm_budget=2)
    assert main(["export", "circulant(16,[3,4])", "--algo", "bfb", "--sm-budget", "2"]) == 2
    assert "budget" in capsys.readouterr().err


def test_lowering_refuses_switches():
    from solvers.core.errors import NotApplicable

    from .helpers import star

    topo = star(4)
    with pytest.raises(NotApplicable, match="switches"):
        lower(topo, synthesize(topo, "sptree", "allgather").schedule)


def test_cli_export_writes_a_checked_file(tmp_path, capsys):
    out = tmp_path / "k.xml"
    assert main(["export", "kautz(2,2)", "--algo", "bfb", "--collective", "allreduce", "-o", str(out)]) == 0
    assert "validated and simulated" in capsys.readouterr().err
    assert main(["check-xml", str(out), "--json"]) == 0
    assert '"ok": true' in capsys.readouterr().out


def test_malformed_files_are_one_line_errors(tmp_path):
    for text, words in [("<algo", "not well-formed"), ("<gpu/>", "not <algo>"),
                        ('<!DOCTYPE x [<!ENTITY a "b">]><algo/>', "DOCTYPE")]:
        report = check_xml(text)
        assert not report.ok and words in report.first


def test_parse_error_type():
    with pytest.raises(XmlError):
        parse_xml("<algo")


def test_the_fixtures_are_there():
    assert len(sorted(EXAMPLES.glob("*.xml"))) == 3


@pytest.mark.parametrize("expr, algo", [("ring(4)", "ring"), ("circulant(8,[2,3])", "bfb"), ("kautz(2,2)", "bfb")])
@pytest.mark.parametrize("collective", ["allgather", "reduce_scatter", "allreduce"])
@pytest.mark.parametrize("place", ["in", "out"])
def test_in_place_and_out_of_place(expr, algo, collective, place, tmp_path):
    out = tmp_path / "x.xml"
    assert main(["export", expr, "--algo", algo, "--collective", collective, "--place", place, "-o", str(out)]) == 0
    text = out.read_text()
    flag = "1" if place == "in" else "0"
    assert f'inplace="{flag}"' in text and f'outofplace="{1 - int(flag)}"' in text
    assert check_xml(text).ok


def _read_by_elementtree(text, monkeypatch):
    import solvers.export.msccl_xml as msccl_xml

    with monkeypatch.context() as m:
        m.setattr(msccl_xml, "_read_as_written", lambda *_: None)
        return parse_xml(text)


@pytest.mark.parametrize("expr, algo, collective, kwargs", [
    ("gkautz(2,16)", "bfb", "reduce_scatter", {"in_place": False}),
    ("hypercube(4)", "forestcoll", "allreduce", {"merge": True, "ops_per_tb": 7, "copies": 2}),
    ("torus(3,3)", "teccl", "alltoall", {})])
def test_the_line_reader_reads_written_files_as_elementtree_does(expr, algo, collective, kwargs, monkeypatch):
    """Files as ``to_xml`` writes them are read line by line; anything written otherwise falls back to ElementTree,
    which must give the same program where the text means the same, and the same errors where it does not."""
    import solvers.export.msccl_xml as msccl_xml

    topo = parse_topology(expr)
    schedule = synthesize(topo, algo, collective, total_bytes=1e6).schedule
    program = lower(topo, schedule, name='a & "b" <c>', **kwargs)
    for dialect in ("executor", "msccl"):
        text = to_xml(program, dialect)
        fast = msccl_xml._read_as_written(text, None)
        assert fast is not None and fast == _read_by_elementtree(text, monkeypatch) == parse_xml(text)
        assert fast[0].gpus == program.gpus and fast[0].name == program.name
    text = to_xml(program)
    fast = parse_xml(text)
    same_meaning = [
        text.replace("\n", "\n<!-- a comment -->\n", 3),                       # comments between elements
        text.replace('<tb id="0" send=', '<tb  id="0" send=', 1),              # other spacing in a tag
        re.sub(r'<step s="(\d+)" type="(\w+)"', r'<step type="\2" s="\1"', text, count=1),   # attribute order
        text.replace("\n", "\r\n"),                                           # other line ends
        text.replace('/>\n', '></step>\n', 1),                                 # an element closed the long way
    ]
    for other in same_meaning:
        assert other != text and msccl_xml._read_as_written(other, None) is None
        assert parse_xml(other) == fast
    different = [
        (text.replace("    </tb>\n", "", 1), "not well-formed"),               # a threadblock left open
        (text.replace("\n", "<gpu id=\"99\" i_chunks=\"0\" o_chunks=\"0\" s_chunks=\"0\"/>\n", 1), None),
        (text.replace('cnt="', 'cnt="x', 1), "not an integer"),
        (text.replace("</algo>\n", "</algo>\n<algo/>\n"), "not well-formed"),
    ]
    for other, error in different:
        assert msccl_xml._read_as_written(other, None) is None
        if error is None:                       # read, but not as the line reader would have read the first line
            assert len(parse_xml(other)[0].gpus) == len(program.gpus) + 1
        else:
            with pytest.raises(XmlError, match=error):
                parse_xml(other)
