"""Design sweeps (issue 24): the grid, the rows, resuming after an interruption, CSV and Parquet, the embedded Dask
cluster and a run against a scheduler's address."""
from __future__ import annotations

import csv
import os
from concurrent.futures import ThreadPoolExecutor

import pandas as pd
import pytest

from solvers.sweep import FIELDS, Journal, SweepError, grid, parse_param, parse_values, run, solve_task
from studio.cli import main


def test_values_and_parameters_parse_or_say_why():
    assert parse_values("64:256:64") == [64, 128, 192, 256]
    assert parse_values("8, 16,32") == [8, 16, 32]
    assert parse_param("N=4:6:1") == ("N", [4, 5, 6])
    for bad in ("1:2", "a,b", "5:1:0", "", "1:2:3:4"):
        with pytest.raises(SweepError):
            parse_values(bad)
    with pytest.raises(SweepError, match="NAME=VALUES"):
        parse_param("4:8:2")
    with pytest.raises(SweepError, match="more than"):
        parse_values("1:100000000:1")


def test_the_grid_fills_the_template_by_text_and_checks_its_names():
    tasks = grid("torus({A},{B})", {"A": [3, 4], "B": [5]}, ["ring", "bfb"], ["allgather"], [1e6])
    assert [t.expr for t in tasks] == ["torus(3,5)", "torus(3,5)", "torus(4,5)", "torus(4,5)"]
    assert tasks[0].params == (("A", 3), ("B", 5)) and tasks[1].algo == "bfb"
    with pytest.raises(SweepError, match="names N"):
        grid("ring({N})", {}, ["ring"], ["allgather"], [1e6])
    with pytest.raises(SweepError, match="has no"):
        grid("ring(8)", {"N": [1]}, ["ring"], ["allgather"], [1e6])
    with pytest.raises(SweepError, match="tasks, above"):
        grid("ring({N})", {"N": list(range(3, 10_003))}, ["ring"] * 11, ["allgather"], [1e6])


def test_a_task_gives_one_verified_row_per_size_and_statuses_for_the_rest():
    (task,) = grid("ring({N})", {"N": [6]}, ["ring"], ["allreduce"], [1e3, 1e9])
    rows = solve_task(task)
    assert [r["bytes"] for r in rows] == [1e3, 1e9] and all(r["status"] == "ok" for r in rows)
    assert rows[0]["N"] == 6 and rows[0]["nodes"] == 6 and rows[1]["time_us"] >= rows[1]["bound_us"] > 0
    assert rows[1]["busbw_GBps"] == pytest.approx(rows[1]["algbw_GBps"] * 2 * 5 / 6)
    (bad,) = grid("ring({N})", {"N": [1]}, ["ring"], ["allgather"], [1e6])
    (na,) = grid("ring({N})", {"N": [6]}, ["forestcoll"], ["alltoall"], [1e6])
    assert solve_task(bad)[0]["status"] in ("not applicable", "error") and solve_task(bad)[0]["message"]
    assert solve_task(na)[0]["status"] == "not applicable"


def test_a_task_past_its_time_limit_stops_at_the_next_progress_report_and_says_time_out():
    """ForestColl's tree packing reports progress; on gkautz(4,128) it needs Algorithm 5 (seconds), so a 0.2 s
    limit stops it there, and the rows say so. A generous limit changes nothing."""
    (slow,) = grid("gkautz(4,{N})", {"N": [128]}, ["forestcoll"], ["allgather"], [1e6], time_limit_s=0.2)
    rows = solve_task(slow)
    assert rows[0]["status"] == "time-out" and "0.2 s" in rows[0]["message"]
    (fine,) = grid("ring({N})", {"N": [6]}, ["ring"], ["allgather"], [1e6], time_limit_s=600)
    assert solve_task(fine)[0]["status"] == "ok"
    with pytest.raises(SweepError, match="time limit"):
        grid("ring({N})", {"N": [6]}, ["ring"], ["allgather"], [1e6], time_limit_s=0)


