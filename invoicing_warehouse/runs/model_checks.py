"""The checks each model declares in its front matter (invoicing_warehouse/engine/model_manifest.py), without Dagster:
the gate runs them before every publication (invoicing_warehouse/runs/gate.py), assets/checks.py shows
them in Dagster. Nothing here names a model: a model, the product's or an analyst's, is checked as it says.

- `keys_unique` (blocking): one row per value of the model's `grain`, none of it null; a duplicated row doubles
  its figure. Run on models stored as tables (the marts) and on every analyst's model: a product view's grain
  is documentation, checked by a test on the fixture; the tables built on it are where a duplicate would show.
- `not_null`, `accepted_range` (blocking): the columns the front matter names under `tests`.
- `dates_at_midnight` (a flag): the raw date-only values under `date_only` sit at a midnight, UTC or the
  portal's, so the calendar date the model reads is sure.
"""

from __future__ import annotations

from collections.abc import Iterable, Sequence
from pathlib import Path
from typing import Any

import duckdb

from invoicing_warehouse.engine.sql_names import missing_columns, quoted, quoted_relation, relation_columns
from invoicing_warehouse.engine.sql_runner import ANALYST_SCHEMA, SqlModel, discover_models
from invoicing_warehouse.runs.checks import SAMPLE_SIZE, WARN, WarehouseCheck, duplicate_keys, marts_built_on
from invoicing_warehouse.runs.served_fields import off_midnight_fields

KEYS_UNIQUE = "keys_unique"
KEYS_UNIQUE_DESCRIPTION = "One row per key of the model's grain (its front matter), none of it null."
DATES_AT_MIDNIGHT_DESCRIPTION = "Date-only values are a midnight (UTC or Paris), so their calendar date is sure."


def _absent(connection: duckdb.DuckDBPyConnection, model: SqlModel,
            columns: Iterable[str]) -> tuple[bool, str | None, dict[str, Any]] | None:
    """A failed answer naming the `columns` the relation does not have (the front matter names a column the
    model does not build: nothing to check, so nothing vouched for), else None."""
    missing = missing_columns(columns, relation_columns(connection, model.key))
    if not missing:
        return None
    return False, f"the front matter names column(s) {model.key} does not have: {', '.join(missing)}", {
        "missing_columns": missing}


def keys_unique(model: SqlModel) -> WarehouseCheck:
    """One row per key of `model`'s grain (blocking); an empty grain: at most one row."""
    grain = model.manifest.grain

    def evaluate(connection: duckdb.DuckDBPyConnection) -> tuple[bool, str | None, dict[str, Any]]:
        absent = _absent(connection, model, grain)
        if absent:
            return absent
        if grain:
            duplicates, sample = duplicate_keys(connection, model.key, grain)
        else:
            (rows,) = connection.execute(f"select count(*) from {quoted_relation(model.key)}").fetchone() or (0,)
            duplicates, sample = max(0, rows - 1), []
        return (duplicates == 0,
                f"{duplicates} key(s) held by several rows (or null): {', '.join(sample)}" if duplicates else None,
                {"key_columns": list(grain), "duplicate_keys": duplicates, "sample": sample})

    return WarehouseCheck(KEYS_UNIQUE, model.key, KEYS_UNIQUE_DESCRIPTION, evaluate, blocking=True,
                          protects=(model.key,))


def not_null(model: SqlModel) -> WarehouseCheck:
    """The front matter's `not_null` columns hold no null (blocking)."""
    columns = model.manifest.not_null

    def evaluate(connection: duckdb.DuckDBPyConnection) -> tuple[bool, str | None, dict[str, Any]]:
        absent = _absent(connection, model, columns)
        if absent:
            return absent
        counts = ", ".join(f"count(*) filter (where {quoted(c)} is null)" for c in columns)
        row = connection.execute(f"select {counts} from {quoted_relation(model.key)}").fetchone() or ()
        nulls = {c: int(n) for c, n in zip(columns, row, strict=True) if n}
        return (not nulls, "; ".join(f"{n} null {c}" for c, n in nulls.items()) or None, {"null_rows": nulls})

    return WarehouseCheck("not_null", model.key, f"Never null: {', '.join(columns)}.", evaluate, blocking=True,
                          protects=(model.key,))


def accepted_range(model: SqlModel) -> WarehouseCheck:
    """The front matter's `accepted_range` columns stay within their bounds, inclusive (blocking)."""
    bounds = model.manifest.accepted_range

    def outside(column: str) -> str:
        low, high = bounds[column]  # numbers (invoicing_warehouse/engine/model_manifest.py refuses anything else)
        tests = [f"{quoted(column)} < {low!r}" if low is not None else "",
                 f"{quoted(column)} > {high!r}" if high is not None else ""]
        return " or ".join(t for t in tests if t)

    def evaluate(connection: duckdb.DuckDBPyConnection) -> tuple[bool, str | None, dict[str, Any]]:
        absent = _absent(connection, model, bounds)
        if absent:
            return absent
        found: dict[str, list[str]] = {}
        for column in bounds:
            rows = connection.execute(f"select distinct {quoted(column)} from {quoted_relation(model.key)} "
                                      f"where {outside(column)} order by 1 limit {SAMPLE_SIZE}").fetchall()
            if rows:
                found[column] = [str(value) for (value,) in rows]
        return (not found,
                "; ".join(f"{c} outside {bounds[c]}: {', '.join(v)}" for c, v in found.items()) or None,
                {"outside": found})

    ranges = ", ".join(f"{c} in [{lo}, {hi}]" for c, (lo, hi) in bounds.items())
    return WarehouseCheck("accepted_range", model.key, f"Within range: {ranges}.", evaluate, blocking=True,
                          protects=(model.key,))


def dates_at_midnight(model: SqlModel) -> WarehouseCheck:
    """The raw date-only values `model` reads (front matter `date_only`) are at a midnight (a flag that names
    the marts built on the model)."""
    fields = model.manifest.date_only

    def evaluate(connection: duckdb.DuckDBPyConnection) -> tuple[bool, str | None, dict[str, Any]]:
        found = off_midnight_fields(connection, fields)
        return (not found, f"{', '.join(found)} not at midnight: their date may be off by one" if found else None,
                {"fields": found})

    return WarehouseCheck("dates_at_midnight", model.key, DATES_AT_MIDNIGHT_DESCRIPTION, evaluate, severity=WARN,
                          protects=marts_built_on([model.key]))


def grain_checked(model: SqlModel) -> bool:
    """Whether the gate checks `model`'s grain and tests: a table, or any model of the analyst's (a view of theirs
    is read as figures as a table is)."""
    return model.materialized == "table" or model.schema == ANALYST_SCHEMA


def checks_of(model: SqlModel) -> list[WarehouseCheck]:
    """Every check `model`'s front matter declares."""
    checks: list[WarehouseCheck] = []
    if grain_checked(model):
        checks.append(keys_unique(model))
        if model.manifest.not_null:
            checks.append(not_null(model))
        if model.manifest.accepted_range:
            checks.append(accepted_range(model))
    if model.manifest.date_only:
        checks.append(dates_at_midnight(model))
    return checks


def model_checks(models: Iterable[SqlModel] | None = None, models_dir: Path | None = None) -> list[WarehouseCheck]:
    """The declared checks of `models` (default: the product's models and those of `models_dir`)."""
    chosen: Sequence[SqlModel] = list(models) if models is not None else discover_models(models_dir=models_dir)
    return [check for model in chosen for check in checks_of(model)]
