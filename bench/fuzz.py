"""Fuzzing every input a user hands the studio (issue 23): each gives a result or one error of the project's own
type, never a traceback, a hang or a memory blow-up.

    python -m bench.fuzz                        # 10,000 expressions and 1,000 files of each kind
    python -m bench.fuzz --expressions 500 --files 100 --seed 7

Inputs, all from one seeded ``random.Random``: design expressions (random calls of the expression language's
families, with small, zero, negative, huge and malformed arguments, nested, then mutated character by
character), and files made by mutating valid ones: topology JSON and GraphML, an exported MSCCL XML program and a
TE-CCL demand matrix (numbers replaced by hostile ones: negative, past 32 and 64 bits, 5,000 digits, ``1e309``,
``NaN``; flipped, deleted, repeated and inserted spans; hostile tokens such as ``<!DOCTYPE``). ``TARGETS`` holds, per input kind, the entry point the app and the CLI call
and the errors it may raise; the tests (tests/test_fuzz.py) drive the same targets with hypothesis.

The table: per kind, inputs tried, how many gave a result, how many a clean error, tracebacks (any other
exception), inputs slower than ``SLOW_S``, the slowest input's seconds; then the peak memory of the process.
"""
from __future__ import annotations

import argparse
import random
import re
import resource
import time
import traceback
from dataclasses import dataclass
from typing import Callable

SLOW_S = 10.0
MAX_NODES = 1024                 # the app's limit on a design (the CLI's default is larger)
HOSTILE = ["1e309", "NaN", "-1", "0", "99999999999999999999", "9" * 5000, '"', "'", "<", ">", "&", "&amp;",
           "<!DOCTYPE x [<!ENTITY a \"b\">]>", "\x00", "\ufeff", "é", "[", "]", "{", "}", ",", "(", ")", "=",
           "\n", "    ", "<gpu", "</tb>", "null", "true", "-0", "1.5", "[[]]"]


@dataclass(frozen=True)
class Target:
    """An input kind: ``run(text)`` is what the app and the CLI do with such an input; ``clean`` the exception
    types it may end in (anything else is a traceback a user would see)."""

    name: str
    run: Callable[[str], object]
    clean: tuple


def _expression(text: str):
    from topologies import parse_topology

    return parse_topology(text, max_nodes=MAX_NODES)


def _json(text: str):
    from topologies.files import from_json

    return from_json(text)


def _graphml(text: str):
    from topologies.files import from_graphml

    return from_graphml(text)


def _msccl(text: str):
    from solvers.export import check_xml

    from solvers.export import XmlError

    report = check_xml(text)         # never raises: a bad file is a report that says why
    if not report.ok:
        if not report.first or "\n" in report.first:
            raise AssertionError(f"a rejected file needs a one-line reason, got {report.first!r}")
        raise XmlError(report.first)             # counted as the clean refusal it is
    return report


def _demand(text: str):
    from solvers.teccl import read_demand_matrix
    from solvers.teccl.instance import matrix_demand
    from topologies import load

    return matrix_demand(load("ring(4)"), read_demand_matrix(text))     # as the page and CLI use it


def targets() -> dict[str, Target]:
    from solvers.core.errors import NotApplicable, ScheduleError
    from solvers.export import XmlError
    from topologies import TopologyError

    return {t.name: t for t in (
        Target("expression", _expression, (TopologyError,)),
        Target("json", _json, (TopologyError,)),
        Target("graphml", _graphml, (TopologyError,)),
        Target("msccl-xml", _msccl, (XmlError,)),
        Target("demand-csv", _demand, (NotApplicable, ScheduleError)),
    )}


def samples() -> dict[str, str]:
    """A valid input of each file kind, the seed of its mutations."""
    from solvers.export import export
    from solvers.synthesize import synthesize
    from topologies import load
    from topologies.files import to_graphml, to_json

    topo = load("torus(2,3)")
    r = synthesize(load("ring(4)"), "ring", "allreduce", total_bytes=1e6)
    text, _ = export(r.topology, r.schedule)
    return {"json": to_json(topo), "graphml": to_graphml(topo), "msccl-xml": text,
            "demand-csv": "0,1,0,2\n1,0,1,0\n0,0,0,1\n3,0,1,0\n"}


def mutate(text: str, rng: random.Random, edits: int) -> str:
    """``text`` with ``edits`` random edits: a span deleted, repeated or replaced, a character flipped, or a
    hostile token inserted."""
    for _ in range(edits):
        if not text:
            text = rng.choice(HOSTILE)
            continue
        i = rng.randrange(len(text))
        j = min(len(text), i + rng.choice([1, 1, 2, 5, 20, 200]))
        op = rng.randrange(5)
        if op == 0:
            text = text[:i] + text[j:]
        elif op == 1:
            text = text[:j] + text[i:j] * rng.choice([2, 3, 50]) + text[j:]
        elif op == 2:
            text = text[:i] + chr(rng.choice([rng.randrange(32, 127), rng.randrange(0, 0x3000)])) + text[i + 1:]
        else:
            text = text[:i] + rng.choice(HOSTILE) + text[i:]
    return text


