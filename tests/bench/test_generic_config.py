"""The benchmark's own parts: the generic rest_api contender loads a sandbox exactly (so the comparison is
fair), and the missing/duplicate counter and the minimum-request count are right on hand-built cases."""

from __future__ import annotations

import time
from datetime import datetime, timezone

import duckdb
import pytest

from bench import ground_truth
from bench.compare_generic import change_records
from bench.generic_rest_api import make_generic_pipeline, run_generic
from bench.ground_truth import minimum_requests
from harness import warehouse_truth
from harness.warehouse_truth import compare_records


def _stamp(second: int) -> str:
    return datetime.fromtimestamp(1_700_000_000 + second, timezone.utc).strftime("%Y-%m-%dT%H:%M:%SZ")


def test_counter_counts_missing_duplicated_stale_and_unexpected_rows():
    truth = [
        {"id": "a", "lastUpdate": _stamp(10)},
        {"id": "b", "lastUpdate": _stamp(20)},
        {"id": "c", "lastUpdate": _stamp(30)},  # never loaded: missing
        {"id": "d", "lastUpdate": _stamp(40), "deleted": True},  # soft-deleted upstream, marked in the row
        {"id": "g", "lastUpdate": _stamp(50)},  # row marked deleted although the record lives: missing
    ]
    marked = datetime(2026, 1, 1, tzinfo=timezone.utc)
    loaded = [
        ("a", _stamp(10), None),
        ("a", _stamp(10), None),  # a second row for a: one duplicate
        ("b", _stamp(19), None),  # one second older than upstream: stale
        ("d", _stamp(40), marked),
        ("e", _stamp(5), None),  # gone upstream, not marked: unexpected
        ("f", _stamp(5), marked),  # gone upstream and marked: fine
        ("g", _stamp(50), marked),
    ]
    check = compare_records("documents", truth, loaded)
    assert (check.expected, check.rows) == (5, 7)
    assert (check.missing, check.duplicated, check.stale, check.unexpected) == (2, 1, 1, 1)
    assert not check.exact


def test_counter_reads_a_duckdb_table_with_and_without_deleted_column(tmp_path):
    db_path = tmp_path / "hand.duckdb"
    with duckdb.connect(str(db_path)) as con:
        con.execute("create schema invoicing_raw")
        con.execute("create table invoicing_raw.items (id varchar, last_update timestamptz)")
        con.execute(
            "insert into invoicing_raw.items values ('x', '2024-05-01 10:00:00+00'), "
            "('y', '2024-05-01 10:00:00+00'), ('y', '2024-05-01 10:00:01+00')"
        )
    truth = [
        {"id": "x", "lastUpdate": "2024-05-01T10:00:00Z"},
        {"id": "y", "lastUpdate": "2024-05-01T10:00:01Z"},
        {"id": "z", "lastUpdate": "2024-05-01T10:00:02Z"},
    ]
    check = warehouse_truth.check_table(db_path, "items", truth)
    # y's newest row is current, so y is duplicated but not stale; z is missing
    assert (check.missing, check.duplicated, check.stale, check.unexpected) == (1, 1, 0, 0)
    absent = warehouse_truth.check_table(db_path, "customers", truth)
    assert (absent.rows, absent.missing) == (0, 3)


def test_minimum_requests_counts_pages_end_checks_singles_token_and_events():
    def records(n: int, second: int = 0) -> list[dict]:
        return [{"id": f"{i:024x}", "lastUpdate": _stamp(second)} for i in range(n)]

    truth = {resource: [] for resource in ground_truth.ALL_RESOURCES}
    truth.update(documents=records(250), customers=records(100), supplier_documents=records(3),
                 user=[{"id": "u"}], portal=[{"id": "p", "lastUpdate": _stamp(0)}])
    # token 1 + user, portal 2 + documents 3 (2 full pages, 1 short) + customers 2 (1 full, 1 empty)
    # + 5 other lists with one (short) page each, supplier documents included + 3 event histories
    assert minimum_requests(truth) == 1 + 2 + 3 + 2 + 5 + 3
    later = {**truth, "documents": records(249) + [{"id": f"{249:024x}", "lastUpdate": _stamp(9)}],
             "items": records(1, 9)}
    # changes only: 1 document, 1 new item, nothing else: every list still needs its one short page
    assert minimum_requests(later, since=truth) == 1 + 2 + 7
    assert ground_truth.changed_count(later, truth) == 2
    without_events = {name: rows for name, rows in truth.items() if name != ground_truth.EVENTS_RESOURCE}
    assert minimum_requests(without_events) == 1 + 2 + 3 + 2 + 5


@pytest.fixture
def tiny_sandbox(sandbox_factory):
    # The rate limit is off: this test checks what the generic config loads, not how it paces.
    return sandbox_factory(seed=7, scale=40, rate_limit_per_s=0)


def _draft_invoice(portal, customer_id: str) -> str:
    """A new DRAFT invoice of `customer_id` (created, never picked from the seeded data: those depend on the
    sandbox's date)."""
    item = next(iter(portal.stores["items"].records))
    return portal.create("documents", {"customerId": customer_id, "type": "INVOICE",
                                       "lines": [{"itemId": item, "quantity": 2}]})["id"]


def test_generic_rest_api_config_loads_a_tiny_sandbox_exactly(tiny_sandbox, tmp_path):
    sb = tiny_sandbox
    db_path = tmp_path / "generic.duckdb"
    customer = sb.portal.create("customers", {"name": "Generic Bench SARL"})["id"]
    paid, deleted = _draft_invoice(sb.portal, customer), _draft_invoice(sb.portal, customer)

    def sync_and_check() -> dict[str, warehouse_truth.TableCheck]:
        pipeline = make_generic_pipeline(db_path, tmp_path / "dlt")
        run_generic(pipeline, sb.base_url, sb.client_id, sb.client_secret)
        checks = warehouse_truth.check_warehouse(db_path, ground_truth.snapshot_all(sb))
        return {check.table: check for check in checks}

    checks = sync_and_check()
    assert all(check.exact for check in checks.values()), checks
    assert checks["documents"].rows == checks["documents"].expected > 0
    assert checks["supplier_document_events"].rows == checks["supplier_document_events"].expected > 0

    time.sleep(1.1)  # changes in a later second than anything loaded (dlt dedupes ids at the cursor's edge)
    before = ground_truth.snapshot_all(sb)
    sb.portal.update("customers", customer, {"name": "Generic Bench SAS"})
    sb.portal.validate_document(paid)
    sb.portal.pay_document(paid, None)
    sb.portal.delete("documents", deleted)
    change_records(sb, 5, seed=7)  # the application user's random changes (their kinds depend on the data)
    after = ground_truth.snapshot_all(sb)
    assert ground_truth.changed_count(after, before) >= 3
    checks = sync_and_check()
    # A DRAFT's deletion is a hard delete: no list shows it again, and the generic way has no delete signal, so
    # it keeps the row of each document deleted here (ours, and any the random changes deleted: which they make
    # depends on the seeded data, generated relative to the sandbox's date). That is what the benchmark's
    # `unexpected` column counts for it; everything else is exact.
    gone = {d["id"] for d in before["documents"]} - {d["id"] for d in after["documents"]}
    assert deleted in gone
    assert (checks["documents"].unexpected, checks["documents"].missing, checks["documents"].stale,
            checks["documents"].duplicated) == (len(gone), 0, 0, 0), checks["documents"]
    assert all(check.exact for table, check in checks.items() if table != "documents"), checks
