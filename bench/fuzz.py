"""Fuzzing every input a user hands the studio (issues 23 and 39): each gives a result or one error of the
project's own type, never a traceback, a hang or a memory blow-up.

    python -m bench.fuzz                        # 10,000 expressions and 10,000 files of each kind
    python -m bench.fuzz --expressions 500 --files 100 --seed 7

Inputs, all from one seeded ``random.Random``: design expressions (random calls of the expression language's
families, with small, zero, negative, huge and malformed arguments, nested, then mutated character by
character), and files made by mutating valid ones: topology JSON and GraphML, an exported MSCCL XML program, a
TE-CCL demand matrix, an NCCL graph file, the machine descriptions of examples/ (NCCL topology XML, nvidia-smi
topo -m, rocm-smi --showtopo), a benchmark log (read, then calibrated), a price file (``--prices FILE``) and a
``failures -o`` rows file read back to resume (issue 58) (numbers replaced by hostile ones: negative, past 32 and
64 bits, 300 and 5,000 digits, ``1e308``, ``1e309``, ``NaN``; flipped, deleted, repeated and inserted spans;
hostile tokens such as ``<!DOCTYPE``). ``TARGETS`` holds, per input kind, the entry point the app and the CLI call
and the errors it may raise; the tests (tests/test_fuzz.py) drive the same targets with hypothesis.

Each kind runs in a worker process of its own, one input at a time, under a watchdog: an input still running
after ``SLOW_S`` seconds counts as a hang (a big-integer computation in C cannot be interrupted in the process
itself), its worker is killed and a fresh one takes the next input. A worker may use at most ``MEMORY_BYTES`` of
address space, so a blow-up ends in MemoryError (a traceback) instead of taking the machine.

The table: per kind, inputs tried, how many gave a result, how many a clean error, tracebacks (any other
exception), hangs (over ``SLOW_S``), the slowest input's seconds and the peak resident memory of its workers.
"""
from __future__ import annotations

import argparse
import multiprocessing
from pathlib import Path
import random
import re
import resource
import time
import traceback
from dataclasses import dataclass
from typing import Callable

SLOW_S = 10.0
MEMORY_BYTES = 4 << 30           # address space a worker may take (numpy and the solvers map ~1 GB at import)
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


def _nccl_graph(text: str):
    from solvers.export.nccl_graph import GraphError, check_graph
    from topologies import load

    report = check_graph(text, load("hypercube(4)"))     # never raises: a bad file is a list of problems
    if not report.ok:
        if any(not p or "\n" in p for p in report.problems):
            raise AssertionError(f"every problem needs one line, got {report.problems[:3]!r}")
        raise GraphError(report.first)
    return report


def _demand(text: str):
    from solvers.teccl import read_demand_matrix
    from solvers.teccl.instance import matrix_demand
    from topologies import load

    return matrix_demand(load("ring(4)"), read_demand_matrix(text))     # as the page and CLI use it


def _nccl_topo(text: str):
    from topologies.nccl_topo import from_nccl_topology

    return from_nccl_topology(text, "fuzz.xml", max_nodes=MAX_NODES)


def _nvidia_smi(text: str):
    from topologies.imports import import_texts

    return import_texts([("fuzz.txt", text)], max_nodes=MAX_NODES)       # as the upload and the CLI read a .txt


def _rocm_smi(text: str):
    from topologies.rocm_smi import from_rocm_smi

    return from_rocm_smi(text)


def _bench_log(text: str):
    """A benchmark log read, then fitted as ``calibrate`` does (the ring on ring(4), of the collective the log
    names first); the fit's own refusals are one-line ValueErrors that start "the log" or "the fit", anything else
    is a traceback."""
    from solvers.runtime.calibrate import FitError, calibrate
    from solvers.runtime.measured import LogError, read_bench_log
    from solvers.synthesize import synthesize
    from topologies import load

    log = read_bench_log(text.encode("utf-8", "surrogatepass"))
    if not log.collectives:
        return log
    coll = log.collectives[0]
    r = synthesize(load("ring(4)"), "ring", coll)
    try:
        return calibrate(r.topology, r.schedule, log, detail=False)
    except FitError as exc:
        if "\n" in str(exc) or not str(exc).startswith(("the log", "the fit")):
            raise AssertionError(f"a failed fit needs one line starting 'the log' or 'the fit': {exc}") from None
        raise                                   # a clean refusal (``targets``)
    except ValueError as exc:
        if "\n" in str(exc) or not str(exc).startswith("the log"):
            raise
        raise LogError(str(exc)) from None


