"""The server's side of many sessions at once (issue 44): page views without a browser, the server's CPU seconds
per view of each page, and views per second.

    python -m bench.load_server                          # 20 sessions, every page, results cache cold then warm
    python -m bench.load_server --pages compose,schedule --sessions 20
    python -m bench.load_server --url http://localhost:8501 --passes 1

Each session is a client of the app's own websocket protocol (``/_stcore/stream``, Streamlit's BackMsg and
ForwardMsg protobufs, as the browser's front end speaks it): it connects once, and each view asks for one page's
run (``rerun_script`` with the page's URL path and query string) and reads the server's messages until that run's
``script_finished``. Nothing is rendered, so the figures are the server's alone: a view's latency is from the
request to ``script_finished``; its CPU seconds are the server's process tree's (the app, its fork server and
every solve's child, reaped ones included) user plus system time over the page's phase, divided by its views.

For each page in turn, all sessions view it at once (session i composes gkautz(2, 8 + 2i) and schedules its bfb
allgather, as bench/load.py's users do; other pages open at their defaults). A view fails on an exception or
error box in the page, a page that does not show what it should (Compose: the design's node count; Schedule:
"Verified by the simulator"), or no answer within ``WAIT_S``.

Passes: *cold*, a new server with an empty results cache folder; *warm*, a second new server on the same folder
(solves are answered from the disk cache; the app's memory caches are empty again, as after a restart). With
``--url`` the server is one already running and only the latencies are measured (its CPU is not ours to read).
"""
from __future__ import annotations

import argparse
import asyncio
import os
import re
import tempfile
import time
from dataclasses import dataclass, field

from bench.app_server import start_app
from bench.load import design, percentile
from bench.pages import PAGES

WAIT_S = 300.0


def view_request(page: str, i: int) -> tuple[str, re.Pattern | None]:
    """(query string, what the finished page must show) for session i's view of ``page``."""
    expr, n = design(i)
    if page == "compose":
        return f"expr={expr}", re.compile(rf"\b{n} nodes\b")
    if page == "schedule":
        return f"expr={expr}&algo=bfb&coll=allgather", re.compile("Verified by the simulator")
    return "", None


@dataclass
class PageRun:
    """One page's phase: every session's latency, the errors, the phase's wall time and the server's CPU."""

    page: str
    latencies: list[float] = field(default_factory=list)
    errors: list[str] = field(default_factory=list)
    wall_s: float = 0.0
    cpu_s: float | None = None


def _texts(delta) -> list[str]:
    """Every string an element of a delta carries (markdown bodies, headings, alerts, labels)."""
    element = delta.new_element
    kind = element.WhichOneof("type")
    if kind is None:
        return []
    body = getattr(element, kind)
    return [value for fd, value in body.ListFields() if isinstance(value, str)]


class Session:
    """One user's websocket to the app."""

    def __init__(self, url: str, i: int):
        self.url, self.i = url, i
        self.ws = None

    async def connect(self) -> None:
        from tornado.websocket import websocket_connect

        self.ws = await websocket_connect(self.url.replace("http", "ws", 1) + "/_stcore/stream",
                                          max_message_size=256 * 1024 * 1024)

    async def view(self, page: str) -> float:
        """Ask for ``page`` and wait for its run to finish: its latency in seconds; AssertionError when the page
        shows an error or not what it should, TimeoutError past ``WAIT_S``."""
        from streamlit.proto.Alert_pb2 import Alert
        from streamlit.proto.BackMsg_pb2 import BackMsg
        from streamlit.proto.ForwardMsg_pb2 import ForwardMsg

        query, wanted = view_request(page, self.i)
        msg = BackMsg()
        msg.rerun_script.query_string = query
        msg.rerun_script.page_name = page
        start = time.perf_counter()
        await self.ws.write_message(msg.SerializeToString(), binary=True)
        texts, problems, started = [], [], False
        while True:
            raw = await asyncio.wait_for(self.ws.read_message(), timeout=WAIT_S - (time.perf_counter() - start))
            if raw is None:
                raise AssertionError("the server closed the websocket")
            fwd = ForwardMsg()
            fwd.ParseFromString(raw)
            kind = fwd.WhichOneof("type")
            if kind == "new_session":
                started = True
            elif kind == "delta" and started:
                element = fwd.delta.new_element
                what = element.WhichOneof("type")
                if what == "exception":
                    problems.append(f"exception {element.exception.type}: {element.exception.message[:120]}")
                elif what == "alert" and element.alert.format == Alert.ERROR:
                    problems.append(f"error box: {element.alert.body[:120]}")
                texts.extend(_texts(fwd.delta))
            elif kind == "script_finished" and started:
                break
        latency = time.perf_counter() - start
        if problems:
            raise AssertionError(problems[0])
        if wanted is not None and not any(wanted.search(t) for t in texts):
            raise AssertionError(f"the page did not show {wanted.pattern!r}")
        return latency

    def close(self) -> None:
        if self.ws is not None:
            self.ws.close()


