"""The NCCL graph writer and reader against what the real NCCL did with them (tests/data/real/h100-nccl-2.28.9,
recorded on an H100 with NCCL 2.28.9; its README says how). The recording stays valid only while the writer
writes the same bytes, so that is asserted; the reader must take NCCL's own dump and refuse what NCCL refused."""
from __future__ import annotations

from pathlib import Path

from solvers.export.nccl_graph import ChannelOrder, GraphSpec, write_graphs
from solvers.export.nccl_graph_check import read_graphs

REAL = Path(__file__).resolve().parent / "data" / "real" / "h100-nccl-2.28.9"


def _probe_file() -> str:
    ring = GraphSpec(0, 4, tuple(ChannelOrder((0,)) for _ in range(4)), 42.8571, 42.8571)
    tree = GraphSpec(1, 3, tuple(ChannelOrder((0,)) for _ in range(4)), 42.8571, 42.8571)
    return write_graphs([ring, tree], name="Topology Studio probe")


def test_the_writer_writes_the_file_nccl_loaded():
    assert _probe_file() == (REAL / "studio-graph.xml").read_text()
    log = (REAL / "probe-ours.log").read_text()
    assert "Pattern 4, crossNic 0, nChannels 4, bw 42.857101/42.857101, type NVL/PIX" in log
    assert "Pattern 3, crossNic 0, nChannels 4" in log and "allreduce ok 1.0" in log


def test_the_reader_takes_nccls_own_dump():
    graphs, problems, _ = read_graphs((REAL / "nccl-graph-dump.xml").read_text())
    assert problems == []
    by_id = {g.id: g for g in graphs}
    assert sorted(by_id) == [0, 1, 2, 3, 4]
    assert by_id[0].pattern == 4 and by_id[0].nchannels == 32 == len(by_id[0].channels)
    assert by_id[1].pattern == 3 and by_id[4].nchannels == 0


def test_the_reader_refuses_what_nccl_refused():
    good = (REAL / "studio-graph.xml").read_text()
    assert "dev 16 not found" in (REAL / "probe-bad_dev10.log").read_text()
    _, problems, _ = read_graphs(good.replace('<gpu dev="0"/>', '<gpu dev="10"/>', 1))
    assert any('dev="10"' in p and "16" in p for p in problems), problems
    assert "expected >, got '?'" in (REAL / "probe-bad_decl.log").read_text()
    _, problems, _ = read_graphs('<?xml version="1.0"?>\n' + good)
    assert problems, "a declaration NCCL's parser refuses must be refused"
