"""What the extraction reads from and writes to the warehouse outside dlt's loads.

Indexes (id -> last_update, _deleted_at) let whole-list scans load only what differs; tombstones set
`_deleted_at` on rows whose record is gone upstream (a 404 on GET by id), children included. The row is
kept: deletes are data. Everything here reads and writes one portal's rows only (`portal_id`); the upgrade
of a warehouse made before portals existed is in portal_upgrade.py.
"""

from __future__ import annotations

from collections.abc import Sequence
from datetime import datetime
from typing import Any

import dlt
from dlt.common.schema.typing import TColumnSchema
from dlt.destinations.sql_client import SqlClientBase

from invoicing_warehouse.engine.names import PORTAL_COLUMN
from pipelines.invoicing.dates import format_timestamp
from pipelines.invoicing.read.reader import Index
from pipelines.invoicing.settings import ENDPOINTS, EVENTS, Columns

# Lists that may fall back to a whole-list scan (their window parameters are not in the spec) or are
# always read whole: their index is loaded on every run. The others only for a reconcile.
# Customers too: their id scan (reader.py) checks the warehouse's ids a list no longer shows.
ALWAYS_INDEXED = ("webhooks", "suppliers", "supplier_documents", "customers")
# Tables whose rows reference a customer: a referenced id never loaded is checked by id too (A7c).
CUSTOMER_REFERENCES = ("documents", "transactions")


def load_indexes(pipeline: dlt.Pipeline, names: list[str], *, reconcile: bool, portal_id: str) -> dict[str, Index]:
    """id -> (last_update, _deleted_at) as canonical text of the portal's rows, for the tables a whole-list
    scan may read."""
    wanted = [n for n in names if n in ENDPOINTS and ENDPOINTS[n].mode in ("window", "full")
              and (reconcile or n in ALWAYS_INDEXED)]
    indexes: dict[str, Index] = {}
    if not wanted:
        return indexes
    try:
        with pipeline.sql_client() as client:
            for name in wanted:
                table = client.make_qualified_table_name(name)
                try:
                    rows = select_rows(client, f"select id, last_update, _deleted_at from {table} "
                                       f"where {PORTAL_COLUMN} = ?", portal_id)
                except Exception:  # the table does not exist yet: nothing to compare with  # noqa: BLE001
                    rows = []
                indexes[name] = {row[0]: (_text(row[1]), _text(row[2])) for row in rows}
                if ENDPOINTS[name].id_scan:
                    for referenced in _referenced_customer_ids(client, portal_id):
                        indexes[name].setdefault(referenced, (None, None))
    except Exception:  # no dataset yet  # noqa: BLE001
        return {name: {} for name in wanted}
    return indexes


def load_digests(pipeline: dlt.Pipeline, names: list[str], *, reconcile: bool,
                 portal_id: str) -> dict[str, dict[str, str | None]]:
    """id -> `_digest` (of the record as served when loaded; None for a row loaded before digests were kept)
    of the portal's rows, for the tables whose index `load_indexes` loads: what a whole-list scan compares,
    so a change that did not move `lastUpdate` is loaded again."""
    wanted = [n for n in names if n in ENDPOINTS and ENDPOINTS[n].mode in ("window", "full")
              and (reconcile or n in ALWAYS_INDEXED)]
    digests: dict[str, dict[str, str | None]] = {}
    try:
        with pipeline.sql_client() as client:
            for name in wanted:
                table = client.make_qualified_table_name(name)
                try:
                    rows = select_rows(client, f"select id, _digest from {table} where {PORTAL_COLUMN} = ?",
                                       portal_id)
                except Exception:  # no table, or one loaded before `_digest` existed  # noqa: BLE001
                    rows = []
                digests[name] = {row[0]: row[1] for row in rows}
    except Exception:  # no dataset yet  # noqa: BLE001
        return {name: {} for name in wanted}
    return digests


def select_rows(client: SqlClientBase[Any], sql: str, *args: Any) -> Sequence[Sequence[Any]]:
    """The rows of a query; dlt types `execute_sql` Optional because a statement without a result gives None."""
    rows = client.execute_sql(sql, *args)
    if rows is None:
        raise LookupError(f"statement returned no result set: {sql}")
    return rows


def _referenced_customer_ids(client: SqlClientBase[Any], portal_id: str) -> set[str]:
    """Customer ids the documents and transactions name (a customer deleted before it was ever listed,
    on a server that hides deleted customers, is known only from them)."""
    ids: set[str] = set()
    for table in CUSTOMER_REFERENCES:
        qualified = client.make_qualified_table_name(table)
        try:
            rows = select_rows(client, f"select distinct customer_id from {qualified} "
                               f"where customer_id is not null and {PORTAL_COLUMN} = ?", portal_id)
        except Exception:  # the table does not exist yet  # noqa: BLE001, S112
            continue
        ids.update(row[0] for row in rows)
    return ids


def _text(moment: datetime | None) -> str | None:
    return format_timestamp(moment) if moment is not None else None


