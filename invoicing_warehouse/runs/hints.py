"""The applying run of webhook hints, one portal: the Dagster hints job and `sync --follow` both run it.

Order (at least once, a crash anywhere loses nothing):
1. read the portal's pending hints from the spool (nothing pending: nothing opened, nothing written);
2. mark the readers' copy behind, then fetch the hinted records and merge them
   (pipelines/invoicing/webhooks/hint_apply.py: by id, deletions confirmed, newest `lastUpdate` wins) -- the warehouse
   commit;
3. rebuild the SQL models downstream of the raw tables that changed (sql_runner.downstream_models; every model
   when the last build was of another report date) and publish them through the gate (invoicing_warehouse/runs/gate.py):
   the blocking checks run first, and a failure publishes nothing;
4. only then acknowledge the hints (a hint delivered again meanwhile stays pending). Hints whose build the gate
   held back are acknowledged too: their rows are in the warehouse, and the gate's state, not the spool, keeps
   what readers still miss (the next build that passes publishes them).
A hint the API refused alone (hint_apply.py) is set aside right after the load (dead_letters.py: retried later,
then kept dead) and never holds its batch back. A "re-read this resource" hint (a flood collapsed at the
spool's bound, hint_spool.py) is applied by an incremental read of that resource
(invoicing_warehouse/runs/sync.sync_and_record, the regular sync's own read, its degraded reads recorded for the gate),
which acknowledges every hint of the resource delivered before it began.
A run killed before 5 leaves its hints pending: the next run fetches and merges them again, which the
merge on (portal_id, id) makes idempotent. The caller keeps the single writer rule: one writing run per
warehouse at a time (the Dagster run queue's tag, or the one `sync --follow` process).
"""

from __future__ import annotations

import time
from collections.abc import Callable
from dataclasses import dataclass, field
from datetime import date

from invoicing_warehouse.engine.connection import one_instance
from invoicing_warehouse.engine.lake_lock import SHARED, lake_lock
from invoicing_warehouse.engine.readers import mark_unpublished
from invoicing_warehouse.engine.sql_runner import MissingRawTableError, downstream_models
from invoicing_warehouse.engine.target import WarehouseTarget
from invoicing_warehouse.runs.gate import GateOutcome, build_and_publish, publish_checked
from invoicing_warehouse.runs.sync import sync_and_record
from pipelines.invoicing.credentials import ApiSettings
from pipelines.invoicing.http.client import InvoicingClient
from pipelines.invoicing.http.client_settings import ClientSettings
from pipelines.invoicing.load.portal_sync import DEFAULT_RATE_LIMIT, portal_settings
from pipelines.invoicing.load.sync import SyncReport, make_pipeline
from pipelines.invoicing.portals import Portal
from pipelines.invoicing.webhooks.hint_apply import PAYMENT_TABLES, HintLoad, load_hints
from pipelines.invoicing.webhooks.hint_spool import Hint, HintSpool, spool_location_for

HINTS_PER_RUN = 500  # a burst beyond this is applied over several runs, each committed and acknowledged


def spool_for(target: WarehouseTarget) -> HintSpool:
    """The warehouse's hints spool (hint_spool.spool_location_for): `<stem>.hints.sqlite` beside the DuckDB file,
    or a DuckLake's PostgreSQL catalog database."""
    return HintSpool(spool_location_for(target))


