"""The app's pages: ``pages()`` makes them for each run of app.py, and ``navigation.COMPOSE`` and the like make
a page to link to (st.page_link, st.switch_page; pages are matched by URL path), so no page object is shared
between sessions. Each page is a function that imports its module when the page is first opened and calls the
module's ``render``; the import waits until then so that this module and the pages that link back to it (Home,
Finder, Learn) can be imported in either order."""
from __future__ import annotations

from importlib import import_module
from pathlib import Path
from typing import Callable

import streamlit as st


def _render(module: str) -> Callable[[], None]:
    """A page function that renders ``module`` (its ``render()``)."""
    def page() -> None:
        import_module(module).render()

    page.__name__ = page.__qualname__ = f"render_{module.rsplit('.', 1)[-1]}"
    return page


# (module, title, icon, url path, the one line Home says about the page)
_PAGES = [("studio.pages.home", "Home", ":material/home:", "home", "What the studio does and where to start."),
          ("studio.pages.compose", "Compose", ":material/hub:", "compose",
           "Build a topology from an expression, a catalogue base, a family with expansions or a file; see it drawn "
           "with its diameter beside the Moore bound."),
          ("studio.pages.schedule", "Schedule", ":material/schedule:", "schedule",
           "Synthesize an allgather, reduce-scatter, allreduce, broadcast, reduce, gather or scatter on the design "
           "(BFB, expansion, ForestColl, TE-CCL, TACOS, rings, trees), verified step by step, timed for the "
           "sidebar's workload and exported as MSCCL."),
          ("studio.pages.compare", "Compare", ":material/compare_arrows:", "compare",
           "Run every synthesizer that applies on one or more designs under one time budget: one table, one "
           "time-against-size chart, the fastest per size range; or several collectives sharing one design."),
          ("studio.pages.finder", "Finder", ":material/travel_explore:", "finder",
           "The Pareto frontier of steps against bandwidth cost for N nodes of degree d, the best design for your "
           "workload, and the best time as N grows."),
          ("studio.pages.clusters", "Clusters", ":material/dns:", "clusters",
           "Switched clusters (DGX A100, MI250, two-level, fat-tree): ForestColl's throughput optimum, the cut "
           "that limits it, and its tree schedules."),
          ("studio.pages.failures", "Failures", ":material/link_off:", "failures",
           "What failed links, GPUs, NICs, switches or boxes do to your designs and their schedules: the CDF of "
           "algbw over every failure set, the worst set drawn, and any set opened on Schedule."),
          ("studio.pages.training", "Training", ":material/model_training:", "training",
           "One training iteration (data, expert, tensor or pipeline parallel) on each design: compute, exposed "
           "allreduce and all-to-all per design, the iteration's timeline, and any collective opened on Schedule."),
          ("studio.views.genmodel", "GenModel", ":material/calculate:", "genmodel",
           "AllReduce plans priced by the GenModel cost model, calibration from measurements, and GenTree on "
           "switch trees."),
          ("studio.pages.learn", "Learn", ":material/school:", "learn",
           "The ideas behind it all with live figures: rings, the Moore bound, line-graph expansions, the Pareto "
           "frontier, GenModel, the runtime model, failures, rooted collectives and shared fabrics.")]


# The browser tab's icon, a file of the studio's own. Without a page icon in the page config Streamlit's browser
# code makes the open page's ``:material/...:`` icon the tab's icon by loading that symbol from fonts.gstatic.com,
# one failed request per page on a machine without the internet (issue 59); the menu's icons themselves come from
# the Material Symbols font that Streamlit serves. An SVG file becomes a data: URL, so the tab's icon needs no
# request at all.
FAVICON = Path(__file__).with_name("favicon.svg")


def pages() -> list:
    """The pages in menu order, made anew for each run of the app script (``st.navigation(pages())``). A page
    object remembers whether the run that ``st.navigation`` returned it to may call it; objects shared by every
    session raced when two sessions opened pages at once ("This page cannot be called directly"), so each run
    gets its own. Also sets the tab's icon (``FAVICON``) so that no page's icon is fetched from the internet."""
    st.set_page_config(page_icon=str(FAVICON))
    return [_page(spec) for spec in _PAGES]


def listed() -> list[tuple]:
    """(page, title, icon, one line about it) for every page but Home, in menu order: what Home lists, so a page
    added here is listed there too."""
    return [(_page(spec), spec[1], spec[2], spec[4]) for spec in _PAGES if spec[3] != "home"]


def _page(spec: tuple):
    module, title, icon, url = spec[:4]
    return st.Page(_render(module), title=title, icon=icon, url_path=url, default=url == "home")


_LINKS = {spec[3].upper(): spec for spec in _PAGES}       # COMPOSE -> the compose page's spec


def __getattr__(name: str):
    """``navigation.COMPOSE`` and the like, the targets of ``st.page_link`` and ``st.switch_page``: a page made
    when asked for (in the run that links to it; pages are matched by URL path), never one shared object."""
    if name in _LINKS:
        return _page(_LINKS[name])
    raise AttributeError(f"module {__name__!r} has no attribute {name!r}")
