"""The contract checks (runs/contract_checks.py) as Dagster asset checks, with `fields_served` and
`dates_at_midnight` (runs/served_fields.py and runs/model_checks.py, wrapped in assets/served_checks.py)."""

from collections.abc import Iterable

from dagster import AssetChecksDefinition

from assets.checks import asset_check_of
from assets.served_checks import build_dates_at_midnight_check, build_fields_served_check
from runs.contract_checks import CONTRACT_VALUE_CHECKS
from warehouse_engine.sql_runner import SqlModel, discover_models


def build_contract_checks(models: Iterable[SqlModel] | None = None) -> list[AssetChecksDefinition]:
    """Every contract check: the value checks, `fields_served` per raw table and `dates_at_midnight` per model
    whose front matter lists date-only values (`models`, default the product's)."""
    midnight = build_dates_at_midnight_check(discover_models() if models is None else models)
    return [*(asset_check_of(check) for check in CONTRACT_VALUE_CHECKS), build_fields_served_check(),
            *([midnight] if midnight is not None else [])]
