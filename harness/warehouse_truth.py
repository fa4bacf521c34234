"""The one answer to "does the warehouse equal the sandbox?": its raw tables, field by field, against
the sandbox's own records.

The truth is `sandbox.portal.snapshot(resource)` (every record exactly as GET returns it). Each record is
flattened the way the data contract says dlt names columns (`to.address.city` -> `to__address__city`),
lists go to child tables (compared in order), customers' contacts are JSON text. `mismatches` lists the
differences; `compare_raw_tables` adds the figures a suite prints (records and fields compared) and one
check a parent-driven comparison lacks: child rows whose parent row does not exist (a load that kept
stale lines of a replaced document).
"""

from __future__ import annotations

import json
import re
from collections import Counter
from collections.abc import Iterable
from dataclasses import dataclass, field
from datetime import UTC, datetime
from decimal import Decimal
from pathlib import Path
from typing import Any

import duckdb

from warehouse_engine.names import RAW_DATASET

SCHEMA = RAW_DATASET
COMPARED = ("user", "portal", "customers", "items", "documents", "transactions", "transaction_usages",
            "suppliers", "supplier_documents", "supplier_document_events")
CHILDREN = {"documents": ("lines", "messages"), "suppliers": ("tags",), "supplier_documents": ("tags",)}
RAW_TABLES = COMPARED  # webhooks need the `write` scope, which the read-only sync never asks for
UNLIMITED = 10**9


def snake(name: str) -> str:
    return re.sub(r"(?<=[a-z0-9])([A-Z])", r"_\1", name).lower()


def flatten(record: dict, prefix: str = "") -> dict:
    out = {}
    for key, value in record.items():
        name = prefix + snake(key)
        if isinstance(value, dict):
            out.update(flatten(value, name + "__"))
        elif isinstance(value, list) and not (prefix == "" and key == "contacts"):
            continue
        else:
            out[name] = value
    return out


def same(expected, actual) -> bool:
    if expected is None or actual is None:
        return expected is None and actual is None
    if isinstance(expected, bool) or isinstance(actual, bool):
        return expected == actual
    if isinstance(expected, (int, float, Decimal)):
        return isinstance(actual, (int, Decimal)) and Decimal(str(expected)) == Decimal(actual)
    if isinstance(actual, datetime):
        parsed = datetime.fromisoformat(str(expected))
        return parsed.astimezone(UTC) == actual.astimezone(UTC)
    if isinstance(expected, list):
        return json.loads(actual) == expected
    return expected == actual


def rows(con, table: str) -> list[dict]:
    exists = con.execute("select count(*) from information_schema.tables where table_schema = ? and table_name = ?",
                         [SCHEMA, table]).fetchone()[0]
    if not exists:
        return []
    cursor = con.execute(f'select * from {SCHEMA}."{table}"')
    names = [d[0] for d in cursor.description]
    return [dict(zip(names, row)) for row in cursor.fetchall()]


def mismatches(warehouse: str, portal, tables=COMPARED, limit: int = 20) -> list[str]:
    """Differences between the warehouse and the portal's snapshot (empty when exact)."""
    problems: list[str] = []
    con = duckdb.connect(warehouse, read_only=True)
    try:
        for table in tables:
            truth = portal.snapshot(table)
            loaded = rows(con, table)
            ids = [r["id"] for r in loaded]
            if len(ids) != len(set(ids)):
                problems.append(f"{table}: duplicate ids")
            present = {r["id"]: r for r in loaded if r.get("_deleted_at") is None or table == "customers"}
            truth_ids = {r["id"] for r in truth}
            if set(present) != truth_ids:
                problems.append(f"{table}: {len(truth_ids - set(present))} missing, "
                                f"{len(set(present) - truth_ids)} extra, e.g. "
                                f"{sorted(truth_ids ^ set(present))[:3]}")
            for record in truth:
                row = present.get(record["id"])
                if row is None:
                    continue
                for column, value in flatten(record).items():
                    if column not in row and value is None:  # a null object: its flattened columns are null
                        children = [c for c in row if c.startswith(column + "__")]
                        if not children or any(row[c] is not None for c in children):
                            problems.append(f"{table} {record['id']} {column}: null object not null in the warehouse")
                    elif column not in row:
                        problems.append(f"{table}.{column}: no such column")
                    elif not same(value, row[column]):
                        problems.append(f"{table} {record['id']} {column}: {value!r} != {row[column]!r}")
                expected_deleted = record.get("deletedAt") if record.get("deleted") else None
                if not same(expected_deleted, row.get("_deleted_at")):
                    problems.append(f"{table} {record['id']} _deleted_at: {row.get('_deleted_at')!r}")
            for child in CHILDREN.get(table, ()):
                problems += _child_mismatches(con, table, child, truth, present)
            if len(problems) > limit:
                break
    finally:
        con.close()
    return problems[:limit]


