"""Everything that turns a topology into a schedule or a number: the schedule IR, its verifier, costs, algorithms."""
from .core.errors import NotApplicable, ScheduleError
from .core.schedule import Collective, Schedule, Transfer
from .synthesize import ALGORITHMS, Result, synthesize
from .core.verify import verify

__all__ = ["NotApplicable", "ScheduleError", "Collective", "Schedule", "Transfer", "ALGORITHMS", "Result",
           "synthesize", "verify"]
