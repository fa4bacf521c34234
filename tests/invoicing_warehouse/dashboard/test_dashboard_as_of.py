"""The As-of picker: another date shows the figures `invoicing-warehouse models --as-of D` builds (run here on
a copy of the warehouse), the dashboard's own warehouse untouched; the English style and the CSV downloads
carry the same values."""

from __future__ import annotations

import csv
import io
import shutil
import subprocess
import sys
from datetime import timedelta
from decimal import Decimal

import duckdb
from dashboard_browser import (
    caption_shows,
    choose_as_of,
    download,
    eventually,
    go_to,
    metric,
    open_page,
    parse_eur,
    screenshot,
    settled,
    table_rows,
)

from invoicing_warehouse.dashboard.queries import DISPLAY_ROWS


def _models_as_of(dashboard, as_of, tmp_path) -> duckdb.DuckDBPyConnection:
    copy = tmp_path / "copy.duckdb"
    shutil.copyfile(dashboard.warehouse, copy)
    result = subprocess.run(
        [sys.executable, "-m", "invoicing_warehouse.cli", "models", "--warehouse", str(copy),
         "--as-of", as_of.isoformat()],
        capture_output=True, text=True, timeout=300, check=False,
    )
    assert result.returncode == 0, result.stderr
    return duckdb.connect(str(copy), read_only=True)


def _exceptions(page) -> list[str]:
    """The text of every error box Streamlit drew in place of a section (an exception the page did not catch)."""
    return page.locator('[data-testid="stException"]').all_inner_texts()


def test_a_past_date_shows_the_models_built_for_it(dashboard, page, tmp_path, screenshots):
    past = dashboard.as_of - timedelta(days=45)
    published_mtime = dashboard.warehouse.stat().st_mtime_ns
    with _models_as_of(dashboard, past, tmp_path) as truth:
        [(open_total, overdue, dso)] = truth.execute(
            "select open_receivables, overdue_receivables, dso_days from marts.dso").fetchall()
        overdue_list = truth.execute(
            "select customer_reference, overdue_amount from marts.overdue_customers "
            "order by overdue_amount desc, customer_name, customer_id limit 20").fetchall()
        outlook = truth.execute(
            "select period_label, expected_inflows, expected_outflows, cumulative_net from marts.cash_outlook "
            "order by period_index").fetchall()
        payables_total = truth.execute("select coalesce(sum(amount_due), 0) from marts.supplier_payables").fetchone()[0]
        expected_head = truth.execute(
            "select reference, expected_payment_date, open_amount from marts.expected_payments "
            f"order by expected_payment_date nulls last, reference, invoice_id limit {DISPLAY_ROWS}").fetchall()
    with duckdb.connect(str(dashboard.snapshot), read_only=True) as published:
        published_open = published.execute("select open_receivables from marts.dso").fetchone()[0]
    assert open_total != published_open, "the two dates have the same total: the test would prove little"

    open_page(page, dashboard.url, "", "overdue_customers")
    assert eventually(lambda: parse_eur(metric(page, "Total open") or "0"), published_open) == published_open
    choose_as_of(page, past.isoformat())
    # Streamlit replaces the figures one by one as the rerun streams them: read them together until they settle
    expected = (open_total, overdue, f"{dso:.1f}".replace(".", ","))
    shown_figures = eventually(
        lambda: (parse_eur(metric(page, "Total open") or "0"), parse_eur(metric(page, "Overdue") or "0"),
                 metric(page, "DSO (days)")),
        expected,
    )
    assert shown_figures == expected
    shown = eventually(
        lambda: [(r, parse_eur(a)) for r, a in table_rows(page, "overdue_customers", ["customer_reference",
                                                                                      "overdue_amount"])],
        overdue_list,
    )
    assert shown == overdue_list and overdue_list
    screenshot(page, screenshots / "receivables_as_of.png")

    go_to(page, "Cash outlook", "cash_outlook")
    caption_shows(page, past.isoformat())
    shown = eventually(
        lambda: [(label, *map(parse_eur, amounts)) for label, *amounts in table_rows(
            page, "cash_outlook", ["period_label", "expected_inflows", "expected_outflows", "cumulative_net"])],
        outlook,
    )
    assert shown == outlook
    # the section below the outlook reads a mart of its own (marts.expected_payments): built for this date too
    head = [(r, d.isoformat(), a) for r, d, a in expected_head]
    listed = eventually(lambda: [(r, d, parse_eur(a)) for r, d, a in table_rows(
        page, "expected_payments", ["reference", "expected_payment_date", "open_amount"])], head)
    assert listed == head and head
    assert _exceptions(page) == []

    go_to(page, "Payables", "payables_this_week")
    caption_shows(page, past.isoformat())
    assert eventually(lambda: parse_eur(metric(page, "Total to pay") or "0"), payables_total) == payables_total
    # every page drawn from the models of this date shows its figures, not an error in their place
    for title, key_table in (("Late-payment claims", "claims_by_customer"),
                             ("Payment terms (D441-6)", "payment_terms_received"), ("Benchmarks", "benchmarks")):
        go_to(page, title, key_table)
        caption_shows(page, past.isoformat())
        settled(page)
        assert _exceptions(page) == [], title
    # nothing was written to the warehouse the dashboard shows
    assert dashboard.warehouse.stat().st_mtime_ns == published_mtime


def test_english_amounts_and_csv_downloads_carry_the_marts_values(dashboard, page):
    with duckdb.connect(str(dashboard.snapshot), read_only=True) as published:
        [(open_total,)] = published.execute("select open_receivables from marts.dso").fetchall()
        overdue = published.execute(
            "select customer_id, overdue_amount from marts.overdue_customers "
            "order by overdue_amount desc, customer_name, customer_id").fetchall()
    open_page(page, dashboard.url, "", "overdue_customers")
    page.get_by_text("€1,234.56").click()
    english = eventually(lambda: metric(page, "Total open"), f"€{open_total:,.2f}")
    assert english == f"€{open_total:,.2f}"
    downloaded = download(page, lambda: page.get_by_role("button", name=f"Download CSV ({len(overdue)} rows)"))
    rows = list(csv.DictReader(io.StringIO(downloaded.path().read_text(encoding="utf-8"))))
    assert [(row["customer_id"], Decimal(row["overdue_amount"])) for row in rows] == overdue
