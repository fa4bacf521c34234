"""Ingestion: one Dagster asset per raw table, all produced by one multi-asset that runs `run_sync`,
partitioned by portal (assets/portals.py): a run syncs its partition's portal only.

The specs are declared from the extraction's catalogue (one per resource: key `invoicing_raw/<table>`,
group `invoicing_raw`, kinds dlt + duckdb). The body calls `run_sync` for exactly the selected
endpoints (frozen windows committed in chunks, each with its dlt state) and then reports, per
selected table, the rows loaded and the table's schema as DuckDB holds it (invoicing_warehouse.engine.raw_tables).

A list whose read fails alone (`SyncReport.failed`) is not materialized (its specs are skippable): the
assets built on it are skipped, the gate holds the marts built on it (invoicing_warehouse/runs/sync.py records the
failed read), and the run still succeeds, so the publication sensor publishes everything else, as the CLI's `sync` does
(its exit code 3, "partial").
"""

import time
from collections.abc import Iterator
from datetime import timedelta

from dagster import (
    AssetExecutionContext,
    AssetKey,
    AssetSpec,
    Config,
    Failure,
    FreshnessPolicy,
    MaterializeResult,
    MetadataValue,
    ResourceParam,
    TableColumn,
    TableColumnConstraints,
    TableSchema,
    multi_asset,
)
from pydantic import Field

from assets.error_boundary import redacted_errors
from assets.keys import RAW_TABLE_ENDPOINTS, RAW_TABLES, raw_asset_key
from assets.portals import portal_partitions
from assets.resources import InvoicingApiResource, WarehouseResource
from invoicing_warehouse.engine.names import DEFAULT_PORTAL, RAW_DATASET
from invoicing_warehouse.engine.raw_tables import child_tables, table_columns, table_row_count
from invoicing_warehouse.runs.checks import marts_reading
from invoicing_warehouse.runs.sync import sync_and_record
from pipelines.invoicing.credentials import ApiSettings
from pipelines.invoicing.errors import InvoicingApiError
from pipelines.invoicing.load.portal_sync import portal_settings
from pipelines.invoicing.load.sync import SyncReport
from pipelines.invoicing.portals import Portal

INGESTION_GROUP = RAW_DATASET
# InvoicingApiError kinds that a retry cannot fix (the others: unreachable, server, rate_limited,
# malformed, are worth the job's retry policy).
PERMANENT_ERROR_KINDS = frozenset({"credentials", "scope", "configuration", "http", "portals", "local_state"})
PROGRESS_LOG_EVERY_S = 10.0


class SyncConfig(Config):
    """Run configuration of the ingestion step (the daily reconcile job sets `reconcile`)."""

    reconcile: bool = Field(
        default=False, description="also scan every id to mark upstream deletions (_deleted_at)"
    )
    full_refresh: bool = Field(default=False, description="re-read every endpoint from the beginning")


def raw_table_spec(table: str, stale_after: timedelta | None = None) -> AssetSpec:
    """The asset of one raw table: no upstream asset, loaded by dlt into DuckDB from its endpoint. `stale_after`:
    Dagster's freshness policy (a time window: failed when the last materialization is older), the threshold
    `status` uses too (invoicing_warehouse/runs/status.py), so the two never disagree."""
    endpoint = RAW_TABLE_ENDPOINTS.get(table, "the Invoicing API v2")
    return AssetSpec(
        freshness_policy=None if stale_after is None else FreshnessPolicy.time_window(fail_window=stale_after),
        key=raw_asset_key(table),
        group_name=INGESTION_GROUP,
        kinds={"dlt", "duckdb"},
        description=f"Raw `{RAW_DATASET}.{table}`, synced incrementally from {endpoint}.",
        metadata={"api_endpoint": endpoint, "dagster/table_name": f"{RAW_DATASET}.{table}"},
        skippable=True,  # not materialized when its list's read failed alone: what is built on it is skipped
    )


def table_schema(connection, table: str) -> TableSchema:
    """The columns of `invoicing_raw.<table>` as DuckDB holds them (empty if the table is absent)."""
    return TableSchema(
        columns=[
            TableColumn(name=name, type=data_type, constraints=TableColumnConstraints(nullable=nullable))
            for name, data_type, nullable in table_columns(connection, table)
        ]
    )


def run_portal(context, portals: dict[str, Portal]) -> Portal:
    """The portal of the run's partition (`default` for a run without one)."""
    name = context.partition_key if context.has_partition_key else DEFAULT_PORTAL
    return portals.get(name) or Portal(name)


def api_settings(portal: Portal, invoicing_api: InvoicingApiResource) -> tuple[ApiSettings, float]:
    """A portal of the file: its settings through credentials.py (dlt's sources.invoicing.portals.<name>);
    the portal `default`: the `invoicing_api` resource (the deployment's settings, never run config)."""
    if portal.from_file:
        rate = portal.rate_limit_per_s if portal.rate_limit_per_s is not None else invoicing_api.rate_limit_per_s
        return portal_settings(portal), rate
    return invoicing_api.settings(), invoicing_api.rate_limit_per_s


