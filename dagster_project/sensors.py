"""Sensors: publish the warehouse to readers after every successful writing run (see
warehouse_engine/readers.py: a snapshot copy of the DuckDB file, a published snapshot of a DuckLake)."""

from dagster import DagsterRunStatus, RunStatusSensorContext, SkipReason, run_status_sensor

from assets.resources import WarehouseResource
from warehouse_engine.readers import publish


def build_publish_sensor(writing_jobs: list):
    """A sensor that publishes the warehouse to readers when one of `writing_jobs` succeeds."""

    @run_status_sensor(
        name="publish_snapshot_after_run",
        run_status=DagsterRunStatus.SUCCESS,
        monitored_jobs=writing_jobs,
        description="Publishes the warehouse for dashboards and analysts: copies the DuckDB file to "
        "<name>.read.duckdb (atomic rename), or marks the DuckLake's snapshot readers open.",
    )
    def publish_snapshot_after_run(context: RunStatusSensorContext, warehouse: WarehouseResource):
        target = warehouse.target()
        if not target.is_lake and not warehouse.file.exists():
            return SkipReason(f"{warehouse.path} does not exist")
        snapshot = publish(target, f"dagster run {context.dagster_run.run_id}")
        context.log.info(f"published {snapshot} after run {context.dagster_run.run_id}")
        return None

    return publish_snapshot_after_run
