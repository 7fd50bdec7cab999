"""Reproducible numbers of TE-CCL (Liu et al., SIGCOMM 2024; digest notes/te-ccl.md section 9), see
bench/papers/__init__.py.

Every row solves TE-CCL's model here (``solvers.teccl``; instances shared with ``bench/teccl.py``) and compares
what the model determines: transfer times in microseconds and epoch counts. The paper's solver times (Gurobi on
the authors' machines, Tables 3, 7, 8) are left out: they measure another solver on other hardware, not the
schedule. Table 3's MSCCL column and Table 8's TACCL columns are other systems' numbers, and Table 8(d)'s early
stop at a 30 % gap depends on when Gurobi happened to stop, so they are left out too.
"""
from __future__ import annotations

import functools
from fractions import Fraction

from bench.papers import Spec
from bench.teccl import CASES, KB, MB, TABLE8_SIZES, copy_reduction, table8
from solvers.teccl import teccl
from topologies import parse_topology

P = "teccl"


@functools.cache
def case(label: str):
    """The TecclResult of one of bench/teccl.py's CASES, by its label."""
    _, expr, coll, opts, _, _ = next(c for c in CASES if c[0] == label)
    return teccl(parse_topology(expr), coll, time_limit=300.0, **opts)


@functools.cache
def dgx1_table7(collective: str, chunks: int):
    """Table 7's setting: DGX1 with alpha = 0, 25 KB chunks (the slowest link's chunk time is the epoch)."""
    return teccl(parse_topology("dgx1(alpha_ns=0)"), collective, chunks=chunks, chunk_bytes=25 * KB,
                 time_limit=300.0)


def us(result) -> Fraction:
    return result.transfer_time_us


SPECS: list[Spec] = [
    # Table 3: DGX1, alpha 0.7 us, 25 KB chunks, TE-CCL's transfer time (us)
    Spec(P, "Table 3", "AllGather 1 chunk us", 4, lambda: us(case("DGX1 AG 1 chunk (T3)"))),
    Spec(P, "Table 3", "AllGather 2 chunks us", 5, lambda: us(case("DGX1 AG 2 chunks (T3)"))),
    Spec(P, "Table 3", "AllGather 3 chunks us", Fraction("6.1"), lambda: us(case("DGX1 AG 3 chunks (T3)")),
         tolerance=1e-9, known="The model's transfer times are whole epochs of 1 us (25 KB on 25 GB/s links), so "
         "6.1 us is not a value it can produce; 6 epochs is proven minimal here (5 infeasible) and matched the "
         "digest's independent Pyomo/HiGHS model (notes 9.1, 10.2).", expect_ratio=6 / 6.1),
    Spec(P, "Table 3", "AllToAll 1 chunk us", 4, lambda: us(case("DGX1 A2A 1 chunk (T3)"))),
]

# Table 7: (# chunks, # epochs) with the same transfer time as SCCL (diff 0 %): the minimum K is the pair's epochs
for _c, _slow in ((1, False), (2, False), (3, False), (4, False), (5, False), (6, True)):
    SPECS.append(Spec(P, "Table 7", f"AllGather ({_c},{_c + 1}) epochs", _c + 1,
                      functools.partial(lambda c: dgx1_table7("allgather", c).finish, _c), slow=_slow))
SPECS += [
    Spec(P, "Table 7", "AllToAll (1,3) epochs", 3, lambda: dgx1_table7("alltoall", 1).finish),
    Spec(P, "Table 7", "AllToAll (3,8) epochs", 8, lambda: dgx1_table7("alltoall", 3).finish),
    Spec(P, "Table 7", "AllToAll (8,30) transfer us", 21, lambda: us(dgx1_table7("alltoall", 8)),
         tolerance=1e-9, known="K = 21 is proven infeasible here: DGX1's bisection carries 6 chunks per epoch "
         "each way and 4 x 4 x 8 = 128 chunks must cross it, so 21.33 epochs at least (notes 9.2); the paper's "
         "21 us reads as the 0-based index of the last epoch (22 epochs of 1 us).", expect_ratio=22 / 21),
]

# Fig. 9: copy's benefit at the largest transfer (0.21 GB, 4 chunks) on DGX1, in percent of the no-copy time
SPECS.append(Spec(P, "Fig. 9", "DGX1 0.21 GB copy reduction %", 50, lambda: copy_reduction("dgx1()", 210 * MB),
                  tolerance=1e-9, known="Without copy the allgather is bisection-bound: 4 x 4 x 4 = 64 chunk copies "
                  "cross DGX1's cut of 6 chunks per epoch, so 11 epochs (proven minimal), where copy needs Table 7's "
                  "C + 1 = 5: 1 - 5/11 = 54.5 % (fastest-link epochs: 10 vs 22, the same). The paper gives 50 % without "
                  "its epoch length or alpha; ours is exactly 50 % at 2.1 MB, where alpha costs an epoch per hop "
                  "(6 vs 12 epochs, python -m bench.teccl --copy).", expect_ratio=(600 / 11) / 50))

