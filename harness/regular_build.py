"""What the schedule runs, in this process: the incremental sync of a sandbox, every model, publication to
readers. Tests and benchmarks of the webhook path build their warehouse, and heal it, with it."""

from __future__ import annotations

from pathlib import Path

from pipelines.invoicing.sync import SyncReport, make_pipeline, run_sync
from warehouse_engine.connection import connect
from warehouse_engine.readers import publish
from warehouse_engine.sql_runner import build_models
from warehouse_engine.target import WarehouseTarget


def regular_build(sandbox, warehouse: str | Path | WarehouseTarget, *, rate_limit_per_s: float = 0,
                  **options) -> SyncReport:
    """Syncs `sandbox` into `warehouse` (a DuckDB file's path, or any target; `options` go to run_sync),
    builds every model, publishes to readers; returns the sync's report."""
    target = warehouse if isinstance(warehouse, WarehouseTarget) else WarehouseTarget.duckdb_file(warehouse)
    report = run_sync(make_pipeline(target), base_url=sandbox.base_url, client_id=sandbox.client_id,
                      client_secret=sandbox.client_secret, rate_limit_per_s=rate_limit_per_s, **options)
    connection = connect(target)
    try:
        build_models(connection)
    finally:
        connection.close()
    publish(target, "regular build")
    return report
