"""The Finder names its pricing at every N (issue 59, finding 9).

Up to ``RUNTIME_MAX_NODES`` nodes the Finder prices designs by the runtime model, above by the step model alone,
so a 256-node answer and a 1024-node answer were not comparable and nothing said so. The recommendation now
gives the step model's figure at every N beside the runtime model's where it is built, and says which to
compare; the runtime model's own bound replaces the claim that the step-model bound holds in both models
(latency and bandwidth overlap in a pipeline, ``solvers.runtime.bounds``).
"""
from __future__ import annotations

import re

import pytest

from solvers.core.cost import alpha_beta_us
from solvers.core.errors import NotApplicable
from solvers.directconnect.finder import bound, find
from solvers.runtime import Execution, simulate
from solvers.runtime.bounds import design_bound_us
from solvers.synthesize import synthesize
from topologies import parse_topology

from .test_finder_page import open_1024, open_finder


def test_runtime_priced_answer_gives_the_step_model_too():
    at = open_finder()                                  # N = 64, d = 4: the runtime model prices the frontier
    assert not at.exception
    df, text = at.dataframe[0].value, at.success[0].value
    best = list(df[""]).index("★")
    front = find(64, 4)
    step = 2 * alpha_beta_us(front[best].steps, front[best].tb, 1e6, 10.0, 12.5)        # allreduce: RS + AG
    assert "priced by the runtime model" in text and f"step model {step:.1f} µs" in text
    assert "the figure every N has" in text
    ratio = float(re.search(r"\(([0-9.]+)× the runtime-model bound\)", text).group(1))
    assert ratio >= 1.0
    caption = next(c.value for c in at.caption if c.value.startswith("Bound: "))
    assert "a lower bound in both models" not in caption and "in the runtime model" in caption


def test_step_priced_answer_says_what_to_compare_it_with():
    at = open_1024()
    text = at.success[0].value
    assert "priced by the step model" in text
    assert "compare this with a smaller N's step model figure, not its runtime one" in text


@pytest.mark.parametrize("collective", ["allreduce", "allgather", "reduce_scatter"])
def test_design_bound_holds_for_every_verified_frontier_schedule(collective):
    """N = 16, d = 2: every frontier design's verified schedule, timed by the runtime model at three sizes, is at
    or above the design bound (the Moore diameter x alpha, or alpha + the bandwidth term)."""
    moore, _ = bound(16, 2)
    ex = Execution.alpha_beta(10.0, 12.5)
    checked = 0
    for c in find(16, 2):
        for algo in ("expansion", "bfb"):
            try:
                built = synthesize(parse_topology(c.expr), algo, collective)
            except NotApplicable:                   # no such schedule on this design
                continue
            for m in (1e3, 1e6, 1e9):
                took = simulate(built.topology, built.schedule, m, ex).time_us
                assert took >= design_bound_us(moore, 16, collective, [m], [1.0], 10.0, 12.5) * (1 - 1e-9)
            checked += 1
    assert checked >= 2


def test_design_bound_refuses_other_collectives():
    with pytest.raises(ValueError, match="no design bound for 'alltoall'"):
        design_bound_us(3, 8, "alltoall", [1e6], [1.0], 10.0, 12.5)
