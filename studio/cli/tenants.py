"""``schedule EXPR --tenants FILE`` and ``compare EXPR --tenants FILE``: several collectives on one fabric at once
(``solvers.tenants``), each tenant's schedule verified, the tenants timed together by the runtime model."""
from __future__ import annotations

import sys

from solvers.core.errors import NotApplicable
from solvers.tenants import JOINT, TenantsError, read_tenants, synthesize_tenants
from topologies import load
from topologies.files import read_bytes
from topologies.model import TopologyError

from .common import UsageError, json_text, progress_for, workload_from

DEFAULT_ALGOS = ("tacos_ilp", "tacos", "taccl_like", "direct")


def tenants_from(path: str):
    """The tenants of the file at ``path`` (at most ``solvers.tenants.MAX_FILE_BYTES``, never a FIFO); UsageError
    with one line naming the file otherwise."""
    from solvers.tenants import MAX_FILE_BYTES

    try:
        data = read_bytes(path, MAX_FILE_BYTES, "tenants file")
        return read_tenants(data)
    except (TopologyError, TenantsError) as exc:
        raise UsageError(f"{path}: {exc}" if not str(exc).startswith(("cannot read", path)) else str(exc)) from None


def _mode(args, algo: str) -> str:
    mode = getattr(args, "mode", None)
    return mode or ("joint" if algo in JOINT else "separate")


def _rows_text(result) -> None:
    print(f"{'tenant':<16} {'collective':<14} {'root':<8} {'bytes':>12} {'steps':>5} {'finish_us':>12} "
          f"{'alone_us':>12} {'slowdown':>8}  verified")
    for r in result.rows:
        d = r.as_dict()
        print(f"{d['name'][:16]:<16} {d['collective']:<14} {str(d['root'] or '-')[:8]:<8} {d['bytes']:>12.6g} "
              f"{d['steps']:>5} {d['finish_us']:>12.2f} {d['alone_us']:>12.2f} {d['slowdown']:>8.3f}  yes"
              + (f"  ({d['note']})" if d["note"] else ""))


def _solved(args):
    """(tenants, workload, design, ``TenantsResult``) of ``schedule`` and ``export`` with ``--tenants``."""
    from .synth_flags import options_for

    if getattr(args, "root", None) is not None:
        raise UsageError("--root goes with one collective; each tenant of --tenants names its own root")
    tenants = tenants_from(args.tenants)
    work = workload_from(args)
    topo = load(args.expr, max_nodes=args.max_nodes)
    result = synthesize_tenants(topo, tenants, args.algo, _mode(args, args.algo), options_for(args, args.algo),
                                work, progress_for(args))
    return tenants, work, topo, result


def schedule(args) -> int:
    """``schedule EXPR --tenants FILE --algo A [--mode joint|separate]``."""
    tenants, work, topo, result = _solved(args)
    out = {**result.as_dict(), "prices": work.price_label}
    if args.json:
        print(json_text(out))
        return 0
    print(f"{len(tenants)} tenants on {topo.name or topo.expr}, {args.algo} ({result.mode}): every schedule verified; "
          f"timed together by the runtime model with {work.price_label}")
    _rows_text(result)
    print(f"makespan {result.makespan_us:.2f} us (P = {result.slices}), synthesis {result.synthesis_s:.2f} s")
    return 0


