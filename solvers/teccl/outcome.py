"""What one HiGHS solve of a TE-CCL model (or of TACOS's TEN ILP, which shares the wrapper) ends in: the status,
the objective and its bound, the time and the model's size. ``solve`` (Pyomo models) and ``linear`` (highspy
arrays) both return an ``Outcome``; this module imports neither, so neither imports the other's caller.

The statuses:

* ``optimal``: proven optimal within the relative gap asked for;
* ``feasible``: stopped at the time limit with an incumbent (its gap is reported);
* ``infeasible``: proven to have no solution;
* ``timeout``: stopped at the time limit with no solution found.
"""
from __future__ import annotations

from dataclasses import dataclass

OPTIMAL, FEASIBLE, INFEASIBLE, TIMEOUT = "optimal", "feasible", "infeasible", "timeout"


@dataclass
class Outcome:
    status: str
    objective: float | None
    bound: float | None
    seconds: float
    variables: int
    constraints: int

    @property
    def has_solution(self) -> bool:
        return self.status in (OPTIMAL, FEASIBLE)

    @property
    def gap(self) -> float | None:
        """Relative gap |bound - objective| / |objective| (0 when optimal, None without a solution)."""
        if self.status == OPTIMAL:
            return 0.0
        if self.objective is None or self.bound is None:
            return None
        return abs(self.bound - self.objective) / max(abs(self.objective), 1e-9)
