"""Reproducible numbers of the genmodel paper (see bench/papers/__init__.py).

* Table 3 (CPU testbed, 1e8 floats): the plans GenTree picks on 8, 12 and 15 servers, from the Table 2 formulas
  with the Middle-SW + Server parameters (w_t = 9) as printed (mu = 1, w = group size).
* Table 6: the plan of every switch-local sub-tree at 1e7, 3.2e7 and 1e8 floats, from ``papersim`` (Algorithm 2
  read literally).
* Table 7: GenTree and the baselines on the six simulated trees, in seconds, from ``papersim`` (the paper's
  simulator as its numbers show), within 15 %.

A plan is compared through a number: CPS over p participants -> p, HCPS "a × b" -> 100·a + b, ACPS -> 0.
"""
from __future__ import annotations

from functools import cache

from bench.papers import Spec
from solvers.genmodel import CPU_TESTBED, ModelOptions, PaperSim, best_plan, parse_tree, plan_code

PAPER = "genmodel"
SIZES = ((1e7, "1e7"), (3.2e7, "3.2e7"), (1e8, "1e8"))
TABLE7_TOLERANCE = 0.15


@cache
def _sim(tree: str) -> PaperSim:
    return PaperSim(parse_tree(tree))


@cache
def _table7(tree: str, size: float) -> dict:
    return {k: v.total for k, v in _sim(tree).table7(size).items()}


# ---------------------------------------------------------------------------------------------------- Table 3
def _testbed(n: int):
    def compute():
        best = best_plan(n, 1e8, CPU_TESTBED, ModelOptions()).best
        return plan_code(best.label, n)
    return compute


TABLE3 = [(8, "CPS", 8), (12, "6 × 2", 602), (15, "5 × 3", 503)]

# ---------------------------------------------------------------------------------------------------- Table 6
# (network, sub-tree as printed, tree preset, switch name, plans at 1e7 / 3.2e7 / 1e8)
TABLE6 = [
    ("SS24", "Root SW", "ss24", "sw", ("CPS", "8 × 3", "8 × 3")),
    ("SS32", "Root SW", "ss32", "sw", ("8 × 4", "8 × 4", "8 × 4")),
    ("SYM384", "Middle SW", "sym384", "m0", ("CPS", "8 × 3", "8 × 3")),
    ("SYM384", "Root SW", "sym384", "root", ("CPS", "8 × 2", "8 × 2")),
    ("SYM512", "Middle SW", "sym512", "m0", ("CPS", "8 × 4", "8 × 4")),
    ("SYM512", "Root SW", "sym512", "root", ("CPS", "8 × 2", "8 × 2")),
    ("ASY384", "Middle SW 0-7", "asy384", "m0", ("CPS", "8 × 4", "8 × 4")),
    ("ASY384", "Middle SW 8-15", "asy384", "m8", ("CPS", "8 × 2", "8 × 2")),
    ("ASY384", "Root SW", "asy384", "root", ("ACPS", "ACPS", "ACPS")),
    ("CDC384", "DC0 Middle SW", "cdc384", "dc0.m0", ("CPS", "8 × 4", "8 × 4")),
    ("CDC384", "DC0 Root SW", "cdc384", "dc0", ("CPS", "CPS", "CPS")),
    ("CDC384", "DC1 Middle SW", "cdc384", "dc1.m0", ("CPS", "8 × 2", "8 × 2")),
    ("CDC384", "DC1 Root SW", "cdc384", "dc1", ("CPS", "CPS", "CPS")),
    ("CDC384", "Cross DC", "cdc384", "xdc", ("ACPS", "ACPS", "ACPS")),
]

TABLE6_KNOWN = (
    "Table 6 contradicts itself here: SS32 (the same 32 servers on one switch, same S and parameters) prints "
    "8 × 4 at 1e7, which is what the Table 2 choice gives; no per-switch cost can give both, and a larger alpha "
    "multiple under a root breaks ASY384's 16-way middles at 3.2e7 (mu >= 3.92 needed here, mu <= 3.22 there).")


def _choice(tree: str, switch: str, size: float):
    def compute():
        sim = _sim(tree)
        node = next(v for v in sim.tree.switches if v.name == switch)
        c = sim.choose(node, size)
        return c.code
    return compute


def _participants(tree: str, switch: str) -> int:
    t = parse_tree(tree)
    return len(next(v for v in t.switches if v.name == switch).children)


