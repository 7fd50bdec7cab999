"""MSCCL XML of rooted collectives: broadcast and reduce for every runtime, gather and scatter for RCCL only (the
others refuse in one line, citing their source), each file written for one root that its name carries, and
check-xml simulating the rooted postcondition so that a wrong file fails."""
from __future__ import annotations

import re

import pytest

from solvers.core.errors import NotApplicable
from solvers.export import TARGETS, check_xml, export, parse_xml, simulate, to_xml, validate
from solvers.export.flat import read_flat
from solvers.export.flat_check import runs
from solvers.synthesize import synthesize
from studio.cli import main
from topologies import load

_RESULTS: dict = {}


def result(expr: str, algo: str, coll: str, root: int):
    key = (expr, algo, coll, root)
    if key not in _RESULTS:
        _RESULTS[key] = synthesize(load(expr), algo, coll, root=root, total_bytes=1 << 20)
    return _RESULTS[key]


def both_checkers(text: str, runtime: str, root: int | None = None) -> tuple[bool, list[str]]:
    """(check_xml's verdict, the object checker's problems): they must agree."""
    report = check_xml(text, runtime=runtime, root=root)
    algo, dialect = parse_xml(text)
    problems = validate(algo, dialect, 108, runtime) or simulate(algo, root)
    assert report.ok == (not problems), (report.first, problems[:1])
    return report.ok, problems


@pytest.mark.parametrize("runtime", ["msccl-executor", "rccl", "msccl"])
@pytest.mark.parametrize("expr, algo, coll", [("ring(4)", "tacos", "broadcast"), ("mesh(2,3)", "binomial", "broadcast"),
                                              ("mesh(2,3)", "tacos", "reduce"), ("ring(5)", "chain", "reduce")])
@pytest.mark.parametrize("in_place", [None, False])
def test_broadcast_and_reduce_export_and_pass_for_their_root_only(runtime, expr, algo, coll, in_place):
    root = 2
    res = result(expr, algo, coll, root)
    text, report = export(res.topology, res.schedule, runtime=runtime, in_place=in_place)
    assert report.ok and report.runtime == runtime and report.root == root
    assert f"rank {root}" in report.root_note and "runs correctly only when the call's root" in report.root_note
    assert ("ncclAvg" in report.root_note) == (coll == "reduce")
    algo_ir, dialect = parse_xml(text)
    n = res.topology.n
    assert algo_ir.coll == coll and algo_ir.name.endswith(f" root={root}") and dialect == TARGETS[runtime].dialect
    assert algo_ir.inplace == (1 if in_place is None else 0)    # (msccl-tools' dialect has no outofplace)
    per = algo_ir.nchunksperloop // n                    # count is the whole buffer: N x chunks per shard
    assert per * n == algo_ir.nchunksperloop
    whole = algo_ir.nchunksperloop
    for g in algo_ir.gpus:
        if coll == "broadcast":
            assert (g.i_chunks, g.o_chunks) == ((whole if g.id == root and in_place is False else 0), whole)
        else:
            assert (g.i_chunks, g.o_chunks) == (((0 if in_place is None else whole), whole) if g.id == root
                                                else (whole, 0))
    flat, _ = read_flat(text, None)
    assert runs(flat) is True                           # the column checker passes it, the object one too
    assert simulate(algo_ir) == []
    for other in range(n):                               # a file serves its own root only
        ok, problems = both_checkers(text, runtime, other)
        assert ok == (other == root), problems[:1]


@pytest.mark.parametrize("expr, algo", [("ring(4)", "direct"), ("mesh(2,3)", "direct"), ("mesh(2,3)", "tacos")])
@pytest.mark.parametrize("coll", ["gather", "scatter"])
def test_gather_and_scatter_export_for_rccl(expr, algo, coll):
    root = 1
    res = result(expr, algo, coll, root)
    text, report = export(res.topology, res.schedule, runtime="rccl")
    assert report.ok and report.root == root
    algo_ir, _ = parse_xml(text)
    n, per = res.topology.n, algo_ir.nchunksperloop        # count is one rank's part
    assert (algo_ir.inplace, algo_ir.outofplace) == (0, 1)
    for g in algo_ir.gpus:
        if coll == "gather":
            assert (g.i_chunks, g.o_chunks) == ((per, n * per) if g.id == root else (per, 0))
        else:
            assert (g.i_chunks, g.o_chunks) == ((n * per, per) if g.id == root else (0, per))
    assert simulate(algo_ir) == []
    assert not both_checkers(text, "rccl", (root + 1) % n)[0]
    with pytest.raises(NotApplicable, match="out of place only"):
        export(res.topology, res.schedule, runtime="rccl", in_place=True)


