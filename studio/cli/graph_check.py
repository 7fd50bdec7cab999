"""``check-graph FILE [--topo EXPR] [--box K] [--json]``: read an NCCL graph file (``NCCL_GRAPH_FILE``) the way
NCCL reads it and give the reader's verdicts (``solvers.export.nccl_graph_check``, whose docstring lists every rule
with the NCCL source it comes from). With ``--topo`` the file is also checked against host ``--box`` of that design
(every GPU of the host once per channel, NICs where a multi-box host needs them, a link or fast route under each
hop, link-disjoint rings on one box); without it only the reader's rules apply.

The file is read through the one input reader (``topologies.input_file.read_input``: a regular file only, opened
without blocking so a FIFO is refused at once, at most the checker's ``MAX_BYTES``). A file that cannot be read or
is not UTF-8 is one line on stderr and exit 2; a file NCCL would refuse or misread is ``rejected: <first problem>``
and exit 1; exit 0 only when the file is sound.

``check-xml`` is wrapped here (``check_xml``): a file whose top element is ``<graphs>`` is an NCCL graph file, not
MSCCL XML, and the answer says to run ``check-graph`` on it instead of naming the top element only; every other
file goes to ``schedules.check_xml`` unchanged.
"""
from __future__ import annotations

import re
import sys

from .common import UsageError, json_parent, json_text

_GRAPHS_TOP = re.compile(rb"\A(?:\xef\xbb\xbf)?\s*(?:<\?xml[^>]*\?>\s*)?(?:<!--.*?-->\s*)*<graphs[\s>/]", re.S)


def add_parser(sub) -> None:
    p = sub.add_parser("check-graph", parents=[json_parent()],
                       help="validate an NCCL graph file (NCCL_GRAPH_FILE) as NCCL reads it, and against a design "
                            "with --topo")
    p.add_argument("file")
    p.add_argument("--topo", default=None,
                   help="the design the file is for (an expression, a topology file or the machine's own "
                        "description): check every channel's GPUs, NICs and links against it (default: the "
                        "reader's rules only)")
    p.add_argument("--box", type=int, default=0, help="with --topo: which box of the design the file describes "
                                                      "(default 0)")
    p.add_argument("--max-nodes", type=int, default=None, help="refuse larger topologies (default 4096)")


def _read(path: str) -> str:
    """The file's text: UsageError (one line naming the file) for one that cannot be read, is too large, is not a
    regular file or is not UTF-8. A byte-order mark is kept: NCCL's reader sees it too."""
    from solvers.export.nccl_graph_check import MAX_BYTES
    from topologies.input_file import InputFileError, display_name, read_input

    try:
        data = read_input(path, MAX_BYTES, "NCCL graph file")
    except InputFileError as exc:
        raise UsageError(str(exc)) from None
    try:
        return data.decode("utf-8")
    except UnicodeDecodeError as exc:
        raise UsageError(f"{display_name(path)}: the NCCL graph file is not UTF-8 text (byte {exc.start})") from None


def _speeds(graph) -> str:
    """What a graph's two bandwidths are: NCCL's ``speedintra`` (GB/s each channel moves over the links inside a
    box, typeintra's path) and ``speedinter`` (GB/s each channel moves over the network between boxes)."""
    inside = f"{graph.speedintra:.4g} GB/s per channel inside a box over {graph.typeintra} (speedintra)"
    if not any(chan.nets for chan in graph.channels):      # one box: no channel leaves it, speedinter is not used
        return f"{inside}, as NCCL reads it (one box: no NIC, speedinter unused)"
    return (f"{inside} and {graph.speedinter:.4g} GB/s per channel between boxes over {graph.typeinter} "
            "(speedinter), as NCCL reads them")


def check_graph(args) -> int:
    from solvers.export.nccl_graph_check import GRAPH_IDS, check_graph as check, read_graphs

    text = _read(args.file)
    host = None
    if args.topo is not None:
        from topologies import load

        if args.box < 0:
            raise UsageError(f"--box must be 0 or more, not {args.box}")
        report = check(text, load(args.topo, max_nodes=args.max_nodes), args.box)
        graphs, problems, notes, host = report.graphs, report.problems, report.notes, report.host
    else:
        graphs, problems, notes = read_graphs(text)
    ok = not problems
    payload = {"ok": ok, "problems": problems, "notes": notes, "checked_against": args.topo,
               "graphs": [{"id": g.id, "kind": GRAPH_IDS.get(g.id, "unknown"), "pattern": g.pattern,
                           "channels": len(g.channels), "speedintra_gbs": g.speedintra,
                           "speedinter_gbs": g.speedinter, "typeintra": g.typeintra, "typeinter": g.typeinter}
                          for g in graphs]}
    if args.topo is not None:
        payload.update(box=args.box, link_disjoint=report.link_disjoint, most_on_a_link=report.most_on_a_link)
    if args.json:
        print(json_text(payload))
        return 0 if ok else 1
    if not ok:
        print(f"rejected: {problems[0]}", file=sys.stderr)
        return 1
    listed = ", ".join(f"graph {g.id} ({GRAPH_IDS.get(g.id, 'unknown')}) {len(g.channels)} channels" for g in graphs)
    against = (f"checked against host {args.box} of {args.topo} ({len(host.gpus)} GPUs)" if host is not None
               else "the reader's rules only (give --topo to check the channels against a design)")
    print(f"ok: {listed}; {_speeds(graphs[0])}; {against}")
    for note in notes:
        print(f"note: {note}")
    return 0


def check_xml(args) -> int:
    """``check-xml``, pointing an NCCL graph file to ``check-graph`` (module docstring)."""
    from topologies.input_file import InputFileError, display_name, read_input

    import studio.cli.schedules as schedules

    try:
        head = read_input(args.file, 64 * 1024 * 1024, "MSCCL XML file")[:4096]
    except InputFileError:
        head = b""                     # schedules.check_xml says why, in its own words
    if _GRAPHS_TOP.match(head):
        why = (f"{display_name(args.file)} is an NCCL graph file (top element <graphs>), not MSCCL XML: check it "
               f"with python -m studio check-graph FILE [--topo EXPR]")
        if args.json:
            print(json_text({"ok": False, "problems": [why], "nccl_graph_file": True}))
        else:
            print(f"rejected: {why}", file=sys.stderr)
        return 1
    return schedules.check_xml(args)


COMMANDS = {"check-graph": check_graph, "check-xml": check_xml}
