"""NCCL graph files (solvers/export/nccl_graph.py): the CLI writes one host's link-disjoint rings (and NIC per
channel across boxes) in the format NCCL_GRAPH_FILE reads, devs in hex; the reader rejects what NCCL would
misread or what breaks the design's rings."""
import random
import re
import xml.etree.ElementTree as ET

import pytest
from hypothesis import HealthCheck, given, settings, strategies as st

from solvers.baselines.multiring import multiring_allgather
from solvers.core.errors import NotApplicable
from solvers.export.nccl_graph import ChannelOrder, GraphSpec, check_graph, export_graph, write_graphs
from solvers.export.nccl_graph_check import c_strtol
from studio.cli import main
from topologies import load
from topologies.model import Topology

HEX = re.compile(r"^(0|0x[1-9a-f][0-9a-f]*)$")


def cli_graph(capsys, tmp_path, expr, algo="ring"):
    out = tmp_path / "graph.xml"
    rc = main(["export", expr, "--algo", algo, "--format", "nccl-graph", "-o", str(out)])
    err = capsys.readouterr().err
    assert rc == 0, err
    return out.read_text(), err, str(out)


def graphs_of(text):
    """Read with the standard library, independently of the module's reader: {id: (attrs, channels)}, each
    channel a list of (tag, dev as hex int, raw dev)."""
    root = ET.fromstring(text)
    assert root.tag == "graphs" and root.get("version") == "1"
    out = {}
    for g in root:
        chans = [[(e.tag, int(e.get("dev"), 16), e.get("dev")) for e in ch] for ch in g]
        out[int(g.get("id"))] = (dict(g.attrib), chans)
    return out


def directed_links(topo):
    return {(link.src, link.dst) for link in topo.links}


@pytest.mark.parametrize("expr, rings", [("hypercube(4)", 4), ("torus(4,4)", 4)])
def test_cli_writes_link_disjoint_hamiltonian_rings(capsys, tmp_path, expr, rings):
    text, err, path = cli_graph(capsys, tmp_path, expr)
    topo = load(expr)
    graphs = graphs_of(text)
    attrs, chans = graphs[0]
    assert (attrs["pattern"], attrs["nchannels"], len(chans)) == ("4", str(rings), rings)
    assert (attrs["typeintra"], attrs["crossnic"]) == ("NVL", "0")
    links = directed_links(topo)
    used = set()
    for chan in chans:
        assert all(tag == "gpu" for tag, _, _ in chan)            # one host: no NIC
        assert all(HEX.match(raw) for _, _, raw in chan)
        order = [dev for _, dev, _ in chan]
        assert sorted(order) == list(range(16))                 # every GPU once
        hops = list(zip(order, order[1:] + order[:1]))
        assert all(hop in links for hop in hops)                 # a ring over the design's links
        assert not used & set(hops)                              # no link in two rings
        used |= set(hops)
    assert "0xa" in text and 'dev="10"' not in text
    assert f"load with NCCL_GRAPH_FILE={path}" in err and "link-disjoint" in err
    rings_string = re.search(r'NCCL_RINGS="([^"]*)"', err).group(1)
    assert rings_string == "|".join(" ".join(str(d) for _, d, _ in chan) for chan in chans)
    assert check_graph(text, topo).ok


def test_tree_graph_chains_the_rings_both_ways(capsys, tmp_path):
    text, _, _ = cli_graph(capsys, tmp_path, "hypercube(4)", algo="dbt")
    graphs = graphs_of(text)
    links = directed_links(load("hypercube(4)"))
    attrs, chans = graphs[1]
    assert (attrs["pattern"], len(chans)) == ("3", len(graphs[0][1]))
    for chan in chans:
        order = [d for _, d, _ in chan]
        assert sorted(order) == list(range(16))
        assert all((a, b) in links and (b, a) in links for a, b in zip(order, order[1:]))


