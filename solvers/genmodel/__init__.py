"""GenModel and GenTree (Xiong et al., "Revisiting the time cost model of AllReduce"; digest
notes/genmodel-gentree.md).

* ``params``: the six GenModel parameters, Table 5 presets, ``ModelOptions`` for the paper's ambiguities;
* ``plans``: Table 2 (and Table 1) costs of Reduce-Broadcast, CPS, Ring, RHD, HCPS on one switch, the ranking,
  optimality badges and the Theorem 1 / Eq. 2 bounds;
* ``fit``: parameters from measured CPS runs (CSV), non-negative least squares per candidate w_t;
* ``tree``: switch trees, the paper's presets, a textual spec, conversion to a ``Topology``;
* ``treecost``: GenModel on a tree (link tiers, incast at every port, latency per path);
* ``placement``: Algorithm 1 with a matching repair; ``gentree``: GenTree with the flat baselines;
* ``papersim``: the paper's Table 6 choices (Algorithm 2 read literally) and Table 7 times (its simulator as the
  printed numbers show: top level first, one alpha per node on the path);
* ``schedule_cost``: GenModel time of any schedule of the repo's IR.
"""
from .fit import FitError, FitResult, Measurement, fit, read_measurements, synthesize_measurements, to_csv
from .gentree import GenTreeResult, Planner, SwitchDecision, gentree
from .papersim import PaperSim, plan_code, table6
from .params import (CPU_TESTBED, FLOAT_BYTES, PRESETS, TABLE5, GenModelParams, ModelOptions, ParamsError, combine,
                     preset)
from .placement import SwitchPlacement, place
from .plans import (PlanCost, Ranking, badges, best_plan, candidate_plans, classic_cost, cps_cost, hcps_cost,
                    hcps_label, hierarchical_cost, memory_lower_bound, ordered_factorizations, plan_cost, ps_cost,
                    rhd_cost, ring_cost, traffic_lower_bound)
from .schedule_cost import genmodel_time_us
from .tree import (PRESET_TREES, Node, SwitchTree, TreeError, asy384, cdc, cdc384, parse_tree, single_switch, sym,
                   to_topology, tree)
from .treecost import TreeCost, TreeCoster

__all__ = [
    "FitError", "FitResult", "Measurement", "fit", "read_measurements", "synthesize_measurements", "to_csv",
    "GenTreeResult", "Planner", "SwitchDecision", "gentree", "PaperSim", "plan_code", "table6",
    "CPU_TESTBED", "FLOAT_BYTES", "PRESETS", "TABLE5", "GenModelParams", "ModelOptions", "ParamsError", "combine",
    "preset", "SwitchPlacement", "place",
    "PlanCost", "Ranking", "badges", "best_plan", "candidate_plans", "classic_cost", "cps_cost", "hcps_cost",
    "hcps_label", "hierarchical_cost", "memory_lower_bound", "ordered_factorizations", "plan_cost", "ps_cost",
    "rhd_cost", "ring_cost", "traffic_lower_bound", "genmodel_time_us",
    "PRESET_TREES", "Node", "SwitchTree", "TreeError", "asy384", "cdc", "cdc384", "parse_tree", "single_switch", "sym",
    "to_topology", "tree", "TreeCost", "TreeCoster",
]
