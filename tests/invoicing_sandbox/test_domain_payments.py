"""Payment rules 1-4, overpayments used on a second invoice, credit notes and the derived customer figures."""

from dataclasses import replace
from datetime import UTC, datetime, timedelta

import pytest

from invoicing_sandbox.clock import Clock
from invoicing_sandbox.config import SandboxConfig
from invoicing_sandbox.contract import ContractProfile
from invoicing_sandbox.domain import Portal
from invoicing_sandbox.errors import ApiError
from invoicing_sandbox.generator import generate

NOW = datetime(2026, 3, 10, 9, 0, tzinfo=UTC)


def make_portal():
    clock = Clock(fixed=NOW)
    portal = Portal(clock, SandboxConfig())
    portal.update_portal({"referenceAssignmentMethod": "CHRONOLOGICAL"})
    customer = portal.create("customers", {"name": "Dupont SARL", "email": "compta@dupont.fr"})
    return portal, clock, customer["id"]


def invoice(portal, customer_id, price=100, **extra):
    body = {
        "customerId": customer_id,
        "status": "VALIDATED",
        "lines": [{"name": "Conseil", "price": price, "quantity": 1, "vat": 20}],
    }
    body.update(extra)
    return portal.create("documents", body)


def test_payment_without_body_is_a_credit_card_payment_of_the_remaining_amount():
    portal, _, customer_id = make_portal()
    document = invoice(portal, customer_id)  # 120 incl. VAT
    transaction = portal.pay_document(document["id"], None)
    assert (transaction["amount"], transaction["method"], transaction["usedAmount"]) == (
        120,
        "CREDIT_CARD",
        120,
    )
    assert transaction["date"] == "2026-03-10T00:00:00Z" and transaction["documentId"] == document["id"]
    paid = portal.get("documents", document["id"])
    assert (paid["status"], paid["totalPayments"], paid["remaining"]) == ("PAID", 120, 0)


def test_partial_payments_then_paid_only_when_covered():
    portal, _, customer_id = make_portal()
    document = invoice(portal, customer_id)
    first = portal.pay_document(
        document["id"], {"amount": 50, "method": "CHECK", "date": "2026-02-01T00:00:00Z"}
    )
    assert (first["method"], first["date"]) == ("CHECK", "2026-02-01T00:00:00Z")
    partly = portal.get("documents", document["id"])
    assert (partly["status"], partly["totalPayments"], partly["remaining"]) == ("VALIDATED", 50, 70)
    assert portal.get("customers", customer_id)["dueAmount"] == 70
    second = portal.pay_document(document["id"], {"method": "TRANSFER"})  # rule 1: the remaining 70
    assert second["amount"] == 70
    assert portal.get("documents", document["id"])["status"] == "PAID"
    assert portal.get("customers", customer_id)["dueAmount"] == 0
    with pytest.raises(ApiError) as error:
        portal.pay_document(document["id"], {"amount": 5})
    assert error.value.status == 400 and "PAID" in error.value.message


def test_an_overpayment_is_used_on_two_more_invoices():
    portal, _, customer_id = make_portal()
    first, second, third = (invoice(portal, customer_id, price) for price in (100, 50, 100))  # 120, 60, 120
    payment = portal.pay_document(first["id"], {"amount": 200, "method": "TRANSFER"})
    assert (payment["amount"], payment["usedAmount"]) == (200, 120)
    used = portal.pay_document(second["id"], {"transactionId": payment["id"]})
    assert (used["id"], used["usedAmount"]) == (payment["id"], 180)
    assert portal.get("documents", second["id"])["status"] == "PAID"
    portal.pay_document(third["id"], {"transactionId": payment["id"]})
    last = portal.get("documents", third["id"])
    assert (last["status"], last["totalPayments"], last["remaining"]) == ("VALIDATED", 20, 100)
    assert portal.get("transactions", payment["id"])["usedAmount"] == 200
    with pytest.raises(ApiError):
        portal.pay_document(third["id"], {"transactionId": payment["id"]})  # nothing unused left
    usages = portal.list("transaction_usages", {"limit": "100"})
    assert sorted(u["amount"] for u in usages) == [20, 60, 120]
    assert {u["transactionId"] for u in usages} == {payment["id"]}
    assert portal.get("customers", customer_id)["dueAmount"] == 100
    assert len(portal.list("transactions", {})) == 1


