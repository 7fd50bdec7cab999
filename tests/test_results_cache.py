"""The results cache (issue 24): finished solves kept on disk, keyed by topology, synthesizer, collective, options,
bytes and code version, tagged so that a file this installation did not write for that key is never decoded,
stored as data only (issue 39: every synthesizer's result comes back equal) and verified again on every hit, and
reused by the CLI and the app. Hostile folders and entries: tests/test_cache_hostile.py."""
from __future__ import annotations

import dataclasses
import importlib
import json
import os
import stat

import pytest
import streamlit as st

from solvers import results_cache
from solvers.results_cache import ResultsCache, cached_synthesize, solve_key
from solvers.synthesize import synthesize
from studio.cli import main
from topologies import parse_topology

from .test_teccl_page import open_schedule

synthesize_module = importlib.import_module("solvers.synthesize")     # the module (the package exports the function)


@pytest.fixture
def store(tmp_path, monkeypatch):
    monkeypatch.setenv(results_cache.ENV, str(tmp_path / "cache"))
    return ResultsCache.default()


def _no_solving(*args, **kwargs):
    raise AssertionError("solved although the cache holds this result")


def test_a_stored_result_comes_back_equal_and_is_not_solved_again(store, monkeypatch):
    topo = parse_topology("circulant(8,[1,3])")
    first, hit = cached_synthesize(topo, "bfb", "allreduce", cache=store)
    assert hit is None and first.verification.ok and len(store.entries()) == 1
    monkeypatch.setattr(synthesize_module, "synthesize", _no_solving)
    again, hit = cached_synthesize(parse_topology("circulant(8,[1,3])"), "bfb", "allreduce", cache=store)
    assert hit is not None and hit.age_s >= 0 and again.verification.ok
    assert again.schedule.count == first.schedule.count and again.cost == first.cost
    assert again.schedule.transfers == first.schedule.transfers


def test_the_key_names_everything_a_result_depends_on():
    ring8, ring8b = parse_topology("ring(8)"), parse_topology("ring(8)")
    base = solve_key(ring8, "ring", "allgather", {}, None)
    assert solve_key(ring8b, "ring", "allgather", {}, None) == base
    others = [solve_key(parse_topology("ring(9)"), "ring", "allgather", {}, None),
              solve_key(parse_topology("biring(8)"), "ring", "allgather", {}, None),
              solve_key(ring8.with_identity(expr="another(8)"), "ring", "allgather", {}, None),
              solve_key(ring8, "bfb", "allgather", {}, None),
              solve_key(ring8, "ring", "allreduce", {}, None),
              solve_key(ring8, "ring", "allgather", {"chunks": 2}, None),
              solve_key(ring8, "ring", "allgather", {}, 1e6)]
    assert len({base, *others}) == len(others) + 1


def test_a_file_it_did_not_write_is_deleted_unread(store, monkeypatch):
    topo = parse_topology("ring(6)")
    cached_synthesize(topo, "ring", "allgather", cache=store)
    (path,) = store.entries()
    good = path.read_bytes()
    data = bytearray(good)
    data[-5] ^= 0xFF                                    # one byte of the body changed
    path.write_bytes(bytes(data))
    decoded = []
    real = results_cache.decode_result
    monkeypatch.setattr(results_cache, "decode_result", lambda *a, **k: decoded.append(1) or real(*a, **k))
    assert store.get(path.stem) is None and not path.exists() and not decoded
    other = store._path("0" * 64)                       # a good entry moved to another key's name
    other.write_bytes(good)
    assert store.get(other.stem) is None and not other.exists() and not decoded
    forged = ResultsCache(store.root.parent / "elsewhere")  # another secret: its files fail here
    forged.put(path.stem, synthesize(topo, "ring", "allgather"))
    path.write_bytes(forged._path(path.stem).read_bytes())
    assert store.get(path.stem) is None and not path.exists() and not decoded
    path.write_bytes(good)
    assert store.get(path.stem, topo) is not None and decoded == [1]


