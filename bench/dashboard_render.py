"""Benchmark: time to first render of each dashboard page, measured in Chromium (navigation start to the
page's key table visible), on the demo warehouse and on N generated documents (default 1,000,000).

    .venv/bin/python bench/dashboard_render.py [--documents N] [--demo-scale 1000] [--skip-demo] [--pages A,B]
                                               [--chromium PATH]

For each warehouse: a real `invoicing-warehouse dashboard` process (its start-to-healthy time printed, the
warm-up included); each page opened in a fresh browser context (a new tab: Streamlit's page and a new
session), first right after the server started (`cold`: the server's warm-up has imported the pages and
cached the landing view's figures before it listened; Trends, twelve month-end builds, is warmed up in a thread
once the server listens, and a first visit waits for what is left of it) and then again (`warm`); then each page reached
by its sidebar link in one open tab (how a user moves between pages). Then the As-of picker set 30 days back (the
models built in memory). Target: under 2 s per page at 1,000,000 documents. The big warehouse is generated like
bench/models_build.py (harness/model_raw_tables.py's SQL generator), its models built and published.
"""

from __future__ import annotations

import argparse
import os
import sys
import tempfile
import time
from datetime import date, timedelta
from pathlib import Path

import duckdb
from playwright.sync_api import Browser, BrowserContext, sync_playwright

REPO = Path(__file__).resolve().parent.parent
sys.path.insert(0, str(REPO))
sys.path.insert(0, str(REPO / "tests" / "invoicing_warehouse" / "dashboard"))

from dashboard_browser import choose_as_of, metric  # noqa: E402

from bench.models_build import generate_raw_tables  # noqa: E402
from harness.dashboard_process import PAGE_KEY_TABLES, PAGE_PATHS, dashboard_process  # noqa: E402
from harness.demo_warehouse import build_demo_warehouse  # noqa: E402
from invoicing_warehouse.engine.target import WarehouseTarget  # noqa: E402
from invoicing_warehouse.runs.gate import build_and_publish  # noqa: E402

CHROMIUM = "/usr/bin/chromium"
GENERATED_AS_OF = date(2026, 1, 31)


def _generated_warehouse(path: Path, documents: int) -> date:
    started = time.perf_counter()
    with duckdb.connect(str(path)) as connection:
        generate_raw_tables(connection, documents, GENERATED_AS_OF)
    print(f"  generated {documents:,} documents in {time.perf_counter() - started:.1f} s")
    # built and published through the gate, as a run does: the month-end trends are computed then
    started = time.perf_counter()
    os.environ.setdefault("INVOICING_PUBLISH_TRENDS", "1")
    outcome = build_and_publish(WarehouseTarget.duckdb_file(path), note="bench", as_of=GENERATED_AS_OF)
    assert outcome.published and not outcome.failures, outcome.lines()
    print(f"  built and published through the gate in {time.perf_counter() - started:.1f} s "
          f"(trends {'published' if outcome.trend_refused is None else 'refused: ' + outcome.trend_refused})")
    return GENERATED_AS_OF


def _render_seconds(browser: Browser, url: str, page_name: str, context: BrowserContext | None = None) -> float:
    # without `context`: a fresh browser profile (Streamlit's scripts downloaded again); with it: a new tab
    # of a browser that has opened the app before (scripts cached), each tab its own Streamlit session
    own = context is None
    context = context or browser.new_context(viewport={"width": 1400, "height": 1000})
    try:
        page = context.new_page()
        started = time.perf_counter()
        page.goto(f"{url}/{PAGE_PATHS[page_name]}")
        page.wait_for_selector(f'table[data-table="{PAGE_KEY_TABLES[page_name]}"]', timeout=300_000)
        seconds = time.perf_counter() - started
        page.close()
        return seconds
    finally:
        if own:
            context.close()


def _sidebar_seconds(browser: Browser, url: str, pages: list[str]) -> dict[str, float]:
    # one session, as a user moves between pages: click each link, wait for that page's key table
    context = browser.new_context(viewport={"width": 1400, "height": 1000})
    seconds = {}
    try:
        page = context.new_page()
        page.goto(f"{url}/freshness")
        page.wait_for_selector('table[data-table="checks"]', timeout=300_000)
        for name in pages:
            started = time.perf_counter()
            page.locator('[data-testid="stSidebarNav"]').get_by_text(name, exact=True).click()
            page.wait_for_selector(f'table[data-table="{PAGE_KEY_TABLES[name]}"]', timeout=300_000)
            seconds[name] = time.perf_counter() - started
        return seconds
    finally:
        context.close()


def _checks_seconds(browser: Browser, url: str) -> float:
    context = browser.new_context(viewport={"width": 1400, "height": 1000})
    try:
        page = context.new_page()
        started = time.perf_counter()
        page.goto(f"{url}/freshness")
        page.wait_for_selector('table[data-table="checks"]', timeout=300_000)
        return time.perf_counter() - started
    finally:
        context.close()


