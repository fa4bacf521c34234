"""Refunds on the hand-built portal (model_fixture.py), worked out by hand: customer C2 holds T4 (75.00 on
2026-01-28, never used, 25.00 refunded) and the free credit note CN2 (50.00, never applied), so on D its
unapplied payments are 50.00 and its unapplied credit notes 50.00. A refund is a negative transaction (facts);
it pays back the credit note its `documentId` names, else the customer's payments (docs/contract.md,
"Refunds"). Each case changes the raw tables the way a server could serve the same refund."""

from __future__ import annotations

from datetime import date
from decimal import Decimal

import duckdb
from model_fixture import D
from test_contract_rows import build

BEFORE_REFUND = date(2026, 1, 28)  # T4 received, the refund (2026-01-29) not yet paid


def _refund(amount: str, document_id: str | None = None) -> str:
    link = f"'{document_id}'" if document_id else "null"
    return (
        "insert into invoicing_raw.transactions (id, portal_id, customer_id, document_id, amount, used_amount, "
        f"refunded_amount, date, method) values ('t5', 'default', 'c2', {link}, -{amount}, 0, 0, "
        "'2026-01-29T00:00:00Z', 'TRANSFER')"
    )


def _c2(path: str) -> tuple[Decimal, Decimal]:
    with duckdb.connect(path, read_only=True) as conn:
        row = conn.execute(
            "select unapplied_payments, unapplied_credit_notes from marts.receivables_by_customer "
            "where customer_id = 'c2'"
        ).fetchone()
    assert row is not None
    return row


def test_a_refund_served_twice_negative_transaction_and_refunded_amount_counts_once_and_on_its_date(tmp_path):
    assert _c2(build(tmp_path, D, _refund("25.00"))) == (Decimal("50.00"), Decimal("50.00"))
    # before the refund's date the 25.00 was still held, whatever refundedAmount says today
    assert _c2(build(tmp_path, BEFORE_REFUND, _refund("25.00"), name="before")) == (
        Decimal("75.00"), Decimal("50.00")
    )


def test_a_refund_without_refunded_amount_still_lowers_unapplied_payments(tmp_path):
    path = build(
        tmp_path, D, _refund("25.00"), "update invoicing_raw.transactions set refunded_amount = 0 where id = 't4'"
    )
    assert _c2(path) == (Decimal("50.00"), Decimal("50.00"))


def test_a_refund_naming_a_credit_note_pays_back_the_credit_not_the_payments(tmp_path):
    path = build(
        tmp_path,
        D,
        _refund("30.00", "cn2"),
        "update invoicing_raw.documents set total_payments = 30 where id = 'cn2'",
    )
    assert _c2(path) == (Decimal("50.00"), Decimal("20.00"))


def test_a_credit_note_refund_without_its_link_is_found_by_the_credit_notes_total_payments(tmp_path):
    path = build(
        tmp_path, D, _refund("30.00"), "update invoicing_raw.documents set total_payments = 30 where id = 'cn2'"
    )
    assert _c2(path) == (Decimal("50.00"), Decimal("20.00"))