def test_a_payment_with_an_amount_of_another_customers_transaction_is_refused():
    portal, _, customer_id = make_portal()
    other = portal.create("customers", {"name": "Autre"})["id"]
    mine, theirs = invoice(portal, customer_id), invoice(portal, other)
    payment = portal.pay_document(theirs["id"], {"amount": 500})
    with pytest.raises(ApiError) as error:
        portal.pay_document(mine["id"], {"transactionId": payment["id"]})
    assert error.value.status == 400


@pytest.mark.parametrize(
    "extra, status",
    [
        ({"subtype": "PROFORMA"}, "VALIDATED"),
        ({"type": "QUOTATION"}, "VALIDATED"),
        ({"status": "DRAFT"}, "DRAFT"),
        ({"subtype": "CREDIT_NOTE"}, "VALIDATED"),
    ],
)
def test_only_validated_invoices_and_deposits_can_be_paid(extra, status):
    portal, _, customer_id = make_portal()
    document = invoice(portal, customer_id, **extra)
    with pytest.raises(ApiError) as error:
        portal.pay_document(document["id"], {"amount": 10})
    assert error.value.status == 400
    assert portal.get("documents", document["id"])["status"] == status
    deposit = invoice(portal, customer_id, subtype="DEPOSIT")
    assert deposit["reference"].startswith("AC-")
    portal.pay_document(deposit["id"], None)
    assert portal.get("documents", deposit["id"])["status"] == "PAID"


@pytest.mark.parametrize(
    "body",
    [
        {"amount": 0},
        {"amount": -5},
        {"amount": "10"},
        {"method": "BITCOIN"},
        {"date": "yesterday"},
        {"tip": 1},
    ],
)
def test_bad_payment_bodies_are_400(body):
    portal, _, customer_id = make_portal()
    document = invoice(portal, customer_id)
    with pytest.raises(ApiError) as error:
        portal.pay_document(document["id"], body)
    assert error.value.status == 400


def test_credit_note_is_applied_to_its_invoice_on_validation():
    portal, _, customer_id = make_portal()
    target = invoice(portal, customer_id, price=200)  # 240
    note = portal.create(
        "documents",
        {
            "customerId": customer_id,
            "subtype": "CREDIT_NOTE",
            "invoiceId": target["id"],
            "lines": [{"name": "Avoir", "price": 50, "quantity": 1, "vat": 20}],
        },
    )
    assert portal.get("documents", target["id"])["totalPayments"] == 0  # a draft credit applies nothing
    portal.validate_document(note["id"])
    credited = portal.get("documents", target["id"])
    assert (credited["totalPayments"], credited["remaining"], credited["status"]) == (60, 180, "VALIDATED")
    note = portal.get("documents", note["id"])
    assert (note["status"], note["totalPayments"], note["remaining"], note["reference"]) == (
        "VALIDATED",
        60,
        0,
        "A-000001",
    )
    usage = portal.list("transaction_usages", {}, parent=("documents", target["id"]))[0]
    assert (usage["type"], usage["creditNoteId"], usage["transaction"], usage["amount"]) == (
        "CREDIT_NOTE",
        note["id"],
        None,
        60,
    )
    big = invoice(portal, customer_id, subtype="CREDIT_NOTE", invoiceId=target["id"], price=500)  # 600 > 180
    assert portal.get("documents", target["id"])["status"] == "PAID"
    assert portal.get("documents", big["id"])["remaining"] == 420  # unapplied credit
    free = invoice(portal, customer_id, subtype="CREDIT_NOTE")
    assert (free["invoiceId"], free["totalPayments"], free["remaining"]) == (None, 0, 120)
    assert portal.get("customers", customer_id)["dueAmount"] == 0


