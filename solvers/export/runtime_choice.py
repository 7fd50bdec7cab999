"""The runtime an export targets when the user names none: the one the fabric's GPUs run MSCCL programs with.

- NVIDIA fabrics (``dgx_a100``, ``dgx1``, ``ndv2``, ``dgx2``): msccl-executor (Azure/msccl-executor-nccl, the
  MSCCL executor on NVIDIA's NCCL), whose kernels run every step type of its dialect.
- AMD fabrics (``mi250``, ``mi250_teccl``): RCCL, the only MSCCL runtime on AMD GPUs; its kernels lack the fused
  receive steps, so files for it reduce through scratch (``lower.lowering(full_ops=False)``).
- Direct-connect and other vendor-free designs: msccl-executor, with a note that ``rccl`` is the choice for AMD
  GPUs.

``topologies.vendor.fabric_vendor`` reads the vendor off the expression.
"""
from __future__ import annotations

from topologies.model import Topology
from topologies.vendor import AMD, NVIDIA, fabric_vendor


def default_runtime(topo: Topology) -> tuple[str, str]:
    """(target name, one line saying why) for ``topo`` (module docstring); the CLI's ``--runtime`` and the
    panels' runtime choice override it."""
    vendor, family = fabric_vendor(topo)
    if vendor == NVIDIA:
        return "msccl-executor", (f"{family} is an NVIDIA fabric, and msccl-executor (msccl-executor-nccl) runs "
                                  "MSCCL programs on NCCL")
    if vendor == AMD:
        return "rccl", (f"{family} is an AMD fabric, and RCCL runs MSCCL programs on AMD GPUs (its kernels have no "
                        "fused receive steps, so reductions go through scratch)")
    return "msccl-executor", ("a direct-connect design names no GPU vendor, so msccl-executor (NVIDIA GPUs); "
                              "choose rccl for AMD GPUs")
