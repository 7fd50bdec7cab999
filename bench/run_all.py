"""Run every benchmark in bench/ and write their tables into one Markdown report.

    python -m bench.run_all                       # every script with its defaults -> bench/RESULTS.md
    python -m bench.run_all --quick               # the quicker variants (existing flags) and a 180 s cap each
    python -m bench.run_all --only finder,tacos -o /tmp/results.md
    python -m bench.run_all --list                # the scripts and the command each would run
    python -m bench.run_all --args "teccl=--time-limit 60" --timeout 900

Each script runs in its own process as a module (``python -m bench.NAME``: this interpreter, the repository
root as working directory, so the packages import from there) and prints one whitespace-aligned table. Its
columns are found from the alignment and written as a Markdown table. Lines that do not belong to the table
(totals, notes) follow it as text, and output that cannot be read as a table is kept as a code block. A script
that passes its timeout is stopped. Its output so far is still reported, with the section marked as timed out.
The report also records the date, the machine (CPUs, processor, platform) and the Python version.
"""
from __future__ import annotations

import argparse
import ast
import datetime as _dt
import os
import platform
import re
import shlex
import signal
import subprocess
import sys
import tempfile
import time
from dataclasses import dataclass, field
from pathlib import Path

BENCH = Path(__file__).resolve().parent
ROOT = BENCH.parent
DEFAULT_OUTPUT = BENCH / "RESULTS.md"
DEFAULT_TIMEOUT = 1800.0        # seconds per script
QUICK_TIMEOUT = 180.0

# The quicker variant of each script, using only flags the script already has (a script that gains a --quick flag
# gets it automatically). Scripts without such a flag run their defaults, bounded by the timeout.
QUICK_ARGS: dict[str, list[str]] = {
    "bfb": ["--repeat", "1"],
    "finder": ["--max-nodes", "256"],
    "fuzz": ["--expressions", "1000", "--files", "100"],
    "load": ["--sessions", "5"],
    "widget_cost": ["--sessions", "2"],
    "teccl": ["--time-limit", "30"],
}


# ------------------------------------------------------------------------------------------- the scripts
@dataclass
class Script:
    name: str
    path: Path
    summary: str
    has_quick: bool

    def args(self, quick: bool, overrides: dict[str, list[str]]) -> list[str]:
        if self.name in overrides:
            return list(overrides[self.name])
        if not quick:
            return []
        return ["--quick"] if self.has_quick else list(QUICK_ARGS.get(self.name, []))

    @property
    def module(self) -> str | None:
        """The dotted module name under the repository root (``bench.finder``), or None for a script elsewhere
        (run by its path)."""
        path = self.path.resolve()
        if not path.is_relative_to(ROOT) or path.suffix != ".py":
            return None
        parts = path.relative_to(ROOT).with_suffix("").parts
        return ".".join(parts) if all(p.isidentifier() for p in parts) else None

    def argv(self, args: list[str]) -> list[str]:
        """The interpreter's arguments: ``-m bench.NAME`` (run from the repository root), else the path."""
        return (["-m", self.module] if self.module else [str(self.path)]) + list(args)

    def command(self, args: list[str]) -> str:
        """The command as a person would type it from the repository root."""
        return shlex.join(["python", *self.argv(args)])


def discover(bench_dir: Path = BENCH) -> list[Script]:
    """Every benchmark script in ``bench_dir`` (not this runner, not private ``_*.py`` helpers), by name."""
    scripts = []
    for path in sorted(bench_dir.glob("*.py")):
        if path.name.startswith("_") or path.resolve() == Path(__file__).resolve():
            continue
        source = path.read_text(encoding="utf-8")
        try:
            doc = ast.get_docstring(ast.parse(source)) or ""
        except SyntaxError:
            doc = ""
        summary = " ".join(doc.strip().split("\n\n")[0].split())     # the docstring's first paragraph
        scripts.append(Script(path.stem, path, summary, '"--quick"' in source or "'--quick'" in source))
    return scripts


def select(scripts: list[Script], only: str | None) -> list[Script]:
    if not only:
        return scripts
    names = [n.strip().removesuffix(".py") for n in only.split(",") if n.strip()]
    known = {s.name: s for s in scripts}
    unknown = [n for n in names if n not in known]
    if unknown:
        raise SystemExit(f"run_all: unknown benchmark(s) {', '.join(unknown)} (choose from {', '.join(known)})")
    return [known[n] for n in dict.fromkeys(names)]


