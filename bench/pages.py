"""How fast the app's pages open (issue 40, item 5): the real app (``streamlit run app.py``, bench/app_server.py)
driven by Debian's Chromium through Playwright.

    python -m bench.pages                       # cold, warm and edit passes over every page
    python -m bench.pages --repeat 3 --out pages.md
    python -m bench.pages --profile             # what a warm rerun of each page spends its time on (AppTest)

Three passes, every opening a new tab and a new session of the app:

- cold: one fresh server process (and an empty results cache folder), every page opened once, in menu order, each
  in a new browser context (an empty HTTP cache: Streamlit's front end downloaded and compiled every time);
- warm: every page opened again on the same server (``--repeat K``: the median of K openings), in one browser
  context whose HTTP cache holds the front end from a first opening, as a returning user's browser does;
- edit: the page opened and settled, then one typical change made (Compose: another small design; Schedule:
  another collective; a representative widget elsewhere), timed from the change (once Playwright has delivered
  the key press or click; the time Playwright took to deliver it is logged), the median of K, a different
  change each time where the page has several, so no repetition reads a cached answer.

Two times for each: *first content*, from the request to the page's title (its h1) or the first element of the
main block being visible; *settled*, to the moment the page went idle for good: the script's last run finished
(its script_finished message read on the app's websocket; a quick rerun never shows the status widget), no
running indicator (``stStatusWidget``) and no spinner shown, the page's renderer answering, all of it for at
least ``QUIET_MS``. A page that does not get there within the time limit reads "> 60 s"; an error reads
"error". The targets (on a 2-core machine with nothing else running): first content <= 2 s and settled <= 5 s
warm for the page's default design, an edit on Compose settled <= 2 s. The load average is printed beside the
table, since other work on the machine slows every number.

``--profile`` runs each page in this process through streamlit's AppTest: one run to open the page (which fills
the caches), then one more run in a new session (as a new browser tab would) under cProfile, and lists the
functions with the largest cumulative time, ours (studio/, solvers/, topologies/) and the libraries' apart.
"""
from __future__ import annotations

import argparse
import os
import statistics
import sys
import tempfile
import time
from dataclasses import dataclass, field
from pathlib import Path
from typing import Callable

ROOT = Path(__file__).resolve().parents[1]
CHROMIUM = os.environ.get("CHROMIUM_PATH", "/usr/bin/chromium")
CHROMIUM_ARGS = ["--no-sandbox", "--disable-gpu", "--no-first-run", "--disable-background-networking",
                 "--disable-component-update", "--disable-sync"]
VIEWPORT = {"width": 1400, "height": 1000}
QUIET_MS = 300                  # the running indicator must stay away this long for the page to count as settled
TIMEOUT_S = 60.0                # per page and pass
TARGET_FIRST_S = 2.0
TARGET_SETTLED_S = 5.0
TARGET_EDIT_S = 2.0             # the edit on Compose

# The url paths of studio/navigation.py, in menu order (home is the default page, at "/").
PAGES = ["home", "compose", "schedule", "compare", "finder", "clusters", "failures", "training", "genmodel", "learn"]

# Whether the page shows Streamlit as busy: its status widget present, or a spinner visible. A quick rerun never
# shows the status widget (the front end waits before showing it), so the script's runs are also followed on the
# app's websocket (RunWatch).
BUSY_JS = """() => {
  if (document.querySelector('[data-testid="stStatusWidget"]')) return true;
  for (const s of document.querySelectorAll('[data-testid="stSpinner"]')) {
    if (s.getClientRects().length) return true;
  }
  return false;
}"""
POLL_S = 0.05

FIRST_CONTENT = ('[data-testid="stMain"] h1, '
                 '[data-testid="stMainBlockContainer"] [data-testid="stElementContainer"]')


# ------------------------------------------------------------------------------------------------ the edits
def _compose_edit(page, i: int) -> None:
    designs = ["torus(4,6)", "circulant(12,[2,3])", "gkautz(2,12)", "hypercube(4)", "torus(3,5)"]
    box = page.get_by_label("Expression", exact=True).and_(page.get_by_test_id("stTextInputField"))
    box.fill(designs[i % len(designs)])
    box.press("Enter")


