"""Webhook hints applied to a DuckLake (issue 16 on the engine of issue 15): PostgreSQL catalog started by the
session, local data folder, the spool in the catalog database. The applying run lands the hinted records, confirms a
deletion, rebuilds the models downstream, and a reader opened on the lake afterwards sees all of it.

Truths: the sandbox's own records (harness/warehouse_truth.py) and the API's figures (harness/marts_truth.py).
"""

from __future__ import annotations

from harness.marts_truth import compare_marts
from harness.regular_build import regular_build, report_date_of
from harness.warehouse_truth import mismatches
from invoicing_warehouse.demo.hint_feed import ListenerFeed
from invoicing_warehouse.engine.readers import connect_reader
from invoicing_warehouse.runs.hints import apply_pending
from pipelines.invoicing.credentials import ApiSettings
from pipelines.invoicing.portals import Portal
from pipelines.invoicing.webhooks.hint_spool import spool_location_for
from tests.pipelines.sandbox_syncs import quiet
from tests.support.sandboxes import pick


def _draft_invoice(portal) -> str:
    customer = portal.create("customers", {"name": "Lake Hint SARL"})
    item = next(iter(portal.stores["items"].records))
    return portal.create("documents", {"customerId": customer["id"], "type": "INVOICE",
                                       "lines": [{"itemId": item, "quantity": 3}]})["id"]


def test_hints_applied_to_a_lake_land_exactly_and_a_reader_sees_them(start_sandbox, lake):
    sandbox = start_sandbox(seed=16, scale=60)
    portal = sandbox.portal
    validated, deleted = _draft_invoice(portal), _draft_invoice(portal)
    quiet(sandbox)
    regular_build(sandbox, lake)  # sync, every model, publication

    paid = pick(portal, "documents", lambda d: d["type"] == "INVOICE" and d["status"] == "VALIDATED"
                and not d.get("subtype") and float(d.get("remaining") or 0) > 0, "invoice left to pay")["id"]
    assert lake.data_path is not None
    feed = ListenerFeed(portal, spool_location_for(lake)).start()  # the receiver's spool: the lake's catalog database
    try:
        portal.validate_document(validated)
        portal.pay_document(paid, None)
        portal.delete("documents", deleted)
    finally:
        feed.stop()
    assert feed.spooled >= 3

    run = apply_pending(lake, Portal("default"), rate_limit_per_s=0, as_of=report_date_of(sandbox),
                        settings=ApiSettings(sandbox.base_url, sandbox.client_id, sandbox.client_secret))
    assert run.acknowledged == run.hints >= 3, run.line()  # one pending hint per record (the spool dedupes)
    assert run.load is not None and run.load.tombstoned["documents"] == [deleted], run.line()
    assert run.models and run.published, run.line()
    quiet(sandbox)
    assert mismatches(lake, portal) == []
    reader = connect_reader(lake)
    try:
        assert reader.execute("select status from invoicing_raw.documents where id = ?",
                              [validated]).fetchone() == ("VALIDATED",)
        assert not reader.execute("select count(*) from staging.stg_invoicing__documents where document_id = ?",
                                  [deleted]).fetchone()[0]
        assert compare_marts(reader, sandbox).mismatches == []
    finally:
        reader.close()
