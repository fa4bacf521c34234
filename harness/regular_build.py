"""What the schedule runs, in this process: the incremental sync of a sandbox, every model, publication to
readers through the gate (invoicing_warehouse/runs/gate.py). Tests and benchmarks of the webhook path build their
warehouse, and heal it, with it."""

from __future__ import annotations

from datetime import date
from pathlib import Path
from zoneinfo import ZoneInfo

from invoicing_warehouse.engine.names import DEFAULT_PORTAL
from invoicing_warehouse.engine.sql_runner import PORTAL_TIME_ZONE
from invoicing_warehouse.engine.target import WarehouseTarget
from invoicing_warehouse.runs.gate import build_and_publish, record_reads
from pipelines.invoicing.load.sync import SyncReport, make_pipeline, run_sync


class HeldBack(RuntimeError):
    """The gate held the regular build back: a blocking check failed (its lines say which)."""


def report_date_of(sandbox) -> date | None:
    """The sandbox's date in the portal's zone: the report date of a build against it, so that its figures and
    the sandbox's own (dueAmount, the LATE list) are of one day, also when a test run moves the sandbox's date
    (INVOICING_TEST_TODAY, tests/support/sandboxes.py). None for a stand-in without a clock: today."""
    clock = getattr(sandbox, "clock", None)
    return None if clock is None else clock.now().astimezone(ZoneInfo(PORTAL_TIME_ZONE)).date()


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
    outcome = build_and_publish(target, note="regular build", as_of=report_date_of(sandbox))
    if outcome.failures:
        raise HeldBack("; ".join(outcome.lines()))
    return report
