"""The two tables of c. com. D441-6 in the legal model's layout (marts.payment_terms_table, D441-6 I, and
marts.payment_terms_paid_late_table, D441-6 II) on hand-made invoices and bills, every figure worked out by hand
below, and the fiscal-year setting (INVOICING_FISCAL_YEAR_START).

Sources: D441-6 I (invoices unpaid on the closing date whose term has passed, by band of days late, number and
amount, as a share of the year's purchases / turnover), II (invoices paid late during the year, number and amount,
as shares of the number and amount of the year's invoices), III (say HT or TTC: TTC here), IV (delays against the
contractual terms, or the legal ones; disputed invoices excluded with their number and amount); the model tables
of the arrêté of 20 March 2017 (annexe 4-1 to A441-2): rows (A), (B), (C), columns "0 jour (indicatif)",
"1 à 30 jours", "31 à 60 jours", "61 à 90 jours", "91 jours et plus", "Total (1 jour et plus)"; the number of
invoices of table I under "0 jour" and the total only.

Closing date D = 2025-12-31; fiscal year 2025-01-01 .. 2025-12-31 (the setting unset: the twelve months ending on D).
Issued (customer a, a business):
  i1 1000.00 emitted 12-15, due 2026-01-14, open: not yet due -> 0 jour
  i2  500.00 emitted 11-01, due 12-01, open: 30 days late -> 1-30
  i3  800.00 emitted 09-01, due 10-01, open: 91 days late (Oct 31 + Nov 30 + Dec 30 = 91) -> 91+
  i4  300.00 emitted 10-20, no due date: the legal 30 days, due 11-19, 42 days late -> 31-60, due date assumed
  i5 2000.00 emitted 03-01, due 03-31, paid 05-15: 45 days late (table II)
  i6  400.00 emitted 06-01, due 07-01, paid 06-25: on time (table II, 0 jour)
  i7  600.00 emitted 2024-11-01, due 2024-12-01, paid 2025-01-10: 40 days late, paid in the year (table II)
  cn1 100.00 credit note emitted 12-20, unapplied
Received (supplier s):
  b1 1200.00 issued 11-10, due 12-10, approved: 21 days late -> 1-30
  b2  600.00 issued 12-01, due 2026-01-31, approved: not yet due -> 0 jour
  b3  300.00 issued 09-01, due 10-01, disputed -> (B)
  b4  900.00 issued 04-01, due 05-01, paid 06-15: 45 days late (table II)
  bc  100.00 credit note issued 12-05: not an invoice, lowers the year's purchases
"""

from __future__ import annotations

from datetime import date
from decimal import Decimal

import duckdb
import pytest
from model_fixture import midnight

from harness.model_raw_tables import create_raw_tables, insert
from invoicing_warehouse.engine.report_settings import FISCAL_YEAR_START_SETTING, ReportSettingError
from invoicing_warehouse.engine.sql_runner import build_models

D = date(2025, 12, 31)
dec = Decimal
MODEL = ('row_order, "0 jour (indicatif)", "1 à 30 jours", "31 à 60 jours", "61 à 90 jours", "91 jours et plus", '
         '"Total (1 jour et plus)", "Précisions"')


def _invoice(doc_id, amount, emit, due, status="VALIDATED", subtype=None) -> dict:
    return {"id": doc_id, "customer_id": "a", "type": "INVOICE", "subtype": subtype, "status": status,
            "reference": doc_id.upper(), "emit_date": midnight(emit), "due_date": midnight(due) if due else None,
            "amount_vat_net": amount, "amount_vat": amount, "version": "1.0", "last_update": midnight(emit)}


def _bill(doc_id, amount, issued, due, status="approved", doc_type="invoice", paid=None) -> dict:
    return {"id": doc_id, "supplier_id": "s", "status": status, "type": doc_type, "reference": doc_id.upper(),
            "issue_date": midnight(issued), "due_date": midnight(due), "amount": amount, "amount_vat": amount,
            "payment_date": midnight(paid) if paid else None, "last_update": "2025-12-20T08:00:00Z"}


def _payment(invoice: str, amount: str, day: str) -> dict:
    return {"id": f"u-{invoice}", "type": "TRANSACTION", "customer_id": "a", "invoice_id": invoice,
            "transaction_id": f"t-{invoice}", "transaction__id": f"t-{invoice}", "amount": amount,
            "date": f"{day}T10:00:00Z"}


