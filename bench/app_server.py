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


NGINX_CONF = ROOT / "deploy" / "nginx.conf"


def proxy_config(upstreams: list[str], port: int, folder: Path) -> str:
    """deploy/nginx.conf for a local run: its upstream servers replaced by ``upstreams`` (host:port), listening on
    127.0.0.1:``port``, its temporary files and logs in ``folder`` (so it runs without root)."""
    text = NGINX_CONF.read_text()
    if text.count("server app:8501;") != 1 or text.count("listen 8080;") != 1 or text.count("http {") != 1:
        raise RuntimeError(f"{NGINX_CONF} no longer has the lines this rewrites")
    servers = "\n        ".join(f"server {u};" for u in upstreams)
    paths = "".join(f"\n    {kind}_temp_path {folder / kind};" for kind in
                    ("client_body", "proxy", "fastcgi", "uwsgi", "scgi"))
    return (text.replace("server app:8501;", servers)
                .replace("listen 8080;", f"listen 127.0.0.1:{port};")
                .replace("http {", f"http {{{paths}\n    access_log {folder / 'access.log'};", 1))


def start_proxy(upstreams: list[str], folder: Path, timeout_s: float = 20) -> tuple[subprocess.Popen, str]:
    """nginx (Debian's, on PATH or in /usr/sbin) with ``proxy_config`` in front of ``upstreams``: (its process,
    its URL) once the first app answers through it."""
    import shutil

    nginx = shutil.which("nginx") or shutil.which("nginx", path="/usr/sbin:/usr/local/sbin")
    if nginx is None:
        raise FileNotFoundError("nginx is not installed (apt-get install -y nginx)")
    port = free_port()
    conf = folder / "nginx.conf"
    conf.write_text(proxy_config(upstreams, port, folder))
    proc = subprocess.Popen([nginx, "-p", str(folder), "-c", str(conf), "-e", str(folder / "error.log"),
                             "-g", f"daemon off; pid {folder / 'nginx.pid'};"],
                            stdout=subprocess.DEVNULL, stderr=subprocess.PIPE)
    url = f"http://127.0.0.1:{port}"
    try:
        wait_healthy(proc, url, timeout_s)
    except RuntimeError:
        err = proc.stderr.read().decode(errors="replace").strip() if proc.stderr else ""
        raise RuntimeError(f"nginx did not start: {err[-300:]}") from None
    return proc, url
