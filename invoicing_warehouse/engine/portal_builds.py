"""Builds the models for some portals only: a run that loaded changes of portal A rebuilds A's rows of every mart
and leaves every other portal's rows as they are (issue 45, point 1).

Why it is right: every product model's rows of one portal are computed from that portal's raw rows only (each
staging model carries `portal_id`, every join of two portals' relations is on it, and the reference tables are
no portal's). So the rows of portals P computed on the raw tables restricted to P are the rows of P of a build
on every portal; tests/sql/test_portal_builds.py holds a full rebuild against it, row for row.

How: an in-memory catalog (SCOPE_CATALOG) is made current, whose `invoicing_raw` views read the warehouse's raw
rows of P only (a child table's rows through its root's `_dlt_id`), whose view models are the models' own SQL
and whose tables are either built there from their SQL (the models chosen) or views of the warehouse's table
restricted to P (the others). The models' SQL names `invoicing_raw.x`, `staging.y`, `marts.z` without a catalog,
so it runs there unchanged. Then, in ONE transaction on the warehouse, each chosen table model's rows of P are
deleted and the scope's inserted; a model without `portal_id` (a firm-wide table), whose columns changed, or a
view is built whole there as `build_models` does; `before_commit` (the gate's checks) runs inside it.
"""

from __future__ import annotations

import time
from collections.abc import Callable, Iterable, Sequence
from datetime import date
from pathlib import Path

import duckdb

from invoicing_warehouse.engine.names import PORTAL_COLUMN, RAW_DATASET
from invoicing_warehouse.engine.sql_names import quoted, quoted_relation
from invoicing_warehouse.engine.sql_runner import (
    ANALYST_SCHEMA,
    SQL_DIR,
    ModelBuildError,
    SqlModel,
    build_model,
    discover_models,
    drop_stale_analyst_models,
    one_row,
    set_build_variables,
)

SCOPE_CATALOG = "portal_scope"


Columns = dict[tuple[str, str], list[tuple[str, str]]]  # (schema, table) -> [(column, type)] in order


def _columns(conn: duckdb.DuckDBPyConnection, catalog: str) -> Columns:
    """Every relation's columns in `catalog`, in one read of the catalog (a read per relation was a fifth of a
    hint run's models, bench/RESULTS.md); a relation absent is absent from the answer."""
    found: Columns = {}
    for schema, table, name, kind in conn.execute(
            "select table_schema, table_name, column_name, data_type from information_schema.columns "
            "where table_catalog = ? order by table_schema, table_name, ordinal_position", [catalog]).fetchall():
        found.setdefault((schema, table), []).append((name.lower(), kind))
    return found


def _portal_filter(portals: Sequence[str]) -> str:
    # portal names are the operator's (portals.toml), quoted as SQL strings, never spliced raw
    return ", ".join("'" + portal.replace("'", "''") + "'" for portal in portals)


def _raw_scope(conn: duckdb.DuckDBPyConnection, warehouse: str, portals: Sequence[str]) -> None:
    """The scope's `invoicing_raw`: each raw table's rows of `portals` (a child table's through its root)."""
    conn.execute(f"create schema {RAW_DATASET}")
    chosen = _portal_filter(portals)
    tables = [row[0] for row in conn.execute(
        "select table_name from information_schema.tables where table_catalog = ? and table_schema = ?",
        [warehouse, RAW_DATASET]).fetchall()]
    every = _columns(conn, warehouse)
    for table in tables:
        source = f"{quoted(warehouse)}.{RAW_DATASET}.{quoted(table)}"
        columns = {name for name, _ in every.get((RAW_DATASET, table), [])}
        root = table.split("__", 1)[0]
        if PORTAL_COLUMN in columns:
            where = f" where {PORTAL_COLUMN} in ({chosen})"
        elif root != table and root in tables and "_dlt_root_id" in columns:
            where = (f" where _dlt_root_id in (select _dlt_id from {quoted(warehouse)}.{RAW_DATASET}.{quoted(root)}"
                     f" where {PORTAL_COLUMN} in ({chosen}))")
        else:
            where = ""  # no portal's (dlt's own tables): read whole
        conn.execute(f"create view {RAW_DATASET}.{quoted(table)} as select * from {source}{where}")


