"""Counts records missing, duplicated or stale in a DuckDB raw table against the sandbox's ground truth.

The truth is what the sandbox portal holds (`sb.portal.snapshot(resource)`: every record as GET returns it).
The comparison is by `id`, so it works the same on this pipeline's tables and on the generic `rest_api`
tables (which have no `_deleted_at` column: every row counts as present there).
"""

from __future__ import annotations

from collections import Counter
from dataclasses import dataclass
from datetime import datetime, timezone
from pathlib import Path
from typing import Any, Iterable

import duckdb


@dataclass(frozen=True)
class TableCheck:
    """How one warehouse table compares with the sandbox's records of the same resource."""

    table: str
    expected: int  # records upstream
    rows: int  # rows in the table (all, including rows marked deleted)
    missing: int  # upstream ids with no live row
    duplicated: int  # extra rows beyond one per id
    stale: int  # ids present once or more whose newest last_update is older than upstream's
    unexpected: int  # live ids that do not exist upstream (deleted upstream, never marked)

    @property
    def exact(self) -> bool:
        """True when every upstream record is there once, as of its latest version."""
        return not (self.missing or self.duplicated or self.stale or self.unexpected)


def _instant(value: Any) -> int | None:
    """Epoch seconds of an ISO 8601 string or a datetime (DuckDB gives aware datetimes); None stays None."""
    if value is None:
        return None
    if isinstance(value, str):
        value = datetime.fromisoformat(value.replace("Z", "+00:00"))
    if value.tzinfo is None:
        value = value.replace(tzinfo=timezone.utc)
    return int(value.timestamp())


def compare_records(
    table: str,
    truth: Iterable[dict],
    loaded: Iterable[tuple[str, Any, Any]],
) -> TableCheck:
    """Compares upstream records (dicts with `id` and maybe `lastUpdate`) with loaded rows.

    `loaded` holds one `(id, last_update, deleted_at)` tuple per warehouse row; `last_update` and
    `deleted_at` may be None (a table without the column). A row with `deleted_at` set is a record the
    warehouse knows was deleted: it does not count as present.
    """
    truth = list(truth)
    upstream = {record["id"]: _instant(record.get("lastUpdate")) for record in truth}
    # Customers are soft-deleted: the record stays upstream with `deleted: true`, and the project's
    # pipeline marks its row with `_deleted_at`; that row still stands for an upstream record.
    soft_deleted = {record["id"] for record in truth if record.get("deleted") is True}
    rows = list(loaded)
    counts = Counter(row[0] for row in rows)
    live_newest: dict[str, int | None] = {}
    for row_id, last_update, deleted_at in rows:
        if deleted_at is not None and row_id not in soft_deleted:
            continue
        seen = _instant(last_update)
        if row_id not in live_newest or (seen is not None and (live_newest[row_id] or 0) < seen):
            live_newest[row_id] = seen
    missing = sum(1 for record_id in upstream if record_id not in live_newest)
    stale = sum(
        1
        for record_id, newest_upstream in upstream.items()
        if record_id in live_newest
        and newest_upstream is not None
        and (live_newest[record_id] is None or live_newest[record_id] < newest_upstream)
    )
    return TableCheck(
        table=table,
        expected=len(upstream),
        rows=len(rows),
        missing=missing,
        duplicated=sum(count - 1 for count in counts.values() if count > 1),
        stale=stale,
        unexpected=sum(1 for record_id in live_newest if record_id not in upstream),
    )


def loaded_rows(db_path: str | Path, table: str, dataset: str = "invoicing_raw") -> list[tuple]:
    """Every `(id, last_update, _deleted_at)` row of `dataset.table`; missing columns read as NULL."""
    with duckdb.connect(str(db_path), read_only=True) as con:
        columns = {
            name
            for (name,) in con.execute(
                "select column_name from information_schema.columns "
                "where table_schema = ? and table_name = ?",
                [dataset, table],
            ).fetchall()
        }
        if "id" not in columns:
            return []
        last_update = "last_update" if "last_update" in columns else "null"
        deleted_at = "_deleted_at" if "_deleted_at" in columns else "null"
        return con.execute(
            f'select id, {last_update}, {deleted_at} from "{dataset}"."{table}"'
        ).fetchall()


