"""The raw columns the ledger knows: every column the product loads from what the API serves today, whether it
relies on it (a row of `contract.py`'s LEDGER) or keeps it raw only (the endpoint catalogue, settings.py). A column
of a raw table outside both is a field the API started to serve that nobody has judged yet: the sync notes it once
(invoicing_warehouse/runs/schema_notices.py), a Dagster WARN check names it and the doctor lists it.

Why a catalogue of columns and not of JSON paths: dlt flattens nested objects (`to.address.city` ->
`to__address__city`) and child lists (`documents__lines`); the warehouse's own columns are what a check can
read without a request. The product's own columns (`_`-prefixed, `portal_id`, `api_portal_id`) are never new.
"""

from __future__ import annotations

from collections.abc import Iterable

from pipelines.invoicing.doctor.contract import LEDGER
from pipelines.invoicing.settings import ENDPOINTS, EVENTS, PDF_ARCHIVE_COLUMNS, PDF_ARCHIVE_TABLE, snake_case

PRODUCT_COLUMNS = frozenset({"portal_id", "api_portal_id"})



def _catalogue_columns() -> dict[str, frozenset[str]]:
    """raw table -> the served columns the catalogue declares (settings.py: every field of the data contract, the
    child tables of list fields), the product's own left out."""
    known: dict[str, frozenset[str]] = {}
    for endpoint in (*ENDPOINTS.values(), EVENTS):
        known[endpoint.name] = frozenset(name for name in endpoint.columns
                                         if not name.startswith("_") and name not in PRODUCT_COLUMNS)
        for child, columns in endpoint.nested.items():
            known[f"{endpoint.name}__{child}"] = frozenset(name for name in columns if not name.startswith("_"))
    return known


# raw table -> the served columns known today: the catalogue's, which types every field the sandbox's default
# profile serves (with refunds and currencies on: every field the spec, the facts and the sandbox's documented
# inventions name); and the product's own table of the invoice archive, which holds no served field
KNOWN_COLUMNS: dict[str, frozenset[str]] = {**_catalogue_columns(),
                                            PDF_ARCHIVE_TABLE: frozenset(PDF_ARCHIVE_COLUMNS)}


def ledger_columns() -> dict[str, frozenset[str]]:
    """raw table -> the columns of the ledger's field rows (dotted JSON paths flattened as dlt does)."""
    columns: dict[str, set[str]] = {}
    for row in LEDGER:
        if row.kind == "field" and " " not in row.json_path:
            flat = "__".join(snake_case(part) for part in row.json_path.split("."))
            columns.setdefault(row.resource, set()).add(flat)
    return {table: frozenset(names) for table, names in columns.items()}


def unknown_columns(table: str, columns: Iterable[str]) -> list[str]:
    """Of raw `table`'s `columns`, those the ledger does not know (sorted); the product's own are skipped."""
    known = KNOWN_COLUMNS.get(table, frozenset()) | ledger_columns().get(table, frozenset())
    return sorted(column for column in columns
                  if not column.startswith("_") and column not in PRODUCT_COLUMNS and column not in known)


def unknown_keys(resource: str, records: list[dict]) -> list[str]:
    """The top-level keys of `resource`'s sampled `records` that map to no known column of its raw table (nor
    to a known flattened prefix or child table): what the doctor lists as new fields; sorted."""
    known = KNOWN_COLUMNS.get(resource, frozenset()) | ledger_columns().get(resource, frozenset())
    new = set()
    for record in records:
        for key in record if isinstance(record, dict) else ():
            column = snake_case(key)
            if (column in known or column in PRODUCT_COLUMNS
                    or any(name.startswith(column + "__") for name in known)
                    or f"{resource}__{column}" in KNOWN_COLUMNS):
                continue
            new.add(key)
    return sorted(new)
