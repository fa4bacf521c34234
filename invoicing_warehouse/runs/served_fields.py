"""The raw side of the contract checks, without Dagster: which JSON keys the server did not serve
(`fields_served`, read from the raw column `_absent_fields` the sync writes), and whether date-only values sit at
a midnight (`off_midnight_fields`, for the `dates_at_midnight` check of invoicing_warehouse/runs/model_checks.py). Each
failure names the field and the marts it spoils (docs/contract.md, A2 and A10).

The gate runs them as flags (`SERVED_CHECKS`: they never hold figures back, the figures they doubt are
published with the banner's warning); Dagster shows each as an asset check of its raw table or staging model
(assets/checks.py), its severity the worst of the fields found absent.
"""

from __future__ import annotations

from collections.abc import Sequence
from dataclasses import dataclass
from typing import Any

import duckdb

from invoicing_warehouse.engine.model_manifest import DateOnlyField
from invoicing_warehouse.engine.names import RAW_DATASET
from invoicing_warehouse.engine.sql_names import quoted
from invoicing_warehouse.runs.checks import (
    ERROR,
    PAYABLES,
    RECEIVABLES,
    WARN,
    WarehouseCheck,
    relation_exists,
)

OPEN_INVOICES = "type = 'INVOICE' and status in ('VALIDATED', 'PAID')"
EMITTED_INVOICES = "type = 'INVOICE' and status <> 'DRAFT'"


@dataclass(frozen=True)
class ServedField:
    """A JSON `key` of raw `table` the marts need on the rows matching `population` (SQL on raw columns).

    `severity` None: absence is reported in metadata only (derived elsewhere, or judged by another check).
    """

    table: str
    key: str
    population: str
    severity: str | None  # ERROR or WARN
    marts: tuple[str, ...]


SERVED_FIELDS: tuple[ServedField, ...] = (
    # absent: the legal default (emit date + 30 days, C. com. L441-10), flagged is_due_date_assumed; named, not blocked
    ServedField(
        "documents", "dueDate", OPEN_INVOICES, WARN, (*RECEIVABLES, "marts.cash_outlook")
    ),
    ServedField("documents", "emitDate", "status <> 'DRAFT'", ERROR, RECEIVABLES[:2]),
    ServedField("documents", "amountVatNet", EMITTED_INVOICES, ERROR, RECEIVABLES),
    ServedField(
        "documents",
        "messages",
        EMITTED_INVOICES,
        WARN,
        ("marts.receivables.next_reminder_template", "marts.overdue_customers.next_reminder_template"),
    ),
    ServedField("transactions", "date", "true", ERROR, ("marts.receivables_by_customer",)),
    ServedField(
        "transactions", "customerId", "true", ERROR, ("marts.receivables_by_customer",)
    ),
    ServedField(
        "transactions",
        "refundedAmount",
        "amount > 0",
        WARN,
        ("marts.receivables_by_customer",),
    ),
    ServedField("transaction_usages", "date", "true", None, ()),  # derived (usages_dated)
    ServedField("transaction_usages", "type", "true", None, ()),  # derived (usages_typed)
    ServedField("customers", "deletedAt", "deleted", None, ()),  # observation time instead
    ServedField("supplier_documents", "dueDate", "true", WARN, PAYABLES),
    ServedField("supplier_documents", "issueDate", "true", WARN, PAYABLES),
    ServedField("supplier_documents", "amountVat", "true", None, ()),  # payables_have_amount
    ServedField(
        "supplier_documents", "paymentDate", "status = 'paid'", None, ()
    ),  # supplier_status_as_of_known
    ServedField("supplier_document_events", "date", "true", None, ()),  # supplier_status_as_of_known
)


def absent_counts(connection, table: str, fields: list[ServedField]) -> dict[str, int]:
    """{key: rows of its population, not deleted, whose `_absent_fields` lists the key} for raw `table`."""
    counts = ", ".join(
        f"count(*) filter (where ({f.population}) "
        f"and list_contains(string_split(_absent_fields, ','), '{f.key}'))"
        for f in fields
    )
    row = connection.execute(
        f'select {counts} from {RAW_DATASET}."{table}" where _deleted_at is null'
    ).fetchone()
    return {f.key: int(n) for f, n in zip(fields, row, strict=True)}


# ---------------------------------------------------------------- date-only values at a midnight

# which values are date-only is each staging model's front matter (`date_only`);
# invoicing_warehouse/runs/model_checks.py checks them


def off_midnight_fields(connection, fields: Sequence[DateOnlyField]) -> list[str]:
    """The JSON fields (with a count) holding a value that is midnight neither in UTC nor in the portal's zone:
    a time of day the product would read as a calendar date anyway."""
    found: list[str] = []
    if not relation_exists(connection, "staging.stg_invoicing__portal_time_zone"):
        return found
    for date_only in fields:
        table, column, field = date_only.table, date_only.column, date_only.field
        if not relation_exists(connection, f"{RAW_DATASET}.{table}"):
            continue
        (count,) = connection.execute(
            # table and column come from a model's front matter: plain names (model_manifest.py), quoted
            f"select count(*) from {RAW_DATASET}.{quoted(table)} "
            "cross join staging.stg_invoicing__portal_time_zone as zone "
            f"where {quoted(column)} is not null and _deleted_at is null "
            f"""and strftime({quoted(column)} at time zone 'UTC', '%H:%M:%S') <> '00:00:00' """
            f"""and strftime({quoted(column)} at time zone zone.time_zone, '%H:%M:%S') <> '00:00:00'"""
        ).fetchone()
        if count:
            found.append(f"{field} ({count})")
    return found


def served_fields_of(table: str) -> list[ServedField]:
    """The fields of raw `table` the marts need."""
    return [f for f in SERVED_FIELDS if f.table == table]


def absent_fields(connection: duckdb.DuckDBPyConnection, table: str) -> tuple[str | None, str | None, dict[str, int]]:
    """(the worst severity among `table`'s needed fields found absent, None when none is; a description naming
    each with its row count and the marts it spoils; {key: absent rows}). The table must exist."""
    fields = served_fields_of(table)
    counts = absent_counts(connection, table, fields)
    failing = [f for f in fields if counts[f.key] and f.severity is not None]
    worst = ERROR if any(f.severity == ERROR for f in failing) else (WARN if failing else None)
    description = "; ".join(f"{table}.{f.key} not served on {counts[f.key]} row(s): spoils {', '.join(f.marts)}"
                            for f in failing) or None
    return worst, description, counts


def _fields_served(table: str) -> WarehouseCheck:
    def evaluate(connection: duckdb.DuckDBPyConnection) -> tuple[bool, str | None, dict[str, Any]]:
        worst, description, counts = absent_fields(connection, table)
        return worst is None, description and f"{description} (worst: {worst})", {"absent_rows": counts}

    marts = sorted({mart for f in served_fields_of(table) if f.severity for mart in f.marts})
    return WarehouseCheck("fields_served", f"{RAW_DATASET}.{table}",
                          "The fields the marts need were served (not absent from the records).", evaluate,
                          severity=WARN, protects=tuple(marts))


# Flags, never blocking: the gate publishes the figures they doubt with a warning naming the field.
SERVED_CHECKS: tuple[WarehouseCheck, ...] = (
    *(_fields_served(table) for table in sorted({f.table for f in SERVED_FIELDS if f.severity})),
)
