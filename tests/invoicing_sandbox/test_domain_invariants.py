"""An independent audit of a portal's records (used by the generator and mutator tests), and its own tests.

Everything is recomputed here from `snapshot()` with plain Decimal arithmetic: totals from lines,
payments from usages, customer figures from documents, supplier document status from events.
"""

from collections import defaultdict
from datetime import datetime, timezone
from decimal import ROUND_HALF_UP, Decimal

import pytest

from invoicing_sandbox.clock import Clock
from invoicing_sandbox.config import SandboxConfig
from invoicing_sandbox.domain import Portal


def cents(value) -> Decimal:
    return Decimal(str(value)).quantize(Decimal("0.01"), rounding=ROUND_HALF_UP)


def expected_totals(document: dict) -> tuple:
    amount = vat = Decimal(0)
    for line in document["lines"]:
        total = cents(
            Decimal(str(line["price"]))
            * Decimal(str(line["quantity"]))
            * (1 - Decimal(str(line["discount"])) / 100)
        )
        amount += total
        vat += cents(total * Decimal(str(line["vat"])) / 100)
    amount_vat = amount + vat
    discount = document["discount"]
    if not discount:
        return amount, vat, amount_vat, amount, amount_vat
    value = Decimal(str(discount["amount"]))
    if discount["type"] == "PERCENT":
        return (
            amount,
            vat,
            amount_vat,
            cents(amount * (1 - value / 100)),
            cents(amount_vat * (1 - value / 100)),
        )
    return amount, vat, amount_vat, amount - value, cents(amount_vat * (amount - value) / amount)


def check_invariants(portal) -> None:
    """Asserts every derived field and cross-record rule of the portal's current records."""
    documents = {d["id"]: d for d in portal.snapshot("documents")}
    usages = portal.snapshot("transaction_usages")
    transactions = {t["id"]: t for t in portal.snapshot("transactions")}
    on_document, on_transaction = defaultdict(Decimal), defaultdict(Decimal)
    for usage in usages:
        amount = Decimal(str(usage["amount"]))
        assert amount > 0
        on_document[usage["invoiceId"]] += amount
        if usage["creditNoteId"]:
            on_document[usage["creditNoteId"]] += amount
        if usage["transactionId"]:
            on_transaction[usage["transactionId"]] += amount
    today = portal.clock.today().strftime("%Y-%m-%dT00:00:00Z")
    due, count = defaultdict(Decimal), defaultdict(int)
    live_references = defaultdict(int)
    for document in documents.values():
        if document["lines"]:
            totals = expected_totals(document)
            assert (
                tuple(cents(document[k]) for k in ("amount", "vat", "amountVat", "amountNet", "amountVatNet"))
                == totals
            ), document["id"]
        assert cents(document["totalPayments"]) == on_document[document["id"]], document["id"]
        remaining = cents(document["amountVatNet"]) - on_document[document["id"]]
        assert cents(document["remaining"]) == remaining and remaining >= 0, document["id"]
        receivable = document["type"] == "INVOICE" and document["subtype"] in (None, "DEPOSIT")
        if document["status"] == "PAID":
            assert receivable and remaining == 0, document["id"]
        if receivable and document["status"] == "VALIDATED":
            assert remaining > 0, document["id"]
            due[document["customerId"]] += remaining
        if document["status"] not in ("DRAFT", "CANCELED"):
            count[document["customerId"]] += 1
            live_references[document["reference"]] += 1
        if document["status"] == "CANCELED":
            successor = documents[document["nextDoc"]]
            assert successor["prevDoc"] == document["id"] and successor["reference"] == document["reference"]
        assert document["lastUpdate"] >= _created(document["id"])
    assert all(n == 1 for n in live_references.values()), "a reference is used twice"
    for transaction in transactions.values():
        assert cents(transaction["usedAmount"]) == on_transaction[transaction["id"]]
        assert on_transaction[transaction["id"]] <= cents(transaction["amount"])
    for customer in portal.snapshot("customers"):
        assert cents(customer["dueAmount"]) == due[customer["id"]], customer["id"]
        assert customer["documentsCount"] == count[customer["id"]], customer["id"]
        assert customer["type"] in ("business", "consumer")
        if customer["deleted"]:
            assert count[customer["id"]] == 0 and customer["deletedAt"]
    events = defaultdict(list)
    for event in portal.snapshot("supplier_document_events"):
        events[event["supplierDocumentId"]].append(event)
    supplier_ids = {s["id"] for s in portal.snapshot("suppliers")}
    for document in portal.snapshot("supplier_documents"):
        assert document["supplierId"] in supplier_ids
        assert max(events[document["id"]], key=lambda e: e["id"])["status"] == document["status"]
    assert today  # the clock is readable while auditing


def _created(object_id: str) -> str:
    return datetime.fromtimestamp(int(object_id[:8], 16), timezone.utc).strftime("%Y-%m-%dT%H:%M:%SZ")


def test_the_audit_catches_a_wrong_cached_figure():
    portal = Portal(Clock(fixed=datetime(2026, 3, 10, 9, tzinfo=timezone.utc)), SandboxConfig())
    portal.update_portal({"referenceAssignmentMethod": "YEARLY"})
    customer = portal.create("customers", {"name": "A"})
    document = portal.create(
        "documents",
        {
            "customerId": customer["id"],
            "status": "VALIDATED",
            "lines": [{"name": "x", "price": 10.05, "quantity": 3, "discount": 5}],
            "discount": {"type": "AMOUNT", "amount": 3},
        },
    )
    portal.pay_document(document["id"], {"amount": 7})
    check_invariants(portal)
    portal.stores["customers"].records[customer["id"]]["_due"] += 1  # a cache gone wrong
    with pytest.raises(AssertionError):
        check_invariants(portal)
