"""One seeded demo-size warehouse, one dashboard process and one Chromium for the whole session.

The browser is Debian's Chromium (`apt-get install -y chromium`; Playwright cannot download one here).
Screenshots go to a temporary folder, or to $INVOICING_SCREENSHOTS_DIR (scripts/dashboard-screenshots
points it at docs/screenshots).
"""

from __future__ import annotations

import os
from collections.abc import Iterator
from dataclasses import dataclass
from datetime import date, datetime
from pathlib import Path

import pytest
from dashboard_browser import WAIT_S
from playwright.sync_api import Browser, Page, sync_playwright

from harness.dashboard_process import dashboard_process
from harness.demo_warehouse import build_demo_warehouse

CHROMIUM = Path("/usr/bin/chromium")
# Chromium is started through a launcher that keeps it at about one worker's share of the CPU under scripts/test:
# Playwright starts it in a session of its own, which Linux schedules apart from the tests (autogroup), and as root
# it resets its threads to nice 0 and -8. Either way it took back the CPU the workers' nice leaves to the serial
# tests, which measure pacing: a 429 and an unfair share in the host budget's race (clones 26 and 28).
LAUNCHER = Path(__file__).with_name("chromium_at_the_tests_priority")


@dataclass(frozen=True)
class Dashboard:
    """The running dashboard: its URL, the warehouse it shows and the published marts' report date."""

    url: str
    warehouse: Path
    as_of: date

    @property
    def snapshot(self) -> Path:
        """The readers' copy the dashboard reads."""
        return self.warehouse.with_name(self.warehouse.stem + ".read.duckdb")


@pytest.fixture(scope="session")
def dashboard(tmp_path_factory) -> Iterator[Dashboard]:
    """A demo-size warehouse (about 1,000 documents) and `invoicing-warehouse dashboard` serving it."""
    warehouse = tmp_path_factory.mktemp("dashboard") / "warehouse.duckdb"
    # published with its month-end trends, as a run publishes it (the suite turns them off elsewhere)
    with pytest.MonkeyPatch.context() as build:
        build.setenv("INVOICING_PUBLISH_TRENDS", "1")
        as_of = build_demo_warehouse(warehouse, seed=1, scale=1000)
    with dashboard_process(warehouse, warehouse.with_name("dashboard.log")) as url:
        yield Dashboard(url, warehouse, as_of)


@pytest.fixture(scope="session")
def browser() -> Iterator[Browser]:
    """Debian's Chromium, headless; the session fails with the install command when it is missing."""
    if not CHROMIUM.exists():
        pytest.fail(f"{CHROMIUM} not found: install Debian's Chromium with `apt-get install -y chromium`")
    with sync_playwright() as playwright:
        chromium = playwright.chromium.launch(executable_path=str(LAUNCHER))
        yield chromium
        chromium.close()


# what a test's tab could not load (failed or answered 4xx/5xx) and its console's errors, for a failed test's report
BROWSER_TROUBLE = pytest.StashKey[list[str]]()


@pytest.fixture
def page(browser: Browser, request: pytest.FixtureRequest) -> Iterator[Page]:
    """A fresh browser tab (its own Streamlit session). What the browser could not load, and the errors its
    console printed, are added to the report of a test that fails: a page that never draws its figures is
    otherwise a bare timeout (it found Chromium's net::ERR_NETWORK_CHANGED, docs/testing.md)."""
    context = browser.new_context(viewport={"width": 1400, "height": 1000}, accept_downloads=True)
    # every wait not given its own bound (downloads, clicks) gets the suite's, not Playwright's 30 s: a
    # download of a rerun page outlasted 30 s once with both cores busy
    context.set_default_timeout(WAIT_S * 1000)
    tab = context.new_page()
    seen: list[str] = []
    tab.on("requestfailed", lambda failed: seen.append(f"{_clock()} {failed.failure}: {failed.url}"))
    tab.on("response", lambda response: seen.append(f"{_clock()} HTTP {response.status}: {response.url}")
           if response.status >= 400 else None)
    tab.on("console", lambda message: seen.append(f"{_clock()} console: {message.text}")
           if message.type == "error" else None)
    request.node.stash[BROWSER_TROUBLE] = seen
    yield tab
    context.close()


def _clock() -> str:
    return datetime.now().strftime("%H:%M:%S.%f")[:-3]


@pytest.hookimpl(wrapper=True)
def pytest_runtest_makereport(item: pytest.Item, call: pytest.CallInfo):
    """Adds the browser's failed loads and console errors to the report of a failed test phase."""
    report = yield
    trouble = item.stash.get(BROWSER_TROUBLE, [])
    if report.failed and trouble:
        report.sections.append(("browser: failed loads and console errors", "\n".join(trouble)))
    return report


@pytest.fixture(scope="session")
def screenshots(tmp_path_factory) -> Path:
    """Where the tests save their screenshots."""
    folder = os.environ.get("INVOICING_SCREENSHOTS_DIR")
    if folder:
        Path(folder).mkdir(parents=True, exist_ok=True)
        return Path(folder)
    return tmp_path_factory.mktemp("screenshots")
