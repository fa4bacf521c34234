"""Two changes of one record within one second, on a list read whole (no windows).

`lastUpdate` has whole seconds. A whole-list scan skips a record whose `lastUpdate` equals the warehouse's
(only what differs is loaded). A version read while its second was not over may be followed by another
change in the same second, with the same `lastUpdate`: the next scan must not take it for unchanged.
On the strict profile, supplier lists refuse window parameters, so supplier documents are always read
whole; the sandbox's clock is frozen so that both status changes carry one `lastUpdate`.
"""

from __future__ import annotations

from datetime import timedelta

import duckdb

from harness.warehouse_truth import mismatches
from tests.pipelines.sandbox_syncs import sync
from tests.support.sandboxes import pick


def _status(warehouse: str, document_id: str) -> str:
    with duckdb.connect(warehouse, read_only=True) as con:
        return con.execute("select status from invoicing_raw.supplier_documents where id = ?",
                           [document_id]).fetchone()[0]


def test_a_second_change_in_the_same_second_is_loaded_by_the_next_whole_scan(start_sandbox, warehouse):
    sandbox = start_sandbox(seed=5, scale=120, contract="strict")
    sync(sandbox, warehouse)
    document = pick(sandbox.portal, "supplier_documents", lambda d: d["status"] == "approved", "approved bill")
    moment = sandbox.clock.now() + timedelta(seconds=1)
    sandbox.clock.freeze(moment)
    sandbox.portal.change_supplier_document_status(document["id"], {"action": "dispute"})
    sync(sandbox, warehouse)  # reads the record while its second is not over
    assert _status(warehouse, document["id"]) == "disputed"
    sandbox.portal.change_supplier_document_status(document["id"], {"action": "approve"})  # same second
    sandbox.clock.freeze(moment + timedelta(seconds=60))
    sync(sandbox, warehouse)
    assert _status(warehouse, document["id"]) == "approved"
    sync(sandbox, warehouse, reconcile=True)
    assert mismatches(warehouse, sandbox.portal, contract="strict") == []
