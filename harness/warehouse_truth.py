"""The one answer to "does the warehouse equal the sandbox?": its raw tables, field by field, against
what the sandbox serves under a contract profile (`invoicing_sandbox/contract.py`).

The truth is `sandbox.portal.snapshot(resource)` (every record with all the sandbox's fields) passed through
the profile's own serving functions (`invoicing_sandbox/served.py`: the routes call the same ones, so there is one
source of truth for what a client is served). Under the default profile that is the snapshot itself. Each
record is flattened the way the data contract says dlt names columns (`to.address.city` ->
`to__address__city`), lists go to child tables (compared in order), customers' contacts are JSON text.
`mismatches` lists the differences; `compare_raw_tables` adds the figures a suite prints (records and fields
compared) and one check a parent-driven comparison lacks: child rows whose parent row does not exist (a load
that kept stale lines of a replaced document).

What "exact" means under a profile:
- every field the profile serves equals the warehouse's column; a field the sandbox has but the profile does
  not serve (an invented field, `deletedAt` of a hidden or flagged customer) is NULL in the warehouse: the
  client never invents a value;
- the client's documented additions (docs/contract.md, notes of issue 14) are part of the expected record:
  supplier-document events always carry `supplierDocumentId` (the request path's id when not served) and, when
  the table has the column, `_position` (1 = the oldest event of the document's history); a served event
  without `id` gets `"{supplierDocumentId}:{_position}"`; a raw table with `_absent_fields` holds exactly the
  keys of its endpoint's `assumed` tuple that the served record did not carry (a key served null is present);
- `_deleted_at` of a deleted customer: the served `deletedAt` instant when the profile serves one; otherwise the
  client's observation time, so only its presence is compared;
- deleted customers the profile hides from lists (`deleted_customers="hidden"`) are unknowable to a client
  that never saw them: for those, exact means every live customer is present, live and equal; every deleted
  customer the warehouse holds is flagged deleted (`_deleted_at` set) and equal to what GET by id serves; and a
  deleted customer the warehouse lacks is referenced by no live document or transaction row of the warehouse
  (a referenced id is knowable: GET /customers/{id} serves it). Under the other modes every customer is
  listed, so every one must be there.
"""

from __future__ import annotations

import json
import re
from collections import Counter
from collections.abc import Iterable, Iterator
from contextlib import contextmanager
from dataclasses import dataclass, field
from datetime import UTC, datetime
from decimal import Decimal
from pathlib import Path
from typing import Any

import duckdb

from harness.served_truth import ABSENT_FIELDS, POSITION, absent_keys, expected_records
from invoicing_sandbox.contract import ContractProfile
from invoicing_sandbox.served import served_event_item
from invoicing_warehouse.engine.connection import connect
from invoicing_warehouse.engine.names import DEFAULT_PORTAL, PORTAL_COLUMN, RAW_DATASET
from invoicing_warehouse.engine.sql_runner import one_row
from invoicing_warehouse.engine.target import WarehouseTarget
from pipelines.invoicing.settings import ENDPOINTS, EVENTS, RESOURCE_NAMES

SCHEMA = RAW_DATASET
# every resource of the catalogue the read scope reaches: webhooks need the `write` scope, which the read-only
# sync never asks for
COMPARED = tuple(name for name in RESOURCE_NAMES if (ENDPOINTS.get(name) or EVENTS).scope == "read")
CHILDREN = {name: tuple(ENDPOINTS[name].nested) for name in COMPARED if name in ENDPOINTS and ENDPOINTS[name].nested}
RAW_TABLES = COMPARED
UNLIMITED = 10**9
API_PORTAL = "api_portal_id"  # where the client keeps the API's `portalId` (portal_id names the portal)


# A warehouse to compare: a DuckDB file's path, a WarehouseTarget (a DuckLake too, through the engine's
# own connection), or an open connection (a lake at an old snapshot, say), which is left open.
Warehouse = str | Path | WarehouseTarget | duckdb.DuckDBPyConnection