def apply_tombstones(pipeline: dlt.Pipeline, tombstones: dict[str, list[str]], run_time: datetime,
                     portal_id: str) -> None:
    """Sets `_deleted_at` = `run_time` on the portal's rows (and their child rows) of ids gone upstream."""
    with pipeline.sql_client() as client:
        for name, ids in tombstones.items():
            table = client.make_qualified_table_name(name)
            marks = ", ".join(["?"] * len(ids))
            for child in ENDPOINTS[name].nested:
                child_table = client.make_qualified_table_name(f"{name}__{child}")
                try:
                    client.execute_sql(
                        f"update {child_table} set _deleted_at = ? where _deleted_at is null and _dlt_root_id in "
                        f"(select _dlt_id from {table} where {PORTAL_COLUMN} = ? and id in ({marks}))",
                        run_time, portal_id, *ids)
                except Exception:  # no child table yet (no record ever had a non-empty list)  # noqa: BLE001, S110
                    pass
            client.execute_sql(
                f"update {table} set _deleted_at = ? where _deleted_at is null and {PORTAL_COLUMN} = ? "
                f"and id in ({marks})", run_time, portal_id, *ids)


def remove_replayed_rows(pipeline: dlt.Pipeline) -> int:
    """Deletes second copies of rows (same `_dlt_id`) left by a load job replayed after a kill.

    A process killed while dlt was loading leaves a package whose interrupted jobs are loaded again by
    the next run; observed with SIGKILL: a job whose insert had already committed inserts its rows a
    second time (same `_dlt_id`, same load id). Identical copies are removed; returns how many.
    """
    removed = 0
    with pipeline.sql_client() as client:
        for table in pipeline.default_schema.data_table_names():
            name = client.make_qualified_table_name(table)
            try:
                total, distinct = select_rows(client, f"select count(*), count(distinct _dlt_id) from {name}")[0]
            except Exception:  # a table of the schema not created yet  # noqa: BLE001, S112
                continue
            if total != distinct:
                client.execute_sql(
                    f"delete from {name} where rowid not in (select min(rowid) from {name} group by _dlt_id)")
                removed += total - distinct
    return removed


# dlt's DuckDB types for the catalogue's column hints (settings.py); dlt's own columns added below.
_DUCKDB_TYPES = {"text": "varchar", "bool": "boolean", "bigint": "bigint"}


def _duckdb_type(hint: TColumnSchema) -> str:
    data_type = hint["data_type"]
    assert data_type is not None, "every column of the catalogue (settings.py) declares its type"
    if data_type == "decimal":
        return f"decimal({hint['precision']},{hint['scale']})"
    if data_type == "timestamp":
        return "timestamp with time zone"
    return _DUCKDB_TYPES[data_type]


def create_empty_tables(pipeline: dlt.Pipeline, names: list[str]) -> list[str]:
    """Creates, empty and fully typed, the tables of `names` (and their child tables) that dlt never made.

    dlt creates a table only when a row reaches it, so a portal without, say, supplier documents would
    have no `supplier_documents` table and every model reading it would fail. The columns are the ones
    dlt itself would create; when rows arrive later, dlt finds the table and adds only what is new.
    Returns the tables created.
    """
    wanted: list[tuple[str, Columns, bool]] = []
    for name in names:
        endpoint = ENDPOINTS.get(name) or (EVENTS if name == EVENTS.name else None)
        if endpoint is None:
            continue
        wanted.append((name, endpoint.columns, False))
        wanted += [(f"{name}__{child}", columns, True) for child, columns in endpoint.nested.items()]
    created = []
    with pipeline.sql_client() as client:
        if not client.has_dataset():
            client.create_dataset()
        existing = {row[0] for row in select_rows(
            client, "select table_name from information_schema.tables where table_schema = ?", client.dataset_name)}
        for table, columns, is_child in wanted:
            if table in existing:
                continue
            definitions = [f'"{column}" {_duckdb_type(hint)}' for column, hint in columns.items()]
            definitions += ['"_dlt_parent_id" varchar not null', '"_dlt_list_idx" bigint not null',
                            '"_dlt_root_id" varchar not null'] if is_child else ['"_dlt_load_id" varchar not null']
            definitions.append('"_dlt_id" varchar not null')
            client.execute_sql(f"create table {client.make_qualified_table_name(table)} ({', '.join(definitions)})")
            created.append(table)
    return created


def remove_unreloaded_rows(pipeline: dlt.Pipeline, names: list[str], portal_id: str, load_ids: list[str]) -> int:
    """After a full refresh of one portal: deletes that portal's rows (children included) of the tables
    `names` that none of the run's loads `load_ids` wrote, i.e. records no longer served. Other portals'
    rows are untouched (a dlt refresh would drop whole tables). Returns how many root rows went."""
    removed = 0
    tables = [n for n in names if n in ENDPOINTS or n == EVENTS.name]
    marks = ", ".join(["?"] * len(load_ids))
    kept = f"{PORTAL_COLUMN} = ? and _dlt_load_id not in ({marks})" if load_ids else f"{PORTAL_COLUMN} = ?"
    with pipeline.sql_client() as client:
        existing = {row[0] for row in select_rows(
            client, "select table_name from information_schema.tables where table_schema = ?", client.dataset_name)}
        for name in tables:
            if name not in existing:
                continue
            table = client.make_qualified_table_name(name)
            endpoint = ENDPOINTS.get(name) or EVENTS
            for child in endpoint.nested:
                if f"{name}__{child}" in existing:
                    client.execute_sql(
                        f"delete from {client.make_qualified_table_name(f'{name}__{child}')} where _dlt_root_id in "
                        f"(select _dlt_id from {table} where {kept})", portal_id, *load_ids)
            removed += select_rows(client, f"select count(*) from {table} where {kept}", portal_id, *load_ids)[0][0]
            client.execute_sql(f"delete from {table} where {kept}", portal_id, *load_ids)
    return removed