@pytest.mark.parametrize("runtime, coll", [("msccl-executor", "gather"), ("msccl-executor", "scatter"),
                                           ("msccl", "gather"), ("msccl", "scatter")])
def test_gather_and_scatter_are_refused_where_the_runtime_never_runs_them(runtime, coll):
    res = result("ring(4)", "direct", coll, 1)
    with pytest.raises(NotApplicable) as caught:
        export(res.topology, res.schedule, runtime=runtime)
    why = str(caught.value)
    assert "\n" not in why and why.startswith(f"{runtime} has no {coll}") and "src/" in why
    rccl_file, _ = export(res.topology, res.schedule, runtime="rccl")     # and check-xml refuses such a file
    dialect = TARGETS[runtime].dialect
    report = check_xml(to_xml(parse_xml(rccl_file)[0], dialect), runtime=runtime)
    assert not report.ok
    if runtime == "msccl-executor":
        assert report.first.startswith(f"{runtime} has no {coll}")


def test_the_cli_exports_checks_and_refuses(tmp_path, capsys):
    out = tmp_path / "b.xml"
    assert main(["export", "mesh(2,3)", "--algo", "tacos", "--collective", "broadcast", "--root", "3",
                 "--runtime", "msccl-executor", "-o", str(out)]) == 0
    err = capsys.readouterr().err
    assert "note: runs correctly only when the call's root is rank 3" in err
    assert 'root=3"' in out.read_text().split("\n")[0]
    assert main(["check-xml", str(out)]) == 0
    assert "with root 3" in capsys.readouterr().out
    assert main(["check-xml", str(out), "--root", "0"]) == 1
    assert capsys.readouterr().err.startswith("rejected:")
    red = tmp_path / "r.xml"
    assert main(["export", "ring(4)", "--algo", "tacos", "--collective", "reduce", "--root", "1", "--runtime", "rccl",
                 "--place", "out", "-o", str(red)]) == 0
    capsys.readouterr()
    assert main(["check-xml", str(red), "--runtime", "rccl"]) == 0
    capsys.readouterr()
    # gather for msccl-executor: exit 2, one line on stderr
    assert main(["export", "ring(4)", "--algo", "direct", "--collective", "gather", "--root", "1",
                 "--runtime", "msccl-executor", "-o", str(tmp_path / "g.xml")]) == 2
    err = capsys.readouterr().err
    assert err.count("\n") == 1 and "msccl-executor has no gather" in err and "nccl.h.in" in err
    assert not (tmp_path / "g.xml").exists()
    gat = tmp_path / "g_rccl.xml"
    assert main(["export", "ring(4)", "--algo", "direct", "--collective", "gather", "--root", "1", "--runtime", "rccl",
                 "-o", str(gat)]) == 0
    capsys.readouterr()
    assert main(["check-xml", str(gat)]) == 0
    capsys.readouterr()
    # the formats that carry no root refuse in one line
    for fmt in (["--format", "bundle", "-o", str(tmp_path / "x.zip")], ["--format", "mscclpp"]):
        assert main(["export", "ring(4)", "--algo", "tacos", "--collective", "broadcast", "--root", "1", *fmt]) == 2
        err = capsys.readouterr().err
        assert err.count("\n") == 1 and "broadcast" in err and "--format msccl" in err


def _broadcast_file(in_place=None) -> str:
    res = result("mesh(2,3)", "tacos", "broadcast", 3)
    return export(res.topology, res.schedule, runtime="rccl", in_place=in_place)[0]