@pytest.fixture(scope="module")
def small_result():
    return synthesize(parse_topology("ring(4)"), "ring", "allgather")


def test_least_recently_used_results_go_past_the_size_cap(store, monkeypatch, small_result):
    for i, when in enumerate((5, 6, 7)):
        assert store.put(f"k{i}", small_result)
        os.utime(store._path(f"k{i}"), (when, when))      # k0 least recently used
    size = store._path("k0").stat().st_size
    monkeypatch.setattr(results_cache, "MAX_TOTAL_BYTES", int(size * 2.5))
    store.put("k3", small_result)
    assert sorted(p.stem for p in store.entries()) == ["k2", "k3"]
    monkeypatch.setattr(results_cache, "MAX_ENTRY_BYTES", 100)
    assert store.put("big", small_result) is False and not store._path("big").exists()
    assert store.clear() == 2 and store.entries() == []


def test_the_secret_is_read_once_and_again_after_the_folder_is_wiped(store, monkeypatch, small_result):
    import shutil
    store.put("a", small_result)
    reads = []
    real = results_cache._read_capped
    monkeypatch.setattr(results_cache, "_read_capped",
                        lambda fd, limit: (reads.append(limit) if limit == results_cache._SECRET_BYTES else None)
                        or real(fd, limit))
    for _ in range(3):
        assert store.get("a").result.as_dict() == small_result.as_dict()
    assert reads == []
    shutil.rmtree(store.root)
    assert store.get("a") is None and store.put("b", small_result) and store.get("b") is not None
    assert reads == [] and ResultsCache(store.root).get("b") is not None and len(reads) == 1
    assert stat.S_IMODE(store.root.stat().st_mode) == 0o700
    assert stat.S_IMODE((store.root / ".secret").stat().st_mode) == 0o600


def test_off_turns_it_off(monkeypatch):
    monkeypatch.setenv(results_cache.ENV, "off")
    assert ResultsCache.default() is None


def test_cli_answers_the_second_request_from_the_cache(store, capsys, monkeypatch):
    args = ["schedule", "gkautz(2,12)", "--algo", "bfb", "--collective", "allreduce", "--json"]
    assert main(args) == 0
    first = capsys.readouterr()
    assert "results cache" not in first.err
    monkeypatch.setattr(synthesize_module, "synthesize", _no_solving)
    assert main(args) == 0
    second = capsys.readouterr()
    assert second.out == first.out and "answered from the results cache (solved 0 s ago" in second.err
    monkeypatch.setattr(synthesize_module, "synthesize", synthesize)
    assert main(args + ["--no-cache"]) == 0 and "results cache" not in capsys.readouterr().err
    assert main(["cache", "info"]) == 0 and "1 results, 0 failure rows, 1 command replies" in capsys.readouterr().out
    assert main(["cache", "clear"]) == 0 and "cleared 2 entries" in capsys.readouterr().out
    assert store.entries() == []


def test_the_schedule_page_says_cached_and_its_button_clears_it(store):
    st.cache_resource.clear()
    at = open_schedule("circulant(8,[1,3])", algo="bfb", coll="allgather")
    assert not at.exception and not at.error and len(store.entries()) == 1
    assert not [c for c in at.caption if "Cached" in c.value]
    st.cache_resource.clear()                       # a new app process: only the disk remembers
    at = open_schedule("circulant(8,[1,3])", algo="bfb", coll="allgather")
    assert not at.exception and not at.error
    (note,) = [c.value for c in at.caption if "Cached" in c.value]
    assert "results cache on disk" in note and "Verified by the simulator" in at.success[0].value
    at.button(key="s_clear_cache").click().run()
    assert not at.exception
    assert len(store.entries()) == 1                # cleared, then solved again and stored afresh
    assert not [c for c in at.caption if "Cached" in c.value]