@dataclass
class HintRun:
    """What one applying run did."""

    portal: str
    hints: int = 0
    load: HintLoad | None = None
    reread: SyncReport | None = None  # the incremental read of the resources a flood collapsed into
    reread_resources: list[str] = field(default_factory=list)
    set_aside: int = 0  # hints the API refused alone, left for a later attempt or kept dead
    dead: int = 0  # of those, the ones that died now (dead_letters.py)
    models: dict[str, int] = field(default_factory=dict)
    published: str | None = None
    gate: GateOutcome | None = None  # what the gate held back, if anything
    acknowledged: int = 0
    waiting: str | None = None  # why the hints were left pending (e.g. no first sync yet)
    seconds: float = 0.0
    load_s: float = 0.0  # the fetch and the load (re-read included), wall seconds
    waited_s: float = 0.0  # from the oldest hint's arrival in the spool to this run's start

    def line(self) -> str:
        """One line for a terminal or a run log (no secret: counts and table names only)."""
        if not self.hints:
            return f"hints {self.portal}: none pending"
        if self.waiting:
            return f"hints {self.portal}: {self.hints} left pending: {self.waiting}"
        load = self.load or HintLoad([])
        rows = sum(self.rows.values())
        gone = sum(len(ids) for ids in load.tombstoned.values())
        held = "" if self.gate is None or self.gate.ok else "; " + "; ".join(self.gate.lines())
        reread = (f"; re-read {', '.join(self.reread_resources)} ({self.reread.total_requests} requests)"
                  if self.reread is not None else "")
        aside = f"; {self.set_aside} set aside ({self.dead} now dead letters)" if self.set_aside else ""
        return (f"hints {self.portal}: {self.hints} applied in {self.seconds:.1f} s: {load.windowed} read by "
                f"window, {load.fetched} fetched by id, {rows} rows loaded, {gone} deleted, {load.stale} stale "
                f"skipped, {load.requests} requests, "
                f"{len(self.models)} models rebuilt, {self.acknowledged} acknowledged{reread}{aside}{held}"
                f"; {self.phases()}")

    def phases(self) -> str:
        """Where the time went (wall seconds): waiting in the spool, then each step of the run."""
        steps = {"load": self.load_s, **(self.gate.seconds if self.gate is not None else {})}
        return (f"waited {self.waited_s:.2f} s in the spool; "
                + ", ".join(f"{name} {seconds:.2f}" for name, seconds in steps.items()) + " s")

    @property
    def rows(self) -> dict[str, int]:
        """Rows loaded per raw table (child tables included), by the hints' fetches and the re-read."""
        rows = dict(self.load.rows) if self.load is not None else {}
        for table, count in (self.reread.rows if self.reread is not None else {}).items():
            rows[table] = rows.get(table, 0) + count
        return rows

    @property
    def changed_tables(self) -> set[str]:
        """Raw tables whose rows this run changed (child tables included)."""
        changed = set(self.load.changed_tables) if self.load is not None else set()
        if self.reread is not None:
            report = self.reread
            changed |= {table for table, count in report.rows.items() if count}
            changed |= {table for table, count in report.tombstoned.items() if count} | set(report.created)
            if report.finished_pending:  # a killed run's rows of unknown tables: the resources read
                changed |= set(self.reread_resources)
        return changed


def hint_client(portal: Portal, *, settings: ApiSettings | None = None,
                rate_limit_per_s: float | None = None) -> InvoicingClient:
    """The API client of the portal's applying runs (read scope, the host's shared rate budget, the token the
    last run kept)."""
    settings = settings or portal_settings(portal)
    if rate_limit_per_s is None:
        rate_limit_per_s = portal.rate_limit_per_s if portal.rate_limit_per_s is not None else DEFAULT_RATE_LIMIT
    return InvoicingClient(ClientSettings.of(settings, rate_limit_per_s=rate_limit_per_s, keep_token=True))


