"""The hierarchical allreduce baseline (solvers.baselines.hierarchical): it verifies on multi-box fabrics, its
closed form is its cost, the runtime model meets its analytic pipelined time, and fabrics it does not fit say
why in one line."""
from fractions import Fraction

import pytest
from hypothesis import given, settings, strategies as st

from solvers.baselines import BASELINES
from solvers.baselines.hierarchical import pipelined_algbw_gbs
from solvers.core.cost import cost
from solvers.core.errors import NotApplicable
from solvers.core.schedule import Collective
from solvers.core.verify import verify
from solvers.registry import synthesizers
from solvers.runtime import Execution, bound_time_us, simulate
from topologies.clusters import cluster, dgx_a100, mi250
from topologies.families import ring
from topologies.model import COMPUTE, SWITCH, Link, Topology

HIER = BASELINES["hierarchical"]
AR = Collective.ALLREDUCE

FABRICS = {
    "dgx_a100(boxes=2)": lambda: dgx_a100(boxes=2), "dgx_a100(boxes=4)": lambda: dgx_a100(boxes=4),
    "cluster(2,4,10,1)": lambda: cluster(2, 4, 10, 1), "mi250(clusters=2)": lambda: mi250(clusters=2),
}


@pytest.mark.parametrize("key", list(FABRICS))
def test_verifies_and_costs_its_closed_form(key):
    topo = FABRICS[key]()
    schedule = HIER.build(topo, AR)
    assert schedule.algo == "hierarchical" and schedule.collective is AR
    result = verify(topo, schedule)
    assert result.ok, result.errors[:3]
    c = cost(topo, schedule)
    assert (c.steps, c.tb_factor) == HIER.closed_form(topo, AR)
    boxes, size = schedule.notes["boxes"], schedule.notes["box_size"]
    assert boxes * size == topo.n and boxes >= 2 and size >= 2
    rounds = 2 * (size - 1) + 2 * (boxes - 1)
    height = schedule.notes["ir_steps_per_round"]
    assert rounds * height - height < c.steps <= rounds * height


def test_dgx_a100_two_boxes_pinned():
    """Module docstring: 16 rounds of 4 IR steps less 2 idle; tb 14 * 2 * 2/300 * 325/16 + 2 * 4 * 1/25 * 325/16;
    pipelined, the NVSwitch ports bind: 1.75 M at 300 GB/s (the NIC links carry M/8 at 25 GB/s)."""
    topo = dgx_a100(boxes=2)
    assert HIER.closed_form(topo, AR) == (62, Fraction(247, 24))
    big_b, n = Fraction(325), 16
    assert Fraction(247, 24) == 14 * 2 * Fraction(2, 300) * big_b / n + 2 * 4 * Fraction(1, 25) * big_b / n
    g, b = 8, 2
    box_time = Fraction(2 * (g - 1), g) / 300                # per byte of M
    nic_time = Fraction(2 * (b - 1), b) / g / 25
    assert box_time > nic_time
    assert pipelined_algbw_gbs(topo) == 1 / box_time == Fraction(1200, 7)
    schedule = HIER.build(topo, AR)
    assert schedule.notes["rs_steps"] == 8 * 4 - 2          # phase 1 and the cross-box reduce-scatter
    assert schedule.notes["pipelined_busbw_gbs"] == pytest.approx(1200 / 7 * 30 / 16)


def test_four_dgx_boxes_are_bound_by_their_nics():
    g, b = 8, 4
    assert pipelined_algbw_gbs(dgx_a100(boxes=4)) == 1 / (Fraction(2 * (b - 1), b) / g / 25) == Fraction(400, 3)


def test_runtime_model_meets_the_analytic_time():
    topo = dgx_a100(boxes=2)
    schedule = HIER.build(topo, AR)
    total = 1e9
    run = simulate(topo, schedule, total)
    algbw = float(pipelined_algbw_gbs(topo))
    assert run.algbw_gbs == pytest.approx(algbw, rel=0.10) and run.algbw_gbs <= algbw * (1 + 1e-9)
    assert run.busbw_gbs == pytest.approx(schedule.notes["pipelined_busbw_gbs"], rel=0.10)
    assert run.time_us >= bound_time_us(topo, AR, total, Execution()) * (1 - 1e-9)