def test_a_result_whose_columns_are_over_the_limit_is_not_encoded(store, monkeypatch):
    """The size check reads the schedule's column bytes first: a 268M-transfer BFB schedule is never encoded
    into memory only to be refused."""
    result = synthesize(parse_topology("gkautz(4,1024)"), "bfb", "allgather")
    cols = result.schedule.stored_columns()
    assert cols is not None                                         # a schedule as columns
    size = sum(getattr(cols, f).nbytes for f in ("step", "link", "shard", "lo", "hi", "reduce"))
    real = results_cache.encode_result
    monkeypatch.setattr(results_cache, "MAX_ENTRY_BYTES", size - 1)
    monkeypatch.setattr(results_cache, "encode_result", _no_solving)
    assert store.put("big", result) is False and not store._path("big").exists()
    monkeypatch.setattr(results_cache, "MAX_ENTRY_BYTES", size * 10)
    monkeypatch.setattr(results_cache, "encode_result", real)
    assert store.put("small", result) is True and store.get("small") is not None


# ------------------------------------------------------------------------------------- data only (issue 39)
SMALL = ("ring(4)", "hypercube(3)", "complete(4)", "mesh(2,2)", "dgx_a100(boxes=2)")


def _cases():
    """(algo, collective, expression) for every registered synthesizer and collective it builds, on the first
    small topology it builds on (a custom collective needs a demand matrix: none here), and TACOS once on the
    switched DGX A100 pair (its fabric is the unwound topology, stored beside the request's)."""
    from solvers.registry import ALGORITHMS

    out = []
    for algo, synth in ALGORITHMS.items():
        for coll in sorted(c.value for c in synth.collectives if c.value != "custom"):
            if algo == "hierarchical" and coll != "allreduce":
                continue            # it builds the allreduce only (NotApplicable for the rest, on any design)
            if algo == "direct" and coll == "reduce":
                continue            # declared so that it says why the IR has no direct reduce (test_rooted)
            out.append((algo, coll, None))
    return out + [("tacos", "allreduce", "dgx_a100(boxes=2)")]


def _first_built(algo, coll, expr):
    from solvers.core.errors import NotApplicable

    for e in [expr] if expr else SMALL:
        try:
            return e, synthesize(parse_topology(e), algo, coll, total_bytes=1e6)
        except NotApplicable:
            continue
    pytest.skip(f"{algo} builds no {coll} on {SMALL} (NotApplicable on each)")


@pytest.mark.parametrize("algo,coll,expr", _cases())
def test_every_synthesizer_comes_back_equal_through_the_cache(store, algo, coll, expr):
    expr, original = _first_built(algo, coll, expr)
    key = solve_key(original.topology, algo, coll, original.options, 1e6)
    assert store.put(key, original, parse_topology(expr))
    topo = parse_topology(expr)
    hit = store.get(key, topo, algo=algo, collective=coll, options=original.options)
    assert hit is not None
    back = hit.result
    assert back.as_dict() == original.as_dict() and back.as_dict(1e6) == original.as_dict(1e6)
    assert type(back.detail) is type(original.detail) and back.options == original.options
    assert back.verification == original.verification and back.cost == original.cost
    if original.detail is not None:
        assert back.detail.compare_note() == original.detail.compare_note()
    same = results_cache.topology_digest(original.topology) == results_cache.topology_digest(topo)
    assert (back.topology is topo) == same and same == (algo != "tacos" or expr != "dgx_a100(boxes=2)")
    assert back.schedule.transfers == original.schedule.transfers


def test_every_detail_type_of_the_wings_is_registered():
    from solvers.core.detail import Detail
    from solvers.registry import load_builtin

    load_builtin()
    found, todo = set(), [Detail]
    while todo:
        for sub in todo.pop().__subclasses__():
            todo.append(sub)
            if sub.__module__.startswith("solvers.") and dataclasses.is_dataclass(sub):
                found.add(sub)
    registered = set(results_cache.codec().names().values())
    assert found and found <= registered, found - registered


