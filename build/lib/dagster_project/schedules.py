"""Schedules: incremental sync every SYNC_INTERVAL minutes, reconcile daily, freshness checks.

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

from dagster import EnvVar, RunRequest, ScheduleDefinition, ScheduleEvaluationContext

from assets.resources import InvoicingApiResource
from assets.run_tags import portal_run_tags
from pipelines.invoicing.portals import Portal


def sync_interval() -> timedelta:
    """The incremental sync interval (INVOICING_SYNC_INTERVAL_MINUTES, default 15 minutes)."""
    raw = EnvVar("INVOICING_SYNC_INTERVAL_MINUTES").get_value(default="15")
    minutes = int(raw) if raw and raw.isdigit() else 0
    if minutes < 1 or 60 % minutes:
        raise ValueError(
            f"INVOICING_SYNC_INTERVAL_MINUTES must divide 60 (1, 2, 3, 5, 10, 15, 20, 30, 60), got {raw!r}"
        )
    return timedelta(minutes=minutes)


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
    reconcile_cron = EnvVar("INVOICING_RECONCILE_CRON").get_value(default="30 3 * * *") or "30 3 * * *"
    # an hour after the reconcile, out of office hours
    maintenance_cron = (EnvVar("INVOICING_LAKE_MAINTENANCE_CRON").get_value(default="30 4 * * *")
                        or "30 4 * * *")
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
            name="freshness_schedule",
            job=jobs_by_name["freshness_check_job"],
            # Half an interval after each sync tick, so a sync that has not landed by then shows.
            cron_schedule=_every(interval, offset_minutes=max(1, int(interval.total_seconds() // 120))),
            execution_timezone="UTC",
            description="Warns when a raw table's last successful sync is older than twice the interval.",
        ),
    ]
