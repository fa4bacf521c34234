"""A small hand-built portal in the raw tables, with its right answers worked out by hand in the tests.

Report date D = 2026-01-31 (a Saturday; the fixture's "today"), past date P = 2026-01-10 (a Saturday).

Customers: C1 Alpha (mobile and landline), C2 Beta (landline only), C3 Gamma (soft-deleted, still holding a
late invoice so the LATE filter's "not deleted" rule is exercised), C4 Gone (`_deleted_at`: vanished
upstream), C5 Epsilon (no documents).

C1: INV1 F-1 1200.00 emitted 2025-12-01 due 2025-12-31, paid 300.00 on 2025-12-15 (T1) and 200.50 on
    2026-01-20 (T2); a STANDARD mail only.
    INV2 F-2 500.00 emitted 2026-01-05 due 2026-01-31 (due on D), credit note CN1 A-1 120.00 emitted
    2026-01-15 applied to it in full.
    INV3 F-3 v1.0 800.00 CANCELED, superseded by INV3B F-3 v1.1 850.00 (emitted 2025-11-01 due 2025-11-30),
    reminded with RELAUNCH1 on 2026-01-20.
    PF1 proforma 300.00, DR1 draft 999.00, Q1 quotation 400.00, DEL1 invoice 777.00 deleted upstream.
C2: INV4 F-4 240.00 emitted 2026-01-02 due 2026-02-15, PAID by T3 (400.00 on 2026-01-25, overpayment);
    the other 160.00 of T3 used on INV5 F-5 300.00 emitted 2026-01-03 due 2026-01-30 (due the day before D).
    DEP1 AC-1 deposit invoice 1000.00 emitted 2026-01-20 due 2026-02-05.
    CN2 A-2 free credit note 50.00 emitted 2026-01-12, never applied.
    T4 75.00 on 2026-01-28, never used, 25.00 refunded.
C3: INV7 F-7 60.00 emitted 2025-12-10 due 2026-01-10 (due on P); DR2 draft.

Suppliers and supplier documents: model_fixture_suppliers.py.
"""

from __future__ import annotations

from datetime import date

import duckdb
from model_fixture_suppliers import supplier_document_events, supplier_documents, suppliers

from harness.model_raw_tables import create_raw_tables, insert

D = date(2026, 1, 31)
P = date(2026, 1, 10)


def midnight(day: str) -> str:
    """The API's date-only values are midnight UTC."""
    return f"{day}T00:00:00Z"


def _customers() -> list[dict]:
    return [
        {
            "id": "c1",
            "name": "Alpha",
            "reference": "C-000001",
            "email": "pay@alpha.test",
            "mobile": "0611111111",
            "phone": "0111111111",
            "due_amount": "1929.50",
            "deleted": False,
            "last_update": "2026-01-30T10:00:00Z",
        },
        {
            "id": "c2",
            "name": "Beta",
            "reference": "C-000002",
            "email": "compta@beta.test",
            "phone": "0122222222",
            "due_amount": "1140.00",
            "deleted": False,
            "last_update": "2026-01-30T10:00:00Z",
        },
        {
            "id": "c3",
            "name": "Gamma",
            "reference": "C-000003",
            "email": "g@gamma.test",
            "due_amount": "60.00",
            "deleted": True,
            "deleted_at": "2026-01-05T10:00:00Z",
            "last_update": "2026-01-05T10:00:00Z",
        },
        {
            "id": "c4",
            "name": "Gone",
            "reference": "C-000004",
            "due_amount": "0",
            "deleted": False,
            "_deleted_at": "2026-01-29T10:00:00Z",
        },
        {"id": "c5", "name": "Epsilon", "reference": "C-000005", "due_amount": "0", "deleted": False},
    ]


