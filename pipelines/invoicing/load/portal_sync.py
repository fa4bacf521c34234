"""One portal's sync, as a function: settings through credentials.py, the portal's own dlt pipeline, run_sync.

`sync_portal` holds no global state of its own and touches only its portal's rows and its pipeline's state,
so callers may run it for several portals one after another into one DuckDB file (one writer per file) or
at once into an engine that takes concurrent writers. `invoicing-warehouse sync --all` and the Dagster
partitions (one per portal) both come through here.
"""

from __future__ import annotations

from collections.abc import Callable
from dataclasses import dataclass
from pathlib import Path
from typing import Any

from invoicing_warehouse.engine.target import WarehouseTarget
from pipelines.invoicing.capabilities import ServerCapabilities
from pipelines.invoicing.credentials import ApiSettings, resolve_settings
from pipelines.invoicing.errors import InvoicingApiError
from pipelines.invoicing.load.sync import SyncReport, make_pipeline, run_sync
from pipelines.invoicing.portals import Portal

DEFAULT_RATE_LIMIT = 10.0  # the service's limit per source IP


@dataclass
class PortalOutcome:
    """How one portal's sync ended: a report, or the error that stopped it (its one-line text)."""

    portal: str
    report: SyncReport | None = None
    error: BaseException | None = None

    @property
    def ok(self) -> bool:
        """True when the portal synced."""
        return self.error is None

    def line(self) -> str:
        """One summary line for the terminal: never a secret (errors carry endpoint, status, API text)."""
        if self.report is not None and self.error is None:
            r = self.report
            return (f"portal {self.portal}: ok, {sum(r.rows.values())} rows loaded, {r.total_requests} requests, "
                    f"429s {r.throttled}, {r.wall_s:.1f} s")
        return f"portal {self.portal}: FAILED: {self.error}"


def portal_settings(portal: Portal) -> ApiSettings:
    """The portal's base URL and credentials (credentials.py); raises InvoicingApiError naming what is missing."""
    return resolve_settings(portal=portal)


def sync_portal(
    warehouse_path: str | Path | WarehouseTarget,
    portal: Portal,
    *,
    rate_limit_per_s: float | None = None,
    known_capabilities: Callable[[str], ServerCapabilities | None] | None = None,
    settings: ApiSettings | None = None,
    **options: Any,
) -> SyncReport:
    """Syncs `portal` into the warehouse at `warehouse_path` (a DuckDB file, or a target: a DuckLake too) (rows stamped
    with its name, its own dlt state).

    The rate is `rate_limit_per_s`, else the portal's `rate_limit`, else 10/s. `known_capabilities`, given
    the base URL, returns the doctor's findings for it. `options` go to `run_sync` (resources,
    full_refresh, reconcile, progress, chunk_pages...). Raises what `run_sync` raises.
    """
    settings = settings or portal_settings(portal)
    if rate_limit_per_s is None:
        rate_limit_per_s = portal.rate_limit_per_s if portal.rate_limit_per_s is not None else DEFAULT_RATE_LIMIT
    known = known_capabilities(settings.base_url) if known_capabilities is not None else None
    try:
        return run_sync(make_pipeline(warehouse_path, portal.name), base_url=settings.base_url,
                        client_id=settings.client_id, client_secret=settings.client_secret,
                        rate_limit_per_s=rate_limit_per_s, known_capabilities=known, **options)
    except InvoicingApiError as error:
        if error.kind != "credentials" or not portal.from_file:
            raise
        env = f"SOURCES__INVOICING__PORTALS__{portal.name.upper()}"
        raise InvoicingApiError(error.kind, error.endpoint, error.status, error.api_message, error.detail,
                                hint=f"portal {portal.name}: check {env}__CLIENT_ID and {env}__CLIENT_SECRET "
                                     f"(or [sources.invoicing.portals.{portal.name}] in .dlt/secrets.toml)") from None
