"""GenTree on one switch lowered into the IR: the paper's CPU-testbed plans (8 CPS, 12 6 x 2, 15 5 x 3) become
verified, exportable schedules, HCPS of every factorization verifies, and GenModel prices the lowered schedules as
its theory says (incast only above w_t, memory lowest for CPS)."""
import pytest

from solvers.core.errors import NotApplicable
from solvers.genmodel import PRESETS, genmodel_time_us, ordered_factorizations
from solvers.genmodel.lower import gentree_schedule, hcps_schedule
from solvers.export import check_xml, export
from solvers.core.schedule import Collective
from solvers.core.cost import cost
from solvers.synthesize import synthesize
from solvers.core.verify import verify
from tests.helpers import star
from topologies import load
from fractions import Fraction


@pytest.mark.parametrize("n,plan", [(8, "CPS"), (12, "6 × 2"), (15, "5 × 3")])
def test_cpu_testbed_plans_become_verified_schedules(n, plan):
    topo = star(n)
    for coll in Collective:
        s = gentree_schedule(topo, coll, 4e8)
        assert s.notes["plan"] == plan and verify(topo, s).ok
        phases = 2 if coll is Collective.ALLREDUCE else 1
        # through one switch every logical step is 2 IR steps and each phase moves 2(N-1)/N M/B (up and down)
        assert cost(topo, s).tb_factor == phases * Fraction(2 * (n - 1), n)
        assert s.steps == phases * 2 * len(s.notes["fanins"] if "fanins" in s.notes else [n])


@pytest.mark.parametrize("fanins", ordered_factorizations(12))
def test_every_hcps_factorization_verifies(fanins):
    topo = load("complete(12)")
    for coll in Collective:
        s = hcps_schedule(topo, tuple(fanins), coll)
        assert verify(topo, s).ok
        assert s.steps == len(fanins) * (2 if coll is Collective.ALLREDUCE else 1)


def test_genmodel_prices_the_lowered_plans_as_its_theory_says():
    topo, params = star(12), PRESETS["middle_sw+server"]           # w_t = 9
    priced = {}
    for label, schedule in (("cps", hcps_schedule(topo, (12,), Collective.ALLREDUCE)),
                            ("6x2", hcps_schedule(topo, (6, 2), Collective.ALLREDUCE)),
                            ("ring", synthesize(topo, "ring_uni", "allreduce").schedule)):
        priced[label] = genmodel_time_us(topo, schedule, 4e8, params)
    assert priced["cps"]["epsilon_us"] > 0                            # fan-in 11 (12 with the receiver) > 9
    assert priced["6x2"]["epsilon_us"] == 0 and priced["ring"]["epsilon_us"] == 0
    assert priced["cps"]["delta_us"] < priced["6x2"]["delta_us"] < priced["ring"]["delta_us"]   # Theorem 1


def test_synthesize_export_and_refusal():
    result = synthesize(star(12), "gentree", "allreduce", total_bytes=4e8)
    assert result.verification.ok and result.as_dict()["gentree_plan"] == "6 × 2"
    text, report = export(result.topology, result.schedule)
    assert report.ok and check_xml(text).ok
    small = synthesize(star(12), "gentree", "allreduce", total_bytes=4e3)
    assert small.as_dict()["gentree_plan"] == "CPS"                  # alpha dominates small messages
    with pytest.raises(NotApplicable, match="one switch or a complete graph"):
        synthesize(load("ring(8)"), "gentree", "allreduce")