def _select(label: str, options: list[str]) -> Callable:
    def act(page, i):
        page.get_by_test_id("stSelectbox").filter(has_text=label).first.click()
        page.get_by_role("option", name=options[i % len(options)], exact=True).click()
    return act


def _radio(label: str, options: list[str]) -> Callable:
    def act(page, i):
        group = page.get_by_test_id("stRadio").filter(has_text=label).first
        group.get_by_text(options[i % len(options)], exact=True).click()
    return act


def _multiselect_add(label: str, options: list[str]) -> Callable:
    def act(page, i):
        page.get_by_test_id("stMultiSelect").filter(has_text=label).first.click()
        page.get_by_role("option", name=options[i % len(options)], exact=True).click()
        page.keyboard.press("Escape")
    return act


def _checkbox(label: str) -> Callable:
    def act(page, i):
        page.get_by_test_id("stCheckbox").filter(has_text=label).first.click()
    return act


# page -> (what the edit is, in words; the action, given the page and the repetition's index)
EDITS: dict[str, tuple[str, Callable]] = {
    "compose": ("Expression: another small design", _compose_edit),
    "schedule": ("Collective: reduce_scatter / allreduce", _select("Collective", ["reduce_scatter", "allreduce"])),
    "compare": ("Collectives: add one", _multiselect_add("Collectives", ["allgather", "reduce_scatter"])),
    "finder": ("Topologies: bidirectional", _radio("Topologies", ["bidirectional"])),
    "clusters": ("Trees per root: fixed k", _radio("Trees per root", ["fixed k"])),
    "genmodel": ("classic (α, β, γ) only", _checkbox("classic")),
    "learn": ("rings: d = 3 / 2", _radio("d, links out of each node", ["3", "2"])),
}


# ----------------------------------------------------------------------------------------------- measuring
@dataclass
class Timing:
    """One opening (or one edit): seconds to first content and to settled; None where it did not get there."""
    first: float | None = None
    settled: float | None = None
    error: str | None = None
    input_s: float | None = None              # an edit: how long Playwright took to make the change
    started: float | None = None              # when the script's first run began (its new_session message)
    finished: float | None = None             # when its last run's script_finished message came


@dataclass
class Row:
    page: str
    cold: Timing = field(default_factory=Timing)
    warm: list[Timing] = field(default_factory=list)
    edit: list[Timing] = field(default_factory=list)
    edit_what: str | None = None


class RunWatch:
    """The script runs of one tab, read from the messages the server sends on its websocket (Streamlit's
    ForwardMsg): a run starts with new_session (or a status change to running) and ends with script_finished,
    unless it ended early for another run."""

    def __init__(self, page):
        from streamlit.proto.ForwardMsg_pb2 import ForwardMsg

        self._message = ForwardMsg
        self.running = False
        self.finished = 0                       # runs finished so far
        self.first_start = None                 # perf_counter times: the first run's start, the last run's end
        self.last_finish = None
        page.on("websocket", lambda ws: ws.on("framereceived", self._frame))

    def _frame(self, payload) -> None:
        if isinstance(payload, str):
            return
        msg = self._message()
        try:
            msg.ParseFromString(payload)
        except Exception:                       # noqa: BLE001 - not a message of ours to read
            return
        kind = msg.WhichOneof("type")
        if kind == "new_session":
            self.running = True
            if self.first_start is None:
                self.first_start = time.perf_counter()
        elif kind == "session_status_changed":
            self.running = msg.session_status_changed.script_is_running
        elif kind == "script_finished" and msg.script_finished != self._message.FINISHED_EARLY_FOR_RERUN:
            self.running = False
            self.finished += 1
            self.last_finish = time.perf_counter()