def _as_of_seconds(browser: Browser, url: str, as_of: date) -> float:
    context = browser.new_context(viewport={"width": 1400, "height": 1000})
    try:
        page = context.new_page()
        page.goto(url)
        page.wait_for_selector('table[data-table="overdue_customers"]', timeout=300_000)
        before = metric(page, "Total open")
        started = time.perf_counter()
        choose_as_of(page, as_of.isoformat())
        # the heading shows the date before the figures: wait for the total of the new date
        deadline = started + 300
        while metric(page, "Total open") in ("", before) and time.perf_counter() < deadline:
            time.sleep(0.05)
        return time.perf_counter() - started
    finally:
        context.close()


def _measure(browser: Browser, label: str, warehouse: Path, as_of: date, pages: list[str]) -> None:
    size = warehouse.with_name(warehouse.stem + ".read.duckdb").stat().st_size / 1e6
    print(f"=== {label}: readers' copy {size:.0f} MB, marts as of {as_of}")
    log = warehouse.with_name("dashboard.log")
    starting = time.perf_counter()
    with dashboard_process(warehouse, log) as url:
        warm_up = [line.split(": ", 1)[-1] for line in log.read_text().splitlines()
                   if "invoicing_warehouse.dashboard.warm_up" in line]
        print(f"  server start to healthy: {time.perf_counter() - starting:.2f} s (warm-up: {'; '.join(warm_up)})")
        print("  navigation to the key table visible; cold = first visit after the server started (the warm-up "
              "cached the landing view's figures; the checks and other dates still run their queries), "
              "warm = again; fresh = new browser profile, tab = new tab of a browser that has the "
              "app's scripts cached (each a new Streamlit session)")
        browsing = browser.new_context(viewport={"width": 1400, "height": 1000})
        try:
            for name in pages:
                cold = _render_seconds(browser, url, name)
                warm = _render_seconds(browser, url, name)
                tab = _render_seconds(browser, url, name, browsing)
                print(f"  {name:<13} cold {cold:6.2f} s   warm fresh {warm:6.2f} s   warm tab {tab:6.2f} s",
                      flush=True)
        finally:
            browsing.close()
        trends = [line.split(": ", 1)[-1] for line in log.read_text().splitlines()
                  if "trends" in line and "warm_up" in line]
        print(f"  Trends warm-up in its thread beside the server: {'; '.join(trends) or 'not finished'}")
        print(f"  Freshness checks table (the checks run on the copy, cached): {_checks_seconds(browser, url):6.2f} s")
        switches = _sidebar_seconds(browser, url, pages)
        print("  sidebar link in an open tab: " + ", ".join(f"{n} {s:.2f} s" for n, s in switches.items()))
        back = as_of - timedelta(days=30)
        print(f"  As-of {back} (models built in memory): {_as_of_seconds(browser, url, back):6.2f} s", flush=True)


def main(argv: list[str] | None = None) -> int:
    """Builds the warehouses, measures, prints figures."""
    parser = argparse.ArgumentParser(description=__doc__.splitlines()[0])
    parser.add_argument("--documents", type=int, default=1_000_000)
    parser.add_argument("--demo-scale", type=int, default=1000)
    parser.add_argument("--skip-demo", action="store_true")
    parser.add_argument("--chromium", default=CHROMIUM,
                        help="the browser's executable (default: Debian's Chromium; the test suite's smoke run "
                             "gives its launcher at the tests' priority, "
                             "tests/invoicing_warehouse/dashboard/chromium_at_the_tests_priority)")
    parser.add_argument("--pages", default=",".join(PAGE_PATHS),
                        help="the pages timed, by their sidebar names, comma-separated (default: all)")
    args = parser.parse_args(argv)
    pages = [name.strip() for name in args.pages.split(",") if name.strip()]
    unknown = [name for name in pages if name not in PAGE_PATHS]
    if unknown:
        parser.error(f"unknown page(s) {', '.join(unknown)}; the pages: {', '.join(PAGE_PATHS)}")
    with tempfile.TemporaryDirectory() as tmp, sync_playwright() as playwright:
        browser = playwright.chromium.launch(executable_path=args.chromium)
        try:
            if not args.skip_demo:
                demo = Path(tmp) / "demo" / "warehouse.duckdb"
                demo.parent.mkdir()
                as_of = build_demo_warehouse(demo, seed=1, scale=args.demo_scale)
                _measure(browser, f"demo warehouse (sandbox seed 1, scale {args.demo_scale})", demo, as_of, pages)
            big = Path(tmp) / "big" / "warehouse.duckdb"
            big.parent.mkdir()
            print(f"=== generating {args.documents:,} documents")
            as_of = _generated_warehouse(big, args.documents)
            _measure(browser, f"{args.documents:,} generated documents", big, as_of, pages)
        finally:
            browser.close()
    return 0


if __name__ == "__main__":
    raise SystemExit(main())
