"""Discovers the SQL models in `warehouse_engine/sql/` and builds them into DuckDB in dependency order.

A model is one `.sql` file holding one `select`; its folder is its schema (`warehouse_engine/sql/marts/receivables.sql` ->
table `marts.receivables`). Dependencies are read from the SQL text itself: every schema-qualified
reference to another model's schema or to the raw dataset (`invoicing_raw.documents`) is one, so adding a
model needs no Python. The Dagster assets and the `invoicing-warehouse models` command share this module.

The report date reaches the SQL through the DuckDB variable `as_of_date` (`getvariable('as_of_date')`), the
portal's time zone (the calendar of date-only fields) through `portal_time_zone`.
`build_models` runs every model inside one transaction: readers on other connections see either the
previous marts or the new ones, never a half-built set (staging views always read the current raw tables).
"""

from __future__ import annotations

import re
import time
from collections.abc import Callable, Iterable, Sequence
from dataclasses import dataclass
from datetime import date, datetime
from pathlib import Path
from typing import Any
from zoneinfo import ZoneInfo

import duckdb

from warehouse_engine.names import RAW_DATASET as RAW_SCHEMA

# The models ship inside this package (package data), so an installed wheel finds them as a checkout does.
SQL_DIR: Path = Path(__file__).resolve().parent / "sql"
# The service's zone: its date-only fields are calendar dates there (warehouse_engine/sql/README.md, "Dates").
PORTAL_TIME_ZONE = "Europe/Paris"

# Comments and string literals are removed before looking for references, so a commented-out
# `from marts.x` or a literal 'staging.y' never becomes a dependency.
_COMMENTS_AND_STRINGS = re.compile(r"--[^\n]*|/\*.*?\*/|'(?:[^']|'')*'", re.DOTALL)
_MATERIALIZED = re.compile(r"^\s*--\s*materialized\s*:\s*(\w+)\s*$", re.MULTILINE | re.IGNORECASE)
_QUALIFIED_NAME = re.compile(
    r"(?<![\w.\"])([a-z_][a-z0-9_]*)\s*\.\s*([a-z_][a-z0-9_]*)(?![\w.(])", re.IGNORECASE
)


class ModelDefinitionError(ValueError):
    """A model folder that cannot be built: unknown reference, dependency cycle, empty file."""


class MissingRawTableError(RuntimeError):
    """Raw tables the models read are absent from the warehouse (the sync has not run yet)."""

    def __init__(self, missing: list[str], sync_has_run: bool = False) -> None:
        self.missing = missing
        if sync_has_run:
            # dlt creates a table only once a record reaches it: a portal without any e-mail, payment or
            # supplier document leaves its table missing even after a successful sync
            hint = (
                "a sync has run, so the portal probably holds no such records yet and the sync did not "
                "create their empty tables"
            )
        else:
            hint = "run `invoicing-warehouse sync` first"
        super().__init__(f"raw table(s) missing from the warehouse: {', '.join(missing)}; {hint}")


@dataclass(frozen=True)
class SqlModel:
    """One SQL file: `key` is `<schema>.<name>`, `depends_on` the models and raw tables it reads.

    `materialized` is `table` (default) or `view`, chosen by a `-- materialized: view` line in the file.
    """

    key: str
    schema: str
    name: str
    path: Path
    sql: str
    depends_on: frozenset[str]
    materialized: str = "table"

    @property
    def model_dependencies(self) -> frozenset[str]:
        """The dependencies that are other models (raw tables excluded)."""
        return frozenset(d for d in self.depends_on if not d.startswith(f"{RAW_SCHEMA}."))

    @property
    def raw_dependencies(self) -> frozenset[str]:
        """The raw tables (`invoicing_raw.<table>`) this model reads."""
        return self.depends_on - self.model_dependencies


def parse_references(sql: str, schemas: Iterable[str]) -> frozenset[str]:
    """Schema-qualified table references in `sql` whose schema is one of `schemas` (lowercased)."""
    wanted = {s.lower() for s in schemas}
    text = _COMMENTS_AND_STRINGS.sub(" ", sql)
    found = {f"{s.lower()}.{t.lower()}" for s, t in _QUALIFIED_NAME.findall(text)}
    return frozenset(ref for ref in found if ref.split(".")[0] in wanted)


