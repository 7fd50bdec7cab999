"""bench/load.py's alternated passes (``--pairs``) and what its report says about them (issue 44)."""
import math

from bench.load import Pass, pair_plan, report


def _pass(name: str, compose: list[float], solve_cpu: float | None = None) -> Pass:
    ps = Pass(name)
    ps.times["compose"] = list(compose)
    ps.times["schedule"] = [1.0] * len(compose)
    ps.wall, ps.solve_cpu = 100.0, solve_cpu
    return ps


def test_pairs_alternate_so_that_a_drift_weighs_on_both():
    plan = pair_plan(3)
    assert [solve for _, solve in plan] == [False, True, True, False, False, True]
    assert [name for name, _ in plan] == ["app 1", "app + solve 1", "app + solve 2", "app 2", "app 3",
                                          "app + solve 3"]
    assert pair_plan(0) == []


def test_report_compares_the_median_p95_of_each_kind_of_pass():
    # p95 of 20 latencies is the 19th: 10 + 18 = 28 for base 10, and so on
    passes = [_pass("app 1", [10 + k for k in range(20)]), _pass("app + solve 1", [20 + k for k in range(20)], 2.0),
              _pass("app + solve 2", [12 + k for k in range(20)], 1.0), _pass("app 2", [14 + k for k in range(20)]),
              _pass("app 3", [100 + k for k in range(20)])]
    lines = report(passes, None, 20)
    (pairs,) = [line for line in lines if line.startswith("Compose p95, median")]
    # plain p95s 28, 32, 118: median 32; beside the solve 38 and 30: median 34; +6.25 %
    assert "median of 3 plain passes: 32.00 s (28.00 to 118.00)" in pairs
    assert "of 2 passes beside the solve: 34.00 s (30.00 to 38.00)" in pairs
    assert pairs.endswith("+6.2 %")
    assert any(line.startswith("app + solve 1: the solve took 2.0 CPU s") for line in lines)
    assert any(line == "app 1: Compose latencies in order (s): " + " ".join(f"{10 + k:.1f}" for k in range(20))
               for line in lines)


def test_a_solve_never_found_is_said_and_no_pairs_line_without_both_kinds():
    lines = report([_pass("app", [5.0] * 20), _pass("app + solve", [6.0] * 20, math.nan)], None, 20)
    assert any("did not show within 120 s" in line for line in lines)
    assert not any(line.startswith("Compose p95, median") for line in lines)
    assert any(line.startswith("Compose p95 with a TE-CCL solve running: 6.00 s against 5.00 s") for line in lines)
