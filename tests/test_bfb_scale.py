"""BFB at scale (issue 24): compact distances, radix-coded source kinds, narrow schedule columns, the verifier's
receipt table and the cost's batched sums, each against the plain path it replaces."""
import importlib
from fractions import Fraction

import numpy as np
import pytest
from hypothesis import given, settings
from hypothesis import strategies as st

from solvers import Collective, Schedule
from solvers.core.cost import cost, link_loads
from solvers.core.schedule import Columns, narrowest, widened
from solvers.core.transform import build_collective, reverse
from solvers.core.verify import verify
from solvers.directconnect.bfb import bfb_allgather
from topologies import load
from topologies.model import Topology
from topologies.properties import distance_matrix, distances_into

from .helpers import strongly_connected_topologies

bfb_module = importlib.import_module("solvers.directconnect.bfb")
props = importlib.import_module("topologies.properties")
table_module = importlib.import_module("solvers.core.receipt_table")
verify_module = importlib.import_module("solvers.core.verify")
cost_module = importlib.import_module("solvers.core.cost")


@st.composite
def digraphs(draw):
    n = draw(st.integers(1, 16))
    edges = draw(st.lists(st.tuples(st.integers(0, n - 1), st.integers(0, n - 1)), max_size=4 * n))
    return Topology.from_edges(n, edges)


@settings(max_examples=80, deadline=None)
@given(digraphs(), st.sampled_from([0, 32]))
def test_distances_into_is_the_transposed_distance_matrix(topo, levels):
    """Both ways of computing it (bit-parallel levels, and the float matrix when the diameter bound is above
    LEVELS_BY_BITS, forced here by 0) give row u = d(., u), with the type's largest value where unreachable."""
    old = props.LEVELS_BY_BITS
    props.LEVELS_BY_BITS = levels
    try:
        into = distances_into(topo)
    finally:
        props.LEVELS_BY_BITS = old
    ref = distance_matrix(topo).T
    top = np.iinfo(into.dtype).max
    assert ((into == top) == ~np.isfinite(ref)).all()
    assert (into[np.isfinite(ref)] == ref[np.isfinite(ref)]).all()


def test_distances_into_takes_one_byte_per_pair_and_long_paths_take_the_float_route():
    assert distances_into(load("gkautz(4,256)")).dtype == np.uint8
    ring = load("ring(300)")                       # diameter 299: beyond one byte and beyond the level bound
    into = distances_into(ring)
    assert into.dtype == np.uint16 and int(into.max()) == 299 and into[0, 1] == 299 and into[1, 0] == 1


def test_narrowest_types():
    assert [narrowest(x).name for x in (0, 127, 128, 32767, 32768, 2 ** 31 - 1, 2 ** 31)] == \
        ["int8", "int8", "int16", "int16", "int32", "int32", "int64"]


@pytest.mark.parametrize("expr", ["gkautz(4,64)", "circulant(16,[3,4])", "torus(3,5)", "complete(9)",
                                  "line(circulant(16,[3,4]),2)"])
def test_radix_and_general_kind_codes_give_the_same_schedule(expr, monkeypatch):
    """Receivers with at most RADIX_MAX_DEGREE in-neighbours sort their sources by 16-bit codes; the general
    path (np.unique over wider codes) must give the same transfers in the same order."""
    topo = load(expr)
    radix = bfb_allgather(topo)
    monkeypatch.setattr(bfb_module, "RADIX_MAX_DEGREE", -1)
    general = bfb_allgather(topo)
    assert radix.transfers == general.transfers


def test_bfb_columns_are_narrow_and_read_as_int64():
    topo = load("gkautz(4,256)")
    schedule = bfb_allgather(topo)
    stored = schedule.stored_columns()
    assert {f: getattr(stored, f).dtype.name for f in ("step", "link", "shard", "lo", "hi")} == \
        {"step": "int8", "link": "int16", "shard": "int16", "lo": "int8", "hi": "int8"}
    from solvers.core.schedule import columns

    wide = columns(schedule)
    assert all(getattr(wide, f).dtype == np.int64 for f in ("step", "link", "shard", "lo", "hi"))
    assert columns(schedule, compact=True) is stored


@pytest.mark.parametrize("expr", ["gkautz(4,64)", "circulant(16,[3,4])", "torus(4,4)"])
@pytest.mark.parametrize("collective", list(Collective))
def test_narrow_and_wide_columns_cost_and_verify_alike(expr, collective):
    """The same transfers stored narrow (as BFB stores them) and as int64: equal verdicts, loads and costs."""
    topo = load(expr)
    narrow = build_collective(topo, collective, bfb_allgather)
    cols = narrow.stored_columns()
    assert cols is not None
    wide = Schedule(collective, algo="bfb", notes=dict(narrow.notes), cols=widened(cols))
    assert verify(topo, narrow).ok and verify(topo, wide).ok
    assert link_loads(narrow) == link_loads(wide)
    assert cost(topo, narrow) == cost(topo, wide)
    if collective is Collective.ALLGATHER:
        assert reverse(narrow).transfers == reverse(wide).transfers