def discover_models(sql_dir: Path = SQL_DIR) -> list[SqlModel]:
    """Every `<sql_dir>/<schema>/<name>.sql`, in dependency order (dependencies first).

    Raises ModelDefinitionError when there is no model at all (a build of nothing would pass for a good one:
    an install without the package's SQL), on an empty file, a reference to a model that has no file, or a
    cycle.
    """
    files = sorted(p for p in Path(sql_dir).glob("*/*.sql") if p.is_file())
    if not files:
        raise ModelDefinitionError(f"no SQL model found: no <schema>/<name>.sql file under {sql_dir}")
    schemas = {p.parent.name.lower() for p in files} | {RAW_SCHEMA}
    models: dict[str, SqlModel] = {}
    for path in files:
        sql = path.read_text(encoding="utf-8").strip().rstrip(";").strip()
        if not sql:
            raise ModelDefinitionError(f"{path}: empty model file")
        schema, name = path.parent.name.lower(), path.stem.lower()
        key = f"{schema}.{name}"
        directive = _MATERIALIZED.search(sql)
        materialized = directive.group(1).lower() if directive else "table"
        if materialized not in ("table", "view"):
            raise ModelDefinitionError(f"{path}: materialized must be table or view, not {materialized!r}")
        models[key] = SqlModel(key, schema, name, path, sql, parse_references(sql, schemas), materialized)
    for model in models.values():
        unknown = sorted(d for d in model.model_dependencies if d not in models)
        if unknown:
            raise ModelDefinitionError(
                f"{model.path}: references {', '.join(unknown)}, which has no SQL file"
            )
    return _topological_order(models)


def _topological_order(models: dict[str, SqlModel]) -> list[SqlModel]:
    # Depth-first to detect cycles; then by depth (raw readers first), then key, so the order is stable
    # and every staging model precedes the marts.
    depth: dict[str, int] = {}
    visiting: list[str] = []

    def visit(key: str) -> int:
        if key in depth:
            return depth[key]
        if key in visiting:
            cycle = visiting[visiting.index(key) :] + [key]
            raise ModelDefinitionError(f"dependency cycle between SQL models: {' -> '.join(cycle)}")
        visiting.append(key)
        depth[key] = 1 + max((visit(dep) for dep in sorted(models[key].model_dependencies)), default=-1)
        visiting.pop()
        return depth[key]

    for key in sorted(models):
        visit(key)
    return [models[key] for key in sorted(models, key=lambda k: (depth[k], k))]


def downstream_models(raw_tables: Iterable[str], sql_dir: Path = SQL_DIR) -> list[str]:
    """Keys of the models that read any of `raw_tables` (bare names: `documents`), directly or through other
    models, in dependency order: what a load of only those tables makes stale."""
    stale = {f"{RAW_SCHEMA}.{table}" for table in raw_tables}
    chosen: list[str] = []
    for model in discover_models(sql_dir):  # dependency order: a model's inputs are decided before it
        if model.depends_on & stale:
            stale.add(model.key)
            chosen.append(model.key)
    return chosen


def missing_models(conn: duckdb.DuckDBPyConnection, sql_dir: Path = SQL_DIR) -> list[str]:
    """Keys of the models never built in this warehouse (no table or view of that name), sorted."""
    existing = {f"{s}.{t}" for s, t in conn.execute(
        "select lower(table_schema), lower(table_name) from information_schema.tables").fetchall()}
    return sorted(m.key for m in discover_models(sql_dir) if m.key not in existing)


def today_in_portal_zone() -> date:
    """The default report date: today's date in the portal's time zone (PORTAL_TIME_ZONE)."""
    return datetime.now(ZoneInfo(PORTAL_TIME_ZONE)).date()


