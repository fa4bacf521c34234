"""The Cash outlook's expected inflows and the Benchmarks page, in Chromium, against the readers' copy read here
with DuckDB (and the shipped observatory file read here with the csv module)."""

from __future__ import annotations

import csv
from collections import defaultdict
from datetime import timedelta
from decimal import Decimal
from pathlib import Path

import duckdb
from dashboard_browser import open_page, parse_eur, screenshot, table_rows

from invoicing_warehouse.dashboard.queries import DISPLAY_ROWS

OBSERVATORY_FILE = Path(__file__).resolve().parents[3] / "invoicing_warehouse/dashboard/payment_terms_observatory.csv"


def _rows(dashboard, sql: str) -> list[tuple]:
    with duckdb.connect(str(dashboard.snapshot), read_only=True) as connection:
        return connection.execute(sql).fetchall()


def _period(day, as_of) -> str:
    """cash_outlook's period of a date, recomputed here: past due, week 1..8 (Monday first), later."""
    if day is None:
        return "later"
    if day < as_of:
        return "past due"
    week = (day - (as_of - timedelta(days=as_of.weekday()))).days // 7 + 1
    return f"week {week}" if week <= 8 else "later"


def test_cash_outlook_shows_expected_inflows_by_expected_payment_date(dashboard, page):
    open_page(page, dashboard.url, "cash_outlook", "cash_outlook")
    expected = _rows(dashboard, "select expected_payment_date, open_amount, basis, invoice_id "
                                "from marts.expected_payments")
    assert {basis for *_, basis, _ in expected} >= {"customer", "portal"}, "one basis only: the test proves little"
    # the inflows are net of each customer's credit (unapplied credit notes and payments), put on its oldest due
    # invoices first up to each one's open amount: worked out here from the customers' figures and the invoices
    credit = {customer: max(notes + payments, Decimal(0)) for customer, notes, payments in _rows(
        dashboard, "select customer_id, unapplied_credit_notes, unapplied_payments from marts.receivables_by_customer")}
    deducted: dict[str, Decimal] = {}
    for invoice_id, customer, amount in _rows(dashboard, "select invoice_id, customer_id, open_amount "
                                                         "from marts.receivables order by due_date, invoice_id"):
        deducted[invoice_id] = min(amount, credit.get(customer, Decimal(0)))
        credit[customer] = credit.get(customer, Decimal(0)) - deducted[invoice_id]
    assert sum(deducted.values()) > 0, "no customer credit to deduct: the netting would prove little"
    by_period: dict[str, Decimal] = defaultdict(Decimal)
    for day, amount, _, invoice_id in expected:
        by_period[_period(day, dashboard.as_of)] += amount - deducted[invoice_id]
    shown = table_rows(page, "cash_outlook", ["period_label", "expected_inflows", "forecast_inflows"])
    assert [label for label, *_ in shown] == ["past due", *[f"week {n}" for n in range(1, 9)], "later"]
    assert {label: parse_eur(amount) for label, _, amount in shown} == {
        label: by_period.get(label, Decimal(0)) for label, *_ in shown}
    # the same net receivables both ways
    assert sum(parse_eur(a) for _, a, _ in shown) == sum(parse_eur(a) for *_, a in shown) == sum(
        amount for _, amount, _, _ in expected) - sum(deducted.values())
    # the list: soonest expected first, as the mart holds them
    head = _rows(dashboard, "select reference, expected_payment_date, open_amount from marts.expected_payments "
                            f"order by expected_payment_date nulls last, reference, invoice_id limit {DISPLAY_ROWS}")
    listed = table_rows(page, "expected_payments", ["reference", "expected_payment_date", "open_amount"])
    assert [(r, d, parse_eur(a)) for r, d, a in listed] == [(r, d.isoformat(), a) for r, d, a in head]
    # no screenshot: test_dashboard_pages.py takes the page's


def test_benchmarks_page_shows_the_portal_beside_the_observatory(dashboard, page, screenshots):
    open_page(page, dashboard.url, "benchmarks", "benchmarks")
    # the observatory's ratio is annual x 360: the portal's figure computed the same way (marts.dso)
    [(dso, lateness, paid)] = _rows(dashboard, "select d.annual_dso_days_360, p.average_days_late, "
                                               "p.paid_invoice_count from marts.dso d "
                                               "join marts.payment_behaviour p using (portal_id)")
    assert paid > 50 and dso is not None and lateness is not None
    with OBSERVATORY_FILE.open(encoding="utf-8") as file:
        published = {(r["company_size"], r["measure"]): r for r in csv.DictReader(file)}
    # the default size is PME: its own lateness figure (Altares's band under 200 employees); the shipped file has
    # no PME figure for the terms, so those rows show the figure for all sizes, and say so
    shown = table_rows(page, "benchmarks", ["measure", "portal_days", "benchmark_days", "benchmark_size",
                                            "figure_year", "source"])
    by_measure = {measure.split(" (")[0].split(",")[0]: rest for measure, *rest in shown}
    dso_row, lateness_row, supplier_row = (by_measure["Customer payment terms"], by_measure["Average lateness"],
                                           by_measure["Supplier payment terms"])
    for row, portal_figure, key, size, size_shown in (
            (dso_row, dso, "customer_terms_dso", "all", "all sizes (no PME figure in the file)"),
            (lateness_row, lateness, "average_lateness", "PME", "PME"),
            (supplier_row, None, "supplier_terms", "all", "all sizes (no PME figure in the file)")):
        source = published[(size, key)]
        assert row[0] == ("" if portal_figure is None else f"{portal_figure}".replace(".", ","))
        assert row[1] == source["value_days"].replace(".", ",")
        assert row[2] == size_shown
        assert (row[3], row[4]) == (source["figure_year"], source["source"])
    screenshot(page, screenshots / "benchmarks.png")
