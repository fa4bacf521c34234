"""Lost hints are healed by the schedule: with 10% of the hints lost (seeded), the applying run loads what
it was told, the next scheduled incremental sync loads the rest, and the warehouse equals the sandbox's own
records (harness/warehouse_truth.py). Lost deletion hints of documents and suppliers (records no list shows
again) are healed by the daily reconcile.

The hints come from the sandbox's events through `start_feed`: the one place to swap for the sandbox's
delivery loss fault through the real receiver (the spool and the applying run stay as they are).
"""

from __future__ import annotations

from hint_support import apply, quiet, scheduled_sync

from harness.hinted_changes import DELETIONS, EVENTED, HintedMutator
from harness.warehouse_truth import compare_raw_tables
from invoicing_warehouse.hint_feed import ListenerFeed
from pipelines.invoicing.hint_spool import HintSpool, spool_path

LOSS = 0.10


def start_feed(sandbox, warehouse: str, drop: float, seed: int) -> ListenerFeed:
    """Hints of the sandbox's events into the warehouse's spool, `drop` of them lost (seeded)."""
    return ListenerFeed(sandbox.portal, spool_path(warehouse), drop=drop, seed=seed).start()


def test_lost_hints_are_healed_by_the_scheduled_sync(sandbox, tmp_path):
    warehouse = str(tmp_path / "warehouse.duckdb")
    scheduled_sync(sandbox, warehouse)
    feed = start_feed(sandbox, warehouse, LOSS, seed=16)
    try:
        HintedMutator(sandbox.portal, 0, seed=17, without=DELETIONS).steps(45)
    finally:
        feed.stop()
    assert feed.dropped > 0 and feed.spooled > 5 * feed.dropped
    run = apply(sandbox, warehouse)
    assert run.acknowledged == run.hints
    quiet(sandbox)
    # the lost hints' records are behind (a record hinted again by a later change is not)
    assert compare_raw_tables(warehouse, sandbox.portal).mismatches != []
    scheduled_sync(sandbox, warehouse)
    comparison = compare_raw_tables(warehouse, sandbox.portal)
    assert comparison.mismatches == [], comparison.summary()

    feed = start_feed(sandbox, warehouse, 1.0, seed=18)  # every deletion hint lost
    try:
        kinds = HintedMutator(sandbox.portal, 0, seed=19, without=frozenset(EVENTED) - DELETIONS).steps(6)
    finally:
        feed.stop()
    assert set(kinds) & {"delete_draft", "delete_supplier"}
    quiet(sandbox)
    scheduled_sync(sandbox, warehouse, reconcile=True)
    comparison = compare_raw_tables(warehouse, sandbox.portal)
    assert comparison.mismatches == [], comparison.summary()
    with HintSpool(spool_path(warehouse)) as spool:
        assert spool.pending_count() == 0
