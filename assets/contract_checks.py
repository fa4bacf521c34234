"""The contract checks (runs/contract_checks.py) as Dagster asset checks, with `fields_served` and
`dates_at_midnight` (runs/served_fields.py, wrapped in assets/served_checks.py)."""

from dagster import AssetChecksDefinition

from assets.checks import asset_check_of
from assets.served_checks import build_dates_at_midnight_check, build_fields_served_check
from runs.contract_checks import CONTRACT_VALUE_CHECKS


def build_contract_checks() -> list[AssetChecksDefinition]:
    """Every contract check: the value checks, `fields_served` per raw table and `dates_at_midnight` per staging
    model with date-only values."""
    return [*(asset_check_of(check) for check in CONTRACT_VALUE_CHECKS), build_fields_served_check(),
            build_dates_at_midnight_check()]
