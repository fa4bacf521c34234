"""The strict contract profile over HTTP: every served record holds only fields the contract names, and the
values the contract does not settle (date-only fields, spellings, credit-note sign) take the other legal
answer, while `Portal.snapshot` (the ground truth) keeps the sandbox's own records.

The independent truth is the contract: the field lists below are transcribed from
`docs/invoicing-api-v2.md` ("spec") and `api-facts.md` ("facts"), not from the sandbox.
"""

from __future__ import annotations

import dataclasses
from collections.abc import Iterator
from dataclasses import replace
from datetime import datetime, timedelta, timezone

import httpx
import pytest

from invoicing_sandbox.clock import Clock
from invoicing_sandbox.contract import ContractProfile
from invoicing_sandbox.served import served_event_item, served_record
from invoicing_sandbox.server import SandboxServer
from tests.invoicing_sandbox.conftest import (
    client_for,
    created,
    new_supplier,
    new_supplier_document,
    small_config,
)

# facts: "Common fields of every entity: id, portalId, metadata (...), lastUpdate"
COMMON = {"id", "portalId", "metadata", "lastUpdate"}
CONTRACT_FIELDS = {
    # spec Customer + facts Customer (`deleted: true` on soft-deleted ones)
    "customers": COMMON
    | {"name", "reference", "email", "phone", "mobile", "fax", "siret", "vat", "address", "contacts"}
    | {"delivery", "dueAmount", "documentsCount", "type", "deleted"},
    # spec Item ("a unit field exists") + facts Item
    "items": COMMON | {"name", "description", "reference", "type", "unit", "price", "vat", "buyingPrice"},
    # spec Document + facts Document (outputs, and the input fields that may come back)
    "documents": COMMON
    | {"customerId", "status", "type", "subtype", "reference", "referenceInternal", "title", "messageTop"}
    | {"messageBottom", "emitDate", "to", "from", "lines", "description", "price", "amount", "vat"}
    | {"amountVat", "amountNet", "amountVatNet", "amountNotice", "vatExemptionType", "version", "prevDoc"}
    | {"nextDoc", "totalPayments", "dueDate", "discount", "paymentMethod"},
    # spec Transaction + facts Transaction
    "transactions": COMMON
    | {"customerId", "customerName", "amount", "usedAmount", "refundedAmount", "date", "method"},
    # facts Transaction usage
    "transaction_usages": COMMON
    | {"type", "customerId", "invoiceId", "transaction", "creditNoteId", "amount"},
    # spec Supplier: id, legal name, legalIdentifier, tags
    "suppliers": COMMON | {"name", "legalIdentifier", "tags"},
    # spec Supplier document; "issue date", "due date", "amounts" are named without a spelling: the
    # sandbox's spellings (issueDate, dueDate, amount/vat/amountVat) stand for them
    "supplier_documents": COMMON
    | {"supplierId", "fileKey", "status", "reference", "type", "issueDate", "dueDate", "amount", "vat"}
    | {"amountVat", "currency", "origin", "tags"},
    # spec Webhook subscription: id, target address, subscribed events (sandbox spellings url, events)
    "webhooks": COMMON | {"url", "events"},
}
DOCUMENT_PARTS = {
    "to": {"name"},  # spec: to.name
    "from": {"name", "tradeName"},  # spec: from carries tradeName, distinct from the legal name `name`
    # facts: line fields
    "lines": {"lineType", "itemId", "name", "description", "reference", "price", "quantity", "vat"}
    | {"discount", "buyingPrice"},
}
EMBEDDED_TRANSACTION = CONTRACT_FIELDS["transactions"]
EVENT_ITEM_FIELDS = {"id", "status"}  # spec: "status history (...); item fields are not shown"
PATHS = {
    "customers": "/customers",
    "items": "/items",
    "documents": "/documents",
    "transactions": "/transactions",
    "transaction_usages": "/transaction-usages",
    "suppliers": "/suppliers",
    "supplier_documents": "/supplier-documents",
    "webhooks": "/webhooks",
}
PARIS_MIDNIGHT_TIMES = ("T22:00:00Z", "T23:00:00Z")  # summer time, winter time


@pytest.fixture(scope="module")
def strict_sandbox(module_sandbox_factory) -> SandboxServer:
    """A 60-document sandbox serving the strict profile (module-wide: tests only add records to it)."""
    return module_sandbox_factory(config=small_config(contract=ContractProfile.strict()), real_date=True)


@pytest.fixture(scope="module")
def strict_api(strict_sandbox) -> Iterator[httpx.Client]:
    """A `read write` client of the strict sandbox (its token is renewed per request: strict tokens live
    20 s)."""
    with client_for(strict_sandbox, None) as client:
        client.event_hooks["request"] = [
            lambda request: request.headers.__setitem__("Authorization", f"Bearer {strict_sandbox.token()}")
        ]
        yield client


