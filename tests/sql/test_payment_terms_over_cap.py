"""marts.payment_terms_over_cap: the caps of c. com. L441-10 I bind professionals only, and a periodic invoice
(facture périodique, CGI 289 I 3) is capped at 45 days after its date. The API marks no invoice as periodic, so the
setting INVOICING_PERIODIC_INVOICES names them (exact references, or prefixes ending in `*`). Every date worked out
by hand below.

Report date D = 2025-08-31; the fiscal year is the twelve months ending on D (2024-09-01 .. 2025-08-31).
b1 Bistro has a siret (business); k1 Martin has neither siret nor VAT number nor type (consumer).
"""

from __future__ import annotations

from datetime import date

import duckdb
import pytest
from model_fixture import midnight

from harness.model_raw_tables import create_raw_tables, insert
from invoicing_warehouse.engine.sql_runner import build_models

D = date(2025, 8, 31)
GENERAL = "general: 60 days after issue or 45 days end of month (L441-10 I)"
PERIODIC = "periodic invoice: 45 days after issue (L441-10 I)"


def _invoice(doc_id: str, reference: str, customer: str, emit: str, due: str) -> dict:
    return {"id": doc_id, "customer_id": customer, "type": "INVOICE", "status": "VALIDATED", "reference": reference,
            "emit_date": midnight(emit), "due_date": midnight(due), "amount_vat_net": "100.00",
            "amount_vat": "100.00", "version": "1.0", "last_update": "2025-06-01T08:00:00Z"}


def _bill(doc_id: str, reference: str, issue: str, due: str) -> dict:
    return {"id": doc_id, "supplier_id": "s1", "status": "approved", "type": "invoice", "reference": reference,
            "issue_date": midnight(issue), "due_date": midnight(due), "amount": "50.00", "amount_vat": "60.00",
            "last_update": "2025-06-10T08:00:00Z"}


@pytest.fixture()
def portal() -> duckdb.DuckDBPyConnection:
    conn = duckdb.connect()
    create_raw_tables(conn)
    insert(conn, "customers", [{"id": "b1", "name": "Bistro", "siret": "12345678900011"},
                               {"id": "k1", "name": "Martin"}])
    insert(conn, "documents", [
        # emitted 2025-01-15, due 2025-03-10: a 54-day term (16 days of January + 28 of February + 10)
        _invoice("inv_p1", "REC-001", "b1", "2025-01-15", "2025-03-10"),
        _invoice("inv_n", "F-001", "b1", "2025-01-15", "2025-03-10"),
        # emitted 2025-02-10, due 2025-03-27: 45 days (18 days of February + 27)
        _invoice("inv_p2", "REC-002", "b1", "2025-02-10", "2025-03-27"),
        # a consumer's invoice of the same term as inv_p1
        _invoice("inv_k", "REC-003", "k1", "2025-01-15", "2025-03-10"),
    ])
    insert(conn, "suppliers", [{"id": "s1", "name": "Fournil"}])
    # issued 2025-05-02, due 2025-06-30: a 59-day term (29 days of May + 30 of June)
    insert(conn, "supplier_documents", [_bill("sd_p", "B-7", "2025-05-02", "2025-06-30"),
                                        _bill("sd_n", "B-8", "2025-05-02", "2025-06-30")])
    yield conn
    conn.close()


def _over_cap(conn: duckdb.DuckDBPyConnection) -> list[tuple]:
    return conn.execute("select side, reference, term_days, cap_date, is_periodic, cap_rule, days_beyond_cap "
                        "from marts.payment_terms_over_cap order by side, reference").fetchall()


def test_without_the_setting_every_term_is_judged_by_the_general_caps(portal):
    # general cap of an invoice of 2025-01-15: the latest of emit + 60 = 03-16, the end of the month of emit + 45
    # (03-01) = 03-31 and the end of January + 45 = 03-17: 03-31, so 03-10 is within it; 2025-02-10: 04-11, 04-30,
    # 04-14: 04-30; the bills of 2025-05-02: 07-01, end of the month of 06-16 = 06-30, 05-31 + 45 = 07-15: 07-15.
    # nothing is beyond: a periodic invoice's 54-day term cannot be seen without the setting
    build_models(portal, as_of=D)
    assert _over_cap(portal) == []


def test_periodic_invoices_named_by_the_setting_are_capped_at_45_days_businesses_only(portal, monkeypatch):
    monkeypatch.setenv("INVOICING_PERIODIC_INVOICES", "REC-*, B-7")
    build_models(portal, as_of=D)
    assert _over_cap(portal) == [
        # inv_p1 REC-001 (prefix REC-): cap 2025-01-15 + 45 = 03-01 (16 days to 01-31, 28 of February, 1 of March);
        # due 03-10: 9 days beyond. inv_p2 REC-002: cap 02-10 + 45 = 03-27, due on it: not beyond. inv_k REC-003
        # is a consumer's: the caps bind professionals, not listed. F-001 is not periodic: general cap, not beyond.
        ("issued", "REC-001", 54, date(2025, 3, 1), True, PERIODIC, 9),
        # B-7 (exact reference): cap 2025-05-02 + 45 = 06-16 (29 days to 05-31, 16 of June); due 06-30: 14 beyond.
        # B-8, the same term, is not named: general cap 07-15, not beyond
        ("received", "B-7", 59, date(2025, 6, 16), True, PERIODIC, 14),
    ]


def test_a_business_invoice_beyond_the_general_cap_says_which_rule(portal):
    # a 105-day term of a business customer: emitted 2025-01-15, due 2025-04-30; general cap 03-31 (above): 30 days
    insert(portal, "documents", [_invoice("inv_g", "F-002", "b1", "2025-01-15", "2025-04-30"),
                                 _invoice("inv_gk", "F-003", "k1", "2025-01-15", "2025-04-30")])
    build_models(portal, as_of=D)
    assert _over_cap(portal) == [("issued", "F-002", 105, date(2025, 3, 31), False, GENERAL, 30)]


@pytest.mark.parametrize("value", ["REC-*,'; drop", "*", "REC*X"])
def test_a_periodic_invoices_setting_that_names_no_reference_stops_the_build_naming_it(portal, monkeypatch, value):
    from invoicing_warehouse.engine.report_settings import ReportSettingError

    monkeypatch.setenv("INVOICING_PERIODIC_INVOICES", value)
    with pytest.raises(ReportSettingError, match="INVOICING_PERIODIC_INVOICES: .* is not an invoice reference"):
        build_models(portal, as_of=D)
