"""What readers (analysts, dashboards) open, and how a finished run is published to them, on either engine.

- DuckDB file: a copy, `<warehouse>.read.duckdb`, republished atomically after each run (publish.py).
- DuckLake: no copy. Every commit is a snapshot that any number of read-only connections can see while
  writers go on. A run commits many snapshots though (dlt commits each table's load on its own), so a
  reader of the latest snapshot could see a run half loaded. Publishing a run therefore commits one
  marker row whose snapshot carries the commit message `published`; `connect_reader` attaches the lake
  at the latest such snapshot, so a reader sees whole runs only: the one before or the one after.
"""

from __future__ import annotations

from pathlib import Path

import duckdb

from invoicing_warehouse.engine.connection import connect
from invoicing_warehouse.engine.lake_conflicts import retry_on_conflict
from invoicing_warehouse.engine.publish import connect_reader as connect_snapshot
from invoicing_warehouse.engine.publish import default_snapshot_path, publish_snapshot, unpublished_mark
from invoicing_warehouse.engine.publish import mark_unpublished as mark_file_unpublished
from invoicing_warehouse.engine.target import LAKE_NAME, WarehouseTarget

PUBLISHED = "published"
AUTHOR = "invoicing-warehouse"
# In the lake's `main` schema, apart from the dataset dlt owns (a full refresh drops `invoicing_raw`).
MARKER_TABLE = "main.invoicing_published_runs"


def publish(target: WarehouseTarget, note: str = "") -> str:
    """Makes the warehouse's current committed state the one readers open; returns what readers open.

    Call it after a run has committed (and, on a file, closed its connection). `note` (no secret) says
    which run it was, e.g. `sync portal acme`.
    """
    if not target.is_lake:
        assert target.path is not None
        return str(publish_snapshot(Path(target.path)))
    # Two runs publishing into a new lake at once both create the marker table; the later commit loses
    # that race (DuckLake cannot merge two creations) and is run again, when the table is there.
    return retry_on_conflict(lambda: _commit_marker(target, note))


def _commit_marker(target: WarehouseTarget, note: str) -> str:
    """Commits the marker row (creating its table in the same commit the first time) as a `published`
    snapshot; returns what readers open."""
    connection = connect(target)
    try:
        connection.execute("begin transaction")
        connection.execute(f"create table if not exists {MARKER_TABLE} "
                           "(published_at timestamp with time zone, note varchar)")
        connection.execute(f"call {LAKE_NAME}.set_commit_message(?, ?)", [AUTHOR, PUBLISHED])
        connection.execute(f"insert into {MARKER_TABLE} values (now(), ?)", [note])
        connection.execute("commit")
        return f"{target.describe()} snapshot {published_snapshot(connection)}"
    finally:
        connection.close()


def mark_unpublished(target: WarehouseTarget) -> bool:
    """Before a writer changes the warehouse: True when readers may already be behind it, so the next
    `publish_if_changed` must publish whatever the run changes (always True on a lake, where a
    publication copies nothing)."""
    if target.is_lake:
        return True
    assert target.path is not None
    Path(target.path).parent.mkdir(parents=True, exist_ok=True)
    return mark_file_unpublished(Path(target.path))


def publish_if_changed(target: WarehouseTarget, note: str = "", *, changed: bool, behind: bool) -> str | None:
    """`publish` when the run `changed` data or readers were `behind` before it; None when skipped."""
    if target.is_lake or changed or behind:
        return publish(target, note)
    assert target.path is not None
    unpublished_mark(Path(target.path)).unlink(missing_ok=True)  # readers are current: nothing to copy
    return None


def published_snapshot(connection: duckdb.DuckDBPyConnection) -> int | None:
    """The latest snapshot a run was published at (None before the first publication)."""
    row = connection.execute(
        f"select max(snapshot_id) from {LAKE_NAME}.snapshots() where commit_message = ?", [PUBLISHED]
    ).fetchone()
    return int(row[0]) if row and row[0] is not None else None


def connect_reader(target: WarehouseTarget) -> duckdb.DuckDBPyConnection:
    """A read-only connection on the last published run: the snapshot file, or the lake at the last
    published snapshot (the latest snapshot when nothing was published yet)."""
    if not target.is_lake:
        assert target.path is not None
        return connect_snapshot(default_snapshot_path(Path(target.path)))
    probe = connect(target, read_only=True)
    try:
        version = published_snapshot(probe)
    finally:
        probe.close()
    return connect(target, read_only=True, snapshot_version=version)
