"""Reading the dashboard in Chromium: figures by label, tables by name, waits bounded and retried until
Streamlit's rerun has replaced what an earlier run showed."""

from __future__ import annotations

import re
import time
from collections.abc import Callable
from decimal import Decimal
from typing import TypeVar

from playwright.sync_api import Download, Locator, Page
from playwright.sync_api import TimeoutError as PlaywrightTimeout

T = TypeVar("T")
WAIT_S = 60.0


def eventually(read: Callable[[], T], expected: T, timeout_s: float = WAIT_S) -> T:
    """Polls `read()` until it equals `expected` (bounded); returns the last value read, for the assert."""
    deadline = time.monotonic() + timeout_s
    value = read()
    while value != expected and time.monotonic() < deadline:
        time.sleep(0.25)
        value = read()
    return value


def parse_eur(text: str) -> Decimal:
    """`1 234,56 €` or `€1,234.56` (either sign) -> Decimal('1234.56')."""
    if not text.strip():
        raise ValueError("no amount to read: the element is not on the page (yet), or shows no figure")
    cleaned = text.replace("\u00a0", "").replace(" ", "").replace("€", "").replace("−", "-")
    if re.search(r",\d\d$", cleaned):  # French: the comma is the decimal mark
        cleaned = cleaned.replace(".", "").replace(",", ".")
    else:
        cleaned = cleaned.replace(",", "")
    return Decimal(cleaned)


def open_page(page: Page, base_url: str, path: str, key_table: str) -> None:
    """Navigates to a page (a new Streamlit session) and waits for its key table."""
    page.goto(f"{base_url}/{path}")
    page.wait_for_selector(f'table[data-table="{key_table}"]', timeout=WAIT_S * 1000)
    settled(page)


def settled(page: Page) -> None:
    """Waits until the script run is over and drawn: no element left from an earlier run, no run in progress, no
    element still waiting for its code. Streamlit loads an element's script the first time a tab shows one, and
    draws a skeleton meanwhile: the Payables page's tiles once came after its table (clone33)."""
    page.wait_for_function(
        """() => !document.querySelector('[data-stale="true"]')
                 && !document.querySelector('[data-testid="stStatusWidget"]')
                 && !document.querySelector('[data-testid="stSkeleton"]')""",
        timeout=WAIT_S * 1000,
    )


def metric(page: Page, label: str) -> str:
    """The value shown by the metric whose label is `label` ('' while it is not there)."""
    metrics = page.locator('[data-testid="stMetric"]').filter(
        has=page.locator('[data-testid="stMetricLabel"]', has_text=re.compile(f"^{re.escape(label)}$"))
    )
    if metrics.count() != 1:
        return ""
    return metrics.locator('[data-testid="stMetricValue"]').inner_text().strip()


def table_rows(page: Page, name: str, columns: list[str]) -> list[tuple[str, ...]]:
    """The cells of `columns` of each row of the table `data-table=name`, as displayed."""
    return page.evaluate(
        """([name, columns]) => {
            const table = document.querySelector(`table[data-table="${name}"]`);
            if (!table) return [];
            return [...table.querySelectorAll('tbody tr')]
                .filter(row => row.querySelector('td[data-column]'))
                .map(row => columns.map(c => row.querySelector(`td[data-column="${c}"]`).innerText.trim()));
        }""",
        [name, columns],
    )


def caption_shows(page: Page, as_of: str) -> None:
    """Waits until the page's heading says it shows `as_of`."""
    page.get_by_text(f"As of {as_of}").first.wait_for(timeout=WAIT_S * 1000)


def choose_as_of(page: Page, as_of: str) -> None:
    """Types a date into the sidebar's As-of picker and waits for the page to show it. The picker is a
    field of year, month and day segments: typing fills them in turn; leaving the field commits the date."""
    page.locator('[data-testid="stDateInput"] [role="spinbutton"]').first.click()
    page.keyboard.type(as_of.replace("-", ""))
    page.keyboard.press("Enter")
    page.keyboard.press("Escape")
    page.locator('[data-testid="stMain"] h1').first.click()
    caption_shows(page, as_of)


def go_to(page: Page, title: str, key_table: str) -> None:
    """Follows a sidebar link (the same Streamlit session: the chosen date stays) and waits for its table."""
    page.locator('[data-testid="stSidebarNav"]').get_by_text(title, exact=True).click()
    page.wait_for_selector(f'table[data-table="{key_table}"]', timeout=WAIT_S * 1000)


def screenshot(page: Page, path) -> None:
    """Saves the page once its charts (Vega-Lite, drawn after the data arrives) are on screen."""
    charts = page.locator('[data-testid="stVegaLiteChart"]')
    for index in range(charts.count()):
        charts.nth(index).locator("canvas, svg").first.wait_for(timeout=WAIT_S * 1000)
    page.wait_for_timeout(300)  # Vega-Lite's own transition
    # Streamlit scrolls its own container, not the window: a full-page shot shows only that container's
    # viewport, wherever the test left it. So: back to the top, and a viewport tall enough for the page.
    page.evaluate("document.querySelectorAll('*').forEach(e => { if (e.scrollTop) e.scrollTop = 0; })")
    size = page.viewport_size
    page.set_viewport_size({"width": size["width"] if size else 1400, "height": 2000})
    page.wait_for_timeout(300)
    page.screenshot(path=str(path), full_page=True)
    if size:
        page.set_viewport_size(size)


DOWNLOAD_TRIES = 3


def download(page: Page, button: Callable[[], Locator], timeout_s: float = 20.0) -> Download:
    """Clicks the download `button()` (located again on each try) until the browser receives a file, at most
    DOWNLOAD_TRIES times: a click that lands while Streamlit is still rerunning the page after an earlier
    change hits a button about to be replaced, and no download follows."""
    for attempt in range(DOWNLOAD_TRIES):
        try:
            with page.expect_download(timeout=timeout_s * 1000) as download_info:
                button().click()
            return download_info.value
        except PlaywrightTimeout:
            if attempt == DOWNLOAD_TRIES - 1:
                raise
    raise AssertionError("unreachable: the last try returns or raises")
