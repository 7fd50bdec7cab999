"""A MILP held as arrays and handed to HiGHS through highspy, without a Pyomo model in between.

The TE-CCL MILP (``milp``) is tens of thousands of 0/1 flow variables whose rows all have coefficients +-1; Pyomo
took about as long to build and hand it over (1-2 s on the DGX1 and NDv2 instances of bench/teccl.py) as HiGHS
took to solve the small ones. ``Linear`` collects the columns and rows in lists, ``solve_linear`` passes them to
HiGHS in one call, optionally with a known schedule as the incumbent to start from (a MIP start: HiGHS only has
to prove it, or improve on it), and returns the same ``Outcome`` as ``solve.solve`` does for Pyomo models.
"""
from __future__ import annotations

import time

import numpy as np

from .outcome import FEASIBLE, INFEASIBLE, OPTIMAL, TIMEOUT, Outcome

IPM_FROM = 50_000     # an LP with more columns goes to HiGHS's interior point solver (1.3-1.4x simplex here)


class Linear:
    """Columns (cost, bounds, integrality) and rows (lo <= Σ coef x <= hi) of one maximisation or minimisation
    problem; ``values`` holds the loaded solution after a solve, ``start`` an optional incumbent."""

    def __init__(self, maximize: bool = True):
        self.maximize = maximize
        self.cost: list[float] = []
        self.lower: list[float] = []
        self.upper: list[float] = []
        self.integer: list[bool] = []
        self.row_lo: list[float] = []
        self.row_hi: list[float] = []
        self._blocks: list[tuple[np.ndarray, np.ndarray, np.ndarray]] = []   # (row lengths, index, coef)
        self._lengths: list[int] = []          # rows added one by one, not yet in a block
        self._index: list[int] = []
        self._coef: list[float] = []
        self._csr = None
        self.values: np.ndarray | None = None
        self.start: np.ndarray | None = None

    def add_vars(self, n: int, lower: float = 0.0, upper: float = 1.0, integer: bool = False) -> range:
        """``n`` new columns with zero cost; their indices."""
        first = len(self.cost)
        self.cost.extend([0.0] * n)
        self.lower.extend([lower] * n)
        self.upper.extend([upper] * n)
        self.integer.extend([integer] * n)
        return range(first, first + n)

    def add_row(self, index, coef, lo: float, hi: float) -> None:
        """lo <= Σ coef[i] x[index[i]] <= hi (use ±inf for a one-sided row)."""
        self._index.extend(index)
        self._coef.extend(coef)
        self._lengths.append(len(index))
        self.row_lo.append(lo)
        self.row_hi.append(hi)
        self._csr = None

    def add_rows(self, row, col, coef, lo, hi) -> None:
        """Many rows at once from triplets: entry t puts ``coef[t]`` at column ``col[t]`` of new row ``row[t]``
        (rows numbered 0 .. len(lo) - 1 among the new ones, entries in any order; a repeated (row, column) pair
        adds up); row r is lo[r] <= ... <= hi[r]. The array-built models (the LP) use this."""
        self._flush()
        lo = np.asarray(lo, dtype=float)
        hi = np.broadcast_to(np.asarray(hi, dtype=float), lo.shape)
        row = np.asarray(row, dtype=np.int64)
        order = np.lexsort((np.asarray(col), row))
        row, col = row[order], np.asarray(col, dtype=np.int64)[order]
        coef = np.broadcast_to(np.asarray(coef, dtype=float), order.shape)[order] if np.ndim(coef) else \
            np.full(len(order), float(coef))
        if len(row):                       # merge repeated (row, column) entries
            new = np.ones(len(row), dtype=bool)
            new[1:] = (row[1:] != row[:-1]) | (col[1:] != col[:-1])
            group = np.cumsum(new) - 1
            coef = np.bincount(group, weights=coef)
            row, col = row[new], col[new]
        self._blocks.append((np.bincount(row, minlength=len(lo)).astype(np.int64), col, coef))
        self.row_lo.extend(lo.tolist())
        self.row_hi.extend(hi.tolist())
        self._csr = None

    def _flush(self) -> None:
        if self._lengths:
            self._blocks.append((np.asarray(self._lengths, dtype=np.int64), np.asarray(self._index, dtype=np.int64),
                                 np.asarray(self._coef, dtype=float)))
            self._lengths, self._index, self._coef = [], [], []

    def csr(self) -> tuple[np.ndarray, np.ndarray, np.ndarray]:
        """(starts, index, coef) of every row, in the order they were added (made once until a row is added)."""
        if self._csr is None:
            self._flush()
            lengths = np.concatenate([b[0] for b in self._blocks]) if self._blocks else np.zeros(0, np.int64)
            starts = np.zeros(len(lengths) + 1, dtype=np.int64)
            np.cumsum(lengths, out=starts[1:])
            index = np.concatenate([b[1] for b in self._blocks]) if self._blocks else np.zeros(0, np.int64)
            coef = np.concatenate([b[2] for b in self._blocks]) if self._blocks else np.zeros(0)
            self._blocks = [(lengths, index, coef)] if self._blocks else []
            self._csr = (starts, index, coef)
        return self._csr

    @property
    def starts(self) -> np.ndarray:
        return self.csr()[0]

    @property
    def index(self) -> np.ndarray:
        return self.csr()[1]

    @property
    def coef(self) -> np.ndarray:
        return self.csr()[2]

    def nvariables(self) -> int:
        return len(self.cost)

    def nconstraints(self) -> int:
        return len(self.row_lo)

    def value(self, j: int) -> float:
        return 0.0 if self.values is None else float(self.values[j])


