"""A lower bound on TE-CCL's epoch count K from the MILP's LP relaxation, tighter than the cuts of ``bounds``.

The schedule class. Every TE-CCL method here (the MILP, the greedy, the symmetric MILP of ``orbits``, A*) returns
a schedule of the section 3 model at the same epoch τ: whole chunks, one send of a chunk per link and epoch,
each link's window capacity (Appendix F), arrival lags L_e, store-and-forward GPUs, switches that keep nothing
(and, unless ``switch_copy``, do not copy). Such a schedule finishing by the start of epoch K is a 0/1 point of
``milp.build_milp`` at horizon K, which also holds the entry cuts (valid for every such point, ``add_entry_cuts``).
So if the LP relaxation at K (integrality dropped) has no point, no schedule of the class finishes in K epochs:
the bound is the first K whose relaxation is feasible.

With a symmetry group G of the fabric and the demand (``orbits``, acting freely on the sources), the relaxation
need not be built in full: its feasible set is convex and G-invariant, so if it has a point x it has the average
of g(x) over G, which is G-invariant, and a G-invariant point is exactly a point of the representatives' model with
the orbit capacities (``orbits.Orbits.capacity_sources``). The full relaxation is feasible iff the reduced one is.
On DGX2 x 4 allgather the cuts give K >= 8; the reduced relaxation at 8 epochs (3,191 columns) is infeasible in
0.2 s, as is the full one (102,112 columns, 31 s, measured once): K >= 9, which the symmetric MILP meets.

HiGHS decides infeasibility in floating point (primal feasibility tolerance 1e-7 on rows whose coefficients are
all +-1 and right-hand sides small integers); the tests check the bound against MILPs proven minimal on small
fabrics.
"""
from __future__ import annotations

from topologies.model import Topology

from .instance import Demand, Timing
from .linear import Linear, solve_linear
from .milp import build_milp, milp_size
from .orbits import Orbits, symmetry_group
from .outcome import INFEASIBLE

MAX_COLUMNS = 200_000        # flow columns of the relaxation built at most (reduced by the symmetry when there is one)


def relaxation_feasible(topo: Topology, demand: Demand, t: Timing, horizon: int, time_limit: float,
                        group: Orbits | None = None, switch_copy: bool = False,
                        limit: int = MAX_COLUMNS) -> bool | None:
    """Whether the LP relaxation of the MILP at ``horizon`` epochs has a point (module docstring): False is a
    proof that no schedule of the class finishes in ``horizon`` epochs; None when it was not decided (too
    large: more than ``limit`` flow columns, or out of time)."""
    model_demand, caps = (group.reduced(demand), group.capacity_sources()) if group else (demand, None)
    if milp_size(topo, model_demand, t, horizon) > limit:
        return None
    fm = build_milp(topo, model_demand, t, horizon, switch_copy, capacity=caps)
    lm: Linear = fm.model
    lm.integer = [False] * lm.nvariables()
    out = solve_linear(lm, time_limit)
    if out.status == INFEASIBLE:
        return False
    return True if out.has_solution else None


def relaxation_epoch_bound(topo: Topology, demand: Demand, t: Timing, start: int, stop: int, left,
                           switch_copy: bool = False, group: Orbits | None = None, limit: int = MAX_COLUMNS) -> int:
    """The smallest K in [start, stop] whose LP relaxation is not proven infeasible, ``start`` being a valid lower
    bound (the cut bound) and ``stop`` an epoch count a schedule is known to meet; K >= the result holds for every
    schedule of the class (module docstring). Tries K upwards while ``left()`` seconds remain; the symmetry group
    of ``orbits`` is found when not given and used when there is one; a relaxation over ``limit`` flow columns
    is not built (the bound stays where it is)."""
    if not demand.copy:
        return start
    group = group if group is not None else symmetry_group(topo, demand)
    k = start
    while k < stop:
        rest = left()
        if rest <= 0:
            break
        if relaxation_feasible(topo, demand, t, k, rest, group, switch_copy, limit) is not False:
            break
        k += 1
    return k
