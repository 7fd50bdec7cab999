"""Home through AppTest: every page listed with one line and a link, and example designs that open on Compose
in the same tab and are drawn there (issue 40, the first hour)."""
import re
from urllib.parse import parse_qs

import pytest
from streamlit.testing.v1 import AppTest

from studio.figures.topology import MAX_DRAWN_NODES

from .conftest import ROOT, shown_metrics, switch_page


def home():
    at = AppTest.from_file(str(ROOT / "app.py"), default_timeout=120).run()
    assert not at.exception
    return at


def example_links(at) -> list[str]:
    """The expressions of Home's example links, in order: page links to Compose with ?expr=, and (the old
    page's form) markdown links to compose?expr=."""
    found = []
    for link in at.get("page_link"):
        if link.proto.page == "compose" and link.proto.query_string:
            found += parse_qs(link.proto.query_string).get("expr", [])
    for md in at.markdown:
        found += [expr.replace("%5B", "[").replace("%5D", "]") for expr in re.findall(r"\]\(compose\?expr=(.*)\)",
                                                                                       md.value)]
    return found


def open_compose(expr):
    at = AppTest.from_file(str(ROOT / "app.py"), default_timeout=120).run()
    at.query_params["expr"] = expr
    return switch_page(at, "compose").run()


def test_every_page_is_listed_with_a_link_and_a_line():
    at = home()
    pages = {info["page_name"]: info["url_pathname"] for info in at._registered_pages.values()}
    assert {"Compose", "Schedule", "Compare", "Finder", "Clusters", "GenModel", "Learn"} <= set(pages)
    links = {link.proto.label: link.proto.page for link in at.get("page_link")}
    for title, url in pages.items():
        if title == "Home":
            continue
        assert links.get(title) == url, f"Home has no link to {title}"
    lines = [m.value for m in at.markdown]
    assert len(lines) >= len(pages) - 1


def test_examples_open_in_the_same_tab():
    """A markdown link in Streamlit opens a new tab (target=_blank); a page link navigates in the app."""
    at = home()
    assert example_links(at), "Home offers no example designs"
    assert not [m.value for m in at.markdown if "](" in m.value], "a markdown link opens a new tab"
    assert all(link.proto.page == "compose" for link in at.get("page_link") if link.proto.query_string)


def test_every_example_opens_on_compose_and_is_drawn():
    examples = example_links(home())
    assert examples
    for expr in examples:
        at = open_compose(expr)
        assert not at.exception and not at.error, expr
        nodes = int(next(m.value for m in shown_metrics(at) if m.label == "Nodes"))
        assert nodes <= min(512, MAX_DRAWN_NODES), f"{expr}: {nodes} nodes"
        # drawn by the server as an image (studio.figures.charts), or by plotly where the drawing does not cover it
        assert at.get("image") or at.get("plotly_chart"), f"{expr} is not drawn"
        assert not [i.value for i in at.info if "too many to draw" in i.value]


def test_readme_share_link_is_the_first_example_and_draws():
    from topologies import load

    readme = (ROOT / "README.md").read_text()
    shared = re.findall(r"`/compose\?expr=([^`]+)`", readme)
    assert shared, "the README shows no share link"
    examples = example_links(home())
    for expr in shared:
        assert expr == examples[0]
        assert load(expr).num_nodes <= min(512, MAX_DRAWN_NODES)


@pytest.mark.parametrize("first, second", [("line(circulant(16,[3,4]),2)", "kautz(2,3)")])
def test_a_second_link_in_the_same_session_opens_its_design(first, second):
    """Same-tab links keep the session: a link to Compose with another ?expr= must open that design, not the
    one the session last showed."""
    at = open_compose(first)
    assert next(m.value for m in shown_metrics(at) if m.label == "Nodes") == "256"
    switch_page(at, "").run()               # Home: the default page, url path ""
    at.query_params["expr"] = second
    switch_page(at, "compose").run()
    assert not at.exception
    assert at.text_input(key="expr").value == second
    assert next(m.value for m in shown_metrics(at) if m.label == "Nodes") == "24"
