"""The spec's document state table row by row, references, versions, legal notices and events."""

from datetime import datetime, timezone

import pytest

from invoicing_sandbox.clock import Clock
from invoicing_sandbox.config import SandboxConfig
from invoicing_sandbox.domain import Portal
from invoicing_sandbox.errors import ApiError


def make_portal(method="CHRONOLOGICAL"):
    clock = Clock(fixed=datetime(2026, 3, 10, 9, 0, tzinfo=timezone.utc))
    portal = Portal(clock, SandboxConfig())
    if method:
        portal.update_portal({"referenceAssignmentMethod": method})
    customer = portal.create("customers", {"name": "Dupont SARL", "email": "compta@dupont.fr"})
    return portal, clock, customer["id"]


def new_document(portal, customer_id, **extra):
    body = {"customerId": customer_id, "lines": [{"name": "Conseil", "price": 100, "quantity": 1, "vat": 20}]}
    body.update(extra)
    return portal.create("documents", body)


def refused(call, *args, **kwargs):
    with pytest.raises(ApiError) as error:
        call(*args, **kwargs)
    return error.value


def test_creation_yields_draft_or_validated_as_requested():
    portal, _, customer_id = make_portal()
    assert new_document(portal, customer_id)["status"] == "DRAFT"
    validated = new_document(portal, customer_id, status="VALIDATED")
    assert (validated["status"], validated["reference"]) == ("VALIDATED", "F-000001")
    error = refused(new_document, portal, customer_id, status="PAID")
    assert error.status == 400


def test_draft_validate_needs_a_reference_assignment_method():
    portal, _, customer_id = make_portal(method=None)
    draft = new_document(portal, customer_id)
    error = refused(portal.validate_document, draft["id"])
    assert error.status == 400 and "reference assignment method" in error.message
    assert portal.get("documents", draft["id"])["status"] == "DRAFT"
    assert refused(new_document, portal, customer_id, status="VALIDATED").status == 400
    portal.update_portal({"referenceAssignmentMethod": "CHRONOLOGICAL"})
    assert portal.validate_document(draft["id"])["status"] == "VALIDATED"


def test_validating_twice_is_a_400_naming_the_status():
    portal, _, customer_id = make_portal()
    document = new_document(portal, customer_id, status="VALIDATED")
    error = refused(portal.validate_document, document["id"])
    assert error.status == 400 and "VALIDATED" in error.message


def test_draft_delete_and_denied_delete_of_other_statuses():
    portal, _, customer_id = make_portal()
    draft = new_document(portal, customer_id)
    assert portal.delete("documents", draft["id"]) is None
    assert refused(portal.get, "documents", draft["id"]).status == 404
    validated = new_document(portal, customer_id, status="VALIDATED")
    error = refused(portal.delete, "documents", validated["id"])
    assert error.status == 400 and "VALIDATED" in error.message
    assert portal.get("documents", validated["id"])["status"] == "VALIDATED"


@pytest.mark.parametrize(
    "answer, status, event",
    [
        ("accept_quotation", "ACCEPTED", "quotation.accepted"),
        ("refuse_quotation", "REFUSED", "quotation.refused"),
    ],
)
def test_validated_quotation_is_accepted_or_refused(answer, status, event):
    portal, _, customer_id = make_portal()
    quotation = new_document(portal, customer_id, type="QUOTATION", status="VALIDATED")
    assert quotation["reference"] == "D-000001"
    events = []
    portal.listeners.append(lambda name, data: events.append((name, data["status"])))
    assert getattr(portal, answer)(quotation["id"])["status"] == status
    assert (event, status) in events and ("document.updated", status) in events


@pytest.mark.parametrize("answer", ["accept_quotation", "refuse_quotation"])
@pytest.mark.parametrize("state", ["DRAFT", "ACCEPTED", "REFUSED"])
def test_answering_a_quotation_not_validated_leaves_it_unchanged(answer, state):
    portal, _, customer_id = make_portal()
    quotation = new_document(portal, customer_id, type="QUOTATION")
    if state != "DRAFT":
        portal.validate_document(quotation["id"])
        getattr(portal, "accept_quotation" if state == "ACCEPTED" else "refuse_quotation")(quotation["id"])
    error = refused(getattr(portal, answer), quotation["id"])
    assert error.status == 400 and state in error.message
    assert portal.get("documents", quotation["id"])["status"] == state


def test_invoices_cannot_be_accepted():
    portal, _, customer_id = make_portal()
    invoice = new_document(portal, customer_id, status="VALIDATED")
    assert refused(portal.accept_quotation, invoice["id"]).status == 400


def test_accepted_quotation_converts_to_a_new_draft_invoice():
    portal, _, customer_id = make_portal()
    quotation = new_document(
        portal, customer_id, type="QUOTATION", status="VALIDATED", discount={"type": "PERCENT", "amount": 10}
    )
    assert refused(portal.convert_to_invoice, quotation["id"]).status == 400  # VALIDATED, not ACCEPTED
    portal.accept_quotation(quotation["id"])
    invoice = portal.convert_to_invoice(quotation["id"])
    assert (invoice["type"], invoice["status"], invoice["customerId"]) == ("INVOICE", "DRAFT", customer_id)
    assert invoice["id"] != quotation["id"] and invoice["reference"].startswith("RT")
    assert (invoice["amountNet"], invoice["amountVatNet"]) == (90, 108)
    assert portal.get("documents", quotation["id"])["status"] == "CONVERTED"
    assert refused(portal.convert_to_invoice, quotation["id"]).status == 400


