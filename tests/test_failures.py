"""Failures (issue 42): the failure models on any topology, the degraded fabric keeping names, the analysis of a
failure set (connectivity, bounds, ForestColl's optimum, every synthesizer re-run, verified and priced at the healthy
design's scale), the summary, and the CLI with its cache and resume."""
from __future__ import annotations

import contextlib
import io
import json
import math

import networkx as nx
import pytest
from hypothesis import given, settings

from solvers.failures import (FailureError, FailureTask, analyse, connectivity, degrade, describe, elements,
                              failure_sets, summarize_rows)
from solvers.runtime import Workload
from topologies import load
from topologies.properties import is_strongly_connected

from .helpers import strongly_connected_topologies

WORK = Workload()


def test_the_failure_models_find_every_element_of_their_kind():
    torus = load("torus(4,4)")
    cables = elements(torus, "links")
    assert len(cables) == 32 and all(len(c.links) == 2 for c in cables)        # a 4x4 torus has 32 cables
    assert len(elements(torus, "directed-links")) == 64 and len(elements(torus, "gpus")) == 16
    assert elements(torus, "switches") == [] and elements(torus, "boxes") == []
    kautz = load("gkautz(4,64)")                       # directed, with self-loops: a link is its own cable
    assert len(elements(kautz, "links")) == sum(1 for l in kautz.links if l.src != l.dst)
    assert all(len(c.links) == 1 and "->" in c.name for c in elements(kautz, "links"))
    dgx = load("dgx_a100(boxes=2)")
    assert len(elements(dgx, "nics")) == 16 and len(elements(dgx, "switches")) == 2 + 16 + 2
    assert [b.name for b in elements(dgx, "boxes")] == ["b0", "b1"]


def test_failure_sets_are_exhaustive_or_seeded_samples():
    torus = load("torus(4,4)")
    assert len(failure_sets(torus, "links")) == 32
    assert len(failure_sets(torus, "links", 2)) == math.comb(32, 2)
    one = failure_sets(torus, "links", 3, samples=20, seed=7)
    assert one == failure_sets(torus, "links", 3, samples=20, seed=7) != failure_sets(torus, "links", 3, 20, 8)
    assert all(len(s) == 3 and len({e.name for e in s}) == 3 for s in one)
    for bad, words in ((lambda: failure_sets(torus, "links", 33), "between 1 and the 32"),
                       (lambda: failure_sets(torus, "links", 5), "above 10,000; sample them"),
                       (lambda: failure_sets(torus, "switches"), "no switch nodes"),
                       (lambda: failure_sets(torus, "cables"), "no failure kind 'cables'")):
        with pytest.raises(FailureError, match=words):
            bad()


def test_a_degraded_fabric_keeps_every_other_name_and_link():
    torus = load("torus(4,4)")
    cable = elements(torus, "links")[0]
    less = degrade(torus, [cable])
    assert less.names == torus.names and len(less.links) == len(torus.links) - 2
    gpu = elements(torus, "gpus")[5]
    without = degrade(torus, [gpu])
    assert without.n == 15 and gpu.name not in without.names and len(without.links) == len(torus.links) - 8
    dgx = load("dgx_a100(boxes=2)")
    nvs = next(e for e in elements(dgx, "switches") if e.name == "b0.nvs")
    nic = next(e for e in elements(dgx, "nics") if e.name == "b1.nic3")
    assert describe(dgx, nvs) == "switch b0.nvs joining 8 GPUs (b0.g0, b0.g1, b0.g2, b0.g3 ...)"
    assert describe(dgx, nic) == "NIC b1.nic3 of GPU b1.g3, cabled to 1 switch"
    ib = next(e for e in elements(dgx, "switches") if e.name == "ib0")
    assert describe(dgx, ib) == "switch ib0 joining 8 switches"                  # the even NICs of both boxes


def test_one_failed_cable_of_a_torus_keeps_forestcoll_at_the_degraded_optimum():
    torus = load("torus(4,4)")
    name = elements(torus, "links")[0].name
    row = analyse(FailureTask("torus(4,4)", "links", (name,), ("forestcoll", "ring"), "allgather", WORK.key))
    assert row["connected"] and row["forestcoll_verified"] and row["ring_verified"]
    assert row["forestcoll_flow_algbw_GBps"] == pytest.approx(row["optimum_algbw_GBps"], rel=1e-12)
    healthy = analyse(FailureTask("torus(4,4)", "links", (), ("forestcoll",), "allgather", WORK.key))
    assert healthy["optimum_algbw_GBps"] == pytest.approx(64 / 15) and row["optimum_algbw_GBps"] < 64 / 15