def _doc(
    doc_id,
    customer,
    reference,
    amount,
    emit,
    due,
    status="VALIDATED",
    subtype=None,
    doc_type="INVOICE",
    paid="0",
    **extra,
) -> dict:
    row = {
        "id": doc_id,
        "customer_id": customer,
        "type": doc_type,
        "subtype": subtype,
        "status": status,
        "reference": reference,
        "emit_date": midnight(emit),
        "due_date": midnight(due) if due else None,
        "amount_vat_net": amount,
        "amount_vat": amount,
        "total_payments": paid,
        "version": "1.0",
        "to__name": f"name on {doc_id}",
    }
    row["remaining"] = str(round(float(amount) - float(paid), 2))
    row.update(extra)
    return row


def _documents() -> list[dict]:
    return [
        _doc("inv1", "c1", "F-1", "1200.00", "2025-12-01", "2025-12-31", paid="500.50"),
        _doc("inv2", "c1", "F-2", "500.00", "2026-01-05", "2026-01-31", paid="120.00"),
        _doc("inv3", "c1", "F-3", "800.00", "2025-11-01", "2025-11-30", status="CANCELED", next_doc="inv3b"),
        _doc("inv3b", "c1", "F-3", "850.00", "2025-11-01", "2025-11-30", version="1.1", prev_doc="inv3"),
        _doc(
            "cn1",
            "c1",
            "A-1",
            "120.00",
            "2026-01-15",
            None,
            subtype="CREDIT_NOTE",
            invoice_id="inv2",
            paid="120.00",
        ),
        _doc("pf1", "c1", "PF-1", "300.00", "2025-12-01", "2025-12-15", subtype="PROFORMA"),
        _doc("dr1", "c1", "RT000001", "999.00", "2025-12-01", "2025-12-15", status="DRAFT"),
        _doc("q1", "c1", "D-1", "400.00", "2025-12-01", "2025-12-15", doc_type="QUOTATION"),
        _doc("del1", "c1", "F-99", "777.00", "2025-12-01", "2025-12-15", _deleted_at="2026-01-29T10:00:00Z"),
        _doc("inv4", "c2", "F-4", "240.00", "2026-01-02", "2026-02-15", status="PAID", paid="240.00"),
        _doc("inv5", "c2", "F-5", "300.00", "2026-01-03", "2026-01-30", paid="160.00"),
        _doc("dep1", "c2", "AC-1", "1000.00", "2026-01-20", "2026-02-05", subtype="DEPOSIT"),
        _doc("cn2", "c2", "A-2", "50.00", "2026-01-12", None, subtype="CREDIT_NOTE"),
        _doc("inv7", "c3", "F-7", "60.00", "2025-12-10", "2026-01-10"),
        _doc("dr2", "c3", "RT000002", "10.00", "2025-12-10", "2026-01-10", status="DRAFT"),
    ]


def _transactions() -> list[dict]:
    return [
        {
            "id": "t1",
            "customer_id": "c1",
            "document_id": "inv1",
            "amount": "300.00",
            "used_amount": "300.00",
            "refunded_amount": "0",
            "date": "2025-12-15T23:30:00Z",
            "method": "TRANSFER",
        },
        {
            "id": "t2",
            "customer_id": "c1",
            "document_id": "inv1",
            "amount": "200.50",
            "used_amount": "200.50",
            "refunded_amount": "0",
            "date": "2026-01-20T09:00:00Z",
            "method": "CHECK",
        },
        {
            "id": "t3",
            "customer_id": "c2",
            "document_id": "inv4",
            "amount": "400.00",
            "used_amount": "400.00",
            "refunded_amount": "0",
            "date": "2026-01-25T09:00:00Z",
            "method": "TRANSFER",
        },
        {
            "id": "t4",
            "customer_id": "c2",
            "document_id": "inv5",
            "amount": "75.00",
            "used_amount": "0",
            "refunded_amount": "25.00",
            "date": "2026-01-28T09:00:00Z",
            "method": "CASH",
        },
    ]


def _usage(usage_id, customer, invoice, amount, when, transaction=None, credit_note=None) -> dict:
    return {
        "id": usage_id,
        "type": "CREDIT_NOTE" if credit_note else "TRANSACTION",
        "customer_id": customer,
        "invoice_id": invoice,
        "transaction_id": transaction,
        "transaction__id": transaction,
        "credit_note_id": credit_note,
        "amount": amount,
        "date": when,
    }


