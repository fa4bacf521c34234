"""Freshness of the raw tables: warn when an endpoint's last successful sync is too old.

"Last successful sync" of a raw table is the last materialization of its asset recorded by the
Dagster instance (a sync that failed records none, and a subset run refreshes only its tables).
The check runs after every sync and on its own schedule (see dagster_project/schedules.py), so a
sync that keeps failing, or a schedule that was turned off, shows as a warning in the UI.
"""

import time
from collections.abc import Iterator
from datetime import timedelta

from dagster import (
    AssetCheckExecutionContext,
    AssetCheckResult,
    AssetChecksDefinition,
    AssetCheckSeverity,
    AssetCheckSpec,
    MetadataValue,
    multi_asset_check,
)

from assets.keys import RAW_TABLES, raw_asset_key

FRESHNESS_CHECK_NAME = "synced_recently"


def build_freshness_checks(max_age: timedelta) -> AssetChecksDefinition:
    """One WARN check per raw table: its last materialization is at most `max_age` old."""
    max_age_s = max_age.total_seconds()

    @multi_asset_check(
        specs=[
            AssetCheckSpec(
                FRESHNESS_CHECK_NAME,
                asset=raw_asset_key(table),
                description=f"Last successful sync at most {max_age} ago (twice the sync schedule).",
            )
            for table in RAW_TABLES
        ],
        can_subset=True,
        name="raw_synced_recently",
    )
    def raw_synced_recently(context: AssetCheckExecutionContext) -> Iterator[AssetCheckResult]:
        """Warns for each selected raw table whose last successful sync is older than the limit."""
        now = time.time()
        for check_key in sorted(context.selected_asset_check_keys, key=str):
            event = context.instance.get_latest_materialization_event(check_key.asset_key)
            age_s = None if event is None else now - event.timestamp
            passed = age_s is not None and age_s <= max_age_s
            yield AssetCheckResult(
                asset_key=check_key.asset_key,
                check_name=FRESHNESS_CHECK_NAME,
                passed=passed,
                severity=AssetCheckSeverity.WARN,
                description=None
                if passed
                else (
                    "never synced" if age_s is None else f"last synced {timedelta(seconds=int(age_s))} ago"
                ),
                metadata={
                    "age_seconds": MetadataValue.float(round(age_s, 1))
                    if age_s is not None
                    else MetadataValue.null(),
                    "max_age_seconds": MetadataValue.float(max_age_s),
                },
            )

    return raw_synced_recently
