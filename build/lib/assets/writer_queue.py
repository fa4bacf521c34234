"""The single writer rule in Dagster's run queue: the tag every writing run carries, and who waits for it.

Every writing job (sync, reconcile, webhook hints) carries WAREHOUSE_TAG with the warehouse's path as value;
dagster.yaml lets the run queue start one run per value at a time, because DuckDB allows one writing process
per file.
"""

from __future__ import annotations

from dagster import DagsterInstance, DagsterRun, DagsterRunStatus, RunsFilter

from assets.run_tags import PORTAL_TAG

WAREHOUSE_TAG = "invoicing-warehouse/warehouse"
# queued, or launched but not yet working: each will want the warehouse next
WAITING = [DagsterRunStatus.QUEUED, DagsterRunStatus.NOT_STARTED, DagsterRunStatus.STARTING]


def waiting_writer(instance: DagsterInstance, warehouse_path: str, portal: str | None = None) -> DagsterRun | None:
    """A writing run of the warehouse at `warehouse_path` (of `portal` only, when given) that waits for its
    turn, if any."""
    tags = {WAREHOUSE_TAG: warehouse_path} if portal is None else {WAREHOUSE_TAG: warehouse_path, PORTAL_TAG: portal}
    runs = instance.get_runs(RunsFilter(tags=tags, statuses=WAITING), limit=1)
    return runs[0] if runs else None
