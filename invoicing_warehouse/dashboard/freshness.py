"""What the Freshness page shows: when the readers' copy was published, when the sync last loaded each raw
table (dlt's `_dlt_loads`, as the copy holds them), whether the warehouse has changes readers do not see
yet, the webhook hints kept dead in the spool beside the warehouse (read-only, never created here), and the
warehouse's data checks re-run on the copy.

The checks are the gate's (invoicing_warehouse/runs/gate.py: ids unique, references resolve, the contract's value
checks, one row per mart key), run on the readers' copy: the freshness and sync-note checks live in a Dagster instance's
run history, not in the warehouse.
"""

from __future__ import annotations

import os
from dataclasses import dataclass
from datetime import UTC, datetime
from pathlib import Path

import duckdb
import pandas as pd

from invoicing_warehouse.dashboard.queries import frame
from invoicing_warehouse.engine.names import RAW_DATASET
from invoicing_warehouse.engine.publish import unpublished_mark
from invoicing_warehouse.engine.target import WarehouseTarget
from invoicing_warehouse.runs.gate import run_checks
from pipelines.invoicing.webhooks.dead_letters import read_dead_letters
from pipelines.invoicing.webhooks.hint_spool import spool_location_for

DEAD_HINTS_SHOWN = 200


@dataclass(frozen=True)
class Snapshot:
    """The readers' copy as a file, and whether the warehouse has changed since it was published."""

    path: Path
    published_at: datetime | None  # the copy's modification time (its publication: an atomic rename)
    size_bytes: int | None
    warehouse_ahead: bool  # a run changed the warehouse and has not published yet


def snapshot(warehouse: Path, snapshot_path: Path) -> Snapshot:
    """The readers' copy's publication time and size, and the warehouse's `unpublished` mark."""
    try:
        stat = os.stat(snapshot_path)
    except FileNotFoundError:
        return Snapshot(snapshot_path, None, None, unpublished_mark(warehouse).exists())
    published = datetime.fromtimestamp(stat.st_mtime, tz=UTC)
    return Snapshot(snapshot_path, published, stat.st_size, unpublished_mark(warehouse).exists())


def raw_tables(connection: duckdb.DuckDBPyConnection) -> pd.DataFrame:
    """Per raw table: rows, and when the last load that wrote one of them finished (dlt's `_dlt_loads`)."""
    tables = [
        row[0]
        for row in connection.execute(
            "select table_name from information_schema.columns where table_schema = ? "
            "and table_catalog = current_database() and column_name = '_dlt_load_id' "
            "and not starts_with(table_name, '_dlt') order by 1",
            [RAW_DATASET],
        ).fetchall()
    ]
    if not tables:
        return pd.DataFrame(columns=["raw_table", "rows", "last_loaded_at", "load_id"])
    loads_join = (
        f"left join {RAW_DATASET}._dlt_loads as loads on loads.load_id = per_table.load_id"
        if _has_loads(connection)
        else "left join (select null::varchar as load_id, null::timestamptz as inserted_at) as loads on false"
    )
    per_table = " union all ".join(
        f"select '{table}' as raw_table, count(*) as rows, max(_dlt_load_id) as load_id "
        f'from {RAW_DATASET}."{table}"'
        for table in tables
    )
    return frame(
        connection,
        f"""select per_table.raw_table, per_table.rows, loads.inserted_at as last_loaded_at, per_table.load_id
            from ({per_table}) as per_table
            {loads_join}
            order by per_table.raw_table""",
    )


def _has_loads(connection: duckdb.DuckDBPyConnection) -> bool:
    # dlt's load table; a warehouse filled by other means (the benchmarks' generator) has none
    row = connection.execute(
        "select count(*) from information_schema.tables where table_schema = ? and table_name = '_dlt_loads' "
        "and table_catalog = current_database()",
        [RAW_DATASET],
    ).fetchone()
    return bool(row and row[0])


def last_sync(connection: duckdb.DuckDBPyConnection) -> datetime | None:
    """When the last successful dlt load the copy knows of finished (no-change runs may not be there)."""
    if not _has_loads(connection):
        return None
    row = connection.execute(f"select max(inserted_at) from {RAW_DATASET}._dlt_loads where status = 0").fetchone()
    return row[0] if row else None


def checks(connection: duckdb.DuckDBPyConnection) -> pd.DataFrame:
    """Every warehouse check of the gate (invoicing_warehouse/runs/gate.py) on the readers' copy: check, asset, passed,
    severity, blocking, detail."""
    rows = [(result.name, result.relation, result.passed, result.severity, result.blocking, result.description or "")
            for result in run_checks(connection)]
    return pd.DataFrame(rows, columns=["check", "asset", "passed", "severity", "blocking", "detail"]).sort_values(
        ["passed", "asset", "check"], kind="stable", ignore_index=True
    )


def dead_hints(target: WarehouseTarget, portals: frozenset[str] | None = None) -> tuple[int, pd.DataFrame]:
    """(how many, the newest DEAD_HINTS_SHOWN) webhook hints kept dead in the warehouse's spool (of `portals`
    only, when given): portal, resource, record, event, attempts, last error, first received and died (UTC);
    (0, empty) without a spool."""
    total, letters = read_dead_letters(spool_location_for(target), limit=DEAD_HINTS_SHOWN, portals=portals)
    rows = [(letter.portal_id, letter.resource, letter.record_id, letter.event, letter.attempts, letter.last_error,
             datetime.fromtimestamp(letter.received_at, tz=UTC), datetime.fromtimestamp(letter.dead_at, tz=UTC),
             letter.deliveries_since) for letter in letters]
    return total, pd.DataFrame(rows, columns=["portal", "resource", "record_id", "event", "attempts", "last_error",
                                              "received_at", "dead_at", "deliveries_since"])
