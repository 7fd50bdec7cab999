"""Which GPU vendor a fabric belongs to, read off the expression that built it.

The catalogue's machine models name their vendor: ``dgx_a100``, ``dgx1``, ``ndv2`` and ``dgx2`` are NVIDIA
boxes (NVLink, NVSwitch), ``mi250`` and ``mi250_teccl`` AMD ones (xGMI). Every other family (rings, tori, Kautz
graphs, expansions, generic switched clusters) is a vendor-free direct-connect or switched design. A topology read
from a file has no expression to read and no vendor.
"""
from __future__ import annotations

from .expression import Call, ExpressionError, parse
from .model import Topology

NVIDIA, AMD = "nvidia", "amd"
FAMILY_VENDOR = {"dgx_a100": NVIDIA, "dgx1": NVIDIA, "ndv2": NVIDIA, "dgx2": NVIDIA,
                 "mi250": AMD, "mi250_teccl": AMD}


def fabric_vendor(topo: Topology) -> tuple[str | None, str | None]:
    """(vendor, the family that names it) for a topology built from an expression that uses the machine models of
    one vendor only (``FAMILY_VENDOR``); (None, None) for vendor-free designs, files and expressions that mix
    vendors."""
    try:
        tree = parse(topo.expr)
    except ExpressionError:
        return None, None
    found: dict[str, str] = {}
    stack = [tree]
    while stack:
        call = stack.pop()
        if call.name in FAMILY_VENDOR:
            found.setdefault(FAMILY_VENDOR[call.name], call.name)
        stack.extend(a for a in (*call.args, *(v for _, v in call.kwargs)) if isinstance(a, Call))
    if len(found) != 1:
        return None, None
    (vendor, family), = found.items()
    return vendor, family
