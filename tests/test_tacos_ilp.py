"""TACOS-ILP's options (issue 56, TACOS part): the discretization factor, time clustering and early termination
(TACOS sections IV-C, V-B, V-C), for every collective the greedy serves."""
import math

import pytest

from solvers import synthesize
from solvers.core.errors import NotApplicable
from topologies import load

ROOTS = {"broadcast": 0, "reduce": 5, "gather": 0, "scatter": 15}


@pytest.mark.parametrize("coll", ["allgather", "reduce_scatter", "broadcast", "reduce", "gather", "scatter"])
def test_time_clustering_reaches_the_optimum_on_a_small_mesh(coll):
    """Windows of 4 steps, each from what the last delivered: every collective verifies, and on the 4x4 mesh the
    windows end where the whole ILP does (8 steps for the allgather-like ones, the root's eccentricity for the
    broadcast and reduce)."""
    topo = load("mesh(4,4)")
    whole = synthesize(topo, "tacos_ilp", coll, root=ROOTS.get(coll), total_bytes=1 << 20)
    windows = synthesize(topo, "tacos_ilp", coll, root=ROOTS.get(coll), total_bytes=1 << 20, options={"window": 4})
    assert windows.verification.ok and windows.detail.steps == whole.detail.steps
    count = math.ceil(whole.detail.steps[0] / 4)
    assert windows.detail.status == f"time clustering: {count} window{'s' if count != 1 else ''} of 4 steps"


def test_early_termination_finishes_with_the_greedy():
    """A budget too short for the ILP: the last horizon tried delivers what it can, TACOS's greedy the rest; the
    schedule verifies and takes longer than the optimum, never less."""
    topo = load("mesh(4,4)")
    whole = synthesize(topo, "tacos_ilp", "allgather", total_bytes=1 << 20)
    cut = synthesize(topo, "tacos_ilp", "allgather", total_bytes=1 << 20, options={"early_s": 0.01})
    assert cut.verification.ok and cut.detail.status.startswith("early termination after 0.01 s")
    assert "TACOS's greedy the other" in cut.detail.status
    assert cut.detail.steps[0] >= whole.detail.steps[0]
    fits = synthesize(topo, "tacos_ilp", "broadcast", root=0, total_bytes=1 << 20, options={"early_s": 30})
    assert fits.detail.status.startswith("the ILP finished within 30 s")


def test_the_discretization_factor_counts_steps():
    """f = half the chunk time makes every link two steps: the same schedule in twice the steps."""
    topo = load("mesh(3,3)")
    auto = synthesize(topo, "tacos_ilp", "allgather", total_bytes=9e6)
    half = synthesize(topo, "tacos_ilp", "allgather", total_bytes=9e6,
                      options={"quantum_us": auto.detail.quantum_us / 2})
    assert half.verification.ok and half.detail.steps == [2 * auto.detail.steps[0]]
    assert half.detail.quantum_us == pytest.approx(auto.detail.quantum_us / 2)


def test_windows_and_early_termination_exclude_each_other():
    with pytest.raises(NotApplicable, match="not both"):
        synthesize(load("ring(4)"), "tacos_ilp", "allgather", options={"window": 2, "early_s": 1})
