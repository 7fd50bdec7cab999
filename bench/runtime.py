"""The runtime model (``solvers.runtime``): its speed and its consistency with the papers, in one table.

    python -m bench.runtime            # N = 64, 256, 512 and every consistency check
    python -m bench.runtime --quick    # N = 64 and 256 only

Speed rows ("events/s"): BFB allgathers priced under the alpha-beta model (10 us, 12.5 GB/s) at a fixed
pipelining depth P, every wave computed (the steady-state shortcut off), so "events" = sends x P really
simulated; "graph s" builds the message graph once, "sim s" is the simulation. Ratio rows: the model against the
closed form or the synthesizer's own clock, with the target each must meet (issue 21, (a)-(e)), and the NCCL-grade
baselines against their analytic rates (the multi-ring's ring bandwidth, NCCL's trees across boxes and the
hierarchical allreduce pipelined); "ratio" is model / reference.
"""
from __future__ import annotations

import argparse
import time

import numpy as np

from solvers.core.cost import alpha_beta_us
from solvers.runtime import Execution, Model, simulate
from solvers.synthesize import synthesize
from topologies import load

AB = Execution.alpha_beta(10.0, 12.5)


def speed_rows(cases: list[tuple[str, int]]) -> list[dict]:
    rows = []
    for expr, slices in cases:
        r = synthesize(load(expr), "bfb", "allgather")
        t0 = time.perf_counter()
        model = Model(r.topology, r.schedule, AB.fixed(slices))
        t1 = time.perf_counter()
        run = model._run(np.array([1e9]), slices, shortcut=False)
        t2 = time.perf_counter()
        events = model.graph.size * slices
        rows.append({"check": "speed", "case": f"bfb allgather {expr}", "N": r.topology.n,
                     "sends": r.schedule.count, "P": slices, "events": events, "graph s": t1 - t0,
                     "sim s": t2 - t1, "events/s": events / (t2 - t1), "ratio": float(run.total_us[0]) /
                     alpha_beta_us(r.cost.steps, r.cost.tb_factor, 1e9, 10.0, 12.5), "target": "-"})
    return rows


def _ratio(check, case, n, got, want, target) -> dict:
    return {"check": check, "case": case, "N": n, "sends": "-", "P": "-", "events": "-", "graph s": "-",
            "sim s": "-", "events/s": "-", "ratio": got / want, "target": target}


def consistency_rows() -> list[dict]:
    rows = []
    r = synthesize(load("uniring(1,16)"), "ring", "allreduce")           # (a)
    got = simulate(r.topology, r.schedule, 1e9, Execution.alpha_beta(2.0, 10.0, slices=1)).time_us
    rows.append(_ratio("(a) ring AR closed form", "uniring(1,16), P=1", 16, got, 2 * 15 * (2.0 + 1e9 / 16e4),
                       "= 1"))
    for expr in ("dgx_a100(boxes=2)", "mi250(clusters=2)"):                 # (b)
        for coll, phases in (("allgather", 1), ("allreduce", 2)):
            r = synthesize(load(expr), "forestcoll", coll, total_bytes=1e9)
            got = simulate(r.topology, r.schedule, 1e9)
            want = phases * 1e9 / float(r.detail.optimal_algbw) / 1e3
            rows.append(_ratio("(b) ForestColl / M/(N x*)", f"{expr} {coll}, P={got.slices}", r.topology.n,
                               got.time_us, want, "1 .. 1.02"))
    for expr in ("dgx_a100(boxes=2)", "torus(4,4)", "mi250(clusters=2)"):  # (c)
        r = synthesize(load(expr), "tacos", "allreduce", total_bytes=1e8)
        d = r.detail
        got = simulate(r.topology, r.schedule, d.chunk_bytes * d.chunks * r.topology.n, Execution(slices=1))
        rows.append(_ratio("(c) TACOS / its clock", f"{expr} allreduce", r.topology.n, got.time_us, d.time_us, "= 1"))
    for expr in ("dgx1()", "ring(4)"):                                       # (d)
        r = synthesize(load(expr), "teccl", "allgather", total_bytes=1e6)
        got = simulate(r.topology, r.schedule, 1e6)
        rows.append(_ratio("(d) TE-CCL / its epochs", f"{expr} allgather", r.topology.n, got.time_us,
                           float(r.detail.transfer_time_us), "<= 1"))
    for expr in ("gkautz(4,64)", "hypercube(6)", "torus(8,8)"):              # (e)
        r = synthesize(load(expr), "bfb", "allgather")
        got = simulate(r.topology, r.schedule, 1e8, AB.fixed(1)).time_us
        rows.append(_ratio("(e) BFB / step model", f"{expr}, P=1", r.topology.n, got,
                           alpha_beta_us(r.cost.steps, r.cost.tb_factor, 1e8, 10.0, 12.5), "= 1"))
    for expr, coll in (("dgx_a100(boxes=2)", "allreduce"), ("mi250(clusters=2)", "allgather"),
                       ("torus(8,8)", "allgather"), ("hypercube(6)", "allreduce")):     # NCCL-grade baselines
        r = synthesize(load(expr), "ring", coll)
        got = simulate(r.topology, r.schedule, 1e9)
        rows.append(_ratio("ring busbw / ring bandwidth", f"{expr} {coll}, {r.detail.rings} rings, P={got.slices}",
                           r.topology.n, got.busbw_gbs, r.detail.ring_busbw_gbs, "0.9 .. 1"))
    for expr in ("dgx_a100(boxes=2)", "dgx_a100(boxes=4)"):
        r = synthesize(load(expr), "dbt", "allreduce")
        got = simulate(r.topology, r.schedule, 1e9)
        rows.append(_ratio("dbt algbw / pipelined trees", f"{expr} allreduce, {r.schedule.notes['trees']} trees, "
                           f"P={got.slices}", r.topology.n, got.algbw_gbs, r.schedule.notes["pipelined_algbw_gbs"],
                           "0.9 .. 1"))
        r = synthesize(load(expr), "hierarchical", "allreduce")
        got = simulate(r.topology, r.schedule, 1e9)
        rows.append(_ratio("hierarchical algbw / formula", f"{expr} allreduce, P={got.slices}", r.topology.n,
                           got.algbw_gbs, r.schedule.notes["pipelined_algbw_gbs"], "0.9 .. 1"))
    return rows


def main() -> None:
    ap = argparse.ArgumentParser(description=__doc__.splitlines()[0])
    ap.add_argument("--quick", action="store_true", help="N = 64 and 256 only")
    args = ap.parse_args()
    cases = [("gkautz(4,64)", 64), ("gkautz(4,256)", 16), ("hypercube(9)", 8)]
    rows = speed_rows(cases[:2] if args.quick else cases) + consistency_rows()
    cols = ["check", "case", "N", "sends", "P", "events", "graph s", "sim s", "events/s", "ratio", "target"]

    def fmt(v) -> str:
        if isinstance(v, float):
            return f"{v:.4g}" if abs(v) < 1e4 else f"{v:.3e}"
        return str(v)

    cells = [[fmt(r[c]) for c in cols] for r in rows]
    width = [max(len(c), *(len(x[i]) for x in cells)) for i, c in enumerate(cols)]
    print("  ".join(c.ljust(w) for c, w in zip(cols, width)))
    for x in cells:
        print("  ".join(v.ljust(w) for v, w in zip(x, width)))


if __name__ == "__main__":
    main()
