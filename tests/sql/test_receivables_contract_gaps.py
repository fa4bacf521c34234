"""Receivables on a server that uses a freedom the contract leaves open (contract-audit-2 F3, F15, F10): a seeded
sandbox with one `ContractProfile` switch or one application action, a real sync, the models, then the marts
against a truth worked out from the sandbox's own records (`Portal.snapshot`, harness/marts_truth.py), never from
the SQL under test.

- F3, documents served without `dueDate`: the due date is the legal default (C. com. L441-10: 30 days after
  delivery, the emit date standing for delivery), flagged `is_due_date_assumed`, and aging, overdue, overdue
  customers and the cash outlook follow it.
- F15, an invoice marked PAID short of its usages (a write-off in the application): nothing of it is open, as
  the API's `dueAmount` and LATE list say, and the check paid_invoices_settled (WARN) names it.
- F10, a partly-paid invoice edited into new versions whose usages stay on the replaced (CANCELED) versions: the
  live version owes what the usages of the whole chain leave, as the API's `dueAmount` and `remaining` say.
"""

from __future__ import annotations

from dataclasses import replace
from datetime import UTC, datetime, timedelta
from decimal import Decimal

import duckdb
import pytest
from dagster import AssetSelection, AssetSpec, Definitions, define_asset_job

from assets.checks import contract_checks, model_checks
from assets.resources import WarehouseResource
from harness.marts_truth import compare_marts, sandbox_dso_and_outlook, sandbox_open_invoices
from harness.regular_build import sync_sandbox
from invoicing_sandbox.clock import Clock
from invoicing_sandbox.config import SandboxConfig
from invoicing_sandbox.contract import ContractProfile
from invoicing_sandbox.server import SandboxServer
from invoicing_warehouse.engine.sql_runner import build_models
from invoicing_warehouse.engine.sql_runner import discover_models as _discover_models

SCALE = 300
START = datetime(2026, 3, 16, 9, 30, tzinfo=UTC)
RECEIVABLE_COLUMNS = "invoice_id, open_amount, due_date, aging_bucket, is_overdue"


def _synced(sb: SandboxServer, warehouse) -> duckdb.DuckDBPyConnection:
    """One sync of `sb` into `warehouse`, the models built as of the sandbox's today; an open connection.
    The frozen clock first moves on a few minutes: a sync reads up to the server's time minus a lag, so the
    writes stamped at the frozen instant are in its window (as at the next scheduled run)."""
    sb.clock.advance(timedelta(minutes=5))
    sync_sandbox(sb, warehouse)
    conn = duckdb.connect(str(warehouse))
    build_models(conn, as_of=sb.clock.today().date())
    return conn


def _receivables(conn: duckdb.DuckDBPyConnection) -> dict[str, tuple]:
    rows = conn.execute(f"select {RECEIVABLE_COLUMNS} from marts.receivables").fetchall()
    return {row[0]: row[1:] for row in rows}


def _check(warehouse, name: str) -> tuple[bool, str, str | None]:
    """Runs the contract check `name` on `warehouse` through Dagster: (passed, severity, description)."""
    wanted = [check for check in (contract_checks() + model_checks(_discover_models()))
              if any(k.name == name for k in check.check_keys)]
    targets = {key.asset_key for check in wanted for key in check.check_keys}
    defs = Definitions(
        assets=[AssetSpec(key) for key in targets],
        asset_checks=wanted,
        jobs=[define_asset_job("one_check", selection=AssetSelection.checks(*wanted))],
        resources={"warehouse": WarehouseResource(path=str(warehouse))},
    )
    result = defs.resolve_job_def("one_check").execute_in_process(raise_on_error=False)
    [evaluation] = [e for e in result.get_asset_check_evaluations() if e.check_name == name]
    return evaluation.passed, evaluation.severity.value, evaluation.description


def _assert_receivables_equal_the_api(conn: duckdb.DuckDBPyConnection, sb: SandboxServer) -> None:
    """dueAmount and the LATE list per customer, `remaining` per open invoice, DSO and cash outlook: the API's."""
    today = sb.clock.today().date()
    result = compare_marts(conn, sb)
    assert result.mismatches == [], result.summary()
    truth = sandbox_open_invoices(sb, today)
    rows = conn.execute("select invoice_id, open_amount from marts.receivables").fetchall()
    assert dict(rows) == {invoice_id: invoice["open_amount"] for invoice_id, invoice in truth.items()}
    figures, periods = sandbox_dso_and_outlook(sb, today)
    dso = conn.execute("select open_receivables, invoiced_last_90_days, dso_days from marts.dso").fetchall()
    assert dso == [(figures["open_receivables"], figures["invoiced_last_90_days"], figures["dso_days"])]
    outlook = conn.execute("select period_index, open_receivables, expected_outflows - credit_balances_owed "
                           "from marts.cash_outlook")
    assert {index: (inflow, outflow) for index, inflow, outflow in outlook.fetchall()} == periods


