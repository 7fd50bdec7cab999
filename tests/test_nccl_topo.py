"""NCCL topology XML as a fabric (issue 41, item 1): the DGX A100-like sample behind one NVSwitch node at NCCL's
own sm 80 NVLink figure, ForestColl on it against ``dgx_a100(boxes=1)``, several files as boxes, PCIe-only boxes,
direct NVLinks, the CLI and upload doors, and files it cannot read as one line with nothing built."""
from __future__ import annotations

import json
import re
from fractions import Fraction
from pathlib import Path

import pytest
from hypothesis import given, settings, strategies as st

from topologies import TopologyError, load, parse_topology
from topologies.nccl_topo import NVLINK_GBS, from_nccl_topologies, from_nccl_topology, nvlink_gbs
from topologies.imports import read_import
from topologies.properties import is_strongly_connected

ROOT = Path(__file__).resolve().parents[1]
SAMPLE = ROOT / "examples" / "nccl-topo-dgx-a100.xml"
SMI = ROOT / "examples" / "nvidia-smi-topo-8gpu.txt"


def box(gpus: str, cpu: str = '<cpu numaid="0" arch="x86_64" vendor="AuthenticAMD">', nics: str = "") -> str:
    return f'<system version="1">{cpu}{gpus}{nics}</cpu></system>'


def gpu(dev: int, sm: int = 80, links: str = "", width: int = 16) -> str:
    return (f'<pci busid="0000:{dev + 1:02x}:00.0" class="0x030200" link_speed="16.0 GT/s PCIe" '
            f'link_width="{width}"><gpu dev="{dev}" sm="{sm}" rank="{dev}" gdr="1">{links}</gpu></pci>')


def to_gpu(dev: int, count: int) -> str:
    return f'<nvlink target="0000:{dev + 1:02x}:00.0" count="{count}" tclass="0x030200"/>'


def bandwidths(topo) -> dict:
    out = {}
    for l in topo.links:
        out.setdefault((topo.names[l.src], topo.names[l.dst]), []).append(l.bandwidth)
    return out


def test_the_sample_is_eight_gpus_behind_one_nvswitch_at_ncclS_sm80_figure():
    got = from_nccl_topology(SAMPLE.read_text(), "dgx.xml")
    topo = got.topology
    assert topo.n == 8 and [topo.names[s] for s in topo.switch_nodes] == ["nvswitch"]
    assert NVLINK_GBS[80] == 20.0 and nvlink_gbs(80) == 20.0           # SM80_NVLINK_BW, src/graph/topo.h
    bw = bandwidths(topo)
    for g in range(8):                      # six NVSwitch chips x 2 links = 12 NVLinks x 20 GB/s, each way
        assert bw[(f"GPU{g}", "nvswitch")] == [Fraction(240)] == bw[("nvswitch", f"GPU{g}")]
    assert len(topo.links) == 16 and is_strongly_connected(topo)
    assert any("sm 80: 20 GB/s per link" in a for a in got.assumed)
    assert any("one crossbar node per box" in a for a in got.assumed)
    assert any("8 NIC(s) read past" in n for n in got.notes)


def test_forestcoll_on_the_sample_is_dgx_a100_scaled_by_the_per_gpu_bandwidth():
    from solvers.forestcoll import forestcoll

    ours = forestcoll(from_nccl_topology(SAMPLE.read_text()).topology)
    paper = forestcoll(parse_topology("dgx_a100(boxes=1)"))
    assert ours.algbw == paper.algbw * Fraction(240, 300)              # 12 x 20 GB/s against the paper's 300 GB/s
    assert ours.optimal_algbw == paper.optimal_algbw * Fraction(240, 300)


def test_topo_json_on_the_sample_files(capsys):
    from studio.cli import main

    for path, assumed in ((SAMPLE, "sm 80: 20 GB/s"), (SMI, "NV12")):
        assert main(["topo", str(path), "--json"]) == 0
        out = json.loads(capsys.readouterr().out)
        assert out["nodes"] == 8 and out["strongly_connected"] is True and out["switches"] == 1
        assert any(assumed in a for a in out["assumed"]), out["assumed"]


