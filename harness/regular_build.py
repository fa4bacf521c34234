"""What the schedule runs, in this process: the incremental sync of a sandbox, every model, publication to
readers through the gate (runs/gate.py). Tests and benchmarks of the webhook path build their warehouse, and
heal it, with it."""

from __future__ import annotations

from pathlib import Path

from pipelines.invoicing.load.sync import SyncReport, make_pipeline, run_sync
from runs.gate import build_and_publish, record_reads
from warehouse_engine.names import DEFAULT_PORTAL
from warehouse_engine.target import WarehouseTarget


class HeldBack(RuntimeError):
    """The gate held the regular build back: a blocking check failed (its lines say which)."""


def sync_sandbox(sandbox, warehouse: str | Path | WarehouseTarget, *, rate_limit_per_s: float = 0,
                 **options) -> SyncReport:
    """`run_sync` of `sandbox` into `warehouse` (a DuckDB file's path, or any target) with its credentials,
    unpaced unless asked; `options` go to run_sync."""
    return run_sync(make_pipeline(warehouse), base_url=sandbox.base_url, client_id=sandbox.client_id,
                    client_secret=sandbox.client_secret, rate_limit_per_s=rate_limit_per_s, **options)


def regular_build(sandbox, warehouse: str | Path | WarehouseTarget, *, rate_limit_per_s: float = 0,
                  **options) -> SyncReport:
    """Syncs `sandbox` into `warehouse` (a DuckDB file's path, or any target; `options` go to run_sync),
    builds every model and publishes to readers through the gate; returns the sync's report. Raises HeldBack
    when a blocking check fails (nothing published)."""
    target = warehouse if isinstance(warehouse, WarehouseTarget) else WarehouseTarget.duckdb_file(warehouse)
    report = sync_sandbox(sandbox, target, rate_limit_per_s=rate_limit_per_s, **options)
    record_reads(target, DEFAULT_PORTAL, report.degraded_notes,
                 full_read=bool(options.get("reconcile") or options.get("full_refresh")))
    outcome = build_and_publish(target, note="regular build")
    if outcome.failures:
        raise HeldBack("; ".join(outcome.lines()))
    return report
