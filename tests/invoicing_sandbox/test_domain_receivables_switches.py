"""The sandbox's receivables-side freedoms: a write-off (an invoice PAID short of its usages), a new version of a
partly-paid invoice under `paid_invoice_versions="usages_stay"`, documents served without `dueDate`, and the
profile's validation of these switches. Expected figures are worked out by hand."""

from dataclasses import replace
from datetime import UTC, datetime

import pytest

from invoicing_sandbox.clock import Clock
from invoicing_sandbox.config import SandboxConfig
from invoicing_sandbox.contract import ContractProfile
from invoicing_sandbox.domain import Portal
from invoicing_sandbox.errors import ApiError
from invoicing_sandbox.served import served_record

LINE = {"name": "Conseil", "price": 100, "quantity": 1, "vat": 20}  # 120.00 incl. tax


def _portal(contract: ContractProfile | None = None) -> tuple[Portal, str, dict]:
    """A portal with one customer and one VALIDATED invoice of 120.00."""
    clock = Clock(fixed=datetime(2026, 3, 10, 9, 0, tzinfo=UTC))
    portal = Portal(clock, SandboxConfig(contract=contract or ContractProfile.default()))
    portal.update_portal({"referenceAssignmentMethod": "CHRONOLOGICAL"})
    customer = portal.create("customers", {"name": "Dupont SARL", "email": "compta@dupont.fr"})
    invoice = portal.create("documents", {"customerId": customer["id"], "status": "VALIDATED", "lines": [LINE]})
    return portal, customer["id"], invoice


def test_a_write_off_closes_the_invoice_and_keeps_its_residual():
    portal, customer_id, invoice = _portal()
    portal.pay_document(invoice["id"], {"amount": 100})
    closed = portal.write_off(invoice["id"])
    assert (closed["status"], closed["totalPayments"], closed["remaining"]) == ("PAID", 100, 20)
    assert portal.get("customers", customer_id)["dueAmount"] == 0  # PAID is not owed
    assert len(portal.snapshot("transaction_usages")) == 1  # no usage for the 20.00 written off
    with pytest.raises(ApiError) as error:
        portal.write_off(invoice["id"])
    assert error.value.status == 400  # only a VALIDATED invoice


def test_a_new_version_of_a_partly_paid_invoice_leaves_its_usages_on_the_replaced_one():
    contract = replace(ContractProfile.default(), paid_invoice_versions="usages_stay")
    portal, customer_id, invoice = _portal(contract)
    portal.pay_document(invoice["id"], {"amount": 50})
    version = portal.new_version(invoice["id"], {"lines": [dict(LINE, quantity=2)]})  # 240.00 incl. tax
    assert portal.get("documents", invoice["id"])["status"] == "CANCELED"
    assert (version["status"], version["amountVatNet"], version["remaining"]) == ("VALIDATED", 240, 190)
    assert [u["invoiceId"] for u in portal.snapshot("transaction_usages")] == [invoice["id"]]
    assert portal.get("customers", customer_id)["dueAmount"] == 190
    portal.pay_document(version["id"], {})  # what is left: 190.00
    assert portal.get("documents", version["id"])["status"] == "PAID"
    assert portal.get("customers", customer_id)["dueAmount"] == 0


def test_the_default_still_refuses_a_new_version_of_a_paid_invoice():
    portal, _, invoice = _portal()
    portal.pay_document(invoice["id"], {"amount": 50})
    with pytest.raises(ApiError) as error:
        portal.new_version(invoice["id"], {"title": "x"})
    assert error.value.status == 400


def test_due_dates_can_be_left_out_of_what_is_served():
    _, _, invoice = _portal()
    assert invoice["dueDate"] == "2026-04-09T00:00:00Z"  # the sandbox's own: emit date + 30 days
    served = served_record("documents", invoice, replace(ContractProfile.default(), due_date_omitted=True))
    assert "dueDate" not in served and served["emitDate"] == invoice["emitDate"]


def test_the_new_switches_are_validated():
    with pytest.raises(ValueError):
        ContractProfile(paid_invoice_versions="allowed")
    with pytest.raises(TypeError):
        ContractProfile(due_date_omitted="yes")  # type: ignore[arg-type]
    assert not ContractProfile.strict().due_date_omitted
    assert ContractProfile.strict().paid_invoice_versions == "refused"