def _with_only(strategy, monkeypatch):
    """The fast verifier with its older checks made to fail and one of the two lean checks forced (the other
    made to fail, batches made small so that several are read): whatever it confirms, ``strategy`` proved."""
    monkeypatch.setattr(verify_module, "FAST_MIN_TRANSFERS", 0)
    monkeypatch.setattr(verify_module, "_fast_partition_phase", lambda *a: False)
    monkeypatch.setattr(verify_module, "_fast_copy_phase", lambda *a: (False, 0))
    monkeypatch.setattr(table_module, "BATCH", 7)
    if strategy == "table":
        monkeypatch.setattr(table_module, "TABLE_MAX_CELLS", 10 ** 6)
        monkeypatch.setattr(table_module, "_shard_batches_prove", lambda *a: False)
    else:
        monkeypatch.setattr(table_module, "TABLE_MAX_BYTES", 0)
        monkeypatch.setattr(table_module, "_table_proves", lambda *a: False)


CASES = ["gkautz(4,64)", "circulant(8,[2,3])", "torus(3,4)", "line(kautz(2,1),2)", "bidir(kautz(2,1))"]


@pytest.mark.parametrize("strategy", ["table", "shards"])
@pytest.mark.parametrize("expr", CASES)
@pytest.mark.parametrize("collective", list(Collective))
def test_lean_checks_confirm_correct_bfb_collectives(strategy, expr, collective, monkeypatch):
    _with_only(strategy, monkeypatch)
    topo = load(expr)
    schedule = build_collective(topo, collective, bfb_allgather)
    fast = verify_module._fast_verify(topo, schedule)
    assert fast is not None and fast.ok and fast.redundant_receipts == 0


@pytest.mark.parametrize("expr, cells, strategy", [("gkautz(4,64)", 1, "table"), ("torus(6,6)", 4, "table"),
                                                    ("torus(8,8)", 7, "shards")])
def test_the_table_is_taken_for_few_cells_and_shard_batches_otherwise(expr, cells, strategy, monkeypatch):
    topo = load(expr)
    cols = bfb_allgather(topo).stored_columns()
    assert len(table_module._Phase(topo, cols, None, None).scan()[0]) - 1 == cells
    taken = []
    monkeypatch.setattr(table_module, "_table_proves", lambda *a: taken.append("table") or True)
    monkeypatch.setattr(table_module, "_shard_batches_prove", lambda *a: taken.append("shards") or True)
    assert table_module.receipt_table_proves(topo, cols) and taken == [strategy]


@settings(max_examples=200, deadline=None)
@given(st.sampled_from(CASES), st.sampled_from(list(Collective)), st.integers(0, 10 ** 6),
       st.sampled_from(["drop", "earlier", "later", "duplicate", "shrink", "reroute", "own", "split"]),
       st.sampled_from(["table", "shards"]))
def test_lean_checks_never_confirm_a_broken_schedule(expr, collective, seed, mutation, strategy):
    """One transfer broken in one of eight ways, the columns kept narrow: either lean check may prove only what
    the simulator accepts."""
    with pytest.MonkeyPatch.context() as monkeypatch:
        _with_only(strategy, monkeypatch)
        _broken_case(expr, collective, seed, mutation)


