"""Lost deliveries are healed by the schedule, through the real path: the sandbox delivers every event over
HTTP to the receiver (tests/support/webhook_receiver.py) with its delivery faults on (10% lost, duplicates,
reordering; seeded); the applying run loads what was spooled, the next scheduled incremental sync loads the
rest, and the warehouse equals the sandbox's own records (harness/warehouse_truth.py). Lost deletion hints of
documents and suppliers (records no list shows again) are healed by the daily reconcile.
"""

from __future__ import annotations

import contextlib
from collections.abc import Iterator
from pathlib import Path

from hint_support import apply, quiet, scheduled_sync

from harness.hinted_changes import DELETIONS, EVENTED, HintedMutator
from harness.receiver_process import wait_until
from harness.warehouse_truth import compare_raw_tables
from pipelines.invoicing.webhooks.hint_events import EVENTS
from pipelines.invoicing.webhooks.hint_spool import HintSpool, spool_path
from tests.support.webhook_receiver import serving_receiver

LOSS = 0.10


@contextlib.contextmanager
def deliveries(sandbox, warehouse: str, *, loss: float, duplicates: float = 0.0, reorder: float = 0.0
               ) -> Iterator[list]:
    """The sandbox subscribed to a receiver spooling beside `warehouse`, with these delivery faults; on exit,
    waits (bounded) until every delivery was sent or lost, then unsubscribes. Yields the deliveries list."""
    config = sandbox.config
    config.webhook_loss_rate, config.webhook_duplicate_rate, config.webhook_reorder_rate = loss, duplicates, reorder
    sent: list = []
    with serving_receiver(Path(warehouse).parent) as served:
        subscription = sandbox.portal.create("webhooks", {"url": served.url(), "events": sorted(EVENTS)})
        yield sent
        hooks = sandbox.webhooks
        assert wait_until(lambda: hooks.idle() and all(d.delivered or d.lost for d in hooks.deliveries), 60)
        sandbox.portal.delete("webhooks", subscription["id"])
        sent += list(hooks.deliveries)
        hooks.deliveries.clear()


def test_lost_deliveries_are_healed_by_the_scheduled_sync(sandbox, tmp_path):
    warehouse = str(tmp_path / "warehouse.duckdb")
    scheduled_sync(sandbox, warehouse)
    with deliveries(sandbox, warehouse, loss=LOSS, duplicates=0.1, reorder=0.1) as sent:
        HintedMutator(sandbox.portal, 0, seed=17, without=DELETIONS).steps(45)
    lost = sum(d.lost for d in sent)
    assert lost > 0 and len(sent) > 5 * lost
    run = apply(sandbox, warehouse)
    assert run.acknowledged == run.hints
    # A lost delivery's record is often announced again by a later change (a small portal's mutations come
    # back to the same records), and then the hints alone heal it. Changes whose every delivery is lost
    # leave the warehouse behind for sure, until the schedule.
    with deliveries(sandbox, warehouse, loss=1.0) as unannounced:
        HintedMutator(sandbox.portal, 0, seed=23, without=DELETIONS).steps(3)
    assert unannounced and all(d.lost for d in unannounced)
    assert apply(sandbox, warehouse).hints == 0
    quiet(sandbox)
    assert compare_raw_tables(warehouse, sandbox.portal).mismatches != []
    scheduled_sync(sandbox, warehouse)
    comparison = compare_raw_tables(warehouse, sandbox.portal)
    assert comparison.mismatches == [], comparison.summary()

    with deliveries(sandbox, warehouse, loss=1.0):  # every deletion's delivery lost
        kinds = HintedMutator(sandbox.portal, 0, seed=19, without=frozenset(EVENTED) - DELETIONS).steps(6)
    assert set(kinds) & {"delete_draft", "delete_supplier"}
    quiet(sandbox)
    scheduled_sync(sandbox, warehouse, reconcile=True)
    comparison = compare_raw_tables(warehouse, sandbox.portal)
    assert comparison.mismatches == [], comparison.summary()
    with HintSpool(spool_path(warehouse)) as spool:
        assert spool.pending_count() == 0
