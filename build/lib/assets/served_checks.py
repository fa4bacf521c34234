"""`fields_served` per raw table and `dates_at_midnight` per staging model (runs/served_fields.py) as Dagster
asset checks: one step for all of each kind, the severity the worst of the fields found absent."""

from collections.abc import Iterable, Iterator

from dagster import (
    AssetCheckExecutionContext,
    AssetCheckResult,
    AssetChecksDefinition,
    AssetCheckSeverity,
    AssetCheckSpec,
    AssetKey,
    MetadataValue,
    multi_asset_check,
)

from assets.error_boundary import redacted_errors
from assets.keys import RAW_DATASET, raw_asset_key
from assets.resources import WarehouseResource
from runs.checks import ERROR, relation_exists
from runs.model_checks import DATES_AT_MIDNIGHT_DESCRIPTION, dates_at_midnight
from runs.served_fields import SERVED_FIELDS, absent_fields
from warehouse_engine.sql_runner import SqlModel


def _served_result(connection, table: str) -> AssetCheckResult:
    if not relation_exists(connection, f"{RAW_DATASET}.{table}"):
        return AssetCheckResult(asset_key=raw_asset_key(table), check_name="fields_served", passed=True,
                                metadata={"note": "table not created yet"})
    worst, description, counts = absent_fields(connection, table)
    return AssetCheckResult(
        asset_key=raw_asset_key(table),
        check_name="fields_served",
        passed=worst is None,
        severity=AssetCheckSeverity.ERROR if worst == ERROR else AssetCheckSeverity.WARN,
        description=description,
        metadata={"absent_rows": MetadataValue.json(counts)},
    )


def build_fields_served_check() -> AssetChecksDefinition:
    """One `fields_served` check per raw table with fields in SERVED_FIELDS (one step for all of them)."""
    tables = sorted({f.table for f in SERVED_FIELDS})

    @multi_asset_check(
        specs=[
            AssetCheckSpec(
                "fields_served",
                asset=raw_asset_key(table),
                description="The fields the marts need were served (not absent from the records).",
            )
            for table in tables
        ],
        can_subset=True,
        name="raw_fields_served",
    )
    def raw_fields_served(
        context: AssetCheckExecutionContext, warehouse: WarehouseResource
    ) -> Iterator[AssetCheckResult]:
        """Counts, per raw table, the rows whose `_absent_fields` names a field the marts need."""
        with redacted_errors(), warehouse.connect(read_only=True) as connection:
            for check_key in sorted(context.selected_asset_check_keys, key=str):
                yield _served_result(connection, check_key.asset_key.path[-1])

    return raw_fields_served


def build_dates_at_midnight_check(models: Iterable[SqlModel]) -> AssetChecksDefinition | None:
    """One WARN `dates_at_midnight` check per model whose front matter lists date-only values."""
    checks = {model.key: dates_at_midnight(model) for model in models if model.manifest.date_only}
    if not checks:
        return None

    @multi_asset_check(
        specs=[AssetCheckSpec("dates_at_midnight", asset=AssetKey(key.split(".")),
                              description=DATES_AT_MIDNIGHT_DESCRIPTION) for key in sorted(checks)],
        can_subset=True,
        name="staging_dates_at_midnight",
    )
    def staging_dates_at_midnight(
        context: AssetCheckExecutionContext, warehouse: WarehouseResource
    ) -> Iterator[AssetCheckResult]:
        """Finds date-only values with a time of day, per model."""
        with redacted_errors(), warehouse.connect(read_only=True) as connection:
            for check_key in sorted(context.selected_asset_check_keys, key=str):
                check = checks[".".join(check_key.asset_key.path)]
                result = check.run(connection)
                yield AssetCheckResult(
                    asset_key=check_key.asset_key,
                    check_name="dates_at_midnight",
                    passed=result.passed,
                    severity=AssetCheckSeverity.WARN,
                    description=f"{result.description} in {', '.join(check.protects)}" if result.description
                    else None,
                    metadata={"fields": MetadataValue.json(result.metadata.get("fields", []))},
                )

    return staging_dates_at_midnight
