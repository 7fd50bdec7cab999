"""Start the real app for a browser: ``streamlit run app.py`` on a free local port, answered once its health
check says ok. Shared by the browser tests (tests/browser/conftest.py) and the load scripts (bench/load.py,
bench/load_server.py)."""
from __future__ import annotations

import os
import socket
import subprocess
import sys
import time
import urllib.request
from pathlib import Path

ROOT = Path(__file__).resolve().parents[1]


def free_port() -> int:
    with socket.socket() as s:
        s.bind(("127.0.0.1", 0))
        return s.getsockname()[1]


def wait_healthy(proc: subprocess.Popen, url: str, timeout_s: float) -> None:
    """Return once ``url``'s health check says ok; RuntimeError (and the process stopped) if it does not within
    ``timeout_s`` or the process exits."""
    deadline = time.time() + timeout_s
    while True:
        try:
            if urllib.request.urlopen(url + "/_stcore/health", timeout=1).read() == b"ok":
                return
        except OSError:
            if time.time() > deadline or proc.poll() is not None:
                proc.terminate()
                raise RuntimeError(f"streamlit did not start at {url}") from None
            time.sleep(0.2)


def start_app(timeout_s: float = 60, script: str = "app.py", env: dict | None = None,
              port: int | None = None) -> tuple[subprocess.Popen, str]:
    """(the server process, its URL); RuntimeError if it does not answer within ``timeout_s``. ``script``: the
    Streamlit script, relative to the repository; ``env``: variables added to this process's environment (the
    results cache folder, say); ``port``: a free one by default."""
    port = port or free_port()
    proc = subprocess.Popen(
        [sys.executable, "-m", "streamlit", "run", script, "--server.headless", "true", "--server.port", str(port),
         "--server.address", "127.0.0.1", "--browser.serverAddress", "localhost",
         "--browser.gatherUsageStats", "false"],
        cwd=ROOT, stdout=subprocess.DEVNULL, stderr=subprocess.DEVNULL, env={**os.environ, **(env or {})})
    url = f"http://localhost:{port}"
    wait_healthy(proc, url, timeout_s)
    return proc, url
