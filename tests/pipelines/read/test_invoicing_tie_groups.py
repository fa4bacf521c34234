"""Paging exact without a stable tie order: same-second groups larger than a page, shuffled on every request.

The sandbox serves records of equal `lastUpdate` in a new order on every request (`tie_order="shuffled"`)
and at most 50 per page, so any `skip` into a same-second group across requests may skip or repeat
records. The truth is the sandbox's own records: the raw ids must equal them exactly, no loss, no twice.
"""

from __future__ import annotations

from dataclasses import replace
from datetime import timedelta

import duckdb
import pytest

from harness.warehouse_truth import mismatches
from invoicing_sandbox.contract import ContractProfile
from invoicing_sandbox.generator import generate
from tests.pipelines.sandbox_syncs import quiet, sync

GROUP = 160  # > 3 pages of 50 sharing one second
SHUFFLED = replace(ContractProfile.default(), tie_order="shuffled", max_page_size=50)


@pytest.fixture
def tied_sandbox(sandbox_factory):
    """A sandbox whose documents hold GROUP drafts written in one second, ties shuffled, pages of 50."""

    def tied_history(server) -> None:
        server.generated = generate(server.portal, 4, 80, end=server.clock.today(), bulk_same_second=GROUP)

    return sandbox_factory(seed=4, scale=80, rate_limit_per_s=0, latency_ms=0, contract=SHUFFLED, generate=False,
                           real_date=True, quiet=True, before_start=tied_history)


def raw_ids(warehouse: str, table: str) -> list[str]:
    con = duckdb.connect(warehouse, read_only=True)
    try:
        return [row[0] for row in con.execute(f"select id from invoicing_raw.{table}").fetchall()]
    finally:
        con.close()


def assert_exact(warehouse: str, sandbox, table: str = "documents") -> None:
    ids = raw_ids(warehouse, table)
    truth = {record["id"] for record in sandbox.portal.snapshot(table)}
    assert len(ids) == len(set(ids)), "a record was loaded twice"
    assert set(ids) == truth, f"{len(truth - set(ids))} missing, {len(set(ids) - truth)} extra"
    assert mismatches(warehouse, sandbox.portal, tables=(table,)) == []


def same_second_groups(sandbox, table: str = "documents") -> int:
    seconds: dict[str, int] = {}
    for record in sandbox.portal.snapshot(table):
        seconds[record["lastUpdate"]] = seconds.get(record["lastUpdate"], 0) + 1
    return max(seconds.values())


def test_a_first_sync_reads_a_shuffled_group_larger_than_a_page_exactly(tied_sandbox, warehouse):
    assert same_second_groups(tied_sandbox) >= GROUP
    report = sync(tied_sandbox, warehouse, resources=["documents"])
    assert_exact(warehouse, tied_sandbox)
    assert any("share lastUpdate" in note for note in report.notes), report.notes


def test_a_reconcile_full_read_of_a_shuffled_group_is_exact(tied_sandbox, warehouse):
    sync(tied_sandbox, warehouse, resources=["documents"])
    report = sync(tied_sandbox, warehouse, resources=["documents"], reconcile=True)
    assert_exact(warehouse, tied_sandbox)
    assert report.records_read["documents"] >= len(tied_sandbox.portal.snapshot("documents"))


def test_an_incremental_sync_reads_a_group_written_in_one_second_exactly(tied_sandbox, warehouse):
    sync(tied_sandbox, warehouse, resources=["documents"])
    portal = tied_sandbox.portal
    customer = portal.snapshot("customers")[0]
    item = portal.snapshot("items")[0]
    moment = tied_sandbox.clock.now().replace(microsecond=0) + timedelta(seconds=2)
    tied_sandbox.clock.freeze(moment)
    for _ in range(GROUP):
        portal.create("documents", {"customerId": customer["id"], "type": "INVOICE", "status": "DRAFT",
                                    "lines": [{"itemId": item["id"], "quantity": 1}]})
    tied_sandbox.clock.unfreeze()
    tied_sandbox.clock.advance(timedelta(seconds=10))  # past the frozen second, whatever unfreeze kept
    quiet(tied_sandbox)
    second = moment.strftime("%Y-%m-%dT%H:%M:%S")
    assert sum(1 for r in portal.snapshot("documents") if r["lastUpdate"].startswith(second)) == GROUP
    sync(tied_sandbox, warehouse, resources=["documents"])
    assert_exact(warehouse, tied_sandbox)
