"""One Dagster asset per SQL model file: staging, intermediate and marts (group = folder).

Dependencies come from the SQL itself (`SqlModel.depends_on`, parsed from the relations a model
reads), so a new file under sql/ becomes an asset wired into the graph with no Python to write.
"""

import hashlib
from collections.abc import Iterator
from contextlib import nullcontext
from pathlib import Path

import duckdb
from dagster import (
    AssetExecutionContext,
    AssetKey,
    AssetsDefinition,
    Failure,
    MaterializeResult,
    MetadataValue,
    TableColumn,
    TableSchema,
    asset,
)

from assets.error_boundary import redacted_errors
from assets.keys import relation_asset_key
from assets.resources import WarehouseResource
from invoicing_warehouse.engine.lake_lock import EXCLUSIVE, lake_lock
from invoicing_warehouse.engine.names import RAW_DATASET
from invoicing_warehouse.engine.sql_runner import (
    SQL_DIR,
    SqlModel,
    analyst_models_dir,
    build_model,
    discover_models,
)
from invoicing_warehouse.runs.gate import held_marts
from invoicing_warehouse.runs.gate_state import load as load_gate_state


def model_asset_key(model: SqlModel) -> AssetKey:
    """`staging.stg_invoicing__documents` -> AssetKey(["staging", "stg_invoicing__documents"])."""
    return AssetKey(model.key.split("."))


def _upstream_keys(model: SqlModel, model_keys: set[str]) -> list[AssetKey]:
    keys: set[AssetKey] = set()
    for relation in model.depends_on:
        key = relation_asset_key(relation)
        if key is None:
            continue
        schema = relation.split(".", 1)[0]
        if schema != RAW_DATASET and relation not in model_keys:
            raise ValueError(
                f"SQL model {model.key} ({model.path}) reads {relation}, which is neither a raw table "
                "nor another SQL model"
            )
        keys.add(key)
    return sorted(keys, key=lambda k: k.to_user_string())


def build_model_asset(model: SqlModel, model_keys: set[str]) -> AssetsDefinition:
    """The asset that (re)builds one SQL model in the warehouse and reports its row count. A mart built on a read
    that may be incomplete (invoicing_warehouse/runs/gate.py, `held_marts`) is not rebuilt: it keeps its last good
    figures, and the assets downstream of it are skipped."""

    @asset(
        key=model_asset_key(model),
        deps=_upstream_keys(model, model_keys),
        group_name=model.schema,
        kinds={"duckdb", "sql"},
        description=model.manifest.description,  # its front matter, as docs/models.md shows it
        # A changed SQL file shows as a new code version in the UI.
        code_version=hashlib.sha256(model.sql.encode()).hexdigest()[:12],
        metadata={"sql_file": MetadataValue.path(str(model.path)), "dagster/table_name": model.key,
                  "grain": MetadataValue.json(list(model.manifest.grain))},
        output_required=False,
    )
    def _build(context: AssetExecutionContext, warehouse: WarehouseResource) -> Iterator[MaterializeResult]:
        held = held_marts(load_gate_state(warehouse.target())) if model.schema == "marts" else {}
        if model.key in held:
            context.log.warning(f"{model.key} not rebuilt, it keeps its last good figures: {held[model.key]}")
            return
        # a mart reads the raw tables: on a DuckLake, never while another writer's load is half way (a view
        # reads nothing when it is made). Each mart is whole; the publication sensor then judges them all at once.
        lock = lake_lock(warehouse.target(), EXCLUSIVE) if model.materialized == "table" else nullcontext()
        try:
            with lock, redacted_errors(), warehouse.connect() as connection:
                rows = build_model(connection, model)
                schema = column_schema(connection, model)
        except duckdb.IOException:
            raise  # the file is locked or unreachable: transient, the job's retry policy applies
        except duckdb.Error as error:
            # A SQL error in the model or a missing table does not heal on retry.
            raise Failure(
                description=f"{model.key} ({model.path.name}): {error}", allow_retries=False
            ) from None
        context.log.info(f"built {model.key}: {rows} rows")
        yield MaterializeResult(metadata={"dagster/row_count": MetadataValue.int(int(rows)),
                                          "dagster/column_schema": MetadataValue.table_schema(schema)})

    return _build


def column_schema(connection: duckdb.DuckDBPyConnection, model: SqlModel) -> TableSchema:
    """The built relation's columns with DuckDB's types and the front matter's descriptions (`columns:`), as
    Dagster's catalog shows them."""
    rows = connection.execute(
        "select column_name, data_type from duckdb_columns() where schema_name = ? and table_name = ? "
        "and database_name = current_database() order by column_index",
        [model.schema, model.name],
    ).fetchall()
    return TableSchema(columns=[TableColumn(name=name, type=data_type,
                                            description=model.manifest.column_description(name))
                                for name, data_type in rows])


def build_model_assets(sql_dir: Path = SQL_DIR, models_dir: Path | None = None) -> list[AssetsDefinition]:
    """One asset per SQL file under `sql_dir` (default: the project's sql/) and under the analyst's
    `models_dir` (default: the setting INVOICING_MODELS_DIR, as the CLI reads it), in dependency order."""
    models = discover_models(sql_dir, analyst_models_dir(models_dir))
    model_keys = {model.key for model in models}
    return [build_model_asset(model, model_keys) for model in models]
