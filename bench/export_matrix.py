"""Which exports the real runtimes would load: cases x runtime targets -> ok or refused (with the limit), the
largest threadblocks per rank and steps per threadblock, file size and export seconds (issue 22).

    python -m bench.export_matrix            # every case of the issue's acceptance list
    python -m bench.export_matrix --quick    # N up to 64 and the DGX/MI250 fabrics only

A case is (topology, synthesizer, collective); one that the synthesizer does not build is left out (its reason is
not an export matter). Every "ok" file passed ``check_xml`` for that target (the parser's rules, the target's
limits from ``solvers.export.TARGETS``, and the symbolic simulation); "refused" names the limit the export cannot
meet and by how much. "export s" covers lowering, writing, validating and simulating, retries included.
"""
from __future__ import annotations

import argparse
import time

from solvers.core.errors import NotApplicable, ScheduleError
from solvers.export import XmlError, export
from solvers.synthesize import synthesize
from topologies import parse_topology

TARGETS = ("rccl", "msccl-executor")
ALGOS = ("ring", "bfb", "expansion", "forestcoll", "tacos", "ring_uni", "shifted_ring", "dbt", "rhd", "direct",
         "hierarchical")
COLLECTIVES = ("allgather", "reduce_scatter", "allreduce")


def designs(quick: bool) -> list[str]:
    sizes = (8, 16, 32, 64) if quick else (8, 16, 32, 64, 128, 256)
    out = [f"gkautz({d},{n})" for d in (2, 4) for n in sizes if n > d]
    out += ["torus(8,8)", "hypercube(6)", "dgx_a100(boxes=2)", "mi250(clusters=2)"]
    if not quick:
        out.append("dgx_a100(boxes=4)")
    return out


def rows(quick: bool):
    for expr in designs(quick):
        topo = parse_topology(expr)
        for algo in ALGOS:
            for coll in COLLECTIVES:
                try:
                    result = synthesize(topo, algo, coll, total_bytes=1e6)
                except (NotApplicable, ScheduleError):
                    continue
                for runtime in TARGETS:
                    start = time.perf_counter()
                    try:
                        text, report = export(result.topology, result.schedule, runtime=runtime)
                        status, tbs, steps, kb = "ok", report.tbs_per_rank, report.steps_per_tb, len(text) / 1e3
                    except (XmlError, NotApplicable) as exc:
                        status, tbs, steps, kb = f"refused: {exc}", "-", "-", "-"
                    seconds = time.perf_counter() - start
                    yield (expr, algo, coll, runtime, topo.n, tbs, steps, kb, seconds, status)


def main() -> None:
    parser = argparse.ArgumentParser(description=__doc__.splitlines()[0])
    parser.add_argument("--quick", action="store_true", help="N up to 64, no dgx_a100(boxes=4)")
    args = parser.parse_args()
    head = ("topology", "algo", "collective", "runtime", "N", "tbs/rank", "steps/tb", "KB", "export s", "status")
    print(f"{head[0]:<20} {head[1]:<13} {head[2]:<15} {head[3]:<15} {head[4]:>4} {head[5]:>8} {head[6]:>8} "
          f"{head[7]:>9} {head[8]:>8}  {head[9]}")
    counts = {"ok": 0, "refused": 0}
    for expr, algo, coll, runtime, n, tbs, steps, kb, seconds, status in rows(args.quick):
        counts["ok" if status == "ok" else "refused"] += 1
        size = f"{kb:.0f}" if isinstance(kb, float) else kb
        print(f"{expr:<20} {algo:<13} {coll:<15} {runtime:<15} {n:>4} {tbs!s:>8} {steps!s:>8} {size:>9} "
              f"{seconds:>8.2f}  {status}", flush=True)
    print(f"{counts['ok']} files load on their runtime, {counts['refused']} refused with the limit named")


if __name__ == "__main__":
    main()
