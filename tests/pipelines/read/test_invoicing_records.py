"""The extraction's records on servers that serve less than the sandbox's defaults (one contract switch at
a time, real HTTP): deleted customers without a timestamp or hidden from lists, supplier-document events
without their convenience fields, and `_absent_fields` naming what a record did not carry.

Truths: the sandbox's clock (frozen, so a run's server time is known exactly), its own records, raw HTTP
answers read here, and the key lists of the contract (spec + api-facts), written out below by hand.
"""

from __future__ import annotations

from dataclasses import replace
from datetime import timedelta

import duckdb
import httpx
import pytest

from invoicing_sandbox.contract import INVENTED_FIELD_FAMILIES, ContractProfile
from pipelines.invoicing.errors import InvoicingApiError
from pipelines.invoicing.read.rows import event_rows
from pipelines.invoicing.settings import EVENTS
from tests.pipelines.sandbox_syncs import quiet, sync
from tests.support.sandboxes import pick


def profile(**switches) -> ContractProfile:
    return replace(ContractProfile.default(), **switches)


def query(warehouse: str, sql: str, params: list | None = None) -> list[tuple]:
    with duckdb.connect(warehouse, read_only=True) as con:
        return con.execute(sql, params or []).fetchall()


def deleted_at(warehouse: str, customer_id: str):
    return query(warehouse, "select _deleted_at from invoicing_raw.customers where id = ?", [customer_id])[0][0]


def frozen(sandbox):
    """The sandbox with its clock stopped at its own now (its records are dated around now)."""
    sandbox.clock.freeze(sandbox.clock.now())
    return sandbox


def test_a_customer_flagged_deleted_without_timestamp_gets_the_run_time_once(start_sandbox, warehouse):
    sandbox = frozen(start_sandbox(seed=11, scale=120, contract=profile(deleted_customers="flagged")))
    portal = sandbox.portal
    doomed = portal.create("customers", {"name": "Flagged Later SARL"})
    quiet(sandbox)
    sync(sandbox, warehouse)
    assert deleted_at(warehouse, doomed["id"]) is None
    portal.delete("customers", doomed["id"])
    quiet(sandbox)
    run_time = sandbox.clock.now()  # the Date of this run's GET /me: the clock stands still
    deleting = sync(sandbox, warehouse)
    assert deleted_at(warehouse, doomed["id"]) == run_time
    assert deleting.rows["customers"] == 1
    # the list shows deleted customers (flagged): the windows see deletions, no id scan is paid; the window's
    # one record could be a clamp of /customers (no page of it seen in this run): one more request proves the end
    assert deleting.requests["customers"] == 2

    sandbox.clock.advance(timedelta(minutes=5))
    later = sync(sandbox, warehouse)
    assert deleted_at(warehouse, doomed["id"]) == run_time
    assert later.rows.get("customers", 0) == 0
    # a reconcile re-reads every customer: the observation time is no change, nothing is reloaded
    sandbox.clock.advance(timedelta(minutes=5))
    reconciled = sync(sandbox, warehouse, reconcile=True)
    assert reconciled.rows.get("customers", 0) == 0
    assert deleted_at(warehouse, doomed["id"]) == run_time
    # customers deleted before the first sync got that first run's time, never a later one
    stamps = query(warehouse, "select distinct _deleted_at from invoicing_raw.customers where deleted")
    assert len(stamps) == 2 and all(stamp <= run_time for (stamp,) in stamps)


def test_a_customer_hidden_once_deleted_is_marked_by_an_ordinary_incremental_sync(start_sandbox, warehouse):
    sandbox = frozen(start_sandbox(seed=12, scale=120, contract=profile(deleted_customers="hidden")))
    portal = sandbox.portal
    doomed = portal.create("customers", {"name": "Hidden Later SARL"})
    quiet(sandbox)
    sync(sandbox, warehouse)
    portal.delete("customers", doomed["id"])
    quiet(sandbox)
    run_time = sandbox.clock.now()
    report = sync(sandbox, warehouse)  # no reconcile
    assert deleted_at(warehouse, doomed["id"]) == run_time
    live = sum(1 for c in portal.snapshot("customers") if not c.get("deleted"))
    # one page: the window (1, empty) + the id scan (its page, shorter than 100, and the request proving the
    # end: no page of /customers seen in this run) + GET /customers/{id} (1)
    assert live <= 100
    assert report.requests["customers"] == 4
    assert "customers: 1 listed-no-more checked by id (1 deleted, 0 gone)" in report.notes
    assert report.degraded_notes == []

    quiet(sandbox)
    again = sync(sandbox, warehouse)
    assert deleted_at(warehouse, doomed["id"]) == run_time
    assert again.rows.get("customers", 0) == 0
    assert again.requests["customers"] == 3  # the window and the id scan (2); the deleted id is not asked again


