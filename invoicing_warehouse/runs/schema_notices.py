"""Schema notices: the raw columns of fields the API serves that the ledger does not know
(pipelines/invoicing/doctor/known_columns.py). dlt adds a column for any new field on its own, so nothing is
lost; what is missing is a person deciding what the field means. The regular sync notes each new column once
(remembered in invoicing_warehouse/runs/run_log.py), a Dagster WARN check names them on every run (assets/checks.py) and
the doctor lists them. Never blocking: a new field changes no figure the marts compute.
"""

from __future__ import annotations

import duckdb

from invoicing_warehouse.engine.connection import WarehouseUnavailable, connect
from invoicing_warehouse.engine.names import RAW_DATASET
from invoicing_warehouse.engine.target import WarehouseTarget
from invoicing_warehouse.runs import run_log
from pipelines.invoicing.doctor.known_columns import unknown_columns


def new_columns(connection: duckdb.DuckDBPyConnection) -> dict[str, list[str]]:
    """raw table -> its columns the ledger does not know (only tables that have some)."""
    rows = connection.execute(
        "select table_name, column_name from information_schema.columns where table_schema = ? "
        "and table_catalog = current_database() and not starts_with(table_name, '_dlt') order by 1, 2",
        [RAW_DATASET],
    ).fetchall()
    by_table: dict[str, list[str]] = {}
    for table, column in rows:
        by_table.setdefault(table, []).append(column)
    found = {table: unknown_columns(table, columns) for table, columns in by_table.items()}
    return {table: columns for table, columns in found.items() if columns}


def notice_lines(columns: list[str]) -> list[str]:
    """One sync note per new column (`<table>.<column>`): what it is and what to do."""
    return [f"{column.split('.', 1)[0]}: new field served, column {column} is not in the contract ledger "
            "(docs/contract.md); it is loaded raw and used by no figure: judge it and add it to the ledger"
            for column in columns]


def notices_once(target: WarehouseTarget) -> list[str]:
    """The notes of the new columns no earlier run has noted (each is said once, then remembered). A warehouse
    that cannot be opened now (another process writing it) gives none: the next run says them."""
    try:
        with connect(target, read_only=True) as connection:
            found = new_columns(connection)
    except (duckdb.Error, WarehouseUnavailable):
        return []
    return notice_lines(run_log.notice_once(
        target, [f"{table}.{column}" for table, columns in found.items() for column in columns]))
