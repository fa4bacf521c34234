"""Sensors: publish the readers' snapshot of the warehouse after every successful writing run
(see warehouse_engine/publish.py for why readers never open the warehouse itself)."""

from dagster import DagsterRunStatus, RunStatusSensorContext, SkipReason, run_status_sensor

from assets.resources import WarehouseResource
from warehouse_engine.publish import publish_snapshot


def build_publish_sensor(writing_jobs: list):
    """A sensor that publishes `<warehouse>.read.duckdb` when one of `writing_jobs` succeeds."""

    @run_status_sensor(
        name="publish_snapshot_after_run",
        run_status=DagsterRunStatus.SUCCESS,
        monitored_jobs=writing_jobs,
        description="Copies the warehouse to <name>.read.duckdb (atomic rename) for dashboards and analysts.",
    )
    def publish_snapshot_after_run(context: RunStatusSensorContext, warehouse: WarehouseResource):
        if not warehouse.file.exists():
            return SkipReason(f"{warehouse.path} does not exist")
        snapshot = publish_snapshot(warehouse.file)
        context.log.info(f"published {snapshot} after run {context.dagster_run.run_id}")
        return None

    return publish_snapshot_after_run
