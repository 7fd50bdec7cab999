"""``rocm-smi --showtopo`` tables as GPU graphs (issue 41): the MI250-like sample of eight GCDs, direct xGMI and
PCIe pairs, the price table, tables it cannot read as one line, and random link-type tables read back exactly."""
from __future__ import annotations

from fractions import Fraction
from pathlib import Path

import pytest
from hypothesis import HealthCheck, given, settings
from hypothesis import strategies as st

from topologies import TopologyError
from topologies.properties import summarize
from topologies.rocm_smi import PRICES, from_rocm_smi

SAMPLE = Path(__file__).resolve().parents[1] / "examples" / "rocm-smi-showtopo-8gpu.txt"
# the sample's direct xGMI pairs: a ring of the eight GCDs and the four chords i - i+4 (diameter 2)
WAGNER = {frozenset((i, (i + 1) % 8)) for i in range(8)} | {frozenset((i, i + 4)) for i in range(4)}


def _banner(title: str) -> str:
    return f" {title} ".center(90, "=")


def _write(kinds: list[list[str]], hops: list[list[int]] | None = None, weights: bool = True,
           pad: int = 13) -> str:
    """Tables in rocm-smi --showtopo's layout: diagonal 0, cells left-aligned in columns ``pad`` wide."""
    n = len(kinds)

    def table(title, cell, m=n):
        lines = [_banner(title), (" " * 7 + "".join(f"GPU{j}".ljust(pad) for j in range(m))).rstrip()]
        lines += [(f"GPU{i}".ljust(7) + "".join(str(cell(i, j)).ljust(pad) for j in range(m))).rstrip()
                  for i in range(m)]
        return lines

    out = [_banner("ROCm System Management Interface")]
    if weights:
        out += table("Weight between two GPUs", lambda i, j: 0 if i == j else 15 if kinds[i][j] == "XGMI" else 40)
    if hops is not None:
        out += table("Hops between two GPUs", lambda i, j: 0 if i == j else hops[i][j], len(hops))
    out += table("Link Type between two GPUs", lambda i, j: "0" if i == j else kinds[i][j])
    out += [_banner("Numa Nodes")] + [f"GPU[{i}]\t\t: (Topology) Numa Node: 0" for i in range(n)]
    return "\n".join(out + [_banner("End of ROCm SMI Log")]) + "\n"


def _pairs(topo) -> dict[tuple[str, str], Fraction]:
    got = {}
    for link in topo.links:
        key = (topo.names[link.src], topo.names[link.dst])
        assert key not in got                                   # one link per ordered pair
        got[key] = link.bandwidth
    return got


# four GPUs: two xGMI-joined pairs, PCIe between the pairs
MIXED = [["0", "XGMI", "PCIE", "PCIE"], ["XGMI", "0", "PCIE", "PCIE"],
         ["PCIE", "PCIE", "0", "XGMI"], ["PCIE", "PCIE", "XGMI", "0"]]
MIXED_TEXT = _write(MIXED, [[0, 1, 2, 2], [1, 0, 2, 2], [2, 2, 0, 1], [2, 2, 1, 0]])


def test_the_sample_is_eight_gcds_with_three_direct_xgmi_peers_each():
    got = from_rocm_smi(SAMPLE.read_text())
    topo = got.topology
    assert topo.name == "rocm-smi --showtopo: 8 GPUs" and topo.names == tuple(f"GPU{g}" for g in range(8))
    assert topo.n == 8 and not topo.switch_nodes and summarize(topo).as_dict()["strongly_connected"]
    assert len(topo.links) == 24 and set(_pairs(topo).values()) == {Fraction(36)}
    assert {frozenset((int(a[3:]), int(b[3:]))) for a, b in _pairs(topo)} == WAGNER
    assert any("36 GB/s" in a and "does not print link counts or widths" in a for a in got.assumed)
    assert any(a.startswith("16 XGMI GPU pairs") and "routing" in a for a in got.assumed)
    assert PRICES == {"XGMI": 36.0, "PCIE": 12.0}


