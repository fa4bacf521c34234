"""marts.dso's four figures on a hand-made portal, every figure worked out by hand below (docs/models.md, "DSO",
states the definitions and their sources).

Sources of the definitions:
- sales method (the headline, gross): open receivables incl. tax on D / invoices incl. tax emitted in the 90 days
  ending on D x 90 (the "méthode comptable" of DSO guides; the figure a credit manager quotes);
- net: each customer's unapplied credit notes and payments are deducted up to what *that* customer owes; what
  is left over is owed to the customer (a credit balance is a liability, Plan comptable général account 419
  "clients créditeurs", not a deduction from other customers' debts), over sales net of the credit notes of the
  window;
- count-back (the "méthode par épuisement du chiffre d'affaires"): receivables exhausted against each month's
  sales going back from D;
- Banque de France ratio: customer receivables / annual turnover incl. tax x 360 (Banque de France, "Les délais
  de paiement", the Observatoire des délais de paiement's annual report, definition of "délais clients").

Report date D = 2026-03-31: the 90-day window is 2026-01-01 .. 2026-03-31; the 12 months 2025-04-01 .. 2026-03-31.

Customers (every one a business by its siret):
  a: A1 1000.00 emitted 03-01, due 03-31, open; credit note CNa 300.00 emitted 2025-12-20, unapplied; payment
     Ta 100.00 on 03-20, used nowhere.
  b: B1 600.00 emitted 02-15, due 03-17, PAID by Tb 600.00 on 03-15; credit note CNb 250.00 emitted 03-20,
     unapplied: b owes nothing, so its 250.00 is owed back to it.
  c: C1 200.00 emitted 01-10, due 02-09, open; credit note CNc 500.00 emitted 2025-12-28, unapplied: 200.00 of
     it settles C1, 300.00 is owed back.
  d: D1 900.00 emitted 2025-12-15, due 2026-01-14, open; E1 1200.00 emitted 2025-06-01, paid by Te on 2025-07-01.
"""

from __future__ import annotations

from datetime import date
from decimal import Decimal

import duckdb
import pytest
from model_fixture import fetch, midnight

from harness.model_raw_tables import create_raw_tables, insert
from invoicing_warehouse.engine.sql_runner import build_models

D = date(2026, 3, 31)
dec = Decimal


def _document(doc_id: str, customer: str, amount: str, emit: str, due: str | None = None, status="VALIDATED",
              subtype=None) -> dict:
    return {"id": doc_id, "customer_id": customer, "type": "INVOICE", "subtype": subtype, "status": status,
            "reference": doc_id.upper(), "emit_date": midnight(emit), "due_date": midnight(due) if due else None,
            "amount_vat_net": amount, "amount_vat": amount, "version": "1.0", "last_update": midnight(emit)}


def _payment(transaction_id: str, customer: str, amount: str, day: str, invoice: str | None) -> tuple[dict, list]:
    transaction = {"id": transaction_id, "customer_id": customer, "document_id": invoice, "amount": amount,
                   "used_amount": amount if invoice else "0", "refunded_amount": "0",
                   "date": f"{day}T10:00:00Z", "method": "TRANSFER"}
    usages = [{"id": f"u-{transaction_id}", "type": "TRANSACTION", "customer_id": customer, "invoice_id": invoice,
               "transaction_id": transaction_id, "transaction__id": transaction_id, "amount": amount,
               "date": f"{day}T10:00:00Z"}] if invoice else []
    return transaction, usages


def _load(conn: duckdb.DuckDBPyConnection) -> None:
    create_raw_tables(conn)
    insert(conn, "customers", [{"id": c, "name": c.upper(), "siret": f"1234567890001{i}"}
                               for i, c in enumerate("abcd")])
    insert(conn, "documents", [
        _document("a1", "a", "1000.00", "2026-03-01", "2026-03-31"),
        _document("cna", "a", "300.00", "2025-12-20", subtype="CREDIT_NOTE"),
        _document("b1", "b", "600.00", "2026-02-15", "2026-03-17", status="PAID"),
        _document("cnb", "b", "250.00", "2026-03-20", subtype="CREDIT_NOTE"),
        _document("c1", "c", "200.00", "2026-01-10", "2026-02-09"),
        _document("cnc", "c", "500.00", "2025-12-28", subtype="CREDIT_NOTE"),
        _document("d1", "d", "900.00", "2025-12-15", "2026-01-14"),
        _document("e1", "d", "1200.00", "2025-06-01", "2025-07-01", status="PAID"),
    ])
    payments = [_payment("ta", "a", "100.00", "2026-03-20", None), _payment("tb", "b", "600.00", "2026-03-15", "b1"),
                _payment("te", "d", "1200.00", "2025-07-01", "e1")]
    insert(conn, "transactions", [transaction for transaction, _ in payments])
    insert(conn, "transaction_usages", [usage for _, usages in payments for usage in usages])


