"""TACOS (Won et al.; digest notes/tacos.md §2): Tables I, III, IV, V and Fig. 21, as ratios of collective times.

The paper's numbers are ASTRA-sim times normalized within a row (its link latencies and buffer sizes are not
stated, pitfall T14). Ours are the runtime model's times of verified schedules, with one chunk in flight per link
(``Execution(slices=1)``: TACOS moves whole chunks, no pipelining inside one), normalized the same way:

* Table I (Ring_FC_Switch, ``ring_fc_switch(nodes)``, All-Reduce of 64 MiB): Ring / TACOS-Greedy. The paper prints
  Ring / best-in-row and best is the ILP up to 64 NPUs, so its Ring / Greedy is the printed Ring over the printed
  Greedy (11.28 / 1.45 at 32 NPUs). Two rings: the paper's, over the NPUs in index order with every edge routed on
  a shortest path (``ring --ring-order npu``), and NCCL's multi-ring (``ring``).
* Table III (4x4 mesh without NPUs 7 and 9, All-Reduce of 1 MiB per NPU): each / TACOS-ILP.
* Table IV and V (6x6 mesh; the issue-55 instances of ``bench.rooted``): each / TACOS-ILP.
* Fig. 21 (10x10 mesh, All-Reduce, TACOS with 1 chunk of 128 KB per NPU): Ring / TACOS and Direct / TACOS; the
  paper's are averages over 1-64 chunks, and ours do not move with the chunk count (2.32 / 2.34 / 2.34 at 1, 2 and
  4 chunks for the NPU-order ring).
"""
from __future__ import annotations

import json
from functools import cache

from bench.papers import Spec

TABLE_I_BYTES = 64 << 20
# Table I as printed (normalized to the best of the row), and the Greedy column that turns it into Ring / Greedy
TABLE_I_RING = {8: 1.44, 16: 3.78, 32: 11.28, 64: 26.47, 128: 36.00}
TABLE_I_GREEDY = {8: 1.00, 16: 1.00, 32: 1.45, 64: 1.58, 128: 1.00}
TABLE_III = {"tacos": 1.00, "taccl_like": 1.00, "ring_npu": 5.38, "direct": 5.08}
TABLE_IV = {("broadcast", "taccl_like"): 1.00, ("broadcast", "direct"): 3.90, ("reduce", "taccl_like"): 1.00,
            ("reduce", "direct"): 3.90, ("gather", "taccl_like"): 1.11, ("gather", "direct"): 1.67,
            ("scatter", "taccl_like"): 1.11, ("scatter", "direct"): 1.67}
TABLE_V = {"tacos": 1.25, "taccl_like": 1.50, "direct": 3.63}
TABLE_V_TENANTS = [{"name": "bcast", "collective": "broadcast", "root": 2, "bytes": 1 << 20},
                   {"name": "reduce", "collective": "reduce", "root": 17, "bytes": 1 << 20},
                   {"name": "ag", "collective": "allgather", "bytes": 36 << 20}]
FIG_21 = {"ring_npu": 4.51, "direct": 11.00}


def _time(topo, algo: str, collective: str, size: float, options: dict | None = None, root=None) -> float:
    """The runtime model's time (us) of a verified schedule, one chunk in flight per link."""
    from solvers import synthesize
    from solvers.runtime import Execution, simulate

    r = synthesize(topo, algo, collective, total_bytes=size, options=options or {}, root=root)
    if not r.verification.ok:
        raise AssertionError(f"{algo} {collective} did not verify")
    return simulate(r.topology, r.schedule, size, Execution(slices=1)).time_us


_ALGOS = {"tacos": ("tacos", {}), "tacos_ilp": ("tacos_ilp", {}), "taccl_like": ("taccl_like", {}),
          "ring_npu": ("ring", {"order": "npu"}), "ring": ("ring", {}), "direct": ("direct", {})}


@cache
def _allreduce_time(expr: str, algo: str, size: float) -> float:
    """``algo``'s All-Reduce time (us) on ``expr``, kept so that a row's reference is solved once."""
    from topologies import load

    name, options = _ALGOS[algo]
    return _time(load(expr), name, "allreduce", size, options)


def _table_i(npus: int, algo: str) -> float:
    expr = f"ring_fc_switch({npus // 8})"
    return _allreduce_time(expr, algo, TABLE_I_BYTES) / _allreduce_time(expr, "tacos", TABLE_I_BYTES)


