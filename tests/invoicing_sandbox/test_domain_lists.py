"""Every list: orderBy values with defaults and order -1, ties by id, paging, windows and filters.

The truth is computed independently in the test from `snapshot()` (plain sorting and filtering).
"""

from datetime import datetime, timezone

import pytest

from invoicing_sandbox.clock import Clock
from invoicing_sandbox.config import SandboxConfig
from invoicing_sandbox.domain import Portal, listing
from invoicing_sandbox.errors import ApiError
from invoicing_sandbox.generator import generate

END = datetime(2026, 3, 10, 12, 0, tzinfo=timezone.utc)


@pytest.fixture(scope="module")
def portal():
    portal = Portal(Clock(fixed=END), SandboxConfig())
    generate(portal, seed=3, scale=400, end=END, bulk_same_second=30)
    return portal


def field(name):
    return lambda r: r[name]


ORDERS = {
    "items": (
        {
            "lastUpdate": field("lastUpdate"),
            "name": field("name"),
            "type": field("type"),
            "reference": field("reference"),
            "price": field("price"),
        },
        "name",
    ),
    "customers": (
        {
            "lastUpdate": field("lastUpdate"),
            "name": field("name"),
            "reference": field("reference"),
            "phone": lambda r: r["mobile"] or r["phone"],
            "dueAmount": field("dueAmount"),
            "documentsCount": field("documentsCount"),
        },
        "name",
    ),
    "documents": (
        {
            "lastUpdate": field("lastUpdate"),
            "emitDate": field("emitDate"),
            "to.name": lambda r: r["to"]["name"],
            "reference": field("reference"),
            "amount": field("amount"),
            "refInt": field("referenceInternal"),
        },
        "emitDate",
    ),
    "transactions": (
        {
            "lastUpdate": field("lastUpdate"),
            "date": field("date"),
            "customerName": field("customerName"),
            "amount": field("amount"),
            "method": field("method"),
        },
        "date",
    ),
    "transaction_usages": (
        {"lastUpdate": field("lastUpdate"), "date": field("date"), "amount": field("amount")},
        "date",
    ),
    "suppliers": (
        {
            "lastUpdate": field("lastUpdate"),
            "name": field("name"),
            "legalIdentifier": field("legalIdentifier"),
        },
        "name",
    ),
    "supplier_documents": (
        {
            "lastUpdate": field("lastUpdate"),
            "issueDate": field("issueDate"),
            "dueDate": field("dueDate"),
            "amount": field("amount"),
            "amountVat": field("amountVat"),
            "reference": field("reference"),
            "status": field("status"),
        },
        "issueDate",
    ),
}


def expected_order(records, key, descending=False):
    ordered = sorted(records, key=lambda r: ((0, "") if key(r) is None else (1, key(r)), r["id"]))
    return [r["id"] for r in (reversed(ordered) if descending else ordered)]


def read_all(portal, resource, params, parent=None):
    ids, skip = [], 0
    while True:
        page = portal.list(resource, dict(params, limit="100", skip=str(skip)), parent)
        ids.extend(r["id"] for r in page)
        if len(page) < 100:
            return ids
        skip += 100


@pytest.mark.parametrize("resource", list(ORDERS))
def test_every_order_by_both_directions_and_the_default(portal, resource):
    keys, default = ORDERS[resource]
    records = portal.snapshot(resource)
    assert records, resource
    for order_by, key in keys.items():
        assert read_all(portal, resource, {"orderBy": order_by}) == expected_order(records, key)
        assert read_all(portal, resource, {"orderBy": order_by, "order": "-1"}) == expected_order(
            records, key, True
        )
    assert read_all(portal, resource, {}) == expected_order(records, keys[default])


