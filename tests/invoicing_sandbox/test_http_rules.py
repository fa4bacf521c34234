"""The spec's document state table and errors table, row by row, over HTTP."""

from __future__ import annotations

import base64
import re
from datetime import timedelta

import pytest

from invoicing_sandbox.auth import INSUFFICIENT_SCOPE
from tests.invoicing_sandbox.conftest import (
    client_for,
    created,
    new_customer,
    new_document,
    new_item,
    new_supplier,
    new_supplier_document,
    small_config,
)


@pytest.fixture(scope="module")
def parties(api):
    """A customer and a 100 EUR + 20 % VAT item created for this module."""
    return new_customer(api, name="Client des règles"), new_item(api, name="Prestation des règles")


def status_of(api, document: dict) -> str:
    return api.get(f"/documents/{document['id']}").json()["data"]["status"]


def assert_denied(response, current_status: str) -> None:
    assert response.status_code == 400, response.text
    body = response.json()
    assert body["code"] == 400 and current_status in body["error"]


# ---- state table ------------------------------------------------------------------------------------
def test_new_documents_are_draft_or_validated(api, parties):
    draft = new_document(api, *parties)
    assert draft["status"] == "DRAFT" and re.fullmatch(r"RT\d{6}", draft["reference"])
    validated = new_document(api, *parties, status="VALIDATED")
    assert validated["status"] == "VALIDATED" and re.fullmatch(
        r"F-\d{6}|F\d{4}-\d{5}", validated["reference"]
    )
    refused = api.post(
        "/documents",
        json={"customerId": parties[0]["id"], "status": "PAID", "lines": [{"itemId": parties[1]["id"]}]},
    )
    assert refused.status_code == 400


def test_draft_validate_assigns_the_final_reference(api, parties):
    draft = new_document(api, *parties)
    validated = created(api.post(f"/documents/{draft['id']}/validate"), 200)
    assert validated["status"] == "VALIDATED" and validated["reference"] != draft["reference"]
    assert_denied(api.post(f"/documents/{draft['id']}/validate"), "VALIDATED")


def test_validate_without_reference_method_is_400(make_sandbox):
    server = make_sandbox(small_config(), generate=False)  # a new portal has not chosen a method
    with client_for(server) as client:
        assert client.get("/portal").json()["data"]["referenceAssignmentMethod"] is None
        draft = new_document(client, new_customer(client), new_item(client))
        response = client.post(f"/documents/{draft['id']}/validate")
        assert response.status_code == 400
        assert "reference assignment method" in response.json()["error"]
        assert status_of(client, draft) == "DRAFT"
        client.patch("/portal", json={"referenceAssignmentMethod": "YEARLY"})
        assert created(client.post(f"/documents/{draft['id']}/validate"), 200)["status"] == "VALIDATED"


def test_draft_delete_removes_it_and_other_statuses_are_denied(api, parties):
    draft = new_document(api, *parties)
    assert api.delete(f"/documents/{draft['id']}").status_code == 200
    assert api.get(f"/documents/{draft['id']}").status_code == 404
    validated = new_document(api, *parties, status="VALIDATED")
    assert_denied(api.delete(f"/documents/{validated['id']}"), "VALIDATED")
    assert status_of(api, validated) == "VALIDATED"


def test_validated_quotation_accept_and_refuse(api, parties):
    accepted = new_document(api, *parties, type="QUOTATION", status="VALIDATED")
    assert created(api.post(f"/documents/{accepted['id']}/accept-quotation"), 200)["status"] == "ACCEPTED"
    refused = new_document(api, *parties, type="QUOTATION", status="VALIDATED")
    assert created(api.post(f"/documents/{refused['id']}/refuse-quotation"), 200)["status"] == "REFUSED"


@pytest.mark.parametrize("action", ["accept-quotation", "refuse-quotation"])
def test_accept_or_refuse_outside_validated_leaves_the_quotation_unchanged(api, parties, action):
    draft = new_document(api, *parties, type="QUOTATION")
    assert_denied(api.post(f"/documents/{draft['id']}/{action}"), "DRAFT")
    assert status_of(api, draft) == "DRAFT"
    for settled_by, settled in (("accept-quotation", "ACCEPTED"), ("refuse-quotation", "REFUSED")):
        quotation = new_document(api, *parties, type="QUOTATION", status="VALIDATED")
        api.post(f"/documents/{quotation['id']}/{settled_by}")
        assert_denied(api.post(f"/documents/{quotation['id']}/{action}"), settled)
        assert status_of(api, quotation) == settled


def test_accepted_quotation_converts_to_a_new_draft_invoice(api, parties):
    quotation = new_document(api, *parties, type="QUOTATION", status="VALIDATED")
    api.post(f"/documents/{quotation['id']}/accept-quotation")
    invoice = created(api.post(f"/documents/{quotation['id']}/convert/invoice"), 200)
    assert invoice["id"] != quotation["id"]
    assert (invoice["type"], invoice["status"]) == ("INVOICE", "DRAFT")
    assert invoice["amountVatNet"] == quotation["amountVatNet"] == 120
    assert status_of(api, quotation) == "CONVERTED"
    not_accepted = new_document(api, *parties, type="QUOTATION", status="VALIDATED")
    assert_denied(api.post(f"/documents/{not_accepted['id']}/convert/invoice"), "VALIDATED")


