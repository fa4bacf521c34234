"""A readers' copy that is missing, or locked by a process holding it read-write, shows what to do, never a
traceback; the figures come back once it is there again. Runs after the other dashboard tests (file order)
and restores the copy whatever happens."""

from __future__ import annotations

import subprocess
import sys
from pathlib import Path

import duckdb
from dashboard_browser import WAIT_S, eventually, metric, open_page, parse_eur

HOLDER = """
import sys, duckdb
connection = duckdb.connect(sys.argv[1])  # read-write: DuckDB then refuses the file to other processes
print("held", flush=True)
sys.stdin.read()  # until the test closes our stdin
connection.close()
"""


def _error_text(page, base_url: str) -> str:
    page.goto(base_url)
    alert = page.locator('[data-testid="stAlertContentError"]')
    alert.wait_for(timeout=WAIT_S * 1000)
    assert page.get_by_text("Traceback").count() == 0
    assert page.locator('[data-testid="stException"]').count() == 0
    return alert.inner_text()


def _total_open(page, expected):
    """The Total open tile once it is on screen (a rerun may still be replacing the page's elements)."""
    return eventually(lambda: parse_eur(metric(page, "Total open")) if metric(page, "Total open") else None, expected)


def _open_total(dashboard) -> object:
    with duckdb.connect(str(dashboard.snapshot), read_only=True) as connection:
        return connection.execute("select open_receivables from marts.dso").fetchone()[0]


def test_a_missing_copy_or_warehouse_says_which_command_to_run(dashboard, page, screenshots):
    expected_total = _open_total(dashboard)
    aside = dashboard.snapshot.with_name("aside.read.duckdb")
    warehouse_aside = dashboard.warehouse.with_name("aside.duckdb")
    dashboard.snapshot.rename(aside)
    try:
        text = _error_text(page, dashboard.url)
        assert f"No readers' copy at {dashboard.snapshot}" in text
        assert f"invoicing-warehouse models --warehouse {dashboard.warehouse}" in text
        page.screenshot(path=str(screenshots / "missing.png"))
        dashboard.warehouse.rename(warehouse_aside)
        try:
            text = _error_text(page, dashboard.url)
            assert f"No warehouse at {dashboard.warehouse}" in text
            assert f"invoicing-warehouse demo --warehouse {dashboard.warehouse}" in text
        finally:
            warehouse_aside.rename(dashboard.warehouse)
    finally:
        aside.rename(dashboard.snapshot)
    open_page(page, dashboard.url, "", "overdue_customers")
    assert _total_open(page, expected_total) == expected_total


def test_a_copy_locked_by_a_writer_says_so(dashboard, page, screenshots):
    expected_total = _open_total(dashboard)
    holder = subprocess.Popen(
        [sys.executable, "-c", HOLDER, str(dashboard.snapshot)],
        stdin=subprocess.PIPE, stdout=subprocess.PIPE, text=True,
    )
    try:
        assert holder.stdout is not None and holder.stdout.readline().strip() == "held"
        text = _error_text(page, dashboard.url)
        assert f"The readers' copy {dashboard.snapshot} is locked by another process" in text
        assert f"PID {holder.pid}" in text  # DuckDB names the process holding the lock
        page.screenshot(path=str(screenshots / "locked.png"))
    finally:
        assert holder.stdin is not None
        holder.stdin.close()
        holder.wait(timeout=60)
    open_page(page, dashboard.url, "", "overdue_customers")
    assert _total_open(page, expected_total) == expected_total
    assert Path(dashboard.snapshot).exists()