def _broken_case(expr, collective, seed, mutation):
    import random

    topo = load(expr)
    schedule = build_collective(topo, collective, bfb_allgather)
    c = schedule.stored_columns()
    rng = random.Random(seed)
    cols = {f: getattr(c, f).copy() for f in ("step", "link", "shard", "lo", "hi", "reduce")}
    i = rng.randrange(len(cols["step"]))
    if mutation == "drop":
        cols = {f: np.delete(a, i) for f, a in cols.items()}
    elif mutation == "earlier":
        cols["step"][i] = max(1, int(cols["step"][i]) - 1)
    elif mutation == "later":
        cols["step"][i] += 1
    elif mutation == "duplicate":
        cols = {f: np.append(a, a[i]) for f, a in cols.items()}
        cols["link"][-1] = rng.randrange(len(topo.links))
    elif mutation == "shrink":
        cols = {f: a.astype(np.int64) if f in ("lo", "hi") else a for f, a in cols.items()}
        cols["lo"], cols["hi"] = cols["lo"] * 2, cols["hi"] * 2
        cols["hi"][i] -= 1
    elif mutation == "own":
        cols["shard"][i] = topo.links[int(cols["link"][i])].dst
    elif mutation == "split":                      # a piece moved to another shard of the same receiver
        cols["shard"][i] = (int(cols["shard"][i]) + 1) % topo.n
    else:
        cols["link"][i] = rng.randrange(len(topo.links))
    one = c.one * (2 if mutation == "shrink" else 1)
    broken = Schedule(collective, cols=Columns(cols["step"], cols["link"], cols["shard"], cols["lo"], cols["hi"],
                                               cols["reduce"], one))
    for select, last in _phases(broken):
        proven = table_module.receipt_table_proves(topo if last is None else topo.transpose(),
                                                   broken.stored_columns(), select, last)
        if proven:
            assert _phase_is_correct(topo, broken, select, last)
    fast = verify_module._fast_verify(topo, broken)
    if fast is not None:
        assert fast.ok and verify_module._Simulator(topo, broken).run(broken).ok


def _phases(schedule):
    """(select, last) for each phase the verifier gives the lean checks: copies, and reductions read backwards."""
    cols = schedule.stored_columns()
    red = cols.reduce.astype(bool)
    out = []
    if (~red).any():
        out.append((False if red.any() else None, None))
    if red.any():
        out.append((True if (~red).any() else None, int(cols.step[red].max())))
    return out


def _phase_is_correct(topo, schedule, select, last):
    """The simulator's verdict on one phase alone, as the allgather the table checks."""
    from solvers import Transfer

    cols = schedule.stored_columns()
    keep = np.ones(len(cols.step), dtype=bool) if select is None else cols.reduce == select
    graph = topo if last is None else topo.transpose()
    rows = np.flatnonzero(keep)
    ts = [Transfer(int(cols.shard[r]), Fraction(int(cols.lo[r]), cols.one), Fraction(int(cols.hi[r]), cols.one),
                   int(cols.link[r]), int(cols.step[r]) if last is None else last + 1 - int(cols.step[r]))
          for r in rows]
    phase = Schedule(Collective.ALLGATHER, ts)
    return verify_module._Simulator(graph, phase).run(phase).ok


@settings(max_examples=25, deadline=None)
@given(strongly_connected_topologies(max_nodes=10, switches=False))
def test_receipt_table_agrees_with_the_simulator_on_random_bfb_allgathers(topo):
    schedule = bfb_allgather(topo)
    cols = schedule.stored_columns()
    assert table_module.receipt_table_proves(topo, cols) is True
    assert verify_module._Simulator(topo, schedule).run(schedule).ok


def test_reverse_and_allreduce_keep_narrow_columns_and_widen_steps_past_int8():
    from solvers.core.transform import compose_allreduce

    topo = load("gkautz(4,64)")
    ag = bfb_allgather(topo)
    c = ag.stored_columns()
    late = Schedule(Collective.ALLGATHER, cols=Columns(c.step + np.int8(124), c.link, c.shard, c.lo, c.hi,
                                                       c.reduce, c.one))   # steps 125..127, the int8 ceiling
    assert late.stored_columns().step.dtype == np.int8 and late.steps == 127
    rs = reverse(late)
    assert rs.stored_columns().step.dtype == np.int16
    flipped = 128 - late.stored_columns().step.astype(np.int64)
    assert sorted(rs.stored_columns().step.tolist()) == sorted(flipped.tolist())
    ar = compose_allreduce(reverse(ag), late)          # the allgather phase shifted by 3 steps: up to 130
    cols = ar.stored_columns()
    assert cols.link.dtype == c.link.dtype and cols.shard.dtype == c.shard.dtype and cols.lo.dtype == c.lo.dtype
    assert int(cols.step.max()) == 130 and cols.step.dtype == np.int16
    expected = reverse(ag).transfers + [t._replace(step=t.step + 3) for t in late.transfers]
    assert ar.transfers == expected


def test_a_schedule_too_large_to_simulate_is_reported_not_verified(monkeypatch):
    """Past SIMULATE_MAX_TRANSFERS the verifier does not start the simulator: a schedule no vectorized proof
    confirms (here one whose proofs are switched off) is 'not verified' with the reason, and synthesize raises
    it."""
    from solvers import ScheduleError
    from solvers.synthesize import synthesize

    topo = load("dgx_a100(boxes=2)")
    schedule = synthesize(topo, "ring", "allgather").schedule
    assert verify(topo, schedule).ok
    monkeypatch.setattr(verify_module, "SIMULATE_MAX_TRANSFERS", schedule.count - 1)
    monkeypatch.setattr(verify_module, "_Simulator", None)      # would fail if it were started
    monkeypatch.setattr(verify_module, "_fast_verify", lambda topo, schedule: None)
    result = verify(topo, schedule)
    assert not result.ok and "more than the simulator takes" in result.errors[0]
    with pytest.raises(ScheduleError, match="more than the simulator takes"):
        synthesize(topo, "ring", "allgather")


