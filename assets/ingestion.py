"""Ingestion: one Dagster asset per raw table, all produced by one dlt-backed multi-asset.

`@dlt_assets` (dagster-dlt) builds the asset specs from the `invoicing` dlt source through a
translator (keys `invoicing_raw/<table>`, group `invoicing_raw`, kinds dlt + duckdb). The body does
not call `DagsterDltResource.run`, which performs one `pipeline.run` of the whole source: the sync
reads frozen windows and commits them in chunks (several `pipeline.run` calls, each with its
state), so the body calls `run_sync` for exactly the selected endpoints and then reports, per
selected table, the rows loaded and the table's schema as DuckDB holds it.
"""

import tempfile
import time
from collections.abc import Iterator
from pathlib import Path

import dlt
from dagster import (
    AssetExecutionContext,
    AssetKey,
    AssetSpec,
    Config,
    Failure,
    MaterializeResult,
    MetadataValue,
    TableColumn,
    TableColumnConstraints,
    TableSchema,
)
from dagster_dlt import DagsterDltTranslator, dlt_assets
from dagster_dlt.translator import DltResourceTranslatorData
from pydantic import Field

from assets.keys import RAW_DATASET, RAW_TABLE_ENDPOINTS, RAW_TABLES, raw_asset_key
from assets.resources import InvoicingApiResource, WarehouseResource
from pipelines.invoicing import invoicing
from pipelines.invoicing.errors import InvoicingApiError
from pipelines.invoicing.sync import SyncReport, make_pipeline, run_sync

INGESTION_GROUP = RAW_DATASET
# InvoicingApiError kinds that a retry cannot fix (the others: unreachable, server, rate_limited,
# malformed, are worth the job's retry policy).
PERMANENT_ERROR_KINDS = frozenset({"credentials", "scope", "configuration", "http"})
PROGRESS_LOG_EVERY_S = 10.0


class SyncConfig(Config):
    """Run configuration of the ingestion step (the daily reconcile job sets `reconcile`)."""

    reconcile: bool = Field(
        default=False, description="also scan every id to mark upstream deletions (_deleted_at)"
    )
    full_refresh: bool = Field(default=False, description="re-read every endpoint from the beginning")


def raw_table_of_resource(resource) -> str:
    """The raw table a dlt resource loads into (its table name, else its resource name)."""
    table_name = resource.table_name
    return table_name if isinstance(table_name, str) else resource.name


class InvoicingDltTranslator(DagsterDltTranslator):
    """Maps each dlt resource of the `invoicing` source to the asset of its raw table."""

    def get_asset_spec(self, data: DltResourceTranslatorData) -> AssetSpec:
        """Key `invoicing_raw/<table>`, group `invoicing_raw`, kinds dlt + duckdb, no upstream keys."""
        table = raw_table_of_resource(data.resource)
        endpoint = RAW_TABLE_ENDPOINTS.get(table, "the Invoicing API v2")
        return (
            super()
            .get_asset_spec(data)
            .replace_attributes(
                key=raw_asset_key(table),
                group_name=INGESTION_GROUP,
                deps=[],
                kinds={"dlt", "duckdb"},
                description=f"Raw `{RAW_DATASET}.{table}`, synced incrementally from {endpoint}.",
            )
            .merge_attributes(
                metadata={"api_endpoint": endpoint, "dagster/table_name": f"{RAW_DATASET}.{table}"}
            )
        )


# Only for the asset specs: which resources exist and their names. The run builds its own source
# and pipeline from the resources' settings inside run_sync, so these placeholders never reach the
# network, and the spec pipeline's working folder is a temporary one (loading the definitions
# writes nothing beside the warehouse).
_SPEC_SOURCE = invoicing(base_url="http://127.0.0.1:9/api/v2", client_id="unset", client_secret="unset")
_SPEC_PIPELINE = dlt.pipeline(
    pipeline_name="invoicing_dagster_specs",
    destination="duckdb",
    dataset_name=RAW_DATASET,
    pipelines_dir=str(Path(tempfile.gettempdir()) / "invoicing-warehouse-dlt-specs"),
)


