"""Asset keys of the warehouse: one per raw table (`invoicing_raw/<table>`) and one per SQL model
(`<schema>/<name>`), so a key reads like the DuckDB table it stands for."""

from __future__ import annotations

from dagster import AssetKey

from invoicing_warehouse.engine.names import RAW_DATASET
from pipelines.invoicing.settings import ENDPOINTS, EVENTS, RESOURCE_NAMES

# One raw table per API resource (docs/resources.md), as the extraction names them. Child tables
# (documents__lines, ...) are loaded with their parent and belong to the parent's asset.
RAW_TABLES: tuple[str, ...] = RESOURCE_NAMES

# What each raw table is read from, shown on the asset so the graph starts at the API.
RAW_TABLE_ENDPOINTS: dict[str, str] = {
    endpoint.name: f"GET {endpoint.path}" for endpoint in (*ENDPOINTS.values(), EVENTS)
}


def raw_asset_key(table: str) -> AssetKey:
    """`documents` -> AssetKey(["invoicing_raw", "documents"])."""
    return AssetKey([RAW_DATASET, table])


def raw_table_of(table: str) -> str | None:
    """The raw asset's table holding `table`: itself, or the parent of a child table
    (`documents__lines` -> `documents`); None for tables that are no asset (dlt's `_dlt_loads`)."""
    parent = table.split("__", 1)[0]
    return parent if parent in RAW_TABLES else None


def relation_asset_key(relation: str) -> AssetKey | None:
    """The asset key of a `schema.table` relation a SQL model reads; None when no asset stands for it."""
    schema, _, table = relation.partition(".")
    if not table:
        raise ValueError(f"expected a schema-qualified relation like 'staging.stg_x', got {relation!r}")
    if schema == RAW_DATASET:
        parent = raw_table_of(table)
        return raw_asset_key(parent) if parent else None
    return AssetKey([schema, table])


def relation_of(key: AssetKey) -> str:
    """AssetKey(["marts", "receivables"]) -> "marts.receivables" (the DuckDB relation)."""
    return ".".join(key.path)
