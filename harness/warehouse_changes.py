"""Small runs applied straight to a generated warehouse, the way the sync changes raw tables, and a
fingerprint of every relation, to compare a warehouse with its readers' snapshot (bench/publication_cost.py).

- `merge_documents`: what dlt's delete-insert merge does for a load of a few documents: the old rows
  of those (`portal_id`, `id`) and their child rows go, new versions (new `_dlt_id`, new
  `_dlt_load_id`, changed amount) and new child rows are appended;
- `tombstone_documents`: what `apply_tombstones` does (`_deleted_at` set in place, children too);
"""

from __future__ import annotations

from pathlib import Path

import duckdb

from invoicing_warehouse.engine.publish import connect_reader

RAW = "invoicing_raw"


def _ids(ids: list[str]) -> str:
    return ", ".join("'" + i.replace("'", "''") + "'" for i in ids)


def merge_documents(conn: duckdb.DuckDBPyConnection, ids: list[str], load_id: str, lines: int = 2) -> None:
    """A dlt load of new versions of documents `ids` (amount + 1.00, `lines` new lines each)."""
    wanted = _ids(ids)
    conn.execute("begin transaction")
    conn.execute(f"create or replace temp table merged as select * from {RAW}.documents where id in ({wanted})")
    for child in ("documents__lines", "documents__messages"):
        conn.execute(f"delete from {RAW}.{child} where _dlt_root_id in (select _dlt_id from merged)")
    conn.execute(f"delete from {RAW}.documents where id in ({wanted})")
    conn.execute(f"insert into {RAW}.documents by name select * replace ('{load_id}-' || id as _dlt_id, "
                 f"'{load_id}' as _dlt_load_id, amount + 1 as amount, amount_vat_net + 1 as amount_vat_net, "
                 f"remaining + 1 as remaining) from merged")
    conn.execute(f"insert into {RAW}.documents__lines by name select 'ITEM' as line_type, 'line ' || j as name, "
                 f"amount / {lines} as price, 1 as quantity, '{load_id}-' || id as _dlt_parent_id, j as _dlt_list_idx, "
                 f"'{load_id}-' || id as _dlt_root_id, '{load_id}-' || id || '-' || j as _dlt_id "
                 f"from merged, range({lines}) as r(j)")
    conn.execute("commit")


def tombstone_documents(conn: duckdb.DuckDBPyConnection, ids: list[str], at: str) -> None:
    """Marks documents `ids` and their child rows deleted upstream at `at` (an ISO timestamp)."""
    wanted = _ids(ids)
    for child in ("documents__lines", "documents__messages"):
        conn.execute(f"update {RAW}.{child} set _deleted_at = timestamptz '{at}' where _deleted_at is null and "
                     f"_dlt_root_id in (select _dlt_id from {RAW}.documents where id in ({wanted}))")
    conn.execute(f"update {RAW}.documents set _deleted_at = timestamptz '{at}' "
                 f"where _deleted_at is null and id in ({wanted})")


def relation_fingerprints(conn: duckdb.DuckDBPyConnection) -> dict[str, tuple[int, int]]:
    """{`schema.relation`: (rows, sum of row hashes)} over every table and view of the main database
    outside `main`: equal fingerprints mean the same rows (as a multiset) in two databases."""
    relations = conn.execute(
        "select schema_name, table_name from duckdb_tables() where database_name = current_database() "
        "and not temporary and schema_name <> 'main' union all select schema_name, view_name from duckdb_views() "
        "where database_name = current_database() and not internal and not temporary and schema_name <> 'main'"
    ).fetchall()
    result = {}
    for schema, name in relations:
        row = conn.execute(f'select count(*), coalesce(sum(hash(t)::hugeint), 0) from "{schema}"."{name}" t').fetchone()
        assert row is not None
        result[f"{schema}.{name}"] = (int(row[0]), int(row[1]))
    return result


def snapshot_differences(warehouse: Path, snapshot: Path) -> dict[str, tuple]:
    """{relation: (warehouse fingerprint, snapshot fingerprint)} of every relation that differs."""
    with duckdb.connect(str(warehouse), read_only=True) as connection:
        expected = relation_fingerprints(connection)
    with connect_reader(snapshot) as reader:
        found = relation_fingerprints(reader)
    return {k: (expected.get(k), found.get(k)) for k in expected.keys() | found.keys()
            if expected.get(k) != found.get(k)}
