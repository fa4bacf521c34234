"""The raw side of the contract checks: which JSON keys the server did not serve (`fields_served`, read from
the raw column `_absent_fields` the sync writes), and whether date-only values sit at a midnight
(`dates_at_midnight`). Each failure names the field and the marts it spoils (docs/contract.md, A2 and A10).
"""

from collections.abc import Iterator
from dataclasses import dataclass

from dagster import (
    AssetCheckExecutionContext,
    AssetCheckResult,
    AssetChecksDefinition,
    AssetCheckSeverity,
    AssetCheckSpec,
    AssetKey,
    MetadataValue,
    multi_asset_check,
)

from assets.keys import RAW_DATASET, raw_asset_key
from assets.resources import WarehouseResource
from runs.checks import PAYABLES, RECEIVABLES, relation_exists

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
    severity: AssetCheckSeverity | None
    marts: tuple[str, ...]


SERVED_FIELDS: tuple[ServedField, ...] = (
    # absent: the legal default (emit date + 30 days, C. com. L441-10), flagged is_due_date_assumed; named, not blocked
    ServedField(
        "documents", "dueDate", OPEN_INVOICES, AssetCheckSeverity.WARN, (*RECEIVABLES, "marts.cash_outlook")
    ),
    ServedField("documents", "emitDate", "status <> 'DRAFT'", AssetCheckSeverity.ERROR, RECEIVABLES[:2]),
    ServedField("documents", "amountVatNet", EMITTED_INVOICES, AssetCheckSeverity.ERROR, RECEIVABLES),
    ServedField(
        "documents",
        "messages",
        EMITTED_INVOICES,
        AssetCheckSeverity.WARN,
        ("marts.receivables.next_reminder_template", "marts.overdue_customers.next_reminder_template"),
    ),
    ServedField("transactions", "date", "true", AssetCheckSeverity.ERROR, ("marts.receivables_by_customer",)),
    ServedField(
        "transactions", "customerId", "true", AssetCheckSeverity.ERROR, ("marts.receivables_by_customer",)
    ),
    ServedField(
        "transactions",
        "refundedAmount",
        "amount > 0",
        AssetCheckSeverity.WARN,
        ("marts.receivables_by_customer",),
    ),
    ServedField("transaction_usages", "date", "true", None, ()),  # derived (usages_dated)
    ServedField("transaction_usages", "type", "true", None, ()),  # derived (usages_typed)
    ServedField("customers", "deletedAt", "deleted", None, ()),  # observation time instead
    ServedField("supplier_documents", "dueDate", "true", AssetCheckSeverity.WARN, PAYABLES),
    ServedField("supplier_documents", "issueDate", "true", AssetCheckSeverity.WARN, PAYABLES),
    ServedField("supplier_documents", "amountVat", "true", None, ()),  # payables_have_amount
    ServedField(
        "supplier_documents", "paymentDate", "status = 'paid'", None, ()
    ),  # supplier_status_as_of_known
    ServedField("supplier_document_events", "date", "true", None, ()),  # supplier_status_as_of_known
)

_SEVERITY_RANK = {AssetCheckSeverity.WARN: 1, AssetCheckSeverity.ERROR: 2}


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


def _served_result(connection, table: str) -> AssetCheckResult:
    fields = [f for f in SERVED_FIELDS if f.table == table]
    if not relation_exists(connection, f"{RAW_DATASET}.{table}"):
        return AssetCheckResult(
            asset_key=raw_asset_key(table),
            check_name="fields_served",
            passed=True,
            metadata={"note": "table not created yet"},
        )
    counts = absent_counts(connection, table, fields)
    failing = [f for f in fields if counts[f.key] and f.severity is not None]
    worst = max(
        (f.severity for f in failing if f.severity is not None), key=_SEVERITY_RANK.__getitem__, default=AssetCheckSeverity.WARN
    )
    return AssetCheckResult(
        asset_key=raw_asset_key(table),
        check_name="fields_served",
        passed=not failing,
        severity=worst,
        description="; ".join(
            f"{table}.{f.key} not served on {counts[f.key]} row(s): spoils {', '.join(f.marts)}"
            for f in failing
        )
        or None,
        metadata={"absent_rows": MetadataValue.json(counts)},
    )