def every_record(client: httpx.Client, path: str) -> list[dict]:
    """Every record of a list, paged by the server's own page size (50 under strict)."""
    records: list[dict] = []
    while True:
        page = client.get(path, params={"limit": 50, "skip": len(records)}).json()["data"]
        records.extend(page)
        if len(page) < 50:
            return records


@pytest.mark.parametrize("resource", sorted(PATHS))
def test_strict_records_hold_only_contract_fields(strict_sandbox, strict_api, resource):
    if resource == "webhooks":
        created(
            strict_api.post("/webhooks", json={"url": "http://127.0.0.1:9/h", "events": ["product.created"]}),
            200,
        )
    listed = every_record(strict_api, PATHS[resource])
    expected = strict_sandbox.portal.snapshot(resource)
    if resource == "customers":  # strict lists hide soft-deleted customers (every generated portal has one)
        assert strict_sandbox.config.contract.deleted_customers == "hidden"
        expected = [customer for customer in expected if not customer["deleted"]]
    assert len(listed) == len(expected) > 0
    one = created(strict_api.get(f"{PATHS[resource]}/{listed[0]['id']}"), 200)
    for record in [*listed, one]:
        assert set(record) <= CONTRACT_FIELDS[resource], set(record) - CONTRACT_FIELDS[resource]
        if resource == "documents":
            for part, allowed in DOCUMENT_PARTS.items():
                inner = record[part] if isinstance(record[part], list) else [record[part]]
                assert all(set(value) <= allowed for value in inner), (part, inner)
        if resource == "transaction_usages" and record["transaction"] is not None:
            assert set(record["transaction"]) <= EMBEDDED_TRANSACTION


def test_strict_event_items_hold_only_id_and_status(strict_sandbox, strict_api):
    document = strict_sandbox.portal.snapshot("supplier_documents")[0]
    history = created(strict_api.get(f"/supplier-documents/{document['id']}/events"), 200)
    assert history and all(set(item) == EVENT_ITEM_FIELDS for item in history)


def test_strict_dates_are_paris_midnight_and_the_truth_keeps_utc_midnight(strict_sandbox, strict_api):
    checked = 0
    for resource, fields in (
        ("documents", ("emitDate", "dueDate")),
        ("transactions", ("date",)),
        ("supplier_documents", ("issueDate", "dueDate")),
    ):
        truth = {record["id"]: record for record in strict_sandbox.portal.snapshot(resource)}
        for record in every_record(strict_api, PATHS[resource]):
            for name in fields:
                real = truth[record["id"]][name]
                if real is None:
                    continue
                assert real.endswith("T00:00:00Z")  # the ground truth: the real date
                assert record[name].endswith(PARIS_MIDNIGHT_TIMES), record[name]
                served = datetime.fromisoformat(record[name].replace("Z", "+00:00"))
                assert (served + timedelta(hours=3)).date().isoformat() == real[:10]
                checked += 1
    assert checked > 50


def test_strict_keeps_the_sandbox_spellings_and_credit_note_sign(strict_sandbox, strict_api):
    served = {d["id"]: d for d in every_record(strict_api, "/documents")}
    truth = strict_sandbox.portal.snapshot("documents")
    assert {d["subtype"] for d in truth} == {d["subtype"] for d in served.values()}
    credit_notes = [d for d in truth if d["subtype"] == "CREDIT_NOTE"]
    assert credit_notes and all(
        served[d["id"]]["amountVatNet"] == d["amountVatNet"] > 0 for d in credit_notes
    )


def test_negative_supplier_credit_notes_are_served_negative():
    # supplier_credit_note_sign="negative": the spec gives supplier amounts no sign; the records stay positive
    profile = replace(ContractProfile.strict(), supplier_credit_note_sign="negative")
    with SandboxServer(small_config(contract=profile)) as sandbox, client_for(sandbox, None) as api:
        api.event_hooks["request"] = [
            lambda request: request.headers.__setitem__("Authorization", f"Bearer {sandbox.token()}")
        ]
        served = {d["id"]: d for d in every_record(api, "/supplier-documents")}
        truth = sandbox.portal.snapshot("supplier_documents")
        credit_notes = [d for d in truth if d["type"] == "creditNote"]
        assert credit_notes, "no supplier credit note: the sign would not be exercised"
        for document in truth:
            sign = -1 if document["type"] == "creditNote" else 1
            for name in ("amount", "vat", "amountVat"):
                assert served[document["id"]][name] == sign * document[name], (document["id"], name)
        by_id = api.get(f"/supplier-documents/{credit_notes[0]['id']}").json()["data"]
    assert by_id["amountVat"] == -credit_notes[0]["amountVat"] < 0