def parse_overrides(items: list[str]) -> dict[str, list[str]]:
    out = {}
    for item in items:
        name, sep, args = item.partition("=")
        if not sep or not name.strip():
            raise SystemExit(f"run_all: --args takes NAME=ARGS, got {item!r}")
        out[name.strip().removesuffix(".py")] = shlex.split(args)
    return out


# ------------------------------------------------------------------------------------------- running
@dataclass
class Run:
    script: Script
    args: list[str]
    seconds: float
    returncode: int | None          # None: stopped at the timeout
    stdout: str
    stderr: str
    timeout: float

    @property
    def status(self) -> str:
        if self.returncode is None:
            return f"timed out after {self.timeout:g} s (partial output)"
        return "ok" if self.returncode == 0 else f"failed (exit code {self.returncode})"


def run_script(script: Script, args: list[str], timeout: float) -> Run:
    """Run one script; its output goes to temporary files, so what it printed before a timeout is kept."""
    with tempfile.TemporaryFile("w+b") as out, tempfile.TemporaryFile("w+b") as err:
        env = dict(os.environ, PYTHONUNBUFFERED="1", PYTHONIOENCODING="utf-8")
        start = time.perf_counter()
        proc = subprocess.Popen([sys.executable, *script.argv(args)], cwd=ROOT, stdout=out, stderr=err,
                                stdin=subprocess.DEVNULL, env=env, start_new_session=True)
        try:
            code: int | None = proc.wait(timeout=timeout)
        except subprocess.TimeoutExpired:
            code = None
            _stop(proc)
        seconds = time.perf_counter() - start
        out.seek(0)
        err.seek(0)
        return Run(script, args, seconds, code, out.read().decode("utf-8", "replace"),
                   err.read().decode("utf-8", "replace"), timeout)


def _stop(proc: subprocess.Popen) -> None:
    """Stop the script and what it started (its own session), politely first."""
    for sig, wait in ((signal.SIGTERM, 5), (signal.SIGKILL, 5)):
        try:
            os.killpg(proc.pid, sig)
        except ProcessLookupError:
            return
        try:
            proc.wait(timeout=wait)
            return
        except subprocess.TimeoutExpired:
            continue


# ------------------------------------------------------------------------------------------- tables
@dataclass
class Table:
    header: list[str]
    rows: list[list[str]]
    numeric: list[bool]
    before: list[str] = field(default_factory=list)    # lines printed before the header
    after: list[str] = field(default_factory=list)     # lines that are not rows (notes, totals), in order


_NUMBER = re.compile(r"[-+]?(\d+(\.\d*)?|\.\d+)([eE][-+]?\d+)?\s*(x|%|s)?")


def _is_number(cell: str) -> bool:
    return bool(_NUMBER.fullmatch(cell))


def _tokens(line: str) -> list[tuple[int, int]]:
    return [(m.start(), m.end()) for m in re.finditer(r"\S+", line)]


def _anchored(header: str, line: str) -> float:
    """The share of the line's words that line up with the header: a value ends where a (right-aligned) header
    word ends, or starts where a (left-aligned) header word starts. Rows of the table score high (only text
    values with inner spaces lose points); prose printed after the table scores low."""
    starts = {s for s, _ in _tokens(header)}
    ends = {e for _, e in _tokens(header)}
    words = _tokens(line)
    hits = sum(s in starts or e in ends for s, e in words)
    return hits / len(words) if hits >= 2 else 0.0


def _looks_like_header(line: str) -> bool:
    words = line.split()
    return len(words) >= 2 and sum(_is_number(w) for w in words) <= len(words) // 3


def _spans(block: list[str]) -> list[tuple[int, int]]:
    """Maximal runs of character positions that are not blank in every line of ``block``."""
    width = max(len(l) for l in block)
    blank = [all(i >= len(l) or l[i] == " " for l in block) for i in range(width)]
    spans, i = [], 0
    while i < width:
        if blank[i]:
            i += 1
            continue
        j = i
        while j < width and not blank[j]:
            j += 1
        spans.append((i, j))
        i = j
    return spans


