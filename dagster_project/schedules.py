"""Schedules: incremental sync every SYNC_INTERVAL minutes, reconcile daily, the dead-hint check.

The interval is read when the definitions load: INVOICING_SYNC_INTERVAL_MINUTES (default 15, a
divisor of 60 so that the cron `*/N` ticks evenly). The reconcile time is INVOICING_RECONCILE_CRON
(default 03:30 UTC, away from office hours); the DuckLake's upkeep INVOICING_LAKE_MAINTENANCE_CRON (default
04:30 UTC). Schedules start stopped: turn them on in the UI
(Automation) or with `dagster schedule start`, once the API settings are in place.
The sync and reconcile schedules launch one run per portal (partition) on each tick, of the raw tables only
(`portal_sync_job`, `portal_reconcile_job`): a failing portal fails its own run only; the run queue still lets
one run write a DuckDB warehouse at a time (dagster.yaml), and limits the runs per egress (run_tags.py). The
SQL models are not partitioned: they are built once per tick, after its portal runs ended
(model_sensor.py), not once per portal.
"""

from __future__ import annotations

from collections.abc import Iterator
from datetime import timedelta

from dagster import RunRequest, ScheduleDefinition, ScheduleEvaluationContext

from assets.resources import InvoicingApiResource
from assets.run_tags import portal_run_tags
from invoicing_warehouse.engine.environment.engine_settings import LAKE_MAINTENANCE_CRON
from invoicing_warehouse.engine.environment.reader import current_environment
from invoicing_warehouse.engine.environment.run_settings import RECONCILE_CRON, SYNC_INTERVAL_MINUTES
from pipelines.invoicing.portals import Portal


def sync_interval() -> timedelta:
    """The incremental sync interval (INVOICING_SYNC_INTERVAL_MINUTES, default 15 minutes)."""
    return timedelta(minutes=current_environment().value(SYNC_INTERVAL_MINUTES))


def _every(interval: timedelta, offset_minutes: int = 0) -> str:
    minutes = int(interval.total_seconds() // 60)
    if minutes == 60:
        return f"{offset_minutes % 60} * * * *"
    return f"{offset_minutes % minutes}-59/{minutes} * * * *"


def _one_run_per_portal(portals: dict[str, Portal], api: InvoicingApiResource | None):
    """A schedule's evaluation: one run request per portal, keyed by tick and portal (never launched twice),
    tagged with its egress, its portal and its tick (run_tags.py)."""

    def evaluate(context: ScheduleEvaluationContext) -> Iterator[RunRequest]:
        tick = context.scheduled_execution_time.isoformat() if context.scheduled_execution_time else "now"
        for name, portal in portals.items():  # a generator: Dagster takes several requests per tick only so
            yield RunRequest(run_key=f"{tick}:{name}", partition_key=name,
                             tags=portal_run_tags(portal, api, interval=tick))

    return evaluate


def build_schedules(jobs_by_name: dict, interval: timedelta, portals: dict[str, Portal],
                    api: InvoicingApiResource | None = None) -> list[ScheduleDefinition]:
    """The schedules over the jobs of dagster_project/jobs.py; sync and reconcile: one run per portal of
    `portals` (raw tables only; the models follow once per tick, model_sensor.py), its API host that of the
    portal or of `api` (run_tags.py); the lake's upkeep once a day (INVOICING_LAKE_MAINTENANCE_CRON, default
    04:30 UTC)."""
    settings = current_environment()
    reconcile_cron = settings.value(RECONCILE_CRON)
    # an hour after the reconcile, out of office hours
    maintenance_cron = settings.value(LAKE_MAINTENANCE_CRON)
    return [
        ScheduleDefinition(
            name="sync_schedule",
            job=jobs_by_name["portal_sync_job"],
            cron_schedule=_every(interval),
            execution_timezone="UTC",
            description=f"Incremental sync every {interval}, one run per portal; the models once after them.",
            execution_fn=_one_run_per_portal(portals, api),
        ),
        ScheduleDefinition(
            name="reconcile_schedule",
            job=jobs_by_name["portal_reconcile_job"],
            cron_schedule=reconcile_cron,
            execution_timezone="UTC",
            description="Daily reconcile: full id scans mark upstream deletions, one run per portal; the models "
                        "once after them.",
            execution_fn=_one_run_per_portal(portals, api),
        ),
        ScheduleDefinition(
            name="lake_maintenance_schedule",
            job=jobs_by_name["lake_maintenance_job"],
            cron_schedule=maintenance_cron,
            execution_timezone="UTC",
            description="Daily DuckLake upkeep: snapshots older than the horizon expire, old files removed.",
        ),
        ScheduleDefinition(
            name="hint_check_schedule",
            job=jobs_by_name["hint_check_job"],
            # Half an interval after each sync tick, so a hint set aside by then shows.
            cron_schedule=_every(interval, offset_minutes=max(1, int(interval.total_seconds() // 120))),
            execution_timezone="UTC",
            description="Fails the dead-hint check when a webhook hint was kept dead (a person must trace it).",
        ),
    ]