def test_a_customer_referenced_but_never_loaded_is_checked_by_id(start_sandbox, warehouse):
    """A customer deleted before any sync listed it (lists hide deleted customers) is known only from the
    documents naming it: the run asks for it by id."""
    sandbox = frozen(start_sandbox(seed=13, scale=120, contract=profile(deleted_customers="hidden")))
    portal = sandbox.portal
    customer = portal.create("customers", {"name": "Drafts Only SARL"})
    item = portal.snapshot("items")[0]
    draft = portal.create("documents", {"customerId": customer["id"], "lines": [{"itemId": item["id"]}]})
    quiet(sandbox)
    sync(sandbox, warehouse)
    portal.delete("customers", customer["id"])  # its draft goes with it
    with duckdb.connect(warehouse) as con:  # as if the customer had never been listed
        con.execute("delete from invoicing_raw.customers where id = ?", [customer["id"]])
    assert query(warehouse, "select customer_id from invoicing_raw.documents where id = ?", [draft["id"]]) == [
        (customer["id"],)
    ]
    quiet(sandbox)
    run_time = sandbox.clock.now()
    sync(sandbox, warehouse)
    assert query(warehouse, "select deleted, _deleted_at from invoicing_raw.customers where id = ?",
                 [customer["id"]]) == [(True, run_time)]


def served_events(sandbox, document_id: str) -> list[dict]:
    """GET /supplier-documents/{id}/events as the server answers it (most recent first)."""
    response = httpx.get(f"{sandbox.base_url}/supplier-documents/{document_id}/events",
                         headers={"Authorization": f"Bearer {sandbox.token('read')}"}, timeout=30)
    response.raise_for_status()
    return response.json()["data"]


def test_events_served_with_only_id_and_status_are_loaded_with_document_and_position(start_sandbox, warehouse):
    sandbox = start_sandbox(seed=14, scale=150,
                            contract=profile(invented_fields_omitted=("supplier_document_events",)))
    sync(sandbox, warehouse)
    loaded = {row[0]: row[1:] for row in query(
        warehouse, "select id, supplier_document_id, _position, status, _absent_fields "
                   "from invoicing_raw.supplier_document_events")}
    documents = [d["id"] for d in sandbox.portal.snapshot("supplier_documents")]
    expected = {}
    for document_id in documents:
        events = served_events(sandbox, document_id)
        assert all(set(event) == {"id", "status"} for event in events)
        for index, event in enumerate(events):
            expected[event["id"]] = (document_id, len(events) - index, event["status"],
                                     "date,previousStatus,supplierDocumentId")
    assert len(expected) > 20
    assert loaded == expected


def test_events_without_ids_get_ids_from_their_document_and_position():
    served = [{"status": "paid", "previousStatus": "approved"}, {"status": "approved", "date": None}]
    rows, synthesised = event_rows(EVENTS, "sd1", served)
    assert synthesised
    assert [(r["id"], r["supplierDocumentId"], r["_position"], r["status"]) for r in rows] == [
        ("sd1:2", "sd1", 2, "paid"),
        ("sd1:1", "sd1", 1, "approved"),
    ]
    # a key served with null is present; the document id counts as absent although the client filled it
    assert [r["_absent_fields"] for r in rows] == ["date,supplierDocumentId", "previousStatus,supplierDocumentId"]
    with pytest.raises(InvoicingApiError) as error:
        event_rows(EVENTS, "sd1", [{"id": "e1", "supplierDocumentId": "sd2", "status": "paid"}])
    assert error.value.kind == "malformed"


