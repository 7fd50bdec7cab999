"""Everything that turns a topology into a schedule or a number: the schedule IR, its verifier, costs, algorithms."""
from .errors import NotApplicable, ScheduleError
from .schedule import Collective, Schedule, Transfer
from .synthesize import ALGORITHMS, Result, synthesize
from .verify import verify

__all__ = ["NotApplicable", "ScheduleError", "Collective", "Schedule", "Transfer", "ALGORITHMS", "Result",
           "synthesize", "verify"]