@st.composite
def boxed_fabrics(draw):
    """B boxes of G compute nodes, each box a fast switch or a fast directed ring (parallel links and extra
    chords allowed, in a random order), every node on one of one or two slow spine switches (joined to each
    other), some nodes also cabled straight to their peer of the same index in the next box."""
    count, size = draw(st.integers(2, 4)), draw(st.integers(2, 4))
    n = count * size
    names, kinds, links = [f"b{b}.g{j}" for b in range(count) for j in range(size)], [COMPUTE] * n, []

    def node(name):
        names.append(name)
        kinds.append(SWITCH)
        return len(names) - 1

    def cable(u, v, bw):
        links.extend([Link(u, v, Fraction(bw)), Link(v, u, Fraction(bw))])

    for b in range(count):
        members = list(range(b * size, (b + 1) * size))
        if draw(st.booleans()):
            sw = node(f"b{b}.sw")
            for u in members:
                cable(u, sw, draw(st.sampled_from([4, 5])))
            continue
        order = draw(st.permutations(members))
        for i in range(size):
            for _ in range(draw(st.integers(1, 2))):
                links.append(Link(order[i], order[(i + 1) % size], Fraction(draw(st.sampled_from([3, 4])))))
        for u, v in draw(st.lists(st.tuples(st.sampled_from(members), st.sampled_from(members)), max_size=size)):
            links.append(Link(u, v, Fraction(3)))
    spines = [node(f"spine{i}") for i in range(draw(st.integers(1, 2)))]
    if len(spines) == 2:
        cable(spines[0], spines[1], 1)
    for u in range(n):
        cable(u, spines[draw(st.integers(0, len(spines) - 1))], 1)
        if draw(st.booleans()):
            cable(u, (u + size) % n, 1)
    return Topology(tuple(names), tuple(kinds), tuple(links), name="boxed")


@settings(max_examples=20, deadline=None)
@given(topo=boxed_fabrics())
def test_random_multi_box_fabrics_verify(topo):
    """Shared spines, mixed routes (straight cables, one or two switches), parallel links: it always applies,
    verifies and costs its closed form."""
    schedule = HIER.build(topo, AR)
    result = verify(topo, schedule)
    assert result.ok, result.errors[:3]
    c = cost(topo, schedule)
    assert (c.steps, c.tb_factor) == HIER.closed_form(topo, AR)


@pytest.mark.parametrize("key", ["dgx_a100(boxes=4)", "cluster(2,4,10,1)"])
def test_runtime_model_never_beats_the_bound(key):
    topo = FABRICS[key]()
    run = simulate(topo, HIER.build(topo, AR), 1e9)
    assert run.time_us >= bound_time_us(topo, AR, 1e9, Execution()) * (1 - 1e-9)
    assert run.algbw_gbs <= float(pipelined_algbw_gbs(topo)) * (1 + 1e-9)


@pytest.mark.parametrize("topo, collective, message", [
    (lambda: dgx_a100(boxes=1), AR, r"^hierarchical needs two or more boxes joined by slower links; every link "
                                    r"of the fabric is declared at the same speed \(300 GB/s; the workload's prices "
                                    r"scale them all alike\), so the fabric is one box$"),
    (lambda: ring(8), AR, r"\(1 GB/s; the workload's prices scale them all alike\), so the fabric is one box$"),
    (lambda: dgx_a100(boxes=2), Collective.ALLGATHER, r"^hierarchical builds allreduce only .*, not allgather$"),
    (lambda: dgx_a100(boxes=2), Collective.REDUCE_SCATTER, r"not reduce_scatter$"),
])
def test_not_applicable_says_why(topo, collective, message):
    topo = topo()
    for call in (HIER.build, HIER.closed_form):
        with pytest.raises(NotApplicable, match=message) as info:
            call(topo, collective)
        assert "\n" not in str(info.value)


def test_unequal_boxes_are_refused():
    # a box of 2 GPUs and a box of 3 on fast box switches, every GPU on a slow spine
    names = ["a0", "a1", "b0", "b1", "b2", "swa", "swb", "spine"]
    kinds = [COMPUTE] * 5 + [SWITCH] * 3
    links = []
    for g, sw in [(0, 5), (1, 5), (2, 6), (3, 6), (4, 6)]:
        links += [Link(g, sw, Fraction(10)), Link(sw, g, Fraction(10)),
                  Link(g, 7, Fraction(1)), Link(7, g, Fraction(1))]
    topo = Topology(tuple(names), tuple(kinds), tuple(links), name="uneven")
    with pytest.raises(NotApplicable, match=r"boxes of equal size; the 2 boxes .* hold 2 \(a0\), 3 \(b0\) compute"):
        HIER.build(topo, AR)


def test_registered_as_a_synthesizer():
    assert "hierarchical" in synthesizers()
    assert synthesizers()["hierarchical"].summary == HIER.summary