def build_fields_served_check() -> AssetChecksDefinition:
    """One `fields_served` check per raw table with fields in SERVED_FIELDS (one step for all of them)."""
    tables = sorted({f.table for f in SERVED_FIELDS})

    @multi_asset_check(
        specs=[
            AssetCheckSpec(
                "fields_served",
                asset=raw_asset_key(table),
                description="The fields the marts need were served (not absent from the records).",
            )
            for table in tables
        ],
        can_subset=True,
        name="raw_fields_served",
    )
    def raw_fields_served(
        context: AssetCheckExecutionContext, warehouse: WarehouseResource
    ) -> Iterator[AssetCheckResult]:
        """Counts, per raw table, the rows whose `_absent_fields` names a field the marts need."""
        with warehouse.connect(read_only=True) as connection:
            for check_key in sorted(context.selected_asset_check_keys, key=str):
                yield _served_result(connection, check_key.asset_key.path[-1])

    return raw_fields_served


# ---------------------------------------------------------------- date-only values at a midnight

# staging model -> (raw table, column, JSON field) of its date-only values, and the marts reading them
DATE_ONLY_FIELDS: dict[str, tuple[tuple[tuple[str, str, str], ...], tuple[str, ...]]] = {
    "stg_invoicing__document_versions": (
        (("documents", "emit_date", "document.emitDate"), ("documents", "due_date", "document.dueDate")),
        RECEIVABLES,
    ),
    "stg_invoicing__transactions": ((("transactions", "date", "transaction.date"),), RECEIVABLES[1:2]),
    "stg_invoicing__transaction_usages": (
        (
            ("transaction_usages", "date", "transactionUsage.date"),
            ("transaction_usages", "transaction__date", "transactionUsage.transaction.date"),
        ),
        RECEIVABLES,
    ),
    "stg_invoicing__supplier_documents": (
        (
            ("supplier_documents", "issue_date", "supplierDocument.issueDate"),
            ("supplier_documents", "due_date", "supplierDocument.dueDate"),
            ("supplier_documents", "payment_date", "supplierDocument.paymentDate"),
        ),
        PAYABLES,
    ),
}


def off_midnight_fields(connection, columns: tuple[tuple[str, str, str], ...]) -> list[str]:
    """The JSON fields (with a count) holding a value that is midnight neither in UTC nor in the portal's zone:
    a time of day the product would read as a calendar date anyway."""
    found: list[str] = []
    if not relation_exists(connection, "staging.stg_invoicing__portal_time_zone"):
        return found
    for table, column, field in columns:
        if not relation_exists(connection, f"{RAW_DATASET}.{table}"):
            continue
        (count,) = connection.execute(
            f'select count(*) from {RAW_DATASET}."{table}" '
            "cross join staging.stg_invoicing__portal_time_zone as zone "
            f'where "{column}" is not null and _deleted_at is null '
            f"""and strftime("{column}" at time zone 'UTC', '%H:%M:%S') <> '00:00:00' """
            f"""and strftime("{column}" at time zone zone.time_zone, '%H:%M:%S') <> '00:00:00'"""
        ).fetchone()
        if count:
            found.append(f"{field} ({count})")
    return found


def build_dates_at_midnight_check() -> AssetChecksDefinition:
    """One WARN `dates_at_midnight` check per staging model holding date-only values."""

    @multi_asset_check(
        specs=[
            AssetCheckSpec(
                "dates_at_midnight",
                asset=AssetKey(["staging", model]),
                description="Date-only values are a midnight (UTC or Paris), so their calendar date is sure.",
            )
            for model in sorted(DATE_ONLY_FIELDS)
        ],
        can_subset=True,
        name="staging_dates_at_midnight",
    )
    def staging_dates_at_midnight(
        context: AssetCheckExecutionContext, warehouse: WarehouseResource
    ) -> Iterator[AssetCheckResult]:
        """Finds date-only values with a time of day, per staging model."""
        with warehouse.connect(read_only=True) as connection:
            for check_key in sorted(context.selected_asset_check_keys, key=str):
                columns, marts = DATE_ONLY_FIELDS[check_key.asset_key.path[-1]]
                found = off_midnight_fields(connection, columns)
                yield AssetCheckResult(
                    asset_key=check_key.asset_key,
                    check_name="dates_at_midnight",
                    passed=not found,
                    severity=AssetCheckSeverity.WARN,
                    description=f"{', '.join(found)} not at midnight: their date may be off by one in "
                    f"{', '.join(marts)}"
                    if found
                    else None,
                    metadata={"fields": MetadataValue.json(found)},
                )

    return staging_dates_at_midnight