def test_dgx_a100_two_boxes_one_nic_per_channel(capsys, tmp_path):
    text, err, _ = cli_graph(capsys, tmp_path, "dgx_a100(boxes=2)")
    graphs = graphs_of(text)
    attrs, chans = graphs[0]
    assert (attrs["nchannels"], len(chans), attrs["crossnic"]) == ("8", 8, "1")
    exits = []
    for chan in chans:
        tags = [t for t, _, _ in chan]
        assert tags == ["net"] + ["gpu"] * 8 + ["net"]          # enters by a NIC, leaves by a NIC
        gpus = [d for t, d, _ in chan if t == "gpu"]
        assert sorted(gpus) == list(range(8))
        # dgx_a100: NIC j hangs off GPU j, so a channel enters by its first GPU's NIC and leaves by its last's
        assert (chan[0][1], chan[-1][1]) == (gpus[0], gpus[-1])
        exits.append(chan[-1][1])
        assert all(HEX.match(raw) for _, _, raw in chan)
    assert sorted(exits) == list(range(8))                       # one NIC per channel
    tree_attrs, tree = graphs[1]
    assert tree_attrs["pattern"] == "3" and len(tree) == 8
    assert all(chan[0][1] == chan[-1][1] == chan[1][1] for chan in tree)   # the head's NIC at both ends
    assert "host 0 of 2" in err and "N2 2 1 3" in err
    _, report = export_graph(load("dgx_a100(boxes=2)"))
    assert report.same_on_every_host and report.ring_busbw_gbs == pytest.approx(200.0)


@pytest.mark.parametrize("expr", ["hypercube(4)", "dgx_a100(boxes=2)", "mi250(clusters=2)"])
def test_channels_times_speed_is_the_multiring_bandwidth(expr):
    topo = load(expr)
    _, report = export_graph(topo)
    assert report.ring_busbw_gbs == pytest.approx(multiring_allgather(topo).notes["ring_busbw_gbs"])


def test_mi250_two_clusters_has_rings_and_no_tree():
    text, report = export_graph(load("mi250(clusters=2)"))
    assert (report.ring_channels, report.tree_channels, report.gpus) == (16, 0, 16)
    assert "no tree graph" in report.tree_note and 'id="1"' not in text
    assert check_graph(text, load("mi250(clusters=2)")).ok


@pytest.mark.parametrize("expr, why", [("hypercube(5)", "32 GPUs"), ("dgx_a100(boxes=1)", "one box joined")])
def test_not_applicable_is_one_line(capsys, expr, why):
    rc = main(["export", expr, "--algo", "ring", "--format", "nccl-graph"])
    err = capsys.readouterr().err
    assert rc != 0 and why in err and err.count("\n") == 1
    with pytest.raises(NotApplicable):
        export_graph(load(expr))


def test_other_algorithms_are_refused(capsys):
    assert main(["export", "hypercube(4)", "--algo", "bfb", "--format", "nccl-graph"]) != 0
    assert "--algo ring or dbt" in capsys.readouterr().err


# ------------------------------------------------------------------------------------------------ the reader
@pytest.fixture(scope="module")
def cube():
    topo = load("hypercube(4)")
    text, _ = export_graph(topo)
    return topo, text


def channel_bodies(text):
    return re.findall(r"<channel>\n(.*?)    </channel>", text, re.S)


def problems(text, topo):
    check = check_graph(text, topo)
    assert not check.ok
    return " | ".join(check.problems)


def test_reader_rejects_a_repeated_gpu(cube):
    topo, text = cube
    body = channel_bodies(text)[0]
    lines = body.splitlines()
    bad = text.replace(body, "\n".join([lines[0], lines[2]] + lines[2:]) + "\n", 1)
    got = problems(bad, topo)
    assert "graph 0 (ring) channel 0" in got and "appears twice" in got


