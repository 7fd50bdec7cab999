"""The vectorized proof on fabrics with switches (solvers/core/switched_proof.py): it confirms the schedules the
simulator confirms, and never confirms one the simulator rejects."""
from __future__ import annotations

import importlib
import random

import pytest
from hypothesis import given, settings, strategies as st

from solvers.core.schedule import Collective, Schedule
from solvers.forestcoll import collective_schedule
from topologies import load

v = importlib.import_module("solvers.core.verify")

SWITCHED = ["dgx_a100(boxes=2)", "cluster(2,4,100,25)", "cluster(3,2,50,25)", "mi250(clusters=2)"]
_SCHEDULES: dict = {}


def _schedule(expr: str, collective: Collective):
    key = (expr, collective)
    if key not in _SCHEDULES:
        topo = load(expr)
        _SCHEDULES[key] = (topo, collective_schedule(topo, collective))
    return _SCHEDULES[key]


def _fast(topo, schedule, monkeypatch=None):
    old = v.FAST_MIN_TRANSFERS
    v.FAST_MIN_TRANSFERS = 0
    try:
        return v._fast_verify(topo, schedule)
    finally:
        v.FAST_MIN_TRANSFERS = old


@pytest.mark.parametrize("expr", SWITCHED)
@pytest.mark.parametrize("collective", list(Collective))
def test_confirms_forestcoll_on_switched_fabrics(expr, collective):
    topo, schedule = _schedule(expr, collective)
    assert topo.switch_nodes
    fast = _fast(topo, schedule)
    slow = v._Simulator(topo, schedule).run(schedule)
    assert slow.ok and fast is not None and fast.ok
    assert fast.redundant_receipts == slow.redundant_receipts == 0


def _switch_rows(topo, ts):
    return [i for i, t in enumerate(ts) if not topo.is_compute(topo.links[t.link].src)]


@settings(max_examples=150, deadline=None)
@given(st.sampled_from(SWITCHED[:3]), st.sampled_from(list(Collective)), st.integers(0, 10 ** 6),
       st.sampled_from(["drop", "earlier", "later", "duplicate", "shrink", "reroute", "switch earlier",
                        "switch copies", "switch shifts"]))
def test_never_confirms_a_broken_schedule(expr, collective, seed, mutation):
    topo, schedule = _schedule(expr, collective)
    rng = random.Random(seed)
    ts = list(schedule.transfers)
    at_switch = _switch_rows(topo, ts)
    i = rng.choice(at_switch) if mutation.startswith("switch") else rng.randrange(len(ts))
    t = ts[i]
    if mutation == "drop":
        del ts[i]
    elif mutation in ("earlier", "switch earlier"):
        ts[i] = t._replace(step=max(1, t.step - 1))
    elif mutation == "later":
        ts[i] = t._replace(step=t.step + 1)
    elif mutation == "duplicate":
        ts.append(t._replace(link=rng.randrange(len(topo.links))))
    elif mutation == "switch copies":          # the switch sends the same piece again, over another of its links
        ts.append(t._replace(link=rng.choice(topo.out_links[topo.links[t.link].src])))
    elif mutation == "switch shifts":          # the switch sends a piece it never received whole
        width = t.hi - t.lo
        ts[i] = t._replace(lo=t.lo + width / 2, hi=min(t.hi + width / 2, t.hi.__class__(1)))
    elif mutation == "shrink":
        ts[i] = t._replace(hi=t.lo + (t.hi - t.lo) / 2)
    else:
        ts[i] = t._replace(link=rng.randrange(len(topo.links)))
    broken = Schedule(collective, ts)
    fast = _fast(topo, broken)
    slow = v._Simulator(topo, broken).run(broken)
    if fast is not None:
        assert fast.ok and slow.ok        # the proof only ever says "correct"


def test_a_switch_forwarding_in_the_step_it_receives_is_not_confirmed():
    topo, schedule = _schedule("cluster(2,4,100,25)", Collective.ALLGATHER)
    ts = list(schedule.transfers)
    i = next(i for i in _switch_rows(topo, ts) if ts[i].step > 1)
    ts[i] = ts[i]._replace(step=ts[i].step - 1)        # ForestColl forwards one step after the receipt
    broken = Schedule(Collective.ALLGATHER, ts)
    assert _fast(topo, broken) is None
    assert not v._Simulator(topo, broken).run(broken).ok
