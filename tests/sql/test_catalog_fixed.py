"""`catalog_fixed` (invoicing_warehouse/engine/sql_names.py): inside it, `relation_columns` answers from one read of the
catalog exactly as the live catalog does, for tables, views and absent relations; it serves only its own
connection, and ends with the block (the gate's checks read the catalog once per judgement)."""

from __future__ import annotations

import duckdb

from invoicing_warehouse.engine.sql_names import catalog_fixed, relation_columns


def _described(connection: duckdb.DuckDBPyConnection, relation: str) -> list[str]:
    # the independent answer: DuckDB's own DESCRIBE, column order kept
    return [row[0] for row in connection.execute(f"describe {relation}").fetchall()]


def test_inside_answers_as_the_live_catalog_and_only_for_its_connection(tmp_path):
    connection = duckdb.connect(str(tmp_path / "w.duckdb"))
    connection.execute("create schema marts; create schema staging")
    connection.execute("create table marts.receivables (portal_id varchar, invoice_id varchar, open decimal(18,2))")
    connection.execute("create view staging.stg as select 1 as b, 'x' as a")
    other = duckdb.connect(":memory:")
    other.execute("create schema marts; create table marts.other_only (z int)")
    try:
        with catalog_fixed(connection):
            assert relation_columns(connection, "marts.receivables") == _described(connection, "marts.receivables")
            assert relation_columns(connection, "marts.receivables") == ["portal_id", "invoice_id", "open"]
            assert relation_columns(connection, "staging.stg") == ["b", "a"]  # a view, in its order
            assert relation_columns(connection, "marts.absent") == []
            # another connection still asks its own live catalog
            assert relation_columns(other, "marts.other_only") == ["z"]
            assert relation_columns(connection, "marts.other_only") == []
            # the answer is the one read at the start: what the block promises not to do is not seen
            connection.execute("create table marts.later (c int)")
            assert relation_columns(connection, "marts.later") == []
        # after the block: the live catalog again
        assert relation_columns(connection, "marts.later") == ["c"]
    finally:
        connection.close()
        other.close()