def test_due_amount_and_documents_count_follow_the_documents():
    portal, _, customer_id = make_portal()
    invoice(portal, customer_id, status="DRAFT")  # drafts count for nothing
    open_one = invoice(portal, customer_id)  # 120 due
    invoice(portal, customer_id, type="QUOTATION")  # counted, never due
    invoice(portal, customer_id, subtype="PROFORMA")  # counted, never due
    replaced = invoice(portal, customer_id, price=10)
    portal.new_version(replaced["id"], {"title": "v2"})  # CANCELED not counted; the new version is (12 due)
    customer = portal.get("customers", customer_id)
    assert (customer["documentsCount"], customer["dueAmount"]) == (4, 132)
    portal.pay_document(open_one["id"], {"amount": 20})
    assert portal.get("customers", customer_id)["dueAmount"] == 112


def test_late_and_active_customers_by_the_clock():
    portal, clock, late_id = make_portal()
    active_id = portal.create("customers", {"name": "Active"})["id"]
    quiet_id = portal.create("customers", {"name": "Quiet"})["id"]
    invoice(portal, late_id, dueDate="2026-03-09T00:00:00Z")
    invoice(portal, active_id, dueDate="2026-03-10T00:00:00Z")  # due today: not late
    invoice(portal, quiet_id, status="DRAFT", dueDate="2026-01-01T00:00:00Z")
    late = {c["id"] for c in portal.list("customers", {"documentStatus": "LATE"})}
    active = {c["id"] for c in portal.list("customers", {"documentStatus": "ACTIVE"})}
    assert (late, active) == ({late_id}, {active_id})
    clock.advance(timedelta(days=1))
    assert {c["id"] for c in portal.list("customers", {"documentStatus": "LATE"})} == {late_id, active_id}
    assert portal.list("customers", {"documentStatus": "ACTIVE"}) == []
    for document in portal.list("documents", {"customerId": active_id}):
        portal.pay_document(document["id"], None)
    assert {c["id"] for c in portal.list("customers", {"documentStatus": "LATE"})} == {late_id}
    assert portal.list("customers", {"documentStatus": "ACTIVE"}) == []  # PAID is not VALIDATED


def test_a_refund_of_a_payment_is_a_negative_transaction_and_the_payments_refunded_amount():
    portal, _, customer_id = make_portal()
    document = invoice(portal, customer_id)  # 120 incl. VAT
    payment = portal.pay_document(document["id"], {"amount": 200})  # 80 over
    refund = portal.refund(payment["id"], 50, "2026-03-12T00:00:00Z")
    assert (refund["amount"], refund["customerId"], refund["documentId"], refund["date"]) == (
        -50, customer_id, None, "2026-03-12T00:00:00Z"
    )
    refunded = portal.get("transactions", payment["id"])
    assert (refunded["refundedAmount"], refunded["usedAmount"]) == (50, 120)
    with pytest.raises(ApiError):  # 30 unused left: no more than that can be paid back
        portal.refund(payment["id"], 31)
    with pytest.raises(ApiError):  # a refund is not a payment that can be refunded
        portal.refund(refund["id"], 1)


def test_a_refund_of_a_credit_note_names_it_and_lowers_what_is_left_of_it():
    portal, _, customer_id = make_portal()
    credit_note = invoice(portal, customer_id, subtype="CREDIT_NOTE", type="INVOICE")  # 120 incl. VAT
    refund = portal.refund(credit_note["id"], 100)
    assert (refund["amount"], refund["documentId"]) == (-100, credit_note["id"])
    after = portal.get("documents", credit_note["id"])
    assert (after["totalPayments"], after["remaining"]) == (100, 20)
    with pytest.raises(ApiError):
        portal.refund(credit_note["id"], 21)
    assert portal.get("customers", customer_id)["dueAmount"] == 0  # a credit note is never owed


def test_the_generator_refunds_only_when_the_profile_says_so():
    def refunds(mode: str) -> list[dict]:
        config = SandboxConfig(seed=29, scale=100, contract=replace(ContractProfile.default(), refunds=mode))
        portal = Portal(Clock(fixed=NOW), config)
        generate(portal, 29, 100)
        return [t for t in portal.snapshot("transactions") if t["amount"] < 0]

    assert refunds("none") == []
    served = refunds("served")
    assert any(t["documentId"] for t in served) and any(t["documentId"] is None for t in served)
    with pytest.raises(ValueError):
        ContractProfile(refunds="sometimes")
