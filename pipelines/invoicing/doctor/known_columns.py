"""The raw columns the ledger knows: every column the product loads from what the API serves today, whether it
relies on it (a row of `contract.py`'s LEDGER) or keeps it raw only (the catalogue below). A column of a raw
table outside both is a field the API started to serve that nobody has judged yet: the sync notes it once
(runs/schema_notices.py), a Dagster WARN check names it and the doctor lists it.

Why a catalogue of columns and not of JSON paths: dlt flattens nested objects (`to.address.city` ->
`to__address__city`) and child lists (`documents__lines`); the warehouse's own columns are what a check can
read without a request. The product's own columns (`_`-prefixed, `portal_id`, `api_portal_id`) are never new.
"""

from __future__ import annotations

from collections.abc import Iterable

from pipelines.invoicing.doctor.contract import LEDGER
from pipelines.invoicing.settings import PDF_ARCHIVE_COLUMNS, PDF_ARCHIVE_TABLE, snake_case

PRODUCT_COLUMNS = frozenset({"portal_id", "api_portal_id"})

# raw table -> the served columns known today (the sandbox's default profile with refunds and currencies on,
# which serves every field the spec, the facts and the sandbox's documented inventions name)
KNOWN_COLUMNS: dict[str, frozenset[str]] = {
    "customers": frozenset({"address__city", "address__country", "address__postal_code", "address__street",
        "contacts", "deleted", "deleted_at", "delivery__city", "delivery__country", "delivery__postal_code",
        "delivery__street", "documents_count", "due_amount", "email", "fax", "id", "last_update", "metadata",
        "mobile", "name", "phone", "reference", "siret", "type", "vat"}),
    "documents": frozenset({"amount", "amount_net", "amount_notice", "amount_vat", "amount_vat_net", "currency",
        "customer_id", "discount__amount", "discount__type", "due_date", "emit_date", "from__email", "from__name",
        "from__trade_name", "id", "invoice_id", "last_update", "message_bottom", "message_top", "metadata",
        "next_doc", "payment_method", "prev_doc", "reference", "reference_internal", "remaining", "status",
        "subtype", "title", "to__address__city", "to__address__country", "to__address__postal_code",
        "to__address__street", "to__email", "to__name", "total_payments", "type", "vat", "vat_exemption_type",
        "version"}),
    "documents__lines": frozenset({"buying_price", "description", "discount", "item_id", "line_type", "name",
        "price", "quantity", "reference", "unit", "vat"}),
    "documents__messages": frozenset({"date", "from", "model", "subject", "to"}),
    "items": frozenset({"buying_price", "description", "id", "last_update", "metadata", "name", "price",
        "reference", "type", "unit", "vat"}),
    "portal": frozenset({"email", "enterprise__address__city", "enterprise__address__country",
        "enterprise__address__postal_code", "enterprise__address__street", "enterprise__name", "enterprise__siren",
        "enterprise__siret", "enterprise__trade_name", "enterprise__vat", "id", "last_update", "metadata",
        "reference_assignment_method"}),
    "supplier_document_events": frozenset({"action", "date", "id", "origin", "previous_status", "status",
        "supplier_document_id"}),
    "supplier_documents": frozenset({"amount", "amount_vat", "currency", "due_date", "file_key", "id", "issue_date",
        "last_update", "metadata", "origin", "payment_date", "reference", "status", "supplier_id", "type", "vat"}),
    "supplier_documents__tags": frozenset({"value"}),
    "suppliers": frozenset({"address__city", "address__country", "address__postal_code", "address__street", "email",
        "id", "last_update", "legal_identifier", "metadata", "name", "phone"}),
    "suppliers__tags": frozenset({"value"}),
    "transaction_usages": frozenset({"amount", "credit_note_id", "customer_id", "date", "id", "invoice_id",
        "last_update", "metadata", "transaction__amount", "transaction__date", "transaction__id",
        "transaction__method", "transaction_id", "type"}),
    "transactions": frozenset({"amount", "currency", "customer_id", "customer_name", "date", "document_id", "id",
        "last_update", "metadata", "method", "refunded_amount", "used_amount"}),
    "user": frozenset({"address__city", "address__country", "address__postal_code", "address__street",
        "creation_date", "email", "id", "last_connection_date", "metadata", "mobile", "name", "phone"}),
    "webhooks": frozenset({"enabled", "failures", "id", "last_update", "metadata", "url"}),
    "webhooks__events": frozenset({"value"}),
    PDF_ARCHIVE_TABLE: frozenset(PDF_ARCHIVE_COLUMNS),  # the product's own table (the invoice archive): no field
}


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
