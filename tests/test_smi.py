"""``nvidia-smi topo -m`` tables as GPU graphs (issue 41, item 1): the NVSwitch box of the sample, a box of direct
NVLinks and PCIe paths, the price table, and tables it cannot read as one line."""
from __future__ import annotations

from fractions import Fraction
from pathlib import Path

import pytest

from topologies import TopologyError
from topologies.properties import summarize
from topologies.smi import from_nvidia_smi

SAMPLE = Path(__file__).resolve().parents[1] / "examples" / "nvidia-smi-topo-8gpu.txt"
# four GPUs of a DGX-1-like box: NV1/NV2 between some pairs, SYS (through the CPUs) between the rest
DIRECT = """\tGPU0\tGPU1\tGPU2\tGPU3\tCPU Affinity
GPU0\t X \tNV1\tNV2\tSYS\t0-19
GPU1\tNV1\t X \tSYS\tNV2\t0-19
GPU2\tNV2\tSYS\t X \tNV1\t20-39
GPU3\tSYS\tNV2\tNV1\t X \t20-39
"""


def test_the_sample_is_eight_gpus_behind_one_nvswitch():
    got = from_nvidia_smi(SAMPLE.read_text())
    topo = got.topology
    assert topo.n == 8 and len(topo.switch_nodes) == 1 and summarize(topo).as_dict()["strongly_connected"]
    assert {l.bandwidth for l in topo.links} == {Fraction(240)}          # 12 NVLinks x 20 GB/s, each way
    assert any("one NVSwitch joins the 8 GPUs" in a for a in got.assumed)
    assert from_nvidia_smi(SAMPLE.read_text(), {"NV": 25.0}).topology.links[0].bandwidth == Fraction(300)


def test_direct_nvlinks_and_pcie_paths_are_links_at_their_prices():
    got = from_nvidia_smi(DIRECT)
    topo = got.topology
    assert topo.n == 4 and not topo.switch_nodes and len(topo.links) == 12
    bw = {(topo.names[l.src], topo.names[l.dst]): l.bandwidth for l in topo.links}
    assert bw[("GPU0", "GPU1")] == 20 and bw[("GPU0", "GPU2")] == 40 and bw[("GPU0", "GPU3")] == 6
    assert any("SYS 6 GB/s" in a and "shared" in a for a in got.assumed)


@pytest.mark.parametrize("text, words", [
    (DIRECT.replace("GPU1\tNV1\t X \tSYS\tNV2\t0-19", "GPU1\tNV1\t X \tSYS"), "row GPU1 has 3 cells"),
    (DIRECT.replace("GPU0\t X \tNV1", "GPU0\t X \tNVX"), "row GPU0, column GPU1: 'NVX'"),
    (DIRECT.replace("GPU0\t X \tNV1\tNV2", "GPU0\t X \tNV1\tNV1"), "GPU0 to GPU2 is NV1 but GPU2 to GPU0 is NV2"),
    (DIRECT.replace("GPU3\tSYS\tNV2\tNV1\t X \t20-39\n", ""), "no row for GPU3"),
    ("GPU utilisation 0 %\n", "no header row"),
    (DIRECT.replace("\tGPU2\tGPU3", "\tGPU2\tGPU5"), "not GPU0 to GPU3"),
])
def test_a_table_it_cannot_read_is_one_line(text, words):
    with pytest.raises(TopologyError) as caught:
        from_nvidia_smi(text)
    assert words in str(caught.value) and "\n" not in str(caught.value)


REAL = Path(__file__).resolve().parent / "data" / "real" / "h100-smi" / "nvidia-smi-topo-m.txt"


def test_a_real_table_with_its_ansi_underline_is_read_and_one_gpu_is_one_line():
    """``nvidia-smi topo -m`` on a one-GPU H100 host (recorded 2026-11-28 by bench/collect_machine.sh) wraps its
    header row in ANSI underline codes even into a file; the reader drops them. One GPU has nothing to model: one
    line says so. The same table with a second GPU joined by NV18 reads as two GPUs 18 x 20 GB/s apart."""
    text = REAL.read_text()
    assert "\x1b[4m" in text
    with pytest.raises(TopologyError) as info:
        from_nvidia_smi(text, name="real.txt")
    assert str(info.value) == "real.txt: 1 GPU; an import takes 2 to 1024 (a GPU alone has no links to model)"
    two = text.replace("GPU0\tCPU Affinity", "GPU0\tGPU1\tCPU Affinity").replace(
        "GPU0\t X \t0-15", "GPU0\t X \tNV18\t0-15\nGPU1\tNV18\t X \t0-15")
    topo = from_nvidia_smi(two).topology
    assert topo.n == 2 and {l.bandwidth for l in topo.links} == {Fraction(360)}
