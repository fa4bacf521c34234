"""Builds an analyst's model on a DuckDB instance of its own, so that a models folder (code from someone else,
docs/add-a-model.md) runs with the least it needs (security review 2, C1 and H1).

For one model:
1. the relations its SQL reads (product models, raw tables, the analyst's earlier models) are copied from the
   writer's connection, as that build sees them (inside the gate's transaction), into a private temporary file;
2. a fresh in-memory instance attaches that file READ_ONLY and shows each relation under its usual name; it has
   no extension auto-installed or auto-loaded, refuses unsigned and community extensions and persistent
   secrets, scans no Python variable, then turns external access off (no file read or written, no ATTACH, no
   INSTALL or LOAD) and locks its configuration; no catalog, lake or secret is ever attached;
3. the model's one SELECT runs there, and its rows are stored in the writer's `analyst.<name>` as a table,
   where the gate judges them by the model's front matter as any model.
"""

from __future__ import annotations

import tempfile
from collections.abc import Iterable
from datetime import date
from pathlib import Path

import duckdb

from invoicing_warehouse.engine.sql_names import quoted, quoted_relation

# Everything an analyst's SQL could use to reach past its inputs, off before it runs. External access is turned
# off after the inputs are attached (DuckDB refuses ATTACH once it is off), then the configuration is locked.
SANDBOX_CONFIG = {
    "autoinstall_known_extensions": False,
    "autoload_known_extensions": False,
    "allow_unsigned_extensions": False,
    "allow_community_extensions": False,
    "allow_persistent_secrets": False,
    "python_enable_replacements": False,  # a FROM naming a Python variable of this process would scan it
    "threads": 1,  # one model of one analyst: the build's other work keeps the host's cores
}
SANDBOX_LOCKDOWN = ("set enable_external_access = false", "set lock_configuration = true")
INPUTS_CATALOG = "product"
_TRANSFER = "analyst_sandbox_transfer"  # the name a stream of rows is registered under while it is copied


def open_sandbox(inputs_file: Path | None, relations: Iterable[str]) -> duckdb.DuckDBPyConnection:
    """A locked-down in-memory instance showing each of `relations` (`schema.table`) of `inputs_file`, attached
    READ_ONLY, as a view of the same name (see the module's docstring)."""
    sandbox = duckdb.connect(":memory:", config=dict(SANDBOX_CONFIG))
    try:
        if inputs_file is not None:
            # ATTACH takes no parameter; the path is our own temporary file, its quotes doubled all the same
            path = str(inputs_file).replace("'", "''")
            sandbox.execute(f"attach '{path}' as {INPUTS_CATALOG} (read_only)")
        for relation in relations:
            schema, _ = relation.split(".", 1)
            sandbox.execute(f"create schema if not exists memory.{quoted(schema)}")
            sandbox.execute(f"create view memory.{quoted_relation(relation)} as "
                            f"select * from {INPUTS_CATALOG}.{quoted_relation(relation)}")
        for statement in SANDBOX_LOCKDOWN:
            sandbox.execute(statement)
    except BaseException:
        sandbox.close()
        raise
    return sandbox


def build_in_sandbox(conn: duckdb.DuckDBPyConnection, key: str, sql: str, inputs: Iterable[str],
                     as_of: date, time_zone: str) -> None:
    """Runs the analyst's model `key` (`analyst.<name>`, one SELECT `sql` reading `inputs`) on a sandbox and
    stores its rows as the table `key` of `conn` (replaced). The model's SQL never runs on `conn`."""
    inputs = sorted(set(inputs))
    with tempfile.TemporaryDirectory(prefix="invoicing-analyst-") as folder:  # mode 0700, removed after
        inputs_file = Path(folder) / "inputs.duckdb"
        if inputs:
            _copy_relations(conn, inputs, inputs_file)
        sandbox = open_sandbox(inputs_file if inputs else None, inputs)
        try:
            sandbox.execute("set variable as_of_date = ?::date", [as_of.isoformat()])
            sandbox.execute("set variable portal_time_zone = ?", [time_zone])
            rows = sandbox.execute(sql).to_arrow_reader()
            conn.register(_TRANSFER, rows)
            try:
                conn.execute(f"create or replace table {quoted_relation(key)} as select * from {_TRANSFER}")
            finally:
                conn.unregister(_TRANSFER)
        finally:
            sandbox.close()


def _copy_relations(conn: duckdb.DuckDBPyConnection, relations: list[str], target: Path) -> None:
    """Copies each relation of `conn` (as its current transaction sees it) into a new DuckDB file `target`."""
    copy = duckdb.connect(str(target))
    try:
        for relation in relations:
            schema, _ = relation.split(".", 1)
            rows = conn.execute(f"select * from {quoted_relation(relation)}").to_arrow_reader()
            copy.register(_TRANSFER, rows)
            try:
                copy.execute(f"create schema if not exists {quoted(schema)}")
                copy.execute(f"create table {quoted_relation(relation)} as select * from {_TRANSFER}")
            finally:
                copy.unregister(_TRANSFER)
    finally:
        copy.close()