def parse_table(text: str, min_anchor: float = 0.5) -> Table | None:
    """A whitespace-aligned table (a header line, then rows) read into columns, or None where the text is not
    one. Column borders are the character positions that are blank in the header and in every row, so labels
    and values with inner spaces ('ours s', 'random 4-regular, N=4096') stay whole. Lines after the header that
    do not line up with it (totals, notes) are kept apart, in order."""
    lines = [l.rstrip() for l in text.expandtabs().splitlines()]
    start = next((i for i, l in enumerate(lines) if l.strip()), None)
    if start is None or not _looks_like_header(lines[start]):
        return None
    header = lines[start]
    rows, after = [], []
    for line in lines[start + 1:]:
        if not line.strip():
            continue
        (rows if _anchored(header, line) >= min_anchor else after).append(line)
    if not rows:
        return None
    spans = _spans([header] + rows)
    has_label = [bool(header[s:e].strip()) for s, e in spans]
    has_data = [any(l[s:e].strip() for l in rows) for s, e in spans]
    # group spans into columns: the words of one label are one space apart in the header, and a label word
    # with no value under it belongs to the value beside it (right-aligned labels overhang to the left); a
    # value with no label one space after the previous span continues that column (a left-aligned text with
    # spaces), and further off it is a column of its own with no label (a remark such as 'NOT VERIFIED')
    columns: list[list[int]] = []
    for k in range(len(spans)):
        near = k > 0 and spans[k][0] - spans[k - 1][1] == 1
        if columns and near and (not has_label[k] or (has_label[k - 1] and not has_data[k - 1])):
            columns[-1].append(k)
        else:
            columns.append([k])
    if not has_label[columns[0][0]] or len(columns) < 2:
        return None

    def cell(line: str, col: list[int]) -> str:
        return line[spans[col[0]][0]:spans[col[-1]][1]].strip()

    names = [cell(header, col) for col in columns]
    table_rows = [[cell(l, col) for col in columns] for l in rows]
    # two labels fused into one column, or two values in one cell: the alignment was not understood
    if any("  " in c for c in names) or any("  " in c for r in table_rows for c in r):
        return None
    numeric = [all(_is_number(r[k]) or r[k] in ("", "-") for r in table_rows) and
               any(_is_number(r[k]) for r in table_rows) for k in range(len(columns))]
    return Table(names, table_rows, numeric, [], after)


def _md_cell(text: str) -> str:
    return text.replace("\\", "\\\\").replace("|", "\\|") or " "


def table_markdown(table: Table) -> str:
    out = ["| " + " | ".join(_md_cell(h) for h in table.header) + " |",
           "|" + "|".join("---:" if num else ":---" for num in table.numeric) + "|"]
    out += ["| " + " | ".join(_md_cell(c) for c in row) + " |" for row in table.rows]
    return "\n".join(out)


def _fence(text: str, info: str = "text") -> str:
    ticks = "```"
    while ticks in text:
        ticks += "`"
    return f"{ticks}{info}\n{text.rstrip()}\n{ticks}"


def output_markdown(stdout: str) -> str:
    """A script's printed output as Markdown: the table with any other lines as text, or all of it verbatim."""
    if not stdout.strip():
        return "_(no output)_"
    table = parse_table(stdout)
    if table is None:
        return _fence(stdout)
    parts = []
    if table.before:
        parts.append(_fence("\n".join(table.before)))
    parts.append(table_markdown(table))
    if table.after:
        parts.append(_fence("\n".join(table.after)))
    return "\n\n".join(parts)


# ------------------------------------------------------------------------------------------- the report
def machine() -> dict[str, str]:
    cpus = os.cpu_count() or 0
    try:
        usable = len(os.sched_getaffinity(0))
    except AttributeError:
        usable = cpus
    model = platform.processor() or ""
    try:
        for line in Path("/proc/cpuinfo").read_text().splitlines():
            if line.lower().startswith("model name"):
                model = line.split(":", 1)[1].strip()
                break
    except OSError:
        pass
    return {"CPUs": f"{cpus}" + (f" ({usable} usable by this process)" if usable != cpus else ""),
            "Processor": model or "unknown", "Platform": platform.platform(),
            "Python": f"{platform.python_version()} ({platform.python_implementation()})"}