def apply_pending(target: WarehouseTarget, portal: Portal, *, settings: ApiSettings | None = None,
                  rate_limit_per_s: float | None = None, limit: int = HINTS_PER_RUN,
                  on_step: Callable[[str], None] | None = None, client: InvoicingClient | None = None,
                  as_of: date | None = None) -> HintRun:
    """Applies the portal's pending hints (at most `limit`) to the warehouse `target`; returns what it did.

    `on_step(name)` is called after `fetched+loaded` (the warehouse commit), `models` and `published`,
    before the acknowledgement: progress for a caller, and the seams the crash tests kill at.
    `client`: the portal's client, kept open by a caller that applies hints again and again (`sync --follow`):
    its token serves every run instead of a token request per run. Without it, one is opened and closed
    here (`settings`, `rate_limit_per_s`: see hint_client). `as_of`: the report date of the models it rebuilds
    (default today in the portal's zone, as every build's).
    Raises InvoicingApiError (the hints stay pending) or what the models raise.
    """
    started = time.monotonic()
    run = HintRun(portal.name)
    with spool_for(target) as spool:
        hints = spool.pending(portal.name, limit)
        run.hints = len(hints)
        if not hints:
            return run
        run.waited_s = max(0.0, time.time() - min(hint.received_at for hint in hints))
        whole = sorted({hint.resource for hint in hints if hint.whole_resource})
        by_id = [hint for hint in hints if not hint.whole_resource and hint.resource not in whole]
        through = spool.last_sequence()  # the re-read sees every change delivered up to here
        behind = mark_unpublished(target)
        if whole:
            run.reread_resources = reread_resources(whole)
            run.reread = sync_and_record(target, portal, resources=run.reread_resources, settings=settings,
                                         rate_limit_per_s=rate_limit_per_s)
        # one DuckDB instance of the file from the load to the publication (connection.one_instance); the
        # re-read above opens the file read-only too, so it stays outside
        with one_instance(target) as held:
            if by_id:
                with lake_lock(target, SHARED):  # a DuckLake's build and publication wait until the merge is whole
                    run.load = _load(target, portal, by_id, settings, rate_limit_per_s, client)
                _set_aside(spool, portal, run)
            held.restore_settings()  # dlt's connections set the instance's TimeZone: the SQL below sees the usual one
            run.load_s = time.monotonic() - started
            _step(on_step, "loaded")
            changed = run.changed_tables
            note = f"hints {portal.name}"
            if changed:
                try:
                    run.gate = build_and_publish(target, note=note, select=downstream_models(changed),
                                                 portals=[portal.name], behind=behind, as_of=as_of)
                except MissingRawTableError as missing:
                    # hints before the first sync: the models cannot be built yet; the sync will load it all
                    run.waiting = str(missing)
                    return run
                run.models = run.gate.models
            else:
                run.gate = publish_checked(target, note=note, changed=False, behind=behind, as_of=as_of)
            _step(on_step, "models")
            run.published = run.gate.published
            _step(on_step, "published")
            failed = {(hint.resource, hint.record_id) for hint, _, _ in (run.load.failed if run.load else [])}
            run.acknowledged = spool.acknowledge(hint for hint in by_id
                                                 if (hint.resource, hint.record_id) not in failed)
            for resource in whole:
                run.acknowledged += spool.acknowledge_resource(portal.name, resource, through)
    run.seconds = time.monotonic() - started
    return run


def reread_resources(resources: list[str]) -> list[str]:
    """What an incremental read must cover for re-read hints of `resources`: a document's payments may have
    changed with it (as hint_apply reads the payments window after a document hint); a supplier document's
    status history is read with it by the sync itself."""
    chosen = list(resources)
    if "documents" in chosen:
        chosen += [name for name in PAYMENT_TABLES if name not in chosen]
    return chosen


def _load(target: WarehouseTarget, portal: Portal, hints: list[Hint], settings: ApiSettings | None,
          rate_limit_per_s: float | None, client: InvoicingClient | None) -> HintLoad:
    if client is not None:
        return load_hints(make_pipeline(target, portal.name), client, hints)
    with hint_client(portal, settings=settings, rate_limit_per_s=rate_limit_per_s) as own:
        return load_hints(make_pipeline(target, portal.name), own, hints)


def _set_aside(spool: HintSpool, portal: Portal, run: HintRun) -> None:
    """The hints the API refused alone counted (retried later or kept dead), and the portal's API id the
    records carried kept for the receiver's check; both before the models, which cannot change them."""
    assert run.load is not None
    if run.load.failed:
        run.set_aside = len(run.load.failed)
        run.dead = spool.set_aside(run.load.failed)
    if run.load.api_portal_id is not None:
        spool.learn_portal(portal.name, run.load.api_portal_id)


def _step(on_step: Callable[[str], None] | None, name: str) -> None:
    if on_step is not None:
        on_step(name)
