"""The data generator: deterministic, every status the issue lists, and consistent records."""

from collections import Counter
from datetime import datetime, timezone

import pytest

from invoicing_sandbox.clock import Clock
from invoicing_sandbox.config import SandboxConfig
from invoicing_sandbox.domain import Portal
from invoicing_sandbox.generator import generate

try:
    from .test_domain_invariants import check_invariants
except ImportError:  # tests/invoicing_sandbox is not a package
    from test_domain_invariants import check_invariants

END = datetime(2026, 3, 10, 12, 0, tzinfo=timezone.utc)
RESOURCES = (
    "items",
    "customers",
    "documents",
    "transactions",
    "transaction_usages",
    "suppliers",
    "supplier_documents",
    "supplier_document_events",
    "user",
    "portal",
)


def generated(seed, scale, **options):
    portal = Portal(Clock(fixed=END), SandboxConfig())
    counts = generate(portal, seed=seed, scale=scale, end=END, **options)
    return portal, counts


def everything(portal):
    return {name: portal.snapshot(name) for name in RESOURCES}


def test_same_seed_same_records_different_seed_different_records():
    first, counts = generated(11, 300)
    second, _ = generated(11, 300)
    assert everything(first) == everything(second)
    third, _ = generated(12, 300)
    assert everything(third)["documents"] != everything(first)["documents"]
    assert counts["documents"] == len(first.snapshot("documents"))


@pytest.fixture(scope="module")
def big():
    return generated(5, 2500)


def test_every_status_and_kind_the_issue_lists(big):
    portal, counts = big
    documents = portal.snapshot("documents")
    quotation_statuses = {d["status"] for d in documents if d["type"] == "QUOTATION"}
    assert quotation_statuses == {"DRAFT", "VALIDATED", "ACCEPTED", "REFUSED", "CONVERTED", "CANCELED"}
    invoices = [d for d in documents if d["type"] == "INVOICE" and d["subtype"] is None]
    today = "2026-03-10T00:00:00Z"
    assert any(d["status"] == "PAID" for d in invoices)
    assert any(d["status"] == "VALIDATED" and 0 < d["totalPayments"] for d in invoices)  # partly paid
    assert any(
        d["status"] == "VALIDATED" and d["totalPayments"] == 0 and d["dueDate"] < today for d in invoices
    )
    assert any(d["status"] == "VALIDATED" and d["dueDate"] >= today for d in invoices)  # not yet due
    assert any(d["status"] == "CANCELED" for d in invoices) and any(d["prevDoc"] for d in invoices)
    assert any(any(m["model"] == "RELAUNCH1" for m in d["messages"]) for d in invoices)
    assert any(any(m["model"] == "RELAUNCH2" for m in d["messages"]) for d in invoices)
    subtypes = Counter(d["subtype"] for d in documents)
    assert subtypes["PROFORMA"] and subtypes["DEPOSIT"] and subtypes["CREDIT_NOTE"]
    notes = [d for d in documents if d["subtype"] == "CREDIT_NOTE"]
    assert any(d["invoiceId"] for d in notes) and any(d["invoiceId"] is None for d in notes)
    transactions = portal.snapshot("transactions")
    assert len({t["method"] for t in transactions}) >= 4
    usages = portal.snapshot("transaction_usages")
    by_transaction = Counter(u["transactionId"] for u in usages if u["transactionId"])
    assert any(n >= 2 for n in by_transaction.values())  # an overpayment used on a second invoice
    assert any(u["type"] == "CREDIT_NOTE" for u in usages)
    customers = portal.snapshot("customers")
    assert {c["type"] for c in customers} == {"business", "consumer"}
    assert any(c["deleted"] for c in customers)
    assert all(c["siret"] and c["vat"].startswith("FR") for c in customers if c["type"] == "business")
    assert {i["vat"] for i in portal.snapshot("items")} == {20, 10, 5.5}
    assert {s["status"] for s in portal.snapshot("supplier_documents")} == {
        "toApprove",
        "approved",
        "refused",
        "disputed",
        "paid",
    }
    assert any(s["tags"] for s in portal.snapshot("suppliers"))
    assert portal.get_portal()["referenceAssignmentMethod"] in ("CHRONOLOGICAL", "YEARLY")
    assert counts["skipped_steps"] < counts["documents"] // 50


def test_history_spans_two_years_with_shared_seconds(big):
    portal, _ = big
    stamps = [d["lastUpdate"] for d in portal.snapshot("documents")]
    assert min(stamps) < "2024-06-01" and max(stamps) <= "2026-03-10T12:00:00Z"
    assert max(Counter(stamps).values()) >= 5  # recurring invoices share a second


def test_generated_records_are_consistent(big):
    check_invariants(big[0])


def test_bulk_same_second_option():
    portal, _ = generated(2, 100, bulk_same_second=150)
    stamps = Counter(d["lastUpdate"] for d in portal.snapshot("documents"))
    assert stamps.most_common(1)[0][1] >= 150
    assert len(portal.snapshot("documents")) >= 150


def test_generate_refuses_a_portal_that_has_data():
    portal, _ = generated(1, 50)
    with pytest.raises(ValueError):
        generate(portal, seed=1, scale=50, end=END)