def test_several_files_are_boxes_joined_through_their_nics():
    text = SAMPLE.read_text()
    got = from_nccl_topologies([("a.xml", text), ("b.xml", text)])
    topo = got.topology
    assert topo.n == 16 and is_strongly_connected(topo)
    bw = bandwidths(topo)
    assert bw[("b0.mlx5_3", "network")] == [Fraction(25)]                # 200000 Mb/s / 8000
    assert bw[("b1.GPU3", "b1.mlx5_3")] == [Fraction(24)]                # Gen4 x16: 16 x 120 / 80 = 24 < 25
    assert ("b1.GPU3", "b1.mlx5_4") not in bw                            # only the NIC under its own PCIe switch
    assert load(f"{SAMPLE},{SAMPLE}").n == 16                            # the CLI's comma-joined boxes
    with pytest.raises(TopologyError, match="no <net> element"):
        from_nccl_topologies([("a.xml", text), ("c.xml", box(gpu(0, links=to_gpu(1, 1)) + gpu(1, links=to_gpu(0, 1))))])


def test_gpus_without_nvlink_go_through_pcie_and_the_cpus():
    text = ('<system version="1">'
            '<cpu numaid="0" arch="x86_64" vendor="GenuineIntel">' + gpu(0) + gpu(1) + '</cpu>'
            '<cpu numaid="1" arch="x86_64" vendor="GenuineIntel">' + gpu(2, width=8) + gpu(3) + '</cpu></system>')
    got = from_nccl_topology(text, "pcie.xml")
    topo = got.topology
    bw = bandwidths(topo)
    assert topo.n == 4 and is_strongly_connected(topo)
    assert bw[("GPU0", "cpu0")] == [Fraction(24)] and bw[("GPU2", "cpu1")] == [Fraction(12)]   # x8 is half
    assert bw[("cpu0", "cpu1")] == [Fraction(6)]                          # Intel: NCCL's QPI_BW
    assert any("PCIe/CPU paths" in a for a in got.assumed)
    assert from_nccl_topologies([("p.xml", text)], {"inter_cpu": 40.0}).topology.links[-1].bandwidth == 40


def test_direct_nvlinks_are_one_way_per_element_at_the_generation_figure():
    text = box(gpu(0, 90, to_gpu(1, 4) + to_gpu(2, 2)) + gpu(1, 90, to_gpu(0, 4) + to_gpu(2, 2))
               + gpu(2, 90, to_gpu(0, 2) + to_gpu(1, 2)))
    bw = bandwidths(from_nccl_topology(text).topology)
    assert bw[("GPU0", "GPU1")] == [Fraction(4) * Fraction("20.6")] == bw[("GPU1", "GPU0")]   # SM90_NVLINK_BW
    assert bw[("GPU2", "GPU0")] == [Fraction(2) * Fraction("20.6")]


def test_unknown_elements_are_read_past_with_a_note():
    text = box(gpu(0, links=to_gpu(1, 1) + "<c2c bw='1'/>") + gpu(1, links=to_gpu(0, 1)) + "<gizmo/>")
    got = from_nccl_topology(text, "x.xml")
    assert got.topology.n == 2 and any("<gizmo> x1" in n and "<gpu/c2c> x1" in n for n in got.notes)


