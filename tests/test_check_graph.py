"""``python -m studio check-graph FILE [--topo EXPR]`` (issue 59, finding 11): an NCCL graph file written by
``export --format nccl-graph`` passes, with what its two bandwidths are; a file NCCL would refuse or misread, or
one whose rings the design lacks, is one ``rejected:`` line and exit 1; a file that cannot be read is one line and
exit 2; ``check-xml`` on a graph file points to ``check-graph`` and still checks MSCCL XML."""
from __future__ import annotations

import json
import os
import xml.etree.ElementTree as ET

import pytest

from studio.cli import main, parser


def _export(capsys, tmp_path, expr: str, name: str = "graph.xml") -> str:
    out = tmp_path / name
    rc = main(["export", expr, "--algo", "ring", "--format", "nccl-graph", "-o", str(out)])
    assert rc == 0, capsys.readouterr().err
    capsys.readouterr()
    return str(out)


def _run(capsys, *argv) -> tuple[int, str, str]:
    rc = main(list(argv))
    got = capsys.readouterr()
    return rc, got.out, got.err


def test_check_graph_is_a_command():
    assert "check-graph" in parser().format_help()


@pytest.mark.parametrize("expr", ["biring(8)", "dgx_a100(boxes=2)"])
def test_an_exported_graph_file_passes_with_its_bandwidths_named(capsys, tmp_path, expr):
    path = _export(capsys, tmp_path, expr)
    ring = ET.parse(path).getroot().find("graph[@id='0']")
    intra, inter = float(ring.get("speedintra")), float(ring.get("speedinter"))
    for extra in ([], ["--topo", expr]):
        rc, out, err = _run(capsys, "check-graph", path, *extra)
        assert rc == 0 and err == "", err
        line = out.splitlines()[0]
        assert line.startswith("ok: graph 0 (ring)") and "graph 1 (tree)" in line
        assert f"{intra:.4g} GB/s per channel inside a box" in line and "(speedintra)" in line
        if "boxes=2" in expr:        # several boxes: the second number is the network's, per channel
            assert f"{inter:.4g} GB/s per channel between boxes" in line and "(speedinter)" in line
        else:
            assert "speedinter unused" in line
        assert ("checked against host 0" in line) == bool(extra)
    rc, out, _ = _run(capsys, "check-graph", path, "--topo", expr, "--json")
    doc = json.loads(out)
    assert rc == 0 and doc["ok"] and doc["problems"] == [] and doc["graphs"][0]["speedintra_gbs"] == intra


def _mutate(path: str, old: str, new: str, tmp_path, count: int = 1) -> str:
    text = open(path, encoding="utf-8").read()
    assert old in text
    bad = tmp_path / "bad.xml"
    bad.write_text(text.replace(old, new, count), encoding="utf-8")
    return str(bad)


@pytest.mark.parametrize("old, new, words", [
    ('<gpu dev="0x3"/>', '<gpu dev="3"/><gpu dev="10"/>', 'dev="10" looks decimal'),   # NCCL reads it as 0x10
    ('<graphs version="1"', '<graphs version="2"', "version"),
    ('nchannels="2"', 'nchannels="3"', "nchannels"),
    ('<gpu dev="0x5"/>', "", "GPU 0x5 (5) is missing"),
    ('<graphs', '<?xml version="1.0"?>\n<graphs', "expected"),                   # NCCL's reader has no declaration
])
def test_a_mutated_graph_file_is_one_rejected_line(capsys, tmp_path, old, new, words):
    path = _export(capsys, tmp_path, "biring(8)")
    bad = _mutate(path, old, new, tmp_path)
    rc, out, err = _run(capsys, "check-graph", bad, "--topo", "biring(8)")
    assert rc == 1 and out == "" and err.startswith("rejected: ") and err.count("\n") == 1, err
    assert words in err, err
    rc, out, _ = _run(capsys, "check-graph", bad, "--topo", "biring(8)", "--json")
    assert rc == 1 and json.loads(out)["ok"] is False


