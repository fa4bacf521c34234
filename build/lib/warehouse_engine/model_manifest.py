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
    -- ---

The block sits in the SQL rather than in a sidecar file so that a model is one file that cannot be copied,
renamed or deleted without its metadata (an analyst's folder holds SQL files only). The gate's checks
(runs/model_checks.py), the Dagster assets' descriptions (assets/models.py) and docs/models.md are read from it.
"""

from __future__ import annotations

from dataclasses import dataclass, field
from functools import lru_cache
from pathlib import Path
from typing import Any

import yaml

FENCE = "---"
_KEYS = {"description", "materialized", "grain", "date_only", "tests"}
_TESTS = {"not_null", "accepted_range"}


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
    `not_null`: columns never null; `accepted_range`: {column: (min or None, max or None)}, inclusive."""

    description: str
    grain: tuple[str, ...]
    materialized: str = "table"
    date_only: tuple[DateOnlyField, ...] = ()
    not_null: tuple[str, ...] = ()
    accepted_range: dict[str, tuple[float | None, float | None]] = field(default_factory=dict)


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
    if "grain" not in data or not isinstance(data["grain"], list):
        raise ManifestError(f"{where}: front matter needs a `grain`: the list of columns one row is unique on")
    materialized = str(data.get("materialized", "table")).lower()
    if materialized not in ("table", "view"):
        raise ManifestError(f"{where}: materialized must be table or view, not {materialized!r}")
    tests = data.get("tests") or {}
    if not isinstance(tests, dict) or set(tests) - _TESTS:
        raise ManifestError(f"{where}: tests may hold only {', '.join(sorted(_TESTS))}")
    return Manifest(
        description=" ".join(description.split()),
        grain=tuple(str(c) for c in data["grain"]),
        materialized=materialized,
        date_only=tuple(_date_only(item, where) for item in data.get("date_only") or ()),
        not_null=tuple(str(c) for c in tests.get("not_null") or ()),
        accepted_range={str(c): _bounds(b, where) for c, b in (tests.get("accepted_range") or {}).items()},
    )


def _date_only(item: Any, where: Path | str) -> DateOnlyField:
    if not isinstance(item, dict) or "." not in str(item.get("raw", "")) or not item.get("field"):
        raise ManifestError(f"{where}: date_only entries are {{raw: <table>.<column>, field: <json name>}}")
    return DateOnlyField(str(item["raw"]), str(item["field"]))


def _bounds(bounds: Any, where: Path | str) -> tuple[float | None, float | None]:
    if not isinstance(bounds, dict) or not set(bounds) <= {"min", "max"} or not bounds:
        raise ManifestError(f"{where}: accepted_range entries are {{min: x, max: y}} (either may be left out)")
    return bounds.get("min"), bounds.get("max")
