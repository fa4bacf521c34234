"""Refunds (contract-audit-2 F11) against the sandbox's own records: a seeded portal whose generator refunds
some overpayments and credit notes, plus one refund of each kind written through the domain API, a real sync,
the models, then `receivables_by_customer.unapplied_payments` / `unapplied_credit_notes` equal, for every
customer, what the sandbox's records say is left unused (harness/marts_truth.py `sandbox_unapplied`).

Three ways a refund is served (`ContractProfile.refunds`): with `refundedAmount` on the refunded payment
("served"), without it ("unlinked": the negative transaction is the only trace), and on the strict profile,
where the refund of a credit note does not name it (no `documentId`): its `totalPayments` says it was paid back.
"""

from dataclasses import replace
from datetime import UTC, datetime, timedelta
from decimal import Decimal

import duckdb
import pytest

from harness.marts_truth import compare_marts, sandbox_unapplied
from harness.regular_build import sync_sandbox
from invoicing_sandbox.clock import Clock
from invoicing_sandbox.config import SandboxConfig
from invoicing_sandbox.contract import ContractProfile
from invoicing_sandbox.server import SandboxServer
from invoicing_warehouse.engine.sql_runner import build_models

START = datetime(2026, 3, 16, 9, 30, tzinfo=UTC)
PROFILES = {
    "served": replace(ContractProfile.default(), refunds="served"),
    "unlinked": replace(ContractProfile.default(), refunds="unlinked"),
    "strict-served": replace(ContractProfile.strict(), refunds="served"),
}


def _refund_one_of_each(sb: SandboxServer) -> None:
    """An overpaid invoice whose excess is partly paid back, and a free credit note half paid back."""
    portal = sb.portal
    invoice = next(
        d for d in portal.snapshot("documents")
        if d["type"] == "INVOICE" and d["subtype"] is None and d["status"] == "VALIDATED" and d["remaining"] > 0
    )
    payment = portal.pay_document(invoice["id"], {"amount": invoice["remaining"] + 150, "method": "TRANSFER"})
    portal.refund(payment["id"], 100)  # 50 stays unapplied
    credit_note = portal.create(
        "documents",
        {
            "customerId": invoice["customerId"],
            "type": "INVOICE",
            "subtype": "CREDIT_NOTE",
            "status": "VALIDATED",
            "lines": [{"name": "Avoir commercial", "price": 200, "quantity": 1, "vat": 20}],
        },
    )
    portal.refund(credit_note["id"], 120)  # 240 incl. tax: 120 stays unapplied


@pytest.mark.parametrize("profile", sorted(PROFILES))
# seed 29, another data variety of the same assertions on every profile, runs with `pytest -m soak` (README)
@pytest.mark.parametrize("seed", [11, pytest.param(29, marks=pytest.mark.soak)])
def test_unapplied_money_equals_the_sandbox_with_refunds(seed, profile, tmp_path):
    warehouse = tmp_path / "warehouse.duckdb"
    config = SandboxConfig(seed=seed, scale=100, rate_limit_per_s=0, contract=PROFILES[profile])
    with SandboxServer(config, clock=Clock(fixed=START)) as sb:
        _refund_one_of_each(sb)
        sb.clock.advance(timedelta(hours=1))  # the writes fall inside the sync's window
        refunds = [t for t in sb.portal.snapshot("transactions") if t["amount"] < 0]
        assert len(refunds) >= 3, "the generator refunded nothing: its refunds were not exercised"
        assert any(t["documentId"] is None for t in refunds) and any(t["documentId"] for t in refunds)
        sync_sandbox(sb, warehouse)
        with duckdb.connect(str(warehouse)) as conn:
            build_models(conn, as_of=sb.clock.today().date())
            rows = conn.execute(
                "select customer_id, unapplied_payments, unapplied_credit_notes from marts.receivables_by_customer"
            ).fetchall()
            assert compare_marts(conn, sb).mismatches == []
        actual = {cid: (pay, credit) for cid, pay, credit in rows if pay or credit}
        expected = sandbox_unapplied(sb)
        assert actual == expected
        assert sum(credit for _, credit in expected.values()) >= Decimal(120)  # the refunds left something
