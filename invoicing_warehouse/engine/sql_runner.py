"""Discovers the SQL models in `sql/` and builds them into DuckDB in dependency order.

A model is one `.sql` file holding one `select` under its front matter (invoicing_warehouse/engine/model_manifest.py);
its folder is its schema (`sql/marts/receivables.sql` -> table `marts.receivables`). Dependencies are
parsed from the SQL itself (invoicing_warehouse/engine/sql_references.py): every schema-qualified table read from
another model's schema or the raw dataset (`invoicing_raw.documents`) is one, so adding a model needs no Python.
An analyst's folder of models (`--models-dir`, INVOICING_MODELS_DIR) holds flat `<name>.sql` files built into the
schema `analyst`, after the product's models, in the same transaction. The Dagster assets and the
`invoicing-warehouse models` command share this module.

The report date reaches the SQL through the DuckDB variable `as_of_date` (`getvariable('as_of_date')`), the
portal's time zone (the calendar of date-only fields) through `portal_time_zone`, the seed files (data the
models read, invoicing_warehouse/engine/seed_files.py) and the report settings
(invoicing_warehouse/engine/report_settings.py) through one variable each.
`build_models` runs every model inside one transaction: readers on other connections see either the
previous marts or the new ones, never a half-built set (staging views always read the current raw tables).
"""

from __future__ import annotations

import time
from collections.abc import Callable, Iterable, Sequence
from dataclasses import dataclass
from datetime import date, datetime
from functools import lru_cache
from pathlib import Path
from typing import Any
from zoneinfo import ZoneInfo

import duckdb

from invoicing_warehouse.engine.analyst_sandbox import build_in_sandbox
from invoicing_warehouse.engine.environment.engine_settings import MODELS_DIR
from invoicing_warehouse.engine.environment.reader import current_environment
from invoicing_warehouse.engine.model_inputs import SQL_DIR
from invoicing_warehouse.engine.model_manifest import Manifest, ManifestError, parse_manifest
from invoicing_warehouse.engine.model_selection import UnknownModelError, resolve_selection
from invoicing_warehouse.engine.names import RAW_DATASET as RAW_SCHEMA
from invoicing_warehouse.engine.report_settings import set_report_variables
from invoicing_warehouse.engine.seed_files import set_seed_variables
from invoicing_warehouse.engine.sql_names import (
    UnsafeNameError,
    checked_name,
    missing_columns,
    quoted,
    quoted_relation,
    sql_text,
)
from invoicing_warehouse.engine.sql_references import SqlParseError, parse_references

# The service's zone: its date-only fields are calendar dates there (sql/README.md, "Dates").
PORTAL_TIME_ZONE = "Europe/Paris"

# An analyst's own models: built into this schema, after the product's, from a folder named by the setting
# (read by the CLI and by Dagster alike) or by `models --models-dir`.
ANALYST_SCHEMA = "analyst"
MODELS_DIR_SETTING = MODELS_DIR.name


class ModelDefinitionError(ValueError):
    """A model folder that cannot be built: unknown reference, dependency cycle, empty file."""


def declared_columns(model: SqlModel) -> list[str]:
    """The columns `model`'s front matter names (grain, not_null, accepted_range, columns), each once, in order."""
    manifest = model.manifest
    described = [name for name, _ in manifest.columns]
    return list(dict.fromkeys([*manifest.grain, *manifest.not_null, *manifest.accepted_range, *described]))


def check_declared_columns(model: SqlModel, columns: Sequence[str]) -> None:
    """Raises ModelDefinitionError when a column `model`'s front matter names is not among the built `columns`:
    a check of a column that is not there would test nothing (or another relation's)."""
    missing = missing_columns(declared_columns(model), columns)
    if missing:
        raise ModelDefinitionError(f"{model.path}: the front matter names column(s) the model does not build: "
                                   f"{', '.join(missing)} (built: {', '.join(columns)})")


