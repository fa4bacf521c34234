"""The raw tables exactly as dlt lands them (docs/resources.md), created empty in a DuckDB connection.

Tests fill them with hand-built rows through `insert`: missing columns are null, `portal_id` is `default`
unless given, `_dlt_id` is derived from the record id (`dlt-<id>`, `dlt-<portal>-<id>` for another portal)
so child rows can name their parent.
"""

from __future__ import annotations

import itertools

import duckdb

from invoicing_warehouse.engine.names import DEFAULT_PORTAL

AMOUNT = "decimal(18,2)"
RATE = "decimal(9,4)"
TS = "timestamp with time zone"


def _address(prefix: str) -> list[tuple[str, str]]:
    return [(f"{prefix}__{c}", "varchar") for c in ("street", "postal_code", "city", "country")]


_COMMON_TAIL = [("metadata", "varchar"), ("last_update", TS)]
_DLT = [("_deleted_at", TS), ("_dlt_load_id", "varchar"), ("_dlt_id", "varchar")]
# On parent rows only: the JSON keys the record did not carry (comma-joined camelCase), like the sync writes
_PARENT_DLT = [("_absent_fields", "varchar"), *_DLT]
_CHILD = [("_dlt_parent_id", "varchar"), ("_dlt_list_idx", "bigint"), ("_dlt_root_id", "varchar")] + _DLT

RAW_COLUMNS: dict[str, list[tuple[str, str]]] = {
    "customers": [
        ("id", "varchar"),
        ("portal_id", "varchar"),
        ("name", "varchar"),
        ("reference", "varchar"),
        ("type", "varchar"),
        ("email", "varchar"),
        ("phone", "varchar"),
        ("mobile", "varchar"),
        ("fax", "varchar"),
        ("siret", "varchar"),
        ("vat", "varchar"),
        *_address("address"),
        *_address("delivery"),
        ("contacts", "varchar"),
        ("due_amount", AMOUNT),
        ("documents_count", "bigint"),
        ("deleted", "boolean"),
        ("deleted_at", TS),
        *_COMMON_TAIL,
        *_PARENT_DLT,
    ],
    "items": [
        ("id", "varchar"),
        ("portal_id", "varchar"),
        ("name", "varchar"),
        ("description", "varchar"),
        ("reference", "varchar"),
        ("type", "varchar"),
        ("unit", "varchar"),
        ("price", AMOUNT),
        ("vat", RATE),
        ("buying_price", AMOUNT),
        *_COMMON_TAIL,
        *_PARENT_DLT,
    ],
    "documents": [
        ("id", "varchar"),
        ("portal_id", "varchar"),
        ("customer_id", "varchar"),
        ("type", "varchar"),
        ("subtype", "varchar"),
        ("status", "varchar"),
        ("reference", "varchar"),
        ("reference_internal", "varchar"),
        ("title", "varchar"),
        ("message_top", "varchar"),
        ("message_bottom", "varchar"),
        ("emit_date", TS),
        ("due_date", TS),
        ("to__name", "varchar"),
        ("to__email", "varchar"),
        *_address("to__address"),
        ("from__name", "varchar"),
        ("from__trade_name", "varchar"),
        ("from__email", "varchar"),
        ("discount__type", "varchar"),
        ("discount__amount", AMOUNT),
        ("amount", AMOUNT),
        ("vat", AMOUNT),
        ("amount_vat", AMOUNT),
        ("amount_net", AMOUNT),
        ("amount_vat_net", AMOUNT),
        ("amount_notice", "varchar"),
        ("vat_exemption_type", "varchar"),
        ("payment_method", "varchar"),
        ("total_payments", AMOUNT),
        ("remaining", AMOUNT),
        ("invoice_id", "varchar"),
        ("version", "varchar"),
        ("prev_doc", "varchar"),
        ("next_doc", "varchar"),
        ("currency", "varchar"),
        *_COMMON_TAIL,
        *_PARENT_DLT,
    ],
    "documents__lines": [
        ("line_type", "varchar"),
        ("item_id", "varchar"),
        ("name", "varchar"),
        ("description", "varchar"),
        ("reference", "varchar"),
        ("price", AMOUNT),
        ("quantity", "decimal(18,4)"),
        ("unit", "varchar"),
        ("vat", RATE),
        ("discount", RATE),
        ("buying_price", AMOUNT),
        *_CHILD,
    ],
    "documents__messages": [
        ("date", TS),
        ("model", "varchar"),
        ("from", "varchar"),
        ("to", "varchar"),
        ("subject", "varchar"),
        *_CHILD,
    ],
    "transactions": [
        ("id", "varchar"),
        ("portal_id", "varchar"),
        ("customer_id", "varchar"),
        ("customer_name", "varchar"),
        ("document_id", "varchar"),
        ("amount", AMOUNT),
        ("used_amount", AMOUNT),
        ("refunded_amount", AMOUNT),
        ("date", TS),
        ("method", "varchar"),
        ("currency", "varchar"),
        *_COMMON_TAIL,
        *_PARENT_DLT,
    ],
    "transaction_usages": [
        ("id", "varchar"),
        ("portal_id", "varchar"),
        ("type", "varchar"),
        ("customer_id", "varchar"),
        ("invoice_id", "varchar"),
        ("transaction_id", "varchar"),
        ("transaction__id", "varchar"),
        ("transaction__amount", AMOUNT),
        ("transaction__date", TS),
        ("transaction__method", "varchar"),
        ("credit_note_id", "varchar"),
        ("amount", AMOUNT),
        ("date", TS),
        *_COMMON_TAIL,
        *_PARENT_DLT,
    ],
    "suppliers": [
        ("id", "varchar"),
        ("portal_id", "varchar"),
        ("name", "varchar"),
        ("legal_identifier", "varchar"),
        ("email", "varchar"),
        ("phone", "varchar"),
        *_address("address"),
        *_COMMON_TAIL,
        *_PARENT_DLT,
    ],
    "supplier_documents": [
        ("id", "varchar"),
        ("portal_id", "varchar"),
        ("supplier_id", "varchar"),
        ("file_key", "varchar"),
        ("status", "varchar"),
        ("reference", "varchar"),
        ("type", "varchar"),
        ("issue_date", TS),
        ("due_date", TS),
        ("amount", AMOUNT),
        ("vat", AMOUNT),
        ("amount_vat", AMOUNT),
        ("currency", "varchar"),
        ("origin", "varchar"),
        ("payment_date", TS),
        *_COMMON_TAIL,
        *_PARENT_DLT,
    ],
    "supplier_document_events": [
        ("portal_id", "varchar"),
        ("id", "varchar"),
        ("supplier_document_id", "varchar"),
        ("date", TS),
        ("action", "varchar"),
        ("previous_status", "varchar"),
        ("status", "varchar"),
        ("origin", "varchar"),
        ("_position", "bigint"),
        *_PARENT_DLT,
    ],
}

