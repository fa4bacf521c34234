"""Deletions from events: customer.deleted, supplier.deleted and document.deleted hints make the applying
run confirm each deletion by GET (flag or 404) and set `_deleted_at`; the marts drop them; the warehouse then
equals the sandbox's own records (harness/warehouse_truth.py) and its marts the API's figures."""

from __future__ import annotations

from hint_support import apply, quiet, raw_value, reader, scheduled_sync

from harness.marts_truth import compare_marts
from harness.warehouse_truth import mismatches
from invoicing_warehouse.demo.hint_feed import ListenerFeed
from pipelines.invoicing.webhooks.hint_spool import spool_path


def _customer_with_a_draft(portal) -> dict:
    customer = portal.create("customers", {"name": "Hint Test SARL"})
    item = next(iter(portal.stores["items"].records))
    portal.create("documents", {"customerId": customer["id"], "type": "INVOICE",
                                "lines": [{"itemId": item, "quantity": 2}]})
    return customer


def test_deletion_events_mark_rows_deleted_and_the_marts_drop_them(sandbox, tmp_path):
    warehouse = str(tmp_path / "warehouse.duckdb")
    portal = sandbox.portal
    customer = _customer_with_a_draft(portal)
    # a draft of another customer, deleted alone (created: the seeded data holds no draft on some dates)
    other_customer = _customer_with_a_draft(portal)
    supplier = portal.create("suppliers", {"name": "Fournisseur Hint", "legalIdentifier": "73282932000074",
                                           "tags": ["urgent", "logiciel"]})
    quiet(sandbox)
    scheduled_sync(sandbox, warehouse)
    customer_drafts = sorted(portal.docs_by_customer[customer["id"]])
    draft = portal.get("documents", next(iter(portal.docs_by_customer[other_customer["id"]])))
    feed = ListenerFeed(portal, spool_path(warehouse)).start()
    try:
        portal.delete("customers", customer["id"])  # its drafts go with it (document.deleted each)
        portal.delete("suppliers", supplier["id"])
        portal.delete("documents", draft["id"])
    finally:
        feed.stop()
    assert {w.event for w in feed.writes} >= {"customer.deleted", "supplier.deleted", "document.deleted"}
    run = apply(sandbox, warehouse)
    assert run.acknowledged == run.hints > 0
    assert sorted(run.load.tombstoned["documents"]) == sorted([draft["id"], *customer_drafts])
    assert run.load.tombstoned["suppliers"] == [supplier["id"]]
    assert raw_value(warehouse, "customers", customer["id"], "_deleted_at") is not None  # served deleted: true
    assert raw_value(warehouse, "suppliers", supplier["id"], "_deleted_at") is not None  # 404
    assert raw_value(warehouse, "documents", draft["id"], "_deleted_at") is not None  # 404
    with reader(warehouse) as connection:
        # deleted customers stay in staging, flagged: their invoices are still money owed
        assert connection.execute("select is_deleted from staging.stg_invoicing__customers where customer_id = ?",
                                  [customer["id"]]).fetchone()[0] is True
        assert not connection.execute("select count(*) from staging.stg_invoicing__suppliers where supplier_id = ?",
                                      [supplier["id"]]).fetchone()[0]
        assert not connection.execute("select count(*) from staging.stg_invoicing__documents where document_id = ?",
                                      [draft["id"]]).fetchone()[0]
        assert compare_marts(connection, sandbox).mismatches == []
    assert mismatches(warehouse, portal) == []