def _price_file(text: str):
    """A price file as ``--prices FILE`` and the Prices panel's upload read it."""
    from solvers.runtime.workload import read_price_file

    return read_price_file(text.encode("utf-8", "surrogatepass"))


PROFILE_DESIGN = "biring(4)"
ROWS_RUN = dict(algos=("ring",), expr="biring(4)", kind="links", gpus=4,
                stamp={"collective": "allreduce", "bytes": 1000000.0, "prices": "uniform alpha 10 µs, B 12.5 GB/s per "
                       "node"})


def _rows_file(text: str):
    """A ``failures -o rows.csv`` file read back to resume a run (``solvers.failures.read_rows_file``, the public
    reader the failures command calls), from a file of this worker's own."""
    import os
    import tempfile

    from solvers.failures import read_rows_file

    path = Path(tempfile.gettempdir()) / f"fuzz-rows-{os.getpid()}.csv"
    path.write_bytes(text.encode("utf-8", "surrogatepass"))
    try:
        return read_rows_file(path, ROWS_RUN["algos"], ROWS_RUN["stamp"], ROWS_RUN["expr"], ROWS_RUN["kind"],
                              ROWS_RUN["gpus"])
    finally:
        path.unlink(missing_ok=True)


def _profile(text: str):
    """A training profile as ``train --profile FILE`` and the Training page's upload read it
    (``solvers.training.parse_profile``), then one iteration simulated on it: the numbers it let through must not
    break the simulator either."""
    from solvers.training import parse_profile, simulate_iteration

    layers = parse_profile(text, "profile")
    return simulate_iteration("profile", PROFILE_DESIGN, "dp", profile=layers)


def _rows_sample() -> str:
    """A rows file as ``failures biring(4) --links 1 --algo ring -o rows.csv`` writes it (the healthy design and
    every single failed cable), made here without the results cache."""
    import csv
    import io
    import os

    from solvers.failures import FailureTask, analyse, failure_sets, row_columns
    from solvers.runtime.workload import DEFAULT
    from topologies import load

    run = ROWS_RUN
    saved = os.environ.get("TOPOLOGY_STUDIO_CACHE")
    os.environ["TOPOLOGY_STUDIO_CACHE"] = "off"
    try:
        sets = failure_sets(load(run["expr"]), run["kind"], 1, None, 0)
        tasks = [()] + [tuple(e.name for e in s) for s in sets]
        rows = [analyse(FailureTask(run["expr"], run["kind"], failed, run["algos"], "allreduce", DEFAULT.key,
                                    refresh=True)) for failed in tasks]
    finally:
        if saved is None:
            os.environ.pop("TOPOLOGY_STUDIO_CACHE", None)
        else:
            os.environ["TOPOLOGY_STUDIO_CACHE"] = saved
    out = io.StringIO()
    writer = csv.DictWriter(out, row_columns(run["algos"]), extrasaction="ignore", lineterminator="\n")
    writer.writeheader()
    for row in rows:
        writer.writerow({**row, **run["stamp"]})
    return out.getvalue()


def targets() -> dict[str, Target]:
    from solvers.core.errors import NotApplicable, ScheduleError
    from solvers.export import XmlError
    from solvers.export.nccl_graph import GraphError
    from solvers.failures import FailureError
    from solvers.runtime.calibrate import FitError
    from solvers.runtime.measured import LogError
    from solvers.runtime.workload import WorkloadError
    from solvers.training import TrainingError
    from topologies import TopologyError

    return {t.name: t for t in (
        Target("nccl-topo", _nccl_topo, (TopologyError,)),
        Target("nvidia-smi", _nvidia_smi, (TopologyError,)),
        Target("rocm-smi", _rocm_smi, (TopologyError,)),
        Target("bench-log", _bench_log, (LogError, FitError)),
        Target("price-file", _price_file, (WorkloadError,)),
        Target("rows-file", _rows_file, (FailureError,)),
        Target("training-profile", _profile, (TrainingError,)),
        Target("expression", _expression, (TopologyError,)),
        Target("json", _json, (TopologyError,)),
        Target("graphml", _graphml, (TopologyError,)),
        Target("msccl-xml", _msccl, (XmlError,)),
        Target("nccl-graph", _nccl_graph, (GraphError,)),
        Target("demand-csv", _demand, (NotApplicable, ScheduleError)),
    )}


