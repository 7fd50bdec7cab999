"""Start the real app for a browser: ``streamlit run app.py`` on a free local port, answered once its health
check says ok. Shared by the browser tests (tests/browser/conftest.py) and the load script (bench/load.py)."""
from __future__ import annotations

import socket
import subprocess
import sys
import time
import urllib.request
from pathlib import Path

ROOT = Path(__file__).resolve().parents[1]


def start_app(timeout_s: float = 60) -> tuple[subprocess.Popen, str]:
    """(the server process, its URL); RuntimeError if it does not answer within ``timeout_s``."""
    with socket.socket() as s:
        s.bind(("127.0.0.1", 0))
        port = s.getsockname()[1]
    proc = subprocess.Popen(
        [sys.executable, "-m", "streamlit", "run", "app.py", "--server.headless", "true", "--server.port", str(port),
         "--server.address", "127.0.0.1", "--browser.serverAddress", "localhost",
         "--browser.gatherUsageStats", "false"],
        cwd=ROOT, stdout=subprocess.DEVNULL, stderr=subprocess.DEVNULL)
    url = f"http://localhost:{port}"
    deadline = time.time() + timeout_s
    while True:
        try:
            if urllib.request.urlopen(url + "/_stcore/health", timeout=1).read() == b"ok":
                return proc, url
        except OSError:
            if time.time() > deadline or proc.poll() is not None:
                proc.terminate()
                raise RuntimeError("streamlit did not start")
            time.sleep(0.2)
