"""Payments have no event of their own: an applying run reads the payments windows (transactions, transaction
usages) only when a hinted document shows that its payments changed: its `totalPayments` against the
warehouse's row, a credit note, or a server that does not serve `totalPayments` at all. Validating an invoice
costs the GET alone; paying one still lands the payment exactly. Compared with the sandbox's own records."""

from __future__ import annotations

from types import SimpleNamespace

import pytest
from hint_support import apply, quiet, scheduled_sync

from harness.tamper_proxy import Exchange, TamperProxy
from harness.warehouse_truth import mismatches
from pipelines.invoicing.webhooks.hint_spool import Hint, HintSpool, spool_path

PAYMENT_TABLES = ("documents", "transactions", "transaction_usages")


def _sandbox(sandbox_factory, contract: str):
    """A seeded sandbox serving `contract` on the run's date, past the windows' lag (the factory stops it)."""
    server = sandbox_factory(seed=16, scale=40, rate_limit_per_s=0, latency_ms=0, contract=contract)
    quiet(server)
    return server


def _hint(warehouse: str, document_id: str, event: str) -> None:
    with HintSpool(spool_path(warehouse)) as spool:
        spool.append(f"{event}-{document_id}", Hint("default", "documents", document_id, event))


def _draft_invoice(sandbox) -> str:
    """A new DRAFT invoice of a new customer, past the windows' lag (created: the seeded data holds drafts on some
    dates and none on others, as it is generated relative to the sandbox's date)."""
    portal = sandbox.portal
    customer = portal.create("customers", {"name": "Hint Payments SARL"})
    item = next(iter(portal.stores["items"].records))
    draft = portal.create("documents", {"customerId": customer["id"], "type": "INVOICE",
                                        "lines": [{"itemId": item, "quantity": 3}]})["id"]
    quiet(sandbox)
    return draft


def _payable_invoice(sandbox) -> str:
    """A new VALIDATED invoice that owes its whole amount, past the windows' lag."""
    invoice = _draft_invoice(sandbox)
    sandbox.portal.validate_document(invoice)
    assert float(sandbox.portal.get("documents", invoice)["remaining"]) > 0
    quiet(sandbox)
    return invoice


@pytest.mark.parametrize("contract", ["default", "strict"])
def test_a_validated_invoice_reads_no_payments_and_a_paid_one_reads_them(contract, tmp_path, sandbox_factory):
    warehouse = str(tmp_path / "warehouse.duckdb")
    sandbox = _sandbox(sandbox_factory, contract)
    validated, paid = _draft_invoice(sandbox), _payable_invoice(sandbox)
    scheduled_sync(sandbox, warehouse)
    sandbox.portal.validate_document(validated)
    _hint(warehouse, validated, "invoice.validated")
    tokens_before = sandbox.stats["tokens_issued"]
    run = apply(sandbox, warehouse)
    assert run.acknowledged == 1 and not run.load.payments_read, run.line()
    # the GET alone, no payments window (and a token when the sync's kept one was near its end: strict's
    # tokens live 20 s)
    assert run.load.requests - (sandbox.stats["tokens_issued"] - tokens_before) == 1, run.line()

    sandbox.portal.pay_document(paid, None)
    _hint(warehouse, paid, "invoice.paid")
    run = apply(sandbox, warehouse)
    assert run.acknowledged == 1 and run.load.payments_read, run.line()
    quiet(sandbox)
    assert mismatches(warehouse, sandbox.portal, tables=PAYMENT_TABLES, contract=contract) == []


def _without_total_payments(exchange: Exchange) -> None:
    """Answers of /documents without `totalPayments`, as a server that does not serve it."""
    if not exchange.path.startswith("/documents") or exchange.status != 200:
        return
    body = exchange.json()
    data = body.get("data") if isinstance(body, dict) else None
    for record in data if isinstance(data, list) else [data] if isinstance(data, dict) else []:
        record.pop("totalPayments", None)
    exchange.set_json(body)


def test_a_server_without_total_payments_reads_the_payments_for_any_document_hint(tmp_path, sandbox_factory):
    warehouse = str(tmp_path / "warehouse.duckdb")
    sandbox = _sandbox(sandbox_factory, "default")
    with TamperProxy(sandbox.base_url, _without_total_payments) as proxy:
        through_proxy = SimpleNamespace(base_url=proxy.base_url, client_id=sandbox.client_id,
                                        client_secret=sandbox.client_secret, clock=sandbox.clock)
        paid = _payable_invoice(sandbox)
        scheduled_sync(through_proxy, warehouse)
        sandbox.portal.pay_document(paid, None)
        _hint(warehouse, paid, "document.updated")
        run = apply(through_proxy, warehouse)
        assert run.acknowledged == 1 and run.load.payments_read, run.line()
        assert run.load.window_records >= 2, run.line()  # the payment and its usage
        quiet(sandbox)
        assert mismatches(warehouse, sandbox.portal, tables=("transactions", "transaction_usages")) == []