def _columns(params):
    return list(params) + list(FIELDS)


def test_an_interrupted_sweep_resumes_without_solving_a_finished_task(tmp_path):
    tasks = grid("ring({N})", {"N": [4, 5, 6, 7, 8, 9]}, ["ring", "sptree"], ["allgather"], [1e6, 1e8])
    journal = Journal(tmp_path / "rows.csv", _columns({"N": 0}))
    seen = []

    def stop_after_five(task, rows):
        journal.append(rows)
        seen.append(task.key)
        if len(seen) == 5:
            raise KeyboardInterrupt

    with ThreadPoolExecutor(2) as pool, pytest.raises(KeyboardInterrupt):
        run(tasks, pool, stop_after_five, in_flight=2)
    done = journal.done([1e6, 1e8])
    assert done == set(seen) and len(done) == 5
    with journal.path.open("ab") as fh:
        fh.write(b"7,ring(7),ring,allg")          # a row cut short by a crash: dropped, never read
    assert journal.done([1e6, 1e8]) == done
    again = []

    class Counting(ThreadPoolExecutor):
        def submit(self, fn, task):
            again.append(task.key)
            return super().submit(fn, task)

    with Counting(2) as pool:
        solved = run(tasks, pool, lambda t, rows: journal.append(rows), done=done)
    assert solved == len(tasks) - 5 and not set(again) & done
    rows = journal.rows()
    keys = [(r["expr"], r["algo"], r["collective"], r["bytes"]) for r in rows]
    assert len(keys) == len(set(keys)) == 2 * len(tasks)
    with pytest.raises(SweepError, match="another sweep"):
        Journal(journal.path, _columns({"M": 0})).rows()


def test_at_most_in_flight_tasks_are_submitted_at_once():
    import threading
    tasks = grid("ring({N})", {"N": list(range(4, 14))}, ["ring"], ["allgather"], [1e6])
    lock, state = threading.Lock(), {"open": 0, "most": 0}

    class Watching(ThreadPoolExecutor):
        def submit(self, fn, task):
            with lock:
                state["open"] += 1
                state["most"] = max(state["most"], state["open"])
            future = super().submit(fn, task)
            future.add_done_callback(lambda _f: _close())
            return future

    def _close():
        with lock:
            state["open"] -= 1

    for cap in (3, None):
        state.update(open=0, most=0)
        with Watching(4) as pool:
            assert run(tasks, pool, lambda t, rows: None, in_flight=cap) == len(tasks)
        assert 1 <= state["most"] <= (cap or 8)


def test_cli_sweep_on_the_embedded_cluster_then_resumed_to_parquet(tmp_path, capsys):
    out = tmp_path / "grid.csv"
    args = ["sweep", "ring({N})", "--param", "N=4:7:1", "--algos", "ring,bfb", "--collectives", "allgather",
            "--bytes", "1e6", "-o", str(out), "--workers", "2"]
    assert main(args) == 0
    err = capsys.readouterr().err
    assert "embedded Dask LocalCluster (2 worker processes)" in err and "8 tasks solved now, 0 resumed" in err
    rows = list(csv.DictReader(out.open()))
    assert len(rows) == 8 and {r["status"] for r in rows} == {"ok"}
    workers = {r["worker"] for r in rows}
    assert 1 <= len(workers) <= 2 and not any(w.endswith(f":{os.getpid()}") for w in workers)   # in workers
    assert main(args) == 0 and "0 tasks solved now, 8 resumed" in capsys.readouterr().err
    table = tmp_path / "grid.parquet"
    assert main(args[:-4] + ["-o", str(table), "--workers", "1"]) == 0
    frame = pd.read_parquet(table)
    assert len(frame) == 8 and list(frame.columns) == ["N", *FIELDS]
    assert not (tmp_path / "grid.parquet.rows.csv").exists()


