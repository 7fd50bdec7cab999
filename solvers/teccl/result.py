"""What TE-CCL returns (``teccl``'s ``TecclResult``, ``collective_schedule``'s ``Composed``) and how the CLI and the
app print it (the ``Detail`` hooks); the metrics are the paper's (section 6): transfer time = the epoch at whose
start the last demand is met, times τ; algbw = output buffer / transfer time.
"""
from __future__ import annotations

from dataclasses import dataclass, field
from fractions import Fraction

from topologies.model import Topology

from ..core.detail import Detail
from ..core.schedule import Collective, Schedule
from .instance import Demand, Timing


@dataclass
class Probe:
    epochs: int
    status: str
    seconds: float


class _Found(Detail):
    """The Detail hooks TecclResult and Composed share: the time-expanded model's own clock, status and gap."""

    def fields(self, result) -> dict:
        t = self.as_dict()
        return {"teccl": t, "transfer_time_us": t["transfer_time_us"]}

    def text_rows(self, out: dict) -> dict:
        t = out["teccl"]
        return {f"teccl {k}": t[k] for k in ("method", "multiplier", "epochs", "finish_epochs", "epoch_us",
                                             "status", "gap", "minimal_epochs_proven", "lower_bound_us",
                                             "lower_bound_gap", "solver_seconds") if k in t}

    def hidden_text_keys(self) -> tuple[str, ...]:
        return ("teccl",)

    def compare_note(self) -> str:
        t = self.as_dict()
        return "TE-CCL " + ", ".join(f"{p.get('status')} (gap {p.get('gap')})" for p in t.get("parts", [t]))


@dataclass
class TecclResult(_Found):
    """A verified TE-CCL schedule and how it was found."""

    topology: Topology
    demand: Demand
    timing: Timing
    method: str                      # "milp" or "lp"
    epochs: int                      # K of the final model
    finish: int                      # epochs until the last demand is met
    status: str                      # optimal / feasible (time limit, gap below) of the final solve
    gap: float | None
    minimal: bool                    # K - 1 proven infeasible (or K given and met exactly at the lower bound)
    probes: list[Probe]
    seconds: float
    variables: int
    constraints: int
    schedule: Schedule
    notes: list[str] = field(default_factory=list)
    lower_bound: int | None = None   # the K no schedule can beat (epoch_lower_bound), None for A*
    multiplier: int = 1              # the epoch multiplier the model used (the paper's EM, section 6 / Table 4)
    bound_us: Fraction | None = None  # no schedule of whole epochs at multiplier 1 finishes sooner (bound_time)

    @property
    def lower_bound_gap(self) -> Fraction | None:
        """How far the transfer time is above ``bound_us``: transfer time / bound - 1 (0 when it meets it)."""
        if not self.bound_us:
            return None
        return self.transfer_time_us / self.bound_us - 1

    @property
    def transfer_time_us(self) -> Fraction:
        return self.finish * self.timing.tau_us

    @property
    def output_bytes(self) -> Fraction:
        """Bytes each GPU holds at the end (its own chunks and what it receives), the most over GPUs."""
        into: dict[int, int] = {}
        for _, _, d in self.demand.wants:
            into[d] = into.get(d, 0) + 1
        own = self.demand.chunks if self.demand.collective is Collective.ALLGATHER else \
            self.demand.chunks // max(1, self.topology.n) if self.demand.collective is Collective.ALLTOALL else 0
        return self.timing.chunk_bytes * (max(into.values(), default=0) + own)

    @property
    def algbw_GBps(self) -> float:
        return float(self.output_bytes / self.transfer_time_us / 1000) if self.finish else float("inf")

    def epoch_table(self) -> list[dict]:
        """One row per transfer: epoch sent, link, source, chunk interval (for the epoch-by-epoch view)."""
        lag = self.timing.lag
        names = self.topology.names
        rows = []
        for t in self.schedule.transfers:
            l = self.topology.links[t.link]
            rows.append({"epoch": t.step - lag[t.link], "arrives": t.step, "from": names[l.src], "to": names[l.dst],
                         "source": names[t.shard], "lo": str(t.lo), "hi": str(t.hi)})
        return rows

    def as_dict(self) -> dict:
        return {"algo": "teccl", "method": self.method, "collective": self.demand.collective.value,
                "topology": self.topology.expr, "chunks": self.demand.chunks,
                "chunk_bytes": float(self.timing.chunk_bytes), "epoch_us": float(self.timing.tau_us),
                "epochs": self.epochs, "finish_epochs": self.finish,
                "transfer_time_us": float(self.transfer_time_us), "algbw_GBps": self.algbw_GBps,
                "status": self.status, "gap": self.gap, "minimal_epochs_proven": self.minimal,
                "lower_bound_epochs": self.lower_bound, "multiplier": self.multiplier,
                "lower_bound_us": None if self.bound_us is None else float(self.bound_us),
                "lower_bound_gap": None if self.lower_bound_gap is None else round(float(self.lower_bound_gap), 6),
                "probes": [{"epochs": p.epochs, "status": p.status, "seconds": round(p.seconds, 3)}
                           for p in self.probes],
                "solver_seconds": round(self.seconds, 3), "variables": self.variables,
                "constraints": self.constraints, "transfers": self.schedule.count, "verified": True,
                "notes": self.notes}


@dataclass
class Composed(_Found):
    """Reduce-scatter or allreduce from TE-CCL allgathers: the schedule and its parts' results."""

    schedule: Schedule
    parts: list[TecclResult]

    @property
    def transfer_time_us(self) -> Fraction:
        return sum((p.transfer_time_us for p in self.parts), Fraction(0))

    def as_dict(self) -> dict:
        return {"algo": "teccl", "collective": self.schedule.collective.value,
                "transfer_time_us": float(self.transfer_time_us), "verified": True,
                "parts": [p.as_dict() for p in self.parts]}
