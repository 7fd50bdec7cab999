"""The Dockerfile and .dockerignore, checked without Docker: the image's properties read from the parsed
instructions, and the build context's exclusions matched (Docker's rules) against the files the app needs."""
import json
import re
import shlex

import pytest

from .conftest import ROOT

APP_PATHS = ["app.py", "requirements.txt", "studio", "solvers", "topologies", ".streamlit"]


# ------------------------------------------------------------------------------------------------- parsing
def instructions(text: str) -> list[tuple[str, str]]:
    """(KEYWORD, arguments) for each instruction: comments dropped, backslash continuations joined."""
    out, current = [], ""
    for raw in text.splitlines():
        line = raw.strip()
        if not current and (not line or line.startswith("#")):
            continue
        if current and line.startswith("#"):          # a comment inside a continued instruction
            continue
        if line.endswith("\\"):
            current += line[:-1] + " "
            continue
        current += line
        keyword, _, args = current.strip().partition(" ")
        out.append((keyword.upper(), args.strip()))
        current = ""
    assert not current, "the Dockerfile ends inside a continued line"
    return out


@pytest.fixture(scope="module")
def docker() -> list[tuple[str, str]]:
    return instructions((ROOT / "Dockerfile").read_text())


def first(docker, keyword):
    found = [(i, a) for i, (k, a) in enumerate(docker) if k == keyword]
    assert found, f"no {keyword} instruction"
    return found[0]


def exec_form(args: str) -> list[str]:
    value = json.loads(args)
    assert isinstance(value, list) and all(isinstance(v, str) for v in value), args
    return value


def option(argv: list[str], name: str) -> str | None:
    for i, a in enumerate(argv):
        if a == name and i + 1 < len(argv):
            return argv[i + 1]
        if a.startswith(name + "="):
            return a.split("=", 1)[1]
    return None


# ------------------------------------------------------------------------------------------------- the image
def test_parser_joins_continuations():
    got = instructions("# c\nFROM a\nRUN x \\\n  # inside\n && y\nCMD [\"z\"]\n")
    assert got == [("FROM", "a"), ("RUN", "x  && y"), ("CMD", '["z"]')]


def test_base_is_python_slim(docker):
    assert docker[0][0] == "FROM"
    assert re.fullmatch(r"python:3\.\d+-slim(-[a-z]+)?", docker[0][1]), docker[0][1]


def test_chromium_from_debian_for_kaleido(docker):
    runs = [a for k, a in docker if k == "RUN"]
    apt = [a for a in runs if "apt-get install" in a]
    assert apt and any(re.search(r"\bchromium\b", a) for a in apt), "apt-get install chromium"
    for a in apt:
        assert "apt-get update" in a, "update in the same layer as install"
        assert "--no-install-recommends" in a and "-y" in a.split()
        assert "rm -rf /var/lib/apt/lists" in a
    assert not any("playwright install" in a or "kaleido_get_chrome" in a or "plotly_get_chrome" in a
                   for a in runs), "never a downloaded browser"
    env = " ".join(a for k, a in docker if k == "ENV")
    assert "BROWSER_PATH=/usr/bin/chromium" in env


def test_requirements_installed_before_the_code(docker):
    keys = [k for k, _ in docker]
    pip = [i for i, (k, a) in enumerate(docker) if k == "RUN" and re.search(r"pip install .*-r requirements\.txt", a)]
    assert pip, "RUN pip install -r requirements.txt"
    copy_req = [i for i, (k, a) in enumerate(docker) if k == "COPY" and a.split()[0] == "requirements.txt"]
    copy_all = [i for i, (k, a) in enumerate(docker) if k == "COPY" and a.split() == [".", "."]]
    assert copy_req and copy_all, "COPY requirements.txt, then COPY . ."
    assert copy_req[0] < pip[0] < copy_all[0], "requirements layer cached apart from the code"
    assert keys.index("WORKDIR") < copy_req[0]


def test_runs_as_non_root_user(docker):
    users = [(i, a) for i, (k, a) in enumerate(docker) if k == "USER"]
    assert users, "a USER instruction"
    index, user = users[-1]
    name = user.split(":")[0]
    assert name not in ("root", "0"), user
    cmd_index, _ = first(docker, "CMD")
    assert index < cmd_index
    created = [i for i, (k, a) in enumerate(docker) if k == "RUN" and re.search(r"\b(useradd|adduser)\b", a)
               and re.search(rf"\b{re.escape(name)}\b", a)]
    assert created and created[0] < index, f"the user {name} is created before USER"
    pip = [i for i, (k, a) in enumerate(docker) if k == "RUN" and "pip install" in a]
    assert all(i < index for i in pip), "packages are installed as root, before USER"


def test_healthcheck_on_streamlit_health(docker):
    _, args = first(docker, "HEALTHCHECK")
    head, sep, command = args.partition("CMD ")
    assert sep, "HEALTHCHECK ... CMD ..."
    opts = dict(o.lstrip("-").split("=", 1) for o in head.split())
    assert {"interval", "timeout", "retries"} <= set(opts), opts
    assert re.fullmatch(r"\d+[smh]", opts["interval"]) and re.fullmatch(r"\d+[smh]", opts["timeout"])
    assert int(opts["retries"]) >= 1
    assert "/_stcore/health" in command and ":8501/" in command
    argv = shlex.split(command)
    if argv[0] == "python" and argv[1] == "-c":            # the probe must at least be valid Python
        compile(argv[2], "HEALTHCHECK", "exec")
        assert "timeout=" in argv[2], "the probe gives up before Docker's timeout"