def test_ties_are_broken_by_id(portal):
    records = portal.snapshot("documents")
    page = portal.list(
        "documents",
        {"orderBy": "lastUpdate", "limit": "100", "skip": "0", "updatedSince": "2026-03-10T11:00:00Z"},
    )
    assert len(page) >= 30 and len({r["lastUpdate"] for r in page}) == 1  # bulk_same_second=30
    assert [r["id"] for r in page] == sorted(
        r["id"] for r in records if r["lastUpdate"] >= "2026-03-10T11:00:00Z"
    )


def test_limit_default_clamp_reject_and_skip(portal):
    assert len(portal.list("documents", {})) == 20
    assert len(portal.list("documents", {"limit": "1000"})) == 100
    all_ids = expected_order(portal.snapshot("documents"), ORDERS["documents"][0]["emitDate"])
    assert [r["id"] for r in portal.list("documents", {"limit": "7", "skip": "13"})] == all_ids[13:20]
    assert portal.list("documents", {"skip": str(len(all_ids))}) == []
    portal.config.page_size_policy = "reject"
    try:
        with pytest.raises(ApiError) as error:
            portal.list("documents", {"limit": "101"})
        assert error.value.status == 400 and "100" in error.value.message
        assert len(portal.list("documents", {"limit": "100"})) == 100
    finally:
        portal.config.page_size_policy = "clamp"


@pytest.mark.parametrize(
    "params",
    [
        {"limit": "-1"},
        {"limit": "abc"},
        {"limit": "0"},
        {"skip": "-3"},
        {"skip": "1.5"},
        {"order": "2"},
        {"orderBy": "colour"},
        {"colour": "x"},
        {"updatedSince": "yesterday"},
        {"updatedUntil": "2026-13-01"},
        {"status": "LOST"},
        {"minimumAmount": "ten"},
    ],
)
def test_bad_query_parameters_are_400(portal, params):
    with pytest.raises(ApiError) as error:
        portal.list("documents", params)
    assert error.value.status == 400


