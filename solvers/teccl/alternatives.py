"""The TE-CCL results that do not come from the epoch search over the full MILP or LP: the greedy schedule alone
(``method="auto"`` past the MILP's size limit) and A*'s rounds (``method="astar"``, Appendix D), each pruned,
lowered and verified like a solver's.
"""
from __future__ import annotations

import time
from fractions import Fraction

from topologies.model import Topology

from ..core.errors import NotApplicable
from ..core.verify import check
from .lower import lower as lower_flows, prune
from .greedy import greedy_flows
from .instance import Demand, Timing
from .milp import Start, milp_size
from .orbits import orbit_search, symmetry_group
from .outcome import FEASIBLE
from .relaxation import relaxation_epoch_bound
from .result import Probe, TecclResult

PAPER_ROUND = 15                 # the released code's epochs per A* round, at least (digest 5.1)
PAPER_ROUND_BINARIES = 8_000     # ... taken while the first round has no more flow binaries (DGX2 x 4: 7,428
                                 # over the symmetry, 9 epochs in 16 s; NDv2 x 4 at m = 4: 16,115, a round > 300 s)


def greedy_only(topo: Topology, demand: Demand, t: Timing, lower_bound: int, epochs: int | None, start: float,
                bound_us: Fraction, multiplier: int, progress, auto_limit: int, max_binaries: int,
                left=None, gap: float = 1e-4, switch_copy: bool = False) -> TecclResult:
    """For a MILP too large to build (``method="auto"`` beyond ``auto_limit`` flow binaries): the greedy schedule
    in epochs (``greedy``), then, while ``left()`` seconds remain and the greedy is above the lower bound, the
    bound raised by the LP relaxation (``relaxation``, at multiplier 1) and the MILP restricted to the schedules the fabric's symmetries keep (``orbits``: one source per orbit, |G| times
    smaller) at fewer epochs than the greedy's. The better one is the result, pruned, lowered and verified like a
    solver's: method ``symmetric`` (status of its last solve) or ``greedy`` (status ``feasible``, not optimised);
    K minimal when it meets the lower bound."""
    if progress:
        progress("greedy schedule (the MILP is too large)", 0.1)
    horizon = max(epochs or 0, 2 * lower_bound + 8)
    greedy = greedy_flows(topo, demand, t, horizon)
    if greedy is None:
        n = milp_size(topo, demand, t, lower_bound)
        raise NotApplicable(f"the TE-CCL MILP at {lower_bound} epochs would have {n:,} flow variables (more than "
                            f"{max_binaries:,}) and the greedy found no schedule in {horizon} epochs; use fewer "
                            "chunks or a multiplier")
    flows, finish = greedy
    if epochs is not None and finish > epochs:
        raise NotApplicable(f"the greedy schedule needs {finish} epochs, more than the {epochs} asked for, and the "
                            f"MILP is too large to search (more than {max_binaries:,} flow binaries)")
    method, status, gap_out, probes, size = "greedy", FEASIBLE, None, [], len(flows)
    notes = [f"the MILP at {lower_bound} epochs has more than {auto_limit:,} flow binaries: the greedy "
             f"schedule in epochs, not optimised (method milp, with a multiplier, or astar, to search)"]
    found, cut = None, lower_bound
    if left is not None and finish > lower_bound and multiplier == 1:
        if progress:
            progress("LP relaxation bound on the epochs", 0.2)
        tighter = relaxation_epoch_bound(topo, demand, t, lower_bound, finish, left, switch_copy, limit=auto_limit)
        if tighter > lower_bound:
            notes.append(f"lower bound K >= {tighter} from the LP relaxation (no point at {tighter - 1} epochs; "
                         f"the cuts give {lower_bound}): no schedule of whole chunks in these epochs does better")
            lower_bound, bound_us = tighter, tighter * t.tau_us
    if left is not None and finish > lower_bound and epochs is None:
        if progress:
            progress(f"symmetric MILP below the greedy's {finish} epochs", 0.3)
        found = orbit_search(topo, demand, t, lower_bound, finish, left, gap, auto_limit, switch_copy)
    if found is not None:
        finish, flows, out, tried, order = found
        method, status, gap_out, size = "symmetric", out.status, out.gap, out.variables
        probes = [Probe(k, st, sec) for k, st, sec in tried]
        notes[0] = (f"the MILP at {cut} epochs has more than {auto_limit:,} flow binaries: the MILP over "
                 f"the schedules that {order} symmetries of the fabric keep (one source per orbit), "
                 f"K = {finish} the smallest such K from the lower bound {lower_bound} (the greedy needs "
                 f"{greedy[1]}); early delivery optimised within that class only")
    if progress:
        progress("extracting the schedule", 0.9)
    sched, finish = _lowered(topo, demand, t, flows, progress)
    if multiplier != 1:
        notes.append(f"epochs {multiplier} x the policy's epoch (multiplier {multiplier})")
    return TecclResult(topo, demand, t, method, finish, finish, status, gap_out, finish == lower_bound,
                       probes, time.perf_counter() - start, size, 0, sched, notes, lower_bound, multiplier,
                       bound_us)



