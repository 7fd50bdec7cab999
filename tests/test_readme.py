"""The README's and the docs' commands and examples work as written: every command line of the ```bash blocks of
README.md and docs/*.md (all but docs/ARCHITECTURE.md) runs in a shell (with the test environment's python first
on PATH, as after the README's setup command), every ```python block runs top to bottom, and the app command is
started and health-checked instead of being left running. Lines that start with ``docker`` are not run (no daemon
here); commands that need a network, a daemon or a long-running service are shown in ```text blocks, never run.

The two fresh-machine commands are checked differently: they live in the README, the test command must be exactly
what ``.ci/run`` runs (this suite is its result), and the app command is started without the setup part (already
done here). Links, images and the CLI reference's coverage of every flag: tests/test_docs.py."""
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
# the files whose examples run: the README and the docs it leads to (ARCHITECTURE.md's blocks are illustrations)
DOCS = [ROOT / "README.md"] + sorted(p for p in (ROOT / "docs").glob("*.md") if p.name != "ARCHITECTURE.md")
BLOCK = re.compile(r"```(\w+)\n(.*?)```", re.S)
SETUP = "python3 -m venv .venv && .venv/bin/pip install"


def blocks(lang: str, text: str = README) -> list[str]:
    return [body for kind, body in BLOCK.findall(text) if kind == lang]


def command_lines(text: str = README) -> list[str]:
    """Every non-comment line of the bash blocks, continuation lines joined."""
    out = []
    for body in blocks("bash", text):
        joined = body.replace("\\\n", " ")
        out += [line.strip() for line in joined.splitlines() if line.strip() and not line.strip().startswith("#")]
    return out


def shell_env() -> dict:
    env = dict(os.environ)
    bindir = str(Path(sys.executable).parent)
    env["PATH"] = bindir + os.pathsep + env.get("PATH", "")
    env["PYTHONPATH"] = str(ROOT)
    return env


def _name(path: Path) -> str:
    return path.relative_to(ROOT).as_posix()


COMMANDS = [(_name(doc), c) for doc in DOCS for c in command_lines(doc.read_text(encoding="utf-8"))
            if not c.startswith(SETUP) and not c.startswith("docker ")]
PYTHON_BLOCKS = [(_name(doc), i, code) for doc in DOCS
                 for i, code in enumerate(blocks("python", doc.read_text(encoding="utf-8")))]


def test_the_readme_has_the_two_fresh_machine_commands():
    setups = [c for c in command_lines() if c.startswith(SETUP)]
    assert len(setups) == 2
    app, tests = sorted(setups, key=lambda c: "pytest" in c)
    assert app.endswith(".venv/bin/streamlit run app.py")
    ci = (ROOT / ".ci" / "run").read_text(encoding="utf-8")
    assert tests in ci, "the README's test command must be the one .ci/run runs"


def test_the_docs_have_commands_to_run():
    """The CLI reference and the deployment guide keep runnable examples (a lost fence would silently run none)."""
    files = {doc for doc, _ in COMMANDS}
    assert {"docs/cli.md", "docs/deployment.md", "docs/user-guide.md", "README.md"} <= files
    assert sum(doc == "docs/cli.md" for doc, _ in COMMANDS) >= 20
    assert any(doc == "docs/user-guide.md" for doc, _, _ in PYTHON_BLOCKS)


@pytest.mark.parametrize("doc, command", COMMANDS, ids=[f"{d}:{c[:60]}" for d, c in COMMANDS])
def test_readme_command_runs(doc, command):
    done = subprocess.run(["bash", "-c", command], cwd=ROOT, env=shell_env(), capture_output=True, text=True,
                          timeout=600)
    assert done.returncode == 0, f"{doc}: {command!r} failed:\n{done.stderr[-2000:]}"


@pytest.mark.parametrize("doc, index, code", PYTHON_BLOCKS, ids=[f"{d}:python{i}" for d, i, _ in PYTHON_BLOCKS])
def test_readme_python_block_runs(doc, index, code):
    done = subprocess.run([sys.executable, "-c", code], cwd=ROOT, env=shell_env(), capture_output=True, text=True,
                          timeout=600)
    assert done.returncode == 0, f"{doc}: python block {index} failed:\n{done.stderr[-2000:]}"


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