@pytest.mark.parametrize("text, words", [
    (SAMPLE.read_text()[:2000], "not valid XML"),                                        # truncated
    (box('<pci busid="0000:01:00.0" class="0x030200"><gpu sm="80"/></pci>'), "<gpu> at 0000:01:00.0 has no 'dev'"),
    (box('<pci busid="0000:01:00.0"><gpu dev="x1" sm="80"/></pci>'), "dev='x1' is not an integer"),
    (box(gpu(0, links=to_gpu(7, 2))), "targets 0000:08:00.0, not a GPU of the file"),
    (box(gpu(0, links='<nvlink target="0000:09:00.0" count="0" tclass="0x068000"/>')), "count=0"),
    (box(gpu(0, links='<nvlink count="2"/>')), "has no 'tclass'"),
    (box(gpu(0) + gpu(1).replace('dev="1"', 'dev="0"')), "GPU dev 0 appears 2 times"),
    (box(gpu(0) + gpu(0)), "<pci busid='0000:01:00.0'> is repeated"),           # one bus id, two devices
    (box(""), "no <gpu> element"),
    ("<graphml/>", "root element is <graphml>, not <system>"),
    ('<!DOCTYPE x [<!ENTITY a "b">]><system/>', "DOCTYPE"),
    (box('<gpu dev="0" sm="80"/>'), "outside any <pci>"),
    (box(gpu(0) + gpu(1), cpu='<cpu>') .replace("</cpu>", "") .replace("<cpu>", ""), "sits under no <cpu>"),
])
def test_files_it_cannot_read_are_one_line_naming_the_element(text, words):
    with pytest.raises(TopologyError) as info:
        from_nccl_topology(text, "bad.xml")
    message = str(info.value)
    assert words in message and "\n" not in message and message.startswith("bad.xml")


def test_uploads_of_machine_files_come_through_the_same_reader():
    from studio.pages.compose import _from_upload
    from studio.uploads import read_machine

    class Upload:
        def __init__(self, name, data):
            self.name, self._data = name, data

        def getvalue(self):
            return self._data

    text = SAMPLE.read_bytes()
    topo, _, digest, imported = _from_upload(Upload("dgx.xml", text))
    assert topo.n == 8 and any("sm 80" in a for a in imported.assumed)
    topo, _, imported = read_machine([Upload("a.xml", text), Upload("b.xml", text)])
    assert topo.n == 16
    assert read_machine(Upload("smi.txt", SMI.read_bytes()))[0].n == 8
    with pytest.raises(TopologyError, match=r"^half\.xml: not valid XML"):
        read_machine([Upload("whole.xml", text), Upload("half.xml", text[:900])])


_CAP = {70: 6, 80: 12, 86: 12, 90: 18, 100: 18}          # NCCL's NVLink probe per GPU (src/graph/xml.cc)


@settings(max_examples=25, deadline=None)
@given(st.sampled_from(sorted(_CAP)).flatmap(
    lambda sm: st.tuples(st.lists(st.integers(1, _CAP[sm]), min_size=2, max_size=8), st.just(sm))))
def test_every_gpu_gets_its_switch_nvlinks_times_the_generation_figure(drawn):
    """Random boxes of GPUs with k switch NVLinks each (at most what NCCL probes on that generation), split over up
    to three NVSwitch elements."""
    counts, sm = drawn
    def links(k):
        parts = [k // 3, k // 3, k - 2 * (k // 3)]
        return "".join(f'<nvlink target="0000:c{j}:00.0" count="{p}" tclass="0x068000"/>'
                       for j, p in enumerate(parts) if p)

    text = box("".join(gpu(d, sm, links(k)) for d, k in enumerate(counts)))
    topo = from_nccl_topology(text).topology
    bw = bandwidths(topo)
    for d, k in enumerate(counts):
        assert bw[(f"GPU{d}", "nvswitch")] == [k * Fraction(repr(nvlink_gbs(sm)))]
    assert is_strongly_connected(topo) and re.search(r"\d+ GPUs", topo.name)


def test_ncclS_own_dump_of_a_real_h100_host_is_read():
    """NCCL 2.28.9's NCCL_TOPO_DUMP_FILE on a one-GPU H100 host (tests/data/real/h100-nccl-2.28.9): one sm 90 GPU
    without NVLink, so its PCIe link to the CPU is modelled: link_width 0 is read as 16 lanes, as NCCL does, at
    32.0 GT/s (240 x 100 Mb/s per lane): 16 x 240 / 80 = 48 GB/s."""
    got = read_import(ROOT / "tests" / "data" / "real" / "h100-nccl-2.28.9" / "nccl-topo-dump.xml")
    topo = got.topology
    assert topo.n == 1 and topo.names == ("GPU0", "cpu0")
    assert {l.bandwidth for l in topo.links} == {Fraction(48)}
    assert any("sm 90: 20.6 GB/s" in a for a in got.assumed) and any("1 NIC(s) read past" in n for n in got.notes)
