"""A GPU graph from AMD's ``rocm-smi --showtopo`` (issue 41): the tables of how each pair of GPUs is joined.

The format (rocm-smi's ``--showtopo``, the union of ``--showtopoweight --showtopohops --showtopotype
--showtoponuma``): sections under banner lines of ``=`` characters with a title in the middle ("ROCm System
Management Interface", "Weight between two GPUs", "Hops between two GPUs", "Link Type between two GPUs", "Numa
Nodes", "End of ROCm SMI Log"). Each of the three matrices has a header row ``GPU0 GPU1 ...`` and one row per GPU
(``GPU0   0   15   15 ...``), columns separated by runs of spaces; the diagonal is ``0``; weights and hops are
whole numbers, link types ``XGMI`` or ``PCIE``. On an MI200 node each GPU is one GCD (two to a package).

How it becomes a topology (every assumption is in ``SmiImport.assumed``):

* the GPUs are the compute nodes ``GPU0`` .. ``GPUn-1``; the Numa section and any other section are read past;
* the Link Type table is required; the Hops and Weight tables are optional and, where present, checked like it
  (shape, whole numbers, symmetry); the Weight table is not used further;
* a pair of type ``XGMI`` with hops 1 (or any ``XGMI`` pair where there is no Hops table) is one direct link each
  way; an ``XGMI`` pair with hops above 1 is a path through other GPUs, not a link, and is left to routing;
* a ``PCIE`` pair is a link at the PCIe price (the path is shared in truth; the import says so), as
  ``topologies.smi`` does for PCIe paths;
* prices per link kind come from ``PRICES`` (GB/s each way), which the caller may replace: RCCL's own figures
  (ROCm/rccl ``src/graph/topo.h`` at 0cbce2a: ``MI200_XGMI_WIDTH`` 36.0 GB/s per xGMI link, the value
  ``ncclTopoXGMISpeed`` gives gfx90a, against ``VEGA_XGMI_WIDTH`` 24.0 and ``GFX94X_XGMI_WIDTH`` 48.0; ``PCI_BW``
  12.0), since rocm-smi prints neither link counts nor widths nor the GPU generation.

A table it cannot read is a ``TopologyError`` naming the table, row and cell; a graph of direct links that does not
join every GPU is one too; nothing is built half way. The sample ``examples/rocm-smi-showtopo-8gpu.txt`` (eight
GCDs of an MI250-like node, each with three direct xGMI peers and hops 2 to the other four) was written from the
format, not captured from a machine: rocm-smi prints no comment lines, so its provenance is kept here.
"""
from __future__ import annotations

import re
from collections.abc import Callable
from fractions import Fraction

from .model import COMPUTE, Link, Topology, TopologyError
from .smi import MAX_GPUS, SmiImport, _gbs

__all__ = ["PRICES", "from_rocm_smi"]

PRICES = {"XGMI": 36.0, "PCIE": 12.0}
LINK_TYPE = "Link Type between two GPUs"
HOPS = "Hops between two GPUs"
WEIGHT = "Weight between two GPUs"
_TABLES = {LINK_TYPE: "Link Type", HOPS: "Hops", WEIGHT: "Weight"}
_BANNER = re.compile(r"\s*={3,}\s*(.*?)\s*={3,}\s*$")
_KINDS = ("XGMI", "PCIE")
_GPU = re.compile(r"GPU(\d{1,6})$")
_WHOLE = re.compile(r"\d{1,9}$")


def _sections(text: str) -> dict[str, list[str]]:
    """The lines under each banner, by the banner's title (a title in lower case); lines before any banner are
    under ''. A matrix's title given twice is an error."""
    out: dict[str, list[str]] = {"": []}
    current = ""
    for line in text.splitlines():
        m = _BANNER.match(line)
        if m is None:
            out[current].append(line)
            continue
        current = m.group(1).lower()
        if current in out and current in (t.lower() for t in _TABLES):
            raise TopologyError(f"the '{m.group(1)}' table is given twice")
        out.setdefault(current, [])
    return out


def _link_cell(cell: str, g: int, j: int) -> str | None:
    if g == j:
        return None if cell == "0" else "is not 0 (itself)"
    return None if cell in _KINDS else "is not XGMI or PCIE"


def _whole_cell(what: str, least: int) -> Callable[[str, int, int], str | None]:
    def check(cell: str, g: int, j: int) -> str | None:
        if _WHOLE.match(cell) is None:
            return f"is not {what}"
        if g == j and cell.lstrip("0"):
            return "is not 0 (itself)"
        if g != j and int(cell) < least:
            return f"is below {least}"
        return None
    return check


