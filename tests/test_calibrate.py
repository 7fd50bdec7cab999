"""Calibrating the runtime model to a measured log (issue 41, item 3): prices recovered from logs made with known
prices and 3 % noise, the residual at every size, the price file every command takes, and bad requests as one
line."""
from __future__ import annotations

import contextlib
import io
import json
import random
from pathlib import Path

import numpy as np
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


def _log_of(topo, schedule, times_at, sizes, noise: float, seed: int) -> str:
    """A log in nccl-tests' format of the times ``times_at`` gives, each off by up to ``noise``."""
    rng, n = random.Random(seed), topo.n
    lines = ["# Collective test starting: all_reduce_perf"]
    for s, t in zip(sizes, times_at):
        cells = ""
        for _ in range(2):
            tt = float(t) * (1 + rng.uniform(-noise, noise))
            alg = s / tt / 1e3
            cells += f"  {tt:7.2f}  {alg:6.2f}  {alg * 2 * (n - 1) / n:6.2f}       0"
        lines.append(f"{int(s):12d}  {int(s) // 4:12d}     float     sum      -1{cells}")
    return "\n".join(lines) + "\n"


def test_a_protocol_switch_in_the_log_is_found_with_each_regime_s_prices():
    """A log that is the faster of two regimes, LL-like (alpha 1 us, B 6 GB/s) and Simple-like (10 us, 60 GB/s),
    crossing between 256 KiB and 512 KiB: one switch point there, each side's prices recovered."""
    r = synthesize(load("biring(8)"), "ring", "allreduce")
    sizes = [float(1024 << k) for k in range(21)]

    def at(alpha, bw):
        return Workload(prices="uniform", alpha_us=alpha, bandwidth_gbs=bw).model(r.topology, r.schedule).times(sizes)[0]

    ll, simple = at(1.0, 6.0), at(10.0, 60.0)
    log = read_bench_log(_log_of(r.topology, r.schedule, [min(a, b) for a, b in zip(ll, simple)], sizes, 0.03, 3))
    fit = calibrate(r.topology, r.schedule, log)
    assert len(fit.segments) == 2 and 2 ** 18 <= fit.switch_points[0] <= 2 ** 20
    small, large = fit.segments
    assert small.alpha_us == pytest.approx(1.0, rel=0.25) and small.bandwidth_gbs == pytest.approx(6.0, rel=0.10)
    assert large.alpha_us == pytest.approx(10.0, rel=0.25) and large.bandwidth_gbs == pytest.approx(60.0, rel=0.10)
    assert fit.rms > 0.2 and small.rms < 0.05 and large.rms < 0.05      # one regime cannot fit it; two can


def test_the_sample_log_shows_one_regime_and_one_link_class():
    log = read_bench_log(SAMPLE.read_bytes())
    r = synthesize(load("biring(16)"), "ring", "allreduce")
    fit = calibrate(r.topology, r.schedule, log)
    assert len(fit.segments) == 1 and fit.switch_points == ()
    (links,) = fit.classes                                   # biring: two links per node share B
    assert links.determined and links.bandwidth_gbs == pytest.approx(fit.bandwidth_gbs / 2)


def test_two_link_classes_are_fitted_apart_and_say_what_the_log_cannot_pin():
    """cluster(2,2,100,25): box links of 100 GB/s, NIC links of 25; the log is made with the NIC links at half
    their nominal speed and the box links at 0.8 of theirs. The ring's time is the NIC links' bandwidth: that one
    comes back within 10 %; the box links' bandwidth hardly shows and is reported as not determined."""
    from solvers.runtime import Execution, Model

    r = synthesize(load("cluster(2,2,100,25)"), "ring", "allreduce")
    topo = r.topology
    fast = [float(l.bandwidth) > 40 for l in topo.links]
    alpha = np.array([(3.0 if f else 12.0) if topo.is_compute(l.src) else 0.0 for f, l in zip(fast, topo.links)])
    per_byte = np.array([1 / (float(l.bandwidth) * (0.8 if f else 0.5) * 1e3) for f, l in zip(fast, topo.links)])
    sizes = [float(1024 << k) for k in range(21)]
    times = Model(topo, r.schedule, Execution()).with_link_prices(alpha, per_byte).times(sizes)[0]
    fit = calibrate(topo, r.schedule, read_bench_log(_log_of(topo, r.schedule, times, sizes, 0.03, 5)))
    by = {c.nominal_gbs: c for c in fit.classes}
    assert set(by) == {100.0, 25.0}
    assert by[25.0].determined and by[25.0].bandwidth_gbs == pytest.approx(12.5, rel=0.10)
    assert not by[100.0].determined