def table_schema(connection, table: str) -> TableSchema:
    """The columns of `invoicing_raw.<table>` as DuckDB holds them (empty if the table is absent)."""
    rows = connection.execute(
        "select column_name, data_type, is_nullable = 'YES' from information_schema.columns "
        "where table_schema = ? and table_name = ? order by ordinal_position",
        [RAW_DATASET, table],
    ).fetchall()
    return TableSchema(
        columns=[
            TableColumn(name=name, type=data_type, constraints=TableColumnConstraints(nullable=nullable))
            for name, data_type, nullable in rows
        ]
    )


def child_tables(connection, table: str) -> list[str]:
    """The child tables dlt made from `table`'s nested lists (`documents__lines`, ...)."""
    rows = connection.execute(
        "select table_name from information_schema.tables where table_schema = ? "
        "and starts_with(table_name, ?) order by table_name",
        [RAW_DATASET, f"{table}__"],
    ).fetchall()
    return [name for (name,) in rows]


def table_row_count(connection, table: str) -> int | None:
    """Rows now in `invoicing_raw.<table>`, None if the table does not exist yet."""
    exists = connection.execute(
        "select count(*) from information_schema.tables where table_schema = ? and table_name = ?",
        [RAW_DATASET, table],
    ).fetchone()[0]
    if not exists:
        return None
    return connection.execute(f'select count(*) from {RAW_DATASET}."{table}"').fetchone()[0]


@dlt_assets(
    dlt_source=_SPEC_SOURCE,
    dlt_pipeline=_SPEC_PIPELINE,
    name="invoicing_raw",
    dagster_dlt_translator=InvoicingDltTranslator(),
)
def invoicing_raw_assets(
    context: AssetExecutionContext,
    config: SyncConfig,
    invoicing_api: InvoicingApiResource,
    warehouse: WarehouseResource,
) -> Iterator[MaterializeResult]:
    """Syncs the selected endpoints into the warehouse; one materialization per selected table."""
    selected = {key.path[-1]: key for key in context.selected_asset_keys}
    resources = sorted(selected) if context.is_subset else None
    context.log.info(
        f"syncing {', '.join(resources) if resources else 'every endpoint'} into {warehouse.path}"
    )
    try:
        report = run_sync(
            make_pipeline(warehouse.path),
            resources=resources,
            full_refresh=config.full_refresh,
            reconcile=config.reconcile,
            progress=_progress_logger(context),
            base_url=invoicing_api.base_url,
            client_id=invoicing_api.client_id,
            client_secret=invoicing_api.client_secret,
            rate_limit_per_s=invoicing_api.rate_limit_per_s,
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
    with warehouse.connect(read_only=True) as connection:
        for table in sorted(selected):
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


def _materialization(connection, table: str, key: AssetKey, report: SyncReport) -> MaterializeResult:
    rows_loaded = report.rows
    metadata: dict[str, object] = {
        "rows_loaded": MetadataValue.int(int(rows_loaded.get(table, 0))),
        "dagster/column_schema": table_schema(connection, table),
        "requests": MetadataValue.int(int(report.requests.get(table, 0))),
        "pages": MetadataValue.int(int(report.pages.get(table, 0))),
        "sync_wall_seconds": MetadataValue.float(round(report.wall_s, 2)),
    }
    row_count = table_row_count(connection, table)
    if row_count is not None:
        metadata["dagster/row_count"] = MetadataValue.int(row_count)
    for child in child_tables(connection, table):
        metadata[f"rows_loaded/{child}"] = MetadataValue.int(int(rows_loaded.get(child, 0)))
        metadata[f"column_schema/{child}"] = MetadataValue.table_schema(table_schema(connection, child))
    return MaterializeResult(asset_key=key, metadata=metadata)


RAW_ASSET_KEYS: tuple[AssetKey, ...] = tuple(raw_asset_key(table) for table in RAW_TABLES)
