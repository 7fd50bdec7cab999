"""Errors that solvers raise for a user to read: one line that says what is wrong."""


class NotApplicable(ValueError):
    """The algorithm does not apply to this topology or collective; the message says why."""


class ScheduleError(ValueError):
    """A schedule that fails verification; the message is the first fault found."""
