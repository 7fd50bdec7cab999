"""The results cache (issue 24): finished solves kept on disk, keyed by topology, synthesizer, collective, options,
bytes and code version, tagged so that a file this installation did not write is never unpickled, and reused by
the CLI and the app."""
from __future__ import annotations

import importlib
import os
import pickle

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
    data = bytearray(path.read_bytes())
    data[-5] ^= 0xFF                                    # one byte of the pickle changed
    path.write_bytes(bytes(data))
    loads = []
    monkeypatch.setattr(results_cache.pickle, "loads", lambda body: loads.append(body))
    assert store.get(path.stem) is None and not path.exists() and not loads
    forged = ResultsCache(store.root.parent / "elsewhere")  # another secret: its files fail here
    forged.put(path.stem, "a planted object")
    path.write_bytes(forged._path(path.stem).read_bytes())
    assert store.get(path.stem) is None and not path.exists() and not loads


def test_least_recently_used_results_go_past_the_size_cap(store, monkeypatch):
    for i, size in enumerate((5, 6, 7)):
        store.put(f"k{i}", b"x" * 4000)
        os.utime(store._path(f"k{i}"), (size, size))      # k0 least recently used
    monkeypatch.setattr(results_cache, "MAX_TOTAL_BYTES", 9000)
    store.put("k3", b"y" * 4000)
    assert sorted(p.stem for p in store.entries()) == ["k2", "k3"]
    monkeypatch.setattr(results_cache, "MAX_ENTRY_BYTES", 100)
    assert store.put("big", b"z" * 1000) is False and not store._path("big").exists()
    assert store.clear() == 2 and store.entries() == []


def test_the_secret_is_read_once_and_again_after_the_folder_is_wiped(store, monkeypatch):
    import shutil
    store.put("a", b"1")
    reads = []
    real = ResultsCache._read_or_make_secret
    monkeypatch.setattr(ResultsCache, "_read_or_make_secret", lambda self: reads.append(1) or real(self))
    for _ in range(3):
        assert store.get("a").result == b"1"
    assert reads == []
    shutil.rmtree(store.root)
    assert store.get("a") is None and store.put("b", b"2") and store.get("b").result == b"2"
    assert len(reads) == 1 and ResultsCache(store.root).get("b").result == b"2"


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
    assert main(["cache", "info"]) == 0 and "1 results" in capsys.readouterr().out
    assert main(["cache", "clear"]) == 0 and "cleared 1 results" in capsys.readouterr().out
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


def test_a_result_whose_columns_are_over_the_limit_is_not_pickled(store, monkeypatch):
    """The size check reads the schedule's column bytes first: a 268M-transfer BFB schedule is never pickled
    into memory only to be refused."""
    from types import SimpleNamespace

    from solvers.directconnect.bfb import bfb_allgather

    result = SimpleNamespace(schedule=bfb_allgather(parse_topology("gkautz(4,64)")))    # a schedule as columns
    cols = result.schedule.stored_columns()
    size = sum(getattr(cols, f).nbytes for f in ("step", "link", "shard", "lo", "hi", "reduce"))
    real = pickle.dumps
    monkeypatch.setattr(results_cache, "MAX_ENTRY_BYTES", size - 1)
    monkeypatch.setattr(results_cache.pickle, "dumps", _no_solving)
    assert store.put("big", result) is False and not store._path("big").exists()
    monkeypatch.setattr(results_cache, "MAX_ENTRY_BYTES", size * 10)
    monkeypatch.setattr(results_cache.pickle, "dumps", real)
    assert store.put("small", result) is True and store.get("small") is not None
