"""Receivables on a server that uses a freedom the contract leaves open (contract-audit-2 F3, F15, F10): a seeded
sandbox with one `ContractProfile` switch or one application action, a real sync, the models, then the marts
against a truth worked out from the sandbox's own records (`Portal.snapshot`, harness/marts_truth.py), never from
the SQL under test.

- F3, documents served without `dueDate`: the due date is the legal default (C. com. L441-10: 30 days after
  delivery, the emit date standing for delivery), flagged `is_due_date_assumed`, and aging, overdue, overdue
  customers and the cash outlook follow it.
"""

from __future__ import annotations

from dataclasses import replace
from datetime import UTC, datetime, timedelta
from decimal import Decimal

import duckdb
import pytest

from harness.marts_truth import sandbox_open_invoices
from pipelines.invoicing.sync import make_pipeline, run_sync
from sandbox.clock import Clock
from sandbox.config import SandboxConfig
from sandbox.contract import ContractProfile
from sandbox.server import SandboxServer
from warehouse_engine.sql_runner import build_models

SCALE = 300
START = datetime(2026, 3, 16, 9, 30, tzinfo=UTC)
RECEIVABLE_COLUMNS = "invoice_id, open_amount, due_date, aging_bucket, is_overdue"


def _synced(sb: SandboxServer, warehouse) -> duckdb.DuckDBPyConnection:
    """One sync of `sb` into `warehouse`, the models built as of the sandbox's today; an open connection.
    The frozen clock first moves on a few minutes: a sync reads up to the server's time minus a lag, so the
    writes stamped at the frozen instant are in its window (as at the next scheduled run)."""
    sb.clock.advance(timedelta(minutes=5))
    run_sync(
        make_pipeline(warehouse),
        base_url=sb.base_url,
        client_id=sb.client_id,
        client_secret=sb.client_secret,
        rate_limit_per_s=1000.0,
    )
    conn = duckdb.connect(str(warehouse))
    build_models(conn, as_of=sb.clock.today().date())
    return conn


def _receivables(conn: duckdb.DuckDBPyConnection) -> dict[str, tuple]:
    rows = conn.execute(f"select {RECEIVABLE_COLUMNS} from marts.receivables").fetchall()
    return {row[0]: row[1:] for row in rows}


def _expected_receivables(truth: dict[str, dict]) -> dict[str, tuple]:
    names = RECEIVABLE_COLUMNS.split(", ")[1:]
    return {invoice_id: tuple(invoice[name] for name in names) for invoice_id, invoice in truth.items()}


@pytest.mark.parametrize("seed", [3, 11])
def test_missing_due_dates_take_the_legal_default_everywhere(seed, tmp_path):
    contract = replace(ContractProfile.default(), due_date_omitted=True)
    config = SandboxConfig(seed=seed, scale=SCALE, rate_limit_per_s=0, contract=contract)
    with SandboxServer(config, clock=Clock(fixed=START)) as sb:
        today = sb.clock.today().date()
        truth = sandbox_open_invoices(sb, today, due_dates_served=False)
        with _synced(sb, tmp_path / "warehouse.duckdb") as conn:
            assert _receivables(conn) == _expected_receivables(truth)
            overdue_truth = {i["customer_id"] for i in truth.values() if i["is_overdue"]}
            deleted = {c["id"] for c in sb.portal.snapshot("customers") if c.get("deleted")}
            overdue_mart = {r[0] for r in conn.execute("select customer_id from marts.overdue_customers").fetchall()}
            assert overdue_mart == overdue_truth - deleted
            inflows = conn.execute("select period_index, expected_inflows from marts.cash_outlook").fetchall()
            expected = {index: Decimal(0) for index in range(10)}
            for invoice in truth.values():
                expected[invoice["outlook_period"]] += invoice["open_amount"]
            assert dict(inflows) == expected
            overdue = conn.execute("select overdue_receivables from marts.dso").fetchone()[0]
            assert overdue == sum((i["open_amount"] for i in truth.values() if i["is_overdue"]), Decimal(0))
        # the comparison proves something only if the default term made some invoices late and left some not
        assert overdue_truth and any(not i["is_overdue"] for i in truth.values())
        # and only if the default term ages some invoice otherwise than the due date the sandbox holds
        served = sandbox_open_invoices(sb, today)
        assert any(served[i]["aging_bucket"] != truth[i]["aging_bucket"] for i in truth)

