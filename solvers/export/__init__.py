"""Exports of verified schedules to runtime formats: MSCCL XML (the MSCCL executor's and RCCL's dialect and
msccl-tools'), bundles of it for every size, and MSCCL++ execution plans. See docs/ARCHITECTURE.md ("An export
format or runtime target").

MSCCL XML: lowering a verified schedule, writing both dialects, reading any file back, checking it against the
runtime parser's rules, and simulating it symbolically (notes/msccl-xml-and-anchors.md section 3). ``export``
does all of it, one module per stage:

- ``program.py``: the program IR (``Algo``/``Gpu``/``Tb``/``Step``), ``XmlError`` and the runtime targets
  (``TARGETS``: rccl, msccl-executor, msccl, each with its reader's limits and dialect, cited);
- ``lower.py``: a verified ``Schedule`` to the IR (``lowering``: its instructions and their dependencies, the
  parts every layout shares in ``lower_parts.py``; ``Lowering.place``: those placed on threadblocks and channels,
  as columns that write the file (``place.py``), ``Lowering.build``: the same as the IR; ``lower``: both);
- ``coarsen.py``: a schedule whose program is over a reader's limit (``program.OverLimit``) merged, then rounded
  to fewer chunks per shard, verified and priced again, before ``export`` refuses it (issue 60);
- ``msccl_xml.py``: the IR to MSCCL XML text and back (``to_xml``, ``parse_xml``);
- ``check.py``: the runtime parser's rules and a target's limits (``validate``), the symbolic run (``simulate``),
  both on a file (``check_xml``, a ``Report`` naming the target and the largest counts used); ``layout.py``: what a
  file's buffers must hold, which it shares with the column checker ``flat_check.py``;
- ``tuning.py`` and ``bundle.py``: protocol and copies per size range by the runtime model, and the checked
  bundle of one file per range and placement (``export_bundle``);
- ``mscclpp/``: the same program as an MSCCL++ execution plan (JSON), with its own reader and checker
  (``export_plan`` in ``plan.py``, ``check_plan`` in ``reader.py``, the simulator in ``simulate.py``).

Another export format or runtime target is one more module here that takes the program IR of ``program.py`` and
writes the target's text, with a reader and checker beside it so that every file is validated and simulated before
it is handed out; re-export it below and add its choice to the CLI's ``export`` command (``studio/cli/schedules.py``)
and to the pages' export panel (``studio.widgets.export_panel``).
"""
from __future__ import annotations

from topologies.model import Topology

from ..core.errors import NotApplicable
from ..core.gc_pause import gc_paused
from ..core.schedule import Schedule
from ..core.verify import verify
from .check import Report, check_xml, runtime_for, simulate, validate
from .lower import Lowering, _refuse_custom, lower, lowering
from .msccl_xml import parse_xml, to_xml
from .program import (DEFAULT_SM_BUDGET, MAX_NODES_PER_RANK, MAX_OFFSET, TARGETS, Algo, Gpu, OverLimit, Step, Target, Tb,
                      XmlError, root_in_name, root_note, target)
from .runtime_choice import default_runtime

__all__ = ["Algo", "DEFAULT_SM_BUDGET", "Gpu", "Lowering", "OverLimit", "Report", "Step", "TARGETS", "Target", "Tb",
           "XmlError", "check_xml", "default_runtime", "exact_export", "export", "gpu_view", "lower", "lowering", "parse_xml", "root_in_name",
           "root_note", "runtime_for", "simulate", "target", "to_xml", "validate"]


@gc_paused()
def export(topo: Topology, schedule: Schedule, dialect: str | None = None, sm_budget: int = DEFAULT_SM_BUDGET,
           runtime: str | Target | None = None, start_ops: int | None = None, start_merged: bool = False,
           guessed_from: int | None = None, *, coarsen: bool = True, workload=None, **kwargs) -> tuple[str, Report]:
    """``exact_export`` (below), or where its program is over one of the runtime's limits (``OverLimit``) and
    ``coarsen`` is on, the first coarser schedule of the same algorithm whose program fits
    (``coarsen.coarsened_export``: adjacent pieces merged, then the shares rounded to fewer chunks per shard, each
    verified again and priced by the runtime model for ``workload``, default the studio's). Its report then
    carries ``coarsened`` (a ``coarsen.Coarsening``) and says the chunks, transfers, the limit's count and the
    time lost against the unrefined schedule in ``runtime_note``. OverLimit naming the limit and the least count
    reached when no coarsening fits."""
    try:
        return exact_export(topo, schedule, dialect, sm_budget, runtime, start_ops, start_merged, guessed_from,
                            **kwargs)
    except OverLimit as over:
        if not coarsen:
            raise
        from .coarsen import coarsened_export

        name = target(runtime).name if runtime is not None else None
        return coarsened_export(
            topo, schedule, over,
            lambda coarse: exact_export(topo, coarse, dialect, sm_budget, runtime, merge_view=True, **kwargs),
            name or (default_runtime(topo)[0] if dialect != "msccl" else "msccl"), workload)