# Table 8: NDv2 x 2 (16 GPUs), collective finish time CT (us) per output buffer size. The paper's EDs at 256 MB,
# 64 MB and 16 MB are 1280.41 / 320.10 / 80.01 where size / 16 / 12.5 GB/s gives 1280 / 320 / 80 (notes 9.4, not
# explained there), hence the 5e-4 tolerance; the epoch counts CT / ED agree exactly.
T8E = {"1GB": 50000, "256MB": Fraction("12804.10"), "64MB": Fraction("3201.02"), "16MB": Fraction("800.06"),
       "4MB": 200, "1MB": 70, "256KB": Fraction("19.20"), "64KB": Fraction("7.68"), "16KB": Fraction("4.80"),
       "4KB": Fraction("4.24"), "1KB": Fraction("4.14")}
T8B = {"1GB": 325000, "256MB": Fraction("83226.63"), "64MB": Fraction("20806.66"), "16MB": Fraction("5200.42"),
       "4MB": Fraction("1300.03"), "1MB": 340, "256KB": Fraction("88.32"), "64KB": Fraction("24.32"),
       "16KB": Fraction("7.6"), "4KB": Fraction("4.5"), "1KB": Fraction("4.235")}
# ours / paper as measured, for the all-to-all rows below (the LP's minimum K against the paper's LP at its K).
# Each LP takes 10-20 s here (16 KB: 38 s, 4 KB: 91 s, 1 KB: longer), so the rows keep 1 GB (256 MB to 4 MB are the
# same 64 epochs, scaled) and the sizes where alpha starts to count; measured for the others: 256 MB 81920 us,
# 64 MB 20480, 16 MB 5120, 4 MB 1280, 16 KB 6.88 (86 epochs), 4 KB 4.36 (218 epochs).
T8B_RATIO = {"1GB": 320000 / 325000, "1MB": 325 / 340, "256KB": 84.48 / 88.32, "64KB": 22.08 / 24.32}
FAST_T8E = ("1GB", "1MB")           # the rows cheap enough for the test suite (about a second each)
_SIZE = dict(TABLE8_SIZES)

for _name, _paper in T8E.items():
    _known, _ratio = "", None
    if _name == "1KB":
        _known = ("At 1 KB (epochs of 0.01 us, the experiments' x2) auto keeps the greedy schedule, and the cut "
                  "lower bound proves its 416 epochs minimal in this model; the paper's 414 is 2 epochs (0.02 us) "
                  "less, which the same alpha rounding (0.7 and 1.3 us = 70 and 130 epochs) does not allow. At "
                  "4 KB both give 212.")
        _ratio = Fraction("4.16") / Fraction("4.14")
    SPECS.append(Spec(P, "Table 8(e)", f"AllGather slowest-link ED {_name} CT us", _paper,
                      functools.partial(lambda n: us(table8("allgather", _SIZE[n], "slowest")), _name),
                      tolerance=5e-4 if not _known else 1e-9, slow=_name not in FAST_T8E, known=_known,
                      expect_ratio=_ratio))

for _name, _paper in T8B.items():
    _ratio = T8B_RATIO.get(_name)
    if _ratio is None:
        continue
    SPECS.append(Spec(P, "Table 8(b)", f"AllToAll slowest-link ED {_name} CT us", _paper,
                      functools.partial(lambda n: us(table8("alltoall", _SIZE[n], "slowest")), _name),
                      tolerance=5e-4, slow=True,
                      known="Ours is the LP at the smallest K that admits a schedule (a bisection on K; 1 GB: 64 "
                      "epochs = 4 GB over the one 12.5 GB/s cross link each way, the physical bound); the paper "
                      "solved the LP for early delivery at a K from its loose search (App. E), which does not "
                      "minimise the finish (notes 3), and reports a few epochs more.", expect_ratio=_ratio))

# Table 8(c): fastest-link epochs (ED 1250 us at 1 GB), the MILP to optimality: 35 epochs (about 75 s here, from the
# greedy start and the entry cuts; Gurobi hit its 2 h limit in the paper, digest 10.2 found no point in 900 s)
SPECS.append(Spec(P, "Table 8(c)", "AllGather fastest-link ED 1GB CT us", 43750,
                  lambda: us(table8("allgather", _SIZE["1GB"], "fastest", "milp")), slow=True))