def test_exposes_8501(docker):
    ports = [p.split("/")[0] for k, a in docker if k == "EXPOSE" for p in a.split()]
    assert "8501" in ports


def test_cmd_runs_the_app(docker):
    _, args = first(docker, "CMD")
    argv = exec_form(args)
    assert argv[:3] == ["streamlit", "run", "app.py"], argv
    assert option(argv, "--server.address") == "0.0.0.0"
    assert option(argv, "--server.port") == "8501"
    assert option(argv, "--server.headless") == "true"
    assert option(argv, "--browser.gatherUsageStats") == "false"
    assert (ROOT / "app.py").is_file()


# ------------------------------------------------------------------------------------------------- .dockerignore
def _pattern_regex(pattern: str) -> re.Pattern:
    """A .dockerignore pattern as a regex over '/'-separated context paths (Go's filepath.Match plus '**')."""
    out, i = "", 0
    while i < len(pattern):
        c = pattern[i]
        if pattern.startswith("**/", i):
            out += "(?:.*/)?"
            i += 3
            continue
        if pattern.startswith("**", i):
            out += ".*"
            i += 2
            continue
        if c == "*":
            out += "[^/]*"
        elif c == "?":
            out += "[^/]"
        elif c == "[":
            end = pattern.index("]", i)
            body = pattern[i + 1:end]
            out += "[" + ("^" + body[1:] if body.startswith("^") else body) + "]"
            i = end
        else:
            out += re.escape(c)
        i += 1
    return re.compile(out + r"\Z")


def dockerignore_rules(text: str) -> list[tuple[bool, re.Pattern]]:
    rules = []
    for line in text.splitlines():
        line = line.strip()
        if not line or line.startswith("#"):
            continue
        negate = line.startswith("!")
        pattern = line[1:].strip() if negate else line
        pattern = re.sub(r"/+", "/", pattern).strip("/")
        if pattern.startswith("./"):
            pattern = pattern[2:]
        rules.append((negate, _pattern_regex(pattern)))
    return rules


def excluded(rules, path: str) -> bool:
    """Docker's rule: the last pattern matching the path or one of its parent directories decides."""
    parts = path.split("/")
    prefixes = ["/".join(parts[:i]) for i in range(1, len(parts) + 1)]
    verdict = False
    for negate, regex in rules:
        if any(regex.match(p) for p in prefixes):
            verdict = not negate
    return verdict


@pytest.fixture(scope="module")
def ignore():
    return dockerignore_rules((ROOT / ".dockerignore").read_text())


def test_matcher_follows_docker_rules():
    rules = dockerignore_rules("**/__pycache__\n.venv\n*.md\n!README.md\n")
    assert excluded(rules, "studio/pages/__pycache__/x.pyc") and excluded(rules, "__pycache__/a.pyc")
    assert excluded(rules, ".venv/bin/python") and not excluded(rules, "a/.venv/x")
    assert excluded(rules, "NOTES.md") and not excluded(rules, "README.md") and not excluded(rules, "docs/a.md")


def app_files() -> list[str]:
    """Every file the app reads at run time: its sources, data files and Streamlit config (not build debris)."""
    files = []
    for name in APP_PATHS:
        path = ROOT / name
        assert path.exists(), name
        candidates = [path] if path.is_file() else [p for p in path.rglob("*") if p.is_file()]
        for p in candidates:
            rel = p.relative_to(ROOT).as_posix()
            if "__pycache__" in rel.split("/") or rel.endswith((".pyc", ".pyo")):
                continue
            files.append(rel)
    return files


def test_app_files_are_in_the_context(ignore):
    files = app_files()
    assert any(f.startswith("solvers/directconnect/data/") for f in files), "the data tables the solvers read"
    assert ".streamlit/config.toml" in files
    dropped = [f for f in files if excluded(ignore, f)]
    assert not dropped, f".dockerignore drops files the app needs: {dropped[:10]}"


def test_copied_sources_are_in_the_context(docker, ignore):
    for k, a in docker:
        if k == "COPY" and not a.startswith("--from"):
            for src in [s for s in a.split() if not s.startswith("--")][:-1]:
                if src != ".":
                    assert (ROOT / src).exists() and not excluded(ignore, src), src


@pytest.mark.parametrize("path", [".venv/bin/python", ".git/HEAD", "test-artifacts/home.png",
                                  ".pytest_cache/v/cache/nodeids", ".hypothesis/examples/x",
                                  "__pycache__/app.cpython-311.pyc", "solvers/__pycache__/cost.cpython-311.pyc",
                                  "studio/pages/__pycache__/home.cpython-311.pyc", "solvers/cost.pyc",
                                  "notebooks/.ipynb_checkpoints/tour-checkpoint.ipynb"])
def test_local_state_is_excluded(ignore, path):
    assert excluded(ignore, path), path
