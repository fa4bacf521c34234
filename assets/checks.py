"""Asset checks on the warehouse: the plain checks of runs/checks.py as Dagster asset checks.

Blocking checks (severity ERROR) run right after the asset they check, in the same run; when one
fails, Dagster skips every asset downstream of it, so the marts keep their last good state rather
than being rebuilt from duplicated or dangling raw rows. The gate (runs/gate.py) runs the same checks
again before publishing, on every path.
"""

from collections.abc import Iterable, Iterator

from dagster import (
    AssetCheckExecutionContext,
    AssetCheckResult,
    AssetChecksDefinition,
    AssetCheckSeverity,
    AssetCheckSpec,
    AssetKey,
    MetadataValue,
    asset_check,
    multi_asset_check,
)

from assets.error_boundary import redacted_errors
from assets.keys import RAW_TABLES, relation_asset_key, relation_of
from assets.resources import WarehouseResource
from runs.checks import REFERENCE_CHECKS, CheckResult, WarehouseCheck, ids_unique, keys_unique


def _asset_key(relation: str) -> AssetKey:
    key = relation_asset_key(relation)
    assert key is not None, f"{relation} has no asset"
    return key


def as_asset_check_result(result: CheckResult) -> AssetCheckResult:
    """A plain check's answer as Dagster's (its metadata as Dagster metadata values)."""
    return AssetCheckResult(
        asset_key=_asset_key(result.relation),
        check_name=result.name,
        passed=result.passed,
        severity=AssetCheckSeverity(result.severity),
        description=result.description,
        metadata={key: MetadataValue.json(value) if isinstance(value, (list, dict)) else value
                  for key, value in result.metadata.items()},
    )


def asset_check_of(check: WarehouseCheck) -> AssetChecksDefinition:
    """The Dagster asset check running the plain `check` on the warehouse."""

    @asset_check(
        asset=_asset_key(check.relation),
        name=check.name,
        additional_deps=[key for r in (*check.reads, *check.after) if (key := relation_asset_key(r)) is not None],
        blocking=check.blocking,
        description=check.description,
    )
    def _check(warehouse: WarehouseResource) -> AssetCheckResult:
        with redacted_errors(), warehouse.connect(read_only=True) as connection:
            return as_asset_check_result(check.run(connection))

    return _check


# One check (one step) per table: a duplicate in one table holds back only what reads that table.
raw_ids_unique: list[AssetChecksDefinition] = [asset_check_of(ids_unique(table)) for table in RAW_TABLES]

documents_customers_exist, usages_invoices_exist = (asset_check_of(check) for check in REFERENCE_CHECKS)


# ---------------------------------------------------------------- marts: keys unique


def build_mart_key_checks(mart_keys: Iterable[AssetKey]) -> list[AssetChecksDefinition]:
    """One `keys_unique` check per mart (a multi-check: one step for all of them)."""
    mart_keys = sorted(mart_keys, key=lambda k: k.to_user_string())
    if not mart_keys:
        return []

    @multi_asset_check(
        specs=[
            AssetCheckSpec(
                "keys_unique", asset=key, blocking=True, description="One row per key of the mart's grain."
            )
            for key in mart_keys
        ],
        can_subset=True,
        name="marts_keys_unique",
    )
    def marts_keys_unique(
        context: AssetCheckExecutionContext, warehouse: WarehouseResource
    ) -> Iterator[AssetCheckResult]:
        """Checks that each selected mart has one row per key."""
        with warehouse.connect(read_only=True) as connection:
            for check_key in sorted(context.selected_asset_check_keys, key=str):
                yield as_asset_check_result(keys_unique(relation_of(check_key.asset_key)).run(connection))

    return [marts_keys_unique]
