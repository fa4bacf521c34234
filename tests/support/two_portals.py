"""A small warehouse of two portals, acme and globex: two sandboxes (seeds 41 and 42, scale 12) on one pinned clock,
each synced by the regular path that records its sync, then one build and publication. Used where a test needs a
firm's warehouse (the Portals page, a dashboard limited to one portal)."""

from __future__ import annotations

from datetime import date, datetime
from pathlib import Path

from invoicing_sandbox.clock import Clock
from invoicing_sandbox.config import SandboxConfig
from invoicing_sandbox.server import SandboxServer
from invoicing_warehouse.engine.target import WarehouseTarget
from invoicing_warehouse.runs.gate import build_and_publish
from invoicing_warehouse.runs.sync import sync_and_record
from pipelines.invoicing.credentials import ApiSettings
from pipelines.invoicing.portals import Portal

PORTALS = (("acme", 41), ("globex", 42))
CLOCK_AT = datetime(2026, 3, 2, 9)  # pinned: the figures never depend on the day the test runs


def build_two_portals(warehouse: Path) -> date:
    """Syncs both portals into the DuckDB file `warehouse`, builds and publishes; returns the report date."""
    target = WarehouseTarget.duckdb_file(warehouse)
    clock = Clock(fixed=CLOCK_AT)
    for name, seed in PORTALS:
        with SandboxServer(SandboxConfig(seed=seed, scale=12, rate_limit_per_s=0, latency_ms=0), clock=clock) as sb:
            sync_and_record(target, Portal(name, base_url=sb.base_url), rate_limit_per_s=0,
                            settings=ApiSettings(sb.base_url, sb.client_id, sb.client_secret))
    assert build_and_publish(target, note="two portals", as_of=clock.today().date()).ok
    return clock.today().date()