def test_reader_rejects_a_missing_gpu(cube):
    topo, text = cube
    body = channel_bodies(text)[0]
    bad = text.replace(body, "\n".join(body.splitlines()[:-1]) + "\n", 1)
    got = problems(bad, topo)
    assert "channel 0" in got and "is missing" in got


def test_reader_rejects_two_rings_sharing_a_link(cube):
    topo, text = cube
    bodies = channel_bodies(text)
    bad = text.replace(bodies[1], bodies[0], 1)
    got = problems(bad, topo)
    assert "channels 0, 1 all use the link" in got and "link-disjoint" in got


def test_reader_rejects_decimal_devs_of_ten_or_more(cube):
    topo, text = cube
    assert 'dev="0xa"' in text
    got = problems(text.replace('dev="0xa"', 'dev="10"'), topo)
    assert 'dev="10"' in got and "0x10 = 16" in got and "not 10" in got and 'dev="0xa"' in got


@pytest.mark.parametrize("edit, says", [
    (lambda t: t.replace('nchannels="4"', 'nchannels="3"', 1), "nchannels"),
    (lambda t: t.replace('nchannels="4"', 'nchannels="04"', 1), "octal"),
    (lambda t: '<?xml version="1.0"?>\n' + t, "XML declaration"),
    (lambda t: t.replace("  <graph", "\t<graph", 1), "tab"),
    (lambda t: t.replace('typeinter="PIX"', 'typeinter="NET"', 1), "reads it as LOC"),
    (lambda t: t.replace('version="1"', 'version="2"', 1), "version"),
    (lambda t: t.replace('pattern="4"', 'pattern="3"', 1), "ring graph's pattern"),
    (lambda t: t.replace(' speedintra="1"', "", 1), "speedintra is missing"),
    (lambda t: t.replace('<gpu dev="0xf"/>', '<gpu dev="0x10"/>', 1), "not on this host"),
    (lambda t: t.replace("<graphs", '<!DOCTYPE graphs [<!ENTITY a "b">]>\n<graphs', 1), "DOCTYPE"),
])
def test_reader_rejects_what_nccl_misreads(cube, edit, says):
    topo, text = cube
    assert says in problems(edit(text), topo)


def test_reader_notes_devs_that_read_the_same():
    topo = load("biring(4)")
    text = write_graphs([GraphSpec(0, 4, (ChannelOrder((0, 1, 2, 3)),), 1.0, 1.0)]).replace('dev="0x1"', 'dev="1"')
    check = check_graph(text, topo)
    assert check.ok and any('dev="1" reads as 1' in n for n in check.notes)


def test_c_strtol_reads_as_c_does():
    assert c_strtol("10", 16) == (16, 2) and c_strtol("0xa", 16) == (10, 3) and c_strtol("0", 16) == (0, 1)
    assert c_strtol("010", 0) == (8, 3) and c_strtol("0x10", 0) == (16, 4) and c_strtol("1g", 16) == (1, 1)


# ---------------------------------------------------------------------------------------------- properties
def _ring_design(n, rings, parallel):
    hops = [(a, b) for order in rings for a, b in zip(order, order[1:] + order[:1])]
    return Topology.from_edges(n, hops if parallel else sorted(set(hops)))


@settings(max_examples=60, deadline=None, suppress_health_check=[HealthCheck.too_slow])
@given(st.integers(3, 9), st.integers(1, 4), st.integers(0, 10 ** 6))
def test_random_ring_sets_are_accepted_exactly_when_link_disjoint(n, k, seed):
    rng = random.Random(seed)
    rings = []
    for _ in range(k):
        order = list(range(n))
        rng.shuffle(order)
        rings.append(order)
    spec = GraphSpec(0, 4, tuple(ChannelOrder(tuple(r)) for r in rings), 1.0, 1.0)
    text = write_graphs([spec])
    # every hop its own link: always link-disjoint
    assert check_graph(text, _ring_design(n, rings, parallel=True)).ok
    # one link per pair: accepted exactly when no directed hop repeats across the rings
    hops = [(a, b) for order in rings for a, b in zip(order, order[1:] + order[:1])]
    disjoint = len(hops) == len(set(hops))
    check = check_graph(text, _ring_design(n, rings, parallel=False))
    assert check.ok == disjoint and check.link_disjoint == disjoint


