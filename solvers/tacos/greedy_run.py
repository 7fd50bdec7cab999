"""What both engines of TACOS's greedy (``greedy.py`` in Python, ``vector.py`` in numpy; TACOS section VI) share:
a run's result (``GreedyRun``), the per-link time of one chunk (``link_times``) and the tolerance under which two
event times are the same event (``TIE``). Kept below both engines so that each imports it without the other.
"""
from __future__ import annotations

from dataclasses import dataclass, field

from topologies.model import Topology

TIE = 1e-9      # us: event times closer than this are one event


@dataclass
class GreedyRun:
    """One greedy run: the makespan (us), the sends (start, end, chunk, link) that delivered a chunk, and counts.
    The numpy engine (``vector``) keeps its sends as four columns (start, end, chunk, link) in ``columns`` and
    leaves ``sends`` empty; ``count`` and ``send_rows`` read either."""

    time_us: float
    sends: list[tuple[float, float, int, int]]
    events: int
    replaced: int
    dropped: int
    seed: int
    link_time_us: list[float] = field(repr=False, default_factory=list)
    columns: tuple | None = field(repr=False, default=None)

    @property
    def count(self) -> int:
        """The number of sends."""
        return len(self.columns[0]) if self.columns is not None else len(self.sends)

    def send_rows(self):
        """The sends as (start, end, chunk, link) tuples, from whichever form the run keeps."""
        if self.columns is None:
            return iter(self.sends)
        start, end, chunk, link = self.columns
        return zip(start.tolist(), end.tolist(), chunk.tolist(), link.tolist())


def link_times(topo: Topology, chunk_bytes: float) -> list[float]:
    """t_l = alpha_l (us) + chunk_bytes / bandwidth_l, bandwidth in GB/s = 1e3 bytes per microsecond."""
    return [float(l.alpha) + chunk_bytes / (float(l.bandwidth) * 1e3) for l in topo.links]