def wait_settled(page, watch: RunWatch, since: int, deadline: float) -> float:
    """perf_counter time at which the tab went idle for good: a run finished after the first ``since``, none
    running, no status widget or spinner shown, and all of it for QUIET_MS. TimeoutError past ``deadline``."""
    idle_since = None
    while True:
        busy = watch.running or watch.finished <= since or page.evaluate(BUSY_JS)
        now = time.perf_counter()             # after the check: a renderer too busy to answer is not settled
        if busy:
            idle_since = None
        elif idle_since is None:
            idle_since = now
        elif now - idle_since >= QUIET_MS / 1000:
            return idle_since
        if now > deadline:
            raise TimeoutError("not settled in time")
        page.wait_for_timeout(POLL_S * 1000)


def open_page(context, url: str, timeout_s: float) -> tuple[Timing, object, RunWatch]:
    """Open ``url`` in a new tab of ``context``: (its Timing, the tab, the tab's RunWatch)."""
    from playwright.sync_api import TimeoutError as PlaywrightTimeout

    page = context.new_page()
    watch = RunWatch(page)
    timing = Timing()
    start = time.perf_counter()
    deadline = start + timeout_s
    try:
        page.goto(url, wait_until="commit", timeout=timeout_s * 1000)
        page.locator(FIRST_CONTENT).first.wait_for(state="visible",
                                                   timeout=max(1.0, (deadline - time.perf_counter()) * 1000))
        timing.first = time.perf_counter() - start
        timing.settled = wait_settled(page, watch, 0, deadline) - start
        timing.started = watch.first_start - start if watch.first_start is not None else None
        timing.finished = watch.last_finish - start if watch.last_finish is not None else None
    except (PlaywrightTimeout, TimeoutError):
        pass                                    # what it did not reach stays None: "> limit"
    except Exception as exc:                    # noqa: BLE001 - reported in the table, the run goes on
        timing.error = str(exc).splitlines()[0][:120]
    return timing, page, watch


def edit_page(page, watch: RunWatch, act: Callable, i: int, timeout_s: float) -> Timing:
    """Make the change ``act`` on a settled tab; the time from the change until it settled again."""
    from playwright.sync_api import TimeoutError as PlaywrightTimeout

    timing = Timing()
    try:
        before = watch.finished
        asked = time.perf_counter()
        try:
            act(page, i)
        except Exception as exc:                # noqa: BLE001 - the widget was not found or did not answer
            timing.error = "the change could not be made: " + str(exc).splitlines()[0][:100]
            return timing
        start = time.perf_counter()           # the change made (the key or click delivered)
        timing.input_s = start - asked
        timing.settled = wait_settled(page, watch, before, start + timeout_s) - start
    except (PlaywrightTimeout, TimeoutError):
        pass
    except Exception as exc:                    # noqa: BLE001
        timing.error = str(exc).splitlines()[0][:120]
    return timing


def page_url(base: str, path: str) -> str:
    return base if path == "home" else f"{base}/{path}"


def measure(url: str, pages: list[str], repeat: int, timeout_s: float, log=print) -> list[Row]:
    from playwright.sync_api import sync_playwright

    rows = [Row(p, edit_what=EDITS[p][0] if p in EDITS else None) for p in pages]
    with sync_playwright() as pw:
        browser = pw.chromium.launch(executable_path=CHROMIUM, args=CHROMIUM_ARGS)
        try:
            def fresh_context():
                return browser.new_context(viewport=VIEWPORT)

            for row in rows:                                # cold: the server has not shown this page yet
                context = fresh_context()
                try:
                    row.cold, _, _ = open_page(context, page_url(url, row.page), timeout_s)
                finally:
                    context.close()
                log(f"cold {row.page}: {fmt(row.cold.first, timeout_s)} / {fmt(row.cold.settled, timeout_s)}")
            # warm: a returning user's browser, its HTTP cache holding Streamlit's front end from the first
            # opening; every opening is still a new tab and a new session of the app
            shared = fresh_context()
            primer, _, _ = open_page(shared, page_url(url, "home"), timeout_s)
            for k in range(repeat):
                for row in rows:
                    context = shared
                    try:
                        timing, page, watch = open_page(context, page_url(url, row.page), timeout_s)
                        row.warm.append(timing)
                        log(f"warm {row.page} #{k + 1}: {fmt(timing.first, timeout_s)} / "
                            f"{fmt(timing.settled, timeout_s)}")
                        if row.page in EDITS and timing.settled is not None:
                            edit = edit_page(page, watch, EDITS[row.page][1], k, timeout_s)
                            row.edit.append(edit)
                            log(f"edit {row.page} #{k + 1}: {fmt(edit.settled, timeout_s)} "
                                + (f"(input took {edit.input_s:.2f} s)" if edit.input_s is not None else "")
                                + (f" ({edit.error})" if edit.error else ""))
                    finally:
                        page.close()
            shared.close()
        finally:
            browser.close()
    return rows