@pytest.fixture(scope="module")
def dso() -> dict:
    conn = duckdb.connect()
    _load(conn)
    build_models(conn, as_of=D)
    [row] = fetch(conn, "select * from marts.dso")
    conn.close()
    return row


def test_the_headline_is_the_gross_sales_method(dso):
    # open: A1 1000 + C1 200 + D1 900 = 2100.00; invoiced 01-01..03-31: A1 1000 + B1 600 + C1 200 = 1800.00
    # (D1, 2025-12-15, is outside); 2100 / 1800 x 90 = 105.0
    assert (dso["open_receivables"], dso["invoiced_last_90_days"], dso["dso_days"]) == (
        dec("2100.00"), dec("1800.00"), dec("105.0"))


def test_the_net_figure_caps_each_customers_deduction_at_what_it_owes(dso):
    # a: 300 credit note + 100 payment = 400, owes 1000 -> 400 deducted; b: 250, owes 0 -> 0 deducted, 250 owed
    # back; c: 500, owes 200 -> 200 deducted, 300 owed back; d: nothing. deducted 600, owed back 550;
    # net receivables 2100 - 600 = 1500; net sales 1800 - CNb 250 (the one credit note of the window) = 1550;
    # 1500 / 1550 x 90 = 87.097 -> 87.1. (Netting every unapplied credit note, 1050, as the mart did before,
    # gave (2100 - 1050) / 1550 x 90 = 61.0: b's and c's 550 owed to them cut what a, c and d owe.)
    assert (dso["unapplied_credit_notes"], dso["unapplied_payments"], dso["credit_deducted"],
            dso["credit_balances_owed"], dso["net_receivables"], dso["net_sales_last_90_days"],
            dso["net_dso_days"]) == (
        dec("1050.00"), dec("100.00"), dec("600.00"), dec("550.00"), dec("1500.00"), dec("1550.00"), dec("87.1"))


def test_the_count_back_exhausts_receivables_month_by_month(dso):
    # open 2100.00; March (31 days) A1 1000 -> 1100 left; February (28 days) B1 600 -> 500 left; January (31 days)
    # C1 200 -> 300 left; December 2025 (31 days) D1 900 covers it: 31 + 28 + 31 + 300 / 900 x 31 = 100.333 -> 100.3
    assert dso["count_back_dso_days"] == dec("100.3")


def test_the_banque_de_france_ratio_is_annual_and_on_360_days(dso):
    # receivables as a balance sheet shows them: each customer's net debit balance, 1500.00 (the credit balances,
    # 550.00, are a liability); turnover incl. tax 2025-04-01..2026-03-31: 1000 + 600 + 200 + 900 + E1 1200 = 3900
    # less the year's credit notes 300 + 250 + 500 = 1050 -> 2850.00; 1500 / 2850 x 360 = 189.47 -> 189.5
    assert (dso["net_sales_last_12_months"], dso["annual_dso_days_360"]) == (dec("2850.00"), dec("189.5"))


def test_the_cash_outlook_nets_each_customers_credit_and_owes_the_rest_back():
    # D = 2026-03-31 (a Tuesday: week 1 is 03-30..04-05). open: D1 900 (due 01-14) and C1 200 (due 02-09) past due,
    # A1 1000 due on D (week 1). c's credit 500 goes on C1 (its only invoice, 200): past due inflows
    # 900 + 200 - 200 = 900.00; a's 400 (CNa 300 + Ta 100) on A1: week 1 inflows 1000 - 400 = 600.00.
    # owed back: b's 250 (owes nothing) + c's 500 - 200 = 300 -> 550.00, an outflow in `later`.
    conn = duckdb.connect()
    _load(conn)
    build_models(conn, as_of=D)
    rows = conn.execute(
        "select period_index, open_receivables, credit_deducted, expected_inflows, expected_outflows, "
        "credit_balances_owed from marts.cash_outlook where period_index in (0, 1, 9) order by period_index"
    ).fetchall()
    conn.close()
    assert rows == [
        (0, dec("1100.00"), dec("200.00"), dec("900.00"), dec("0"), dec("0")),
        (1, dec("1000.00"), dec("400.00"), dec("600.00"), dec("0"), dec("0")),
        (9, dec("0"), dec("0"), dec("0"), dec("550.00"), dec("550.00")),
    ]
