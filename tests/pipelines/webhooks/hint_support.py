"""What the applying-run tests share: a warehouse built the regular way (sync, models, readers' copy) from
a sandbox, and one applying run of the pending hints against it."""

from __future__ import annotations

from pathlib import Path

import duckdb

from harness.common import quiet  # noqa: F401  (re-exported: the one copy, importable from here as before)
from harness.regular_build import regular_build, report_date_of
from invoicing_warehouse.engine.readers import connect_reader
from invoicing_warehouse.engine.target import WarehouseTarget
from invoicing_warehouse.runs.hints import HintRun, apply_pending
from pipelines.invoicing.credentials import ApiSettings
from pipelines.invoicing.load.sync import SyncReport
from pipelines.invoicing.portals import Portal


def settings_of(sandbox) -> ApiSettings:
    """The sandbox's base URL and credentials."""
    return ApiSettings(sandbox.base_url, sandbox.client_id, sandbox.client_secret)


def scheduled_sync(sandbox, warehouse: str | Path, **options) -> SyncReport:
    """What the schedule runs: the incremental sync, every model, publication."""
    return regular_build(sandbox, warehouse, **options)


def dagster_resources(sandbox, warehouse: str) -> dict:
    """The Dagster resources of a project run against `sandbox` and the warehouse file `warehouse` (unpaced)."""
    # imported here: only the tests that run Dagster pay for importing it
    from assets.resources import InvoicingApiResource, WarehouseResource

    return {"invoicing_api": InvoicingApiResource(base_url=sandbox.base_url, client_id=sandbox.client_id,
                                                  client_secret=sandbox.client_secret, rate_limit_per_s=0),
            "warehouse": WarehouseResource(path=warehouse)}


def apply(sandbox, warehouse: str | Path, **options) -> HintRun:
    """One applying run of the portal `default`'s pending hints, its models as of the sandbox's date."""
    options.setdefault("as_of", report_date_of(sandbox))
    return apply_pending(WarehouseTarget.duckdb_file(warehouse), Portal("default"), settings=settings_of(sandbox),
                         rate_limit_per_s=0, **options)


def reader(warehouse: str | Path) -> duckdb.DuckDBPyConnection:
    """A read-only connection on the readers' copy (what dashboards open)."""
    return connect_reader(WarehouseTarget.duckdb_file(warehouse))


def raw_value(warehouse: str | Path, table: str, record_id: str, column: str):
    """One column of one raw row in the readers' copy (None when the row is absent)."""
    with reader(warehouse) as connection:
        row = connection.execute(f"select {column} from invoicing_raw.{table} where id = ?", [record_id]).fetchone()
    return None if row is None else row[0]