def samples() -> dict[str, str]:
    """A valid input of each file kind, the seed of its mutations."""
    from solvers.export import export
    from solvers.synthesize import synthesize
    from topologies import load
    from topologies.files import to_graphml, to_json

    topo = load("dgx1()")            # links with bandwidths and alphas, the numbers worth making hostile
    r = synthesize(load("ring(4)"), "ring", "allreduce", total_bytes=1e6)
    text, _ = export(r.topology, r.schedule)
    from solvers.export.nccl_graph import export_graph

    graph, _ = export_graph(load("hypercube(4)"))
    examples = Path(__file__).resolve().parents[1] / "examples"
    log = (examples / "nccl-tests-allreduce-16.log").read_text().splitlines()
    rows = [line for line in log if line.strip() and not line.startswith("#")]
    short = "\n".join([line for line in log if line.startswith("# Collective")] + rows[8:16]) + "\n"
    return {"json": to_json(topo), "graphml": to_graphml(topo), "msccl-xml": text, "nccl-graph": graph,
            "demand-csv": "0,1,0,2\n1,0,1,0\n0,0,0,1\n3,0,1,0\n",
            "nccl-topo": (examples / "nccl-topo-dgx-a100.xml").read_text(),
            "nvidia-smi": (examples / "nvidia-smi-topo-8gpu.txt").read_text(),
            "rocm-smi": (examples / "rocm-smi-showtopo-8gpu.txt").read_text(), "bench-log": short,
            "price-file": '{"alpha_us": 6.25, "bandwidth_gbs": 40.5, "source": "ring fit to a log"}\n',
            "rows-file": _rows_sample(),
            "training-profile": (examples / "training-profile-gpt2-small.csv").read_text()}


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
           "NaN", "1.5", "0.0001", "3", "64", "1e9999999", "1e999999999", "1e-400", "Infinity", "-Infinity", "0x10",
           "010", "\u0661", "\uff11\uff10", "1_0", " 1", "+1", "1e-9999999", '"1e9999999"', '"1e999999999"',
           '"1e-400"', '"NaN"', '"Infinity"', "9" * 300, "-" + "9" * 300, "18446744073709551616", "1e308", "1e20",
           "4.9e-324", "1e-30", "0.000", "3/2"]


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
    peak_mb: float = 0.0
    kinds: dict = None             # (exception, where) -> an input that raised it

    def __post_init__(self):
        self.kinds = {}

    def count(self, text: str, how: str, spent: float, what) -> None:
        """Count one input's outcome (``outcome``'s answer)."""
        if how == "result":
            self.results += 1
        elif how == "clean":
            self.clean += 1
        else:
            self.tracebacks += 1
            self.kinds.setdefault(what[:2], (text[:120], what[2]))
        if spent > self.slowest_s:
            self.slowest_s, self.slowest = spent, text[:120]


def outcome(target: Target, text: str) -> tuple:
    """How one input ends: ("result" | "clean" | "traceback", seconds, (exception, where, message) or None)."""
    start = time.perf_counter()
    try:
        target.run(text)
        how, what = "result", None
    except target.clean:
        how, what = "clean", None
    except Exception as exc:         # the failures this script is looking for (MemoryError included)
        where = traceback.extract_tb(exc.__traceback__)[-1]
        how, what = "traceback", (type(exc).__name__, f"{where.filename.rsplit('/', 2)[-1]}:{where.lineno}",
                                  str(exc)[:120])
    return how, time.perf_counter() - start, what