def _child_mismatches(con, table: str, child: str, truth: list[dict], present: dict) -> list[str]:
    problems = []
    by_parent: dict[str, list[dict]] = {}
    for row in sorted(rows(con, f"{table}__{child}"), key=lambda r: r["_dlt_list_idx"]):
        by_parent.setdefault(row["_dlt_parent_id"], []).append(row)
    for record in truth:
        parent = present.get(record["id"])
        if parent is None:
            continue
        loaded = by_parent.get(parent["_dlt_id"], [])
        expected = record.get(snake_to_camel(child)) or []
        if len(loaded) != len(expected):
            problems.append(f"{table}__{child} of {record['id']}: {len(loaded)} rows, expected {len(expected)}")
            continue
        for position, (item, row) in enumerate(zip(expected, loaded)):
            fields = flatten(item) if isinstance(item, dict) else {"value": item}
            for column, value in fields.items():
                if not same(value, row.get(column)):
                    problems.append(f"{table}__{child} {record['id']}[{position}].{column}: {value!r} != {row.get(column)!r}")
    return problems


def snake_to_camel(name: str) -> str:
    head, *rest = name.split("_")
    return head + "".join(part.title() for part in rest)


def table_fingerprint(warehouse: str) -> dict[str, list]:
    """Every raw table's rows (sorted), and dlt's committed state rows: to prove a failed run changed nothing."""
    con = duckdb.connect(warehouse, read_only=True)
    try:
        names = [r[0] for r in con.execute(
            "select table_name from information_schema.tables where table_schema = ? order by 1", [SCHEMA]).fetchall()]
        return {name: sorted(map(repr, con.execute(f'select * from {SCHEMA}."{name}"').fetchall())) for name in names}
    finally:
        con.close()


@dataclass
class Comparison:
    """What a comparison covered and every difference it found (one text line each)."""

    records_compared: int = 0
    fields_compared: int = 0
    records_by_table: dict[str, int] = field(default_factory=dict)
    mismatches: list[str] = field(default_factory=list)

    def merge(self, other: Comparison) -> None:
        """Adds another comparison's counts and mismatches to this one."""
        self.records_compared += other.records_compared
        self.fields_compared += other.fields_compared
        for table, count in other.records_by_table.items():
            self.records_by_table[table] = self.records_by_table.get(table, 0) + count
        self.mismatches.extend(other.mismatches)

    def summary(self, limit: int = 15) -> str:
        """A short text for assertion messages."""
        lines = [f"{len(self.mismatches)} mismatches over {self.records_compared} records"]
        lines += [f"  {m}" for m in self.mismatches[:limit]]
        return "\n".join(lines)


def compare_raw_tables(warehouse_path: Path, portal, tables: tuple[str, ...] = RAW_TABLES) -> Comparison:
    """Every raw table in `tables` against `portal.snapshot(table)`, field by field (opens the
    warehouse read-only: call it when no connection of this process writes the file)."""
    result = Comparison(mismatches=mismatches(str(warehouse_path), portal, tables=tables, limit=UNLIMITED))
    for table in tables:
        records = portal.snapshot(table)
        result.records_by_table[table] = len(records)
        result.records_compared += len(records)
        for record in records:
            result.fields_compared += len(flatten(record))
            for child in CHILDREN.get(table, ()):
                items = record.get(snake_to_camel(child)) or []
                result.records_compared += len(items)
                result.records_by_table[f"{table}__{child}"] = result.records_by_table.get(
                    f"{table}__{child}", 0
                ) + len(items)
                result.fields_compared += sum(len(flatten(i)) if isinstance(i, dict) else 1 for i in items)
    result.mismatches += orphan_child_rows(warehouse_path)
    return result


def orphan_child_rows(warehouse_path: Path) -> list[str]:
    """Child tables' rows whose `_dlt_parent_id` matches no `_dlt_id` of the parent table."""
    found = []
    with duckdb.connect(str(warehouse_path), read_only=True) as connection:
        tables = {
            name
            for (name,) in connection.execute(
                "select table_name from information_schema.tables where table_schema = ?", [RAW_DATASET]
            ).fetchall()
        }
        for child in sorted(t for t in tables if "__" in t):
            parent = child.rsplit("__", 1)[0]
            if parent not in tables:
                continue
            count = connection.execute(
                f'select count(*) from {RAW_DATASET}."{child}" c where not exists '
                f'(select 1 from {RAW_DATASET}."{parent}" p where p._dlt_id = c._dlt_parent_id)'
            ).fetchone()[0]
            if count:
                found.append(f"{child}: {count} rows without a parent row in {parent}")
    return found


# ---- by id: what a benchmark can ask of any dlt load of the API, this pipeline's or the generic
# `rest_api` source's (whose tables have no `_deleted_at` column: every row counts as present there) ----
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
        value = datetime.fromisoformat(value)
    if value.tzinfo is None:
        value = value.replace(tzinfo=UTC)
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


def loaded_rows(db_path: str | Path, table: str, dataset: str = RAW_DATASET) -> list[tuple]:
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
    db_path: str | Path, table: str, truth: Iterable[dict], dataset: str = RAW_DATASET
) -> TableCheck:
    """`compare_records` for one table of a DuckDB file."""
    return compare_records(table, truth, loaded_rows(db_path, table, dataset))


def check_warehouse(db_path: str | Path, truth: dict[str, list[dict]]) -> list[TableCheck]:
    """`check_table` for every compared resource (raw table name = resource name)."""
    return [check_table(db_path, resource, records) for resource, records in truth.items()]
