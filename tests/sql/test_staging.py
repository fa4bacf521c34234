"""Staging models: renamed and typed columns, upstream deletions dropped (customers: kept, flagged), superseded
versions kept apart."""

from datetime import UTC, date, datetime
from decimal import Decimal

import pytest
from model_fixture import D, build_warehouse, fetch


@pytest.fixture(scope="module")
def warehouse():
    # a UTC session: a payment at 23:30 UTC is the next day in Paris, the portal's calendar, and its date
    # must be the Paris one whatever the session's zone
    conn = build_warehouse(D, time_zone="UTC")
    yield conn
    conn.close()


def test_customers_keep_deleted_rows_flagged_soft_deleted_and_gone_alike(warehouse):
    rows = fetch(
        warehouse, "select customer_id, is_deleted, api_due_amount from staging.stg_invoicing__customers"
    )
    assert {r["customer_id"]: (r["is_deleted"], r["api_due_amount"]) for r in rows} == {
        "c1": (False, Decimal("1929.50")),
        "c2": (False, Decimal("1140.00")),
        "c3": (True, Decimal("60.00")),  # soft-deleted upstream (`deleted`)
        "c4": (True, Decimal("0.00")),  # gone upstream (`_deleted_at`, set by the sync)
        "c5": (False, Decimal("0.00")),
    }


def test_superseded_versions_are_kept_apart_from_live_documents(warehouse):
    versions = fetch(
        warehouse, "select document_id, is_superseded from staging.stg_invoicing__document_versions"
    )
    live = {
        r[0] for r in warehouse.execute("select document_id from staging.stg_invoicing__documents").fetchall()
    }
    # 15 raw documents - del1 (_deleted_at) = 14 versions; minus the CANCELED inv3 = 13 live
    assert len(versions) == 14
    assert {r["document_id"] for r in versions if r["is_superseded"]} == {"inv3"}
    assert len(live) == 13 and "inv3" not in live and "del1" not in live and "inv3b" in live
    link = fetch(
        warehouse,
        """select previous_version_id, version from staging.stg_invoicing__documents
                               where document_id = 'inv3b'""",
    )
    assert link == [{"previous_version_id": "inv3", "version": "1.1"}]


def test_document_dates_are_paris_calendar_dates_whatever_the_session_time_zone(warehouse):
    row = fetch(
        warehouse,
        """select emit_date, due_date, emitted_at from staging.stg_invoicing__documents
                              where document_id = 'inv1'""",
    )[0]
    assert row["emit_date"] == date(2025, 12, 1) and row["due_date"] == date(2025, 12, 31)
    assert row["emitted_at"].astimezone(UTC) == datetime(2025, 12, 1, tzinfo=UTC)
    # 2025-12-15T23:30Z is 2025-12-16 00:30 in Paris
    payment = fetch(
        warehouse, "select payment_date from staging.stg_invoicing__transactions where transaction_id = 't1'"
    )
    assert payment == [{"payment_date": date(2025, 12, 16)}]


def test_lines_and_messages_follow_their_parent_and_drop_deleted_ones(warehouse):
    lines = warehouse.execute("""select document_id, line_index, line_name, unit_price, quantity
                                 from staging.stg_invoicing__document_lines order by line_index""").fetchall()
    # del1's line is dropped with its parent
    assert lines == [
        ("inv1", 0, "Audit", Decimal("100.00"), Decimal("8.0000")),
        ("inv1", 1, "Travel", Decimal("200.00"), Decimal("1.0000")),
    ]
    messages = warehouse.execute("""select document_id, template, sent_date, to_address
                                    from staging.stg_invoicing__document_messages order by sent_at""").fetchall()
    assert messages == [
        ("inv1", "STANDARD", date(2025, 12, 1), "pay@alpha.test"),
        ("inv3b", "RELAUNCH1", date(2026, 1, 20), "pay@alpha.test"),
    ]


def test_usages_and_supplier_documents(warehouse):
    usages = fetch(
        warehouse,
        """select usage_id, usage_type, transaction_id, credit_note_id, is_credit_note
                                 from staging.stg_invoicing__transaction_usages where usage_id in ('u1', 'u3')
                                 order by usage_id""",
    )
    assert usages == [
        {
            "usage_id": "u1",
            "usage_type": "TRANSACTION",
            "transaction_id": "t1",
            "credit_note_id": None,
            "is_credit_note": False,
        },
        {
            "usage_id": "u3",
            "usage_type": "CREDIT_NOTE",
            "transaction_id": None,
            "credit_note_id": "cn1",
            "is_credit_note": True,
        },
    ]
    ids = {
        r[0]
        for r in warehouse.execute(
            "select supplier_document_id from staging.stg_invoicing__supplier_documents"
        ).fetchall()
    }
    assert ids == {f"sd{i}" for i in (1, 2, 3, 4, 5, 6, 7, 8, 10)}


def test_staging_column_types(warehouse):
    types = dict(
        warehouse.execute("""select column_name, data_type from information_schema.columns
        where table_schema = 'staging' and table_name = 'stg_invoicing__documents'""").fetchall()
    )
    assert types["amount_vat_net"] == "DECIMAL(18,2)"
    assert types["emitted_at"] == "TIMESTAMP WITH TIME ZONE"
    assert types["emit_date"] == "DATE"
    assert types["is_draft"] == "BOOLEAN"
