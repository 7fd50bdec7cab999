"""``export ... --format chakra -o DIR``: a verified schedule as Chakra execution traces for ASTRA-sim
(``solvers.export.chakra``), one ``DIR/<algo>_<collective>.<rank>.et`` per GPU, with ASTRA-sim's network, system
and workload inputs beside them (``chakra_astra.astra_inputs``), read back through the schema and checked (every
send matched by one receive) before DIR appears.

DIR must be absent or an empty folder; nothing is created before the checks pass (the trace nodes under
``chakra_files.MAX_WRITE_NODES``), everything is written in a hidden sibling folder that becomes DIR at the end,
and a failure removes it (``chakra_files.staged_folder``)."""
from __future__ import annotations

import os
import sys

from .common import UsageError, json_text, workload_from


def export_chakra(args) -> int:
    """The ``export --format chakra`` command (called by ``schedules.export``)."""
    from solvers.export.chakra import ChakraError, check_traces, read_traces, schedule_nodes, schedule_traces, \
        write_traces
    from solvers.export.chakra_astra import astra_inputs
    from solvers.export.chakra_files import check_size, check_target, staged_folder

    from .export_input import schedule_for_export

    if not args.output:
        raise UsageError("Chakra traces are one file per rank: give -o DIR, a new or empty folder")
    if args.dialect is not None or args.runtime is not None:
        raise UsageError("Chakra traces have no MSCCL dialect or runtime: drop --dialect/--runtime")
    if args.tenants is not None or args.copies != 1 or args.instances != 1:
        raise UsageError("Chakra traces take one collective without --tenants, --copies or --instances")
    try:
        check_target(args.output)
    except ChakraError as exc:
        raise UsageError(str(exc)) from None
    work = workload_from(args)
    result, _, _ = schedule_for_export(args, work)
    name = f"{args.algo}_{result.schedule.collective.value}"
    try:
        check_size(schedule_nodes(result.topology, result.schedule),
                   f"{result.schedule.count:,} transfers of {name} on {len(result.topology.compute_nodes)} ranks")
        with staged_folder(args.output) as tmp:
            traces = schedule_traces(result.topology, result.schedule, work.total_bytes)
            paths = write_traces(tmp, name, traces)
            inputs = astra_inputs(result.topology, tmp, name, result.schedule.collective.value,
                                  work.total_bytes, work.execution, ranks=len(traces))
            back = read_traces(tmp, name, ranks=len(traces))
            if back != traces:
                raise ChakraError(f"{args.output}: the traces read back differ from those written")
            report = check_traces(back)
    except ChakraError as exc:
        raise UsageError(str(exc)) from None
    where = "ASTRA-sim inputs beside them" if inputs["expressible"] else "no ASTRA-sim network (see README.txt)"
    print(f"wrote {args.output}/{name}.<0..{report['ranks'] - 1}>.et: {report['ranks']} ranks, {report['nodes']} "
          f"nodes, {report['sends']} sends each matched by a receive, {report['bytes']:,} bytes sent; read back and "
          f"checked; {where}", file=sys.stderr)
    if args.json:
        print(json_text({"folder": args.output, "name": name, **report, "astra_network": inputs["note"],
                         "astra_expressible": inputs["expressible"],
                         "files": [os.path.basename(f) for f in paths + inputs["files"]]}))
    return 0