def _open_invoices(sb: SandboxServer, count: int) -> list[dict]:
    """The `count` largest invoices still owed today, overdue ones first (the sandbox's own records)."""
    truth = sandbox_open_invoices(sb, sb.clock.today().date())
    ranked = sorted(truth, key=lambda i: (not truth[i]["is_overdue"], -truth[i]["open_amount"], i))
    assert len(ranked) >= count, "too few open invoices for the scenario"
    return [sb.portal.record("documents", invoice_id) for invoice_id in ranked[:count]]


def _expected_receivables(truth: dict[str, dict]) -> dict[str, tuple]:
    names = RECEIVABLE_COLUMNS.split(", ")[1:]
    return {invoice_id: tuple(invoice[name] for name in names) for invoice_id, invoice in truth.items()}


# seed 11, another data variety of the same assertions, runs with `pytest -m soak` (README)
@pytest.mark.parametrize("seed", [3, pytest.param(11, marks=pytest.mark.soak)])
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
            inflows = conn.execute("select period_index, open_receivables from marts.cash_outlook").fetchall()
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


def test_a_paid_invoice_short_of_its_usages_is_closed_and_its_residual_named(tmp_path):
    config = SandboxConfig(seed=3, scale=SCALE, rate_limit_per_s=0)
    warehouse = tmp_path / "warehouse.duckdb"
    with SandboxServer(config, clock=Clock(fixed=START)) as sb:
        [invoice] = _open_invoices(sb, 1)
        total = Decimal(str(invoice["amountVatNet"]))
        sb.portal.pay_document(invoice["id"], {"amount": float(total / 2)})  # half paid, then written off
        written_off = sb.portal.write_off(invoice["id"])
        assert written_off["status"] == "PAID" and written_off["remaining"] > 0  # the residual the API keeps
        with _synced(sb, warehouse) as conn:
            _assert_receivables_equal_the_api(conn, sb)
            assert conn.execute(
                "select count(*) from marts.receivables where invoice_id = ?", [invoice["id"]]
            ).fetchone() == (0,)
        passed, severity, description = _check(warehouse, "paid_invoices_settled")
        assert not passed and severity == "WARN"
        assert invoice["id"] in description and "marts.receivables" in description


def test_usages_left_on_replaced_versions_count_for_the_live_version(tmp_path):
    contract = replace(ContractProfile.default(), paid_invoice_versions="usages_stay")
    config = SandboxConfig(seed=11, scale=SCALE, rate_limit_per_s=0, contract=contract)
    warehouse = tmp_path / "warehouse.duckdb"
    with SandboxServer(config, clock=Clock(fixed=START)) as sb:
        twice, once = _open_invoices(sb, 2)
        _synced(sb, warehouse).close()  # the warehouse knows the first versions before the edits
        # `twice`: a payment, an edit, a payment on the new version, another edit: usages on both old versions
        sb.portal.pay_document(twice["id"], {"amount": round(float(twice["amountVatNet"]) / 4, 2)})
        second = sb.portal.new_version(twice["id"], {"title": "Version corrigée"})
        sb.portal.pay_document(second["id"], {"amount": round(float(twice["amountVatNet"]) / 4, 2)})
        live = sb.portal.new_version(second["id"], {"title": "Mise à jour"})
        # `once`: part-paid, then edited to a lower amount (one line at 100 excl. tax, 20 % VAT)
        paid = min(60.0, round(float(once["amountVatNet"]) / 2, 2))
        sb.portal.pay_document(once["id"], {"amount": paid})
        edited = sb.portal.new_version(once["id"], {"lines": [{"name": "Prestation", "price": 100, "vat": 20}]})
        assert edited["amountVatNet"] == 120 and edited["remaining"] == round(120 - paid, 2)
        assert live["remaining"] == round(float(twice["amountVatNet"]) - 2 * round(float(twice["amountVatNet"]) / 4, 2),
                                          2)
        with _synced(sb, warehouse) as conn:
            _assert_receivables_equal_the_api(conn, sb)
            rows = dict(conn.execute(
                "select invoice_id, paid_by_payments from marts.receivables where invoice_id in (?, ?)",
                [live["id"], edited["id"]],
            ).fetchall())
        # the usages the server holds on the CANCELED versions are the ones paid_by_payments counts
        assert rows == {
            live["id"]: Decimal(str(round(2 * round(float(twice["amountVatNet"]) / 4, 2), 2))),
            edited["id"]: Decimal(str(paid)),
        }
        usages = sb.portal.snapshot("transaction_usages")
        assert {u["invoiceId"] for u in usages} >= {twice["id"], second["id"], once["id"]}
