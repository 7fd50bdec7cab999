"""A GPU graph from ``nvidia-smi topo -m`` (issue 41, item 1): the matrix of how each pair of GPUs is joined.

The format (``../shared/notes/runtime-truth.md``): a header row naming GPU0 .. GPUn-1, then NICs and the
affinity columns ("CPU Affinity", "NUMA Affinity", "GPU NUMA ID"); one row per GPU (and NIC) whose cells are
``X`` (itself), ``NV#`` (a bonded set of # NVLinks), ``PIX``, ``PXB``, ``PHB``, ``NODE`` or ``SYS`` (PCIe or CPU
paths of growing length); a "Legend:" block follows. Columns are separated by tabs or runs of spaces; the header
row is wrapped in ANSI underline codes even when written to a file (seen on an H100 host, driver with CUDA 13.0:
``tests/data/real/h100-smi``), which the reader drops.

How it becomes a topology (every assumption is in ``SmiImport.assumed``):

* the GPUs are the compute nodes; NICs and the affinity columns are read past;
* ``NV#`` is 1 to 18 (``MAX_NVLINKS``: the most NVLinks NCCL probes on one GPU of any generation); a table
  claiming more (``NV999``) is refused, not priced as 999 links, and so is a row of direct NVLinks (below) whose
  counts add up to more than 18;
* where every pair of GPUs shows the same ``NV#`` (an NVSwitch system: DGX A100 and H100 boxes print NV12 or
  NV18 between every pair), one switch node joins them, each GPU with one link of # x the per-NVLink bandwidth
  each way: a GPU has # NVLinks in all, not # to every peer;
* otherwise each ``NV#`` pair is a direct link of # x the per-NVLink bandwidth, and a pair joined only through
  PCIe or the CPUs is a link at that path's price (the path is shared in truth; the import says so);
* prices per link kind come from ``PRICES`` (GB/s per NVLink, per PCIe or CPU path), which the caller may
  replace: NCCL's own figures (``src/graph/topo.h``: SM80 20.0 GB/s per NVLink, PCI_BW 12.0, QPI_BW 6.0), since
  ``topo -m`` does not say the GPU generation.

A table it cannot read is a ``TopologyError`` naming the row and the cell; nothing is built half way.
"""
from __future__ import annotations

import re
from fractions import Fraction

from .imported import Imported
from .model import COMPUTE, SWITCH, Link, Topology, TopologyError

__all__ = ["PRICES", "SmiImport", "from_nvidia_smi"]

PRICES = {"NV": 20.0, "PIX": 12.0, "PXB": 12.0, "PHB": 12.0, "NODE": 6.0, "SYS": 6.0}
MAX_GPUS = 1024
# The most NVLinks NCCL looks for on one GPU (NVIDIA/nccl ``src/graph/xml.cc``, ``ncclTopoGetXmlFromGpu``: 4 below
# sm 70, 6 below sm 80, 12 below sm 90, 18 from sm 90 on). ``topo -m`` does not say the generation, so a pair's
# ``NV#`` is held to the largest of them: no GPU NCCL knows has more NVLinks than that, to one peer or in all.
MAX_NVLINKS = 18
_NV = re.compile(r"NV(\d{1,3})$")
_GPU = re.compile(r"GPU(\d{1,6})$")
_ANSI = re.compile(r"\x1b\[[0-9;]*[A-Za-z]")      # nvidia-smi underlines its header row even into a file


SmiImport = Imported       # the topology, what the import assumed, and what it read past


def _gbs(value: float) -> Fraction:
    """A bandwidth as the exact decimal it is written as (``topologies.model`` keeps Fractions)."""
    if not (isinstance(value, (int, float)) and 0 < value < 1e7):
        raise TopologyError(f"a link price must be a number of GB/s above 0 and below 1e7, got {value!r}"[:120])
    return Fraction(repr(float(value)))


