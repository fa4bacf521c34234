"""The applying run of webhook hints, one portal: the Dagster hints job and `sync --follow` both run it.

Order (at least once, a crash anywhere loses nothing):
1. read the portal's pending hints from the spool (nothing pending: nothing opened, nothing written);
2. mark the readers' copy behind, then fetch the hinted records and merge them (pipelines/invoicing/webhooks/hint_apply.py:
   by id, deletions confirmed, newest `lastUpdate` wins) -- the warehouse commit;
3. rebuild the SQL models downstream of the raw tables that changed (sql_runner.downstream_models; every model
   when the last build was of another report date) and publish them through the gate (runs/gate.py): the
   blocking checks run first, and a failure publishes nothing;
4. only then acknowledge the hints (a hint delivered again meanwhile stays pending). Hints whose build the gate
   held back are acknowledged too: their rows are in the warehouse, and the gate's state, not the spool, keeps
   what readers still miss (the next build that passes publishes them).
A run killed before 5 leaves its hints pending: the next run fetches and merges them again, which the
merge on (portal_id, id) makes idempotent. The caller keeps the single writer rule: one writing run per
warehouse at a time (the Dagster run queue's tag, or the one `sync --follow` process).
"""

from __future__ import annotations

import time
from collections.abc import Callable
from dataclasses import dataclass, field

from pipelines.invoicing.credentials import ApiSettings
from pipelines.invoicing.http.client import InvoicingClient
from pipelines.invoicing.load.portal_sync import DEFAULT_RATE_LIMIT, portal_settings
from pipelines.invoicing.load.sync import make_pipeline
from pipelines.invoicing.portals import Portal
from pipelines.invoicing.webhooks.hint_apply import HintLoad, load_hints
from pipelines.invoicing.webhooks.hint_spool import HintSpool
from runs.gate import GateOutcome, build_and_publish, publish_checked
from warehouse_engine.lake_lock import SHARED, lake_lock
from warehouse_engine.readers import mark_unpublished
from warehouse_engine.sql_runner import MissingRawTableError, downstream_models
from warehouse_engine.target import WarehouseTarget

HINTS_PER_RUN = 500  # a burst beyond this is applied over several runs, each committed and acknowledged


def spool_for(target: WarehouseTarget) -> HintSpool:
    """The hints spool beside the warehouse: `<stem>.hints.sqlite` beside the DuckDB file, or beside a
    DuckLake's data folder."""
    where = target.data_path if target.is_lake else target.path
    assert where is not None, "a target is a file or a lake with a data folder"
    return HintSpool.for_warehouse(where)


@dataclass
class HintRun:
    """What one applying run did."""

    portal: str
    hints: int = 0
    load: HintLoad | None = None
    models: dict[str, int] = field(default_factory=dict)
    published: str | None = None
    gate: GateOutcome | None = None  # what the gate held back, if anything
    acknowledged: int = 0
    waiting: str | None = None  # why the hints were left pending (e.g. no first sync yet)
    seconds: float = 0.0

    def line(self) -> str:
        """One line for a terminal or a run log (no secret: counts and table names only)."""
        if not self.hints:
            return f"hints {self.portal}: none pending"
        if self.waiting:
            return f"hints {self.portal}: {self.hints} left pending: {self.waiting}"
        load = self.load
        assert load is not None
        rows = sum(load.rows.values())
        gone = sum(len(ids) for ids in load.tombstoned.values())
        held = "" if self.gate is None or self.gate.ok else "; " + "; ".join(self.gate.lines())
        return (f"hints {self.portal}: {self.hints} applied in {self.seconds:.1f} s: {load.windowed} read by "
                f"window, {load.fetched} fetched by id, {rows} rows loaded, {gone} deleted, {load.stale} stale skipped, {load.requests} requests, "
                f"{len(self.models)} models rebuilt, {self.acknowledged} acknowledged{held}")


def hint_client(portal: Portal, *, settings: ApiSettings | None = None,
                rate_limit_per_s: float | None = None) -> InvoicingClient:
    """The API client of the portal's applying runs (read scope, the host's shared rate budget, the token the
    last run kept)."""
    settings = settings or portal_settings(portal)
    if rate_limit_per_s is None:
        rate_limit_per_s = portal.rate_limit_per_s if portal.rate_limit_per_s is not None else DEFAULT_RATE_LIMIT
    return InvoicingClient(settings.base_url, settings.client_id, settings.client_secret,
                           rate_limit_per_s=rate_limit_per_s, keep_token=True)


def apply_pending(target: WarehouseTarget, portal: Portal, *, settings: ApiSettings | None = None,
                  rate_limit_per_s: float | None = None, limit: int = HINTS_PER_RUN,
                  on_step: Callable[[str], None] | None = None, client: InvoicingClient | None = None) -> HintRun:
    """Applies the portal's pending hints (at most `limit`) to the warehouse `target`; returns what it did.

    `on_step(name)` is called after `fetched+loaded` (the warehouse commit), `models` and `published`,
    before the acknowledgement: progress for a caller, and the seams the crash tests kill at.
    `client`: the portal's client, kept open by a caller that applies hints again and again (`sync --follow`):
    its token serves every run instead of a token request per run. Without it, one is opened and closed
    here (`settings`, `rate_limit_per_s`: see hint_client).
    Raises InvoicingApiError (the hints stay pending) or what the models raise.
    """
    started = time.monotonic()
    run = HintRun(portal.name)
    with spool_for(target) as spool:
        hints = spool.pending(portal.name, limit)
        run.hints = len(hints)
        if not hints:
            return run
        behind = mark_unpublished(target)
        with lake_lock(target, SHARED):  # a DuckLake's build and publication wait until this merge is whole
            if client is not None:
                run.load = load_hints(make_pipeline(target, portal.name), client, hints)
            else:
                with hint_client(portal, settings=settings, rate_limit_per_s=rate_limit_per_s) as own:
                    run.load = load_hints(make_pipeline(target, portal.name), own, hints)
        _step(on_step, "loaded")
        changed = run.load.changed_tables
        note = f"hints {portal.name}"
        if changed:
            try:
                run.gate = build_and_publish(target, note=note, select=downstream_models(changed),
                                             behind=behind)
            except MissingRawTableError as missing:
                # hints before the first sync: the models cannot be built yet; the sync will load it all
                run.waiting = str(missing)
                return run
            run.models = run.gate.models
        else:
            run.gate = publish_checked(target, note=note, changed=False, behind=behind)
        _step(on_step, "models")
        run.published = run.gate.published
        _step(on_step, "published")
        run.acknowledged = spool.acknowledge(hints)
    run.seconds = time.monotonic() - started
    return run


def _step(on_step: Callable[[str], None] | None, name: str) -> None:
    if on_step is not None:
        on_step(name)