# ---------------------------------------------------------------------------------------------------- Table 7
TABLE7 = {
    "SS24": ("ss24", {"GenTree": (0.203, 0.503, 1.404), "Ring": (1.082, 1.376, 2.288),
                      "CPS": (0.203, 0.562, 1.673)}),
    "SS32": ("ss32", {"GenTree": (0.213, 0.507, 1.417), "RHD": (0.337, 0.644, 1.593),
                      "Ring": (1.399, 1.697, 2.617), "CPS": (0.223, 0.628, 1.879)}),
    "SYM384": ("sym384", {"GenTree": (0.503, 1.287, 3.575), "Ring": (2.943, 3.627, 5.742),
                          "CPS": (2.274, 7.132, 22.148)}),
    "SYM512": ("sym512", {"GenTree": (0.639, 1.627, 4.638), "RHD": (0.896, 1.853, 4.812),
                          "Ring": (3.571, 4.479, 7.285), "CPS": (3.479, 10.989, 34.200)}),
    "ASY384": ("asy384", {"GenTree": (0.570, 1.593, 4.670), "Ring": (3.043, 3.947, 6.741),
                          "CPS": (2.052, 6.421, 19.925)}),
    "CDC384": ("cdc384", {"GenTree": (2.427, 8.299, 25.388), "GenTree*": (4.484, 13.927, 43.116),
                          "Ring": (8.513, 17.329, 44.580), "CPS": (11.890, 37.799, 117.882)}),
}

CPS_KNOWN = (
    "Not a per-link bottleneck: ASY384's flat CPS is printed 10 % cheaper than SYM384's (19.925 against 22.148 s) "
    "although every NIC carries the same and ASY's 32-server uplinks carry 29.3·S per phase against 22.5·S; the "
    "NIC incast of N-1 senders alone gives 0.40-0.54 of the printed times (CDC384's CPS within 8 %).")
GT_SMALL_KNOWN = (
    "At 1e7 both levels are CPS; the top-level-first cost that fits this row at 3.2e7 and 1e8 (within 10 %) hides "
    "the root's 16-way NIC incast under the uplink, and the printed 0.503 s needs about 30 % more per float. It is "
    "the direction of the nine flat-CPS rows (ours 0.40-0.54 of the printed): the paper prices CPS above what "
    "any load-monotone link cost gives (ASY384 printed cheaper than SYM384), and at 1e7 GenTree is CPS twice.")
CDC_GT_KNOWN = (
    "GenTree* (no rearrangement) exchanges among the 16 racks on S: the one cross-DC cable carries 64·S per phase "
    "(1.9x); the printed slope 4.29e-7 needs about 34·S, one 32-server rack's 2·(15/16)·32·S·beta_x = 3.84e-7, as if "
    "every rack had its own cross-DC link, while CDC384's CPS (within 8 %) and Ring need the one shared cable.")

# ours / paper as measured when the explanations above were written
EXPECTED = {
    ("SYM384", "CPS"): (0.489, 0.478, 0.475), ("SYM512", "CPS"): (0.409, 0.401, 0.399),
    ("ASY384", "CPS"): (0.542, 0.531, 0.528),
    ("SYM384", "GenTree"): (0.817, None, None),
    ("CDC384", "GenTree*"): (1.873, 1.900, 1.908),
}


def _time(tree: str, algorithm: str, size: float):
    return lambda: _table7(tree, size)[algorithm]


def _known(net: str, algorithm: str) -> str:
    if algorithm == "CPS" and net in ("SYM384", "SYM512", "ASY384"):
        return CPS_KNOWN
    if net == "CDC384" and algorithm.startswith("GenTree"):
        return CDC_GT_KNOWN
    return GT_SMALL_KNOWN


def _specs() -> list[Spec]:
    out: list[Spec] = []
    for n, label, code in TABLE3:
        out.append(Spec(PAPER, "Table 3", f"CPU testbed {n} servers plan {label} (code)", code, _testbed(n)))
    for net, where, tree, switch, plans in TABLE6:
        p = _participants(tree, switch)
        for (size, text), label in zip(SIZES, plans):
            code = plan_code(label, p)
            row = f"{net} {where} {text} plan {label} (code)"
            compute = _choice(tree, switch, size)
            if tree in ("sym512", "asy384", "cdc384") and switch in ("m0", "dc0.m0") and size == 1e7:
                out.append(Spec(PAPER, "Table 6", row, code, compute, known=TABLE6_KNOWN,
                                expect_ratio=804 / code))
            else:
                out.append(Spec(PAPER, "Table 6", row, code, compute))
    for net, (tree, rows) in TABLE7.items():
        for algorithm, values in rows.items():
            for i, ((size, text), value) in enumerate(zip(SIZES, values)):
                expected = EXPECTED.get((net, algorithm), (None, None, None))[i]
                row = f"{net} {algorithm} {text}"
                if expected is None:
                    out.append(Spec(PAPER, "Table 7", row, value, _time(tree, algorithm, size),
                                    tolerance=TABLE7_TOLERANCE))
                else:
                    out.append(Spec(PAPER, "Table 7", row, value, _time(tree, algorithm, size), tolerance=0.02,
                                    known=_known(net, algorithm), expect_ratio=expected))
    return out


SPECS: list[Spec] = _specs()
