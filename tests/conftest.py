import os
import sys
from pathlib import Path

import pytest

ROOT = Path(__file__).resolve().parents[1]      # the repository root (pytest.ini puts it on the import path)

# The results cache is off in the tests (and in the app the browser tests start): a test that changes a
# synthesizer must see it solve, and nothing is written to the user's cache folder. tests/test_results_cache.py
# turns it on in a folder of its own.
os.environ["TOPOLOGY_STUDIO_CACHE"] = "off"
# A heavy solve stays in its page's run for ten minutes here instead of leaving it after seconds (studio.jobs,
# ``run`` with a key): AppTest has no timer for the fragment that would show its answer, and a test's solve that
# runs a few seconds longer on a busy machine must not change what its page shows.
# tests/test_background_solves.py and tests/browser/test_background_solve.py set it to 0.
os.environ["STUDIO_DETACH_S"] = "600"


@pytest.fixture(autouse=True)
def _main_module_restored():
    """Put ``sys.modules["__main__"]`` back after each test: AppTest leaves its temporary script there, and a
    process started later with multiprocessing's spawn (a Dask worker) re-runs ``__main__``'s file, which then
    calls a page function with arguments it no longer has (tests/test_sweep.py's worker died of that when the
    files shared an xdist worker)."""
    main = sys.modules.get("__main__")
    yield
    if main is not None:
        sys.modules["__main__"] = main


def switch_page(at, url_path: str):
    """Select the app's page at ``/url_path`` for the next ``at.run()``, as a browser opening that URL would.

    The app's pages (studio/navigation.py) are functions, and ``AppTest.switch_page()`` finds only pages defined
    by a file, so the page is looked up by its url_path among those that the last run's ``st.navigation``
    registered (call ``run()`` first). The test must not import studio.navigation itself: st.Page objects
    created outside a script run are empty, and the app would then reuse them."""
    pages = getattr(at, "_registered_pages", {}) or {}
    found = [h for h, info in pages.items() if info.get("url_pathname") == url_path]
    if not found:
        known = sorted(str(info.get("url_pathname")) for info in pages.values())
        raise ValueError(f"no page /{url_path} registered by st.navigation (run() first?); registered: {known}")
    at._page_hash = found[0]
    return at


def open_boxes(at, *keys: str, interactive: bool = False):
    """Open the page's lazy expanders ``keys`` (``studio.expander.lazy_expander``: their contents exist only while
    open) for the next ``at.run()``, and turn the sidebar's "Interactive charts" on where ``interactive`` (plotly
    charts, whose specs a test can read, instead of the default SVG drawings)."""
    for key in keys:
        at.session_state[key] = True
    if interactive:
        at.session_state["interactive_charts"] = True
    return at


def shown_metrics(at) -> list:
    """Every headline number on the page (``studio.metric_grid``'s grids, drawn as page text), in order: objects
    with ``label``, ``value``, ``delta`` and ``help``, as ``at.metric`` gives for ``st.metric``."""
    from studio.metric_grid import parse

    return [m for md in at.markdown if "ts-metric" in md.value for m in parse(md.value)]
