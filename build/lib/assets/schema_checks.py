"""`fields_known` per raw table (runs/schema_notices.py) as a Dagster WARN asset check: it names the columns of
fields the API serves that the contract ledger does not know. A warning, never blocking: a new field changes
no figure, it waits for a person to judge it and add it to docs/contract.md."""

from collections.abc import Iterator

from dagster import (
    AssetCheckExecutionContext,
    AssetCheckResult,
    AssetChecksDefinition,
    AssetCheckSeverity,
    AssetCheckSpec,
    MetadataValue,
    multi_asset_check,
)

from assets.error_boundary import redacted_errors
from assets.keys import RAW_TABLES, raw_asset_key
from assets.resources import WarehouseResource
from runs.schema_notices import new_columns

FIELDS_KNOWN_CHECK = "fields_known"


def build_fields_known_check() -> AssetChecksDefinition:
    """One WARN `fields_known` check per raw table (one step for all of them)."""

    @multi_asset_check(
        specs=[
            AssetCheckSpec(FIELDS_KNOWN_CHECK, asset=raw_asset_key(table),
                           description="Every column of the raw table is a field the contract ledger knows.")
            for table in RAW_TABLES
        ],
        can_subset=True,
        name="raw_fields_known",
    )
    def raw_fields_known(context: AssetCheckExecutionContext, warehouse: WarehouseResource
                         ) -> Iterator[AssetCheckResult]:
        """Names, per raw table, the columns of served fields the ledger does not know."""
        with redacted_errors(), warehouse.connect(read_only=True) as connection:
            found = new_columns(connection)
        for check_key in sorted(context.selected_asset_check_keys, key=str):
            table = check_key.asset_key.path[-1]
            columns = [c for t, cs in found.items() if t == table or t.startswith(table + "__")
                       for c in (cs if t == table else [f"{t}.{c}" for c in cs])]
            yield AssetCheckResult(
                asset_key=check_key.asset_key, check_name=FIELDS_KNOWN_CHECK, passed=not columns,
                severity=AssetCheckSeverity.WARN,
                description=(f"new field(s) served, not in the contract ledger: {', '.join(columns)}"
                             if columns else None),
                metadata={"new_columns": MetadataValue.json(columns)},
            )

    return raw_fields_known
