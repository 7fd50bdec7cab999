"""Reading nccl-tests / rccl-tests logs (issue 41, item 2): the sample log under examples/, the row variants the
tool prints (no data check, per-iteration timing, trace replay, a timestamp), and malformed logs as one line."""
from __future__ import annotations

from pathlib import Path

import pytest

from solvers.core.schedule import Collective
from solvers.runtime.measured import LogError, read_bench_log

SAMPLE = Path(__file__).resolve().parents[1] / "examples" / "nccl-tests-allreduce-16.log"
HEAD = "# Collective test starting: all_gather_perf\n#\n"


def test_the_sample_log_reads_whole():
    log = read_bench_log(SAMPLE.read_bytes())
    assert log.program == "all_reduce_perf" and log.collective is Collective.ALLREDUCE
    assert log.ranks == 16 and log.devices[0] == ("node0", 0, "NVIDIA A100-SXM4-80GB")
    assert {host for host, _, _ in log.devices} == {"node0", "node1"}
    assert len(log.rows) == 2 * 28 and log.sizes()[0] == 8 and log.sizes()[-1] == 2 ** 30
    out, inp = log.placement("out-of-place"), log.placement("in-place")
    assert len(out) == len(inp) == 28 and set(log.rows["wrong"]) == {0.0}
    # nccl-tests' busbw for allreduce is algbw x 2(n-1)/n (printed to two decimals)
    big = out[out["bytes"] >= 2 ** 20]
    assert ((big["busbw_GBps"] - big["algbw_GBps"] * 2 * 15 / 16).abs() <= 0.02).all()
    assert ((big["algbw_GBps"] - big["bytes"] / big["time_us"] / 1e3).abs() <= 0.01).all()
    assert log.avg_busbw_gbs == pytest.approx(12.336)


def test_the_row_variants_nccl_tests_prints():
    rows = ("1048576  262144  float  none  -1  55.10  19.03  17.84  N/A  54.90  19.10  17.91  N/A\n"      # no check
            "2097152  524288  float  none  -1  100.0  20.97  19.66  0  99.0  101.0  103.0  1.5  "
            "98.0  21.40  20.06  0  97.0  99.0  101.0  1.2\n"                       # per-iteration timing
            "4194304  1048576  float  none  -1  190.0  22.08  20.70  0  189.0  22.19  20.80  0  "
            "2026-11-27 10:00:00\n")                                                 # a timestamp at the end
    log = read_bench_log(HEAD + rows)
    assert log.collective is Collective.ALLGATHER and log.ranks is None
    first = log.rows[log.rows["bytes"] == 1048576]
    assert list(first["placement"]) == ["out-of-place", "in-place"] and first["wrong"].isna().all()
    per_iter = log.rows[log.rows["bytes"] == 2097152]
    assert list(per_iter["time_us"]) == [100.0, 98.0] and list(per_iter["busbw_GBps"]) == [19.66, 20.06]
    assert list(log.rows[log.rows["bytes"] == 4194304]["busbw_GBps"]) == [20.70, 20.80]
    replay = read_bench_log(HEAD + "1024  256  float  sum  -1  12.0  0.09  0.08  0\n")
    assert list(replay.rows["placement"]) == ["in-place"]
    noisy = read_bench_log(HEAD + "node0:1:1 [0] NCCL INFO Bootstrap : Using eth0\n"
                                  "1024  256  float  sum  -1  12.0  0.09  0.08  0  12.1  0.08  0.08  0\n")
    assert len(noisy.rows) == 2 and noisy.notes and "NCCL INFO" in noisy.notes[0]


@pytest.mark.parametrize("text, words", [
    (HEAD + "1024  256  float  sum  -1  12.0  fast  0.08  0  12.1  0.08  0.08  0\n", "line 3: algbw is not a number"),
    (HEAD + "1024  256  float  sum  -1  12.0  0.09\n", "line 3: a data row has size"),
    (HEAD + "1024  256  float  sum  -1  12.0  0.09  0.08  0  12.1  0.08\n", "4 or 8 figures per placement"),
    (HEAD + "1024  256  float  sum  -1  nan  0.09  0.08  0  12.1  0.08  0.08  0\n", "finite number"),
    (HEAD + "-1024  256  float  sum  -1  1  0.09  0.08  0  12.1  0.08  0.08  0\n", "at least 0"),
    (HEAD + "# Avg bus bandwidth : 1.0\n", "no data rows"),
    ("#  Rank  0 Group  0 Pid   1 on h device  0 [0000:07:00] GPU\n#  Rank  2 Group  0 Pid   1 on h device  2 "
     "[0000:27:00] GPU\n1024  256  float  sum  -1  12.0  0.09  0.08  0  12.1  0.08  0.08  0\n", "Rank lines name"),
    (b"\xff\xfe1024", "UTF-8 text"),
])
def test_a_log_it_cannot_read_is_one_line(text, words):
    with pytest.raises(LogError) as caught:
        read_bench_log(text)
    message = str(caught.value)
    assert words in message and "\n" not in message


def test_a_log_above_the_cap_is_refused_before_reading(monkeypatch):
    import solvers.runtime.measured as measured

    monkeypatch.setattr(measured, "MAX_LOG_BYTES", 100)
    with pytest.raises(LogError, match="at most"):
        read_bench_log(SAMPLE.read_bytes())