# ------------------------------------------------------------------------------------------------ the table
def fmt(seconds: float | None, timeout_s: float = TIMEOUT_S) -> str:
    return f"> {timeout_s:.0f} s" if seconds is None else f"{seconds:.2f}"


def median(values: list[float | None]) -> float | None:
    """The median, a time-out (None) counting as longer than anything; None where the middle is a time-out."""
    if not values:
        return None
    ordered = sorted(float("inf") if v is None else v for v in values)
    n = len(ordered)
    mid = ordered[n // 2] if n % 2 else (ordered[n // 2 - 1] + ordered[n // 2]) / 2
    return None if mid == float("inf") else mid


def _cell(timings: list[Timing], attr: str, timeout_s: float) -> tuple[str, float | None]:
    if not timings:
        return "-", None
    if all(t.error for t in timings):
        return "error", None
    value = median([getattr(t, attr) for t in timings if not t.error])
    return fmt(value, timeout_s), value


def verdict(page: str, warm_first: float | None, warm_settled: float | None, edit: float | None,
            has_edit: bool) -> str:
    misses = []
    if warm_first is None or warm_first > TARGET_FIRST_S:
        misses.append(f"first content > {TARGET_FIRST_S:g} s")
    if warm_settled is None or warm_settled > TARGET_SETTLED_S:
        misses.append(f"settled > {TARGET_SETTLED_S:g} s")
    if page == "compose" and has_edit and (edit is None or edit > TARGET_EDIT_S):
        misses.append(f"edit > {TARGET_EDIT_S:g} s")
    return "yes" if not misses else "no: " + ", ".join(misses)


def table(rows: list[Row], timeout_s: float = TIMEOUT_S) -> str:
    """The markdown table: times in seconds, warm and edit columns the median over the repetitions."""
    lines = ["| page | cold first content | cold settled | warm first content | warm settled | edit settled "
             "| target met? |",
             "|:---|---:|---:|---:|---:|---:|:---|"]
    for row in rows:
        cold_first, _ = _cell([row.cold], "first", timeout_s)
        cold_settled, _ = _cell([row.cold], "settled", timeout_s)
        warm_first, wf = _cell(row.warm, "first", timeout_s)
        warm_settled, ws = _cell(row.warm, "settled", timeout_s)
        edit, ed = _cell(row.edit, "settled", timeout_s)
        if row.edit_what and row.edit:
            edit = f"{edit} ({row.edit_what})"
        lines.append(f"| {row.page} | {cold_first} | {cold_settled} | {warm_first} | {warm_settled} | {edit} | "
                     f"{verdict(row.page, wf, ws, ed, bool(row.edit))} |")
    return "\n".join(lines)


def split_table(rows: list[Row], timeout_s: float = TIMEOUT_S) -> str:
    """Where a warm opening's time goes (medians): until the script's first run began (the browser loading the
    front end and opening its websocket), the script's runs on the server (to the last script_finished as the
    browser received it), and after that until settled (the browser drawing what it was sent)."""
    lines = ["| page | until the script started | script runs | after the last run until settled |",
             "|:---|---:|---:|---:|"]
    for row in rows:
        ok = [t for t in row.warm if not t.error and None not in (t.started, t.finished, t.settled)]
        if not ok:
            lines.append(f"| {row.page} | - | - | - |")
            continue
        parts = (median([t.started for t in ok]), median([t.finished - t.started for t in ok]),
                 median([t.settled - t.finished for t in ok]))
        lines.append(f"| {row.page} | " + " | ".join(fmt(x, timeout_s) for x in parts) + " |")
    return "\n".join(lines)


def machine_line(load_start: tuple, load_end: tuple | None = None) -> str:
    def three(load):
        return ", ".join(f"{x:.2f}" for x in load)
    text = f"{os.cpu_count()} CPUs; load average (1, 5, 15 min) at start {three(load_start)}"
    if load_end is not None:
        text += f", at end {three(load_end)}"
    busy = "nothing else running" if load_start[0] < 0.5 else "other work was running (load average >= 0.5)"
    return f"{text}: {busy}"


# ----------------------------------------------------------------------------------------------- profiling
def _our_file(filename: str) -> bool:
    rel = os.path.relpath(filename, ROOT) if os.path.isabs(filename) else filename
    return rel.split(os.sep)[0] in ("studio", "solvers", "topologies")


def _label(func: tuple) -> str:
    filename, line, name = func
    if os.path.isabs(filename):
        rel = os.path.relpath(filename, ROOT)
        filename = rel if not rel.startswith("..") else "/".join(Path(filename).parts[-3:])
        if "site-packages" in Path(filename).parts:
            filename = "/".join(Path(filename).parts[Path(filename).parts.index("site-packages") + 1:])
    return f"{filename}:{line}:{name}"


_PROFILER: list = [None]         # the profiler the script thread enables while it runs the app (None: none)


def _profile_script_threads() -> None:
    """AppTest runs the app's script in a thread of its own, which a profiler enabled here does not see: have that
    thread enable ``_PROFILER[0]`` (when set) around each run."""
    from streamlit.testing.v1.local_script_runner import LocalScriptRunner

    if getattr(LocalScriptRunner, "_bench_profiled", False):
        return
    plain = LocalScriptRunner._run_script_thread

    def run_thread(self):
        profiler = _PROFILER[0]
        if profiler is None:
            return plain(self)
        profiler.enable()
        try:
            return plain(self)
        finally:
            profiler.disable()

    LocalScriptRunner._run_script_thread = run_thread
    LocalScriptRunner._bench_profiled = True


def _app_test(path: str, profiler=None):
    """An AppTest of app.py opened at the page ``/path`` (pages are found by url path among those the first run's
    st.navigation registered); ``profiler`` profiles the run that shows the page."""
    from streamlit.testing.v1 import AppTest

    at = AppTest.from_file(str(ROOT / "app.py"), default_timeout=300)
    if path == "home":
        _PROFILER[0] = profiler
    try:
        at.run()
        if path != "home":
            found = [h for h, info in (getattr(at, "_registered_pages", {}) or {}).items()
                     if info.get("url_pathname") == path]
            if not found:
                raise ValueError(f"no page /{path} registered by st.navigation")
            at._page_hash = found[0]
            _PROFILER[0] = profiler
            at.run()
    finally:
        _PROFILER[0] = None
    return at


# Streamlit's own machinery: left out of the library list, which is about the work the pages ask for (imports,
# figures, layouts, tables, and Streamlit's elements: serializing a figure or a table).
_PLUMBING = ("streamlit/runtime/scriptrunner", "streamlit/testing", "streamlit/runtime/state", "threading.py",
             "streamlit/navigation", "streamlit/commands/execution_control", "cProfile", "<string>", "~:0:<",
             "streamlit/runtime/caching/cache_utils", "app.py", "streamlit/elements/lib/policies",
             "concurrent/futures", "streamlit/runtime/fragment", "streamlit/exception", "streamlit/runtime/metrics",
             "streamlit/delta_generator", "streamlit/commands/page_config", "contextlib.py", "streamlit/util")


def profile(pages: list[str], top: int = 5) -> str:
    import cProfile
    import pstats

    _profile_script_threads()
    out = []
    for path in pages:
        t0 = time.perf_counter()
        _app_test(path)                                     # fills the caches, as the first visitor would
        first = time.perf_counter() - t0
        profiler = cProfile.Profile()
        at = _app_test(path, profiler)                      # a new session: a new tab opening the page
        stats = pstats.Stats(profiler)
        warm = max((ct for (_f, _l, name), (_cc, _nc, _tt, ct, _c) in stats.stats.items()
                    if name == "run_thread" or name == "_run_script_thread"), default=0.0)
        ours, libs = [], []
        for func, (_cc, _nc, _tt, ct, _callers) in sorted(stats.stats.items(), key=lambda kv: -kv[1][3]):
            label = _label(func)
            if _our_file(func[0]):
                if not label.startswith("studio/navigation.py"):
                    ours.append((ct, label))
            elif not any(p in label or p in func[0] for p in _PLUMBING) and "bench/pages.py" not in label:
                libs.append((ct, label))
        out.append(f"### {path}: first open {first:.2f} s in-process (both runs), warm run of the page {warm:.2f} s"
                   + (" (the page raised an exception)" if at.exception else ""))
        out.append("ours (cumulative s):")
        out += [f"  {ct:7.3f}  {label}" for ct, label in ours[:top]]
        out.append("libraries (cumulative s):")
        out += [f"  {ct:7.3f}  {label}" for ct, label in libs[:top]]
        out.append("")
    return "\n".join(out)


# -------------------------------------------------------------------------------------------------------- main
def main(argv: list[str] | None = None) -> int:
    parser = argparse.ArgumentParser(description=__doc__.splitlines()[0])
    parser.add_argument("--repeat", type=int, default=1, help="warm openings and edits per page (median; default 1)")
    parser.add_argument("--out", type=Path, help="also write the table (markdown) to this file")
    parser.add_argument("--pages", default=",".join(PAGES), help="comma-separated url paths (default: all)")
    parser.add_argument("--timeout", type=float, default=TIMEOUT_S, help="seconds per page and pass (default 60)")
    parser.add_argument("--top", type=int, default=5, help="functions listed per group with --profile (default 5)")
    parser.add_argument("--profile", action="store_true", help="profile a warm rerun of each page (AppTest) "
                                                                "instead of timing the browser")
    args = parser.parse_args(argv)
    pages = [p.strip() for p in args.pages.split(",") if p.strip()]
    unknown = sorted(set(pages) - set(PAGES))
    if unknown:
        parser.error(f"unknown pages {unknown}; known: {PAGES}")

    load_start = os.getloadavg()
    with tempfile.TemporaryDirectory(prefix="bench-pages-cache-") as cache:
        # an empty results cache, so the cold pass is cold; the server inherits it
        os.environ["TOPOLOGY_STUDIO_CACHE"] = cache
        if args.profile:
            report = profile(pages, args.top)
            text = f"{machine_line(load_start, os.getloadavg())}\n\n{report}"
            print(text)
            if args.out:
                args.out.write_text(text + "\n")
            return 0

        from bench.app_server import start_app

        started = time.perf_counter()
        proc, url = start_app()
        try:
            rows = measure(url, pages, max(1, args.repeat), args.timeout,
                           log=lambda line: print(line, file=sys.stderr, flush=True))
        finally:
            proc.terminate()
            try:
                proc.wait(timeout=15)
            except Exception:                   # noqa: BLE001 - never leave the server behind
                proc.kill()
                proc.wait(timeout=15)
        wall = time.perf_counter() - started
    text = (f"{table(rows, args.timeout)}\n\nWarm openings, split (seconds, medians):\n\n"
            f"{split_table(rows, args.timeout)}\n\nTimes in seconds from the request (edit: from the change) to first "
            f"content and to settled; warm and edit columns are the median of {max(1, args.repeat)}. "
            f"Targets: warm first content <= {TARGET_FIRST_S:g} s, warm settled <= {TARGET_SETTLED_S:g} s, "
            f"Compose edit <= {TARGET_EDIT_S:g} s.\n\nMachine: {machine_line(load_start, os.getloadavg())}. "
            f"Whole run {wall:.0f} s.")
    errors = [f"{r.page} {kind}: {t.error}" for r in rows for kind, ts in (("cold", [r.cold]), ("warm", r.warm),
                                                                            ("edit", r.edit)) for t in ts if t.error]
    if errors:
        text += "\n\nErrors:\n" + "\n".join(f"- {e}" for e in errors)
    print(text)
    if args.out:
        args.out.write_text(text + "\n")
    return 0


if __name__ == "__main__":
    sys.exit(main())
