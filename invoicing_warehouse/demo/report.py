"""The short report of the marts printed by the demo: aging of receivables, the customers most
overdue, and what the company must pay its suppliers this week."""

from __future__ import annotations

from decimal import Decimal

import duckdb

from invoicing_warehouse.engine.sql_runner import one_row

AGING_BUCKETS = (
    ("current (not yet due)", "open_current"),
    ("1-30 days late", "open_1_30"),
    ("31-60 days late", "open_31_60"),
    ("61-90 days late", "open_61_90"),
    ("over 90 days late", "open_90_plus"),
)


def _money(value) -> str:
    return f"{Decimal(value or 0):>14,.2f} EUR"


def aging_section(connection: duckdb.DuckDBPyConnection) -> list[str]:
    """Open receivables per aging bucket, from marts.receivables_by_customer."""
    columns = ", ".join(f"coalesce(sum({column}), 0)" for _, column in AGING_BUCKETS)
    row = one_row(
        connection,
        f"select any_value(as_of_date), {columns}, coalesce(sum(total_open), 0), "
        "coalesce(sum(open_invoice_count), 0), count(*) filter (where total_open > 0) "
        "from marts.receivables_by_customer",
    )
    as_of, amounts, total, invoices, customers = row[0], row[1:6], row[6], row[7], row[8]
    lines = [f"Receivables aging{f' on {as_of}' if as_of else ''} (marts.receivables_by_customer)"]
    lines += [f"  {label:<24}{_money(amount)}" for (label, _), amount in zip(AGING_BUCKETS, amounts, strict=True)]
    lines.append(f"  {'total open':<24}{_money(total)}   {invoices} invoices, {customers} customers")
    return lines


def overdue_section(connection: duckdb.DuckDBPyConnection, top: int) -> list[str]:
    """The `top` customers with the most money overdue, from marts.overdue_customers."""
    rows = connection.execute(
        "select customer_name, overdue_amount, overdue_invoice_count, oldest_days_past_due, "
        "next_reminder_template from marts.overdue_customers "
        "order by overdue_amount desc, customer_id limit ?",
        [top],
    ).fetchall()
    count = one_row(connection, "select count(*) from marts.overdue_customers")[0]
    lines = [f"Top {min(top, count)} of {count} overdue customers (marts.overdue_customers)"]
    for name, amount, invoices, days, template in rows:
        lines.append(
            f"  {str(name or '?')[:30]:<31}{_money(amount)}  {invoices:>3} late, oldest {days:>4} days, "
            f"next reminder {template}"
        )
    if not rows:
        lines.append("  none")
    return lines


def payables_section(connection: duckdb.DuckDBPyConnection) -> list[str]:
    """Supplier documents to pay this week (overdue ones included), from marts.payables_schedule: every owed
    bill, with what still awaits approval or is disputed shown apart."""
    row = connection.execute(
        "select week_start, week_end, overdue_amount, falling_due_amount, undated_amount, total_amount, "
        "document_count, awaiting_approval_amount, disputed_amount from marts.payables_schedule "
        "where week_start = cast(date_trunc('week', as_of_date) as date)"
    ).fetchone()
    if row is None:
        return ["Payables due this week (marts.payables_schedule)", "  nothing to pay"]
    week_start, week_end, overdue, falling_due, undated, total, documents, awaiting, disputed = row
    return [
        f"Payables due this week, {week_start} to {week_end} (marts.payables_schedule)",
        f"  {'already overdue':<24}{_money(overdue)}",
        f"  {'falling due this week':<24}{_money(falling_due)}",
        f"  {'without a due date':<24}{_money(undated)}",
        f"  {'total to pay':<24}{_money(total)}   {documents} supplier documents",
        f"  {'  of which to approve':<24}{_money(awaiting)}",
        f"  {'  of which disputed':<24}{_money(disputed)}",
    ]


def render_report(connection: duckdb.DuckDBPyConnection, top: int = 5) -> str:
    """The whole report as text."""
    sections = [aging_section(connection), overdue_section(connection, top), payables_section(connection)]
    return "\n\n".join("\n".join(section) for section in sections)
