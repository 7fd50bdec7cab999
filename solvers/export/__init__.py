"""Exports of verified schedules to runtime formats; today one target, MSCCL XML (the MSCCL executor's and RCCL's
dialect and msccl-tools'). See docs/ARCHITECTURE.md ("An export format or runtime target").

MSCCL XML: lowering a verified schedule, writing both dialects, reading any file back, checking it against the
runtime parser's rules, and simulating it symbolically (notes/msccl-xml-and-anchors.md section 3). ``export``
does all of it, one module per stage:

- ``program.py``: the program IR (``Algo``/``Gpu``/``Tb``/``Step``), ``XmlError`` and the runtime's limits;
- ``lower.py``: a verified ``Schedule`` to the IR (``lower``);
- ``msccl_xml.py``: the IR to MSCCL XML text and back (``to_xml``, ``parse_xml``);
- ``check.py``: the runtime parser's rules (``validate``), the symbolic run (``simulate``), both on a file
  (``check_xml``, a ``Report``).

Another export format or runtime target is one more module here that takes the program IR of ``program.py`` and
writes the target's text, with a reader and checker beside it so that every file is validated and simulated before
it is handed out; re-export it below and add its choice to the CLI's ``export`` command (``studio/cli/schedules.py``)
and to the pages' export panel (``studio.widgets.export_panel``).
"""
from __future__ import annotations

from topologies.model import Topology

from ..core.schedule import Schedule
from .check import Report, check_xml, simulate, validate
from .lower import _refuse_custom, lower
from .msccl_xml import parse_xml, to_xml
from .program import DEFAULT_SM_BUDGET, Algo, Gpu, Step, Tb, XmlError

__all__ = ["Algo", "DEFAULT_SM_BUDGET", "Gpu", "Report", "Step", "Tb", "XmlError", "check_xml", "export", "lower",
           "parse_xml", "simulate", "to_xml", "validate"]


def export(topo: Topology, schedule: Schedule, dialect: str = "executor", sm_budget: int = DEFAULT_SM_BUDGET,
           **kwargs) -> tuple[str, Report]:
    """Lower, write, then validate and simulate the written text; raise XmlError naming the first problem
    rather than return a file that fails. On a switched fabric the schedule is first turned into the GPU-to-GPU
    sends the runtime issues (``solvers.core.switch_paths.network_view``), which are verified again. A custom
    collective is refused (NotApplicable)."""
    _refuse_custom(schedule)
    if topo.switch_nodes:
        from ..core.switch_paths import network_view
        from ..core.verify import verify

        topo, schedule = network_view(topo, schedule)
        verify(topo, schedule).raise_if_failed()
    text = to_xml(lower(topo, schedule, **kwargs), dialect)
    report = check_xml(text, dialect, sm_budget)
    if not report.ok:
        raise XmlError(f"the exported XML fails its check: {report.first}")
    return text, report