def _model_scope(conn: duckdb.DuckDBPyConnection, warehouse: str, models: list[SqlModel], chosen: set[str],
                 portals: Sequence[str], as_of: date) -> None:
    """Every product model in the scope: views from their SQL, the chosen tables built there, the others read
    from the warehouse (their rows of `portals`)."""
    set_build_variables(conn, as_of)
    built = _columns(conn, warehouse)  # the warehouse's models, unchanged while the scope is made
    for model in models:
        conn.execute(f"create schema if not exists {quoted(model.schema)}")
        relation = quoted_relation(model.key)
        if model.materialized == "view" or model.key in chosen:
            try:
                conn.execute(f"create {model.materialized} {relation} as\n{model.sql}")
            except duckdb.IOException:
                raise
            except duckdb.Error as error:
                raise ModelBuildError(model, error) from error
            continue
        columns = {name for name, _ in built.get((model.schema, model.name), [])}
        if not columns:  # never built in the warehouse (the gate builds everything then): built here
            conn.execute(f"create {model.materialized} {relation} as\n{model.sql}")
            continue
        where = f" where {PORTAL_COLUMN} in ({_portal_filter(portals)})" if PORTAL_COLUMN in columns else ""
        conn.execute(f"create view {relation} as select * from {quoted(warehouse)}.{relation}{where}")


def build_models_for_portals(
    conn: duckdb.DuckDBPyConnection,
    portals: Iterable[str],
    as_of: date,
    select: Iterable[str],
    sql_dir: Path = SQL_DIR,
    on_built: Callable[[SqlModel, int, float], None] | None = None,
    before_commit: Callable[[duckdb.DuckDBPyConnection], None] | None = None,
    models_dir: Path | None = None,
) -> dict[str, int]:
    """Rebuilds the models `select` (keys) for the rows of `portals` only, on a warehouse whose every model was
    built before for report date `as_of` (the gate's rule: one report date per build); the other portals' rows
    stay as they are. One transaction, as `build_models` (see the module's docstring); returns {model: rows}."""
    portals = sorted(set(portals))
    every_model = discover_models(sql_dir, models_dir)
    chosen = set(select)
    product = [model for model in every_model if model.schema != ANALYST_SCHEMA]
    warehouse = str(one_row(conn, "select current_database()")[0])
    conn.execute(f"attach ':memory:' as {SCOPE_CATALOG}")
    try:
        conn.execute(f"use {SCOPE_CATALOG}")
        try:
            _raw_scope(conn, warehouse, portals)
            clock = time.perf_counter()
            _model_scope(conn, warehouse, product, chosen, portals, as_of)
            scope_seconds = time.perf_counter() - clock
        finally:
            conn.execute(f"use {quoted(warehouse)}")
        rows = _replace_rows(conn, warehouse, every_model, chosen, portals, as_of, on_built, before_commit,
                             scope_seconds / max(len(chosen), 1))
    finally:
        conn.execute(f"detach {SCOPE_CATALOG}")
    return rows


def _replace_rows(conn: duckdb.DuckDBPyConnection, warehouse: str, every_model: list[SqlModel], chosen: set[str],
                  portals: Sequence[str], as_of: date,
                  on_built: Callable[[SqlModel, int, float], None] | None,
                  before_commit: Callable[[duckdb.DuckDBPyConnection], None] | None,
                  scope_share: float) -> dict[str, int]:
    """The transaction: the portals' rows of each chosen table replaced by the scope's, the rest built whole."""
    rows: dict[str, int] = {}
    conn.execute("begin transaction")
    try:
        drop_stale_analyst_models(conn, every_model)
        # read once: each model below replaces only itself, so its columns here are still these when its turn comes
        in_warehouse, in_scope = _columns(conn, warehouse), _columns(conn, SCOPE_CATALOG)
        for model in (m for m in every_model if m.key in chosen):
            clock = time.perf_counter()
            relation = quoted_relation(model.key)
            here = in_warehouse.get((model.schema, model.name), [])
            there = in_scope.get((model.schema, model.name), [])
            names = [name for name, _ in here]
            if (model.schema == ANALYST_SCHEMA or model.materialized == "view" or PORTAL_COLUMN not in names
                    or here != there):
                try:  # a view, a firm-wide table, a model whose columns changed: built whole, as build_models
                    # (on the variables _model_scope set on this connection for the same `as_of`)
                    rows[model.key] = build_model(conn, model, as_of, variables_set=True)
                except duckdb.IOException:
                    raise
                except duckdb.Error as error:
                    raise ModelBuildError(model, error) from error
            else:
                listed = ", ".join(quoted(name) for name in names)
                conn.execute(f"delete from {relation} where {PORTAL_COLUMN} in ({_portal_filter(portals)})")
                conn.execute(f"insert into {relation} ({listed}) select {listed} from {SCOPE_CATALOG}.{relation}")
                rows[model.key] = int(one_row(conn, f"select count(*) from {relation}")[0])
            if on_built is not None:
                on_built(model, rows[model.key], time.perf_counter() - clock + scope_share)
        if before_commit is not None:
            before_commit(conn)
        conn.execute("commit")
    except BaseException:
        conn.execute("rollback")
        raise
    return rows