def compare(args) -> int:
    """``compare EXPR --tenants FILE [--algos ...]``: each synthesizer's makespan, normalized to the first row's
    (TACOS Table V: TACOS-ILP, greedy, TACCL-like, Direct)."""
    if len(args.exprs) != 1:
        raise UsageError("--tenants compares the synthesizers on one design")
    if args.collective is not None or args.root is not None:
        raise UsageError("--tenants names every collective and root itself; leave out --collective and --root")
    tenants = tenants_from(args.tenants)
    work = workload_from(args)
    topo = load(args.exprs[0], max_nodes=args.max_nodes)
    algos = [a.strip() for a in args.algos.split(",") if a.strip()] if args.algos else list(DEFAULT_ALGOS)
    report = progress_for(args)
    rows = []
    for algo in algos:
        mode = "joint" if algo in JOINT else "separate"
        try:
            result = synthesize_tenants(topo, tenants, algo, mode, {}, work, report)
        except NotApplicable as exc:
            rows.append({"algo": algo, "mode": mode, "status": f"not applicable: {str(exc).splitlines()[0]}"})
            continue
        rows.append({"algo": algo, "mode": mode, "status": "ok", "makespan_us": result.makespan_us,
                     "synthesis_s": result.synthesis_s,
                     "tenants": {r.tenant.name: r.finish_us for r in result.rows}})
    base = next((r["makespan_us"] for r in rows if r["status"] == "ok"), None)
    for r in rows:
        if r["status"] == "ok":
            r["normalized"] = r["makespan_us"] / base
    out = {"topology": topo.expr or topo.name, "tenants": [t.name for t in tenants], "rows": rows,
           "prices": work.price_label}
    if args.json:
        print(json_text(out))
        return 0
    print(f"{len(tenants)} tenants on {topo.name or topo.expr}: makespan by synthesizer, normalized to "
          f"{rows[0]['algo']} (TACOS Table V), the runtime model with {work.price_label}")
    print(f"{'algo':<12} {'mode':<9} {'makespan_us':>12} {'normalized':>10} {'synth_s':>8}  status")
    for r in rows:
        if r["status"] == "ok":
            print(f"{r['algo']:<12} {r['mode']:<9} {r['makespan_us']:>12.2f} {r['normalized']:>10.3f} "
                  f"{r['synthesis_s']:>8.2f}  ok (every tenant verified)")
        else:
            print(f"{r['algo']:<12} {r['mode']:<9} {'':>12} {'':>10} {'':>8}  {r['status']}")
    if base is None:
        print("no synthesizer served these tenants", file=sys.stderr)
        return 2
    return 0


def _file_name(text: str) -> str:
    """A tenant's name as a file name in the zip: letters, digits, '-' and '_' kept, the rest '_'."""
    return "".join(c if c.isascii() and (c.isalnum() or c in "-_") else "_" for c in text)[:48] or "tenant"


def export(args) -> int:
    """``export EXPR --tenants FILE --algo A -o OUT.zip``: one MSCCL file per tenant (each validated and simulated
    for its runtime), in one zip with a README; a tenant no runtime can take ends the command in one line."""
    import io
    import zipfile

    from solvers.core.errors import NotApplicable
    from solvers.export import XmlError, export as to_msccl

    from .common import write_atomically

    if args.format != "msccl":
        raise UsageError("--tenants exports one MSCCL file per tenant (--format msccl)")
    if not args.output or not str(args.output).endswith(".zip"):
        raise UsageError("--tenants writes one file per tenant into a zip: give -o FILE.zip")
    if args.json:
        raise UsageError("--tenants writes a zip; its README lists the files (no --json)")
    tenants, work, topo, result = _solved(args)
    in_place = {"default": None, "in": True, "out": False}[args.place]
    files, lines = [], []
    for row in result.rows:
        t = row.tenant
        if row.note:
            raise UsageError(f"{t.name}: {row.note}; such a schedule is not a {t.collective.value} to export")
        try:
            text, report = to_msccl(result.fabric, row.schedule, args.dialect, args.sm_budget, args.runtime,
                                    proto=args.proto, copies=args.copies, instances=args.instances,
                                    in_place=in_place, name=f"{t.name[:24]} {t.collective.value}")
        except (XmlError, NotApplicable) as exc:
            raise UsageError(f"{t.name}: {exc}") from None
        name = f"{len(files) + 1:02d}_{_file_name(t.name)}.xml"
        files.append((name, text))
        root = f", root {row.root_name}" if row.root_name else ""
        lines.append(f"- {name}: tenant {t.name}, {t.collective.value}{root}, {t.total_bytes:g} bytes; "
                     f"{report.runtime}, {report.threadblocks} threadblocks, {report.steps} steps, validated and "
                     f"simulated" + (f"; {report.root_note}" if report.root_note else "")
                     + (f" ({report.runtime_note})" if report.runtime_note else ""))
    readme = (f"{len(files)} tenants on {topo.name or topo.expr}, synthesized by {args.algo} ({result.mode}); "
              f"each file is one tenant's collective, to be called on its own communicator or stream while the "
              f"others run. Makespan in the runtime model: {result.makespan_us:.2f} us ({work.price_label}).\n\n"
              + "\n".join(lines) + "\n")
    buf = io.BytesIO()
    with zipfile.ZipFile(buf, "w", zipfile.ZIP_DEFLATED) as zf:
        for name, text in [("README.txt", readme)] + files:
            info = zipfile.ZipInfo(name, date_time=(2020, 1, 1, 0, 0, 0))
            info.compress_type = zipfile.ZIP_DEFLATED
            zf.writestr(info, text)
    write_atomically(args.output, buf.getvalue())
    print(f"wrote {args.output}: {len(files)} MSCCL files, one per tenant, each validated and simulated",
          file=sys.stderr)
    return 0
