"""Small Playwright helpers shared by the browser tests."""
from playwright.sync_api import Page

IDLE = "() => !document.querySelector('[data-testid=\"stStatusWidget\"]')"


def metric(page: Page, label: str):
    """The value of the metric labelled ``label`` (``studio.metric_grid``'s grid cell)."""
    return page.locator(".ts-metric").filter(has_text=label).locator(".ts-metric-value")


def settle(page: Page, timeout: int = 60000):
    """Wait until Streamlit has finished running the script (its status widget is gone)."""
    page.wait_for_function(IDLE, timeout=timeout)


def drawn(page: Page, key: str, timeout: int = 30000):
    """The server's SVG drawing under ``key`` (studio.charts.show), once the browser has decoded it (an image
    that failed to load has no natural width)."""
    image = page.locator(f".st-key-{key} img").first
    image.wait_for(timeout=timeout)
    page.wait_for_function("img => img.complete && img.naturalWidth > 0", arg=image.element_handle(),
                           timeout=timeout)
    return image