def _build(as_of: date = D) -> duckdb.DuckDBPyConnection:
    conn = duckdb.connect()
    create_raw_tables(conn)
    insert(conn, "customers", [{"id": "a", "name": "Alpha", "siret": "12345678900011"}])
    insert(conn, "documents", [
        _invoice("i1", "1000.00", "2025-12-15", "2026-01-14"),
        _invoice("i2", "500.00", "2025-11-01", "2025-12-01"),
        _invoice("i3", "800.00", "2025-09-01", "2025-10-01"),
        _invoice("i4", "300.00", "2025-10-20", None),
        _invoice("i5", "2000.00", "2025-03-01", "2025-03-31", status="PAID"),
        _invoice("i6", "400.00", "2025-06-01", "2025-07-01", status="PAID"),
        _invoice("i7", "600.00", "2024-11-01", "2024-12-01", status="PAID"),
        _invoice("cn1", "100.00", "2025-12-20", None, subtype="CREDIT_NOTE"),
    ])
    insert(conn, "transaction_usages", [_payment("i5", "2000.00", "2025-05-15"), _payment("i6", "400.00", "2025-06-25"),
                                        _payment("i7", "600.00", "2025-01-10")])
    insert(conn, "suppliers", [{"id": "s", "name": "Fournil"}])
    insert(conn, "supplier_documents", [
        _bill("b1", "1200.00", "2025-11-10", "2025-12-10"),
        _bill("b2", "600.00", "2025-12-01", "2026-01-31"),
        _bill("b3", "300.00", "2025-09-01", "2025-10-01", status="disputed"),
        _bill("b4", "900.00", "2025-04-01", "2025-05-01", status="paid", paid="2025-06-15"),
        _bill("bc", "100.00", "2025-12-05", "2026-01-04", doc_type="creditNote"),
    ])
    build_models(conn, as_of=as_of)
    return conn


@pytest.fixture(scope="module")
def built() -> duckdb.DuckDBPyConnection:
    conn = _build()
    yield conn
    conn.close()


def _table(conn, mart: str, side: str) -> list[tuple]:
    return conn.execute(f"select {MODEL} from marts.{mart} where side = ? order by row_order", [side]).fetchall()


def test_the_issued_side_of_table_i_in_the_models_layout(built):
    # turnover of the year: i1..i6 = 1000 + 500 + 800 + 300 + 2000 + 400 = 5000 - cn1 100 = 4900.00
    # shares: 1000 / 4900 = 20.41; 500 / 4900 = 10.20; 300 / 4900 = 6.12; 800 / 4900 = 16.33; 1600 / 4900 = 32.65
    # (C): 4 invoices in (A) (i1 under 0 jour, i2 i3 i4 late), i4's due date assumed: 3 contractual, 1 legal
    assert _table(built, "payment_terms_table", "issued") == [
        (1, dec("1.00"), None, None, None, None, dec("3.00"), None),
        (2, dec("1000.00"), dec("500.00"), dec("300.00"), dec("0.00"), dec("800.00"), dec("1600.00"), None),
        (3, dec("20.41"), dec("10.20"), dec("6.12"), dec("0.00"), dec("16.33"), dec("32.65"), None),
        (4, None, None, None, None, None, dec("0.00"), None),
        (5, None, None, None, None, None, dec("0.00"), None),
        (6, None, None, None, None, None, None, ("Délais contractuels : 3 facture(s) ; délais légaux (30 jours, "
         "article L. 441-10 I, échéance non connue) : 1 facture(s)")),
    ]