def _matrix(title: str, body: list[str], check: Callable[[str, int, int], str | None]) -> list[list[str]]:
    """The n x n cells of one table, checked: header GPU0..GPUn-1, one row per GPU of n cells, symmetric."""
    table = f"the {_TABLES[title]} table"
    rows = [line.split() for line in body if line.strip()]
    if not rows:
        raise TopologyError(f"{table} is empty: no header row naming GPU0, GPU1, ...")
    header = rows[0]
    numbers = [int(m.group(1)) if (m := _GPU.match(c)) else -1 for c in header]
    n = len(header)
    if numbers != list(range(n)):
        raise TopologyError(f"{table}'s header names {', '.join(c[:12] for c in header[:6])}"
                            f"{', ...' if n > 6 else ''}, not GPU0 to GPU{n - 1}")
    if not 2 <= n <= MAX_GPUS:
        raise TopologyError(f"{table} names {n} GPUs; an import takes 2 to {MAX_GPUS}")
    matrix: dict[int, list[str]] = {}
    for tokens in rows[1:]:
        m = _GPU.match(tokens[0])
        if m is None:
            continue                                  # a warning or note between the rows
        g = int(m.group(1))
        if g >= n or g in matrix:
            raise TopologyError(f"{table}: row {tokens[0]} is {'repeated' if g in matrix else 'not in the header'}")
        if len(tokens) != n + 1:
            raise TopologyError(f"{table}: row {tokens[0]} has {len(tokens) - 1} cells, the header names {n} GPUs "
                                f"({'a missing' if len(tokens) < n + 1 else 'an extra'} column)")
        cells = tokens[1:]
        for j, cell in enumerate(cells):
            problem = check(cell, g, j)
            if problem:
                raise TopologyError(f"{table}, row GPU{g}, column GPU{j}: {cell[:12]!r} {problem}")
        matrix[g] = cells
    missing = [f"GPU{g}" for g in range(n) if g not in matrix]
    if missing:
        raise TopologyError(f"{table}: no row for {', '.join(missing[:6])}{', ...' if len(missing) > 6 else ''}")
    for g in range(n):
        for j in range(g + 1, n):
            if matrix[g][j] != matrix[j][g]:
                raise TopologyError(f"{table}: GPU{g} to GPU{j} is {matrix[g][j]} but GPU{j} to GPU{g} is "
                                    f"{matrix[j][g]}")
    return [matrix[g] for g in range(n)]


def _unreached(n: int, links: list[Link]) -> list[int]:
    """The GPUs that GPU0 does not reach over ``links`` (which hold both directions of every pair)."""
    out: list[list[int]] = [[] for _ in range(n)]
    for link in links:
        out[link.src].append(link.dst)
    seen, stack = {0}, [0]
    while stack:
        for j in out[stack.pop()]:
            if j not in seen:
                seen.add(j)
                stack.append(j)
    return [g for g in range(n) if g not in seen]


def from_rocm_smi(text: str, prices: dict[str, float] | None = None, name: str = "rocm-smi --showtopo") \
        -> SmiImport:
    """The GPU graph of ``rocm-smi --showtopo`` output (module docstring)."""
    price = {**PRICES, **(prices or {})}
    try:
        bw: dict[str, Fraction] = {kind: _gbs(price[kind]) for kind in _KINDS}
        sections = _sections(text)
        if LINK_TYPE.lower() not in sections:
            raise TopologyError(f"no '{LINK_TYPE}' table: not rocm-smi --showtopo output")
        kinds = _matrix(LINK_TYPE, sections[LINK_TYPE.lower()], _link_cell)
        n = len(kinds)
        hops = weights = None
        if HOPS.lower() in sections:
            hops = _matrix(HOPS, sections[HOPS.lower()], _whole_cell("a whole number of hops", 1))
        if WEIGHT.lower() in sections:
            weights = _matrix(WEIGHT, sections[WEIGHT.lower()], _whole_cell("a whole-number weight", 0))
        for title, other in ((HOPS, hops), (WEIGHT, weights)):
            if other is not None and len(other) != n:
                raise TopologyError(f"the {_TABLES[title]} table names {len(other)} GPUs, the Link Type table {n}")
    except TopologyError as e:
        raise TopologyError(f"{name}: {e}") from None
    links, routed, pcie = [], 0, 0
    for g in range(n):
        for j in range(n):
            if g == j:
                continue
            kind = kinds[g][j]
            if kind == "XGMI" and hops is not None and int(hops[g][j]) > 1:
                routed += g < j
                continue
            pcie += kind == "PCIE" and g < j
            links.append(Link(g, j, bw[kind]))
    unreached = _unreached(n, links)
    if unreached:
        names = ", ".join(f"GPU{g}" for g in unreached[:6]) + (", ..." if len(unreached) > 6 else "")
        raise TopologyError(f"{name}: the direct links do not join every GPU: {names} cannot be reached from GPU0")
    assumed = [f"{price['XGMI']:g} GB/s each way per direct xGMI pair (RCCL's MI200 figure, MI200_XGMI_WIDTH in "
               "src/graph/topo.h, unless told otherwise): rocm-smi does not print link counts or widths, so each "
               "pair is taken as one link"]
    if hops is None:
        assumed.append("no Hops table: every XGMI pair is taken as a direct link")
    if routed:
        assumed.append(f"{routed} XGMI GPU pair{'s are' if routed > 1 else ' is'} more than one hop apart: a path "
                       "through other GPUs, not a link, left to routing")
    if pcie:
        assumed.append(f"{pcie} GPU pair{'s' if pcie > 1 else ''} joined through PCIE "
                       f"{'are links' if pcie > 1 else 'is a link'} at {price['PCIE']:g} GB/s (the PCIe path is "
                       "shared by the pairs that use it; the import does not model that)")
    if weights is not None:
        assumed.append("the Weight table is checked but not used: bandwidths come from the price table")
    gpus = tuple(f"GPU{g}" for g in range(n))
    return SmiImport(Topology(gpus, (COMPUTE,) * n, tuple(links), name=f"{name}: {n} GPUs"), assumed)