def build_ingestion_assets(portals: dict[str, Portal], stale_after: timedelta | None = None):
    """The raw tables' multi-asset, one partition per portal of `portals`; each raw table stale after
    `stale_after` (Dagster's freshness policy; None: no policy)."""

    @multi_asset(specs=[raw_table_spec(table, stale_after) for table in RAW_TABLES], name="invoicing_raw",
                 can_subset=True,
                 partitions_def=portal_partitions(portals))
    def invoicing_raw_assets(
        context: AssetExecutionContext,
        config: SyncConfig,
        invoicing_api: ResourceParam[InvoicingApiResource],
        warehouse: WarehouseResource,
    ) -> Iterator[MaterializeResult]:
        """Syncs the selected endpoints of the partition's portal; one materialization per selected table."""
        with redacted_errors():  # what reaches Dagster's event log passes the scrubber (error_boundary.py)
            yield from _sync(context, config, run_portal(context, portals), invoicing_api, warehouse)

    return invoicing_raw_assets


def _sync(context: AssetExecutionContext, config: SyncConfig, portal: Portal, invoicing_api: InvoicingApiResource,
          warehouse: WarehouseResource) -> Iterator[MaterializeResult]:
    selected = {key.path[-1]: key for key in context.selected_asset_keys}
    resources = sorted(selected) if context.is_subset else None
    context.log.info(
        f"syncing {', '.join(resources) if resources else 'every endpoint'} of portal {portal.name} "
        f"into {warehouse.target().describe()}"
    )
    try:
        settings, rate = api_settings(portal, invoicing_api)
        report = sync_and_record(
            warehouse.target(),
            portal,
            settings=settings,
            rate_limit_per_s=rate,
            resources=resources,
            full_refresh=config.full_refresh,
            reconcile=config.reconcile,
            progress=_progress_logger(context),
        )
    except InvoicingApiError as error:
        if error.kind in PERMANENT_ERROR_KINDS:
            # Retrying cannot fix a wrong secret or URL: fail once, with the client's actionable message.
            raise Failure(description=str(error), allow_retries=False) from None
        raise
    except OSError as error:
        # The warehouse's folder cannot be made or written (a file in the way, no permission): a
        # locked DuckDB file is a duckdb.IOException inside dlt's error, not this, and is retried.
        raise Failure(description=f"warehouse {warehouse.path}: {error}", allow_retries=False) from None
    context.log.info(
        f"synced in {report.wall_s:.1f} s: {report.total_requests} requests, "
        f"{report.throttled} throttled (429), {report.retried} retried, {report.chunks} chunk(s); "
        f"rows {report.rows}"
    )
    for table, failure in sorted(report.failed.items()):
        held = marts_reading([table])
        context.log.warning(
            f"partial sync: {table} not read ({failure}); not materialized, read again by the next run; "
            + (f"the marts built on it keep their last good figures: {', '.join(held)}" if held
               else "it feeds no mart: nothing held")
        )
    with warehouse.connect(read_only=True) as connection:
        for table in sorted(set(selected) - set(report.failed)):
            yield _materialization(connection, table, selected[table], report)


def _progress_logger(context: AssetExecutionContext):
    """A run_sync progress callback that logs one line every PROGRESS_LOG_EVERY_S seconds."""
    last_logged = [0.0]

    def log(progress: dict[str, dict]) -> None:
        now = time.monotonic()
        if now - last_logged[0] < PROGRESS_LOG_EVERY_S:
            return
        last_logged[0] = now
        requests = sum(p["requests"] for p in progress.values())
        done = sorted(name for name, p in progress.items() if p["done"])
        reading = ", ".join(f"{name} {p['records']}" for name, p in sorted(progress.items()) if not p["done"])
        context.log.info(
            f"sync: {requests} requests; done: {', '.join(done) or '-'}; reading: {reading or '-'}"
        )

    return log


def table_notes(report: SyncReport, table: str) -> list[dict]:
    """The sync's notes about `table` (their text starts with `<table>: `, or `run: ` for every table), each with
    its `degraded` flag: the `sync_read_exactly` check (assets/checks.py) fails on a degraded one."""
    prefixes = (f"{table}: ", "run: ")
    return [{"text": note, "degraded": note in report.degraded_notes}
            for note in report.notes if note.startswith(prefixes)]


def _materialization(connection, table: str, key: AssetKey, report: SyncReport) -> MaterializeResult:
    rows_loaded = report.rows
    metadata: dict[str, MetadataValue | TableSchema] = {
        "rows_loaded": MetadataValue.int(int(rows_loaded.get(table, 0))),
        "dagster/column_schema": table_schema(connection, table),
        "requests": MetadataValue.int(int(report.requests.get(table, 0))),
        "pages": MetadataValue.int(int(report.pages.get(table, 0))),
        "sync_wall_seconds": MetadataValue.float(round(report.wall_s, 2)),
        "sync_notes": MetadataValue.json(table_notes(report, table)),
    }
    row_count = table_row_count(connection, table)
    if row_count is not None:
        metadata["dagster/row_count"] = MetadataValue.int(row_count)
    for child in child_tables(connection, table):
        metadata[f"rows_loaded/{child}"] = MetadataValue.int(int(rows_loaded.get(child, 0)))
        metadata[f"column_schema/{child}"] = MetadataValue.table_schema(table_schema(connection, child))
    return MaterializeResult(asset_key=key, metadata=metadata)


RAW_ASSET_KEYS: tuple[AssetKey, ...] = tuple(raw_asset_key(table) for table in RAW_TABLES)