def test_a_cut_ring_is_disconnected_and_names_what_it_cut_off():
    ring = load("biring(6)")
    cables = [e.name for e in elements(ring, "links")]
    row = analyse(FailureTask("biring(6)", "links", (cables[0], cables[3]), ("ring",), "allreduce", WORK.key))
    assert row["connected"] is False and row["ring_status"] == "disconnected" and row["cut_off"]
    summary = summarize_rows({"ring_algbw_GBps": 1.0}, [row], ["ring"])
    assert summary["disconnected"] == 1.0 and summary["per_synthesizer"]["ring"]["worst_algbw_fraction"] == 0.0


def test_the_healthy_row_is_priced_as_every_other_page_prices_it():
    """No failure: the runtime model at the healthy scale is exactly ``Workload.model`` (``schedule --json``)."""
    from solvers import synthesize

    row = analyse(FailureTask("gkautz(2,16)", "links", (), ("bfb",), "allreduce", WORK.key))
    r = synthesize(load("gkautz(2,16)"), "bfb", "allreduce", total_bytes=WORK.total_bytes)
    assert row["bfb_time_us"] == pytest.approx(WORK.model(r.topology, r.schedule).run(WORK.total_bytes).time_us,
                                               rel=1e-12)


def test_a_failure_is_not_priced_away():
    """With uniform prices the degraded fabric keeps the healthy design's link speeds: a cut cable of a biring
    halves its bottleneck cut, and BFB's algbw with it (scaling the degraded fabric so its slowest node's egress is
    B again would double the surviving links and hide the loss). The ring itself has no Hamiltonian ring left:
    it routes a ring edge the long way round, and its algbw falls below half the healthy ring's."""
    ring = load("biring(8)")
    cable = elements(ring, "links")[0].name
    big = Workload(total_bytes=1e9)
    healthy = analyse(FailureTask("biring(8)", "links", (), ("bfb", "ring"), "allgather", big.key))
    cut = analyse(FailureTask("biring(8)", "links", (cable,), ("bfb", "ring"), "allgather", big.key))
    assert cut["connected"] and cut["optimum_algbw_GBps"] == pytest.approx(healthy["optimum_algbw_GBps"] / 2)
    assert cut["bfb_algbw_GBps"] < 0.6 * healthy["bfb_algbw_GBps"]
    assert cut["ring_status"] == "ok" and "no Hamiltonian cycle found" in cut["ring_message"]
    assert cut["ring_algbw_GBps"] < 0.5 * healthy["ring_algbw_GBps"]


@settings(max_examples=30, deadline=None)
@given(strongly_connected_topologies(max_nodes=7, switches=False))
def test_a_design_survives_every_single_link_failure_iff_its_link_connectivity_is_two(topo):
    """networkx's link connectivity against the failure model: every single directed-link failure leaves the
    design strongly connected exactly when at least two links cross every cut."""
    if topo.n < 2:
        return
    survives = all(is_strongly_connected(degrade(topo, s)) for s in failure_sets(topo, "directed-links"))
    g = nx.DiGraph((l.src, l.dst) for l in topo.links if l.src != l.dst)
    parallel = any(sum(1 for m in topo.links if (m.src, m.dst) == (l.src, l.dst)) > 1 for l in topo.links)
    if not parallel:                   # connectivity() counts parallel links once
        assert survives == (connectivity(topo)["link_connectivity"] >= 2) == (nx.edge_connectivity(g) >= 2)


def _cli(*argv):
    from studio.cli import main

    out, err = io.StringIO(), io.StringIO()
    with contextlib.redirect_stdout(out), contextlib.redirect_stderr(err):
        code = main(list(argv))
    return code, out.getvalue(), err.getvalue()


def test_the_cli_lists_every_set_reads_the_cache_on_a_second_run_and_resumes(tmp_path, monkeypatch):
    monkeypatch.setenv("TOPOLOGY_STUDIO_CACHE", str(tmp_path / "cache"))
    argv = ["failures", "biring(6)", "--algo", "bfb", "--collective", "allgather", "--links", "1", "--workers", "1",
            "--json"]
    code, out, err = _cli(*argv)
    assert code == 0, err
    doc = json.loads(out)
    assert len(doc["rows"]) == 6 and all(r["connected"] and r["bfb_verified"] for r in doc["rows"])
    assert doc["connectivity"] == {"node_connectivity": 2, "link_connectivity": 2}
    assert doc["summary"]["disconnected"] == 0.0 and doc["summary"]["rows_from_cache"] == 0
    argv[argv.index("--workers"):argv.index("--workers") + 2] = ["--in-process"]  # no cluster from here on
    code, again, err = _cli(*argv)                  # the same question: the kept reply, word for word
    assert code == 0 and again == out and "answered from the results cache" in err
    table = tmp_path / "rows.csv"
    code, out, err = _cli(*argv, "-o", str(table))  # a run that writes a file runs, reading every row back
    assert code == 0 and table.read_text().count("\n") == 1 + 7
    assert json.loads(out)["summary"]["rows_from_cache"] == 7                         # the healthy design and 6 sets
    assert [r["bfb_algbw_GBps"] for r in json.loads(out)["rows"]] == [r["bfb_algbw_GBps"] for r in doc["rows"]]
    code, out, err = _cli(*argv, "-o", str(table))                   # resumed: every row read back, none solved
    assert code == 0 and "sets of" not in err and len(json.loads(out)["rows"]) == 6
    code, _, err = _cli("failures", "biring(6)", "--algo", "ring", "--links", "9", "--in-process")
    assert code == 2 and "between 1 and the 6" in err and err.count("\n") == 1