def test_events_without_ids_are_replaced_whole_when_a_history_grows(start_sandbox, warehouse, monkeypatch):
    """A server serving events without `id` (no sandbox switch serves that: the served items lose it
    here): synthesised ids, and a reloaded history replaces the old rows instead of adding to them."""
    from invoicing_sandbox.routes import serving

    original = serving.served_event_item
    monkeypatch.setattr(serving, "served_event_item",
                        lambda item, prof: {k: v for k, v in original(item, prof).items() if k != "id"})
    sandbox = start_sandbox(seed=15, scale=150,
                            contract=profile(invented_fields_omitted=("supplier_document_events",)))
    sync(sandbox, warehouse)
    portal = sandbox.portal
    document = pick(portal, "supplier_documents", lambda d: d["status"] == "approved", "approved bill")
    before = len(served_events(sandbox, document["id"]))
    assert before > 0
    portal.change_supplier_document_status(document["id"], {"action": "dispute"})
    quiet(sandbox)
    sync(sandbox, warehouse)
    after = served_events(sandbox, document["id"])
    assert len(after) == before + 1
    rows = query(warehouse, "select id, _position, status from invoicing_raw.supplier_document_events "
                            "where supplier_document_id = ? order by _position", [document["id"]])
    assert rows == [(f"{document['id']}:{len(after) - i}", len(after) - i, e["status"])
                    for i, e in reversed(list(enumerate(after)))]
    total = query(warehouse, "select count(*), count(distinct id) from invoicing_raw.supplier_document_events")
    expected_total = sum(len(served_events(sandbox, d["id"])) for d in portal.snapshot("supplier_documents"))
    assert total == [(expected_total, expected_total)]


# The keys of each table's `assumed` list that the contract never names (spec + api-facts), written out
# from the documents themselves: a server serving only the contract leaves exactly these out.
NOT_IN_CONTRACT = {
    "documents": {"messages"},  # spec: the message record is "not shown", never said to be embedded
    "transaction_usages": {"date"},  # facts: usages carry the embedded transaction, no date
    "supplier_documents": {"paymentDate"},  # spec: the payment action's field names are not shown
    "supplier_document_events": {"date", "previousStatus", "supplierDocumentId"},  # item fields not shown
    "customers": {"deletedAt"},  # facts: soft-deleted customers carry `deleted: true`
    "transactions": set(),  # facts: customerId, refundedAmount, date
}


def absent_by_table(warehouse: str) -> dict[str, set[str | None]]:
    found = {}
    for table in NOT_IN_CONTRACT:
        values = query(warehouse, f"select distinct _absent_fields from invoicing_raw.{table}")
        found[table] = {value for (value,) in values}
    return found


@pytest.mark.parametrize("contract", ["default", "contract-only fields"])
def test_absent_fields_name_exactly_the_keys_the_server_did_not_serve(start_sandbox, warehouse, contract):
    switches = {} if contract == "default" else {
        "invented_fields_omitted": INVENTED_FIELD_FAMILIES, "deleted_customers": "flagged"}
    sandbox = start_sandbox(seed=16, scale=150, contract=profile(**switches))
    sync(sandbox, warehouse)
    found = absent_by_table(warehouse)
    if contract == "default":
        assert found == {table: {None} for table in NOT_IN_CONTRACT}
    else:
        assert found == {table: {",".join(k for k in order if k in keys) or None}
                         for table, keys in NOT_IN_CONTRACT.items()
                         for order in [ASSUMED_ORDER[table]]}


# the order in which `_absent_fields` lists keys: the agreed interface (docs/contract.md, A10)
ASSUMED_ORDER = {
    "documents": ("dueDate", "emitDate", "amountVatNet", "messages"),
    "transactions": ("date", "customerId", "refundedAmount"),
    "transaction_usages": ("date",),
    "customers": ("deletedAt",),
    "supplier_documents": ("amountVat", "amount", "dueDate", "issueDate", "paymentDate"),
    "supplier_document_events": ("date", "previousStatus", "supplierDocumentId"),
}
