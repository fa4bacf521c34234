"""marts.expected_payments, the cash outlook's forecast inflows and marts.payment_behaviour on a hand-made
payment history, every expected figure worked out by hand below (the rule: sql/marts/
expected_payments.sql's comments).

Report date D = Tuesday 2026-03-31. Paid invoices (days after due = last payment date - due date):
- customer a (6 paid: basis `customer`): -2, 0 (PAID at 95 of 100: the write-off closes it), 3, 5, 10, and 40 (a
  400.00 invoice paid in two parts, 100 on due + 10 and 300 on due + 40: its last payment dates it); median 4;
- customer b (2 paid): 20, 30, median 25; its invoice b-late paid on 2026-04-05, after D: no history on D;
- customer c: none (c-cn was settled by a credit note alone: no payment, no history);
- customer e: one invoice paid on its due date 2025-01-15, more than a year before D (history, but outside the
  payment behaviour's 365-day window).
Portal: 9 paid invoices, -2 0 0 3 5 10 20 30 40, median 5.
Open on D, expected = due + round(w x customer median + (1 - w) x 5), w = min(n, 5) / 5, never before D + 1:
- a-open 1000.00 due 04-10, w 1: + 4 -> 04-14;
- b-open 200.00 due 04-01, w 0.4: 0.4 x 25 + 0.6 x 5 = 13 -> 04-14; b-late 300.00 due 03-20 + 13 -> 04-02;
- c-old 50.00 due 03-01, w 0: + 5 -> 03-06, on or before D -> D + 1 = 04-01 (is_estimate_passed);
  c-new 70.00 due 04-20 + 5 -> 04-25.
"""

from __future__ import annotations

from collections.abc import Iterator
from datetime import date
from decimal import Decimal

import duckdb
import pytest

from harness.model_raw_tables import create_raw_tables, insert

D = date(2026, 3, 31)


def _midnight(day: str) -> str:
    return f"{day}T00:00:00Z"


def _invoice(doc_id: str, customer: str, amount: str, emit: str, due: str, status: str = "VALIDATED",
             **extra) -> dict:
    row = {"id": doc_id, "customer_id": customer, "type": "INVOICE", "status": status, "reference": doc_id.upper(),
           "emit_date": _midnight(emit), "due_date": _midnight(due), "amount_vat_net": amount, "amount_vat": amount,
           "version": "1.0", "last_update": "2026-03-01T10:00:00Z"}
    row.update(extra)
    return row


def _payment(usage_id: str, customer: str, invoice: str, amount: str, day: str) -> dict:
    return {"id": usage_id, "type": "TRANSACTION", "customer_id": customer, "invoice_id": invoice,
            "transaction_id": f"t-{usage_id}", "amount": amount, "date": _midnight(day)}


# (invoice, customer, amount, due date, payments as (amount, date)); emit date = due date - 30
PAID = [
    ("a1", "a", "100.00", "2025-06-30", [("100.00", "2025-06-28")]),  # -2
    ("a3", "a", "100.00", "2025-08-31", [("100.00", "2025-09-03")]),  # 3
    ("a4", "a", "100.00", "2025-09-30", [("100.00", "2025-10-05")]),  # 5
    ("a5", "a", "100.00", "2025-10-31", [("100.00", "2025-11-10")]),  # 10
    ("a6", "a", "400.00", "2025-11-30", [("100.00", "2025-12-10"), ("300.00", "2026-01-09")]),  # 40
    ("b1", "b", "200.00", "2025-12-31", [("200.00", "2026-01-20")]),  # 20
    ("b2", "b", "200.00", "2026-01-31", [("200.00", "2026-03-02")]),  # 30
    ("e1", "e", "500.00", "2025-01-15", [("500.00", "2025-01-15")]),  # 0, before the one-year window
]


def _emit(due: str) -> str:
    return date.fromordinal(date.fromisoformat(due).toordinal() - 30).isoformat()