def test_chronological_references_have_one_counter_per_prefix():
    portal, _, customer_id = make_portal()
    references = [
        new_document(portal, customer_id, status="VALIDATED", **extra)["reference"]
        for extra in (
            {},
            {},
            {"type": "QUOTATION"},
            {"subtype": "PROFORMA"},
            {"subtype": "DEPOSIT"},
            {"subtype": "CREDIT_NOTE"},
            {},
        )
    ]
    assert references == [
        "F-000001",
        "F-000002",
        "D-000001",
        "PF-000001",
        "AC-000001",
        "A-000001",
        "F-000003",
    ]
    drafts = [new_document(portal, customer_id)["reference"] for _ in range(2)]
    assert drafts == ["RT000001", "RT000002"]


def test_yearly_references_restart_with_the_emit_year():
    portal, _, customer_id = make_portal("YEARLY")
    refs = [
        new_document(portal, customer_id, status="VALIDATED", emitDate=day)["reference"]
        for day in (
            "2025-12-30T00:00:00Z",
            "2026-01-02T00:00:00Z",
            "2025-12-31T00:00:00Z",
            "2026-02-01T00:00:00Z",
        )
    ]
    assert refs == ["F2025-00001", "F2026-00001", "F2025-00002", "F2026-00002"]


def test_new_version_cancels_the_old_one_and_keeps_the_reference():
    portal, _, customer_id = make_portal()
    original = new_document(portal, customer_id, status="VALIDATED")
    version = portal.new_version(
        original["id"], {"lines": [{"name": "Conseil", "price": 100, "quantity": 2, "vat": 20}]}
    )
    old = portal.get("documents", original["id"])
    assert (old["status"], old["nextDoc"]) == ("CANCELED", version["id"])
    assert (version["version"], version["prevDoc"], version["reference"]) == (
        "1.1",
        original["id"],
        "F-000001",
    )
    assert (version["status"], version["amountVatNet"]) == ("VALIDATED", 240)
    portal.pay_document(version["id"], {"amount": 10})
    assert refused(portal.new_version, version["id"], {"title": "x"}).status == 400  # has a usage
    assert refused(portal.new_version, original["id"], {"title": "x"}).status == 400  # CANCELED
    customer = portal.get("customers", customer_id)
    assert customer["documentsCount"] == 1 and customer["dueAmount"] == 230


@pytest.mark.parametrize(
    "extra, notice",
    [
        ({"vatExemptionType": "FRANCHISE_EN_BASE"}, "TVA non applicable, art. 293 B du CGI"),
        ({"vatExemptionType": "CUSTOM_EXEMPTION", "amountNotice": "Exonéré"}, "Exonéré"),
        ({"vatExemptionType": "CUSTOM_APPLICATION", "amountNotice": "Art. X"}, "Art. X"),
    ],
)
def test_vat_exemption_sets_the_legal_notice(extra, notice):
    portal, _, customer_id = make_portal()
    document = new_document(portal, customer_id, **extra)
    assert (document["vatExemptionType"], document["amountNotice"]) == (extra["vatExemptionType"], notice)


@pytest.mark.parametrize(
    "extra",
    [
        {"amountNotice": "Exonéré"},
        {"amountNotice": "Exonéré", "vatExemptionType": "FRANCHISE_EN_BASE"},
        {"vatExemptionType": "NOT_A_TYPE"},
    ],
)
def test_amount_notice_without_a_custom_exemption_is_400(extra):
    portal, _, customer_id = make_portal()
    assert refused(new_document, portal, customer_id, **extra).status == 400


def test_trade_name_defaults_to_the_portal_and_can_be_overridden():
    portal, _, customer_id = make_portal()
    portal.update_portal({"enterprise": {"tradeName": "Chez Martin"}})
    assert new_document(portal, customer_id)["from"]["tradeName"] == "Chez Martin"
    assert (
        new_document(portal, customer_id, **{"from": {"tradeName": "Martin Conseil"}})["from"]["tradeName"]
        == "Martin Conseil"
    )


def test_other_type_unknown_customer_and_deleted_customer_are_400():
    portal, _, customer_id = make_portal()
    assert refused(new_document, portal, customer_id, type="OTHER").status == 400
    assert refused(new_document, portal, "a" * 24).status == 400
    lone = portal.create("customers", {"name": "Parti"})
    portal.delete("customers", lone["id"])
    assert refused(new_document, portal, lone["id"]).status == 400


def test_events_of_an_invoice_life():
    portal, _, customer_id = make_portal()
    events = []
    portal.listeners.append(lambda name, data: events.append(name))
    draft = new_document(portal, customer_id)
    portal.validate_document(draft["id"])
    portal.pay_document(draft["id"], None)
    assert events == [
        "document.created",
        "document.updated",
        "invoice.validated",
        "customer.updated",
        "document.updated",
        "invoice.paid",
        "customer.updated",
    ]


def test_unknown_and_malformed_ids_are_404():
    portal, _, _ = make_portal()
    for rid in ("0" * 24, "nope", "A" * 24):
        assert refused(portal.get, "documents", rid).status == 404
        assert refused(portal.validate_document, rid).status == 404
