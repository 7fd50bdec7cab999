"""Small Playwright helpers shared by the browser tests."""
from pathlib import Path

from playwright.sync_api import Page

IDLE = "() => !document.querySelector('[data-testid=\"stStatusWidget\"]')"


def metric(page: Page, label: str):
    """The value of the metric labelled ``label`` (``studio.metric_grid``'s grid cell)."""
    return page.locator(".ts-metric").filter(has_text=label).locator(".ts-metric-value")


def settle(page: Page, timeout: int = 60000):
    """Wait until Streamlit has finished running the script (its status widget is gone)."""
    page.wait_for_function(IDLE, timeout=timeout)


def drawn(page: Page, key: str, timeout: int = 30000):
    """The server's SVG drawing under ``key`` (studio.figures.charts.show), once the browser has decoded it (an image
    that failed to load has no natural width)."""
    image = page.locator(f".st-key-{key} img").first
    image.wait_for(timeout=timeout)
    page.wait_for_function("img => img.complete && img.naturalWidth > 0", arg=image.element_handle(),
                           timeout=timeout)
    return image


def solver_children(server: int) -> list[int]:
    """Live processes that the app server's fork server started (the solve's child; the fork server itself and
    processes of anything else on the machine excluded)."""
    parent, alive = {}, set()
    for stat in Path("/proc").glob("[0-9]*/stat"):
        try:
            state, ppid = stat.read_text().rsplit(")", 1)[1].split()[:2]
            parent[int(stat.parent.name)] = int(ppid)
            if state not in ("Z", "X"):
                alive.add(int(stat.parent.name))
        except (OSError, ValueError, IndexError):
            continue

    def depth_below_server(pid: int) -> int | None:
        depth = 0
        while pid in parent and pid > 1:
            if pid == server:
                return depth
            pid, depth = parent[pid], depth + 1
        return None
    # the fork server is a child of the app server; the solve is the fork server's child
    return [pid for pid in alive if depth_below_server(pid) == 2]
