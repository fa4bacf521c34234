"""The Dagster op that applies one portal's pending webhook hints (invoicing_warehouse/runs/hints.py), then stays a
while for the hints that follow (invoicing_warehouse/runs/linger.py).

It adds no asset: what it changes are the raw tables and models the asset graph already has, so it records
an asset materialization for each raw table whose rows changed (of the portal's partition) and for each model
it rebuilt. The regular `sync_job` stays the one that runs every model and every check.

The readers come first: each set's line is logged at once, but its materializations wait until no hint is
pending (or RECORD_WITHIN_S has passed, or the run ends), merged per asset over the sets applied meanwhile. Each
event is a write of Dagster's storage (on SQLite a commit and a new connection, 25-150 ms): the ~30 of a set,
written before the next set, made the lingering run's changes queue (bench/RESULTS.md, the doorbell's p95).
"""

import time

from dagster import (
    AssetKey,
    AssetMaterialization,
    Config,
    Failure,
    MetadataValue,
    OpExecutionContext,
    ResourceParam,
    op,
)
from pydantic import Field

from assets.error_boundary import redacted_errors
from assets.ingestion import PERMANENT_ERROR_KINDS, api_settings
from assets.keys import raw_asset_key, raw_table_of
from assets.resources import InvoicingApiResource, WarehouseResource
from assets.writer_queue import waiting_writer
from invoicing_warehouse.engine.names import DEFAULT_PORTAL
from invoicing_warehouse.runs.hints import HintRun, apply_pending, hint_client
from invoicing_warehouse.runs.linger import Linger, linger
from pipelines.invoicing.errors import InvoicingApiError
from pipelines.invoicing.portals import Portal

APPLY_HINTS_OP = "apply_webhook_hints"
RECORD_WITHIN_S = 30.0  # the longest an applied set's materializations wait for a moment without pending hints


class HintsConfig(Config):
    """Which portal's hints a run applies (the sensor sets it)."""

    portal: str = Field(default=DEFAULT_PORTAL, description="the portal (partition) whose pending hints to apply")


def build_apply_hints_op(portals: dict[str, Portal]):
    """The op applying the pending hints of the configured portal of `portals`."""

    @op(name=APPLY_HINTS_OP, description="Fetches the records pending webhook hints name, merges them, rebuilds "
        "the models downstream, publishes, then acknowledges the hints; stays for the hints that follow.")
    def apply_webhook_hints(context: OpExecutionContext, config: HintsConfig,
                            invoicing_api: ResourceParam[InvoicingApiResource], warehouse: WarehouseResource) -> None:
        with redacted_errors():  # what reaches Dagster's event log passes the scrubber (error_boundary.py)
            _apply(context, config, portals, invoicing_api, warehouse)

    return apply_webhook_hints


def _apply(context: OpExecutionContext, config: HintsConfig, portals: dict[str, Portal],
           invoicing_api: InvoicingApiResource, warehouse: WarehouseResource) -> None:
    """The op's body: the portal's pending hints applied, then the stay for the hints that follow."""
    started = time.monotonic()
    portal = portals.get(config.portal)
    if portal is None:
        raise Failure(description=f"portal {config.portal!r} is not configured (portals: {', '.join(portals)})",
                      allow_retries=False)
    try:
        staying = Linger.from_environment()
    except ValueError as error:
        raise Failure(description=str(error), allow_retries=False) from None

    unrecorded = Unrecorded(portal.name)

    def record(run: HintRun) -> None:
        context.log.info(run.line())
        unrecorded.add(run)
        if unrecorded.due():
            unrecorded.record(context)

    target = warehouse.target()

    def another_writer_waits() -> str | None:
        # a DuckLake takes a writer per portal: only a run of this portal waiting ends the stay
        waiting = waiting_writer(context.instance, warehouse.path, portal.name if target.is_lake else None)
        return f"run {waiting.run_id} ({waiting.job_name}) waits to write" if waiting else None

    try:
        settings, rate = api_settings(portal, invoicing_api)
        with hint_client(portal, settings=settings, rate_limit_per_s=rate) as client:
            first = apply_pending(target, portal, client=client, settings=settings, rate_limit_per_s=rate)
            record(first)
            if first.waiting:
                return
            stayed = linger(target, portal, client, staying, another_writer_waits=another_writer_waits,
                            on_run=record, on_idle=lambda: unrecorded.record(context), started=started,
                            api_settings=settings, rate_limit_per_s=rate)
    except InvoicingApiError as error:
        # the hints stay pending; a wrong secret is not retried, the rest is (the next sensor tick)
        raise Failure(description=str(error), allow_retries=error.kind not in PERMANENT_ERROR_KINDS) from None
    finally:
        unrecorded.record(context)  # the sets applied before a failure were published: recorded all the same
    if staying.enabled:
        context.log.info(f"hints {portal.name}: {len(stayed.runs)} more set(s), {stayed.hints} hints applied "
                         f"while staying; ended: {stayed.ended}")


class Unrecorded:
    """The materializations of applied sets not recorded yet, merged per asset: a raw table's rows loaded
    summed over the sets, a model's row count its latest."""

    def __init__(self, portal: str) -> None:
        self.portal = portal
        self.raw_rows: dict[str, int] = {}
        self.model_rows: dict[str, int] = {}
        self.since: float | None = None  # time.monotonic() of the oldest set not recorded

    def add(self, run: HintRun) -> None:
        """The raw tables whose rows `run` changed and the models it rebuilt, to record."""
        if run.load is None and run.reread is None:
            return
        loaded = run.rows
        for table in {parent for table in run.changed_tables if (parent := raw_table_of(table))}:
            self.raw_rows[table] = self.raw_rows.get(table, 0) + int(loaded.get(table, 0))
        self.model_rows.update({key: int(rows) for key, rows in run.models.items()})
        if self.since is None and (self.raw_rows or self.model_rows):
            self.since = time.monotonic()

    def due(self) -> bool:
        """True when the oldest set not recorded was applied RECORD_WITHIN_S ago or more."""
        return self.since is not None and time.monotonic() - self.since >= RECORD_WITHIN_S

    def record(self, context: OpExecutionContext) -> None:
        """One materialization per raw table (of the portal's partition) and per model, then nothing left."""
        for table, rows in sorted(self.raw_rows.items()):
            context.log_event(AssetMaterialization(
                raw_asset_key(table), partition=self.portal,
                metadata={"rows_loaded": MetadataValue.int(rows), "source": MetadataValue.text("webhook hints")}))
        for key, rows in self.model_rows.items():
            context.log_event(AssetMaterialization(AssetKey(key.split(".")),
                                                   metadata={"dagster/row_count": MetadataValue.int(rows)}))
        self.raw_rows, self.model_rows, self.since = {}, {}, None
