"""What the app shares between its sessions (one process, a thread per session) is safe to use from two at
once (issue 23, found by bench/load.py with 20 sessions: an empty algorithm list and "This page cannot be
called directly")."""
import threading
import time
from types import SimpleNamespace

import solvers.registry as registry
from studio import navigation


def test_a_session_waits_for_the_registry_another_is_loading(monkeypatch):
    """The first session imports the wings; a second asking meanwhile must see them all, not a registry still
    being filled (before: it returned at once with what was there so far)."""
    monkeypatch.setattr(registry, "_LOADED", False)
    monkeypatch.setattr(registry, "_REGISTRY", {})
    importing = threading.Event()

    def slow_import(name):
        importing.set()
        time.sleep(0.3)
        registry._REGISTRY["late"] = SimpleNamespace(rank=0)

    monkeypatch.setattr(registry.pkgutil, "iter_modules", lambda path: [SimpleNamespace(name="late", ispkg=True)])
    monkeypatch.setattr(registry.importlib, "import_module", slow_import)
    first = threading.Thread(target=registry.load_builtin)
    first.start()
    assert importing.wait(5)
    seen = sorted(registry.synthesizers())           # the second session, while the first one imports
    first.join()
    assert seen == ["late"]


def test_every_run_gets_its_own_page_objects(monkeypatch):
    """A page object carries per-run state (whether the run it was returned to may call it): every run of
    app.py builds its own with ``navigation.pages()`` (before: one list of page objects for every session)."""
    from streamlit.testing.v1 import AppTest

    from .conftest import ROOT

    made = []
    real = navigation.pages

    def counted():
        made.append(real())
        return made[-1]

    monkeypatch.setattr(navigation, "pages", counted)
    at = AppTest.from_file(str(ROOT / "app.py"), default_timeout=120).run()
    at.run()
    assert not at.exception and len(made) == 2
    assert all(x is not y for x, y in zip(*made)) and len(made[0]) == 10
