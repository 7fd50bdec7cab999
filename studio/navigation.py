"""The app's pages: ``pages()`` makes them for each run of app.py, and ``navigation.COMPOSE`` and the like make
a page to link to (st.page_link, st.switch_page; pages are matched by URL path), so no page object is shared
between sessions. Each page is a function that imports its module when the page is first opened and calls the
module's ``render``; the import waits until then so that this module and the pages that link back to it (Home,
Finder, Learn) can be imported in either order."""
from __future__ import annotations

from importlib import import_module
from typing import Callable

import streamlit as st


def _render(module: str) -> Callable[[], None]:
    """A page function that renders ``module`` (its ``render()``)."""
    def page() -> None:
        import_module(module).render()

    page.__name__ = page.__qualname__ = f"render_{module.rsplit('.', 1)[-1]}"
    return page


_PAGES = [("studio.pages.home", "Home", ":material/home:", "home"),
          ("studio.pages.compose", "Compose", ":material/hub:", "compose"),
          ("studio.pages.schedule", "Schedule", ":material/schedule:", "schedule"),
          ("studio.pages.compare", "Compare", ":material/compare_arrows:", "compare"),
          ("studio.pages.finder", "Finder", ":material/travel_explore:", "finder"),
          ("studio.pages.clusters", "Clusters", ":material/dns:", "clusters"),
          ("studio.genmodel_view", "GenModel", ":material/calculate:", "genmodel"),
          ("studio.pages.learn", "Learn", ":material/school:", "learn")]


def pages() -> list:
    """The pages in menu order, made anew for each run of the app script (``st.navigation(pages())``). A page
    object remembers whether the run that ``st.navigation`` returned it to may call it; objects shared by every
    session raced when two sessions opened pages at once ("This page cannot be called directly"), so each run
    gets its own."""
    return [_page(spec) for spec in _PAGES]


def _page(spec: tuple):
    module, title, icon, url = spec
    return st.Page(_render(module), title=title, icon=icon, url_path=url, default=url == "home")


_LINKS = {spec[3].upper(): spec for spec in _PAGES}       # COMPOSE -> the compose page's spec


def __getattr__(name: str):
    """``navigation.COMPOSE`` and the like, the targets of ``st.page_link`` and ``st.switch_page``: a page made
    when asked for (in the run that links to it; pages are matched by URL path), never one shared object."""
    if name in _LINKS:
        return _page(_LINKS[name])
    raise AttributeError(f"module {__name__!r} has no attribute {name!r}")