def test_the_received_side_of_table_i_keeps_disputed_bills_in_row_b_without_a_share(built):
    # purchases of the year: b1 1200 + b2 600 + b3 300 + b4 900 - bc 100 = 2900.00
    # 600 / 2900 = 20.69 (0 jour); 1200 / 2900 = 41.38 (1-30 and total); b3 disputed: (B) 1 bill, 300.00
    assert _table(built, "payment_terms_table", "received") == [
        (1, dec("1.00"), None, None, None, None, dec("1.00"), None),
        (2, dec("600.00"), dec("1200.00"), dec("0.00"), dec("0.00"), dec("0.00"), dec("1200.00"), None),
        (3, dec("20.69"), dec("41.38"), dec("0.00"), dec("0.00"), dec("0.00"), dec("41.38"), None),
        (4, None, None, None, None, None, dec("1.00"), None),
        (5, None, None, None, None, None, dec("300.00"), None),
        (6, None, None, None, None, None, None, ("Délais contractuels : 2 facture(s) ; délais légaux (30 jours, "
         "article L. 441-10 I, échéance non connue) : 0 facture(s)")),
    ]
    labels = [row[0] for row in built.execute(
        "select \"Ligne\" from marts.payment_terms_table where side = 'received' order by row_order").fetchall()]
    assert labels[0] == "(A) Nombre de factures concernées"
    assert labels[2] == "(A) Pourcentage du montant total des achats de l'exercice (TTC)"
    assert labels[5].startswith("(C) Délais de paiement de référence utilisés")


def test_table_ii_counts_the_invoices_paid_late_during_the_year(built):
    # paid in 2025: i6 on time (400), i5 45 days late (2000), i7 40 days late (600, emitted in 2024): 31-60 holds
    # 2 invoices, 2600.00; invoices emitted in the year: 6 for 5000.00 (i7 is of 2024);
    # shares of the number: 1 / 6 = 16.67, 2 / 6 = 33.33; of the amount: 400 / 5000 = 8.00, 2600 / 5000 = 52.00
    zero = dec("0.00")
    assert _table(built, "payment_terms_paid_late_table", "issued")[:4] == [
        (1, dec("1.00"), zero, dec("2.00"), zero, zero, dec("2.00"), None),
        (2, dec("400.00"), zero, dec("2600.00"), zero, zero, dec("2600.00"), None),
        (3, dec("16.67"), zero, dec("33.33"), zero, zero, dec("33.33"), None),
        (4, dec("8.00"), zero, dec("52.00"), zero, zero, dec("52.00"), None),
    ]
    # received: b4 paid 06-15, due 05-01: 45 days late, 900.00; bills of the year (not the credit note): b1..b4,
    # 4 for 3000.00: 1 / 4 = 25.00, 900 / 3000 = 30.00; (B) b3 disputed, 300.00
    assert _table(built, "payment_terms_paid_late_table", "received")[:6] == [
        (1, zero, zero, dec("1.00"), zero, zero, dec("1.00"), None),
        (2, zero, zero, dec("900.00"), zero, zero, dec("900.00"), None),
        (3, zero, zero, dec("25.00"), zero, zero, dec("25.00"), None),
        (4, zero, zero, dec("30.00"), zero, zero, dec("30.00"), None),
        (5, None, None, None, None, None, dec("1.00"), None),
        (6, None, None, None, None, None, dec("300.00"), None),
    ]


def test_the_fiscal_year_start_setting_sets_the_year(monkeypatch):
    # INVOICING_FISCAL_YEAR_START=07-01 on D = 2025-12-31: the year runs 2025-07-01 .. 2025-12-31; its turnover:
    # i1 1000 + i2 500 + i3 800 + i4 300 (i5 and i6 are of the first half) - cn1 100 = 2500.00; i1's share of it
    # 1000 / 2500 = 40.00 (20.41 over the twelve months)
    monkeypatch.setenv(FISCAL_YEAR_START_SETTING, "07-01")
    with _build() as conn:
        assert conn.execute(
            "select fiscal_year_start, \"0 jour (indicatif)\" from marts.payment_terms_table "
            "where side = 'issued' and row_order = 3").fetchall() == [(date(2025, 7, 1), dec("40.00"))]
    # the start day not yet reached in the report date's year: the year began the year before
    with _build(date(2025, 3, 31)) as conn:
        assert conn.execute("select distinct fiscal_year_start from marts.payment_terms_report").fetchall() == [
            (date(2024, 7, 1),)]


@pytest.mark.parametrize("value", ["02-29", "13-01", "7-1", "july"])
def test_a_fiscal_year_start_that_is_not_a_day_of_every_year_stops_the_build(monkeypatch, value):
    monkeypatch.setenv(FISCAL_YEAR_START_SETTING, value)
    with pytest.raises(ReportSettingError, match=f"{FISCAL_YEAR_START_SETTING}={value}: not a month-day"):
        _build()