def test_calibrate_json_reports_classes_and_protocols():
    code, out, err = _cli("calibrate", str(SAMPLE), "--topo", "biring(16)", "--json")
    assert code == 0, err
    doc = json.loads(out)
    assert len(doc["link_classes"]) == 1 and len(doc["protocols"]) == 1 and doc["switch_points_bytes"] == []
    code, out, err = _cli("calibrate", str(SAMPLE), "--topo", "biring(16)", "--uniform", "--json")
    assert code == 0 and json.loads(out)["link_classes"] == []


def test_the_finer_fits_stop_at_their_budget_and_say_so():
    log = read_bench_log(SAMPLE.read_bytes())
    r = synthesize(load("biring(16)"), "ring", "allreduce")
    whole = calibrate(r.topology, r.schedule, log, detail=False)
    fit = calibrate(r.topology, r.schedule, log, budget_s=0.0)
    assert (fit.alpha_us, fit.bandwidth_gbs) == (whole.alpha_us, whole.bandwidth_gbs)    # the uniform fit stands
    assert len(fit.segments) == 1 and any("stopped at the 0 s budget" in n for n in fit.notes)


def test_an_older_log_without_the_starting_line_is_fitted_with_collective(tmp_path):
    """Issue 59, finding 6: older nccl-tests releases print no 'Collective test starting' line; ``--collective
    allreduce`` says what the log times and the prices it was made with come back (3 % noise)."""
    text = nccl_tests_log("biring(8)", "ring", 4.0, 80.0, 0.03, 5)
    old = "".join(line for line in text.splitlines(keepends=True) if "Collective test starting" not in line)
    assert "Collective test starting" not in old
    path = tmp_path / "old.log"
    path.write_text(old)
    code, out, err = _cli("calibrate", str(path), "--topo", "biring(8)", "--algo", "ring")
    assert code == 2 and "give --collective" in err and err.count("\n") == 1, err
    code, out, err = _cli("calibrate", str(path), "--topo", "biring(8)", "--algo", "ring", "--collective",
                          "allreduce", "--json")
    assert code == 0, err
    doc = json.loads(out)
    assert doc["alpha_us"] == pytest.approx(4.0, rel=0.25) and doc["bandwidth_gbs"] == pytest.approx(80.0, rel=0.10)
    assert len(doc["per_size"]) == 21


def _genmodel_page():
    from studio.views.genmodel import render

    render()


def test_genmodel_takes_a_log_and_points_it_to_the_measured_box():
    """Issue 59, finding 6: GenModel's uploader took only .csv/.txt, so an nccl-tests .log was refused ("text/x-log
    files are not allowed") with no word on where it fits. GenModel fits CPS runs at several N and a log times one
    N, so the page takes the log and points it, with a link, to the Schedule page's Measured box."""
    from streamlit.testing.v1 import AppTest

    at = AppTest.from_function(_genmodel_page, default_timeout=120).run()
    assert not at.exception and not at.error
    (upload,) = [u for u in at.get("file_uploader") if u.proto.id.endswith("gm_csv")]
    assert ".log" in list(upload.proto.type)
    links = [p.proto for p in at.get("page_link")]
    assert any(p.page == "schedule" and "Measured" in p.label for p in links)
    at.text_area(key="gm_csv_text").set_value(SAMPLE.read_text()).run()
    assert not at.exception and not at.error
    assert any("nccl-tests" in w.value and "Measured" in w.value for w in at.warning)