def _raw_rows() -> tuple[list[dict], list[dict]]:
    documents, usages = [], []
    for invoice, customer, amount, due, payments in PAID:
        documents.append(_invoice(invoice, customer, amount, _emit(due), due))
        usages += [_payment(f"{invoice}-{n}", customer, invoice, paid, day) for n, (paid, day) in enumerate(payments)]
    # PAID at 95.00 of 100.00: the application wrote the 5.00 off; paid on its due date (0 days)
    documents.append(_invoice("a2", "a", "100.00", "2025-06-30", "2025-07-31", status="PAID"))
    usages.append(_payment("a2-0", "a", "a2", "95.00", "2025-07-31"))
    # settled by a credit note alone: no payment, no history for c
    documents.append(_invoice("c-cn", "c", "100.00", "2026-02-08", "2026-03-10"))
    documents.append(_invoice("cn1", "c", "100.00", "2026-03-12", "2026-03-12", subtype="CREDIT_NOTE"))
    usages.append({"id": "cn1-0", "type": "CREDIT_NOTE", "customer_id": "c", "invoice_id": "c-cn",
                   "credit_note_id": "cn1", "amount": "100.00", "date": _midnight("2026-03-12")})
    # open on D
    documents += [
        _invoice("a-open", "a", "1000.00", "2026-03-11", "2026-04-10"),
        _invoice("b-open", "b", "200.00", "2026-03-02", "2026-04-01"),
        _invoice("b-late", "b", "300.00", "2026-02-18", "2026-03-20"),
        _invoice("c-old", "c", "50.00", "2026-01-30", "2026-03-01"),
        _invoice("c-new", "c", "70.00", "2026-03-21", "2026-04-20"),
    ]
    usages.append(_payment("b-late-0", "b", "b-late", "300.00", "2026-04-05"))  # after D: open on D
    return documents, usages


@pytest.fixture(scope="module")
def warehouse() -> Iterator[duckdb.DuckDBPyConnection]:
    """The hand-made history's models built as of D (in memory, once for the module)."""
    from invoicing_warehouse.engine.sql_runner import build_models

    conn = duckdb.connect()
    conn.execute("set TimeZone = 'America/New_York'")  # midnight-UTC dates must not slide to the day before
    create_raw_tables(conn)
    insert(conn, "customers", [{"id": c, "name": c.upper(), "reference": f"C-{c}", "deleted": False}
                               for c in ("a", "b", "c", "e")])
    documents, usages = _raw_rows()
    insert(conn, "documents", documents)
    insert(conn, "transaction_usages", usages)
    build_models(conn, as_of=D)
    yield conn
    conn.close()


EXPECTED_COLUMNS = ("invoice_id, basis, customer_paid_count, customer_median_days_after_due, portal_paid_count, "
                    "portal_median_days_after_due, customer_weight, expected_days_after_due, expected_payment_date, "
                    "is_estimate_passed")


def test_history_is_what_was_paid_in_full_by_the_report_date(warehouse):
    rows = warehouse.execute("select invoice_id, paid_date, days_after_due from marts.payment_history "
                             "order by invoice_id").fetchall()
    assert rows == [
        ("a1", date(2025, 6, 28), -2), ("a2", date(2025, 7, 31), 0), ("a3", date(2025, 9, 3), 3),
        ("a4", date(2025, 10, 5), 5), ("a5", date(2025, 11, 10), 10), ("a6", date(2026, 1, 9), 40),
        ("b1", date(2026, 1, 20), 20), ("b2", date(2026, 3, 2), 30), ("e1", date(2025, 1, 15), 0),
    ]