@gc_paused()
def exact_export(topo: Topology, schedule: Schedule, dialect: str | None = None, sm_budget: int = DEFAULT_SM_BUDGET,
                 runtime: str | Target | None = None, start_ops: int | None = None, start_merged: bool = False,
                 guessed_from: int | None = None, merge_view: bool = False, **kwargs) -> tuple[str, Report]:
    """Lower, write, then validate and simulate the written text for ``runtime`` (``TARGETS``; default: the
    fabric's vendor's, ``runtime_choice.default_runtime``, whose reason lands in ``Report.runtime_note``, or
    microsoft/msccl when ``dialect`` is msccl-tools'; the file is written in the runtime's dialect); raise XmlError
    naming the first problem rather than return a file that fails.

    Both limits are read off the program before it is written. A threadblock over the target's step limit is
    spread over more channels: the lowering is retried with fewer instructions per threadblock, in proportion to
    the overshoot (no fewer than may fit, since fewer make more threadblocks). Threadblocks over the per-rank limit
    are merged in send/receive pairs (``lower(merge=True)``); merged threadblocks still over it end the search,
    since fewer instructions per threadblock only make more of them, and the error says which limit and by how
    much. A merged pair runs at most the steps of both threadblocks it joins, so the first merged try takes the
    instructions per threadblock at which twice the unmerged steps would fit; that is never more than the search
    would reach. If its threadblocks (or channels) are over the limit, one try with more instructions per
    threadblock in proportion to the steps left over, then the search goes on from where merging began.
    ``start_ops`` starts the search at that many instructions per threadblock instead of 5/8 of the step
    limit, and ``start_merged`` with merged threadblocks (a bundle passes what its one-copy program needed,
    ``Report.ops_per_tb`` and ``Report.merged``, to skip the tries that program already made); ``guessed_from``
    says that ``start_ops`` is such a guess and where merging began.

    The lowering uses only the step types the target's kernels run (``Target.kernel_steps``): for RCCL, whose
    kernels have no fused receive steps, reductions go through scratch (``lowering(full_ops=False)``).

    On a switched fabric the schedule is first turned into the GPU-to-GPU sends the runtime issues
    (``solvers.core.switch_paths.network_view``), which are verified again. A custom collective is refused
    (NotApplicable), and so is a collective the runtime never runs (``Target.refusal``: gather and scatter
    anywhere but RCCL), in one line citing the runtime's source. A rooted collective's file serves its root only
    (``program.root_note``, in ``Report.root_note``)."""
    _refuse_custom(schedule)
    note = ""
    if runtime is None:
        runtime, note = ("msccl", "the msccl-tools dialect is read by microsoft/msccl") if dialect == "msccl" \
            else default_runtime(topo)
    limits = target(runtime)
    refused = limits.refusal(schedule.collective.value)
    if refused is not None:
        raise NotApplicable(refused)
    dialect = limits.dialect if dialect is None else dialect
    runtime_for(dialect, limits)                        # XmlError where the runtime reads another dialect
    if topo.switch_nodes:
        topo, schedule = gpu_view(topo, schedule)
        if merge_view:          # a coarsened schedule: its GPU-to-GPU sends merged as well
            from .coarsen import merged

            schedule = merged(schedule)
            verify(topo, schedule).raise_if_failed()
    ops = max(1, limits.max_steps * 5 // 8 if start_ops is None else start_ops)   # room for the dependency nops
    merge = start_merged
    tb_limit = min(limits.max_tbs, sm_budget)
    kwargs.setdefault("full_ops", limits.full_ops)          # RCCL's kernels run no fused receive steps
    instructions = lowering(topo, schedule, **kwargs)      # what every try places on threadblocks its own way
    # merged tries over a limit, by instructions per threadblock; None: over the threadblock limit, its message
    # (the object validator's, seconds for a 256-rank program) made only if it is raised
    failed: dict[int, Exception | None] = {}
    climbed = False

    def over_limit(placed) -> XmlError:
        why = (validate(placed.algo(), dialect, sm_budget, limits)
               or [f"{placed.tbs_per_rank} threadblocks per rank, above {tb_limit}"])
        return OverLimit(f"the exported XML fails its check for {limits.name}: {why[0]}", "threadblocks per rank",
                         placed.tbs_per_rank, tb_limit)

    while True:        # the limits are read off the program first; only a program within them is written and checked
        if merge and ops in failed:         # back at a try that was over a limit
            if guessed_from is None:
                error = failed[ops]
                raise error if error is not None else over_limit(
                    instructions.place(ops, merge, limits.max_tbs_per_channel, limits.max_channels))
            ops, guessed_from = guessed_from, None          # search from where merging began
            continue
        guessing = guessed_from is not None and ops < guessed_from
        try:
            placed = instructions.place(ops, merge, limits.max_tbs_per_channel, limits.max_channels)
        except NotApplicable as exc:        # more channels than the runtime has
            if not guessing:
                raise
            failed[ops], ops, guessed_from = exc, guessed_from, None     # search from where merging began
            continue
        tbs, steps = placed.tbs_per_rank, placed.steps_per_tb
        if tbs > tb_limit and merge:
            if not guessing:
                raise over_limit(placed)
            failed[ops] = None
            up = min(guessed_from - 1, ops * limits.max_steps // max(steps, 1))
            if not climbed and up > ops:    # steps to spare: once, more instructions per threadblock in proportion
                climbed, ops = True, up
            else:
                ops, guessed_from = guessed_from, None      # search from where merging began
            continue
        if steps > limits.max_steps and ops > 1:     # in proportion to the overshoot: the most that may fit
            ops = max(1, min(ops - 1, ops * limits.max_steps // steps))
            continue
        if tbs > tb_limit and not merge:
            merge = True                                # a send and a receive threadblock share one
            guessed_from, ops = ops, _merged_guess(ops, steps, limits.max_steps)
            continue
        if placed.nodes_per_rank > MAX_NODES_PER_RANK:         # more threadblocks or steps only add nodes
            raise OverLimit(f"the exported XML fails its check for {limits.name}: {placed.nodes_per_rank} XML nodes "
                            f"for one rank, above the runtime parser's {MAX_NODES_PER_RANK}", "XML nodes per rank",
                            placed.nodes_per_rank, MAX_NODES_PER_RANK)
        if placed.max_offset > MAX_OFFSET:
            raise OverLimit(f"the exported XML fails its check for {limits.name}: chunk offset {placed.max_offset}, "
                            f"above the {MAX_OFFSET} the runtime's 16-bit offsets hold (cut shards into fewer "
                            "chunks)", "chunk offset", placed.max_offset, MAX_OFFSET)
        if steps > limits.max_steps:                            # at one instruction per threadblock
            raise OverLimit(f"the exported XML fails its check for {limits.name}: {steps} steps in one threadblock, "
                            f"above its {limits.max_steps}", "steps per threadblock", steps, limits.max_steps)
        text = placed.text(dialect)
        report = check_xml(text, dialect, sm_budget, limits)
        if report.ok:
            report.ops_per_tb, report.merged, report.runtime_note = ops, merge, note
            if schedule.root is not None:
                report.root_note = root_note(schedule.root, schedule.collective.value)
            return text, report
        raise XmlError(f"the exported XML fails its check for {limits.name}: {report.first}")


def gpu_view(topo: Topology, schedule: Schedule) -> tuple[Topology, Schedule]:
    """A schedule on a switched fabric as the GPU-to-GPU sends the runtime issues
    (``solvers.core.switch_paths.network_view``, which keeps a rooted schedule's root, renumbered among the GPUs),
    verified again."""
    from ..core.switch_paths import network_view
    from ..core.verify import verify

    net, view = network_view(topo, schedule)
    verify(net, view).raise_if_failed()
    return net, view


def _merged_guess(ops: int, steps: int, max_steps: int) -> int:
    """``export``'s first merged try after unmerged threadblocks of at most ``steps`` steps with ``ops``
    instructions each: the instructions per threadblock at which twice those steps fit ``max_steps`` (a merged pair
    runs at most the steps of both threadblocks it joins)."""
    return max(1, min(ops, ops * max_steps // (2 * max(steps, 1))))