_serial = itertools.count(1)


def create_raw_tables(conn: duckdb.DuckDBPyConnection, tables: list[str] | None = None) -> None:
    """Creates schema `invoicing_raw` and the (empty) raw tables, all of them unless `tables` is given."""
    conn.execute("create schema if not exists invoicing_raw")
    for table in tables or list(RAW_COLUMNS):
        # a row inserted without its portal is the one portal of a warehouse without a portals file
        columns = ", ".join(f'"{name}" {sql_type}' + (f" default '{DEFAULT_PORTAL}'" if name == "portal_id" else "")
                            for name, sql_type in RAW_COLUMNS[table])
        conn.execute(f'create table invoicing_raw."{table}" ({columns})')


def insert(conn: duckdb.DuckDBPyConnection, table: str, rows: list[dict]) -> None:
    """Inserts `rows` (dicts of raw column -> value; others null) into `invoicing_raw.<table>`."""
    names = [name for name, _ in RAW_COLUMNS[table]]
    values_list = []
    for row in rows:
        unknown = set(row) - set(names)
        assert not unknown, f"{table}: no raw column {sorted(unknown)}"
        values = dict(row)
        values.setdefault("_dlt_load_id", "1700000000.0")
        if "id" in values:
            portal = values.setdefault("portal_id", DEFAULT_PORTAL)
            values.setdefault("_dlt_id", f"dlt-{values['id']}" if portal == DEFAULT_PORTAL
                              else f"dlt-{portal}-{values['id']}")
        else:
            values.setdefault("_dlt_id", f"dlt-child-{next(_serial)}")
            values.setdefault("_dlt_root_id", values.get("_dlt_parent_id"))
        values_list.append([values.get(n) for n in names])
    placeholders = ", ".join("?" for _ in names)
    quoted = ", ".join(f'"{n}"' for n in names)
    conn.executemany(f'insert into invoicing_raw."{table}" ({quoted}) values ({placeholders})', values_list)
