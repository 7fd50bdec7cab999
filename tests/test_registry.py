"""The synthesizer registry: a synthesizer is one class in one file, and it appears in the CLI's flags and
choices, the Schedule page's choices and controls, Compare, and the export - with no name branches anywhere."""
import contextlib
import io
from dataclasses import dataclass
from pathlib import Path

import pytest
from streamlit.testing.v1 import AppTest

from solvers import NotApplicable, synthesize
from solvers.baselines.sptree import sptree_allgather
from solvers.compare import compare
from solvers.export import export
from solvers.registry import AllgatherSynthesizer, ALGORITHMS, option, register, unregister
from studio.cli import main
from topologies import load

from .conftest import shown_metrics, switch_page

ROOT = Path(__file__).resolve().parents[1]


# ---- the whole of a new synthesizer: options, build, registration ----------------------------------------
@dataclass(frozen=True)
class ToyOptions:
    rounds: int = option(1, "how many times to say hello", minimum=1, maximum=3, label="Rounds")


class Toy(AllgatherSynthesizer):
    name = "toy"
    summary = "a toy: shortest-path trees under another name"
    rank = 5
    Options = ToyOptions

    def allgather(self, topo, options, work, progress):
        return sptree_allgather(topo)
# -------------------------------------------------------------------------------------------------------------


@pytest.fixture
def toy():
    register(Toy)
    yield Toy
    unregister("toy")


def cli(*argv):
    out, err = io.StringIO(), io.StringIO()
    with contextlib.redirect_stdout(out), contextlib.redirect_stderr(err):
        code = main(list(argv))
    return code, out.getvalue(), err.getvalue()


def test_a_registered_synthesizer_is_in_the_cli(toy):
    help_out = io.StringIO()
    with contextlib.redirect_stdout(help_out), pytest.raises(SystemExit):
        main(["schedule", "--help"])                                  # argparse prints the help and exits
    help_text = help_out.getvalue()
    assert "toy" in help_text and "--rounds" in help_text and "how many times to say hello" in help_text
    code, out, err = cli("schedule", "ring(6)", "--algo", "toy", "--rounds", "2", "--json")
    assert code == 0 and '"algo": "toy"' in out and '"verified": true' in out
    code, _, err = cli("schedule", "ring(6)", "--algo", "toy", "--rounds", "9")
    assert code == 2 and err.strip() == "error: --rounds must be at most 3"
    code, _, err = cli("schedule", "ring(6)", "--algo", "ring", "--rounds", "2")
    assert code == 2 and err.strip() == "error: --rounds applies to toy only"


def test_a_registered_synthesizer_is_on_the_schedule_page(toy):
    at = AppTest.from_file(str(ROOT / "app.py"), default_timeout=120).run()
    at.query_params["expr"] = "ring(6)"
    at = switch_page(at, "schedule").run()
    assert "toy" in at.selectbox(key="algo").options
    at.selectbox(key="algo").set_value("toy").run()
    assert not at.exception
    assert at.number_input(key="o_toy_rounds").value == 1          # its control, from its Options
    assert {m.label: m.value for m in shown_metrics(at)}["Steps"] == "5"     # sptree on ring(6): D = 5 steps


def test_a_registered_synthesizer_runs_in_compare_and_exports(toy):
    result = compare(["ring(6)"], ["allgather"], algos=["toy", "ring"])
    rows = {r["algo"]: r for r in result.rows}
    assert result.algos == ["toy", "ring"]                            # rank 5 runs before ring's 10
    assert rows["toy"]["status"] == "ok" and rows["toy"]["exportable"] is True
    built = synthesize(load("ring(6)"), "toy", "allgather", options={"rounds": 2})
    text, report = export(built.topology, built.schedule)
    assert report.ranks == 6 and "<algo" in text


def test_options_are_checked_against_their_declaration():
    tacos = ALGORITHMS["tacos"]
    with pytest.raises(NotApplicable, match="takes chunks, restarts, seed, unwind_degree, not colour"):
        tacos.options_from({"colour": "red"})
    with pytest.raises(NotApplicable, match="--restarts must be at least 1"):
        tacos.options_from({"restarts": 0})
    assert tacos.options_from({"chunks": 2}).chunks == 2
    assert [s.flag for s in ALGORITHMS["forestcoll"].option_specs()] == ["--fixed-k"]