def test_a_price_override_changes_the_bandwidths():
    got = from_rocm_smi(SAMPLE.read_text(), {"XGMI": 50.0}, name="mi250")
    assert got.topology.name == "mi250: 8 GPUs" and {l.bandwidth for l in got.topology.links} == {Fraction(50)}
    assert any(a.startswith("50 GB/s") for a in got.assumed)
    mixed = _pairs(from_rocm_smi(MIXED_TEXT, {"PCIE": 25.5}).topology)
    assert mixed[("GPU0", "GPU1")] == 36 and mixed[("GPU0", "GPU2")] == Fraction(51, 2)


def test_xgmi_and_pcie_pairs_are_links_at_their_prices():
    for text in (MIXED_TEXT, _write(MIXED, weights=False)):
        got = from_rocm_smi(text)
        bw = _pairs(got.topology)
        assert len(bw) == 12 and bw[("GPU0", "GPU1")] == 36 and bw[("GPU3", "GPU2")] == 36
        assert bw[("GPU0", "GPU2")] == 12 and bw[("GPU1", "GPU3")] == 12
        assert any(a.startswith("4 GPU pairs joined through PCIE are links at 12 GB/s") and "shared" in a
                   for a in got.assumed)
    assert any("no Hops table" in a for a in from_rocm_smi(_write(MIXED)).assumed)