class ModelBuildError(duckdb.Error):
    """One model's SQL failed while building (a duckdb.Error naming the model and its file): the build rolled
    back, every model and the readers' copy stay as they were."""

    def __init__(self, model: SqlModel, error: duckdb.Error) -> None:
        super().__init__(f"model {model.key} ({model.path}) failed: {str(error).splitlines()[0]}")
        self.model_key = model.key


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

    `manifest` is its front matter (description, grain, date-only fields, tests).
    """

    key: str
    schema: str
    name: str
    path: Path
    sql: str
    depends_on: frozenset[str]
    manifest: Manifest

    @property
    def materialized(self) -> str:
        """`table` or `view` (front matter `materialized`, default table)."""
        return self.manifest.materialized

    @property
    def model_dependencies(self) -> frozenset[str]:
        """The dependencies that are other models (raw tables excluded)."""
        return frozenset(d for d in self.depends_on if not d.startswith(f"{RAW_SCHEMA}."))

    @property
    def raw_dependencies(self) -> frozenset[str]:
        """The raw tables (`invoicing_raw.<table>`) this model reads."""
        return self.depends_on - self.model_dependencies


def analyst_models_dir(explicit: Path | str | None = None) -> Path | None:
    """The analyst's folder of models: `explicit` (`--models-dir`), else the setting INVOICING_MODELS_DIR, else
    None. The CLI and Dagster both call this, so a folder named once is built and checked on every path."""
    if explicit is not None:
        return Path(explicit).expanduser()
    return current_environment().value(MODELS_DIR)


def _read_model(path: Path, schema: str, schemas: set[str]) -> SqlModel:
    # the stem becomes the table's name: a plain name, never SQL (security review 2, C1)
    name = path.stem.lower()
    try:
        checked_name(name, "model file name")
    except UnsafeNameError as error:
        raise ModelDefinitionError(f"{path}: {error}") from None
    sql = path.read_text(encoding="utf-8").strip().rstrip(";").strip()
    if not sql:
        raise ModelDefinitionError(f"{path}: empty model file")
    _one_select(sql, path)
    try:
        manifest = parse_manifest(sql, path)
        depends_on = parse_references(sql, schemas)
    except ManifestError as error:
        raise ModelDefinitionError(str(error)) from None
    except SqlParseError as error:
        raise ModelDefinitionError(f"{path}: SQL does not parse: {error}") from None
    return SqlModel(f"{schema}.{name}", schema, name, path, sql, depends_on, manifest)


def _one_select(sql: str, path: Path) -> None:
    """Refuses a model that is not exactly one SELECT, as DuckDB itself splits and types it (the parser that
    runs it: another parser's idea of `;` or of a statement is not what DuckDB would run)."""
    try:
        kinds = _statement_kinds(sql)
    except duckdb.Error as error:
        raise ModelDefinitionError(f"{path}: SQL does not parse: {str(error).splitlines()[0]}") from None
    if kinds != ("SELECT",):
        raise ModelDefinitionError(f"{path}: a model is exactly one SELECT statement, found: "
                                   f"{', '.join(kinds) or 'none'}")


@lru_cache(maxsize=512)
def _statement_kinds(sql: str) -> tuple[str, ...]:
    # cached by the text, as the manifest and the references are: every hint run discovers the models seven
    # times or more, and DuckDB's split of the package's SQL was 70 ms of each (bench/RESULTS.md)
    return tuple(statement.type.name for statement in duckdb.extract_statements(sql))


def discover_models(sql_dir: Path = SQL_DIR, models_dir: Path | None = None) -> list[SqlModel]:
    """Every `<sql_dir>/<schema>/<name>.sql`, then every `<models_dir>/<name>.sql` (schema `analyst`), in
    dependency order (dependencies first; the analyst's models after all of the product's).

    Raises ModelDefinitionError when there is no model at all (a build of nothing would pass for a good one:
    an install without the package's SQL), on an empty file, a missing or bad front matter, SQL that does not
    parse, a reference to a model that has no file, or a cycle. An analyst's model may read the product's models;
    the product's never read the analyst's.
    """
    files = sorted(p for p in Path(sql_dir).glob("*/*.sql") if p.is_file())
    if not files:
        raise ModelDefinitionError(f"no SQL model found: no <schema>/<name>.sql file under {sql_dir}")
    analyst_files: list[Path] = []
    if models_dir is not None:
        if not Path(models_dir).is_dir():
            raise ModelDefinitionError(f"models folder {models_dir} does not exist")
        analyst_files = sorted(p for p in Path(models_dir).glob("*.sql") if p.is_file())
        if not analyst_files:
            raise ModelDefinitionError(f"no <name>.sql file in the models folder {models_dir}")
    product_schemas = {p.parent.name.lower() for p in files}
    if ANALYST_SCHEMA in product_schemas:
        raise ModelDefinitionError(f"{sql_dir}: the schema {ANALYST_SCHEMA} is the analyst's, not the product's")
    schemas = product_schemas | {RAW_SCHEMA, ANALYST_SCHEMA}
    models: dict[str, SqlModel] = {}
    for path in files:
        model = _read_model(path, path.parent.name.lower(), schemas)
        models[model.key] = model
    for path in analyst_files:
        model = _read_model(path, ANALYST_SCHEMA, schemas)
        models[model.key] = model
    for model in models.values():
        unknown = sorted(d for d in model.model_dependencies if d not in models)
        if unknown:
            raise ModelDefinitionError(
                f"{model.path}: references {', '.join(unknown)}, which has no SQL file"
            )
        if model.schema != ANALYST_SCHEMA and any(d.startswith(f"{ANALYST_SCHEMA}.") for d in model.depends_on):
            raise ModelDefinitionError(f"{model.path}: a product model cannot read an analyst's model")
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
    # the analyst's models last: a broken one then fails after every product model was built, and names itself
    return [models[key] for key in sorted(models, key=lambda k: (models[k].schema == ANALYST_SCHEMA, depth[k], k))]


def downstream_models(raw_tables: Iterable[str], sql_dir: Path = SQL_DIR,
                      models_dir: Path | None = None) -> list[str]:
    """Keys of the models that read any of `raw_tables` (bare names: `documents`), directly or through other
    models, in dependency order: what a load of only those tables makes stale."""
    stale = {f"{RAW_SCHEMA}.{table}" for table in raw_tables}
    chosen: list[str] = []
    for model in discover_models(sql_dir, models_dir):  # dependency order: a model's inputs are decided before it
        if model.depends_on & stale:
            stale.add(model.key)
            chosen.append(model.key)
    return chosen


def missing_models(conn: duckdb.DuckDBPyConnection, sql_dir: Path = SQL_DIR,
                   models_dir: Path | None = None) -> list[str]:
    """Keys of the models never built in this warehouse (no table or view of that name), sorted."""
    existing = {f"{s}.{t}" for s, t in conn.execute(
        "select lower(table_schema), lower(table_name) from information_schema.tables").fetchall()}
    return sorted(m.key for m in discover_models(sql_dir, models_dir) if m.key not in existing)


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


def set_build_variables(conn: duckdb.DuckDBPyConnection, as_of: date) -> None:
    """Sets the DuckDB variables the product's models read (the report date, the portal's time zone, the seed
    files, the report settings) on `conn`: once per build, not once per model (13 statements and the settings
    read again for each of 50 models were a sixth of a build's time)."""
    conn.execute(f"set variable as_of_date = date '{as_of.isoformat()}'")
    conn.execute(f"set variable portal_time_zone = '{PORTAL_TIME_ZONE}'")
    set_seed_variables(conn)
    set_report_variables(conn)


def built_columns(conn: duckdb.DuckDBPyConnection, relation: str) -> list[str]:
    """The columns of `relation` (`schema.table`), which must exist: read from an empty result, not the catalog
    (0.25 ms instead of 3 ms in a warehouse of a hundred relations)."""
    return [column[0] for column in conn.execute(f"select * from {quoted_relation(relation)} limit 0").description]


def build_model(conn: duckdb.DuckDBPyConnection, model: SqlModel, as_of: date | None = None, *,
                variables_set: bool = False) -> int:
    """Materialises `model` as table (or view) `<schema>.<name>` for report date `as_of` (default today in the
    portal's time zone). `variables_set`: the caller has set the build's variables for this `as_of` on `conn`
    (`set_build_variables`, as a build of many models does once).

    An analyst's model is run on a DuckDB instance of its own (invoicing_warehouse/engine/analyst_sandbox.py) and its
    result stored here as a table: its SQL never runs on `conn`. Raises ModelDefinitionError when a column the
    front matter names is not built. Returns the number of rows. Runs in the caller's transaction, if any.
    """
    as_of = as_of or today_in_portal_zone()
    relation = quoted_relation(model.key)
    conn.execute(f"create schema if not exists {quoted(model.schema)}")
    materialized = "table" if model.schema == ANALYST_SCHEMA else model.materialized
    # `create or replace` cannot turn a table into a view or back: drop the other kind first
    other_kind = "table" if materialized == "view" else "view"
    if one_row(
        conn,
        "select count(*) from duckdb_tables() where schema_name = ? and table_name = ? "
        "and database_name = current_database()"
        if other_kind == "table"
        else "select count(*) from duckdb_views() where schema_name = ? and view_name = ? "
        "and database_name = current_database()",
        [model.schema, model.name],
    )[0]:
        conn.execute(f"drop {other_kind} {relation}")
    if model.schema == ANALYST_SCHEMA:
        build_in_sandbox(conn, model.key, model.sql, model.depends_on, as_of, PORTAL_TIME_ZONE)
    else:
        if not variables_set:
            set_build_variables(conn, as_of)
        conn.execute(f"create or replace {materialized} {relation} as\n{model.sql}")
    check_declared_columns(model, built_columns(conn, model.key))
    write_comments(conn, model, materialized)
    return int(one_row(conn, f"select count(*) from {relation}")[0])


def write_comments(conn: duckdb.DuckDBPyConnection, model: SqlModel, materialized: str) -> None:
    """Stores the front matter's description on the relation and each described column (`COMMENT ON`), so that
    any DuckDB client of the warehouse or the readers' copy shows what a column holds (`duckdb_columns()`,
    `describe`). The texts come from a file someone else may write: quoted as SQL string literals."""
    relation = quoted_relation(model.key)
    conn.execute(f"comment on {materialized} {relation} is {sql_text(model.manifest.description)}")
    for column, text in model.manifest.columns:
        conn.execute(f"comment on column {relation}.{quoted(column)} is {sql_text(text)}")

def drop_stale_analyst_models(conn: duckdb.DuckDBPyConnection, models: Iterable[SqlModel]) -> list[str]:
    """Drops every table or view of the schema `analyst` that is none of `models` (its file is gone, or no
    models folder is named any more): what the readers' copy shows of an analyst is what their folder holds
    now. Returns the keys dropped."""
    kept = {model.key for model in models if model.schema == ANALYST_SCHEMA}
    found = conn.execute(
        "select table_name, table_type from information_schema.tables where table_schema = ? "
        "and table_catalog = current_database() order by 1",
        [ANALYST_SCHEMA],
    ).fetchall()
    dropped: list[str] = []
    for name, kind in found:
        key = f"{ANALYST_SCHEMA}.{name}"
        if key not in kept:
            conn.execute(f"drop {'view' if kind == 'VIEW' else 'table'} {quoted_relation(key)}")
            dropped.append(key)
    return dropped


def build_models(
    conn: duckdb.DuckDBPyConnection,
    as_of: date | None = None,
    select: Iterable[str] | None = None,
    sql_dir: Path = SQL_DIR,
    on_built: Callable[[SqlModel, int, float], None] | None = None,
    before_commit: Callable[[duckdb.DuckDBPyConnection], None] | None = None,
    models_dir: Path | None = None,
) -> dict[str, int]:
    """Builds every model (or those in `select`: keys, bare names, `name+`,
    invoicing_warehouse/engine/model_selection.py) in dependency order, the analyst's
    models of `models_dir` after the product's.

    All models are replaced in one transaction (rolled back on any error), so `conn` must not already be
    inside one. Raises MissingRawTableError
    before building anything when a raw table is absent. `on_built(model, rows, seconds)` is called after
    each model. `before_commit(conn)` is called inside the transaction once every model is built: what it
    raises rolls the whole build back (the gate's checks, invoicing_warehouse/runs/gate.py). Returns {model key: row
    count}.
    """
    as_of = as_of or today_in_portal_zone()
    models = discover_models(sql_dir, models_dir)
    every_model = models
    if select is not None:
        try:
            keys = set(resolve_selection(models, select))
        except UnknownModelError as error:
            raise ModelDefinitionError(str(error)) from None
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
        drop_stale_analyst_models(conn, every_model)
        set_build_variables(conn, as_of)
        for model in models:
            started = time.perf_counter()
            try:
                rows[model.key] = build_model(conn, model, as_of, variables_set=True)
            except duckdb.IOException:
                raise  # the file, not the model: the callers' "cannot open" answer
            except duckdb.Error as error:
                raise ModelBuildError(model, error) from error
            if on_built is not None:
                on_built(model, rows[model.key], time.perf_counter() - started)
        if before_commit is not None:
            before_commit(conn)
        conn.execute("commit")
    except BaseException:
        conn.execute("rollback")
        raise
    return rows
