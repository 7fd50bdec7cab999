"""The verifier: it accepts correct schedules and rejects each kind of fault with a message naming it."""
import importlib
from fractions import Fraction

import pytest
from hypothesis import given, settings
from hypothesis import strategies as st

from solvers import Collective, Schedule, Transfer, verify
from solvers.baselines.hamiltonian import ring_allgather
from solvers.core.schedule import ONE, ZERO
from solvers.baselines.sptree import sptree_allgather
from solvers.core.transform import build_collective, reverse
from topologies import load

from .helpers import star, strongly_connected_topologies

H = Fraction(1, 2)


def _ring_ag(n=4):
    topo = load(f"ring({n})")
    return topo, ring_allgather(topo)


def test_ring_allgather_verifies():
    topo, s = _ring_ag()
    assert verify(topo, s).ok


def test_rejects_send_of_data_not_yet_received():
    topo, s = _ring_ag()
    # in step 1 node 0 forwards node 3's shard, which only reaches it in step 1
    s.transfers.append(Transfer(3, ZERO, ONE, 0, 1))
    v = verify(topo, s)
    assert not v.ok and "does not hold [0, 1) yet (data not yet received)" in v.errors[0]
    assert "step 1: 0 -> 1" in v.errors[0]


def test_rejects_a_chunk_never_delivered():
    topo, s = _ring_ag()
    dropped = next(t for t in s.transfers if t.step == 3)
    s.transfers.remove(dropped)
    v = verify(topo, s)
    assert not v.ok and v.errors[0].startswith("chunk never delivered")
    assert f"shard {dropped.shard} [0, 1)" in v.errors[0]


def test_rejects_a_chunk_delivered_twice_into_a_reduction():
    topo = load("ring(4)")
    rs = build_collective(topo, Collective.REDUCE_SCATTER, ring_allgather)
    assert verify(topo, rs).ok
    rs.transfers.append(rs.transfers[0])
    v = verify(topo, rs)
    assert not v.ok and "delivered twice into the reduction" in v.errors[0]


def test_rejects_a_switch_that_copies():
    topo = star(3)
    g0_sw, sw_g1, sw_g2 = topo.out_links[0][0], topo.out_links[3][0], topo.out_links[3][1]
    s = Schedule(Collective.ALLGATHER, [Transfer(0, ZERO, ONE, g0_sw, 1), Transfer(0, ZERO, ONE, sw_g1, 2),
                                        Transfer(0, ZERO, ONE, sw_g2, 2)])
    v = verify(topo, s)
    assert not v.ok and "switches do not copy" in v.errors[0] and "switch sw" in v.errors[0]


def test_switch_forwards_each_copy_it_received():
    topo = star(3)
    g0_sw, sw_g1, sw_g2 = topo.out_links[0][0], topo.out_links[3][0], topo.out_links[3][1]
    s = Schedule(Collective.ALLGATHER, [Transfer(0, ZERO, ONE, g0_sw, 1), Transfer(0, ZERO, ONE, g0_sw, 1),
                                        Transfer(0, ZERO, H, sw_g1, 2), Transfer(0, H, ONE, sw_g1, 3),
                                        Transfer(0, ZERO, ONE, sw_g2, 2)])
    v = verify(topo, s)
    assert v.ok or all("chunk never delivered" in e for e in v.errors)   # only other shards are missing
    assert not any("switch" in e for e in v.errors)


def test_switch_cannot_forward_in_the_step_it_receives():
    topo = star(2)
    s = Schedule(Collective.ALLGATHER, [Transfer(0, ZERO, ONE, topo.out_links[0][0], 1),
                                        Transfer(0, ZERO, ONE, topo.out_links[2][1], 1)])
    v = verify(topo, s)
    assert not v.ok and "never received or was already forwarded" in v.errors[0]


def test_rejects_copy_of_a_partial_sum():
    topo = load("ring(3)")
    s = Schedule(Collective.ALLREDUCE, [Transfer(1, ZERO, ONE, 0, 1, reduce=False)])
    v = verify(topo, s)
    assert not v.ok and "not yet fully reduced" in v.errors[0]


@pytest.mark.parametrize("bad, words", [
    (Transfer(0, ZERO, ONE, 99, 1), "link 99 does not exist"),
    (Transfer(0, ZERO, ONE, 0, 0), "positive integer"),
    (Transfer(0, H, H, 0, 1), "non-empty part"),
    (Transfer(0, ZERO, Fraction(3, 2), 0, 1), "non-empty part"),
    (Transfer(7, ZERO, ONE, 0, 1), "not a compute node"),
    (Transfer(0, ZERO, ONE, 0, 1, reduce=True), "does not reduce"),
])
def test_rejects_malformed_transfers(bad, words):
    topo = load("ring(3)")
    v = verify(topo, Schedule(Collective.ALLGATHER, [bad]))
    assert not v.ok and words in v.errors[0]


