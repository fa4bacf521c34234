"""Sensors that tell operators (invoicing_warehouse/runs/alerts.py): a failed run, figures held back, a stale portal,
dead hints, and the recovery of each. A failed run of any job is recorded (`run:<job>`) until a run of that job
succeeds; every tick evaluates the open conditions and announces only what changed, so a job that keeps failing is
announced once.
"""

from __future__ import annotations

from dagster import (
    DagsterRunStatus,
    DefaultSensorStatus,
    RunFailureSensorContext,
    RunStatusSensorContext,
    SensorEvaluationContext,
    SkipReason,
    run_failure_sensor,
    run_status_sensor,
    sensor,
)

from assets.error_boundary import redacted_errors
from assets.resources import WarehouseResource
from invoicing_warehouse.engine.connection import scrub
from invoicing_warehouse.runs import run_log
from invoicing_warehouse.runs.alerts import notify_changes, outcome_lines

ALERTS_INTERVAL_S = 60  # a stale portal or dead hints are announced within a minute of the condition
RUNNING = DefaultSensorStatus.RUNNING  # on by default: without a channel set, a tick sends nothing


def _announce(warehouse: WarehouseResource, portals: list[str]) -> SkipReason:
    lines = outcome_lines(notify_changes(warehouse.target(), portals))
    return SkipReason("; ".join(lines) or "nothing changed")


def _failure_message(context: RunFailureSensorContext) -> str:
    """What failed: each failed step's error (the first line of each), else the run's own message."""
    steps = []
    for event in context.get_step_failure_events():
        error = event.step_failure_data.error if event.step_failure_data else None
        cause = error.cause if error is not None and error.cause is not None else error
        if cause is not None:
            steps.append(f"{event.step_key}: {cause.message.strip().splitlines()[0]}")
    return "; ".join(steps) or context.failure_event.message or "the run failed"


def build_alert_sensors(portals: dict) -> list:
    """The periodic evaluation, and the sensors that record a run's failure and its recovery."""
    names = sorted(portals)

    @sensor(name="alerts", minimum_interval_seconds=ALERTS_INTERVAL_S, default_status=RUNNING,
            description="Announces (INVOICING_ALERT_URL, INVOICING_ALERT_APPRISE_URLS) each condition that opens or "
                        "clears: figures held back, a stale portal, dead hints, a failed run "
                        "(invoicing_warehouse/runs/alerts.py).")
    def alerts(context: SensorEvaluationContext, warehouse: WarehouseResource):
        with redacted_errors():
            return _announce(warehouse, names)

    @run_failure_sensor(name="alert_on_run_failure", default_status=RUNNING,
                        description="Records a failed run for the alerts, and "
                        "announces it (once, until a run of the same job succeeds).")
    def alert_on_run_failure(context: RunFailureSensorContext, warehouse: WarehouseResource):
        with redacted_errors():
            target = warehouse.target()
            message = _failure_message(context)
            run_log.record_failure(target, f"run:{context.dagster_run.job_name}",
                                   scrub(f"run {context.dagster_run.run_id}: {message}", target))
            return _announce(warehouse, names)

    @run_status_sensor(name="alert_on_run_recovery", run_status=DagsterRunStatus.SUCCESS, default_status=RUNNING,
                       description="Clears a job's failed-run alert when a run of it succeeds.")
    def alert_on_run_recovery(context: RunStatusSensorContext, warehouse: WarehouseResource):
        with redacted_errors():
            run_log.clear_failure(warehouse.target(), f"run:{context.dagster_run.job_name}")
            return _announce(warehouse, names)

    return [alerts, alert_on_run_failure, alert_on_run_recovery]
