"""While the gate holds a build back (a blocking check fails), every page shows the banner, what failed and which
figures are stale, above the last good figures; once a build passes, the banner goes. Restores the warehouse
whatever happens."""

from __future__ import annotations

import hashlib

import duckdb
from dashboard_browser import WAIT_S, open_page, screenshot

from invoicing_warehouse.engine.target import WarehouseTarget
from invoicing_warehouse.runs.gate import build_and_publish

PAGES = (("", "overdue_customers"), ("payables", "payables_this_week"), ("cash_outlook", "cash_outlook"),
         ("trends", "trends"), ("freshness", "checks"))
DUPLICATE = "insert into invoicing_raw.documents select * from invoicing_raw.documents order by id limit 1"
UNDO = ("delete from invoicing_raw.documents where rowid = (select max(rowid) from invoicing_raw.documents "
        "where id = (select min(id) from invoicing_raw.documents))")


def _banner(page) -> str:
    alert = page.locator('[data-testid="stAlertContentError"]').filter(has_text="Figures held back")
    alert.wait_for(timeout=WAIT_S * 1000)
    return alert.inner_text()


def test_every_page_shows_the_banner_while_a_blocking_check_holds_the_figures(dashboard, page, screenshots):
    target = WarehouseTarget.duckdb_file(dashboard.warehouse)
    published = hashlib.sha256(dashboard.snapshot.read_bytes()).hexdigest()
    with duckdb.connect(str(dashboard.warehouse)) as connection:
        connection.execute(DUPLICATE)
    try:
        held = build_and_publish(target, note="held build", as_of=dashboard.as_of)
        assert held.failures and held.published is None
        assert hashlib.sha256(dashboard.snapshot.read_bytes()).hexdigest() == published
        for path, key_table in PAGES:
            open_page(page, dashboard.url, path, key_table)  # the last good figures are still shown
            text = _banner(page)
            assert "ids_unique on invoicing_raw.documents" in text and "marts.receivables" in text, text
            assert "last good copy" in text, text
            if not path:
                screenshot(page, screenshots / "held.png")
    finally:
        with duckdb.connect(str(dashboard.warehouse)) as connection:
            connection.execute(UNDO)
        restored = build_and_publish(target, note="restored", as_of=dashboard.as_of)
    assert restored.ok, restored.lines()
    open_page(page, dashboard.url, "", "overdue_customers")
    assert page.locator('[data-testid="stAlertContentError"]').filter(has_text="Figures held back").count() == 0
