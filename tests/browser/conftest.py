"""Start the real app with ``streamlit run`` and drive it in Debian's Chromium through Playwright.

Chromium comes from Debian's ``chromium`` package (``.ci/run`` installs it); Playwright never downloads a
browser. Outside CI a missing Chromium skips these tests; under CI (CI=true) it is an error.
Screenshots land in ``test-artifacts/`` at the repository root.
"""
import os
import shutil
from pathlib import Path

import pytest

from bench.app_server import start_app

ROOT = Path(__file__).resolve().parents[2]
CHROMIUM = os.environ.get("CHROMIUM_PATH", "/usr/bin/chromium")
ARTIFACTS = ROOT / "test-artifacts"
SCREENSHOTS = ROOT / "tests" / "browser" / "screenshots"
README_SHOTS = {"home", "compose-torus", "schedule-circulant16", "schedule-tacos-mesh4x4", "compare-64",
                "finder-1024", "clusters-dgx2", "genmodel-gentree", "learn",
                "training-breakdown", "learn-n64"}
CHROMIUM_ARGS = ["--no-sandbox", "--disable-gpu", "--disable-quic", "--no-first-run",
                 "--disable-background-networking", "--disable-component-update", "--disable-sync"]


def pytest_collection_modifyitems(config, items):
    if Path(CHROMIUM).exists() or shutil.which(CHROMIUM):
        return
    if os.environ.get("CI"):
        raise pytest.UsageError(f"browser tests need Chromium at {CHROMIUM} (apt-get install -y chromium)")
    skip = pytest.mark.skip(reason=f"no Chromium at {CHROMIUM}; install Debian's chromium to run browser tests")
    for item in items:
        if "browser" in str(item.fspath):
            item.add_marker(skip)


@pytest.fixture(scope="session")
def browser_type_launch_args(browser_type_launch_args):
    return {**browser_type_launch_args, "executable_path": CHROMIUM, "args": CHROMIUM_ARGS}


@pytest.fixture(scope="session")
def browser_context_args(browser_context_args):
    return {**browser_context_args, "viewport": {"width": 1400, "height": 1100}, "accept_downloads": True}


@pytest.fixture(scope="session")
def app_server():
    """(the ``streamlit run`` process, its URL), one per test session."""
    proc, url = start_app()
    yield proc, url
    proc.terminate()
    proc.wait(timeout=15)


@pytest.fixture(scope="session")
def app_url(app_server):
    return app_server[1]


@pytest.fixture
def shot():
    """``shot(page, name)`` saves a full-page screenshot in test-artifacts/; the README's page screenshots
    (``README_SHOTS``) are also refreshed in tests/browser/screenshots/, the copies the README shows."""
    ARTIFACTS.mkdir(exist_ok=True)

    def take(page, name):
        page.screenshot(path=str(ARTIFACTS / f"{name}.png"), full_page=True)
        if name in README_SHOTS:
            SCREENSHOTS.mkdir(exist_ok=True)
            page.screenshot(path=str(SCREENSHOTS / f"{name}.png"))    # the viewport: a readable size
    return take
