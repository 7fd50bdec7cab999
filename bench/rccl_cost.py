"""What RCCL's kernels without fused receive steps cost in the runtime model (issue 38): the bundle's planned time
of a schedule for msccl-executor (fused ``rrc``) beside the one for RCCL (``r`` into scratch, then a local
``re``), at a few buffer sizes.

    python -m bench.rccl_cost                       # ring(8) allreduce at 1 MiB and 1 GiB
    python -m bench.rccl_cost --designs "ring(8);hypercube(4)" --algo bfb --collective reduce_scatter

Both bundles are planned with the same link prices (alpha 0.7 us, 100 GB/s a node) and NCCL's protocol costs
(``solvers.export.tuning``); the RCCL one also pays, on each link, every reduced byte once more at
``LOCAL_REDUCE_GBS`` per copy (``solvers.runtime``, "Local reductions"). Columns: the protocol x copies each
bundle picked at that size, the planned times, their ratio, and the share of the bytes a link carries that its
receiver reduces (the part the extra pass applies to).
"""
from __future__ import annotations

import argparse

from solvers.core.errors import NotApplicable
from solvers.export import XmlError
from solvers.export.bundle import export_bundle
from solvers.runtime import LOCAL_REDUCE_GBS, Execution
from solvers.runtime.dag import message_graph
from solvers.synthesize import synthesize
from topologies import parse_topology

PRICES = Execution.alpha_beta(0.7, 100.0)
SIZES = (1 << 20, 1 << 30)


def rows(expr: str, algo: str, collective: str) -> list[tuple]:
    topo = parse_topology(expr)
    result = synthesize(topo, algo, collective)
    bundles = {rt: export_bundle(result.topology, result.schedule, rt, execution=PRICES, jobs=1)
               for rt in ("msccl-executor", "rccl")}
    graph = message_graph(result.topology, result.schedule)
    reduced = float(graph.reduced.sum() / graph.load.sum()) if graph.load.sum() else 0.0
    out = []
    for size in SIZES:
        picked = {}
        for rt, b in bundles.items():
            k = b.plan.sizes.index(size)
            choice = next(c for c in b.plan.choices if size in c.sizes)
            picked[rt] = (f"{choice.proto}x{choice.copies}", float(b.plan.best_us()[k]))
        full, rccl = picked["msccl-executor"], picked["rccl"]
        out.append((expr, algo, collective, size, full[0], full[1], rccl[0], rccl[1], rccl[1] / full[1], reduced))
    return out


def main() -> None:
    parser = argparse.ArgumentParser(description=__doc__.splitlines()[0])
    parser.add_argument("--designs", default="ring(8)", help="semicolon list of expressions (default ring(8))")
    parser.add_argument("--algo", default="ring")
    parser.add_argument("--collective", default="allreduce")
    args = parser.parse_args()
    print(f"local reduction rate {LOCAL_REDUCE_GBS:g} GB/s per copy; links priced at alpha 0.7 us, 100 GB/s a node")
    print(f"{'design':<16} {'algo':<8} {'collective':<15} {'bytes':>11} {'full ops':>10} {'time us':>12} "
          f"{'rccl':>10} {'time us':>12} {'ratio':>6} {'reduced':>8}")
    for expr in (d.strip() for d in args.designs.split(";") if d.strip()):
        try:
            found = rows(expr, args.algo, args.collective)
        except (NotApplicable, XmlError) as exc:
            print(f"{expr:<16} {args.algo:<8} {args.collective:<15} not exported: {str(exc).splitlines()[0]}")
            continue
        for r in found:
            print(f"{r[0]:<16} {r[1]:<8} {r[2]:<15} {r[3]:>11} {r[4]:>10} {r[5]:>12.1f} {r[6]:>10} {r[7]:>12.1f} "
                  f"{r[8]:>6.3f} {r[9]:>8.1%}", flush=True)


if __name__ == "__main__":
    main()