# --- a bounds table: exact bounds beyond int64 kept as positions in a table of their values (Columns.bounds)

def _coded(topo, monkeypatch, collective=Collective.ALLGATHER):
    """BFB with the table forced (as if every denominator passed MAX_SCALED), and the same built plainly."""
    plain = build_collective(topo, collective, bfb_allgather)
    with monkeypatch.context() as m:
        m.setattr(bfb_module, "MAX_SCALED", 1)
        coded = build_collective(topo, collective, bfb_allgather)
    return coded, plain


@pytest.mark.parametrize("expr", ["circulant(16,[3,4])", "torus(4,4)", "torus(8,8)"])
@pytest.mark.parametrize("collective", list(Collective))
def test_a_bounds_table_gives_the_same_transfers_verdict_and_cost(expr, collective, monkeypatch):
    topo = load(expr)
    coded, plain = _coded(topo, monkeypatch, collective)
    table = coded.stored_columns().bounds
    assert table is not None and table[0] == 0 and table[-1] == coded.stored_columns().one
    from solvers.core.schedule import columns

    values = columns(coded)                                   # resolved: the table fits int64 here
    assert values.bounds is None and values.lo.dtype == np.int64
    assert verify(topo, coded).ok
    assert cost(topo, coded) == cost(topo, plain)
    assert link_loads(coded) == link_loads(plain)
    assert sorted(coded.transfers) == sorted(plain.transfers)


@pytest.mark.parametrize("strategy", ["table", "shards"])
@pytest.mark.parametrize("collective", list(Collective))
def test_the_lean_checks_read_a_bounds_table_as_ranks(strategy, collective, monkeypatch):
    topo = load("torus(4,4)")
    coded, _ = _coded(topo, monkeypatch, collective)
    _with_only(strategy, monkeypatch)
    fast = verify_module._fast_verify(topo, coded)
    assert fast is not None and fast.ok


@pytest.mark.parametrize("mutation", ["earlier", "shrink"])
def test_a_broken_schedule_with_a_bounds_table_is_not_confirmed(mutation, monkeypatch):
    topo = load("torus(4,4)")
    coded, _ = _coded(topo, monkeypatch)
    c = coded.stored_columns()
    step, hi = c.step.copy(), c.hi.copy()
    relayed = int(np.flatnonzero(step > 1)[0])
    if mutation == "earlier":
        step[relayed] -= 1                     # sent in the step its sender receives it
    else:
        spans = np.flatnonzero(hi.astype(np.int64) - c.lo.astype(np.int64) > 1)
        hi[spans[0]] -= 1                      # a piece that ends one table position early: a gap in the shard
    broken = Schedule(Collective.ALLGATHER, cols=Columns(step, c.link, c.shard, c.lo, hi, c.reduce, c.one, c.bounds))
    assert not verify(topo, broken).ok


def test_the_cost_sums_bounds_beyond_int64_exactly():
    """The same schedule over a denominator 2^70 times larger (a bounds table of 90-bit values): the same exact
    loads and tb_factor, summed LIMB bits at a time."""
    from solvers.core.schedule import rescale

    topo = load("torus(8,8)")                  # over 1000 transfers: the batched sums, not the Fraction loop
    plain = bfb_allgather(topo)
    c = plain.stored_columns()
    values = sorted({0, c.one} | set(c.lo.tolist()) | set(c.hi.tolist()))
    where = {v: i for i, v in enumerate(values)}
    coded = Columns(c.step, c.link, c.shard, np.array([where[v] for v in c.lo.tolist()]),
                    np.array([where[v] for v in c.hi.tolist()]), c.reduce, c.one, np.array(values, dtype=object))
    huge = Schedule(Collective.ALLGATHER, cols=rescale(coded, c.one * 2 ** 70))
    assert huge.stored_columns().bounds[-1].bit_length() > 70
    from solvers.core.schedule import columns

    assert columns(huge) is None                              # no int64 values: readers take the exact path
    sums, one = cost_module._load_table(huge)
    assert sums.dtype == object and one == c.one * 2 ** 70
    assert link_loads(huge) == link_loads(plain) and cost(topo, huge) == cost(topo, plain)
    assert verify(topo, huge).ok
