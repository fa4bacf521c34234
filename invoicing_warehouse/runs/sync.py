"""The regular sync's run, written once: readers marked behind, each portal loaded (the extraction) with the
reads that may be incomplete remembered, then built (when asked) and published through the gate
(invoicing_warehouse/runs/gate.py). The CLI's `sync` and `sync --follow` run `sync_and_publish`; the Dagster ingestion
runs `sync_and_record` per portal and its publication sensors `publish_checked`, so a degraded read holds the same
marts back on every path.
"""

from __future__ import annotations

from collections.abc import Callable
from dataclasses import dataclass
from typing import Any

from invoicing_warehouse.engine.connection import scrub
from invoicing_warehouse.engine.lake_lock import SHARED, lake_lock
from invoicing_warehouse.engine.readers import mark_unpublished
from invoicing_warehouse.engine.target import WarehouseTarget
from invoicing_warehouse.runs.gate import GateOutcome, build_and_publish, publish_checked, record_reads
from invoicing_warehouse.runs.run_log import clear_failure, record_failure, record_sync, standing_notes_once
from invoicing_warehouse.runs.schema_notices import notices_once
from pipelines.invoicing.load.portal_sync import PortalOutcome, sync_portal
from pipelines.invoicing.load.sync import SyncReport
from pipelines.invoicing.portals import Portal


def sync_and_record(target: WarehouseTarget, portal: Portal, **options: Any) -> SyncReport:
    """`sync_portal(target, portal, **options)`, then its degraded reads recorded for the gate (a reconcile or a
    full refresh is a full read: it clears what it read cleanly). On a DuckLake the load holds the lake's lock
    shared (invoicing_warehouse/engine/lake_lock.py). The sync is recorded for the status
    (invoicing_warehouse/runs/run_log.py), and a field the ledger does not know is noted once
    (invoicing_warehouse/runs/schema_notices.py). A list whose read failed alone (`report.failed`) is recorded too: the
    gate holds the marts built on it until a run reads it again. Raises what the sync raises (nothing recorded then: a
    failed sync's committed chunks are read again by the next run)."""
    try:
        with lake_lock(target, SHARED):  # a DuckLake's build and publication wait until this load is whole
            report = sync_portal(target, portal, **options)
    except Exception as error:
        # what the alerts announce (invoicing_warehouse/runs/alerts.py) until a sync of this portal succeeds
        record_failure(target, f"sync:{portal.name}", scrub(str(error) or type(error).__name__, target))
        raise
    clear_failure(target, f"sync:{portal.name}")
    record_reads(target, portal.name, report.degraded_notes,
                 full_read=bool(options.get("reconcile") or options.get("full_refresh")),
                 failed=report.failed, read=report.tables)
    # what the status reads (invoicing_warehouse/runs/status.py): a run that changed nothing is a successful sync too
    record_sync(target, portal.name, sum(report.rows.values()))
    report.notes.extend(notices_once(target))  # a new field is said once, not on every run
    # a condition of the account (a scope not granted) is said when it appears or comes back, not on every run
    repeated = set(report.standing_notes) - set(standing_notes_once(target, portal.name, report.standing_notes))
    report.notes = [note for note in report.notes if note not in repeated]
    return report


@dataclass
class SyncRun:
    """What one regular sync of several portals did: each portal's outcome, and the gate's answer (None when
    no portal synced, so nothing was published)."""

    outcomes: list[PortalOutcome]
    gate: GateOutcome | None

    @property
    def changed(self) -> bool:
        """True when a portal's run changed a row."""
        return any(o.report is not None and o.report.changed_data for o in self.outcomes)


def sync_and_publish(target: WarehouseTarget, portals: list[Portal],
                     sync_one: Callable[[Portal], PortalOutcome], *, with_models: bool) -> SyncRun:
    """The regular sync of `portals`, one after another (one writer per DuckDB file), then publication.

    `sync_one(portal)` is the caller's sync of one portal through `sync_and_record` (its progress, its error
    handling): it returns the portal's outcome, `error` set when it failed. When at least one portal synced,
    every model is built and published through the gate (`with_models`, as the Dagster sync job does; only
    when data changed or readers were behind), or what is built is published once the blocking checks pass.
    The extraction only loads; the readers' copy is skipped when no run changed a row and readers were
    current before it."""
    behind = mark_unpublished(target)
    outcomes = [sync_one(portal) for portal in portals]
    run = SyncRun(outcomes, gate=None)
    if any(outcome.ok for outcome in outcomes):
        run.gate = _publish(target, "sync " + ", ".join(p.name for p in portals), with_models=with_models,
                            changed=run.changed, behind=behind)
    return run


def _publish(target: WarehouseTarget, note: str, *, with_models: bool, changed: bool,
                 behind: bool) -> GateOutcome:
    """After the portals' syncs: every model built and published through the gate (`with_models`), or what is
    built published once the blocking checks pass."""
    if with_models and (changed or behind):
        return build_and_publish(target, note=note, changed=changed, behind=behind)
    return publish_checked(target, note=note, changed=changed, behind=behind)
