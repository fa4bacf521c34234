"""Every event of the spec's Events table (plus customer.deleted) fires with the payload GET returns."""

from datetime import datetime, timezone

import pytest

from invoicing_sandbox.clock import Clock
from invoicing_sandbox.config import SandboxConfig
from invoicing_sandbox.domain import Portal
from invoicing_sandbox.domain.catalog import EVENT_NAMES
from invoicing_sandbox.domain.pdf import make_pdf
from invoicing_sandbox.errors import ApiError


def test_every_event_fires_with_the_resource_as_get_returns_it():
    portal = Portal(Clock(fixed=datetime(2026, 3, 10, 9, tzinfo=timezone.utc)), SandboxConfig())
    portal.update_portal({"referenceAssignmentMethod": "CHRONOLOGICAL"})
    seen: dict[str, list] = {}
    portal.listeners.append(lambda name, data: seen.setdefault(name, []).append(data))

    item = portal.create("items", {"name": "Stylo", "price": 2})
    portal.update("items", item["id"], {"price": 3})
    customer = portal.create("customers", {"name": "Dupont", "email": "a@b.fr"})
    portal.update("customers", customer["id"], {"phone": "0102030405"})
    invoice = portal.create("documents", {"customerId": customer["id"], "lines": [{"itemId": item["id"]}]})
    portal.validate_document(invoice["id"])
    portal.pay_document(invoice["id"], None)
    quotation = portal.create("documents", {"customerId": customer["id"], "type": "QUOTATION",
                                            "status": "VALIDATED", "lines": [{"itemId": item["id"]}]})
    portal.accept_quotation(quotation["id"])
    refused = portal.create("documents", {"customerId": customer["id"], "type": "QUOTATION",
                                          "status": "VALIDATED", "lines": [{"itemId": item["id"]}]})
    portal.refuse_quotation(refused["id"])
    draft = portal.create("documents", {"customerId": customer["id"], "lines": [{"itemId": item["id"]}]})
    portal.delete("documents", draft["id"])
    lone = portal.create("customers", {"name": "Seul"})
    portal.delete("customers", lone["id"])
    supplier = portal.create("suppliers", {"name": "Fournisseur", "legalIdentifier": "123"})
    portal.update("suppliers", supplier["id"], {"tags": ["urgent"]})
    key = portal.upload_asset("f.pdf", "application/pdf", make_pdf(["x"]))["assetKey"]
    document = portal.create_supplier_document({"fileKey": key, "supplierId": supplier["id"]})
    portal.change_supplier_document_status(document["id"], {"action": "dispute"})
    disputed = portal.get("supplier_documents", document["id"])
    portal.tag_supplier_document(document["id"], ["litige"])
    portal.tag_supplier_document(document["id"], ["litige"])  # no change: no event
    other = portal.create("suppliers", {"name": "Autre", "legalIdentifier": "456"})
    portal.delete("suppliers", other["id"])

    assert set(seen) == set(EVENT_NAMES)
    assert seen["supplier-document.updated"] == [portal.get("supplier_documents", document["id"])]
    assert seen["product.updated"][-1] == portal.get("items", item["id"])
    assert seen["invoice.paid"][-1] == portal.get("documents", invoice["id"])
    assert seen["invoice.validated"][0]["status"] == "VALIDATED"
    assert seen["quotation.accepted"][-1] == portal.get("documents", quotation["id"])
    assert seen["quotation.refused"][-1] == portal.get("documents", refused["id"])
    assert seen["document.deleted"][-1]["id"] == draft["id"]
    assert seen["customer.deleted"] == [{"customerId": lone["id"]}]
    assert seen["customer.updated"][-1] == portal.get("customers", lone["id"])
    assert seen["supplier.updated"][-1] == portal.get("suppliers", supplier["id"])
    assert seen["supplier.deleted"] == [{"supplierId": other["id"]}]
    change = seen["supplier-document.status-change"][-1]
    assert change == {"supplierDocument": disputed,
                      "previousStatus": "approved"}
    assert seen["supplier-document.created"][-1]["status"] == "approved"


def test_webhook_subscriptions_and_delivery_failures():
    portal = Portal(Clock(fixed=datetime(2026, 3, 10, 9, tzinfo=timezone.utc)), SandboxConfig())
    webhook = portal.create("webhooks", {"url": "http://127.0.0.1:9/hook", "events": ["invoice.paid"]})
    assert (webhook["enabled"], webhook["failures"], webhook["events"]) == (True, 0, ["invoice.paid"])
    assert [w["id"] for w in portal.list("webhooks", {})] == [webhook["id"]]
    for _ in range(100):
        portal.webhook_delivery_result(webhook["id"], delivered=False)
    assert portal.get("webhooks", webhook["id"])["enabled"] is False  # api-facts: disabled after 100 failures
    assert portal.delete("webhooks", webhook["id"]) == {}
    assert portal.list("webhooks", {}) == []
    for body in ({"url": "ftp://x", "events": ["invoice.paid"]}, {"url": "http://x", "events": ["nope"]},
                 {"url": "http://x", "events": []}, {"events": ["invoice.paid"]}):
        with pytest.raises(ApiError) as error:
            portal.create("webhooks", body)
        assert error.value.status == 400
