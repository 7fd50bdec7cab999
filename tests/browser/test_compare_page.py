"""The Compare page in a real browser: three 64-node designs (a ring, a generalized Kautz graph and a line-graph
expansion of C(16,{3,4})), every applicable synthesizer verified beside the lower bound (the rows that do not apply
folded behind a toggle that counts them), the runtime figure with one curve per design and its winner bands, and a
screenshot (test-artifacts/compare-64.png)."""
import re

from playwright.sync_api import Page, expect

from .helpers import settle

DESIGNS = {"ring(64)": "UniRing(1,64)", "gkautz(4,64)": "Π₄,₆₄", "line(circulant(16,[3,4]))": "L(C(16,{3,4}))"}
# what applies to these directed designs (no two-way Hamiltonian cycle, tree edges or XOR partners; direct routes
# its copies on shortest paths; TE-CCL and the TEN ILP are not tried above 16 nodes)
APPLICABLE = {"ring", "ring_uni", "sptree", "expansion", "bfb", "tacos", "forestcoll", "direct"}
# the page draws two data frames: the winners, then the table of every run
CELLS = """(which) => {
    const frames = document.querySelectorAll("[data-testid='stDataFrame']");
    return Array.from(frames[which === 'table' ? frames.length - 1 : 0].querySelectorAll("table[role='grid'] tr"))
        .map(tr => Array.from(tr.children).map(td => td.innerText.trim()));
}"""


def table(page: Page, which: str = "table") -> list[dict]:
    """A data frame's rows as dicts of header -> cell text (glide-data-grid keeps an accessible copy of the cells
    it draws in the DOM; the page makes the table tall enough to draw every row)."""
    head, *rows = page.evaluate(CELLS, which)
    return [dict(zip(head, r)) for r in rows]


def test_compare_three_designs_at_64_nodes(page: Page, app_url, shot):
    page.goto(app_url + "/compare")
    expect(page.get_by_role("heading", name="Compare synthesizers and designs")).to_be_visible(timeout=30000)
    box = page.get_by_role("textbox", name="Expressions, one per line")
    box.fill("\n".join(DESIGNS))
    box.press("Control+Enter")
    settle(page)
    expect(page.get_by_text("3 designs × 1 collectives × 19 synthesizers")).to_be_visible(timeout=30000)
    page.get_by_role("button", name="Run").click()
    expect(page.get_by_text(re.compile(r"24 verified schedules from 57 runs"))).to_be_visible(timeout=180000)
    settle(page)
    plot = page.locator(".st-key-cmp_chart .js-plotly-plot")
    plot.wait_for(timeout=30000)
    expect(plot.locator(".legendtext").filter(has_text="lower bound · Π₄,₆₄")).to_have_count(1)
    # by default one curve per design (its fastest schedule at each size), not 24
    for name in DESIGNS.values():
        expect(plot.locator(".legendtext").filter(has_text=f"fastest · {name}")).to_have_count(1)
    expect(plot.locator(".legendtext").filter(has_text="bfb · ")).to_have_count(0)
    page.set_viewport_size({"width": 1400, "height": 5200})         # the whole page, the table drawn in full
    frames = page.get_by_test_id("stDataFrame")
    expect(frames).to_have_count(2)
    frames.last.scroll_into_view_if_needed()
    # rows that do not apply are folded away, counted on the toggle
    toggle = page.get_by_text(re.compile(r"Show the \d+ rows that do not apply"))
    expect(toggle).to_be_visible()
    hidden = int(re.search(r"\d+", toggle.inner_text()).group())
    frames.last.locator("table[role='grid'] tr").nth(3 * 20 - hidden).wait_for(state="attached", timeout=30000)
    shown = table(page)
    assert len(shown) == 3 * 20 - hidden and hidden > 0
    assert {r["status"] for r in shown} <= {"ok", "bound", "skipped"}, {r["status"] for r in shown}
    assert all("None" not in r.values() for r in shown)             # empty cells are empty
    toggle.click()
    settle(page)
    frames.last.locator("table[role='grid'] tr").nth(3 * 20).wait_for(state="attached", timeout=30000)
    rows = table(page)
    assert len(rows) == 3 * 20
    for name in DESIGNS.values():
        mine = [r for r in rows if r["design"] == name]
        assert [r["status"] for r in mine if r["algo"] == "lower bound"] == ["bound"]
        verified = {r["algo"] for r in mine if r["status"] == "ok" and r["verified"] == "true"}
        assert verified == APPLICABLE, (name, verified)
        others = {r["algo"]: (r["status"], r["why"]) for r in mine if r["algo"] not in APPLICABLE | {"lower bound"}}
        assert all(s == "not applicable" or (s == "skipped" and w.startswith(("TE-CCL", "Compare runs the TEN ILP")))
                   for s, w in others.values()), others
        assert sum(s == "not applicable" for s, _ in others.values()) == sum(
            r["status"] == "not applicable" for r in mine)
    assert hidden == sum(r["status"] == "not applicable" for r in rows)
    fastest = table(page, "winners")
    assert fastest and {w["design"] for w in fastest} <= set(DESIGNS.values())
    assert fastest[0]["design"] == "Π₄,₆₄"          # small messages: 6 steps (bound 6) beat 8 and 126
    page.set_viewport_size({"width": 1400, "height": 3400})         # the README's screenshot keeps its size
    page.get_by_role("heading", name="Compare synthesizers and designs").scroll_into_view_if_needed()
    settle(page)
    shot(page, "compare-64")
