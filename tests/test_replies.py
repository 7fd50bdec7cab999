"""Whole replies kept in the results cache (studio/cli/replies.py): the same question is answered word for word
without solving; anything that can change the answer (an argument, a named file's content) asks afresh."""
from __future__ import annotations

import json

import pytest

import solvers.forestcoll as forestcoll_package
from studio.cli import main


@pytest.fixture
def cache_dir(tmp_path, monkeypatch):
    monkeypatch.setenv("TOPOLOGY_STUDIO_CACHE", str(tmp_path / "cache"))
    return tmp_path / "cache"


def _run(capsys, *argv):
    code = main(list(argv))
    out = capsys.readouterr()
    return code, out.out, out.err


def _no_solving(*_args, **_kwargs):
    raise AssertionError("solved although the reply was kept")


def test_forestcoll_is_answered_from_its_reply(cache_dir, capsys, monkeypatch):
    code, first, err = _run(capsys, "forestcoll", "torus(3,3)", "--json")
    assert code == 0 and "results cache" not in err and json.loads(first)["verified"]
    monkeypatch.setattr(forestcoll_package, "forestcoll", _no_solving)
    code, again, err = _run(capsys, "forestcoll", "torus(3,3)", "--json")
    assert code == 0 and again == first and "answered from the results cache" in err
    with pytest.raises(AssertionError, match="solved although"):
        main(["forestcoll", "torus(3,3)"])                                  # a table, not JSON: another question
    with pytest.raises(AssertionError, match="solved although"):
        main(["forestcoll", "torus(3,3)", "--json", "--no-cache"])


def test_a_changed_file_is_a_new_question(cache_dir, tmp_path, capsys):
    design = tmp_path / "d.json"
    a, b = tmp_path / "a.json", tmp_path / "b.json"
    from topologies import load
    from topologies.files import write_topology

    write_topology(load("ring(4)"), a)
    write_topology(load("biring(4)"), b)
    design.write_bytes(a.read_bytes())
    code, first, _ = _run(capsys, "forestcoll", str(design), "--json")
    design.write_bytes(b.read_bytes())
    code2, second, err = _run(capsys, "forestcoll", str(design), "--json")
    assert code == code2 == 0 and "answered from the results cache" not in err
    assert json.loads(second)["algbw_GBps"] == 2 * json.loads(first)["algbw_GBps"]     # both directions now


def test_runs_that_write_files_and_failed_runs_are_not_replayed(cache_dir, tmp_path, capsys):
    from studio.cli.replies import reply_key

    args = main.__globals__["parser"]().parse_args(["failures", "ring(4)", "--links", "1", "-o",
                                                     str(tmp_path / "x.csv")])
    assert reply_key(args) is None
    assert _run(capsys, "forestcoll", "fail(ring(4),links=[0])")[0] == 2
    code, _, err = _run(capsys, "forestcoll", "fail(ring(4),links=[0])")
    assert code == 2 and "answered from" not in err
    assert not cache_dir.exists() or not [p for p in cache_dir.iterdir() if p.name.startswith("reply-")]


def test_an_altered_reply_is_deleted_and_the_question_solved(cache_dir, capsys):
    code, first, _ = _run(capsys, "forestcoll", "torus(3,3)", "--json")
    (path,) = [p for p in cache_dir.iterdir() if p.name.startswith("reply-")]
    data = bytearray(path.read_bytes())
    data[-5] ^= 1
    path.write_bytes(bytes(data))
    code, again, err = _run(capsys, "forestcoll", "torus(3,3)", "--json")
    assert code == 0 and "answered from" not in err and "fails its tag" in err
    assert json.loads(again)["inv_x_star"] == json.loads(first)["inv_x_star"]
