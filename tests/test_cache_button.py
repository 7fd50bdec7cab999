"""The pages' "Clear cached results" button under a cache setting the results cache refuses (issue 58): the app's
memory is cleared and one line says why the disk cache was left, where it raised UnsafeCache before."""
from streamlit.testing.v1 import AppTest


def _page():
    import time

    from studio.widgets import Solved, cache_note

    cache_note(Solved(None, time.time() - 60, True), "t")


def test_clear_button_with_a_relative_cache_setting(monkeypatch):
    monkeypatch.setenv("TOPOLOGY_STUDIO_CACHE", "junk-relative-folder")
    at = AppTest.from_function(_page).run()
    assert not at.exception
    at.button(key="t_clear_cache").click().run()
    assert not at.exception
    assert [e.value for e in at.error] and "not an absolute path" in at.error[0].value


def test_clear_button_clears_a_real_cache(monkeypatch, tmp_path):
    monkeypatch.setenv("TOPOLOGY_STUDIO_CACHE", str(tmp_path / "cache"))
    at = AppTest.from_function(_page).run()
    at.button(key="t_clear_cache").click().run()
    assert not at.exception and not at.error