def test_exact_fractions_and_bounds_tables_round_trip_exactly():
    from fractions import Fraction

    import numpy as np

    from solvers.core.safe_codec import Codec
    from solvers.core.schedule import Collective, Columns, Schedule, Transfer

    huge = 3 ** 45                                         # a denominator past int64
    table = np.array([0, 1, huge // 3, huge], dtype=object)
    cols = Columns(np.array([1, 2], np.int8), np.array([0, 1], np.int16), np.array([0, 1], np.int8),
                   np.array([0, 1], np.int8), np.array([2, 3], np.int8), np.zeros(2, bool), huge, table)
    listed = Schedule(Collective.ALLGATHER, [Transfer(0, Fraction(1, huge), Fraction(2, 7), 3, 1)], "x",
                      {"u": Fraction(-5, 3 ** 50), "inf": float("inf"), (1, "a"): [None, True, 2.5]})
    codec = Codec()
    tree, arrays = codec.encode((Schedule(Collective.ALLGATHER, cols=cols), listed))
    back_cols, back_list = codec.decode(json.loads(json.dumps(tree, allow_nan=False)), arrays)
    got = back_cols.stored_columns()
    assert got.one == huge and got.bounds.tolist() == table.tolist() and got.step.dtype == np.int8
    assert all((getattr(got, f) == getattr(cols, f)).all() and getattr(got, f).dtype == getattr(cols, f).dtype
               for f in ("step", "link", "shard", "lo", "hi", "reduce"))
    assert back_list.transfers == listed.transfers and back_list.notes == listed.notes


def test_the_codec_refuses_what_it_does_not_know():
    from types import SimpleNamespace

    import numpy as np

    from solvers.core.detail import Detail
    from solvers.core.safe_codec import Codec, CodecError

    @dataclasses.dataclass
    class Unknown(Detail):
        x: int = 1

    codec = results_cache.codec()
    for value in (Unknown(), SimpleNamespace(a=1), np.array([object()], dtype=object), {1, 2}, b"bytes",
                  print, np.float16):
        with pytest.raises(CodecError):
            codec.encode(value)
    for tree in ({"$type": "os.system", "fields": {}}, {"$type": "Unknown", "fields": {"x": 1}},
                 {"$type": "RingDetail", "fields": {"rings": 1}},                # a field missing
                 {"$type": "GentreePlan", "fields": {"plan": "p", "allreduce_s": 1.0, "__class__": 1}},
                 {"$enum": "Collective", "value": "not one"}, {"$fraction": "1/0"}, {"$fraction": "1.5"},
                 {"$array": "a0"}, {"$ref": "t0"}, {"$tuple": [1], "extra": 2}, {"$float": "1e999"},
                 {"$dict": [[[1], 2]]}, {"$code": "print(1)"}, {}, json.loads("[" * 100 + "]" * 100)):
        with pytest.raises(CodecError):
            codec.decode(tree, {"a0": np.zeros(2, dtype=np.float64)} if tree != {"$array": "a0"} else {})
    assert Codec().decode({"$tuple": [1, {"$fraction": "-2/4"}]}, {}) == (1, -0.5)
    from solvers.synthesize import Result
    result = synthesize(parse_topology("ring(4)"), "ring", "allgather")
    assert results_cache.ResultsCache("unused").put("k", Result(result.topology, result.schedule,
                                                                result.verification, result.cost,
                                                                Unknown())) is False


def test_every_hit_is_verified_again(store, monkeypatch):
    verify_module = importlib.import_module("solvers.core.verify")
    topo = parse_topology("circulant(8,[1,3])")
    cached_synthesize(topo, "bfb", "allreduce", cache=store)
    calls = []
    real = verify_module.verify
    monkeypatch.setattr(verify_module, "verify", lambda t, s: calls.append(s) or real(t, s))
    monkeypatch.setattr(synthesize_module, "synthesize", _no_solving)
    again, hit = cached_synthesize(topo, "bfb", "allreduce", cache=store)
    assert hit is not None and len(calls) == 1 and calls[0] is again.schedule and again.verification.ok
