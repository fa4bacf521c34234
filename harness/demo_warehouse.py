"""A seeded demo-size warehouse for the dashboard's browser tests, screenshots and benchmark: a sandbox on
127.0.0.1 at a fixed clock, one real sync (run_sync), every model built as of the sandbox's today and
published through the gate (invoicing_warehouse/runs/gate.py). What `invoicing-warehouse demo` builds, without Dagster
(seconds, not a minute)."""

from __future__ import annotations

from collections.abc import Callable
from datetime import UTC, date, datetime
from pathlib import Path

from harness.regular_build import HeldBack, sync_sandbox
from invoicing_sandbox.clock import Clock
from invoicing_sandbox.config import SandboxConfig
from invoicing_sandbox.server import SandboxServer
from invoicing_warehouse.engine.target import WarehouseTarget
from invoicing_warehouse.runs.gate import build_and_publish

# a fixed "today" so that screenshots and figures repeat from one run to the next
DEMO_NOW = datetime(2026, 3, 16, 9, 30, tzinfo=UTC)


def build_demo_warehouse(warehouse: Path, seed: int = 1, scale: int = 1000, now: datetime = DEMO_NOW,
                         while_serving: Callable[[SandboxServer], object] | None = None) -> date:
    """Syncs a seeded sandbox of about `scale` documents, its clock fixed at `now`, into `warehouse`, builds the
    models and publishes the readers' copy; returns the report date of the published marts (the sandbox's
    today). `while_serving(sandbox)` runs after the sync, before the sandbox stops (to read its own records)."""
    clock = Clock(fixed=now)
    config = SandboxConfig(seed=seed, scale=scale, rate_limit_per_s=0)
    with SandboxServer(config, clock=clock) as sandbox:
        sync_sandbox(sandbox, warehouse)
        if while_serving is not None:
            while_serving(sandbox)
    as_of = clock.today().date()
    outcome = build_and_publish(WarehouseTarget.duckdb_file(warehouse), note="demo warehouse", as_of=as_of)
    if outcome.failures:
        raise HeldBack("; ".join(outcome.lines()))
    return as_of
