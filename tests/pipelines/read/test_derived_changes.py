"""A change that does not move `lastUpdate` (contract-audit-2 F5): the sandbox switch
`derived_changes_keep_last_update` turns the version a new version replaces CANCELED, and a supplier document's
status set by the application, without stamping them. No window can see such a change; the blocking check
`document_versions_single_live` names the chain with two live versions (the invoice counted twice), and a
reconcile, which compares each record's content with the warehouse's `_digest`, loads it again: the warehouse
then equals the sandbox's own records (`Portal.snapshot`, harness/warehouse_truth.py) and the check passes.
"""

from __future__ import annotations

from dataclasses import replace

import duckdb
import pytest

from harness.warehouse_truth import mismatches
from invoicing_sandbox.contract import ContractProfile
from invoicing_warehouse.engine.sql_runner import build_models
from invoicing_warehouse.runs.contract_checks import document_versions_single_live
from tests.pipelines.sandbox_syncs import quiet, sync
from tests.support.sandboxes import pick


def live_versions_check(warehouse: str, sandbox) -> tuple[bool, str | None]:
    """Builds the models as of the sandbox's date, then runs `document_versions_single_live` (the gate's check)."""
    with duckdb.connect(warehouse) as connection:
        build_models(connection, as_of=sandbox.clock.today().date())
        result = document_versions_single_live.run(connection)
    assert result.relation == "staging.stg_invoicing__document_versions" and result.blocking
    return result.passed, result.description


def editable_invoice(sandbox) -> dict:
    """A VALIDATED invoice with nothing applied to it (the sandbox versions only those), from the ground truth."""
    applied = {u.get("invoiceId") for u in sandbox.portal.snapshot("transaction_usages")}
    return pick(sandbox.portal, "documents",
                lambda d: d["type"] == "INVOICE" and d["status"] == "VALIDATED" and d["id"] not in applied,
                "VALIDATED invoice with nothing applied")


@pytest.mark.parametrize("contract", ["default", "strict"])
def test_a_replaced_version_whose_lastupdate_stays_is_caught_then_repaired_by_the_reconcile(
        start_sandbox, warehouse, contract):
    profile = replace(ContractProfile.named(contract), derived_changes_keep_last_update=True)
    sandbox = start_sandbox(seed=12, scale=40, contract=profile)
    sync(sandbox, warehouse)
    assert mismatches(warehouse, sandbox.portal, contract=profile) == []
    passed, _ = live_versions_check(warehouse, sandbox)
    assert passed

    invoice = editable_invoice(sandbox)
    stamp = invoice["lastUpdate"]
    quiet(sandbox)
    newer = sandbox.portal.new_version(invoice["id"], {"title": "Version corrigée"})
    replaced = sandbox.portal.get("documents", invoice["id"])
    # the switch at work, on the sandbox's own record: CANCELED, linked, its stamp unmoved
    assert (replaced["status"], replaced["nextDoc"], replaced["lastUpdate"]) == ("CANCELED", newer["id"], stamp)
    quiet(sandbox)

    sync(sandbox, warehouse)  # incremental: sees the new version only
    passed, description = live_versions_check(warehouse, sandbox)
    assert not passed and invoice["id"] in (description or ""), description
    assert any(invoice["id"] in problem and "status" in problem
               for problem in mismatches(warehouse, sandbox.portal, contract=profile))

    sync(sandbox, warehouse, reconcile=True)
    assert mismatches(warehouse, sandbox.portal, contract=profile) == []
    passed, description = live_versions_check(warehouse, sandbox)
    assert passed, description


def test_a_bill_the_application_marks_paid_without_a_stamp_leaves_payables_after_the_reconcile(
        start_sandbox, warehouse):
    profile = replace(ContractProfile.default(), derived_changes_keep_last_update=True)
    sandbox = start_sandbox(seed=13, scale=40, contract=profile)
    sync(sandbox, warehouse)
    bill = pick(sandbox.portal, "supplier_documents", lambda d: d["status"] == "approved", "approved bill")
    quiet(sandbox)
    sandbox.portal.change_supplier_document_status(bill["id"], {"action": "declarePayment"}, by="application")
    paid = sandbox.portal.get("supplier_documents", bill["id"])
    assert (paid["status"], paid["lastUpdate"]) == ("paid", bill["lastUpdate"])  # the switch at work
    quiet(sandbox)

    sync(sandbox, warehouse)  # incremental: the window cannot see it
    assert any(bill["id"] in problem and "status" in problem
               for problem in mismatches(warehouse, sandbox.portal, contract=profile))

    sync(sandbox, warehouse, reconcile=True)  # the document and its status history, loaded again
    assert mismatches(warehouse, sandbox.portal, contract=profile) == []
