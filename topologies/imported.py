"""What an import of a machine's own description gives (issue 41, item 1): the topology, what the reader assumed to
build it (generation, GB/s per link kind), and notes on what it read past (elements it does not model)."""
from __future__ import annotations

from dataclasses import dataclass, field

from .model import Topology


@dataclass
class Imported:
    """A topology read from a machine's own description, with ``assumed`` (the prices and models it took, for the
    page and the JSON) and ``notes`` (what the file held that the topology leaves out)."""

    topology: Topology
    assumed: list[str] = field(default_factory=list)
    notes: list[str] = field(default_factory=list)

    def as_dict(self) -> dict:
        return {"assumed": list(self.assumed), "notes": list(self.notes)}
