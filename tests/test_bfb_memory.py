"""Issue 43, item 5: the allreduce's columns joined in place (``schedule.concat`` filling each result column part
by part, ``transform.join_allreduce`` letting go of each phase's column once copied), against the join by
``np.concatenate`` that it replaces."""
import importlib
import weakref
from dataclasses import replace
from math import gcd

import numpy as np
import pytest

from solvers import Collective
from solvers.core.schedule import Columns, _coded, bounds_table, concat, narrowest, rescale
from solvers.core.transform import build_collective, compose_allreduce, join_allreduce, reverse
from solvers.core.verify import verify
from solvers.directconnect.bfb import bfb_allgather
from topologies import load

bfb_module = importlib.import_module("solvers.directconnect.bfb")
schedule_module = importlib.import_module("solvers.core.schedule")
FIELDS = ("step", "link", "shard", "lo", "hi", "reduce")


def concatenated(parts):
    """The join as it was: every part rescaled, then np.concatenate column by column."""
    one = 1
    for c in parts:
        one = one * c.one // gcd(one, c.one)
    parts = [rescale(c, one) for c in parts]
    if all(c.bounds is None for c in parts):
        return Columns(*(np.concatenate([getattr(c, f) for c in parts]) for f in FIELDS), one)
    coded = [_coded(c) for c in parts]
    table, position = bounds_table({0, one}.union(*(values for values, _, _ in coded)))
    remaps = [np.array([position[v] for v in values], dtype=narrowest(len(table))) for values, _, _ in coded]
    return Columns(*(np.concatenate([getattr(c, f) for c in parts]) for f in ("step", "link", "shard")),
                   np.concatenate([remap[lo] for remap, (_, lo, _) in zip(remaps, coded)]),
                   np.concatenate([remap[hi] for remap, (_, _, hi) in zip(remaps, coded)]),
                   np.concatenate([c.reduce for c in parts]), one, table)


def assert_same(a: Columns, b: Columns):
    assert a.one == b.one
    for f in FIELDS:
        x, y = getattr(a, f), getattr(b, f)
        assert x.dtype == y.dtype, f
        assert np.array_equal(x, y), f
    assert (a.bounds is None) == (b.bounds is None)
    if a.bounds is not None:
        assert a.bounds.tolist() == b.bounds.tolist()


def phases(topo):
    return reverse(bfb_allgather(topo.transpose())), bfb_allgather(topo)


def old_allreduce(rs, ag):
    shift = rs.steps
    b = ag.stored_columns()
    b = replace(b, step=b.step.astype(narrowest(shift + int(b.step.max()))) + shift)
    return concatenated([rs.stored_columns(), b])


@pytest.mark.parametrize("expr", ["gkautz(2,16)", "torus(4,4)", "circulant(16,[3,4])"])
def test_the_join_in_place_gives_the_columns_of_the_concatenation(expr):
    topo = load(expr)
    rs, ag = phases(topo)
    expected = old_allreduce(rs, ag)
    assert_same(compose_allreduce(rs, ag).stored_columns(), expected)
    built = build_collective(topo, Collective.ALLREDUCE, bfb_allgather)
    assert_same(built.stored_columns(), expected)
    assert built.notes == {"rs_steps": rs.steps} and verify(topo, built).ok


@pytest.mark.parametrize("expr", ["torus(4,4)", "circulant(16,[3,4])"])
def test_the_join_in_place_with_a_bounds_table_gives_the_same_columns(expr, monkeypatch):
    monkeypatch.setattr(bfb_module, "MAX_SCALED", 1)      # every phase keeps its bounds as table positions
    topo = load(expr)
    rs, ag = phases(topo)
    assert rs.stored_columns().bounds is not None
    assert_same(build_collective(topo, Collective.ALLREDUCE, bfb_allgather).stored_columns(), old_allreduce(rs, ag))


def test_concat_rescales_parts_of_different_denominators_as_before():
    topo = load("gkautz(2,16)")
    ag = bfb_allgather(topo).stored_columns()
    halves = replace(ag, lo=ag.lo.astype(np.int64) * 3, hi=ag.hi.astype(np.int64) * 3, one=ag.one * 3)
    other = replace(ag, one=ag.one * 2, lo=ag.lo * 2, hi=ag.hi * 2)     # lcm 6 * one: both parts rescaled
    assert_same(concat([halves, other]), concatenated([halves, other]))
    assert_same(concat([ag, halves]), concatenated([ag, halves]))       # one part rescaled: its columns int64
    assert concat([ag, halves]).step.dtype == np.int64


def test_release_empties_the_list_and_leaves_the_callers_columns_whole():
    ag = bfb_allgather(load("torus(4,4)")).stored_columns()
    kept = {f: getattr(ag, f).copy() for f in FIELDS}
    parts = [ag, ag]
    joined = concat(parts, release=True)
    assert parts == []
    for f in FIELDS:                                        # the caller's Columns object is not touched
        assert np.array_equal(getattr(ag, f), kept[f])
        assert np.array_equal(getattr(joined, f), np.concatenate([kept[f], kept[f]]))


def test_a_released_part_is_let_go_before_the_next_column_is_allocated(monkeypatch):
    """join_allreduce holds the allreduce and one column of one phase: when a result column is allocated, every
    phase column of the fields already joined is gone (nothing else holds the phases)."""
    handed = list(phases(load("gkautz(2,16)")))
    total = sum(s.count for s in handed)
    alive = {(i, f): weakref.ref(getattr(s.stored_columns(), f)) for i, s in enumerate(handed) for f in FIELDS}
    seen = []
    empty = np.empty

    def watched(shape, dtype=float, *args, **kwargs):
        if shape == total:
            seen.append({key for key, ref in alive.items() if ref() is not None})
        return empty(shape, dtype, *args, **kwargs)

    monkeypatch.setattr(schedule_module.np, "empty", watched)
    ar = join_allreduce(handed)
    assert handed == [] and ar.count == total and len(seen) == len(FIELDS)
    for k, held in enumerate(seen):
        assert not {(i, f) for i, f in held if FIELDS.index(f) < k}
        assert (0, FIELDS[k]) in held                # the reduce-scatter's own column is still to be copied
    assert not any(ref() is not None for ref in alive.values())