def missing_raw_tables(conn: duckdb.DuckDBPyConnection, models: Iterable[SqlModel]) -> list[str]:
    """Raw tables read by `models` that do not exist in the warehouse, sorted."""
    needed = set().union(*(m.raw_dependencies for m in models))
    existing = {
        f"{s}.{t}"
        for s, t in conn.execute(
            "select lower(table_schema), lower(table_name) from information_schema.tables "
            "where table_schema = ?",
            [RAW_SCHEMA],
        ).fetchall()
    }
    return sorted(needed - existing)


def one_row(
    conn: duckdb.DuckDBPyConnection, sql: str, parameters: Sequence[Any] | None = None
) -> tuple[Any, ...]:
    """The single row of a query that always yields one (an aggregate such as `count(*)`).

    DuckDB types `fetchone()` Optional for queries that return no row; for these that would be a bug.
    """
    row = conn.execute(sql, parameters).fetchone()
    if row is None:
        raise LookupError(f"query returned no row: {sql}")
    return row


def build_model(conn: duckdb.DuckDBPyConnection, model: SqlModel, as_of: date | None = None) -> int:
    """Materialises `model` as table (or view) `<schema>.<name>` for report date `as_of` (default today in the
    portal's time zone).

    Returns the number of rows. Runs in the caller's transaction, if any.
    """
    as_of = as_of or today_in_portal_zone()
    relation = f"{model.schema}.{model.name}"
    conn.execute(f"create schema if not exists {model.schema}")
    conn.execute(f"set variable as_of_date = date '{as_of.isoformat()}'")
    conn.execute(f"set variable portal_time_zone = '{PORTAL_TIME_ZONE}'")
    # `create or replace` cannot turn a table into a view or back: drop the other kind first
    other_kind = "table" if model.materialized == "view" else "view"
    if one_row(
        conn,
        "select count(*) from duckdb_tables() where schema_name = ? and table_name = ?"
        if other_kind == "table"
        else "select count(*) from duckdb_views() where schema_name = ? and view_name = ?",
        [model.schema, model.name],
    )[0]:
        conn.execute(f"drop {other_kind} {relation}")
    conn.execute(f"create or replace {model.materialized} {relation} as\n{model.sql}")
    return int(one_row(conn, f"select count(*) from {relation}")[0])


def build_models(
    conn: duckdb.DuckDBPyConnection,
    as_of: date | None = None,
    select: Iterable[str] | None = None,
    sql_dir: Path = SQL_DIR,
    on_built: Callable[[SqlModel, int, float], None] | None = None,
    before_commit: Callable[[duckdb.DuckDBPyConnection], None] | None = None,
) -> dict[str, int]:
    """Builds every model (or those in `select`, by key or bare name) in dependency order.

    All models are replaced in one transaction (rolled back on any error), so `conn` must not already be
    inside one. Raises MissingRawTableError
    before building anything when a raw table is absent. `on_built(model, rows, seconds)` is called after
    each model. `before_commit(conn)` is called inside the transaction once every model is built: what it
    raises rolls the whole build back (the gate's checks, runs/gate.py). Returns {model key: row count}.
    """
    as_of = as_of or today_in_portal_zone()
    models = discover_models(sql_dir)
    if select is not None:
        wanted = set(select)
        by_name = {m.name: m.key for m in models}
        keys = {by_name.get(w, w) for w in wanted}
        unknown = sorted(k for k in keys if k not in {m.key for m in models})
        if unknown:
            raise ModelDefinitionError(f"unknown model(s): {', '.join(unknown)}")
        models = [m for m in models if m.key in keys]
    missing = missing_raw_tables(conn, models)
    if missing:
        sync_has_run = bool(
            one_row(
                conn,
                "select count(*) from information_schema.tables where table_schema = ? and table_name = '_dlt_loads'",
                [RAW_SCHEMA],
            )[0]
        )
        raise MissingRawTableError(missing, sync_has_run)
    rows: dict[str, int] = {}
    conn.execute("begin transaction")
    try:
        for model in models:
            started = time.perf_counter()
            rows[model.key] = build_model(conn, model, as_of)
            if on_built is not None:
                on_built(model, rows[model.key], time.perf_counter() - started)
        if before_commit is not None:
            before_commit(conn)
        conn.execute("commit")
    except BaseException:
        conn.execute("rollback")
        raise
    return rows
