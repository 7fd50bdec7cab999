"""The CLI's TE-CCL options: schedule and export with --algo teccl, demand files, one-line errors."""
import json

from studio.cli import main


def run(capsys, *argv):
    code = main(list(argv))
    out, err = capsys.readouterr()
    return code, out, err


def test_schedule_alltoall_json(capsys):
    code, out, _ = run(capsys, "schedule", "dgx1()", "--algo", "teccl", "--collective", "alltoall",
                       "--bytes", "200000", "--json")
    assert code == 0
    d = json.loads(out)
    assert d["verified"] and d["teccl"]["method"] == "lp" and d["transfer_time_us"] == 4.0
    assert d["teccl"]["minimal_epochs_proven"] and d["teccl"]["epoch_us"] == 1.0


def test_schedule_allgather_with_knobs(capsys):
    code, out, _ = run(capsys, "schedule", "dgx1(alpha_ns=0)", "--algo", "teccl", "--chunks", "2", "--epochs",
                       "4", "--time-limit", "30", "--gap", "0.01", "--bytes", "400000", "--json")
    assert code == 0
    t = json.loads(out)["teccl"]
    assert t["epochs"] == 4 and t["finish_epochs"] == 3 and t["chunks"] == 2


def test_custom_demand_file(tmp_path, capsys):
    f = tmp_path / "demand.csv"
    f.write_text("0,2,0\n1,0,0\n0,0,0\n")
    code, out, _ = run(capsys, "schedule", "ring(3)", "--algo", "teccl", "--collective", "custom",
                       "--demand", str(f), "--json")
    assert code == 0 and json.loads(out)["collective"] == "custom"
    f.write_text("0,1\n1,0\n")
    code, _, err = run(capsys, "schedule", "ring(3)", "--algo", "teccl", "--collective", "custom",
                       "--demand", str(f))
    assert code == 2 and "3 x 3" in err and err.count("\n") == 1


def test_export_alltoall(tmp_path, capsys):
    out_file = tmp_path / "a2a.xml"
    code, _, err = run(capsys, "export", "ring(4)", "--algo", "teccl", "--collective", "alltoall",
                       "-o", str(out_file))
    assert code == 0 and "validated and simulated" in err
    code, out, _ = run(capsys, "check-xml", str(out_file))
    assert code == 0 and out.startswith("ok")


def test_errors_are_one_line(capsys):
    for argv, text in [(("schedule", "ring(3)", "--algo", "ring", "--chunks", "2"), "tacos, teccl, tacos_ilp"),
                       (("schedule", "ring(4)", "--algo", "teccl", "--collective", "alltoall", "--epochs", "5"),
                        "infeasible"),
                       (("schedule", "ring(3)", "--algo", "teccl", "--epoch", "soon"), "--epoch"),
                       (("schedule", "ring(3)", "--algo", "teccl", "--collective", "custom", "--demand",
                         "/nonexistent/d.csv"), "demand file"),
                       (("schedule", "ring(3)", "--algo", "ring", "--collective", "alltoall"), "teccl")]:
        code, _, err = run(capsys, *argv)
        assert code == 2 and text in err and err.count("\n") == 1, (argv, err)
