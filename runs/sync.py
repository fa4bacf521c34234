"""The regular sync's run: load each portal (the extraction), remember the reads that may be incomplete, then
build (when asked) and publish through the gate (runs/gate.py). The CLI's `sync` and `sync --follow` and the
Dagster ingestion come through here, so a degraded read holds the same marts back on every path.
"""

from __future__ import annotations

from typing import Any

from pipelines.invoicing.load.portal_sync import sync_portal
from pipelines.invoicing.load.sync import SyncReport
from pipelines.invoicing.portals import Portal
from runs.gate import GateOutcome, build_and_publish, publish_checked, record_reads
from warehouse_engine.target import WarehouseTarget


def sync_and_record(target: WarehouseTarget, portal: Portal, **options: Any) -> SyncReport:
    """`sync_portal(target, portal, **options)`, then its degraded reads recorded for the gate (a reconcile or a
    full refresh is a full read: it clears what it read cleanly). Raises what the sync raises (nothing
    recorded then: a failed sync's committed chunks are read again by the next run)."""
    report = sync_portal(target, portal, **options)
    record_reads(target, portal.name, report.degraded_notes,
                 full_read=bool(options.get("reconcile") or options.get("full_refresh")))
    return report


def publish_sync(target: WarehouseTarget, note: str, *, with_models: bool, changed: bool,
                 behind: bool) -> GateOutcome:
    """After the portals' syncs: every model built and published through the gate (`with_models`, as the
    Dagster sync job does), or what is built published once the blocking checks pass."""
    if with_models and (changed or behind):
        return build_and_publish(target, note=note, changed=changed, behind=behind)
    return publish_checked(target, note=note, changed=changed, behind=behind)
