"""Currencies (contract-audit-2 F16) against the sandbox: a portal served in one currency other than euros
carries it into the marts, and a portal whose sums would mix two currencies fails a BLOCKING check naming them
(receivables, payables, or receivables against payables in the cash outlook). A currency not served counts as
euros (docs/contract.md, `documents.currency`). Checks run through Dagster (test_contract_rows.checks)."""

from dataclasses import replace
from datetime import UTC, datetime

import duckdb
import pytest
from test_contract_rows import checks

from invoicing_sandbox.clock import Clock
from invoicing_sandbox.config import SandboxConfig
from invoicing_sandbox.contract import ContractProfile
from invoicing_sandbox.server import SandboxServer
from invoicing_warehouse.engine.sql_runner import build_models
from pipelines.invoicing.load.sync import make_pipeline, run_sync

START = datetime(2026, 3, 16, 9, 30, tzinfo=UTC)
CURRENCY_CHECKS = {
    "receivables": ("marts/receivables", "receivables_single_currency"),
    "payables": ("marts/supplier_payables", "payables_single_currency"),
    "cash_outlook": ("marts/cash_outlook", "cash_outlook_single_currency"),
}
# (document_currency, supplier_document_currency) -> the checks that must fail, and what they name
CASES = {
    "euros-unlabelled": ("", "EUR", {}),
    "all-usd": ("USD", "USD", {}),
    "usd-bills-euro-invoices": ("", "USD", {"cash_outlook": ("EUR", "USD")}),
    "mixed-invoices": ("mixed", "EUR", {"receivables": ("EUR", "USD"), "cash_outlook": ("EUR", "USD")}),
    "mixed-bills": ("EUR", "mixed", {"payables": ("EUR", "USD"), "cash_outlook": ("EUR", "USD")}),
}


def _synced(tmp_path, documents: str, suppliers: str) -> tuple[str, SandboxServer]:
    profile = replace(ContractProfile.default(), document_currency=documents, supplier_document_currency=suppliers)
    config = SandboxConfig(seed=3, scale=100, rate_limit_per_s=0, contract=profile)
    warehouse = str(tmp_path / "warehouse.duckdb")
    with SandboxServer(config, clock=Clock(fixed=START)) as sb:
        run_sync(make_pipeline(warehouse), base_url=sb.base_url, client_id=sb.client_id,
                 client_secret=sb.client_secret, rate_limit_per_s=1000.0)
        with duckdb.connect(warehouse) as conn:
            build_models(conn, as_of=sb.clock.today().date())
    return warehouse, sb


@pytest.mark.parametrize("case", sorted(CASES))
def test_a_portal_mixing_currencies_is_stopped_and_one_currency_is_carried(case, tmp_path):
    documents, suppliers, failing = CASES[case]
    warehouse, _ = _synced(tmp_path, documents, suppliers)
    results = checks(warehouse, lambda name: name.endswith("single_currency"))
    for mart, key in CURRENCY_CHECKS.items():
        passed, severity, description = results[key]
        if mart in failing:
            assert not passed and severity == "ERROR", (mart, description)
            assert all(code in description for code in failing[mart]), description
        else:
            assert passed, (mart, description)
    with duckdb.connect(warehouse, read_only=True) as conn:
        receivables = {r[0] for r in conn.execute("select distinct currency from marts.receivables").fetchall()}
        by_customer = {
            r[0] for r in conn.execute("select distinct currency from marts.receivables_by_customer").fetchall()
        }
        outlook = {r[0] for r in conn.execute("select distinct currency from marts.cash_outlook").fetchall()}
        payables = {r[0] for r in conn.execute("select distinct currency from marts.supplier_payables").fetchall()}
    served = {"": "EUR"}.get(documents, documents)  # not served: euros
    if documents != "mixed":
        assert receivables == by_customer == {served}
    else:
        assert receivables == {"EUR", "USD"}
    if suppliers != "mixed":
        assert payables == {suppliers}
    if not failing:
        assert outlook == {served}
    else:
        assert outlook == {"EUR/USD"}