@st.composite
def orders(draw):
    """(n, a channel's GPU list, whether it is a permutation of 0..n-1): a permutation, or one with a GPU
    repeated, dropped, added or out of range."""
    n = draw(st.integers(2, 9))
    order = list(draw(st.permutations(range(n))))
    edit = draw(st.sampled_from(["none", "repeat", "drop", "add", "outside"]))
    at = draw(st.integers(0, n - 1))
    if edit == "repeat":
        order[at] = order[(at + 1) % n]
    elif edit == "drop":
        del order[at]
    elif edit == "add":
        order.insert(at, draw(st.integers(0, n - 1)))
    elif edit == "outside":
        order[at] = draw(st.integers(n, 40))
    return n, order, edit == "none"


@settings(max_examples=100, deadline=None)
@given(orders())
def test_reader_accepts_exactly_the_permutations(case):
    n, order, permutation = case
    assert (sorted(order) == list(range(n))) == permutation
    topo = load(f"complete({n})")            # every pair linked both ways: one ring of any order fits
    spec = GraphSpec(0, 4, (ChannelOrder(tuple(order)),), 1.0, 1.0)
    check = check_graph(write_graphs([spec]), topo)
    assert check.ok == permutation, check.problems
    if not permutation:
        assert any("graph 0 (ring) channel 0" in p for p in check.problems)


# ------------------------------------------------------------------------------------------------ the page
def _schedule_page(expr):
    from streamlit.testing.v1 import AppTest

    from .conftest import ROOT, open_boxes, switch_page

    at = AppTest.from_file(str(ROOT / "app.py"), default_timeout=120).run()
    at.query_params["expr"] = expr
    return open_boxes(switch_page(at, "schedule"), "export_open", "x_ngraph_open").run()


def test_schedule_page_downloads_the_nccl_graph_file():
    at = _schedule_page("hypercube(4)")
    assert not any("NCCL graph" in t.label for t in at.tabs)          # finding 11: not a tab of the MSCCL export
    assert any(e.label.startswith("NCCL graph file") for e in at.expander)
    at.button(key="x_gbuild").click().run()
    assert not at.exception and not at.error
    assert any("4 ring channels of 16 GPUs" in s.value and "NCCL_GRAPH_FILE=" in s.value for s in at.success)
    assert "Download NCCL graph file" in {b.label for b in at.get("download_button")}
    assert any(c.value.startswith("0 ") and c.value.count("|") == 3 for c in at.code)


def test_schedule_page_says_why_there_is_no_graph_file():
    at = _schedule_page("hypercube(5)")
    at.button(key="x_gbuild").click().run()
    assert not at.exception
    assert any(e.value.startswith("No NCCL graph file:") and "32 GPUs" in e.value for e in at.error)
    assert "Download NCCL graph file" not in {b.label for b in at.get("download_button")}


def test_clusters_page_downloads_the_dgx_graph_file():
    from streamlit.testing.v1 import AppTest

    from .conftest import ROOT, switch_page

    at = switch_page(AppTest.from_file(str(ROOT / "app.py"), default_timeout=180).run(), "clusters").run()
    at.session_state["c_ngraph_open"] = True
    at.segmented_control(key="c_view").set_value("Export").run()          # the result views (issue 40)
    assert not any("NCCL graph" in t.label for t in at.tabs)
    at.button(key="c_gbuild").click().run()
    assert not at.exception and not at.error
    assert any("8 ring channels of 8 GPUs each on host 0 of 2" in s.value for s in at.success)
    assert "Download NCCL graph file" in {b.label for b in at.get("download_button")}