@pytest.fixture(scope="module")
def respelled_sandbox(module_sandbox_factory) -> SandboxServer:
    """The default profile with the three spelling switches and the credit-note sign turned over."""
    profile = dataclasses.replace(
        ContractProfile.default(),
        deposit_subtype_name="DEPOSIT_INVOICE",
        supplier_credit_note_type="CREDIT_NOTE",
        supplier_paid_status="paymentSent",
        credit_note_sign="negative",
    )
    return module_sandbox_factory(config=small_config(contract=profile), real_date=True)


@pytest.mark.parametrize(
    "path, resource, field, own, respelled",
    [
        ("/documents", "documents", "subtype", "DEPOSIT", "DEPOSIT_INVOICE"),
        ("/supplier-documents", "supplier_documents", "type", "creditNote", "CREDIT_NOTE"),
        ("/supplier-documents", "supplier_documents", "status", "paid", "paymentSent"),
    ],
)
def test_spelling_switches_rename_values_and_filters(
    respelled_sandbox, path, resource, field, own, respelled
):
    expected = {r["id"] for r in respelled_sandbox.portal.snapshot(resource) if r[field] == own}
    assert expected
    with client_for(respelled_sandbox) as client:
        listed = created(client.get(path, params={"limit": 100}), 200)
        filtered = created(client.get(path, params={"limit": 100, field: respelled}), 200)
    assert {r["id"] for r in listed if r[field] == respelled} == expected
    assert own not in {r[field] for r in listed}
    assert {r["id"] for r in filtered} == expected


def test_paid_status_switch_reaches_the_status_history(respelled_sandbox):
    with client_for(respelled_sandbox) as client:
        document = new_supplier_document(client, new_supplier(client, "FR-RESPELL-1"))
        paid = created(
            client.patch(f"/supplier-documents/{document['id']}/status", json={"action": "declarePayment"}),
            200,
        )
        history = created(client.get(f"/supplier-documents/{document['id']}/events"), 200)
    assert paid["status"] == "paymentSent"
    assert history[0]["status"] == "paymentSent" and history[0]["previousStatus"] == "approved"
    # the truth keeps the sandbox's own spelling
    assert respelled_sandbox.portal.get("supplier_documents", document["id"])["status"] == "paid"


def test_negative_credit_notes_flip_every_total_and_nothing_else(respelled_sandbox):
    truth = {d["id"]: d for d in respelled_sandbox.portal.snapshot("documents")}
    with client_for(respelled_sandbox) as client:
        served = created(client.get("/documents", params={"limit": 100}), 200)
    assert len(served) == len(truth)
    for document in served:
        own = truth[document["id"]]
        if own["subtype"] != "CREDIT_NOTE":  # only the (respelled) deposit subtype differs
            assert {**document, "subtype": own["subtype"]} == own
            continue
        assert own["amountVatNet"] > 0
        for name in ("amount", "vat", "amountVat", "amountNet", "amountVatNet"):
            assert document[name] == -own[name]
        assert [line["price"] for line in document["lines"]] == [-line["price"] for line in own["lines"]]


def test_default_profile_serves_the_truth_unchanged(sandbox_server):
    profile = ContractProfile.default()
    for resource in PATHS:
        for record in sandbox_server.portal.snapshot(resource):
            assert served_record(resource, record, profile) is record
    for item in sandbox_server.portal.snapshot("supplier_document_events"):
        assert served_event_item(item, profile) is item


def test_strict_webhook_payloads_have_the_get_shape(strict_sandbox, strict_api):
    created(
        strict_api.post(
            "/webhooks",
            json={"url": "http://127.0.0.1:9/hook", "events": ["supplier.created", "customer.created"]},
        ),
        200,
    )
    supplier = new_supplier(strict_api, "FR-STRICT-HOOK")
    customer = created(strict_api.post("/customers", json={"name": "Hook SARL"}), 201)
    assert strict_sandbox.webhooks.wait_idle(10)
    payloads = {d.event: d.envelope["event"]["data"] for d in strict_sandbox.webhooks.deliveries}
    assert payloads["supplier.created"] == supplier
    assert set(payloads["supplier.created"]) <= CONTRACT_FIELDS["suppliers"]
    assert payloads["customer.created"] == customer
    assert "deletedAt" not in payloads["customer.created"]


def test_strict_payment_date_is_served_at_paris_midnight(make_sandbox):
    winter = datetime(2026, 1, 15, 12, 0, tzinfo=timezone.utc)
    server = make_sandbox(small_config(contract=ContractProfile.strict()), clock=Clock(fixed=winter))
    with client_for(server) as client:
        invoice = next(
            d
            for d in created(client.get("/documents", params={"limit": 50, "status": "VALIDATED"}), 200)
            if d["type"] == "INVOICE" and d["subtype"] is None
        )
        paid = created(client.post(f"/documents/{invoice['id']}/payment", json={"date": "2026-01-10"}), 200)
    assert paid["date"] == "2026-01-09T23:00:00Z"  # Paris is UTC+1 in January
    assert server.portal.get("transactions", paid["id"])["date"] == "2026-01-10T00:00:00Z"
