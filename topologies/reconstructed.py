"""Reconstructed base graphs (work in progress)."""
from __future__ import annotations

from .model import Topology, TopologyError


def diamond() -> Topology:
    raise TopologyError("diamond() is not available yet")


def dbjmod(d: int, n: int) -> Topology:
    raise TopologyError("dbjmod() is not available yet")