NUMBERS = ["-1", "0", "-0", "2147483648", "4294967296", "100000000000000000000", "9" * 5000, "1e309", "-1e309",
           "NaN", "1.5", "0.0001", "3", "64"]


def mutate_values(text: str, rng: random.Random, edits: int) -> str:
    """``text`` with ``edits`` of its numbers (runs of digits) replaced by hostile ones: negative, zero, past
    32 and 64 bits, thousands of digits, infinite, not a number, fractional."""
    runs = [m.span() for m in re.finditer(r"\d+", text)]
    for start, end in sorted(rng.sample(runs, min(edits, len(runs))), reverse=True):
        text = text[:start] + rng.choice(NUMBERS) + text[end:]
    return text


def random_file(sample: str, rng: random.Random) -> str:
    """A mutation of ``sample``: its numbers made hostile, random edits, or both."""
    how = rng.randrange(3)
    if how != 1:
        sample = mutate_values(sample, rng, rng.choice([1, 1, 2, 5]))
    if how != 0:
        sample = mutate(sample, rng, rng.choice([1, 1, 2, 3, 8]))
    return sample


def random_expression(rng: random.Random, depth: int = 0) -> str:
    """A random call of the expression language (module docstring), sometimes mutated."""
    from topologies.expression import FAMILIES

    def arg() -> str:
        kind = rng.randrange(8)
        if kind < 3:
            return str(rng.choice([0, 1, 2, 3, 4, 5, 8, 16, -1, -3, 64, 1000, 10 ** 6, 10 ** 30]))
        if kind == 3:
            return "[" + ",".join(str(rng.randrange(-2, 9)) for _ in range(rng.randrange(0, 4))) + "]"
        if kind == 4 and depth < 3:
            return random_expression(rng, depth + 1)
        if kind == 5:
            return f"{rng.choice(['bw', 'alpha_ns', 'gib', 'm', 'boxes', 'x'])}={rng.randrange(-1, 30)}"
        return rng.choice(["", "x", "2.5", "()", "ring", "1e3"])

    name = rng.choice(list(FAMILIES) + ["nosuch", "RING", "_"])
    text = f"{name}({','.join(arg() for _ in range(rng.randrange(0, 4)))})"
    if depth == 0 and rng.random() < 0.3:
        text = mutate(text, rng, rng.randrange(1, 4))
    return text


@dataclass
class Tally:
    tried: int = 0
    results: int = 0
    clean: int = 0
    tracebacks: int = 0
    slow: int = 0
    slowest_s: float = 0.0
    slowest: str = ""
    kinds: dict = None             # (exception, where) -> an input that raised it

    def __post_init__(self):
        self.kinds = {}


def check(target: Target, text: str, tally: Tally) -> None:
    """Run one input, counting how it ended."""
    start = time.perf_counter()
    tally.tried += 1
    try:
        target.run(text)
        tally.results += 1
    except target.clean:
        tally.clean += 1
    except Exception as exc:         # the failures this script is looking for
        tally.tracebacks += 1
        where = traceback.extract_tb(exc.__traceback__)[-1]
        tally.kinds.setdefault((type(exc).__name__, f"{where.filename.rsplit('/', 2)[-1]}:{where.lineno}"),
                               (text[:120], str(exc)[:120]))
    spent = time.perf_counter() - start
    if spent > tally.slowest_s:
        tally.slowest_s, tally.slowest = spent, text[:120]
    tally.slow += spent > SLOW_S


def main() -> None:
    parser = argparse.ArgumentParser(description=__doc__.splitlines()[0])
    parser.add_argument("--expressions", type=int, default=10_000, help="expressions to try (default 10,000)")
    parser.add_argument("--files", type=int, default=1_000, help="files of each kind to try (default 1,000)")
    parser.add_argument("--seed", type=int, default=23, help="random seed (default 23)")
    args = parser.parse_args()
    rng = random.Random(args.seed)
    kinds = targets()
    tallies = {name: Tally() for name in kinds}
    for _ in range(args.expressions):
        check(kinds["expression"], random_expression(rng), tallies["expression"])
    for name, text in samples().items():
        for _ in range(args.files):
            check(kinds[name], random_file(text, rng), tallies[name])
    print(f"{'input':<11} {'tried':>6} {'results':>7} {'clean errors':>12} {'tracebacks':>10} "
          f"{'over 10 s':>9} {'slowest s':>9}")
    for name, t in tallies.items():
        print(f"{name:<11} {t.tried:>6} {t.results:>7} {t.clean:>12} {t.tracebacks:>10} {t.slow:>9} "
              f"{t.slowest_s:>9.3f}")
    print(f"peak memory {resource.getrusage(resource.RUSAGE_SELF).ru_maxrss / 1024:.0f} MB (seed {args.seed})")
    for name, t in tallies.items():
        if t.slow:
            print(f"slowest ({name}): {t.slowest!r} in {t.slowest_s:.1f} s")
        for (exc, where), (text, message) in t.kinds.items():
            print(f"traceback ({name}): {exc} at {where}: {message!r} from {text!r}")


if __name__ == "__main__":
    main()