def test_rows_are_kept_tagged_and_an_altered_one_is_deleted_unread(tmp_path):
    """The failure rows live in the results cache as tagged JSON records: read back as written, and a record
    altered on disk (or not JSON, or a link) is deleted and named, never trusted."""
    from solvers.results_cache import ResultsCache

    cache = ResultsCache(tmp_path / "cache")
    assert cache.put_record("failures-abc", {"failed": "a<->b", "connected": True, "x": 1.5})
    assert cache.get_record("failures-abc") == {"failed": "a<->b", "connected": True, "x": 1.5}
    assert not cache.put_record("failures-nan", {"x": float("nan")})          # not JSON: not kept
    path = next(p for p in (tmp_path / "cache").iterdir() if p.name.startswith("failures-abc"))
    data = bytearray(path.read_bytes())
    data[-3] ^= 1
    path.write_bytes(bytes(data))
    said = []
    assert cache.get_record("failures-abc", warn=said.append) is None and not path.exists()
    assert len(said) == 1 and "fails its tag" in said[0]
    cache.put_record("failures-abc", {"failed": "x"})
    link = tmp_path / "cache" / path.name
    link.unlink()
    link.symlink_to(tmp_path / "elsewhere")
    assert cache.get_record("failures-abc", warn=said.append) is None and "symbolic link" in said[-1]


def test_a_failure_set_is_a_design_that_schedules_exports_and_passes_check_xml(tmp_path):
    """``fail(G, links=[i])`` names the degraded fabric in the expression language: the same names, the cable's two
    links gone; ForestColl's allreduce on it exports as MSCCL XML that check-xml passes; a bad index is one line."""
    from solvers.failures import failure_expr
    from topologies import TopologyError

    torus = load("torus(4,4)")
    cable = elements(torus, "links")[20]
    expr = failure_expr("torus(4,4)", torus, [cable])
    assert expr == "fail(torus(4,4),links=[20])"
    topo = load(expr)
    assert topo.names == torus.names and len(topo.links) == 62 and topo.expr == expr
    row = analyse(FailureTask("torus(4,4)", "links", (cable.name,), ("forestcoll",), "allreduce", WORK.key))
    assert row["expr"] == expr
    out = tmp_path / "degraded.xml"
    code, _, err = _cli("export", expr, "--algo", "forestcoll", "--collective", "allreduce", "-o", str(out))
    assert code == 0, err
    code, text, err = _cli("check-xml", str(out))
    assert code == 0 and text.startswith("ok: 16 ranks"), err
    with pytest.raises(TopologyError, match="links 40 is not one of the design's 32 cables"):
        load("fail(torus(4,4),links=[40])")


def test_the_summary_counts_failure_sets_faster_than_the_healthy_design():
    """A degraded fabric's schedule runs on the healthy design too, so a set faster than the healthy design is
    time a synthesizer left on the table: the summary counts them (disconnected sets and failed runs are not)."""
    healthy = {"ring_algbw_GBps": 2.0, "ring_status": "ok"}
    rows = [{"failed": "a", "connected": True, "ring_algbw_GBps": 2.5, "ring_status": "ok"},
            {"failed": "b", "connected": True, "ring_algbw_GBps": 2.0, "ring_status": "ok"},
            {"failed": "c", "connected": True, "ring_algbw_GBps": 1.0, "ring_status": "ok"},
            {"failed": "d", "connected": False, "ring_algbw_GBps": None, "ring_status": "disconnected"},
            {"failed": "e", "connected": True, "ring_algbw_GBps": None, "ring_status": "error"}]
    ring = summarize_rows(healthy, rows, ["ring"])["per_synthesizer"]["ring"]
    assert ring["faster_than_healthy"] == 1 and ring["not_ok"] == 1 and ring["worst_failure"] == "d"
