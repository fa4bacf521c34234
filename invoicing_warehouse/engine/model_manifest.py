"""Each model's manifest: the front matter at the top of its SQL file, the one place its metadata lives.

A model file opens with a block of comment lines between two `-- ---` lines, holding YAML:

    -- ---
    -- description: one row per invoice with money still owed on the report date.
    -- materialized: table          # or view (default: table)
    -- grain: [portal_id, invoice_id]
    -- date_only:                   # raw date-only values this model reads as calendar dates
    --   - {raw: documents.emit_date, field: document.emitDate}
    -- tests:
    --   not_null: [as_of_date]
    --   accepted_range: {period_index: {min: 0, max: 9}}
    -- columns:                     # what each column holds, in the table's order
    --   invoice_id: the invoice
    --   open_amount: total - paid - settled, on the report date
    -- ---

The block sits in the SQL rather than in a sidecar file so that a model is one file that cannot be copied,
renamed or deleted without its metadata (an analyst's folder holds SQL files only). The gate's checks
(invoicing_warehouse/runs/model_checks.py), the Dagster assets' descriptions and column schemas (assets/models.py), the
comments DuckDB stores on each relation and column (`COMMENT ON`, invoicing_warehouse/engine/sql_runner.py) and
docs/models.md are read from it.
"""

from __future__ import annotations

import math
from dataclasses import dataclass, field
from functools import lru_cache
from pathlib import Path
from typing import Any

import yaml

from invoicing_warehouse.engine.sql_names import UnsafeNameError, checked_name

FENCE = "---"
_KEYS = {"description", "materialized", "grain", "date_only", "tests", "columns"}
_TESTS = {"not_null", "accepted_range"}
# a grain or a test list longer than any table's width is a mistake or an attack (review 2, F14), not a model
MAX_NAMES = 64
# a column list is a table's width; a description a sentence or a short paragraph (it lands in COMMENT ON and in
# Dagster's metadata: bounded like every text taken from a file someone else writes)
MAX_COLUMNS = 256
MAX_TEXT = 2000


class ManifestError(ValueError):
    """A model's front matter is missing or malformed."""


@dataclass(frozen=True)
class DateOnlyField:
    """A raw date-only value (`raw` = `<table>.<column>`, `field` = the API's JSON name) a model reads as a date."""

    raw: str
    field: str

    @property
    def table(self) -> str:
        """The raw table."""
        return self.raw.split(".", 1)[0]

    @property
    def column(self) -> str:
        """The raw column."""
        return self.raw.split(".", 1)[1]


@dataclass(frozen=True)
class Manifest:
    """What a model declares about itself. `grain`: the columns one row is unique on (empty: at most one row);
    `not_null`: columns never null; `accepted_range`: {column: (min or None, max or None)}, inclusive;
    `columns`: (column, what it holds) pairs, in the table's order."""

    description: str
    grain: tuple[str, ...]
    materialized: str = "table"
    date_only: tuple[DateOnlyField, ...] = ()
    not_null: tuple[str, ...] = ()
    accepted_range: dict[str, tuple[float | None, float | None]] = field(default_factory=dict)
    columns: tuple[tuple[str, str], ...] = ()

    def column_description(self, column: str) -> str | None:
        """What the front matter says `column` holds, or None when it does not describe it."""
        return dict(self.columns).get(column)


def front_matter(sql: str) -> str | None:
    """The YAML text between the two `-- ---` lines opening `sql`, or None when the file has no such block."""
    lines = sql.lstrip().splitlines()
    if not lines or lines[0].strip() != f"-- {FENCE}":
        return None
    body: list[str] = []
    for line in lines[1:]:
        stripped = line.strip()
        if stripped == f"-- {FENCE}":
            return "\n".join(body)
        if not stripped.startswith("--"):
            return None  # the block never closed before the SQL began
        # "-- " then YAML: the first space after the dashes is the comment's, the rest is YAML's indentation
        body.append(stripped[3:] if stripped.startswith("-- ") else stripped[2:])
    return None


def parse_manifest(sql: str, where: Path | str) -> Manifest:
    """The manifest of the model whose text is `sql` (`where` names it in errors). Raises ManifestError."""
    return _parse_manifest(sql, str(where))


