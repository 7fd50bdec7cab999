"""MSCCL XML export time: lowering, writing, validating and simulating, in one run.

    python -m bench.msccl

"export s" covers lower + to_xml + validate + simulate (the schedule is synthesized first and not timed);
"check s" is check_xml on the written text alone. An export over a reader's limit is coarsened (issue 60,
``solvers.export.coarsen``): its row says the chunks per shard before and after and the modelled loss.
"""
import time

from solvers.export import XmlError, check_xml, export
from solvers.synthesize import synthesize
from topologies import parse_topology

CASES = [("circulant(64)", "bfb"), ("torus(8,8)", "bfb"), ("hypercube(6)", "bfb"), ("gkautz(4,64)", "bfb"),
         ("line(circulant(16,[3,4]))", "expansion"), ("gkautz(4,128)", "bfb"), ("torus(16,16)", "bfb")]


def main() -> None:
    print(f"{'topology':<28} {'algo':<10} {'collective':<15} {'nodes':>5} {'tbs':>6} {'steps':>7} {'MB':>6} "
          f"{'export s':>8} {'check s':>8}")
    for expr, algo in CASES:
        topo = parse_topology(expr)
        for coll in ("allgather", "reduce_scatter", "allreduce"):
            schedule = synthesize(topo, algo, coll).schedule
            start = time.perf_counter()
            try:
                text, report = export(topo, schedule)
            except XmlError as exc:
                print(f"{expr:<28} {algo:<10} {coll:<15} {topo.n:>5}  not exported: {exc}")
                continue
            seconds = time.perf_counter() - start
            start = time.perf_counter()
            ok = check_xml(text).ok
            check_s = time.perf_counter() - start
            print(f"{expr:<28} {algo:<10} {coll:<15} {topo.n:>5} {report.threadblocks:>6} {report.steps:>7} "
                  f"{len(text) / 1e6:>6.2f} {seconds:>8.2f} {check_s:>8.2f}" + ("" if ok else "  FAILED CHECK")
                  + (_coarsened(report.coarsened) if report.coarsened is not None else ""), flush=True)


def _coarsened(done) -> str:
    """What a coarsened export (issue 60) gave up, in a few words: chunks per shard and the modelled loss."""
    return (f"  coarsened: {done.chunks[0]} -> {done.chunks[1]} chunks per shard, {100 * done.loss:+.1f} % "
            f"({done.what})")


if __name__ == "__main__":
    main()