def test_partial_delivery_names_the_missing_interval():
    topo, s = _ring_ag(3)
    t = s.transfers[0]
    s.transfers[0] = t._replace(hi=H)
    v = verify(topo, s)
    assert not v.ok and any("[1/2, 1)" in e for e in v.errors)


def test_reduce_scatter_missing_contributions_are_named():
    topo = load("ring(3)")
    rs = build_collective(topo, Collective.REDUCE_SCATTER, ring_allgather)
    rs.transfers = [t for t in rs.transfers if t.step == 1]
    v = verify(topo, rs)
    assert not v.ok and "missing the contributions of" in v.errors[0]


@settings(max_examples=60, deadline=None)
@given(strongly_connected_topologies())
def test_sptree_collectives_verify_on_random_topologies(topo):
    for collective in Collective:
        s = build_collective(topo, collective, sptree_allgather)
        v = verify(topo, s)
        assert v.ok, v.errors


@settings(max_examples=40, deadline=None)
@given(strongly_connected_topologies(switches=False))
def test_reverse_of_reverse_is_the_original(topo):
    ag = sptree_allgather(topo)
    back = reverse(reverse(ag))
    assert back.collective is Collective.ALLGATHER and sorted(back.transfers) == sorted(ag.transfers)
    rs = reverse(sptree_allgather(topo.transpose()))
    assert verify(topo, rs).ok


# --- the vectorized path: it may only confirm what the simulator confirms, and must confirm correct schedules
v = importlib.import_module("solvers.core.verify")   # the module (the package exports the function under its name)


def _fast_and_slow(topo, schedule, monkeypatch):
    monkeypatch.setattr(v, "FAST_MIN_TRANSFERS", 0)
    fast = v._fast_verify(topo, schedule)
    slow = v._Simulator(topo, schedule).run(schedule)
    return fast, slow


FAST_CASES = ["power(bipartite(2),2)", "line(kautz(2,1),2)", "degree(dcirculant(2),2)", "circulant(8,[2,3])",
              "bidir(kautz(2,1))", "debruijn(2,3)"]


@pytest.mark.parametrize("expr", FAST_CASES)
@pytest.mark.parametrize("collective", list(Collective))
def test_fast_path_confirms_correct_schedules(expr, collective, monkeypatch):
    from solvers.directconnect.bfb import bfb_allgather

    topo = load(expr)
    schedule = build_collective(topo, collective, bfb_allgather)
    fast, slow = _fast_and_slow(topo, schedule, monkeypatch)
    assert slow.ok and fast is not None and fast.ok
    assert fast.redundant_receipts == slow.redundant_receipts


@settings(max_examples=120, deadline=None)
@given(st.sampled_from(FAST_CASES), st.sampled_from(list(Collective)), st.integers(0, 10 ** 6),
       st.sampled_from(["drop", "earlier", "later", "duplicate", "shrink", "reroute"]))
def test_fast_path_never_confirms_a_broken_schedule(expr, collective, seed, mutation):
    import random

    from solvers.directconnect.bfb import bfb_allgather

    topo = load(expr)
    schedule = build_collective(topo, collective, bfb_allgather)
    rng = random.Random(seed)
    ts = list(schedule.transfers)
    i = rng.randrange(len(ts))
    t = ts[i]
    if mutation == "drop":
        del ts[i]
    elif mutation == "earlier":
        ts[i] = t._replace(step=max(1, t.step - 1))
    elif mutation == "later":
        ts[i] = t._replace(step=t.step + 1)
    elif mutation == "duplicate":
        ts.append(t._replace(link=rng.randrange(len(topo.links))))
    elif mutation == "shrink":
        ts[i] = t._replace(hi=t.lo + (t.hi - t.lo) / 2)
    else:
        ts[i] = t._replace(link=rng.randrange(len(topo.links)))
    broken = Schedule(collective, ts)
    old = v.FAST_MIN_TRANSFERS
    v.FAST_MIN_TRANSFERS = 0
    try:
        fast = v._fast_verify(topo, broken)
    finally:
        v.FAST_MIN_TRANSFERS = old
    slow = v._Simulator(topo, broken).run(broken)
    if fast is not None:
        assert fast.ok and slow.ok   # the fast path only ever says "correct"
