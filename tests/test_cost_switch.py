"""The cost-model switch: ``schedule --cost genmodel`` in the CLI and the sidebar's Cost model in the app price a
schedule with GenModel's incast, reduction and memory terms on top of alpha-beta; ``genmodel`` is a CLI command
and a page."""
import json

import pytest

from studio.cli import main

from .conftest import open_boxes
from .test_teccl_page import metrics, open_schedule


def run_json(capsys, *argv):
    assert main(list(argv)) == 0
    return json.loads(capsys.readouterr().out)


def test_cli_genmodel_cost_adds_incast_only_above_the_threshold(capsys):
    # direct allreduce on 12 nodes = co-located PS: fan-in 11 > w_t = 9, so incast; one ring (ring_uni) has fan-in 1
    # (the multi-ring ``ring`` runs 11 rings on complete(12), fan-in 11, so it incasts too)
    direct = run_json(capsys, "schedule", "complete(12)", "--algo", "direct", "--collective", "allreduce",
                      "--bytes", "4e8", "--prices", "links", "--cost", "genmodel", "--json")
    ring = run_json(capsys, "schedule", "complete(12)", "--algo", "ring_uni", "--collective", "allreduce",
                    "--bytes", "4e8", "--prices", "links", "--cost", "genmodel", "--json")
    for out in (direct, ring):
        assert out["cost_model"] == "genmodel"
        terms = out["genmodel_terms_us"]
        assert out["genmodel_time_us"] == pytest.approx(sum(terms.values()))
        # GenModel extends the step model on the fabric's own links
        assert terms["alpha"] + terms["beta"] == pytest.approx(out["step_model_us"])
        assert terms["gamma"] > 0 and terms["delta"] > 0                          # allreduce reduces
    assert direct["genmodel_terms_us"]["epsilon"] > 0 and ring["genmodel_terms_us"]["epsilon"] == 0
    # memory: one reduction of fan-in 12 per block (CPS, (N+1) S/N) against eleven of fan-in 2 (ring, 3(N-1) S/N)
    assert direct["genmodel_terms_us"]["delta"] < ring["genmodel_terms_us"]["delta"]
    ab = run_json(capsys, "schedule", "complete(12)", "--algo", "ring", "--collective", "allreduce", "--bytes", "4e8",
                  "--json")
    assert ab["cost_model"] == "runtime" and "genmodel_time_us" not in ab


def test_cli_cost_switch_bad_input_is_one_line(capsys):
    assert main(["schedule", "ring(4)", "--algo", "ring", "--cost", "genmodel", "--json"]) == 0   # the workload's M
    assert json.loads(capsys.readouterr().out)["genmodel_time_us"] > 0
    assert main(["schedule", "ring(4)", "--algo", "ring", "--bytes", "1e6", "--cost", "genmodel",
                 "--genmodel-preset", "nope"]) == 2
    err = capsys.readouterr().err
    assert "unknown GenModel preset" in err and err.count("\n") == 1


def test_cli_genmodel_command_picks_the_papers_plans(capsys):
    for servers, plan in ((8, "CPS"), (12, "6 × 2"), (15, "5 × 3")):
        out = run_json(capsys, "genmodel", "plans", "--servers", str(servers), "--size", "1e8", "--preset",
                       "cpu_testbed", "--json")
        assert out["best"] == plan


def test_app_sidebar_genmodel_prices_the_schedule():
    at = open_schedule("complete(12)", algo="direct", coll="allreduce")
    assert not at.exception and not at.error
    plain = metrics(at)
    assert "GenModel (µs)" not in plain
    open_boxes(at, "workload_open").run()              # the workload's inputs
    at.radio(key="w_cost").set_value("GenModel").run()
    assert not at.exception and not at.error
    m = metrics(at)
    # GenModel is its own figure (the step model plus its terms); the runtime model's time does not change
    assert m["Runtime (µs)"] == plain["Runtime (µs)"]
    assert float(m["GenModel (µs)"]) > float(m["Step model (µs)"]) == float(plain["Step model (µs)"])
    at.selectbox(key="w_genmodel").set_value("cpu_testbed").run()
    assert not at.exception and not at.error