def _lowered(topo: Topology, demand: Demand, t: Timing, flows, progress):
    """(schedule, finish epoch) of a method's flows: pruned of what no destination needs, lowered to transfers
    and verified (``check``)."""
    kept = prune(topo, demand, t.lag, flows)
    finish = max(f[3] + t.lag[f[2]] for f, _ in kept)
    sched = lower_flows(topo, demand, t.lag, kept, "teccl")
    sched.notes.update({"epoch_us": t.tau_us, "epochs": finish, "finish_epochs": finish})
    check(topo, sched)
    if progress:
        progress("done", 1.0)
    return sched, finish

def astar_result(topo: Topology, demand: Demand, t: Timing, round_epochs, switch_copy: bool, time_limit: float,
                 gap: float, progress) -> TecclResult:
    """A*'s rounds (``astar``), over the schedules the fabric's symmetries keep when it has some (``orbits``:
    each round |G| times smaller, the state invariant), pruned, lowered and verified. Rounds of ``round_epochs``;
    by default the released code's max(15, longest lag) (digest 5.1) when its first round has at most
    ``PAPER_ROUND_BINARIES`` flow binaries, else max(4, twice the longest lag)."""
    from .astar import astar_flows

    look = max(t.lag[i] for i, l in enumerate(topo.links) if l.src != l.dst)
    group = symmetry_group(topo, demand)
    if round_epochs is None:
        round_epochs = max(4, 2 * look)
        paper = max(PAPER_ROUND, look)
        model_demand = group.reduced(demand) if group else demand
        first = Start(wants=model_demand.wants, send_until=paper)
        if milp_size(topo, model_demand, t, paper + look, first) <= PAPER_ROUND_BINARIES:
            round_epochs = paper
    if isinstance(round_epochs, bool) or not isinstance(round_epochs, int) or round_epochs < 1:
        raise NotApplicable(f"epochs per A* round must be a positive integer, got {round_epochs!r}")
    start = time.perf_counter()
    flows, rounds, _, variables = astar_flows(topo, demand, t, round_epochs, switch_copy, time_limit, gap,
                                              progress, group)
    sched, finish = _lowered(topo, demand, t, flows, progress)
    probes = [Probe(r["round"], r["status"], r["seconds"]) for r in rounds]
    notes = [f"A*: {len(rounds)} rounds of {round_epochs} epochs (+{look} look-ahead); not optimal by design"]
    if group is not None:
        notes.append(f"A*'s rounds keep the fabric's {group.size} symmetries (orbits: one source per orbit)")
    return TecclResult(topo, demand, t, "astar", finish, finish, FEASIBLE, None, False, probes,
                       time.perf_counter() - start, variables, 0, sched, notes)
