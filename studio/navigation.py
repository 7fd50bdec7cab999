"""The app's pages, created once so that pages can link to each other (st.page_link, st.switch_page). Each page
is a function that imports its module when the page is first opened and calls the module's ``render``; the
import waits until then so that this module and the pages that link back to it (Home, Finder, Learn) can be
imported in either order."""
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


HOME = st.Page(_render("studio.pages.home"), title="Home", icon=":material/home:", url_path="home", default=True)
COMPOSE = st.Page(_render("studio.pages.compose"), title="Compose", icon=":material/hub:", url_path="compose")
SCHEDULE = st.Page(_render("studio.pages.schedule"), title="Schedule", icon=":material/schedule:",
                   url_path="schedule")
FINDER = st.Page(_render("studio.pages.finder"), title="Finder", icon=":material/travel_explore:",
                 url_path="finder")
CLUSTERS = st.Page(_render("studio.pages.clusters"), title="Clusters", icon=":material/dns:", url_path="clusters")
GENMODEL = st.Page(_render("studio.genmodel_view"), title="GenModel", icon=":material/calculate:",
                   url_path="genmodel")
COMPARE = st.Page(_render("studio.pages.compare"), title="Compare", icon=":material/compare_arrows:",
                  url_path="compare")
LEARN = st.Page(_render("studio.pages.learn"), title="Learn", icon=":material/school:", url_path="learn")
PAGES = [HOME, COMPOSE, SCHEDULE, COMPARE, FINDER, CLUSTERS, GENMODEL, LEARN]
