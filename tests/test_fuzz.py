"""Fuzzing what users hand in (issues 23, 41, 58): design expressions, topology JSON and GraphML, MSCCL XML, TE-CCL
demand matrices, machine descriptions, benchmark logs, price files and failures rows files give a result or one
error of the project's own type, never another exception. The inputs come from bench/fuzz.py's generators,
driven by hypothesis with fixed seeds and a bounded number of examples (the long run, with counts, is
``python -m bench.fuzz``)."""
import warnings

import pytest
from hypothesis import HealthCheck, given, settings
from hypothesis import strategies as st

from bench.fuzz import random_expression, random_file, samples, targets

TARGETS = targets()
SAMPLES = samples()
FUZZ = settings(max_examples=150, deadline=None, derandomize=True,
                suppress_health_check=[HealthCheck.too_slow, HealthCheck.data_too_large])
TOKENS = ["ring", "torus", "line", "power", "degree", "product", "bidir", "gkautz", "circulant", "unwind", "mesh",
          "dgx_a100", "(", ")", "[", "]", ",", "=", "bw", "0", "1", "-1", "4", "8", "99999999999999999999", " ", "é"]


def run(kind: str, text: str) -> None:
    target = TARGETS[kind]
    try:
        with warnings.catch_warnings():
            warnings.simplefilter("ignore")      # networkx warns about GraphML keys without a type
            target.run(text)
    except target.clean as exc:
        assert str(exc).strip() and "Traceback" not in str(exc)


@FUZZ
@given(st.randoms(use_true_random=False))
def test_expressions_from_the_grammar(rng):
    run("expression", random_expression(rng))


@FUZZ
@given(st.lists(st.sampled_from(TOKENS), max_size=30).map("".join))
def test_expressions_of_random_tokens(text):
    run("expression", text)


@pytest.mark.parametrize("kind", sorted(SAMPLES))
def test_mutated_files(kind):
    @FUZZ
    @given(st.randoms(use_true_random=False))
    def one(rng):
        run(kind, random_file(SAMPLES[kind], rng))

    one()


@pytest.mark.parametrize("kind, text", [
    ("expression", "line(8)"), ("expression", "degree(5,-3)"), ("expression", "bidir([3,-1])"),
    ("expression", "product(64,1000000)"), ("expression", "unwind(8,64)"),
    ("json", '{"nodes": [' + "9" * 5000 + "]}"), ("json", "[" * 100_000 + "]" * 100_000),
    ("expression", "doubled_odd(1000000)"), ("expression", "line(ring(4),1000000)"),
    ("expression", "hamming(1000000,1000000)"), ("expression", "kautz(999999,999999)"),
    ("nvidia-smi", "\tGPU0\tGPU" + "9" * 5000 + "\nGPU0\t X \tNV1\n"),
    ("rocm-smi", "=== Link Type between two GPUs ===\n  GPU0  GPU" + "1" * 5000 + "\nGPU0  0  XGMI\n"),
    ("bench-log", "# Collective test starting: all_reduce_perf\n" + "".join(
        f"{m}  0  float  sum  -1  5.0  0.00  0.00  0  5.0  0.00  0.00  0\n" for m in (0, 0, 8))),
    ("bench-log", "# Collective test starting: all_reduce_perf\n" + "".join(
        f"{m}  0  float  sum  -1  5.0  0.00  0.00  0  5.0  0.00  0.00  0\n" for m in (8, 16, "9" * 300))),
    ("bench-log", "# Collective test starting: all_reduce_perf\n" + "".join(
        f"{m}  0  float  sum  -1  {t}  0.00  0.00  0  {t}  0.00  0.00  0\n" for m, t in ((8, 5), (16, 1e308)))),
    ("bench-log", "# Collective test starting: all_reduce_perf\n" + "".join(
        f"{m}  0  float  sum  -1  5.0  0.00  0.00  0  5.0  0.00  0.00  0\n" for m in (64, 64, 64, 64))),
    ("price-file", '{"alpha_us": ' + "9" * 400 + ', "bandwidth_gbs": 10, "source": "x"}'),
    ("price-file", '{"alpha_us": 1, "bandwidth_gbs": -' + "9" * 300 + ', "source": "x"}'),
    ("training-profile", "name,forward_ms,backward_ms,param_bytes,activation_bytes\nl1,-1,2,100,100\n"),
    ("training-profile", "name,forward_ms,backward_ms,param_bytes,activation_bytes\nl1,1,2," + "9" * 400 + ",1\n"),
    ("training-profile", "name,forward_ms,backward_ms,param_bytes,activation_bytes,expert,tokens\nl1,1,2,3,4,1,0\n"),
])
def test_inputs_that_crashed_before(kind, text):
    """Each raised AttributeError, ValueError or RecursionError before issue 23, or ran for minutes computing a
    size of millions of digits or building a million line graphs; three (issue 41) raised Python's ValueError for
    a GPU number of 5,000 digits and for a log of zero-byte rows; the last five (issue 58) raised OverflowError
    for a log size or a price of hundreds of digits, or fitted prices to times of 1e308 us and to a log of one
    size; now one clean error. The training profiles (issue 57) are new: a negative time, a parameter count of 400
    digits, an expert layer routing no tokens."""
    with pytest.raises(TARGETS[kind].clean):
        TARGETS[kind].run(text)


def test_a_rows_file_with_one_field_of_200000_characters_is_one_clean_error():
    """Issue 58: a resumed rows file with one very large field raised ``_csv.Error``."""
    lines = SAMPLES["rows-file"].splitlines()
    text = lines[0] + "\n" + lines[1][:-5] + "x" * 200_000 + "\n"
    with pytest.raises(TARGETS["rows-file"].clean) as caught:
        TARGETS["rows-file"].run(text)
    assert "\n" not in str(caught.value)
