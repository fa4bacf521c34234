"""At least once: an applying run SIGKILLed after its warehouse commit, or after publishing, but before
acknowledging, leaves every hint pending; the next run applies them again; the warehouse then equals the
sandbox's own records with no duplicate row (harness/warehouse_truth.py).

The same with the spool in PostgreSQL (INVOICING_HINT_SPOOL, the session's real server), the applying run a
process of its own: the `soak` run (`pytest -m soak`), since the default run's budget holds the cheaper
cross-host test of the PostgreSQL spool (test_spool_across_hosts.py)."""

from __future__ import annotations

import subprocess
import sys

import pytest
from hint_support import apply, scheduled_sync

from harness.hint_crash import STEPS
from harness.hinted_changes import HintedMutator
from harness.sync_process import Workspace
from harness.warehouse_truth import compare_raw_tables
from invoicing_warehouse.demo.hint_feed import ListenerFeed
from invoicing_warehouse.engine.target import WarehouseTarget
from pipelines.invoicing.webhooks.hint_spool import (
    SPOOL_ENV,
    SPOOL_PASSWORD_ENV,
    HintSpool,
    spool_location_for,
)


def _pending(warehouse: str) -> set[tuple]:
    with HintSpool(spool_location_for(WarehouseTarget.duckdb_file(warehouse))) as spool:
        return {(h.resource, h.record_id, h.sequence) for h in spool.pending()}


@pytest.fixture(params=["file", pytest.param("postgresql", marks=pytest.mark.soak)])
def spool_kind(request, monkeypatch) -> str:
    """Where the spool is: beside the warehouse, or in a database of the session's PostgreSQL."""
    if request.param == "postgresql":
        cluster = request.getfixturevalue("postgres_cluster")
        monkeypatch.setenv(SPOOL_ENV, cluster.create_database(f"hint_crash_{len(request.node.name)}"))
        monkeypatch.setenv(SPOOL_PASSWORD_ENV, cluster.password)
    else:
        monkeypatch.delenv(SPOOL_ENV, raising=False)
    return request.param


def test_a_run_killed_before_its_acknowledgement_loses_no_hint(sandbox, tmp_path, spool_kind):
    warehouse = str(tmp_path / "warehouse.duckdb")
    scheduled_sync(sandbox, warehouse)
    feed = ListenerFeed(sandbox.portal, spool_location_for(WarehouseTarget.duckdb_file(warehouse))).start()
    try:
        HintedMutator(sandbox.portal, 0, seed=16).steps(30)
    finally:
        feed.stop()
    pending = _pending(warehouse)
    assert len(pending) >= 10
    env = Workspace(tmp_path).env(sandbox.base_url, sandbox.client_id, sandbox.client_secret)
    if spool_kind == "postgresql":
        assert SPOOL_ENV in env and not (tmp_path / "warehouse.hints.sqlite").exists()  # the killed run reads PG
    for step in (STEPS[0], STEPS[-1]):  # after the warehouse commit; after publication
        killed = subprocess.run([sys.executable, "-m", "harness.hint_crash", warehouse, step], env=env,
                                capture_output=True, text=True, timeout=120, check=False)
        assert killed.returncode == -9 and f"killed at {step}" in killed.stdout, killed.stderr[-2000:]
        assert _pending(warehouse) == pending
    run = apply(sandbox, warehouse)
    assert run.acknowledged == len(pending) and _pending(warehouse) == set()
    comparison = compare_raw_tables(warehouse, sandbox.portal)
    assert comparison.mismatches == [] and comparison.records_compared > 100