def check_table(
    db_path: str | Path, table: str, truth: Iterable[dict], dataset: str = "invoicing_raw"
) -> TableCheck:
    """`compare_records` for one table of a DuckDB file."""
    return compare_records(table, truth, loaded_rows(db_path, table, dataset))


# What the benchmark compares: list endpoints (paged, windowed on lastUpdate), single-object endpoints, and
# the status history of each supplier document (one request per supplier document). Not /webhooks: it needs
# the `read write` scope and both contenders read with `read` (the ETL never writes).
LIST_RESOURCES = (
    "customers", "items", "documents", "transactions", "transaction_usages", "suppliers",
    "supplier_documents",
)
SINGLE_RESOURCES = ("user", "portal")
EVENTS_RESOURCE = "supplier_document_events"
PAGE_SIZE = 100  # the sandbox's maximum page size (and the real service's, as far as is known)


ALL_RESOURCES = (*SINGLE_RESOURCES, *LIST_RESOURCES, EVENTS_RESOURCE)


def snapshot_all(sb: Any, resources: Iterable[str] = ALL_RESOURCES) -> dict[str, list[dict]]:
    """Every record of each resource in `resources`, as GET returns it (the sandbox's own ground truth)."""
    truth: dict[str, list[dict]] = {}
    for resource in resources:
        records = sb.portal.snapshot(resource)
        truth[resource] = [records] if isinstance(records, dict) else list(records)
    return truth


def record_count(truth: dict[str, list[dict]]) -> int:
    """Records of the list endpoints (the base of "1% of the records changed")."""
    return sum(len(truth[resource]) for resource in LIST_RESOURCES if resource in truth)


def describe(truth: dict[str, list[dict]]) -> str:
    """`documents=100000, customers=...`: the size of each resource."""
    return ", ".join(f"{resource}={len(records)}" for resource, records in truth.items())


def changed_records(truth: dict[str, list[dict]], since: dict[str, list[dict]], resource: str) -> list[dict]:
    """Records of `resource` that are new or carry another `lastUpdate` than in the earlier snapshot."""
    before = {record["id"]: record.get("lastUpdate") for record in since.get(resource, [])}
    return [
        record for record in truth.get(resource, [])
        if record["id"] not in before or before[record["id"]] != record.get("lastUpdate")
    ]


def changed_count(truth: dict[str, list[dict]], since: dict[str, list[dict]]) -> int:
    """Changed records over the list endpoints."""
    return sum(
        len(changed_records(truth, since, resource)) for resource in LIST_RESOURCES if resource in truth
    )


def minimum_requests(truth: dict[str, list[dict]], since: dict[str, list[dict]] | None = None) -> int:
    """The fewest requests that can carry the data: a full sync, or (with `since`) the changes after it.

    One token request; one request per single-object endpoint; per list endpoint every full page of 100
    plus the one short (possibly empty) page that proves the end, i.e. floor(n / 100) + 1; one request per
    supplier document (new or changed ones on an incremental) for its status history. Only the resources
    present in `truth` count.
    """
    def records(resource: str) -> list[dict]:
        return truth[resource] if since is None else changed_records(truth, since, resource)

    lists = sum(len(records(resource)) // PAGE_SIZE + 1 for resource in LIST_RESOURCES if resource in truth)
    singles = sum(1 for resource in SINGLE_RESOURCES if resource in truth)
    events = len(records("supplier_documents")) if EVENTS_RESOURCE in truth else 0
    return 1 + singles + lists + events


def check_warehouse(db_path: str | Path, truth: dict[str, list[dict]]) -> list[TableCheck]:
    """`check_table` for every compared resource (raw table name = resource name)."""
    return [check_table(db_path, resource, records) for resource, records in truth.items()]
