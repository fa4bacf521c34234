"""At least once: an applying run SIGKILLed after its warehouse commit, or after publishing, but before
acknowledging, leaves every hint pending; the next run applies them again; the warehouse then equals the
sandbox's own records with no duplicate row (harness/warehouse_truth.py)."""

from __future__ import annotations

import subprocess
import sys

from hint_support import apply, scheduled_sync

from harness.hint_crash import STEPS
from harness.hinted_changes import HintedMutator
from harness.sync_process import Workspace
from harness.warehouse_truth import compare_raw_tables
from demo.hint_feed import ListenerFeed
from pipelines.invoicing.webhooks.hint_spool import HintSpool, spool_path


def _pending(warehouse: str) -> set[tuple]:
    with HintSpool(spool_path(warehouse)) as spool:
        return {(h.resource, h.record_id, h.sequence) for h in spool.pending()}


def test_a_run_killed_before_its_acknowledgement_loses_no_hint(sandbox, tmp_path):
    warehouse = str(tmp_path / "warehouse.duckdb")
    scheduled_sync(sandbox, warehouse)
    feed = ListenerFeed(sandbox.portal, spool_path(warehouse)).start()
    try:
        HintedMutator(sandbox.portal, 0, seed=16).steps(30)
    finally:
        feed.stop()
    pending = _pending(warehouse)
    assert len(pending) >= 10
    env = Workspace(tmp_path).env(sandbox.base_url, sandbox.client_id, sandbox.client_secret)
    for step in (STEPS[0], STEPS[-1]):  # after the warehouse commit; after publication
        killed = subprocess.run([sys.executable, "-m", "harness.hint_crash", warehouse, step], env=env,
                                capture_output=True, text=True, timeout=120, check=False)
        assert killed.returncode == -9 and f"killed at {step}" in killed.stdout, killed.stderr[-2000:]
        assert _pending(warehouse) == pending
    run = apply(sandbox, warehouse)
    assert run.acknowledged == len(pending) and _pending(warehouse) == set()
    comparison = compare_raw_tables(warehouse, sandbox.portal)
    assert comparison.mismatches == [] and comparison.records_compared > 100
