"""Supplier credit notes served with negative amounts (ContractProfile.supplier_credit_note_sign="negative";
the spec gives supplier amounts no sign): after a real sync over HTTP, marts.supplier_payables,
marts.payables_by_supplier and the outflows of marts.cash_outlook equal the figures harness/marts_truth.py works
out from the sandbox's own records (which stay positive whatever is served): a credit note lowers what is owed.

Seed 5 at scale 100 holds supplier credit notes among the owed bills (one approved, one disputed), which the
test asserts, so the sign is really exercised.
"""

from collections import defaultdict
from dataclasses import replace
from datetime import UTC, datetime
from decimal import Decimal

import duckdb
import pytest

from harness.marts_truth import sandbox_dso_and_outlook, sandbox_payables
from harness.regular_build import sync_sandbox
from invoicing_sandbox.clock import Clock
from invoicing_sandbox.config import SandboxConfig
from invoicing_sandbox.contract import ContractProfile
from invoicing_sandbox.server import SandboxServer
from invoicing_warehouse.engine.sql_runner import build_models

SEED, SCALE = 5, 100
START = datetime(2026, 3, 16, 9, 30, tzinfo=UTC)
STATES = ("approved", "awaiting_approval", "disputed")


@pytest.mark.parametrize("contract", ["default", "strict"])
def test_negative_supplier_credit_notes_lower_the_payables(contract, tmp_path):
    profile = replace(ContractProfile.named(contract), supplier_credit_note_sign="negative")
    clock = Clock(fixed=START)
    warehouse = tmp_path / "warehouse.duckdb"
    config = SandboxConfig(seed=SEED, scale=SCALE, rate_limit_per_s=0, contract=profile)
    with SandboxServer(config, clock=clock) as sb:
        sync_sandbox(sb, warehouse)
        today = clock.today().date()
        expected = sandbox_payables(sb, today)
        credit_notes = {d["id"] for d in sb.portal.snapshot("supplier_documents") if d["type"] == "creditNote"}
        _, periods = sandbox_dso_and_outlook(sb, today)
        with duckdb.connect(str(warehouse)) as conn:
            served = dict(conn.execute(
                "select id, amount_vat from invoicing_raw.supplier_documents where id in "
                f"({', '.join('?' for _ in credit_notes)})",
                sorted(credit_notes),
            ).fetchall())
            build_models(conn, as_of=today)
            payables = conn.execute(
                "select supplier_document_id, supplier_id, approval_state, amount_due, due_date "
                "from marts.supplier_payables"
            ).fetchall()
            by_supplier = conn.execute(
                "select supplier_id, total_due, approved_due, awaiting_approval_due, disputed_due, document_count "
                "from marts.payables_by_supplier"
            ).fetchall()
            outflows = dict(conn.execute("select period_index, expected_outflows - credit_balances_owed "
                                         "from marts.cash_outlook").fetchall())

    owed_credit_notes = set(expected) & credit_notes
    assert len(owed_credit_notes) >= 2, "no owed supplier credit note: the sign would not be exercised"
    assert all(Decimal(str(served[i])) < 0 for i in owed_credit_notes), "the switch did not serve them negative"

    assert {row[0]: row[1:] for row in payables} == expected

    per_supplier: dict[str, list] = defaultdict(lambda: [Decimal(0), Decimal(0), Decimal(0), Decimal(0), 0])
    for supplier_id, state, amount, _ in expected.values():
        figures = per_supplier[supplier_id]
        figures[0] += amount
        figures[1 + STATES.index(state)] += amount
        figures[4] += 1
    assert {row[0]: list(row[1:]) for row in by_supplier} == dict(per_supplier)

    assert outflows == {index: outflow for index, (_, outflow) in periods.items()}
