"""Records as rows: canonical date-times, `_deleted_at`, `_absent_fields`, JSON-text fields, no untyped
null containers; supplier-document events completed from their request (`event_rows`)."""

from __future__ import annotations

import functools
import hashlib
import json
from datetime import datetime
from decimal import Decimal
from typing import Any

from pipelines.invoicing.dates import format_timestamp, parse_timestamp
from pipelines.invoicing.errors import InvoicingApiError
from pipelines.invoicing.hook_urls import masked
from pipelines.invoicing.settings import Endpoint, snake_case


def normalized(moment: Any) -> str | None:
    """A date-time as the canonical `...Z` text, for exact comparisons (None stays None)."""
    if moment is None:
        return None
    return format_timestamp(parse_timestamp(moment) if isinstance(moment, str) else moment)


def record_digest(record: dict) -> str:
    """A digest of a record's whole content: a single object (GET /me, /portal) has no lastUpdate, so
    this is how a run tells that the warehouse already holds exactly what the API serves."""
    canonical = json.dumps(record, sort_keys=True, default=str, ensure_ascii=False)
    return hashlib.sha256(canonical.encode("utf-8")).hexdigest()


def deleted_at_of(record: dict, observed: datetime | str | None = None, known: str | None = None) -> str | None:
    """`_deleted_at` of a record as read; None unless it is flagged `deleted`.

    A flagged record's `deletedAt` when served; else `known`, the value the warehouse already holds, so
    that an observation time never moves on later runs; else `observed`, the run's server time (the
    contract promises the flag, not the timestamp).
    """
    if not record.get("deleted"):
        return None
    return normalized(record.get("deletedAt")) or known or normalized(observed)


def absent_fields(endpoint: Endpoint, record: dict) -> str | None:
    """The endpoint's `assumed` keys the record does not carry, comma-joined (None when all are there).

    A key served with null is present: "served, empty" (an invoice without due date) is data, an
    absent key is a server that does not serve the field.
    """
    absent = [key for key in endpoint.assumed if key not in record]
    return ",".join(absent) or None


def to_row(endpoint: Endpoint, record: dict, *, observed: datetime | str | None = None,
           known_deleted_at: str | None = None) -> dict:
    """The row loaded for a record: JSON-text fields serialised, `_deleted_at` set or cleared, and
    `_absent_fields` on endpoints that declare `assumed` keys.

    A null nested object or list (`transaction` of a credit-note usage) is dropped: its flattened columns
    (`transaction__id`, ...) are declared already, and dlt would otherwise add an untyped column.
    """
    check_decimals(endpoint, record)
    row = _without_null_containers(record, "", endpoint.containers)
    for name in endpoint.json_fields:
        if row.get(name) is not None:
            row[name] = json.dumps(row[name], default=str, ensure_ascii=False)
    row["_deleted_at"] = deleted_at_of(record, observed, known_deleted_at)
    # the served content, before any change above: a whole scan compares it (reader.py), for a change that
    # did not move `lastUpdate` (a replaced version turning CANCELED)
    row["_digest"] = record_digest(record)
    if endpoint.name == "webhooks" and isinstance(row.get("url"), str):
        row["url"] = masked(row["url"])  # a receiver's URL carries its secret token: never in the warehouse
    if endpoint.assumed:
        row["_absent_fields"] = absent_fields(endpoint, record)
    return row


def check_decimals(endpoint: Endpoint, record: dict) -> None:
    """Raises InvoicingApiError (malformed, naming the endpoint and the field) when a number of `record` does not
    fit its column's decimal type (a rate of 1e6 in `decimal(9,4)`): the load would fail on it with an Arrow
    error, after the pages were read (security review 2, L3). answers.py already refused anything of 1e14 or more."""
    problem = _decimal_overflow(record, "", endpoint.columns, endpoint.nested)
    if problem is not None:
        raise InvoicingApiError("malformed", f"GET {endpoint.path}", 200, detail=f"{problem} (refused)")


# the few dozen keys of the API, converted once: the check walks every field of every record read
_column_name = functools.lru_cache(maxsize=4096)(snake_case)


def _decimal_overflow(value: Any, path: str, columns: dict, nested: dict) -> str | None:
    if isinstance(value, dict):
        for key, item in value.items():
            column = _column_name(key)
            found = _decimal_overflow(item, f"{path}__{column}" if path else column, columns, nested)
            if found is not None:
                return found
    elif isinstance(value, list) and path in nested:
        for item in value:
            found = _decimal_overflow(item, "", nested[path], {})
            if found is not None:
                return f"{path}[].{found}"
    elif isinstance(value, int | float | Decimal) and not isinstance(value, bool):
        hint = columns.get(path) or {}
        if hint.get("data_type") == "decimal" and abs(value) >= 10 ** (hint["precision"] - hint["scale"]):
            return f"{path} = {value} does not fit decimal({hint['precision']},{hint['scale']})"
    return None


def with_portal(rows: list[dict], portal_id: str) -> list[dict]:
    """Stamps each row with the portal's name (`portal_id`); the API's own `portalId` moves to
    `apiPortalId` (column `api_portal_id`), so the two never collide. Returns `rows`, changed in place."""
    for row in rows:
        if "portalId" in row:
            row["apiPortalId"] = row.pop("portalId")
        row["portal_id"] = portal_id
    return rows


def event_rows(endpoint: Endpoint, document_id: str, events: list[dict]) -> tuple[list[dict], bool]:
    """Rows of one supplier document's status history (GET /supplier-documents/{id}/events), and
    whether an id had to be synthesised.

    The list is most recent first (the contract), so `_position` counts from the oldest (1) and stays
    stable while the history only grows. `supplierDocumentId` comes from the request path when not
    served; `id`, when not served, is `"{documentId}:{position}"` (the events are merged per document,
    so a reloaded history replaces these ids whole). `_absent_fields` is taken before anything is filled.
    """
    request = f"GET {endpoint.path.format(id=document_id)}"
    rows, synthesised = [], False
    for index, event in enumerate(events):
        if not isinstance(event, dict):
            raise InvoicingApiError("malformed", request, 200, detail=f"event {index} is not an object")
        served_parent = event.get("supplierDocumentId")
        if served_parent is not None and served_parent != document_id:
            raise InvoicingApiError("malformed", request, 200, detail=f"an event names document {served_parent}")
        position = len(events) - index
        row = to_row(endpoint, event)
        row["supplierDocumentId"] = document_id
        row["_position"] = position
        if event.get("id") is None:
            row["id"] = f"{document_id}:{position}"
            synthesised = True
        rows.append(row)
    return rows, synthesised


def _without_null_containers(value: dict, prefix: str, containers: frozenset[str]) -> dict:
    out = {}
    for key, item in value.items():
        path = prefix + snake_case(key)
        if item is None and path in containers:
            continue
        out[key] = _without_null_containers(item, path + "__", containers) if isinstance(item, dict) else item
    return out