def _serve(connection, name: str) -> None:
    """A worker: runs the inputs of kind ``name`` it is sent, one at a time, and answers with their outcomes;
    its peak resident memory (MB) when the parent sends None."""
    resource.setrlimit(resource.RLIMIT_AS, (MEMORY_BYTES, MEMORY_BYTES))
    target = targets()[name]
    while True:
        text = connection.recv()
        if text is None:
            connection.send(resource.getrusage(resource.RUSAGE_SELF).ru_maxrss / 1024)
            return
        connection.send(outcome(target, text))


class Runner:
    """The inputs of one kind, each in the worker process under the watchdog (module docstring)."""

    def __init__(self, name: str, tally: Tally):
        self.name, self.tally = name, tally
        self.context = multiprocessing.get_context("fork")
        self.process = self.connection = None

    def _start(self) -> None:
        self.connection, child = self.context.Pipe()
        self.process = self.context.Process(target=_serve, args=(child, self.name), daemon=True)
        self.process.start()
        child.close()

    def _stop(self, kill: bool) -> None:
        if self.process is None:
            return
        if not kill:
            try:
                self.connection.send(None)
                if self.connection.poll(SLOW_S):
                    self.tally.peak_mb = max(self.tally.peak_mb, self.connection.recv())
            except (EOFError, OSError):
                pass
        self.process.kill()
        self.process.join()
        self.process = None

    def check(self, text: str) -> None:
        t = self.tally
        if self.process is None:
            self._start()
        t.tried += 1
        self.connection.send(text)
        if not self.connection.poll(SLOW_S):
            t.slow += 1
            if SLOW_S > t.slowest_s:
                t.slowest_s, t.slowest = SLOW_S, text[:120]
            self._stop(kill=True)             # a hang: the next input gets a fresh worker
            return
        try:
            how, spent, what = self.connection.recv()
        except EOFError:                      # the worker died (e.g. killed by the kernel for memory)
            how, spent, what = "traceback", 0.0, ("worker died", "-", "")
            self._stop(kill=True)
        t.count(text, how, spent, what)

    def close(self) -> None:
        self._stop(kill=False)


def check(target: Target, text: str, tally: Tally) -> None:
    """Run one input in this process, counting how it ended (tests/test_fuzz.py's way, without a watchdog)."""
    how, spent, what = outcome(target, text)
    tally.tried += 1
    tally.count(text, how, spent, what)
    tally.slow += spent > SLOW_S


def main() -> None:
    parser = argparse.ArgumentParser(description=__doc__.splitlines()[0])
    parser.add_argument("--expressions", type=int, default=10_000, help="expressions to try (default 10,000)")
    parser.add_argument("--files", type=int, default=10_000, help="files of each kind to try (default 10,000)")
    parser.add_argument("--seed", type=int, default=23, help="random seed (default 23)")
    parser.add_argument("--kinds", default=None, help="comma list of input kinds (default: all)")
    args = parser.parse_args()
    rng = random.Random(args.seed)
    kinds = targets()
    chosen = list(kinds) if args.kinds is None else [k.strip() for k in args.kinds.split(",") if k.strip()]
    tallies = {name: Tally() for name in chosen}
    seeds = samples()
    for name in chosen:
        runner = Runner(name, tallies[name])
        count = args.expressions if name == "expression" else args.files
        for _ in range(count):
            runner.check(random_expression(rng) if name == "expression" else random_file(seeds[name], rng))
        runner.close()
    print(f"{'input':<11} {'tried':>6} {'results':>7} {'clean errors':>12} {'tracebacks':>10} "
          f"{'over 10 s':>9} {'slowest s':>9} {'peak MB':>8}")
    for name, t in tallies.items():
        print(f"{name:<11} {t.tried:>6} {t.results:>7} {t.clean:>12} {t.tracebacks:>10} {t.slow:>9} "
              f"{t.slowest_s:>9.3f} {t.peak_mb:>8.0f}")
    print(f"seed {args.seed}; each kind in a worker process of its own, {SLOW_S:g} s watchdog")
    for name, t in tallies.items():
        if t.slow:
            print(f"slowest ({name}): {t.slowest!r} in {t.slowest_s:.1f} s")
        for (exc, where), (text, message) in t.kinds.items():
            print(f"traceback ({name}): {exc} at {where}: {message!r} from {text!r}")


if __name__ == "__main__":
    main()
