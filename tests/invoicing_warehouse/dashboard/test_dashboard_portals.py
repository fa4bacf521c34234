"""The Portals page (invoicing_warehouse/dashboard/screens/portals.py): hidden on the demo warehouse, which holds one
portal; on a small warehouse of two portals (two sandboxes, each synced by the regular path that records its sync, one
build) it shows one row per portal whose figures equal marts.dso of the readers' copy, read here with DuckDB,
and whose last sync is the one recorded beside the warehouse."""

from __future__ import annotations

import json

import duckdb
from dashboard_browser import WAIT_S, metric, open_page, parse_eur, screenshot, table_rows

from harness.dashboard_process import dashboard_process
from invoicing_warehouse.engine.target import WarehouseTarget
from invoicing_warehouse.runs.run_log import log_path
from tests.support.two_portals import build_two_portals


def test_the_portals_page_is_hidden_with_one_portal(dashboard, page):
    with duckdb.connect(str(dashboard.snapshot), read_only=True) as connection:
        assert connection.execute("select count(distinct portal_id) from marts.dso").fetchone() == (1,)
    open_page(page, dashboard.url, "", "overdue_customers")
    navigation = page.locator('[data-testid="stSidebarNav"]')
    assert navigation.get_by_text("Receivables", exact=True).count() == 1  # the navigation is there
    assert navigation.get_by_text("Portals", exact=True).count() == 0


def test_two_portals_show_one_row_each_equal_to_the_marts(tmp_path, page, screenshots):
    warehouse = tmp_path / "warehouse.duckdb"
    target = WarehouseTarget.duckdb_file(warehouse)
    build_two_portals(warehouse)
    recorded = json.loads(log_path(target).read_text())["last_syncs"]
    with duckdb.connect(str(warehouse.with_name("warehouse.read.duckdb")), read_only=True) as connection:
        truth = {portal: (open_total, overdue) for portal, open_total, overdue in connection.execute(
            "select portal_id, open_receivables, overdue_receivables from marts.dso").fetchall()}
    assert sorted(truth) == ["acme", "globex"]

    with dashboard_process(warehouse, tmp_path / "dashboard.log") as url:
        open_page(page, url, "portals", "portals")
        rows = table_rows(page, "portals", ["portal", "open_receivables", "overdue_receivables", "last_sync",
                                                 "failing_checks"])
        assert [row[0] for row in rows] == ["acme", "globex"]
        for portal, open_total, overdue, last_sync, failing in rows:
            assert (parse_eur(open_total), parse_eur(overdue)) == truth[portal]
            assert last_sync.startswith(recorded[portal]["at"]) and failing == "none"
        page.locator('[data-testid="stSidebarNav"]').get_by_text("Portals", exact=True).wait_for(
            timeout=WAIT_S * 1000)
        screenshot(page, screenshots / "portals.png")


def test_a_dashboard_limited_to_one_portal_lands_on_it_and_never_names_the_other(tmp_path, page, monkeypatch):
    """Security review 2, M4, in a real browser: INVOICING_DASHBOARD_PORTALS=globex on a warehouse of acme and
    globex. Unlimited, the dashboard lands on acme (the first portal); limited, the Receivables page shows globex's
    open total (marts.dso of the readers' copy, read here with DuckDB), no page lists acme, and the firm's Portals
    page is gone (one portal to see)."""
    warehouse = tmp_path / "warehouse.duckdb"
    build_two_portals(warehouse)
    with duckdb.connect(str(warehouse.with_name("warehouse.read.duckdb")), read_only=True) as connection:
        truth = dict(connection.execute("select portal_id, open_receivables from marts.dso").fetchall())
    monkeypatch.setenv("INVOICING_DASHBOARD_PORTALS", "globex")  # the dashboard process inherits it
    with dashboard_process(warehouse, tmp_path / "dashboard.log") as url:
        open_page(page, url, "", "overdue_customers")
        assert parse_eur(metric(page, "Total open")) == truth["globex"] != truth["acme"]
        assert "acme" not in page.locator('[data-testid="stSidebar"]').inner_text()
        assert page.locator('[data-testid="stSidebarNav"]').get_by_text("Portals", exact=True).count() == 0
