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
from runs.checks import REFERENCE_CHECKS, CheckResult, WarehouseCheck, ids_unique
from runs.model_checks import checks_of
from warehouse_engine.sql_runner import SqlModel


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


# ---------------------------------------------------------------- models: what their front matter declares


def build_model_checks(models: Iterable[SqlModel]) -> list[AssetChecksDefinition]:
    """The blocking checks each table (or analyst's) model's front matter declares (runs/model_checks.py: `keys_unique` on its
    grain, `not_null`, `accepted_range`), one step for all of them, as the gate runs them."""
    checks = {(check.relation, check.name): check for model in models for check in checks_of(model)
              if check.blocking}
    if not checks:
        return []

    @multi_asset_check(
        specs=[AssetCheckSpec(name, asset=_asset_key(relation), blocking=True, description=check.description)
               for (relation, name), check in sorted(checks.items())],
        can_subset=True,
        name="models_declared_checks",
    )
    def models_declared_checks(
        context: AssetCheckExecutionContext, warehouse: WarehouseResource
    ) -> Iterator[AssetCheckResult]:
        """Runs each selected model's declared checks."""
        with redacted_errors(), warehouse.connect(read_only=True) as connection:
            for check_key in sorted(context.selected_asset_check_keys, key=str):
                check = checks[(relation_of(check_key.asset_key), check_key.name)]
                yield as_asset_check_result(check.run(connection))

    return [models_declared_checks]