def report(runs: list[Run], started: _dt.datetime, quick: bool) -> str:
    lines = ["# Benchmark results", "",
             f"Written by `python -m bench.run_all` on {started.strftime('%Y-%m-%d %H:%M %Z').strip()}"
             f"{' (--quick variants)' if quick else ''}. Timings are from this one run on this machine.", ""]
    lines += [f"- {k}: {v}" for k, v in machine().items()]
    lines += ["", "| benchmark | command | wall time (s) | status |", "|:---|:---|---:|:---|"]
    for r in runs:
        lines.append(f"| [{r.script.name}](#{r.script.name}) | `{_md_cell(r.script.command(r.args))}` | "
                     f"{r.seconds:.1f} | {_md_cell(r.status)} |")
    for r in runs:
        lines += ["", f"## {r.script.name}", ""]
        if r.script.summary:
            lines += [r.script.summary, ""]
        lines += [f"- Command: `{r.script.command(r.args)}`", f"- Wall time: {r.seconds:.1f} s",
                  f"- Status: {r.status}", "", output_markdown(r.stdout)]
        if r.returncode != 0 and r.stderr.strip():
            tail = "\n".join(r.stderr.strip().splitlines()[-15:])
            lines += ["", "Last lines on stderr:", "", _fence(tail)]
    return "\n".join(lines) + "\n"


def main(argv: list[str] | None = None) -> int:
    ap = argparse.ArgumentParser(description=__doc__.splitlines()[0],
                                 formatter_class=argparse.RawDescriptionHelpFormatter,
                                 epilog="\n".join(__doc__.splitlines()[1:]))
    ap.add_argument("-o", "--output", type=Path, default=DEFAULT_OUTPUT, help="the Markdown file (default %(default)s)")
    ap.add_argument("--only", metavar="NAME[,NAME]", help="run these benchmarks only (script names without .py)")
    ap.add_argument("--list", action="store_true", help="list the benchmarks and their commands, run nothing")
    ap.add_argument("--quick", action="store_true",
                    help="each script's quicker variant where it has one, and a %g s timeout each" % QUICK_TIMEOUT)
    ap.add_argument("--timeout", type=float, default=None,
                    help=f"seconds per script before it is stopped (default {DEFAULT_TIMEOUT:g}; "
                         f"{QUICK_TIMEOUT:g} with --quick)")
    ap.add_argument("--args", action="append", default=[], metavar="NAME=ARGS",
                    help='the arguments for one script instead of its defaults, e.g. "finder=--max-nodes 64"')
    args = ap.parse_args(argv)
    if args.timeout is not None and args.timeout <= 0:
        ap.error("--timeout must be positive")
    overrides = parse_overrides(args.args)
    scripts = discover()
    chosen = select(scripts, args.only)
    unknown = sorted(set(overrides) - {s.name for s in scripts})
    if unknown:
        ap.error(f"--args names unknown benchmark(s): {', '.join(unknown)}")

    if args.list:
        for s in chosen:
            summary = s.summary if len(s.summary) <= 90 else s.summary[:87] + "..."
            print(f"{s.name:<12} {s.command(s.args(args.quick, overrides)):<48} {summary}")
        return 0

    timeout = args.timeout if args.timeout is not None else (QUICK_TIMEOUT if args.quick else DEFAULT_TIMEOUT)
    started = _dt.datetime.now().astimezone()
    runs = []
    for k, s in enumerate(chosen, 1):
        cmd_args = s.args(args.quick, overrides)
        print(f"[{k}/{len(chosen)}] {s.command(cmd_args)} ...", file=sys.stderr, flush=True)
        run = run_script(s, cmd_args, timeout)
        print(f"[{k}/{len(chosen)}] {s.name}: {run.status}, {run.seconds:.1f} s", file=sys.stderr, flush=True)
        runs.append(run)
    text = report(runs, started, args.quick)
    args.output.parent.mkdir(parents=True, exist_ok=True)
    args.output.write_text(text, encoding="utf-8")
    print(f"wrote {args.output}", file=sys.stderr)
    return 0 if all(r.returncode == 0 for r in runs) else 1


if __name__ == "__main__":
    sys.exit(main())