@contextmanager
def reading(warehouse: Warehouse) -> Iterator[duckdb.DuckDBPyConnection]:
    """A read-only connection on `warehouse`, closed on exit unless the caller passed it open."""
    if isinstance(warehouse, duckdb.DuckDBPyConnection):
        yield warehouse
        return
    if isinstance(warehouse, WarehouseTarget):
        connection = connect(warehouse, read_only=True)
    else:
        connection = duckdb.connect(str(warehouse), read_only=True)
    try:
        yield connection
    finally:
        connection.close()


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


def portal_aware(con) -> bool:
    """Whether the warehouse was loaded by this project's client, whose rows name their portal (`portal_id`,
    the API's own id in `api_portal_id`); a plain dlt load of the API has neither: one portal, all rows."""
    return bool(con.execute("select count(*) from information_schema.columns where table_schema = ? "
                            "and column_name = ?", [SCHEMA, API_PORTAL]).fetchone()[0])


def rows(con, table: str, portal_id: str | None = DEFAULT_PORTAL) -> list[dict]:
    """The rows of one portal in a raw table (all rows when `portal_id` is None); a child table's through its
    root row (`_dlt_root_id`)."""
    exists = con.execute("select count(*) from information_schema.tables where table_schema = ? and table_name = ?",
                         [SCHEMA, table]).fetchone()[0]
    if not exists:
        return []
    if portal_id is None:
        cursor = con.execute(f'select * from {SCHEMA}."{table}"')
    elif "__" in table:
        root = table.split("__", 1)[0]
        cursor = con.execute(f'select * from {SCHEMA}."{table}" where _dlt_root_id in '
                             f'(select _dlt_id from {SCHEMA}."{root}" where {PORTAL_COLUMN} = ?)', [portal_id])
    else:
        cursor = con.execute(f'select * from {SCHEMA}."{table}" where {PORTAL_COLUMN} = ?', [portal_id])
    names = [d[0] for d in cursor.description]
    return [dict(zip(names, row, strict=True)) for row in cursor.fetchall()]


def _live_customer_references(con, portal_id: str | None) -> set[str]:
    """Customer ids referenced by a live document or transaction row of the portal in the warehouse."""
    found: set[str] = set()
    for table in ("documents", "transactions"):
        found.update(r["customer_id"] for r in rows(con, table,
                                                    portal_id) if r.get("_deleted_at") is None and r.get("customer_id"))
    return found


def mismatches(warehouse: Warehouse, portal, tables=COMPARED, limit: int = 20,
               contract: ContractProfile | str = "default", portal_id: str = DEFAULT_PORTAL) -> list[str]:
    """Differences between the warehouse's rows of `portal_id` and what `contract` serves of the sandbox
    `portal` (empty when exact; the module docstring says what exact means under a profile)."""
    profile = ContractProfile.named(contract)
    problems: list[str] = []
    with reading(warehouse) as con:
        aware = portal_aware(con)
        api_column = API_PORTAL if aware else PORTAL_COLUMN  # where the API's `portalId` lands
        owner: str | None = portal_id if aware else None  # None: every row (a plain dlt load)
        for table in tables:
            pairs = expected_records(portal, table, profile)
            loaded = rows(con, table, owner)
            ids = [r["id"] for r in loaded]
            if len(ids) != len(set(ids)):
                problems.append(f"{table}: duplicate ids")
            present = {r["id"]: r for r in loaded if r.get("_deleted_at") is None or table == "customers"}
            truth_ids = {expected["id"] for _, expected in pairs}
            unknowable: set[str] = set()
            if table == "customers" and profile.deleted_customers == "hidden":
                referenced = _live_customer_references(con, owner)
                unknowable = {r["id"] for r, _ in pairs if r.get("deleted") and r["id"] not in referenced}
            missing = truth_ids - set(present) - unknowable
            if missing or set(present) - truth_ids:
                problems.append(f"{table}: {len(missing)} missing, "
                                f"{len(set(present) - truth_ids)} extra, e.g. "
                                f"{sorted(missing | (set(present) - truth_ids))[:3]}")
            for record, expected in pairs:
                row = present.get(expected["id"])
                if row is not None:
                    served = served_event_item(record, profile) if table == EVENTS.name else expected
                    problems += _record_mismatches(table, record, expected, row, served, api_column)
            for child in CHILDREN.get(table, ()):
                problems += _child_mismatches(con, table, child, pairs, present, owner)
            if len(problems) > limit:
                break
    return problems[:limit]


