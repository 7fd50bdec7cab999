"""The shipped deployment (issue 44): deploy/compose.yaml is a valid Compose file that runs the app's replicas
behind nginx with deploy/nginx.conf and one shared results cache. Validated by Docker Compose itself
(``docker compose config``, or Debian's ``docker-compose``, which checks the file against the Compose
specification's schema without a Docker daemon); ``.ci/run`` installs the latter. Outside CI a machine with
neither skips this; under CI it is an error. The same nginx.conf in front of two app processes is driven in
Chromium by tests/browser/test_proxy.py."""
import os
import shutil
import subprocess
from pathlib import Path

import pytest
import yaml

ROOT = Path(__file__).resolve().parents[1]
COMPOSE = ROOT / "deploy" / "compose.yaml"


def _compose_command() -> list[str] | None:
    docker = shutil.which("docker")
    if docker and subprocess.run([docker, "compose", "version"], capture_output=True).returncode == 0:
        return [docker, "compose"]
    legacy = shutil.which("docker-compose")
    return [legacy] if legacy else None


COMMAND = _compose_command()
if COMMAND is None and os.environ.get("CI"):
    raise RuntimeError("the compose file check needs docker compose or docker-compose (apt-get install -y "
                       "docker-compose)")
pytestmark = pytest.mark.skipif(COMMAND is None, reason="neither docker compose nor docker-compose is installed")


def _config(path: Path, env: dict | None = None) -> subprocess.CompletedProcess:
    return subprocess.run([*COMMAND, "-f", str(path), "config"], capture_output=True, text=True, timeout=60,
                          env={**os.environ, **(env or {})})


def test_the_compose_file_is_valid_and_runs_replicas_behind_the_proxy():
    done = _config(COMPOSE, {"STUDIO_REPLICAS": "3"})
    assert done.returncode == 0, done.stderr
    config = yaml.safe_load(done.stdout)
    app, proxy = config["services"]["app"], config["services"]["proxy"]
    assert app["deploy"]["replicas"] == 3                                # STUDIO_REPLICAS sets the count
    cache = app["environment"]["TOPOLOGY_STUDIO_CACHE"]
    assert any(str(v).startswith("results:") and cache in str(v) or isinstance(v, dict) and v.get("target") == cache
               for v in app["volumes"])                                  # every replica, one cache volume
    assert Path(app["build"]["context"]).resolve() == ROOT
    mounts = [str(v.get("source", "")) if isinstance(v, dict) else str(v).split(":")[0] for v in proxy["volumes"]]
    assert any(Path(m).resolve() == ROOT / "deploy" / "nginx.conf" for m in mounts)
    assert proxy["depends_on"]["app"]["condition"] == "service_healthy"
    assert _config(COMPOSE).returncode == 0 and yaml.safe_load(_config(COMPOSE).stdout)[
        "services"]["app"]["deploy"]["replicas"] == 2                   # two by default


def test_a_broken_compose_file_is_refused(tmp_path):
    broken = tmp_path / "compose.yaml"
    broken.write_text(COMPOSE.read_text().replace("replicas: ${STUDIO_REPLICAS:-2}", "replicas: many"))
    assert broken.read_text() != COMPOSE.read_text()
    assert _config(broken).returncode != 0
    unknown = tmp_path / "unknown.yaml"
    unknown.write_text(COMPOSE.read_text().replace("    restart: unless-stopped\n", "    restrat: always\n", 1))
    assert _config(unknown).returncode != 0
