"""The README's commands and examples work as written: every command line of its ```bash blocks runs in a shell
(with the test environment's python first on PATH, as after the README's setup command), every ```python block
runs top to bottom, and the app command is started and health-checked instead of being left running.

The two fresh-machine commands are checked differently: the test command must be exactly what ``.ci/run`` runs
(this suite is its result), and the app command is started without the setup part (already done here)."""
import os
import re
import socket
import subprocess
import sys
import time
import urllib.request
from pathlib import Path

import pytest

ROOT = Path(__file__).resolve().parents[1]
README = (ROOT / "README.md").read_text(encoding="utf-8")
BLOCK = re.compile(r"```(\w+)\n(.*?)```", re.S)
SETUP = "python3 -m venv .venv && .venv/bin/pip install"


def blocks(lang: str) -> list[str]:
    return [body for kind, body in BLOCK.findall(README) if kind == lang]


def command_lines() -> list[str]:
    """Every non-comment line of the bash blocks, continuation lines joined."""
    out = []
    for body in blocks("bash"):
        joined = body.replace("\\\n", " ")
        out += [line.strip() for line in joined.splitlines() if line.strip() and not line.strip().startswith("#")]
    return out


def shell_env() -> dict:
    env = dict(os.environ)
    bindir = str(Path(sys.executable).parent)
    env["PATH"] = bindir + os.pathsep + env.get("PATH", "")
    env["PYTHONPATH"] = str(ROOT)
    return env


COMMANDS = [c for c in command_lines() if not c.startswith(SETUP) and not c.startswith("docker ")]


def test_the_readme_has_the_two_fresh_machine_commands():
    setups = [c for c in command_lines() if c.startswith(SETUP)]
    assert len(setups) == 2
    app, tests = sorted(setups, key=lambda c: "pytest" in c)
    assert app.endswith(".venv/bin/streamlit run app.py")
    ci = (ROOT / ".ci" / "run").read_text(encoding="utf-8")
    assert tests in ci, "the README's test command must be the one .ci/run runs"


@pytest.mark.parametrize("command", COMMANDS, ids=[c[:60] for c in COMMANDS])
def test_readme_command_runs(command):
    done = subprocess.run(["bash", "-c", command], cwd=ROOT, env=shell_env(), capture_output=True, text=True,
                          timeout=600)
    assert done.returncode == 0, f"{command!r} failed:\n{done.stderr[-2000:]}"


@pytest.mark.parametrize("index", range(len(blocks("python"))))
def test_readme_python_block_runs(index):
    code = blocks("python")[index]
    done = subprocess.run([sys.executable, "-c", code], cwd=ROOT, env=shell_env(), capture_output=True, text=True,
                          timeout=600)
    assert done.returncode == 0, f"python block {index} failed:\n{done.stderr[-2000:]}"


def test_readme_app_command_starts_a_healthy_app():
    with socket.socket() as s:
        s.bind(("127.0.0.1", 0))
        port = s.getsockname()[1]
    app = [sys.executable, "-m", "streamlit", "run", "app.py", "--server.headless", "true", "--server.port",
           str(port), "--browser.gatherUsageStats", "false"]
    proc = subprocess.Popen(app, cwd=ROOT, stdout=subprocess.DEVNULL, stderr=subprocess.DEVNULL)
    try:
        deadline = time.time() + 60
        while True:
            try:
                if urllib.request.urlopen(f"http://localhost:{port}/_stcore/health", timeout=1).read() == b"ok":
                    break
            except OSError:
                pass
            assert proc.poll() is None, "streamlit exited"
            assert time.time() < deadline, "the app did not become healthy within 60 s"
            time.sleep(0.5)
    finally:
        proc.terminate()
        proc.wait(timeout=30)


def test_readme_images_and_links_exist():
    targets = re.findall(r"\]\(([^)#\s]+)\)", README)
    local = [t for t in targets if not t.startswith(("http://", "https://"))]
    assert any(t.endswith(".png") for t in local)
    missing = [t for t in local if not (ROOT / t).exists()]
    assert not missing, f"README points at missing files: {missing}"