def tree_cpu_s(pid: int) -> float:
    """User plus system CPU seconds of a process and every descendant, living or reaped."""
    import psutil

    root = psutil.Process(pid)
    total = 0.0
    for proc in [root, *root.children(recursive=True)]:
        try:
            t = proc.cpu_times()
        except psutil.Error:               # gone between the listing and the reading: its parent counts it now
            continue
        total += t.user + t.system + t.children_user + t.children_system
    return total


async def run_pass(url: str, pages: list[str], sessions: int, server_pid: int | None) -> list[PageRun]:
    """Every page in turn, viewed by all sessions at once."""
    clients = [Session(url, i) for i in range(sessions)]
    await asyncio.gather(*(c.connect() for c in clients))
    runs = []
    try:
        for page in pages:
            run = PageRun(page)

            async def one(client: Session) -> None:
                try:
                    run.latencies.append(await client.view(page))
                except (AssertionError, asyncio.TimeoutError) as exc:
                    run.errors.append(f"session {client.i}: {type(exc).__name__}: {exc}"[:200])

            cpu0 = tree_cpu_s(server_pid) if server_pid else None
            start = time.perf_counter()
            await asyncio.gather(*(one(c) for c in clients))
            run.wall_s = time.perf_counter() - start
            if server_pid:
                run.cpu_s = tree_cpu_s(server_pid) - cpu0
            runs.append(run)
    finally:
        for c in clients:
            c.close()
    return runs


def table(name: str, runs: list[PageRun], sessions: int) -> list[str]:
    lines = [f"pass: {name}, {sessions} sessions",
             f"| page | views | errors | p50 s | p95 s | CPU s per view | phase wall s |",
             "|---|---|---|---|---|---|---|"]
    for r in runs:
        cpu = "—" if r.cpu_s is None else f"{r.cpu_s / max(1, len(r.latencies) + len(r.errors)):.3f}"
        lines.append(f"| {r.page} | {len(r.latencies)} | {len(r.errors)} | {percentile(r.latencies, .5):.2f} | "
                     f"{percentile(r.latencies, .95):.2f} | {cpu} | {r.wall_s:.2f} |")
    views = sum(len(r.latencies) for r in runs)
    wall = sum(r.wall_s for r in runs)
    cpu = sum(r.cpu_s or 0.0 for r in runs)
    lines.append(f"{views} views in {wall:.1f} s: {views / wall:.2f} views/s"
                 + (f", {cpu:.1f} CPU s ({cpu / max(1, views):.3f} per view) on {os.cpu_count()} CPUs"
                    if runs and runs[0].cpu_s is not None else ""))
    for r in runs:
        lines.extend(f"error ({r.page}): {e}" for e in r.errors)
    return lines


def main() -> None:
    parser = argparse.ArgumentParser(description=__doc__.splitlines()[0])
    parser.add_argument("--sessions", type=int, default=20, help="concurrent sessions (default 20)")
    parser.add_argument("--pages", default=",".join(PAGES), help="comma-separated URL paths (default: every page)")
    parser.add_argument("--passes", type=int, default=2, choices=(1, 2), help="1: cold only; 2: cold and warm")
    parser.add_argument("--url", default=None, help="an app already running (latencies only)")
    args = parser.parse_args()
    pages = [p.strip() for p in args.pages.split(",") if p.strip()]
    unknown = sorted(set(pages) - set(PAGES))
    if unknown:
        parser.error(f"unknown page(s): {', '.join(unknown)}; known: {', '.join(PAGES)}")
    if args.url:
        print("\n".join(table("given server", asyncio.run(run_pass(args.url, pages, args.sessions, None)),
                              args.sessions)))
        return
    with tempfile.TemporaryDirectory(prefix="studio-load-cache-") as cache:
        for name in ("cold", "warm")[:args.passes]:
            proc, url = start_app(env={"TOPOLOGY_STUDIO_CACHE": cache})
            try:
                runs = asyncio.run(run_pass(url, pages, args.sessions, proc.pid))
            finally:
                proc.terminate()
                proc.wait(timeout=15)
            print("\n".join(table(f"{name} (results cache {'empty' if name == 'cold' else 'filled by cold'})",
                                  runs, args.sessions)), flush=True)


if __name__ == "__main__":
    main()
