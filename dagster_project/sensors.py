"""Sensors: publish the warehouse to readers after every writing run, through the gate
(invoicing_warehouse/runs/gate.py: the blocking checks first; a copy of the DuckDB file or a published snapshot of a
DuckLake only when they pass)."""

from dagster import DagsterRunStatus, RunStatusSensorContext, SkipReason, run_status_sensor

from assets.error_boundary import redacted_errors
from assets.resources import WarehouseResource
from invoicing_warehouse.engine.sql_runner import today_in_portal_zone
from invoicing_warehouse.runs.gate import publish_checked


def build_publish_sensors(writing_jobs: list) -> list:
    """Two sensors: after a run of `writing_jobs` succeeds, publish through the gate; after one fails, publish
    nothing but record what the blocking checks hold back (the dashboard's banner says it)."""

    def _gate(context: RunStatusSensorContext, warehouse: WarehouseResource, *, allowed: bool):
        target = warehouse.target()
        if not target.is_lake and not warehouse.file.exists():
            return SkipReason(f"{warehouse.path} does not exist")
        run_id = context.dagster_run.run_id
        outcome = publish_checked(target, note=f"dagster run {run_id}", as_of=today_in_portal_zone(),
                                  allowed=allowed)
        for line in outcome.lines():
            context.log.warning(f"after run {run_id}: {line}")
        if outcome.published:
            context.log.info(f"published {outcome.published} after run {run_id}")
        return None

    def sensor(name: str, status: DagsterRunStatus, allowed: bool, description: str):
        @run_status_sensor(name=name, run_status=status, monitored_jobs=writing_jobs, description=description)
        def _sensor(context: RunStatusSensorContext, warehouse: WarehouseResource):
            with redacted_errors():  # a tick's error reaches Dagster's storage through the scrubber
                return _gate(context, warehouse, allowed=allowed)

        return _sensor

    return [
        sensor("publish_snapshot_after_run", DagsterRunStatus.SUCCESS, True,
               "Publishes the warehouse for dashboards and analysts once the blocking checks pass: copies the "
               "DuckDB file to <name>.read.duckdb (atomic rename), or marks the DuckLake's snapshot readers open."),
        sensor("hold_snapshot_after_failed_run", DagsterRunStatus.FAILURE, False,
               "After a failed writing run: publishes nothing, records the failing blocking checks for the "
               "dashboard's banner."),
    ]