def _table_iii(algo: str) -> float:
    expr, size = "fail(mesh(4,4),gpus=[7,9])", 14 << 20          # 1 MiB per NPU, 14 NPUs
    return _allreduce_time(expr, algo, size) / _allreduce_time(expr, "tacos_ilp", size)


@cache
def _rooted_time(collective: str, algo: str) -> float:
    """Root 0 (a corner: the paper names none), one chunk of 1 MiB; Direct's reduce is its broadcast on G^T."""
    from topologies import load

    topo = load("mesh(6,6)")
    if (algo, collective) == ("direct", "reduce"):
        return _time(topo.transpose(), "direct", "broadcast", 1 << 20, root=0)
    return _time(topo, algo, collective, 1 << 20, root=0)


def _table_iv(collective: str, algo: str) -> float:
    return _rooted_time(collective, algo) / _rooted_time(collective, "tacos_ilp")


@cache
def _table_v() -> dict[str, float]:
    from solvers.tenants import read_tenants, synthesize_tenants
    from topologies import load

    topo = load("mesh(6,6)")
    tenants = read_tenants(json.dumps(TABLE_V_TENANTS))
    spans = {algo: synthesize_tenants(topo, tenants, algo, mode).makespan_us
             for algo, mode in (("tacos_ilp", "joint"), ("tacos", "joint"), ("taccl_like", "joint"),
                                ("direct", "separate"))}
    return {algo: t / spans["tacos_ilp"] for algo, t in spans.items()}


def _fig_21(algo: str) -> float:
    size = 100 * (128 << 10)
    return _allreduce_time("mesh(10,10)", algo, size) / _allreduce_time("mesh(10,10)", "tacos", size)


_RING_GROWS = ("The paper's Ring / TACOS doubles with every doubling of NPUs; ours stays 3.5-5.7 (NPU order) and "
               "0.9-1.9 (multi-ring) from 8 to 128 NPUs. Under any model where links run at once the ratio is "
               "bounded by a constant here: a routed ring step is at most H hops of one chunk at the slowest link "
               "(50 GB/s) while TACOS needs at least N-1 chunks over the 550 GB/s an NPU receives, so Ring / "
               "TACOS <= 11 H whatever N; the paper's growth needs a ring time that grows as N^2 in ASTRA-sim, "
               "whose ring settings it does not state (pitfall T14).")
_MEASURED_I = {("ring_npu", 8): 3.50, ("ring_npu", 16): 5.73, ("ring_npu", 32): 5.48, ("ring_npu", 64): 5.22,
               ("ring_npu", 128): 5.26, ("ring", 8): 0.89, ("ring", 16): 1.53, ("ring", 32): 1.13, ("ring", 64): 1.41,
               ("ring", 128): 1.94}


def _table_i_specs() -> list[Spec]:
    out = []
    for npus in TABLE_I_RING:
        paper = round(TABLE_I_RING[npus] / TABLE_I_GREEDY[npus], 3)
        for algo, label in (("ring_npu", "NPU-order ring"), ("ring", "NCCL multi-ring")):
            ratio = _MEASURED_I[(algo, npus)] / paper
            out.append(Spec("tacos", "Table I", f"{npus} NPUs {label} / TACOS-Greedy", paper,
                            (lambda n=npus, a=algo: _table_i(n, a)), tolerance=0.05, slow=npus >= 64 or algo == "ring"
                            and npus >= 32, known=_RING_GROWS, expect_ratio=round(ratio, 3)))
    return out


_DEGREE_ONE = ("Failing NPU 7 leaves corner NPU 3 one link (to NPU 2), so every All-Reduce needs 13 chunk times per "
               "phase into it: TACOS-ILP reaches exactly that bound, and a ring over NPU ids needs at most the sum of "
               "its routed hops, 20 per phase, so Ring / ILP <= 20/13 = 1.54 under any model where links run at "
               "once; the paper's 5.38 and 5.08 imply another NPU numbering or unpipelined hops (Fig. 22a is not "
               "in the text).")
_DIRECT_III = ("Same degree-1 corner as the ring row: Direct's copies into NPU 3 all cross link 2->3, "
               "so it is bounded by the same 13 chunk times plus its longer routes; ours sums on the way "
               "(the IR has no unreduced relay), the paper's relays every contribution unreduced.")