def from_nvidia_smi(text: str, prices: dict[str, float] | None = None, name: str = "nvidia-smi topo -m") \
        -> SmiImport:
    """The GPU graph of an ``nvidia-smi topo -m`` table (module docstring)."""
    price = {**PRICES, **(prices or {})}
    lines = [l for l in _ANSI.sub("", text).splitlines() if l.strip()]
    header = next((i for i, l in enumerate(lines) if l.split()[0] == "GPU0" and l.split()[1:2] != ["X"]), None)
    if header is None:
        raise TopologyError(f"{name}: no header row naming GPU0, GPU1, ...: not an nvidia-smi topo -m table")
    columns = lines[header].split()
    gpus = [c for c in columns if _GPU.match(c)]
    if [int(_GPU.match(c).group(1)) for c in gpus] != list(range(len(gpus))):
        raise TopologyError(f"{name}: the header names {', '.join(gpus[:6])}..., not GPU0 to GPU{len(gpus) - 1}")
    n = len(gpus)
    if not 2 <= n <= MAX_GPUS:
        raise TopologyError(f"{name}: {n} GPU{'' if n == 1 else 's'}; an import takes 2 to {MAX_GPUS} (a GPU alone "
                            "has no links to model)")
    matrix: dict[int, list[str]] = {}
    for number, line in enumerate(lines[header + 1:], start=header + 2):
        if line.strip().lower().startswith("legend"):
            break
        tokens = line.split()
        m = _GPU.match(tokens[0]) if tokens else None
        if m is None:
            continue                                  # a NIC's row, or a note
        g = int(m.group(1))
        if g >= n or g in matrix:
            raise TopologyError(f"{name}: row {tokens[0]} is {'repeated' if g in matrix else 'not in the header'}")
        if len(tokens) < n + 1:
            raise TopologyError(f"{name}: row {tokens[0]} has {len(tokens) - 1} cells, the header names {n} GPUs "
                                "(a missing column)")
        cells = tokens[1:n + 1]
        for j, cell in enumerate(cells):
            if (cell == "X") != (j == g) or (cell != "X" and _NV.match(cell) is None and cell not in price):
                raise TopologyError(f"{name}: row {tokens[0]}, column GPU{j}: {cell[:12]!r} is not X (itself), "
                                    f"NV#, {', '.join(k for k in PRICES if k != 'NV')}")
            nv = _NV.match(cell)
            if nv and not 1 <= int(nv.group(1)) <= MAX_NVLINKS:
                raise TopologyError(f"{name}: row {tokens[0]}, column GPU{j}: {cell} is not a count of NVLinks a GPU "
                                    f"has (1 to {MAX_NVLINKS}, the most NCCL probes on any GPU)")
        matrix[g] = cells
    missing = [f"GPU{g}" for g in range(n) if g not in matrix]
    if missing:
        raise TopologyError(f"{name}: no row for {', '.join(missing[:6])}")
    for g in range(n):
        for j in range(n):
            if matrix[g][j] != matrix[j][g]:
                raise TopologyError(f"{name}: GPU{g} to GPU{j} is {matrix[g][j]} but GPU{j} to GPU{g} is "
                                    f"{matrix[j][g]}")
    counts = {matrix[g][j] for g in range(n) for j in range(n) if g != j}
    assumed = [f"{price['NV']:g} GB/s per NVLink (NCCL's SM80 figure unless told otherwise; topo -m does not say "
               "the GPU generation)"]
    names = tuple(f"GPU{g}" for g in range(n))
    if len(counts) == 1 and _NV.match(next(iter(counts))) and n >= 3:
        k = int(_NV.match(next(iter(counts))).group(1))
        bw = k * price["NV"]
        links = [Link(g, n, _gbs(bw)) for g in range(n)] + [Link(n, g, _gbs(bw)) for g in range(n)]
        assumed.append(f"every pair shows NV{k}: one NVSwitch joins the {n} GPUs, each with {k} NVLinks "
                       f"({bw:g} GB/s each way)")
        topo = Topology(names + ("nvswitch",), (COMPUTE,) * n + (SWITCH,), tuple(links), name=f"{name}: {n} GPUs")
    else:
        for g in range(n):
            total = sum(int(m.group(1)) for cell in matrix[g] if (m := _NV.match(cell)))
            if total > MAX_NVLINKS:
                raise TopologyError(f"{name}: row GPU{g}: its NV# cells add up to {total} NVLinks, above the "
                                    f"{MAX_NVLINKS} a GPU has (an NVSwitch box whose pairs differ, a link down, "
                                    "is not modelled: its pairs are not direct links)")
        links, paths = [], set()
        for g in range(n):
            for j in range(n):
                if g == j:
                    continue
                cell = matrix[g][j]
                nv = _NV.match(cell)
                bw = int(nv.group(1)) * price["NV"] if nv else price[cell]
                if not nv:
                    paths.add(cell)
                links.append(Link(g, j, _gbs(bw)))
        if paths:
            assumed.append(f"GPU pairs joined through {', '.join(sorted(paths))} are links at "
                           + ", ".join(f"{p} {price[p]:g} GB/s" for p in sorted(paths))
                           + " (those paths are shared by the pairs that use them; the import does not model that)")
        topo = Topology(names, (COMPUTE,) * n, tuple(links), name=f"{name}: {n} GPUs")
    return SmiImport(topo, assumed)