@lru_cache(maxsize=512)
def _parse_manifest(sql: str, where: str) -> Manifest:
    # cached by the text (a Manifest is frozen): every build and check run discovers the models again, and YAML
    # parsing of the package's front matters cost about 40 ms each time
    text = front_matter(sql)
    if text is None:
        raise ManifestError(f"{where}: no front matter: the file must open with a `-- ---` block "
                            "(description, grain; docs/add-a-model.md)")
    try:
        data: Any = yaml.safe_load(text)
    except yaml.YAMLError as error:
        raise ManifestError(f"{where}: front matter is not valid YAML: {error}") from None
    if not isinstance(data, dict):
        raise ManifestError(f"{where}: front matter must be a mapping of keys")
    unknown = sorted(set(data) - _KEYS)
    if unknown:
        raise ManifestError(f"{where}: unknown front matter key(s): {', '.join(unknown)}")
    description = data.get("description")
    if not isinstance(description, str) or not description.strip():
        raise ManifestError(f"{where}: front matter needs a `description`")
    if len(description) > MAX_TEXT * 4:
        raise ManifestError(f"{where}: the description is longer than {MAX_TEXT * 4} characters")
    if "grain" not in data or not isinstance(data["grain"], list):
        raise ManifestError(f"{where}: front matter needs a `grain`: the list of columns one row is unique on")
    materialized = str(data.get("materialized", "table")).lower()
    if materialized not in ("table", "view"):
        raise ManifestError(f"{where}: materialized must be table or view, not {materialized!r}")
    tests = data.get("tests") or {}
    if not isinstance(tests, dict) or set(tests) - _TESTS:
        raise ManifestError(f"{where}: tests may hold only {', '.join(sorted(_TESTS))}")
    not_null, ranges = tests.get("not_null") or [], tests.get("accepted_range") or {}
    if not isinstance(not_null, list) or not isinstance(ranges, dict):
        raise ManifestError(f"{where}: tests.not_null is a list of columns, tests.accepted_range a mapping")
    return Manifest(
        description=" ".join(description.split()),
        grain=_names(data["grain"], "grain column", where),
        materialized=materialized,
        date_only=tuple(_date_only(item, where) for item in _bounded(data.get("date_only") or [], "date_only", where)),
        not_null=_names(not_null, "not_null column", where),
        accepted_range={c: _bounds(b, where) for c, b in zip(_names(list(ranges), "accepted_range column", where),
                                                             ranges.values(), strict=True)},
        columns=_columns(data.get("columns") or {}, where),
    )


def _bounded(items: Any, what: str, where: str) -> list[Any]:
    if not isinstance(items, list):
        raise ManifestError(f"{where}: {what} must be a list")
    if len(items) > MAX_NAMES:
        raise ManifestError(f"{where}: {what} names {len(items)} entries, more than {MAX_NAMES}")
    return items


def _names(items: Any, what: str, where: str) -> tuple[str, ...]:
    # every name here reaches the gate's SQL (invoicing_warehouse/runs/model_checks.py): a plain name or the model is
    # refused
    try:
        return tuple(checked_name(item, what) for item in _bounded(items, what, where))
    except UnsafeNameError as error:
        raise ManifestError(f"{where}: {error}") from None


def _columns(columns: Any, where: str) -> tuple[tuple[str, str], ...]:
    if not isinstance(columns, dict):
        raise ManifestError(f"{where}: columns is a mapping of column name to what it holds")
    if len(columns) > MAX_COLUMNS:
        raise ManifestError(f"{where}: columns describes {len(columns)} columns, more than {MAX_COLUMNS}")
    described = []
    for name, text in columns.items():
        # a name reaches COMMENT ON COLUMN only quoted (sql_names.quoted), and must be a column the model built
        # (sql_runner.check_declared_columns): printable text of a column's length, such as the legal tables'
        # French headers ("1 à 30 jours"), is safe; anything else is refused
        if not isinstance(name, str) or not name or len(name) > 64 or not name.isprintable():
            raise ManifestError(f"{where}: described column {name!r} is not a column name (1 to 64 printable "
                                "characters)")
        column = name
        if not isinstance(text, str) or not text.strip() or len(text) > MAX_TEXT:
            raise ManifestError(f"{where}: columns.{column} needs a description of 1 to {MAX_TEXT} characters")
        described.append((column, " ".join(text.split())))
    return tuple(described)


def _date_only(item: Any, where: str) -> DateOnlyField:
    if not isinstance(item, dict) or "." not in str(item.get("raw", "")) or not item.get("field"):
        raise ManifestError(f"{where}: date_only entries are {{raw: <table>.<column>, field: <json name>}}")
    table, column = str(item["raw"]).split(".", 1)
    # both reach invoicing_warehouse/runs/served_fields.py's SQL
    _names([table, column], "date_only raw table or column", where)
    return DateOnlyField(f"{table}.{column}", str(item["field"]))


def _bounds(bounds: Any, where: str) -> tuple[float | None, float | None]:
    if not isinstance(bounds, dict) or not set(bounds) <= {"min", "max"} or not bounds:
        raise ManifestError(f"{where}: accepted_range entries are {{min: x, max: y}} (either may be left out)")
    low, high = bounds.get("min"), bounds.get("max")
    for bound in (low, high):
        # a bound is pasted into the check's SQL: a number (YAML int or float, not a bool, finite) or nothing
        if bound is not None and (isinstance(bound, bool) or not isinstance(bound, int | float)
                                  or not math.isfinite(bound)):
            raise ManifestError(f"{where}: accepted_range bounds must be numbers, not {bound!r}")
    return low, high
