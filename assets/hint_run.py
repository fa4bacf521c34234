"""The applying run of webhook hints, one portal: the Dagster hints job and `sync --follow` both run it.

Order (at least once, a crash anywhere loses nothing):
1. read the portal's pending hints from the spool (nothing pending: nothing opened, nothing written);
2. mark the readers' copy behind, then fetch the hinted records and merge them (pipelines/invoicing/hint_apply.py:
   by id, deletions confirmed, newest `lastUpdate` wins) -- the warehouse commit;
3. rebuild only the SQL models downstream of the raw tables that changed (sql_runner.downstream_models);
4. publish to readers (readers.publish_if_changed);
5. only then acknowledge the hints (a hint delivered again meanwhile stays pending).
A run killed before 5 leaves its hints pending: the next run fetches and merges them again, which the
merge on (portal_id, id) makes idempotent. The caller keeps the single writer rule: one writing run per
warehouse at a time (the Dagster run queue's tag, or the one `sync --follow` process).
"""

from __future__ import annotations

import time
from collections.abc import Callable
from dataclasses import dataclass, field

from pipelines.invoicing.client import InvoicingClient
from pipelines.invoicing.credentials import ApiSettings
from pipelines.invoicing.hint_apply import HintLoad, load_hints
from pipelines.invoicing.hint_spool import HintSpool
from pipelines.invoicing.portal_sync import DEFAULT_RATE_LIMIT, portal_settings
from pipelines.invoicing.portals import Portal
from pipelines.invoicing.sync import make_pipeline
from warehouse_engine.connection import connect
from warehouse_engine.readers import mark_unpublished, publish_if_changed
from warehouse_engine.sql_runner import MissingRawTableError, build_models, downstream_models, missing_models
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
        return (f"hints {self.portal}: {self.hints} applied in {self.seconds:.1f} s: {load.windowed} read by "
                f"window, {load.fetched} fetched by id, {rows} rows loaded, {gone} deleted, {load.stale} stale skipped, {load.requests} requests, "
                f"{len(self.models)} models rebuilt, {self.acknowledged} acknowledged")


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
        if client is not None:
            run.load = load_hints(make_pipeline(target, portal.name), client, hints)
        else:
            with hint_client(portal, settings=settings, rate_limit_per_s=rate_limit_per_s) as own:
                run.load = load_hints(make_pipeline(target, portal.name), own, hints)
        _step(on_step, "loaded")
        changed = run.load.changed_tables
        if changed:
            connection = connect(target)
            try:
                # every model when some were never built (a warehouse synced but never modelled)
                chosen = None if missing_models(connection) else downstream_models(changed)
                run.models = build_models(connection, select=chosen)
            except MissingRawTableError as missing:
                # hints before the first sync: the models cannot be built yet; the sync will load it all
                run.waiting = str(missing)
                return run
            finally:
                connection.close()
        _step(on_step, "models")
        run.published = publish_if_changed(target, f"hints {portal.name}", changed=bool(changed), behind=behind)
        _step(on_step, "published")
        run.acknowledged = spool.acknowledge(hints)
    run.seconds = time.monotonic() - started
    return run


def _step(on_step: Callable[[str], None] | None, name: str) -> None:
    if on_step is not None:
        on_step(name)
