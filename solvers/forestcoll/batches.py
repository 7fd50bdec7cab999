"""The two small types the packing, the box packing and the map back share (a leaf module, so that none of
them imports another for them): ``Batch``, m identical out-trees of one root (ForestColl section 4.4's trees
with multiplicity), and ``UnitPool``, units handed out first come, first served (``mapping``'s capacity pools,
``boxes``' pools of trees and inter arcs)."""
from __future__ import annotations

from collections import deque
from dataclasses import dataclass, field


@dataclass
class Batch:
    """``mult`` identical out-trees rooted at ``root``; ``edges`` in the order they were added."""

    root: int
    mult: int
    edges: list = field(default_factory=list)


class UnitPool:
    """Units to hand out first come, first served: ``add(item, amount)``, then ``take(m)`` -> [(item, amount),
    ...] summing to m, the items in the order added (also the box packing's pools of trees and inter arcs)."""

    def __init__(self, dry: str = "a pool ran dry"):
        self.items: deque = deque()
        self.dry = dry

    def add(self, item, amount) -> None:
        if amount > 0:
            self.items.append([item, amount])

    def take(self, m) -> list:
        out = []
        while m > 0:
            if not self.items:
                raise AssertionError(self.dry)             # the capacities behind every pool rule it out
            entry = self.items[0]
            a = min(m, entry[1])
            out.append((entry[0], a))
            entry[1] -= a
            m -= a
            if entry[1] == 0:
                self.items.popleft()
        return out
