"""Records as rows: canonical date-times, `_deleted_at`, JSON-text fields, no untyped null containers."""

from __future__ import annotations

import json
from typing import Any

from pipelines.invoicing.dates import format_timestamp, parse_timestamp
from pipelines.invoicing.settings import Endpoint, snake_case


def normalized(moment: Any) -> str | None:
    """A date-time as the canonical `...Z` text, for exact comparisons (None stays None)."""
    if moment is None:
        return None
    return format_timestamp(parse_timestamp(moment) if isinstance(moment, str) else moment)


def deleted_at_of(record: dict) -> str | None:
    """`_deleted_at` of a record as read: customers flagged `deleted` carry their `deletedAt`."""
    return normalized(record.get("deletedAt")) if record.get("deleted") else None


def to_row(endpoint: Endpoint, record: dict) -> dict:
    """The row loaded for a record: JSON-text fields serialised, `_deleted_at` set or cleared.

    A null nested object or list (`transaction` of a credit-note usage) is dropped: its flattened columns
    (`transaction__id`, ...) are declared already, and dlt would otherwise add an untyped column.
    """
    row = _without_null_containers(record, "", endpoint.containers)
    for name in endpoint.json_fields:
        if row.get(name) is not None:
            row[name] = json.dumps(row[name], default=str, ensure_ascii=False)
    row["_deleted_at"] = deleted_at_of(record)
    return row


def _without_null_containers(value: dict, prefix: str, containers: frozenset[str]) -> dict:
    out = {}
    for key, item in value.items():
        path = prefix + snake_case(key)
        if item is None and path in containers:
            continue
        out[key] = _without_null_containers(item, path + "__", containers) if isinstance(item, dict) else item
    return out
