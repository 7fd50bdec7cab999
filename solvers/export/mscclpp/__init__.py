"""MSCCL++ execution plans: exporting the MSCCL program IR of ``program.py`` as the JSON plan the MSCCL++ executor
runs (``to_plan``, ``plan_json``), reading a plan back (``parse_plan``) and checking one (``check_plan``: the
executor parser's rules, then a symbolic run with the collective's postcondition).

One module per concern; each imports only from the modules listed above it:

- ``format.py``: the plan format targeted and the sources it is pinned to ([P], [C], [E], [K], [D]), the
  executor's names and limits (``OP_NAMES``, ``MAX_OPERATION``, ...), ``PlanError`` and the helpers shared below;
- ``model.py``: ``PlanReport`` and the checker's model of a plan (``_Ref``, ``_Op``, ``_Model``);
- ``op_rules.py``: the rules for one op (fields, buffer entries, the shapes the kernel assumes, the DSL's ``nop``
  discipline);
- ``simulate.py``: the symbolic run, two launches back to back, with the collective's postcondition;
- ``reader.py``: ``parse_plan`` (``MAX_PLAN_BYTES`` at most) and ``check_plan`` (the structural rules, then the run);
- ``plan.py``: ``to_plan``, ``plan_json`` and ``export_plan`` (the mapping from the MSCCL program IR).
"""
from __future__ import annotations

from .format import (BUFFER_TYPES, CHANNEL_TYPES, COLLECTIVES, FORMAT, MAX_CHANNEL, MAX_CHANNEL_PER_OPERATION,
                     MAX_DEVICE_SEMAPHORES, MAX_DEVICE_SYNCERS, MAX_OPERATION, MAX_THREADS_PER_BLOCK, OP_NAMES,
                     PlanError)
from .model import PlanReport
from .plan import export_plan, plan_json, to_plan
from .reader import MAX_PLAN_BYTES, check_plan, parse_plan

__all__ = ["BUFFER_TYPES", "CHANNEL_TYPES", "COLLECTIVES", "FORMAT", "MAX_CHANNEL", "MAX_CHANNEL_PER_OPERATION",
           "MAX_DEVICE_SEMAPHORES", "MAX_DEVICE_SYNCERS", "MAX_OPERATION", "MAX_PLAN_BYTES", "MAX_THREADS_PER_BLOCK",
           "OP_NAMES", "PlanError", "PlanReport", "check_plan", "export_plan", "parse_plan", "plan_json", "to_plan"]