def _usages() -> list[dict]:
    return [
        _usage("u1", "c1", "inv1", "300.00", "2025-12-15T23:30:00Z", transaction="t1"),
        _usage("u2", "c1", "inv1", "200.50", "2026-01-20T09:00:00Z", transaction="t2"),
        _usage("u3", "c1", "inv2", "120.00", midnight("2026-01-15"), credit_note="cn1"),
        _usage("u4", "c2", "inv4", "240.00", "2026-01-25T09:00:00Z", transaction="t3"),
        # the overpayment's rest, used on another invoice: dated with the payment date (docs/resources.md)
        _usage("u5", "c2", "inv5", "160.00", "2026-01-25T09:00:00Z", transaction="t3"),
    ]


def load_fixture(conn: duckdb.DuckDBPyConnection) -> None:
    """Creates every raw table and fills it with the portal described in this module's docstring."""
    create_raw_tables(conn)
    insert(conn, "customers", _customers())
    insert(
        conn, "items", [{"id": "i1", "name": "Audit", "type": "service", "price": "100.00", "vat": "20.0000"}]
    )
    insert(conn, "documents", _documents())
    insert(
        conn,
        "documents__lines",
        [
            {
                "_dlt_parent_id": "dlt-inv1",
                "_dlt_list_idx": 0,
                "line_type": "ITEM",
                "item_id": "i1",
                "name": "Audit",
                "price": "100.00",
                "quantity": "8",
                "vat": "20",
                "discount": "0",
            },
            {
                "_dlt_parent_id": "dlt-inv1",
                "_dlt_list_idx": 1,
                "line_type": "ITEM",
                "name": "Travel",
                "price": "200.00",
                "quantity": "1",
                "vat": "20",
                "discount": "0",
            },
            {
                "_dlt_parent_id": "dlt-del1",
                "_dlt_list_idx": 0,
                "line_type": "ITEM",
                "name": "Gone",
                "price": "647.50",
                "quantity": "1",
                "vat": "20",
                "discount": "0",
            },
        ],
    )
    insert(
        conn,
        "documents__messages",
        [
            {
                "_dlt_parent_id": "dlt-inv1",
                "_dlt_list_idx": 0,
                "date": "2025-12-01T09:00:00Z",
                "model": "STANDARD",
                "from": "me@us.test",
                "to": "pay@alpha.test",
                "subject": "Facture F-1",
            },
            {
                "_dlt_parent_id": "dlt-inv3b",
                "_dlt_list_idx": 0,
                "date": "2026-01-20T08:00:00Z",
                "model": "RELAUNCH1",
                "from": "me@us.test",
                "to": "pay@alpha.test",
                "subject": "Relance F-3",
            },
        ],
    )
    insert(conn, "transactions", _transactions())
    insert(conn, "transaction_usages", _usages())
    insert(conn, "suppliers", suppliers())
    insert(conn, "supplier_documents", supplier_documents())
    insert(conn, "supplier_document_events", supplier_document_events())


def build_warehouse(as_of: date, time_zone: str = "America/New_York") -> duckdb.DuckDBPyConnection:
    """An in-memory warehouse with the fixture loaded and every model built as of `as_of`.

    The session time zone is not UTC on purpose: midnight-UTC dates must not slide to the day before.
    """
    from invoicing_warehouse.engine.sql_runner import build_models

    conn = duckdb.connect()
    conn.execute(f"set TimeZone = '{time_zone}'")
    load_fixture(conn)
    build_models(conn, as_of=as_of)
    return conn


def fetch(conn: duckdb.DuckDBPyConnection, sql: str) -> list[dict]:
    """Rows of `sql` as dicts."""
    cursor = conn.execute(sql)
    names = [d[0] for d in cursor.description]
    return [dict(zip(names, row, strict=True)) for row in cursor.fetchall()]
