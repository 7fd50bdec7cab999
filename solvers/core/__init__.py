"""The shared core every wing builds on: the schedule IR, its verifier, transforms, costs and bounds.

- ``schedule``: the IR (``Collective``, ``Transfer``, ``Schedule``, numpy ``Columns``).
- ``verify``: the simulator that every schedule passes before it is shown, exported or counted.
- ``transform``: reverse an allgather into a reduce-scatter, compose an allreduce.
- ``cost``: steps and tb_factor (direct-connect paper section 3.2), the lower bounds, link loads.
- ``errors``: ``NotApplicable`` and ``ScheduleError``.
- ``maxflow``: integer max-flow for the cut searches; ``switch_paths``: routes through switches.

See docs/ARCHITECTURE.md (the IR and the data flow).
"""
