"""Field-by-field comparison of the raw warehouse tables with the sandbox's ground truth.

The truth is `sandbox.portal.snapshot(resource)` (every record exactly as GET returns it). Each record is
flattened the way the data contract says dlt names columns (`to.address.city` -> `to__address__city`),
lists go to child tables (compared in order), customers' contacts are JSON text.
"""

from __future__ import annotations

import json
import re
from datetime import datetime, timezone
from decimal import Decimal

import duckdb

SCHEMA = "invoicing_raw"
COMPARED = ("user", "portal", "customers", "items", "documents", "transactions", "transaction_usages",
            "suppliers", "supplier_documents", "supplier_document_events")
CHILDREN = {"documents": ("lines", "messages"), "suppliers": ("tags",), "supplier_documents": ("tags",)}


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
        parsed = datetime.fromisoformat(str(expected).replace("Z", "+00:00"))
        return parsed.astimezone(timezone.utc) == actual.astimezone(timezone.utc)
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