def test_a_tampered_broadcast_fails(tmp_path, capsys):
    text = _broadcast_file()
    lines = text.split("\n")
    receive = next(k for k, line in enumerate(lines) if 'type="r"' in line)
    dropped = "\n".join(lines[:receive] + lines[receive + 1:])
    peer = next(k for k, line in enumerate(lines) if re.search(r'<tb id="\d+" send="-1" recv="[0-9]+"', line))
    old = int(re.search(r'recv="([0-9]+)"', lines[peer]).group(1))
    gpu = int(re.search(r'<gpu id="([0-9]+)"', next(line for line in reversed(lines[:peer]) if "<gpu" in line))
              .group(1))
    new = next(r for r in range(6) if r not in (old, gpu))
    repeered = "\n".join(lines[:peer] + [lines[peer].replace(f'recv="{old}"', f'recv="{new}"')] + lines[peer + 1:])
    offset = next(k for k, line in enumerate(lines) if 'type="r"' in line and 'dstoff="0"' not in line)
    shifted = "\n".join(lines[:offset] + [re.sub(r'dstoff="(\d+)"', 'dstoff="0"', lines[offset])] + lines[offset + 1:])
    whole = int(re.search(r'nchunksperloop="(\d+)"', text).group(1))   # one more chunk that nobody sends
    grown = text.replace(f'nchunksperloop="{whole}"', f'nchunksperloop="{whole + 1}"').replace(
        f'o_chunks="{whole}"', f'o_chunks="{whole + 1}"')
    renamed = text.replace(" root=3", " root=4", 1)
    unnamed = text.replace(" root=3", "", 1)
    for bad in (dropped, repeered, shifted, grown, renamed, unnamed):
        assert bad != text
        ok, problems = both_checkers(bad, "rccl")
        assert not ok and problems
        path = tmp_path / "bad.xml"
        path.write_text(bad)
        assert main(["check-xml", str(path)]) == 1
        err = capsys.readouterr().err
        assert err.startswith("rejected:") and err.count("\n") == 1
    assert "root=R" in check_xml(unnamed).first
    assert check_xml(unnamed, root=3).ok                   # the root given to the checker instead


def test_a_rooted_program_writes_only_what_the_call_lets_it():
    """A broadcast that writes the root's send buffer, or a reduce whose non-root ranks write their recvbuff (it
    counts at the root only), fails even when the data would come out right."""
    text = _broadcast_file(in_place=False)
    algo, _ = parse_xml(text)
    root_gpu = algo.gpus[3]
    assert root_gpu.i_chunks > 0
    cpy = next(st for t in root_gpu.tbs for st in t.steps if st.type == "cpy")
    cpy.srcbuf, cpy.dstbuf = "o", "i"                   # the copy turned round: writes i
    problems = simulate(algo)
    assert problems and "writes into buffer i" in problems[0]
    res = result("ring(4)", "tacos", "reduce", 0)
    text, _ = export(res.topology, res.schedule, runtime="msccl-executor")
    algo, _ = parse_xml(text)
    other = next(g for g in algo.gpus if g.id != 0 and g.s_chunks and any(st.dstbuf == "s" for t in g.tbs
                                                                          for st in t.steps))
    other.o_chunks = other.s_chunks
    for t in other.tbs:
        for st in t.steps:
            for side in ("srcbuf", "dstbuf"):
                if getattr(st, side) == "s":
                    setattr(st, side, "o")
    assert validate(algo, "executor", 108, "msccl-executor") == []
    problems = simulate(algo)
    assert problems and "its recvbuff counts at the root only" in problems[0]
    assert not check_xml(to_xml(algo), runtime="msccl-executor").ok


def test_msccl_tools_dialect_and_its_buffer_rule():
    res = result("ring(4)", "tacos", "broadcast", 1)
    text, report = export(res.topology, res.schedule, dialect="msccl")
    assert report.ok and report.runtime == "msccl" and 'coll="broadcast"' in text.split("\n")[0]
    bad = re.sub(r'o_chunks="(\d+)"', lambda m: f'o_chunks="{int(m.group(1)) + 1}"', text, count=1)
    report = check_xml(bad, runtime="msccl")
    assert not report.ok and "src/graph/topo.cc" in report.first


def test_a_switched_fabric_keeps_its_root():
    res = result("dgx_a100(boxes=1)", "tacos", "broadcast", 5)
    text, report = export(res.topology, res.schedule, runtime="msccl-executor")
    assert report.ok and report.root == 5 and ' root=5"' in text.split("\n")[0]