def test_rings_the_design_lacks_are_rejected(capsys, tmp_path):
    # biring(8)'s second ring runs backwards: ring(8) has links one way only.
    path = _export(capsys, tmp_path, "biring(8)")
    rc, _, err = _run(capsys, "check-graph", path, "--topo", "ring(8)")
    assert rc == 1 and "has no link in the design" in err and err.count("\n") == 1, err
    rc, _, err = _run(capsys, "check-graph", path, "--topo", "biring(8)", "--box", "3")
    assert rc == 1 and err.count("\n") == 1, err


def test_files_it_cannot_read_are_one_line_and_exit_2(capsys, tmp_path):
    missing = tmp_path / "none.xml"
    latin = tmp_path / "latin.xml"
    latin.write_bytes(b'<graphs version="1" name="\xe9">\n</graphs>\n')
    big = tmp_path / "big.xml"
    big.write_bytes(b" " * (4 * 1024 * 1024 + 1))
    cases = [(missing, "no such file"), (latin, "not UTF-8"), (big, "above the limit")]
    if hasattr(os, "mkfifo"):
        fifo = tmp_path / "fifo"
        os.mkfifo(fifo)
        cases.append((fifo, "FIFO"))                 # refused at once, never opened for a blocking read
    for path, words in cases:
        rc, out, err = _run(capsys, "check-graph", str(path))
        assert rc == 2 and out == "" and words in err and err.count("\n") == 1, (path, err)


def test_check_xml_points_a_graph_file_to_check_graph(capsys, tmp_path):
    path = _export(capsys, tmp_path, "dgx_a100(boxes=2)")
    rc, out, err = _run(capsys, "check-xml", path)
    assert rc == 1 and "check-graph" in err and "NCCL graph file" in err and err.count("\n") == 1, err
    rc, out, _ = _run(capsys, "check-xml", path, "--json")
    doc = json.loads(out)
    assert rc == 1 and doc["ok"] is False and "check-graph" in doc["problems"][0]


def test_check_xml_still_checks_msccl_xml(capsys, tmp_path):
    out = tmp_path / "ring.xml"
    assert main(["export", "biring(8)", "--algo", "ring", "--collective", "allgather", "-o", str(out)]) == 0
    capsys.readouterr()
    rc, stdout, err = _run(capsys, "check-xml", str(out))
    assert rc == 0 and stdout.startswith("ok: 8 ranks"), err
    rc, _, err = _run(capsys, "check-xml", str(tmp_path / "none.xml"))
    assert rc == 2 and "no such file" in err


def _panel():
    import streamlit as st

    from solvers import synthesize
    from studio.widgets import export_panel, nccl_graph_expander
    from topologies import load

    r = synthesize(load("dgx_a100(boxes=2)"), "ring", "allgather")
    graph = st.session_state.get("graph_in_tab", True)
    export_panel(r.topology, r.schedule, "x_", "ring allgather", "ring_allgather", graph=graph)
    if not graph:
        nccl_graph_expander(r.topology, "y_")


def test_the_export_panel_names_the_graph_file_and_its_two_bandwidths():
    """Finding 11: the graph file's tab says it is not MSCCL, and its summary names its two bandwidths (speedintra
    inside a box, speedinter between boxes; it printed an unexplained 'A/B GB/s per channel'); a page can show it
    in an expander of its own instead."""
    from streamlit.testing.v1 import AppTest

    at = AppTest.from_function(_panel, default_timeout=120).run()
    assert not at.exception
    assert [t.label for t in at.tabs][-1].startswith("NCCL graph file") and "not MSCCL" in at.tabs[-1].label
    at.button(key="x_gbuild").click().run()
    assert not at.exception and not at.error
    assert any("GB/s per channel inside a box / speedinter" in s.value for s in at.success)
    assert any("speedintra" in c.value and "speedinter" in c.value for c in at.caption)
    at = AppTest.from_function(_panel, default_timeout=120)
    at.session_state["graph_in_tab"] = False
    at.session_state["y_ngraph_open"] = True
    at.run()
    assert not at.exception and not any("NCCL graph" in t.label for t in at.tabs)
    assert any(e.label.startswith("NCCL graph file") for e in at.expander)
    at.button(key="y_gbuild").click().run()
    assert not at.exception and any("8 ring channels" in s.value for s in at.success)