def column_order(lm: Linear) -> np.ndarray:
    """The columns in the order the rows first mention them, then the rest (the order in which Pyomo handed the
    same model to HiGHS; HiGHS breaks ties by column order, and A*'s rounds depend on its ties)."""
    n = lm.nvariables()
    index = lm.index
    first = np.full(n, len(index) + np.arange(n), dtype=np.int64)
    np.minimum.at(first, index, np.arange(len(index)))
    return np.argsort(first, kind="stable")


def _highs(lm: Linear, order: np.ndarray, relax: bool = False):
    import highspy

    h = highspy.Highs()
    h.setOptionValue("output_flag", False)
    where = np.empty_like(order)
    where[order] = np.arange(len(order))
    lp = highspy.HighsLp()
    lp.num_col_ = lm.nvariables()
    lp.num_row_ = lm.nconstraints()
    lp.col_cost_ = np.asarray(lm.cost, dtype=float)[order]
    lp.col_lower_ = np.asarray(lm.lower, dtype=float)[order]
    lp.col_upper_ = np.asarray(lm.upper, dtype=float)[order]
    lp.row_lower_ = np.asarray(lm.row_lo, dtype=float)
    lp.row_upper_ = np.asarray(lm.row_hi, dtype=float)
    lp.a_matrix_.format_ = highspy.MatrixFormat.kRowwise
    starts, index, coef = lm.csr()
    lp.a_matrix_.start_ = starts.astype(np.int32)
    lp.a_matrix_.index_ = where[index].astype(np.int32)
    lp.a_matrix_.value_ = coef
    lp.a_matrix_.num_col_ = lp.num_col_
    lp.a_matrix_.num_row_ = lp.num_row_
    lp.sense_ = highspy.ObjSense.kMaximize if lm.maximize else highspy.ObjSense.kMinimize
    if any(lm.integer) and not relax:
        kinds = np.asarray(lm.integer)[order]
        lp.integrality_ = [highspy.HighsVarType.kInteger if x else highspy.HighsVarType.kContinuous for x in kinds]
    h.passModel(lp)
    return h, highspy


def solve_linear(lm: Linear, time_limit: float, gap: float = 1e-4, first_solution: bool = False,
                 options: dict | None = None):
    """Solve ``lm`` with HiGHS (``solve.solve``'s outcomes); ``lm.start``, when set, is passed as the incumbent."""
    start = time.perf_counter()
    order = column_order(lm)
    h, highspy = _highs(lm, order)
    h.setOptionValue("time_limit", float(time_limit))
    h.setOptionValue("mip_rel_gap", float(gap))
    if first_solution:
        h.setOptionValue("mip_max_improving_sols", 1)
    if not any(lm.integer) and lm.nvariables() > IPM_FROM:
        h.setOptionValue("solver", "ipm")        # interior point, then crossover to a vertex
    for key, value in (options or {}).items():
        h.setOptionValue(key, value)
    if lm.start is not None:
        sol = highspy.HighsSolution()
        sol.col_value = np.asarray(lm.start, dtype=float)[order]
        sol.value_valid = True
        h.setSolution(sol)
    h.run()
    seconds = time.perf_counter() - start
    status = h.getModelStatus()
    info = h.getInfo()
    found = info.primal_solution_status == 2
    if status in (highspy.HighsModelStatus.kInfeasible, highspy.HighsModelStatus.kUnboundedOrInfeasible):
        out = INFEASIBLE
        found = False
    elif found and status == highspy.HighsModelStatus.kOptimal:
        out = OPTIMAL
    elif found:
        out = FEASIBLE
    else:
        out = TIMEOUT
    if found:
        lm.values = np.empty(lm.nvariables())
        lm.values[order] = np.asarray(h.getSolution().col_value, dtype=float)
    else:
        lm.values = None
    objective = float(info.objective_function_value) if found else None
    bound = float(info.mip_dual_bound) if any(lm.integer) else objective
    if bound is not None and not np.isfinite(bound):
        bound = None
    return Outcome(out, objective, bound, seconds, lm.nvariables(), lm.nconstraints())


def relaxation_bound(lm: Linear, time_limit: float) -> float | None:
    """The optimum of ``lm``'s LP relaxation (integrality dropped; dual simplex, HiGHS's default for an LP): for a
    maximisation, no integer point does better, so an incumbent that meets it is optimal without a branch and
    bound. None when HiGHS does not reach an optimum within ``time_limit`` seconds.

    Why: on NDv2 x 2 allgather (10 epochs, 10,106 columns) HiGHS's MIP presolve took 0.98 s of a 1.2 s solve
    that only confirmed the greedy start (the entry cuts make the root LP tight), where this LP takes 0.13 s
    (bench/teccl.py --options measures the alternatives one by one)."""
    import highspy

    order = column_order(lm)
    h, _ = _highs(lm, order, relax=True)
    h.setOptionValue("time_limit", float(time_limit))
    h.run()
    if h.getModelStatus() != highspy.HighsModelStatus.kOptimal:
        return None
    return float(h.getInfo().objective_function_value)