@pytest.mark.parametrize("resource", list(ORDERS))
@pytest.mark.parametrize("small_set", [2000, 0])  # candidate-sorting path and full-scan path
def test_updated_window_is_inclusive_on_both_bounds(portal, resource, small_set, monkeypatch):
    monkeypatch.setattr(listing, "_SMALL_CANDIDATE_SET", small_set)
    records = portal.snapshot(resource)
    stamps = sorted({r["lastUpdate"] for r in records})
    low, high = stamps[len(stamps) // 4], stamps[3 * len(stamps) // 4]
    inside = [r for r in records if low <= r["lastUpdate"] <= high]
    keys, default = ORDERS[resource]
    for order_by in ("lastUpdate", default):
        got = read_all(portal, resource, {"orderBy": order_by, "updatedSince": low, "updatedUntil": high})
        assert got == expected_order(inside, keys[order_by])
        got = read_all(portal, resource, {"orderBy": order_by, "order": "-1", "updatedSince": low})
        assert got == expected_order([r for r in records if r["lastUpdate"] >= low], keys[order_by], True)


def ids_where(portal, resource, predicate):
    keys, default = ORDERS[resource]
    return expected_order([r for r in portal.snapshot(resource) if predicate(r)], keys[default])


def some(portal, resource, name):
    return next(r[name] for r in portal.snapshot(resource) if r[name])


FILTER_CASES = [
    ("items", {"type": "service"}, lambda r: r["type"] == "service"),
    ("items", {"minimumPrice": "100", "maximumPrice": "500"}, lambda r: 100 <= r["price"] <= 500),
    (
        "items",
        {"search": "E  pièce"},
        lambda r: all(
            any(w in (f or "").lower() for f in (r["name"], r["description"], r["reference"]))
            for w in ("e", "pièce")
        ),
    ),
    ("customers", {"minimumDueAmount": "1"}, lambda r: r["dueAmount"] >= 1),
    ("customers", {"maximumDueAmount": "0"}, lambda r: r["dueAmount"] <= 0),
    ("customers", {"name": "sa"}, lambda r: "sa" in r["name"].lower()),
    ("documents", {"status": "PAID"}, lambda r: r["status"] == "PAID"),
    (
        "documents",
        {"type": "QUOTATION", "status": "CANCELED"},
        lambda r: r["type"] == "QUOTATION" and r["status"] == "CANCELED",
    ),
    ("documents", {"subtype": "CREDIT_NOTE"}, lambda r: r["subtype"] == "CREDIT_NOTE"),
    (
        "documents",
        {"startEmitDate": "2025-06-01T00:00:00Z", "endEmitDate": "2025-06-30T00:00:00Z"},
        lambda r: "2025-06-01" <= r["emitDate"][:10] <= "2025-06-30",
    ),
    ("documents", {"minimumAmount": "500", "maximumAmount": "1500"}, lambda r: 500 <= r["amountNet"] <= 1500),
    ("documents", {"minimumAmountWithVat": "1000"}, lambda r: r["amountVatNet"] >= 1000),
    ("documents", {"search": "projet"}, lambda r: "projet" in (r["title"] or "").lower()),
    (
        "transactions",
        {"minimumAmount": "100", "startDate": "2025-01-01T00:00:00Z"},
        lambda r: r["amount"] >= 100 and r["date"] >= "2025-01-01",
    ),
    (
        "transaction_usages",
        {"maximumAmount": "200", "endDate": "2025-12-31T00:00:00Z"},
        lambda r: r["amount"] <= 200 and r["date"] <= "2025-12-31T00:00:00Z",
    ),
    ("suppliers", {"tags": "récurrent"}, lambda r: "récurrent" in r["tags"]),
    ("supplier_documents", {"status": "disputed"}, lambda r: r["status"] == "disputed"),
    ("supplier_documents", {"type": "creditNote"}, lambda r: r["type"] == "creditNote"),
    (
        "supplier_documents",
        {
            "startDueDate": "2025-09-01T00:00:00Z",
            "endIssueDate": "2025-12-01T00:00:00Z",
            "minimumAmount": "1000",
        },
        lambda r: (
            r["dueDate"] >= "2025-09-01"
            and r["issueDate"] <= "2025-12-01T00:00:00Z"
            and r["amountVat"] >= 1000
        ),
    ),
    ("supplier_documents", {"tags": "urgent,récurrent"}, lambda r: {"urgent", "récurrent"} <= set(r["tags"])),
]


@pytest.mark.parametrize("resource, params, predicate", FILTER_CASES)
@pytest.mark.parametrize("cache_from_skip", [1000, 0])  # early-exit walk, and the cached full match list
def test_filters(portal, resource, params, predicate, cache_from_skip, monkeypatch):
    monkeypatch.setattr(listing, "_CACHE_FROM_SKIP", cache_from_skip)
    want = ids_where(portal, resource, predicate)
    assert want, "the fixture must exercise the filter"
    assert read_all(portal, resource, params) == want


def test_exact_and_id_filters(portal):
    document = next(r for r in portal.snapshot("documents") if r["status"] == "PAID")
    assert [r["id"] for r in portal.list("documents", {"reference": document["reference"]})] == [
        r["id"] for r in portal.snapshot("documents") if r["reference"] == document["reference"]
    ]
    customer_id = document["customerId"]
    assert read_all(portal, "documents", {"customerId": customer_id}) == ids_where(
        portal, "documents", lambda r: r["customerId"] == customer_id
    )
    assert read_all(portal, "transactions", {"customerId": customer_id}) == ids_where(
        portal, "transactions", lambda r: r["customerId"] == customer_id
    )
    assert read_all(portal, "transactions", {}, ("customers", customer_id)) == ids_where(
        portal, "transactions", lambda r: r["customerId"] == customer_id
    )
    assert read_all(portal, "transaction_usages", {"documentId": document["id"]}) == ids_where(
        portal, "transaction_usages", lambda r: r["invoiceId"] == document["id"]
    )
    assert read_all(portal, "transaction_usages", {}, ("documents", document["id"])) == read_all(
        portal, "transaction_usages", {"documentId": document["id"]}
    )
    customer = portal.get("customers", customer_id)
    assert (
        customer["id"] in {r["id"] for r in portal.list("customers", {"email": customer["email"].upper()})}
        if customer["email"]
        else True
    )
    supplier = portal.snapshot("suppliers")[0]
    assert [r["id"] for r in portal.list("suppliers", {"legalIdentifier": supplier["legalIdentifier"]})] == [
        supplier["id"]
    ]
    assert read_all(portal, "supplier_documents", {"supplierId": supplier["id"]}) == ids_where(
        portal, "supplier_documents", lambda r: r["supplierId"] == supplier["id"]
    )


def test_customer_search_spans_address_and_contacts(portal):
    customer = next(r for r in portal.snapshot("customers") if r["contacts"])
    city, contact = customer["address"]["city"], customer["contacts"][0]["name"].split()[-1]
    found = {r["id"] for r in portal.list("customers", {"search": f"{city} {contact}", "limit": "100"})}
    assert customer["id"] in found


def test_nested_lists_check_their_parent_and_parameters(portal):
    with pytest.raises(ApiError) as error:
        portal.list("transactions", {}, ("customers", "0" * 24))
    assert error.value.status == 404
    customer_id = portal.snapshot("transactions")[0]["customerId"]
    for bad in ({"customerId": customer_id}, {"orderBy": "customerName"}):
        with pytest.raises(ApiError) as error:
            portal.list("transactions", bad, ("customers", customer_id))
        assert error.value.status == 400
    with pytest.raises(ApiError) as error:
        portal.list("transaction_usages", {}, ("documents", "f" * 24))
    assert error.value.status == 404


def test_lists_follow_writes(portal):
    item = portal.create("items", {"name": "AAAA premier", "price": 1})
    assert portal.list("items", {"limit": "1"})[0]["id"] == item["id"]
    portal.update("items", item["id"], {"name": "zzzz dernier"})
    assert portal.list("items", {"limit": "1", "order": "-1"})[0]["id"] == item["id"]
    assert portal.list("items", {"orderBy": "lastUpdate", "order": "-1", "limit": "1"})[0]["id"] == item["id"]
    portal.delete("items", item["id"])
    assert item["id"] not in {r["id"] for r in portal.list("items", {"limit": "100"})}


def test_cached_deep_pages_follow_writes(portal, monkeypatch):
    monkeypatch.setattr(listing, "_CACHE_FROM_SKIP", 0)
    before = read_all(portal, "items", {"minimumPrice": "0"})
    item = portal.create("items", {"name": "ZZZ cache", "price": 5})
    after = read_all(portal, "items", {"minimumPrice": "0"})
    assert after == before + [item["id"]]
    portal.delete("items", item["id"])
    assert read_all(portal, "items", {"minimumPrice": "0"}) == before


@pytest.mark.parametrize("order_by", ["lastUpdate", "date"])
def test_window_with_a_narrowing_filter(portal, order_by):
    customer_id = max(portal.snapshot("transactions"), key=lambda t: t["lastUpdate"])["customerId"]
    mine = [t for t in portal.snapshot("transactions") if t["customerId"] == customer_id]
    stamps = sorted(t["lastUpdate"] for t in mine)
    low = stamps[len(stamps) // 2]
    want = expected_order([t for t in mine if t["lastUpdate"] >= low], ORDERS["transactions"][0][order_by])
    params = {"orderBy": order_by, "updatedSince": low}
    assert read_all(portal, "transactions", dict(params, customerId=customer_id)) == want
    assert read_all(portal, "transactions", params, ("customers", customer_id)) == want
    assert len(want) < len(mine)