def test_payment_marks_paid_only_when_fully_covered(api, parties):
    invoice = new_document(api, *parties, status="VALIDATED", quantity=2)  # 240 incl. VAT
    partial = created(
        api.post(f"/documents/{invoice['id']}/payment", json={"amount": 100, "method": "CHECK"}), 200
    )
    assert partial["amount"] == 100 and partial["method"] == "CHECK"
    after_partial = api.get(f"/documents/{invoice['id']}").json()["data"]
    assert (after_partial["status"], after_partial["totalPayments"], after_partial["remaining"]) == (
        "VALIDATED",
        100,
        140,
    )
    rest = created(api.post(f"/documents/{invoice['id']}/payment"), 200)  # rule 1: the remaining amount
    assert rest["amount"] == 140 and rest["method"] == "CREDIT_CARD"  # rule 2
    paid = api.get(f"/documents/{invoice['id']}").json()["data"]
    assert (paid["status"], paid["remaining"]) == ("PAID", 0)  # rule 4
    assert {
        t["id"]
        for t in api.get(f"/customers/{parties[0]['id']}/transactions", params={"limit": 100}).json()["data"]
    } >= {partial["id"], rest["id"]}


def test_overpayment_is_used_on_another_invoice(api, parties):
    first = new_document(api, *parties, status="VALIDATED")  # 120
    second = new_document(api, *parties, status="VALIDATED")  # 120
    payment = created(
        api.post(f"/documents/{first['id']}/payment", json={"amount": 200, "date": "2026-01-05T00:00:00Z"}),
        200,
    )
    assert payment["usedAmount"] == 120 and payment["date"] == "2026-01-05T00:00:00Z"  # rule 3
    reused = created(
        api.post(f"/documents/{second['id']}/payment", json={"transactionId": payment["id"]}), 200
    )
    assert reused["id"] == payment["id"] and reused["usedAmount"] == 200
    second_now = api.get(f"/documents/{second['id']}").json()["data"]
    assert (second_now["totalPayments"], second_now["remaining"], second_now["status"]) == (
        80,
        40,
        "VALIDATED",
    )
    usages = api.get(f"/documents/{second['id']}/transaction-usages").json()["data"]
    assert [(u["transactionId"], u["amount"]) for u in usages] == [(payment["id"], 80)]


# ---- errors table -----------------------------------------------------------------------------------
def test_insufficient_scope_is_403_with_the_spec_message(read_api, parties):
    response = read_api.post(f"/documents/{'0' * 24}/validate")
    assert response.status_code == 403
    assert response.json()["error"] == INSUFFICIENT_SCOPE


def test_amount_notice_needs_a_custom_vat_exemption(api, parties):
    base = {
        "customerId": parties[0]["id"],
        "lines": [{"itemId": parties[1]["id"]}],
        "amountNotice": "Exonéré",
    }
    for exemption in (None, "FRANCHISE_EN_BASE"):
        body = dict(base, **({"vatExemptionType": exemption} if exemption else {}))
        response = api.post("/documents", json=body)
        assert response.status_code == 400 and "amountNotice" in response.json()["error"]
    custom = created(api.post("/documents", json=dict(base, vatExemptionType="CUSTOM_EXEMPTION")), 201)
    assert custom["amountNotice"] == "Exonéré"


def test_supplier_status_change_not_allowed_is_400(api):
    document = new_supplier_document(api, new_supplier(api, "FR-RULES-STATUS"))
    assert_denied(
        api.patch(f"/supplier-documents/{document['id']}/status", json={"action": "approve"}), "approved"
    )
    paid = created(
        api.patch(f"/supplier-documents/{document['id']}/status", json={"action": "declarePayment"}), 200
    )
    assert paid["status"] == "paid"
    assert_denied(
        api.patch(f"/supplier-documents/{document['id']}/status", json={"action": "refuse"}), "paid"
    )
    events = api.get(f"/supplier-documents/{document['id']}/events").json()["data"]
    assert [e["status"] for e in events] == ["paid", "approved"]  # most recent first


def test_supplier_document_pdf_not_yet_available_is_404(make_sandbox, frozen_clock):
    server = make_sandbox(small_config(), clock=frozen_clock, generate=False)
    with client_for(server) as client:
        supplier = new_supplier(client, "FR-RULES-PDF")
        # a document received by e-mail (the application's path): its PDF is processed a few minutes later
        received = server.portal.receive_supplier_document(
            supplier["id"], {"reference": "EDF-0042", "amount": 80}
        )
        pending = client.get(f"/supplier-documents/{received['id']}/pdf")
        assert pending.status_code == 404
        assert pending.json()["details"][0]["path"] == f"/api/v2/supplier-documents/{received['id']}/pdf"
        frozen_clock.advance(timedelta(minutes=5))
        ready = created(client.get(f"/supplier-documents/{received['id']}/pdf"), 200)
        assert base64.b64decode(ready["pdfB64"]).startswith(b"%PDF")


def test_supplier_legal_identifier_is_unique_and_immutable(api):
    supplier = new_supplier(api, "FR-RULES-UNIQUE")
    duplicate = api.post("/suppliers", json={"name": "Copie", "legalIdentifier": "FR-RULES-UNIQUE"})
    assert duplicate.status_code == 409 and duplicate.json()["code"] == 409
    changed = api.patch(f"/suppliers/{supplier['id']}", json={"legalIdentifier": "FR-OTHER"})
    assert changed.status_code == 400


def test_supplier_with_documents_cannot_be_deleted(api):
    supplier = new_supplier(api, "FR-RULES-DELETE")
    new_supplier_document(api, supplier)
    response = api.delete(f"/suppliers/{supplier['id']}")
    assert response.status_code == 409 and response.json()["code"] == 409
    assert api.get(f"/suppliers/{supplier['id']}").status_code == 200