def _record_mismatches(table: str, record: dict, expected: dict, row: dict, served: dict,
                       api_column: str = API_PORTAL) -> list[str]:
    """One record's fields (served ones equal, unserved ones NULL), `_deleted_at` and `_absent_fields`;
    `served` is the record as served, before the client's additions."""
    problems = []
    key = expected["id"]
    # the API's `portalId` is the client's `api_portal_id`: `portal_id` is the user's name of the portal
    columns = {api_column if name == PORTAL_COLUMN else name: value for name, value in flatten(expected).items()}
    if POSITION in columns and POSITION not in row:
        columns.pop(POSITION)  # a warehouse without the client's `_position` (a plain dlt load)
    for column, value in columns.items():
        if column not in row and value is None:  # a null object: its flattened columns are null
            children = [c for c in row if c.startswith(column + "__")]
            if not children or any(row[c] is not None for c in children):
                problems.append(f"{table} {key} {column}: null object not null in the warehouse")
        elif column not in row:
            problems.append(f"{table}.{column}: no such column")
        elif not same(value, row[column]):
            problems.append(f"{table} {key} {column}: {value!r} != {row[column]!r}")
    for column in flatten(record):
        column = api_column if column == PORTAL_COLUMN else column
        if column not in columns and row.get(column) is not None:
            problems.append(f"{table} {key} {column}: not served, yet {row[column]!r} in the warehouse")
    if record.get("deleted") and "deletedAt" not in expected:  # not served: the client's observation time
        if row.get("_deleted_at") is None:
            problems.append(f"{table} {key} _deleted_at: NULL for a deleted record")
    else:
        expected_deleted = expected.get("deletedAt") if record.get("deleted") else None
        if not same(expected_deleted, row.get("_deleted_at")):
            problems.append(f"{table} {key} _deleted_at: {row.get('_deleted_at')!r}")
    if ABSENT_FIELDS in row:  # the client's column (a plain dlt load has none)
        absent = absent_keys(table, served)
        loaded_absent = {k for k in (row[ABSENT_FIELDS] or "").split(",") if k}
        if loaded_absent != absent:
            problems.append(f"{table} {key} {ABSENT_FIELDS}: {row[ABSENT_FIELDS]!r}, expected {sorted(absent)}")
    return problems


def _child_mismatches(con, table: str, child: str, pairs: list[tuple[dict, dict]], present: dict,
                      portal_id: str | None) -> list[str]:
    problems = []
    by_parent: dict[str, list[dict]] = {}
    for row in sorted(rows(con, f"{table}__{child}", portal_id), key=lambda r: r["_dlt_list_idx"]):
        by_parent.setdefault(row["_dlt_parent_id"], []).append(row)
    name = snake_to_camel(child)
    for record, expected_record in pairs:
        parent = present.get(expected_record["id"])
        if parent is None:
            continue
        loaded = by_parent.get(parent["_dlt_id"], [])
        expected = expected_record.get(name) or []
        if len(loaded) != len(expected):
            problems.append(f"{table}__{child} of {expected_record['id']}: {len(loaded)} rows, "
                            f"expected {len(expected)}")
            continue
        # `expected` and `loaded` have one length (checked above); the stored record's own list may be longer
        # than what was served, and only the served items are compared: not strict
        for position, (item, own, row) in enumerate(zip(expected, record.get(name) or [], loaded, strict=False)):
            fields = flatten(item) if isinstance(item, dict) else {"value": item}
            for column, value in fields.items():
                if not same(value, row.get(column)):
                    problems.append(f"{table}__{child} {expected_record['id']}[{position}].{column}: "
                                    f"{value!r} != {row.get(column)!r}")
            for column in flatten(own) if isinstance(own, dict) else ():
                if column not in fields and row.get(column) is not None:
                    problems.append(f"{table}__{child} {expected_record['id']}[{position}].{column}: not served, "
                                    f"yet {row[column]!r} in the warehouse")
    return problems


