"""Calibrating the runtime model to a measured log (issue 41, item 3): prices recovered from logs made with known
prices and 3 % noise, the residual at every size, the price file every command takes, and bad requests as one
line."""
from __future__ import annotations

import contextlib
import io
import json
import random
from pathlib import Path

import pytest

from solvers import synthesize
from solvers.runtime import Workload
from solvers.runtime.calibrate import calibrate
from solvers.runtime.measured import read_bench_log
from topologies import load

SAMPLE = Path(__file__).resolve().parents[1] / "examples" / "nccl-tests-allreduce-16.log"


def nccl_tests_log(expr: str, algo: str, alpha: float, bw: float, noise: float, seed: int,
                   program: str = "all_reduce_perf", collective: str = "allreduce") -> str:
    """A log in nccl-tests' format whose times are the runtime model's at (alpha, B), each off by up to
    ``noise``."""
    rng = random.Random(seed)
    r = synthesize(load(expr), algo, collective)
    n = r.topology.n
    sizes = [1024 << k for k in range(21)]                   # 1 KiB .. 1 GiB
    times, _ = Workload(prices="uniform", alpha_us=alpha, bandwidth_gbs=bw).model(r.topology, r.schedule).times(
        [float(s) for s in sizes])
    lines = [f"# Collective test starting: {program}", "# Using devices"]
    lines += [f"#  Rank {k:2d} Group  0 Pid {100 + k:6d} on      host0 device {k:2d} [0000:{k:02x}:00] GPU"
              for k in range(n)]
    for s, t in zip(sizes, times):
        cells = ""
        for _ in range(2):
            tt = float(t) * (1 + rng.uniform(-noise, noise))
            alg = s / tt / 1e3
            cells += f"  {tt:7.2f}  {alg:6.2f}  {alg * 2 * (n - 1) / n:6.2f}       0"
        lines.append(f"{s:12d}  {s // 4:12d}     float     sum      -1{cells}")
    return "\n".join(lines) + "\n"


@pytest.mark.parametrize("expr, alpha, bw, seed", [("biring(8)", 2.0, 150.0, 7), ("torus(4,4)", 8.0, 25.0, 11)])
def test_known_prices_come_back_through_three_percent_noise(expr, alpha, bw, seed):
    log = read_bench_log(nccl_tests_log(expr, "ring", alpha, bw, 0.03, seed))
    r = synthesize(load(expr), "ring", "allreduce")
    fit = calibrate(r.topology, r.schedule, log)
    assert fit.bandwidth_gbs == pytest.approx(bw, rel=0.10) and fit.alpha_us == pytest.approx(alpha, rel=0.25)
    assert len(fit.residuals) == 21 and max(abs(x) for x in fit.residuals) < 0.06 and fit.rms < 0.04


def test_the_sample_log_is_fitted_with_its_residual_at_every_size():
    """examples/nccl-tests-allreduce-16.log was written from alpha 6 us, B 40 GB/s with 3 % noise."""
    log = read_bench_log(SAMPLE.read_bytes())
    r = synthesize(load("biring(16)"), "ring", "allreduce")
    fit = calibrate(r.topology, r.schedule, log)
    assert fit.alpha_us == pytest.approx(6.0, rel=0.25) and fit.bandwidth_gbs == pytest.approx(40.0, rel=0.10)
    doc = fit.as_dict()
    assert len(doc["per_size"]) == 28 and all(abs(row["residual"]) < 0.06 for row in doc["per_size"])
    in_place = calibrate(r.topology, r.schedule, log, "in-place")
    assert in_place.placement == "in-place" and in_place.bandwidth_gbs == pytest.approx(40.0, rel=0.10)


def _cli(*argv):
    from studio.cli import main

    out, err = io.StringIO(), io.StringIO()
    with contextlib.redirect_stdout(out), contextlib.redirect_stderr(err):
        code = main(list(argv))
    return code, out.getvalue(), err.getvalue()


def test_calibrate_writes_a_price_file_every_command_takes(tmp_path):
    prices = tmp_path / "prices.json"
    code, out, err = _cli("calibrate", str(SAMPLE), "--topo", "biring(16)", "--algo", "ring", "--json", "-o",
                          str(prices))
    assert code == 0, err
    doc = json.loads(out)
    assert doc["alpha_us"] == pytest.approx(6.0, rel=0.25) and doc["bandwidth_gbs"] == pytest.approx(40.0, rel=0.1)
    assert len(doc["per_size"]) == 28
    code, out, err = _cli("schedule", "biring(16)", "--algo", "ring", "--collective", "allreduce", "--bytes",
                          str(2 ** 30), "--prices", str(prices), "--json")
    assert code == 0, err
    got = json.loads(out)
    measured = read_bench_log(SAMPLE.read_bytes()).placement().iloc[-1]["time_us"]
    assert got["time_us"] == pytest.approx(measured, rel=0.05) and got["prices"].startswith("calibrated (ring fit")


@pytest.mark.parametrize("log, topo, words", [
    ("# Collective test starting: all_reduce_perf\n1024  256  float  sum  -1  x  1  1  0  1  1  1  0\n", "ring(4)",
     "line 2: time is not a number"),
    ("1024  256  float  sum  -1  12.0  0.09  0.08  0  12.1  0.08  0.08  0\n2048  512  float  sum  -1  13.0  0.16  "
     "0.15  0  13.1  0.16  0.15  0\n", "ring(4)", "does not say which collective"),
    (None, "ring(8)", "the log has 16 ranks"),
])
def test_a_request_it_cannot_fit_is_one_line(tmp_path, log, topo, words):
    path = SAMPLE
    if log is not None:
        path = tmp_path / "log.txt"
        path.write_text(log)
    code, out, err = _cli("calibrate", str(path), "--topo", topo)
    assert code == 2 and words in err and err.count("\n") == 1, err
