"""An in-memory catalog beside a warehouse's own, whose `invoicing_raw` views read that warehouse's raw tables:
the models' SQL names `invoicing_raw.x`, `staging.y`, `marts.z` without a catalog, so a build made there reads
the warehouse and writes nothing into it (the as-of builds of invoicing_warehouse/runs/as_of.py, the month-end builds of
invoicing_warehouse/runs/month_end_trends.py)."""

from __future__ import annotations

import duckdb

from invoicing_warehouse.engine.names import RAW_DATASET

SCRATCH_CATALOG = "dashboard_as_of"


def raw_views(reader: duckdb.DuckDBPyConnection) -> None:
    """Makes an in-memory catalog (SCRATCH_CATALOG) current on `reader` (the warehouse's catalog current
    before), whose `invoicing_raw` views read the warehouse's raw tables."""
    published = reader.execute("select current_database()").fetchall()[0][0]
    tables = [
        row[0]
        for row in reader.execute(
            "select table_name from information_schema.tables where table_schema = ? and table_catalog = ?",
            [RAW_DATASET, published],
        ).fetchall()
    ]
    reader.execute(f"attach ':memory:' as {SCRATCH_CATALOG}")
    reader.execute(f"use {SCRATCH_CATALOG}")
    reader.execute(f"create schema {RAW_DATASET}")
    for table in tables:
        reader.execute(
            f'create view {RAW_DATASET}."{table}" as select * from "{published}".{RAW_DATASET}."{table}"'
        )


def leave(connection: duckdb.DuckDBPyConnection, catalog: str) -> None:
    """Makes `catalog` current on `connection` again and detaches the scratch catalog, if attached."""
    connection.execute(f'use "{catalog}"')
    attached = connection.execute(
        "select count(*) from duckdb_databases() where database_name = ?", [SCRATCH_CATALOG]
    ).fetchall()[0][0]
    if attached:
        connection.execute(f"detach {SCRATCH_CATALOG}")