def test_cli_sweep_against_a_running_scheduler(tmp_path, capsys):
    from distributed import LocalCluster

    with LocalCluster(n_workers=1, threads_per_worker=1, processes=True, dashboard_address=None) as cluster:
        out = tmp_path / "remote.csv"
        assert main(["sweep", "torus({A},{A})", "--param", "A=3,4", "--algos", "bfb", "--collectives",
                     "allgather,allreduce", "--bytes", "1e6,1e8", "-o", str(out),
                     "--scheduler", cluster.scheduler_address]) == 0
        err = capsys.readouterr().err
    assert f"the Dask cluster at {cluster.scheduler_address} (1 workers)" in err
    rows = list(csv.DictReader(out.open()))
    assert len(rows) == 8 and {r["status"] for r in rows} == {"ok"} and {r["A"] for r in rows} == {"3", "4"}


def test_cli_sweep_bad_input_is_one_line(tmp_path, capsys):
    out = str(tmp_path / "x.csv")
    cases = [(["sweep", "ring({N})", "--param", "N=a", "-o", out], "not a list of integers"),
             (["sweep", "ring({N})", "--param", "N=4", "--algos", "nosuch", "-o", out], "nosuch"),
             (["sweep", "ring({N})", "--param", "N=4", "-o", str(tmp_path / "x.txt")], ".csv or .parquet"),
             (["sweep", "ring({N})", "--param", "N=4", "-o", out, "--scheduler", "tcp://127.0.0.1:9"],
              "no Dask scheduler answers"),
             (["sweep", "ring({N})", "--param", "N=4", "-o", out, "--time-limit", "-1"], "time limit")]
    for args, message in cases:
        assert main(args) == 2
        err = capsys.readouterr().err
        assert message in err and err.count("\n") == 1, err


def test_compare_page_sweep_tab_runs_on_the_embedded_cluster():
    from streamlit.testing.v1 import AppTest

    from .conftest import ROOT, switch_page

    at = AppTest.from_file(str(ROOT / "app.py"), default_timeout=300).run()
    at = switch_page(at, "compare").run()
    at.text_input(key="sw_template").set_value("ring({N})")
    at.text_input(key="sw_params").set_value("N=4:6:1")
    at.multiselect(key="sw_algos").set_value(["ring", "sptree"])
    at.multiselect(key="sw_colls").set_value(["allgather"])
    at.number_input(key="sw_workers").set_value(1).run()
    assert not at.exception and any("6 tasks." in c.value for c in at.caption)
    at.button(key="sw_run").click().run()
    assert not at.exception and not at.error
    (done,) = [s.value for s in at.success if "rows" in s.value]
    assert done.startswith("12 rows, 12 verified and timed")
    frame = next(d.value for d in at.dataframe if "busbw_GBps" in d.value.columns)
    assert sorted(set(frame["N"])) == [4, 5, 6] and set(frame["status"]) == {"ok"}
    spec = at.get("plotly_chart")[-1].proto.spec
    assert "ring allgather" in spec and "sptree allgather" in spec
    at.text_input(key="sw_params").set_value("N=a").run()
    assert any("not a list of integers" in e.value for e in at.error)


def test_embedded_cluster_workers_do_not_run_the_main_script_again(tmp_path, monkeypatch):
    """A Streamlit page (or pytest's AppTest) is installed as ``__main__`` from a file; spawned Dask workers used to
    run that file again, so a sweep from the Sweep page ran the page script in every worker (and, after an AppTest
    in the same process, the workers died on its free names). The workers start with a plain main now."""
    import math
    import sys

    from studio.cluster import executor

    marker = tmp_path / "ran"
    script = tmp_path / "page.py"
    script.write_text(f"open({str(marker)!r}, 'w').close()\nraise SystemExit('the page ran in a worker')\n")
    main = sys.modules["__main__"]
    monkeypatch.setattr(main, "__file__", str(script), raising=False)
    monkeypatch.setattr(main, "__spec__", None, raising=False)
    with executor(None, 1) as (pool, where, count):
        assert "LocalCluster (1 worker" in where and count == 1
        assert pool.submit(math.sqrt, 16.0).result(timeout=60) == 4.0
    assert not marker.exists()
    assert main.__file__ == str(script)
