"""Suppliers and supplier documents: uniqueness, immutability, deletion, uploads, statuses, events, PDF."""

import base64
from datetime import datetime, timedelta, timezone

import pytest

from invoicing_sandbox.clock import Clock
from invoicing_sandbox.config import SandboxConfig
from invoicing_sandbox.domain import Portal
from invoicing_sandbox.domain.pdf import make_pdf
from invoicing_sandbox.errors import ApiError

PDF = make_pdf(["Facture"])


def make_portal():
    clock = Clock(fixed=datetime(2026, 3, 10, 9, 0, tzinfo=timezone.utc))
    portal = Portal(clock, SandboxConfig())
    supplier = portal.create(
        "suppliers", {"name": "Bureau Vallée", "legalIdentifier": "44306184100047", "tags": ["fournitures"]}
    )
    return portal, clock, supplier


def upload_and_create(portal, supplier_id, **extra):
    key = portal.upload_asset("facture.pdf", "application/pdf", PDF)["assetKey"]
    return portal.create_supplier_document(
        dict({"fileKey": key, "supplierId": supplier_id, "amount": 100, "vat": 20}, **extra)
    )


def status_error(call, *args):
    with pytest.raises(ApiError) as error:
        call(*args)
    return error.value


def test_legal_identifier_is_unique_and_immutable():
    portal, _, supplier = make_portal()
    assert (
        status_error(
            portal.create, "suppliers", {"name": "Autre", "legalIdentifier": "44306184100047"}
        ).status
        == 409
    )
    error = status_error(portal.update, "suppliers", supplier["id"], {"legalIdentifier": "1"})
    assert error.status == 400
    same = portal.update(
        "suppliers", supplier["id"], {"legalIdentifier": "44306184100047", "tags": ["a", "b"]}
    )
    assert same["tags"] == ["a", "b"]
    assert status_error(portal.create, "suppliers", {"name": "Sans id"}).status == 400


def test_supplier_delete_conflicts_while_documents_are_attached():
    portal, _, supplier = make_portal()
    upload_and_create(portal, supplier["id"])
    assert status_error(portal.delete, "suppliers", supplier["id"]).status == 409
    lone = portal.create("suppliers", {"name": "Seul", "legalIdentifier": "1"})
    events = []
    portal.listeners.append(lambda name, data: events.append((name, data)))
    assert portal.delete("suppliers", lone["id"]) == {}
    assert events == [("supplier.deleted", {"supplierId": lone["id"]})]
    assert status_error(portal.get, "suppliers", lone["id"]).status == 404
    assert portal.create("suppliers", {"name": "Re", "legalIdentifier": "1"})["legalIdentifier"] == "1"


def test_upload_accepts_pdf_only_and_creation_is_approved_manual_import_in_euros():
    portal, _, supplier = make_portal()
    assert status_error(portal.upload_asset, "x.png", "image/png", b"\x89PNG....").status == 400
    document = upload_and_create(portal, supplier["id"], reference="FA-1", dueDate="2026-04-10T00:00:00Z")
    assert (document["status"], document["origin"], document["currency"]) == (
        "approved",
        "manualImport",
        "EUR",
    )
    assert (document["amount"], document["vat"], document["amountVat"]) == (100, 20, 120)
    assert base64.b64decode(portal.supplier_document_pdf(document["id"])["pdfB64"]) == PDF
    assert (
        status_error(
            portal.create_supplier_document, {"fileKey": document["fileKey"], "supplierId": supplier["id"]}
        ).status
        == 400
    )  # used
    key = portal.upload_asset("f.pdf", "application/pdf", PDF)["assetKey"]
    assert (
        status_error(portal.create_supplier_document, {"fileKey": key, "supplierId": "0" * 24}).status == 400
    )
    assert (
        status_error(
            portal.create_supplier_document, {"fileKey": "nope", "supplierId": supplier["id"]}
        ).status
        == 400
    )


ALLOWED = {
    "toApprove": {"approve": "approved", "refuse": "refused", "dispute": "disputed"},
    "approved": {"refuse": "refused", "dispute": "disputed", "declarePayment": "paid"},
    "disputed": {"approve": "approved", "refuse": "refused"},
    "refused": {"approve": "approved"},
    "paid": {},
}
PATHS = {
    "toApprove": [],
    "approved": ["approve"],
    "disputed": ["dispute"],
    "refused": ["refuse"],
    "paid": ["approve", "declarePayment"],
}


@pytest.mark.parametrize("start", list(ALLOWED))
@pytest.mark.parametrize("action", ["approve", "refuse", "dispute", "declarePayment"])
def test_status_actions_follow_the_transition_table(start, action):
    portal, _, supplier = make_portal()
    document = portal.receive_supplier_document(supplier["id"], {"amount": 10})
    assert (document["status"], document["origin"]) == ("toApprove", "email")
    for move in PATHS[start]:
        portal.change_supplier_document_status(document["id"], {"action": move})
    assert portal.get("supplier_documents", document["id"])["status"] == start
    target = ALLOWED[start].get(action)
    if target is None:
        error = status_error(portal.change_supplier_document_status, document["id"], {"action": action})
        assert error.status == 400 and start in error.message
        assert portal.get("supplier_documents", document["id"])["status"] == start
    else:
        events = []
        portal.listeners.append(lambda name, data: events.append((name, data)))
        changed = portal.change_supplier_document_status(document["id"], {"action": action})
        assert changed["status"] == target
        assert events == [
            ("supplier-document.status-change", {"supplierDocument": changed, "previousStatus": start})
        ]
        history = portal.supplier_document_events(document["id"])
        assert (history[0]["action"], history[0]["previousStatus"], history[0]["status"]) == (
            action,
            start,
            target,
        )
        assert history[-1]["action"] == "create" and len(history) == len(PATHS[start]) + 2


def test_declare_payment_records_the_payment_date():
    portal, _, supplier = make_portal()
    document = upload_and_create(portal, supplier["id"])
    paid = portal.change_supplier_document_status(
        document["id"], {"action": "declarePayment", "paymentDate": "2026-03-01T00:00:00Z"}
    )
    assert (paid["status"], paid["paymentDate"]) == ("paid", "2026-03-01T00:00:00Z")
    assert (
        status_error(portal.change_supplier_document_status, document["id"], {"action": "pay"}).status == 400
    )


def test_pdf_of_an_emailed_document_is_404_until_processed():
    portal, clock, supplier = make_portal()
    document = portal.receive_supplier_document(supplier["id"], {"reference": "FA-9"})
    assert status_error(portal.supplier_document_pdf, document["id"]).status == 404
    clock.advance(timedelta(minutes=5))
    assert base64.b64decode(portal.supplier_document_pdf(document["id"])["pdfB64"]).startswith(b"%PDF-")


def test_supplier_events_fire_for_api_and_application_changes():
    portal, _, supplier = make_portal()
    events = []
    portal.listeners.append(lambda name, data: events.append(name))
    upload_and_create(portal, supplier["id"])
    portal.receive_supplier_document(supplier["id"], {})
    portal.update("suppliers", supplier["id"], {"tags": ["fournitures", "urgent"]})
    portal.update("suppliers", supplier["id"], {"tags": ["fournitures", "urgent"]})  # nothing visible changed
    assert events == ["supplier-document.created", "supplier-document.created", "supplier.updated"]
    all_events = portal.snapshot("supplier_document_events")
    assert len(all_events) == 2 and {e["origin"] for e in all_events} == {"api", "email"}