def test_direct_links_that_do_not_join_every_gpu_are_one_line():
    kinds = [["0" if i == j else "XGMI" for j in range(4)] for i in range(4)]
    hops = [[0 if i == j else 1 if i // 2 == j // 2 else 2 for j in range(4)] for i in range(4)]
    with pytest.raises(TopologyError) as caught:
        from_rocm_smi(_write(kinds, hops))
    assert "GPU2, GPU3 cannot be reached from GPU0" in str(caught.value) and "\n" not in str(caught.value)


_TEXT = SAMPLE.read_text()
_LINK_TYPES = _TEXT.index("= Link Type")
_ROW3 = _TEXT.index("GPU3   XGMI", _LINK_TYPES)
_ROW5 = _TEXT.index("GPU5   XGMI", _LINK_TYPES)
_ROW3_CUT = _TEXT[:_ROW3] + _TEXT[_ROW3:_TEXT.index("\n", _ROW3)].rsplit(None, 1)[0] + _TEXT[_TEXT.index("\n", _ROW3):]


@pytest.mark.parametrize("text, words", [
    (_ROW3_CUT, "the Link Type table: row GPU3 has 7 cells, the header names 8 GPUs (a missing column)"),
    ("GPU0 GPU1\nGPU0 0 XGMI\nGPU1 XGMI 0\n", "no 'Link Type between two GPUs' table: not rocm-smi --showtopo output"),
    (_TEXT[:_TEXT.index("= Hops")], "no 'Link Type between two GPUs' table"),
    (_write([["0", "XGMI", "PCIE"], ["XGMI", "0", "XGMI"], ["XGMI", "XGMI", "0"]]),
     "the Link Type table: GPU0 to GPU2 is PCIE but GPU2 to GPU0 is XGMI"),
    (_write([["0", "XGMI", "NVLINK"], ["XGMI", "0", "XGMI"], ["NVLINK", "XGMI", "0"]]),
     "the Link Type table, row GPU0, column GPU2: 'NVLINK' is not XGMI or PCIE"),
    (_write([["XGMI", "XGMI"], ["XGMI", "0"]]).replace("GPU0   0 ", "GPU0   XGMI "),
     "the Link Type table, row GPU0, column GPU0: 'XGMI' is not 0 (itself)"),
    (_write(MIXED, [[0, 1, 2, 2], [1, 0, 2, 2], [2, 2, 0, "1.5"], [2, 2, "1.5", 0]]),
     "the Hops table, row GPU2, column GPU3: '1.5' is not a whole number of hops"),
    (_write(MIXED, [[0, 1, 2, 2], [1, 0, 2, 2], [2, 2, 0, 1], [2, 2, 3, 0]]),
     "the Hops table: GPU2 to GPU3 is 1 but GPU3 to GPU2 is 3"),
    (_write(MIXED).replace("15           0            40", "15           0            4o"),
     "the Weight table, row GPU1, column GPU2: '4o' is not a whole-number weight"),
    (_TEXT[:_ROW5], "the Link Type table: no row for GPU5, GPU6, GPU7"),
    (_TEXT[:_ROW5 + 30], "the Link Type table: row GPU5 has 2 cells, the header names 8 GPUs (a missing column)"),
    (_TEXT.replace("GPU6         GPU7\nGPU0   0            XGMI", "GPU6         GPU9\nGPU0   0            XGMI"),
     "the Link Type table's header names GPU0, GPU1, GPU2, GPU3, GPU4, GPU5, ..., not GPU0 to GPU7"),
    (_write([["0"]]), "the Link Type table names 1 GPUs; an import takes 2 to 1024"),
    (_write(MIXED).replace("Weight between two GPUs", "Link Type between two GPUs"),
     "the 'Link Type between two GPUs' table is given twice"),
    (_write(MIXED, [[0, 1, 2], [1, 0, 2], [2, 2, 0]]), "the Hops table names 3 GPUs, the Link Type table 4"),
])
def test_a_table_it_cannot_read_is_one_line(text, words):
    with pytest.raises(TopologyError) as caught:
        from_rocm_smi(text)
    assert words in str(caught.value)
    assert str(caught.value).startswith("rocm-smi --showtopo: ") and "\n" not in str(caught.value)


@pytest.mark.parametrize("price", [0.0, -1.0, float("nan"), "36"])
def test_a_bad_price_is_one_line(price):
    with pytest.raises(TopologyError) as caught:
        from_rocm_smi(SAMPLE.read_text(), {"XGMI": price})
    assert "a link price must be a number of GB/s" in str(caught.value) and "\n" not in str(caught.value)


@st.composite
def _tables(draw):
    """A random symmetric link-type matrix, hops (1 or more; XGMI pairs of hops above 1 are routed) or none."""
    n = draw(st.integers(2, 9))
    kinds = [["0"] * n for _ in range(n)]
    hops = [[0] * n for _ in range(n)]
    for i in range(n):
        for j in range(i + 1, n):
            kinds[i][j] = kinds[j][i] = draw(st.sampled_from(["XGMI", "PCIE"]))
            hops[i][j] = hops[j][i] = draw(st.integers(1, 3))
    return kinds, draw(st.sampled_from([hops, None])), draw(st.booleans()), draw(st.integers(5, 14))


@settings(max_examples=60, deadline=None, suppress_health_check=[HealthCheck.too_slow])
@given(_tables())
def test_random_link_type_tables_read_back_to_the_pairs_written(table):
    kinds, hops, weights, pad = table
    n = len(kinds)
    want = {(f"GPU{i}", f"GPU{j}"): Fraction(36 if kinds[i][j] == "XGMI" else 12)
            for i in range(n) for j in range(n)
            if i != j and (kinds[i][j] == "PCIE" or hops is None or hops[i][j] == 1)}
    reached, stack = {0}, [0]
    while stack:
        i = stack.pop()
        for j in range(n):
            if (f"GPU{i}", f"GPU{j}") in want and j not in reached:
                reached.add(j)
                stack.append(j)
    text = _write(kinds, hops, weights, pad)
    if len(reached) < n:
        with pytest.raises(TopologyError, match="cannot be reached from GPU0"):
            from_rocm_smi(text)
        return
    got = from_rocm_smi(text)
    assert _pairs(got.topology) == want and got.topology.n == n
    assert summarize(got.topology).as_dict()["strongly_connected"]