def _table_iii_specs() -> list[Spec]:
    rows = [("tacos", "TACOS-Greedy", "", None), ("taccl_like", "TACCL-like", "", None),
            ("ring_npu", "Ring (NPU order)", _DEGREE_ONE, 1.538 / 5.38), ("direct", "Direct", _DIRECT_III,
                                                                         2.154 / 5.08)]
    return [Spec("tacos", "Table III", f"{label} / TACOS-ILP", TABLE_III[algo], (lambda a=algo: _table_iii(a)),
                 tolerance=0.02 if not known else 0.05, known=known,
                 expect_ratio=None if expect is None else round(expect, 3))
            for algo, label, known, expect in rows]


_DIRECT_IV = ("Table IV names no root. From corner NPU 0 the root's row link carries 30 of Direct's 35 copies "
              "(dimension-order routes), 30 chunk times against the ILP's 10 hops: 3.00, not 3.90.")
_TACCL_IV = ("Without the congestion constraint every shortest-path routing is optimal to TACCL-like's ILP, and "
             "HiGHS sent 28 of the 35 chunks into one of the root's two links (the ILP splits them 17/18); the "
             "paper's 1.11 is one such routing among many.")


def _table_iv_specs() -> list[Spec]:
    measured = {("broadcast", "direct"): (_DIRECT_IV, 3.00), ("reduce", "direct"): (_DIRECT_IV, 3.00),
                ("gather", "taccl_like"): (_TACCL_IV, 1.61), ("scatter", "taccl_like"): (_TACCL_IV, 1.44)}
    out = []
    for (coll, algo), paper in TABLE_IV.items():
        known, ours = measured.get((coll, algo), ("", None))
        out.append(Spec("tacos", "Table IV", f"{coll} {algo} / TACOS-ILP", paper,
                        (lambda c=coll, a=algo: _table_iv(c, a)), tolerance=0.02 if not known else 0.05,
                        slow=coll in ("gather", "scatter"), known=known,
                        expect_ratio=None if ours is None else round(ours / paper, 3)))
    return out


_GREEDY_V = ("The makespan is the allgather's ingress bound (35 chunks into a corner over 2 links, 18 chunk times); "
             "the ILP proves it and our greedy, which matches the reductions first, reaches it too: 1.00, where "
             "the paper's greedy took 1.25.")
_TACCL_V = ("TACCL-like's ILP has no congestion constraint, so any shortest-path routing is optimal to it; the "
            "routing HiGHS returns decides the ratio (1.72 here, 1.50 in the paper).")


def _table_v_specs() -> list[Spec]:
    measured = {"tacos": (_GREEDY_V, 1.00), "taccl_like": (_TACCL_V, 1.72), "direct": ("", None)}
    out = []
    for algo, paper in TABLE_V.items():
        known, ours = measured[algo]
        out.append(Spec("tacos", "Table V", f"multi-tenant {algo} / TACOS-ILP", paper,
                        (lambda a=algo: _table_v()[a]), tolerance=0.15 if not known else 0.05, slow=True,
                        known=known, expect_ratio=None if ours is None else round(ours / paper, 3)))
    return out


_FIG_21 = ("On a 10x10 mesh a corner receives N-1 chunks over 2 links, so any All-Reduce takes at least (N-1)/2 "
           "chunk times per phase, and a snake ring of one-hop edges takes N-1: Ring / TACOS <= 2 for a "
           "Hamiltonian ring (ours: 2.14), 2.32 with the NPU-id ring's row-end detours. The paper's 4.51 and "
           "11.00 come from ASTRA-sim with chunks of 128 KB whose per-chunk overheads it does not state (T14).")


def _fig_21_specs() -> list[Spec]:
    return [Spec("tacos", "Fig. 21", f"10x10 mesh {label} / TACOS-Greedy", FIG_21[algo], (lambda a=algo: _fig_21(a)),
                 tolerance=0.05, known=_FIG_21, expect_ratio=round(ours / FIG_21[algo], 3))
            for algo, label, ours in (("ring_npu", "Ring (NPU order)", 2.32), ("direct", "Direct", 4.08))]


SPECS: list[Spec] = _table_i_specs() + _table_iii_specs() + _table_iv_specs() + _table_v_specs() + _fig_21_specs()