def snake_to_camel(name: str) -> str:
    head, *rest = name.split("_")
    return head + "".join(part.title() for part in rest)


def table_fingerprint(warehouse: Warehouse) -> dict[str, list]:
    """Every raw table's rows (sorted), and dlt's committed state rows: to prove a failed run changed nothing."""
    with reading(warehouse) as con:
        names = [r[0] for r in con.execute(
            "select table_name from information_schema.tables where table_schema = ? order by 1", [SCHEMA]).fetchall()]
        return {name: sorted(map(repr, con.execute(f'select * from {SCHEMA}."{name}"').fetchall())) for name in names}


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


def compare_raw_tables(warehouse_path: Warehouse, portal, tables: tuple[str, ...] = RAW_TABLES,
                       contract: ContractProfile | str = "default", portal_id: str = DEFAULT_PORTAL) -> Comparison:
    """Every raw table in `tables` (rows of `portal_id`) against what `contract` serves of the sandbox
    `portal`, field by field (opens the warehouse read-only: call it when no connection of this process
    writes the file)."""
    result = Comparison(mismatches=mismatches(warehouse_path, portal, tables=tables, limit=UNLIMITED,
                                              contract=contract, portal_id=portal_id))
    for table in tables:
        records = [expected for _, expected in expected_records(portal, table, contract)]
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


def orphan_child_rows(warehouse_path: Warehouse) -> list[str]:
    """Child tables' rows whose `_dlt_parent_id` matches no `_dlt_id` of the parent table."""
    found = []
    with reading(warehouse_path) as connection:
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
            count = one_row(
                connection,
                f'select count(*) from {RAW_DATASET}."{child}" c where not exists '
                f'(select 1 from {RAW_DATASET}."{parent}" p where p._dlt_id = c._dlt_parent_id)',
            )[0]
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
    stale = 0
    for record_id, newest_upstream in upstream.items():
        if record_id not in live_newest or newest_upstream is None:
            continue
        newest_loaded = live_newest[record_id]
        if newest_loaded is None or newest_loaded < newest_upstream:
            stale += 1
    return TableCheck(
        table=table,
        expected=len(upstream),
        rows=len(rows),
        missing=missing,
        duplicated=sum(count - 1 for count in counts.values() if count > 1),
        stale=stale,
        unexpected=sum(1 for record_id in live_newest if record_id not in upstream),
    )


def loaded_rows(db_path: Warehouse, table: str, dataset: str = RAW_DATASET) -> list[tuple]:
    """Every `(id, last_update, _deleted_at)` row of `dataset.table`; missing columns read as NULL."""
    with reading(db_path) as con:
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
    db_path: Warehouse, table: str, truth: Iterable[dict], dataset: str = RAW_DATASET
) -> TableCheck:
    """`compare_records` for one table of a DuckDB file."""
    return compare_records(table, truth, loaded_rows(db_path, table, dataset))


def check_warehouse(db_path: Warehouse, truth: dict[str, list[dict]]) -> list[TableCheck]:
    """`check_table` for every compared resource (raw table name = resource name)."""
    return [check_table(db_path, resource, records) for resource, records in truth.items()]