def test_expected_payment_dates_by_hand(warehouse):
    rows = warehouse.execute(f"select {EXPECTED_COLUMNS} from marts.expected_payments order by invoice_id").fetchall()
    dec = Decimal
    assert rows == [
        ("a-open", "customer", 6, dec("4.0"), 9, dec("5.0"), dec("1.00"), 4, date(2026, 4, 14), False),
        ("b-late", "customer+portal", 2, dec("25.0"), 9, dec("5.0"), dec("0.40"), 13, date(2026, 4, 2), False),
        ("b-open", "customer+portal", 2, dec("25.0"), 9, dec("5.0"), dec("0.40"), 13, date(2026, 4, 14), False),
        # no history: the portal's median, and an estimate already past moves to D + 1
        ("c-new", "portal", 0, None, 9, dec("5.0"), dec("0.00"), 5, date(2026, 4, 25), False),
        ("c-old", "portal", 0, None, 9, dec("5.0"), dec("0.00"), 5, date(2026, 4, 1), True),
    ]
    # every open invoice of marts.receivables has its row, with its open amount
    assert warehouse.execute(
        "select sum(open_amount), count(*) from marts.expected_payments").fetchone() == (dec("1620.00"), 5)
    assert warehouse.execute(
        "select sum(open_amount), count(*) from marts.receivables").fetchone() == (dec("1620.00"), 5)


def test_cash_outlook_forecast_inflows_by_expected_date(warehouse):
    # D's week: Monday 03-30 .. Sunday 04-05. by due date: past due b-late 300 + c-old 50; week 1 b-open 200 (04-01);
    # week 2 a-open 1000 (04-10); week 4 c-new 70 (04-20). by expected date: week 1 b-late 300 (04-02) + c-old 50
    # (04-01); week 3 a-open 1000 + b-open 200 (04-14); week 4 c-new 70 (04-25). no payables: net = inflows.
    rows = warehouse.execute(
        "select period_label, expected_inflows, receivable_count, forecast_inflows, forecast_receivable_count, "
        "forecast_cumulative_net from marts.cash_outlook where period_index <= 5 order by period_index").fetchall()
    dec = Decimal
    assert rows == [
        ("past due", dec("350.00"), 2, dec("0.00"), 0, dec("0.00")),
        ("week 1", dec("200.00"), 1, dec("350.00"), 2, dec("350.00")),
        ("week 2", dec("1000.00"), 1, dec("0.00"), 0, dec("350.00")),
        ("week 3", dec("0.00"), 0, dec("1200.00"), 2, dec("1550.00")),
        ("week 4", dec("70.00"), 1, dec("70.00"), 1, dec("1620.00")),
        ("week 5", dec("0.00"), 0, dec("0.00"), 0, dec("1620.00")),
    ]
    assert warehouse.execute("select sum(expected_inflows) = sum(forecast_inflows) from marts.cash_outlook"
                             ).fetchone() == (True,)


def test_payment_behaviour_over_the_year(warehouse):
    # window 2025-04-01 .. 2026-03-31: a1..a6, b1, b2 (e1 paid 2025-01-15 is outside). days late 0 0 3 5 10 40 20
    # 30: 6 late of 8, mean 108 / 8 = 13.5; weighted (3x100 + 5x100 + 10x100 + 40x400 + 20x200 + 30x200) / 1300 =
    # 27800 / 1300 = 21.38 -> 21.4; when late 108 / 6 = 18.0; median of -2 0 3 5 10 20 30 40 = 7.5
    row = warehouse.execute(
        "select window_start, paid_invoice_count, late_invoice_count, late_share, paid_amount, average_days_late, "
        "average_days_late_weighted, average_days_late_when_late, median_days_after_due from marts.payment_behaviour"
    ).fetchall()
    dec = Decimal
    assert row == [(date(2025, 4, 1), 8, 6, dec("0.7500"), dec("1300.00"), dec("13.5"), dec("21.4"), dec("18.0"),
                    dec("7.5"))]
    # the DSO beside it is marts.dso's own
    assert warehouse.execute("select p.dso_days is not distinct from d.dso_days from marts.payment_behaviour p "
                             "join marts.dso d using (portal_id)").fetchone() == (True,)
