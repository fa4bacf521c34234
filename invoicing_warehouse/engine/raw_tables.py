"""What the warehouse holds of a raw table: its columns, its child tables, its row count.

Read from DuckDB's information schema, so they describe the tables as loaded, whoever loaded them.
"""

from __future__ import annotations

import duckdb

from invoicing_warehouse.engine.names import RAW_DATASET


def table_columns(connection: duckdb.DuckDBPyConnection, table: str) -> list[tuple[str, str, bool]]:
    """(name, DuckDB type, nullable) of each column of `invoicing_raw.<table>`; empty if it is absent."""
    rows = connection.execute(
        "select column_name, data_type, is_nullable = 'YES' from information_schema.columns "
        "where table_schema = ? and table_name = ? order by ordinal_position",
        [RAW_DATASET, table],
    ).fetchall()
    return [(str(name), str(data_type), bool(nullable)) for name, data_type, nullable in rows]


def child_tables(connection: duckdb.DuckDBPyConnection, table: str) -> list[str]:
    """The child tables dlt made from `table`'s nested lists (`documents__lines`, ...)."""
    rows = connection.execute(
        "select table_name from information_schema.tables where table_schema = ? "
        "and starts_with(table_name, ?) order by table_name",
        [RAW_DATASET, f"{table}__"],
    ).fetchall()
    return [str(name) for (name,) in rows]


def table_row_count(connection: duckdb.DuckDBPyConnection, table: str) -> int | None:
    """Rows now in `invoicing_raw.<table>`, None if the table does not exist yet."""
    exists = connection.execute(
        "select count(*) from information_schema.tables where table_schema = ? and table_name = ?",
        [RAW_DATASET, table],
    ).fetchone()
    if not exists or not exists[0]:
        return None
    counted = connection.execute(f'select count(*) from {RAW_DATASET}."{table}"').fetchone()
    return int(counted[0]) if counted else 0
