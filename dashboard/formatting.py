"""How figures look: amounts in the currency the marts carry (euros by default: French `1 234,56 €` or English
`€1,234.56`; `1 234,56 $US` / `$1,234.56` for dollars), tables as plain HTML (readable by people, screen readers
and the browser tests alike), and CSV downloads of the raw values."""

from __future__ import annotations

import html
from collections.abc import Iterable
from datetime import UTC, date, datetime
from decimal import ROUND_HALF_UP, Decimal
from typing import Any

import pandas as pd

# the CSV writer and its neutralisation live with the other file writers; named here too for the pages' tests
from warehouse_engine.table_files import neutralised, to_csv

__all__ = ["neutralised", "to_csv"]  # besides what is defined here

FRENCH = "fr"
ENGLISH = "en"
STYLES = {FRENCH: "1 234,56 €", ENGLISH: "€1,234.56"}
NO_BREAK_SPACE = "\u00a0"
CENT = Decimal("0.01")
# the marts' currency when none is served (docs/contract.md, `documents.currency`)
DEFAULT_CURRENCY = "EUR"
# currency code -> (English prefix, French suffix); any other code is written out in both styles
SYMBOLS = {"EUR": ("€", "€"), "USD": ("$", "$US"), "GBP": ("£", "£"), "CHF": ("CHF ", "CHF")}


def money(value: Any, style: str = FRENCH, currency: str = DEFAULT_CURRENCY) -> str:
    """`value` (Decimal, int, float or None) in `currency` to the cent; an empty string for None."""
    if value is None or (isinstance(value, float) and pd.isna(value)):
        return ""
    amount = Decimal(str(value)).quantize(CENT, ROUND_HALF_UP)
    sign = "-" if amount < 0 else ""
    english = f"{abs(amount):,.2f}"
    prefix, suffix = SYMBOLS.get(currency, (f"{currency} ", currency))
    if style == ENGLISH:
        return f"{sign}{prefix}{english}"
    french = english.replace(",", NO_BREAK_SPACE).replace(".", ",")
    return f"{sign}{french}{NO_BREAK_SPACE}{suffix}"


def eur(value: Any, style: str = FRENCH) -> str:
    """`value` as euros (money in EUR)."""
    return money(value, style, "EUR")


def currency_label(currency: str | None) -> str:
    """What a chart axis or a caption names: the code read from the marts, euros when none was read."""
    return currency or DEFAULT_CURRENCY


def days(value: Any, style: str = FRENCH) -> str:
    """A day count (DSO) with one decimal in the style's decimal mark; `n/a` when unknown."""
    if value is None:
        return "n/a"
    text = f"{Decimal(str(value)):.1f}"
    return text.replace(".", ",") if style == FRENCH else text


def cell_text(value: Any, is_money: bool, style: str, currency: str = DEFAULT_CURRENCY) -> str:
    """A cell as the tables show it (and as a search matches it): money in the style, dates ISO, yes/no."""
    if is_money:
        return money(value, style, currency)
    if value is None or (isinstance(value, float) and pd.isna(value)) or value is pd.NaT:
        return ""
    if isinstance(value, datetime):
        return value.astimezone(UTC).strftime("%Y-%m-%d %H:%M UTC")
    if isinstance(value, date):
        return value.isoformat()
    if isinstance(value, bool):
        return "yes" if value else "no"
    if isinstance(value, Decimal):  # a day count or a share (money is above): the style's decimal mark, as `days`
        text = format(value, "f")
        return text.replace(".", ",") if style == FRENCH else text
    return str(value)


def html_table(
    frame: pd.DataFrame,
    name: str,
    money: Iterable[str] = (),
    style: str = FRENCH,
    labels: dict[str, str] | None = None,
    currency: str = DEFAULT_CURRENCY,
) -> str:
    """`frame` as an HTML table `data-table=name`; columns in `money` formatted in `currency` and
    right-aligned. Each cell carries `data-column` so tests and scripts find a figure by its column name."""
    money = set(money)
    labels = {**LABELS, **(labels or {})}
    head = "".join(
        f'<th class="{"num" if column in money else ""}">{html.escape(labels.get(column, column))}</th>'
        for column in frame.columns
    )
    body = []
    for row in frame.itertuples(index=False):
        cells = "".join(
            f'<td data-column="{html.escape(column)}" class="{"num" if column in money else ""}">'
            f"{html.escape(cell_text(value, column in money, style, currency))}</td>"
            for column, value in zip(frame.columns, row)
        )
        body.append(f"<tr>{cells}</tr>")
    empty = "" if body else f'<tr><td colspan="{len(frame.columns)}">nothing</td></tr>'
    return (
        f'<table class="iw-table" data-table="{html.escape(name)}"><thead><tr>{head}</tr></thead>'
        f"<tbody>{''.join(body)}{empty}</tbody></table>"
    )


# what people read above a column (the CSV keeps the marts' own column names)
LABELS = {
    "customer_name": "Customer", "customer_reference": "Ref.", "overdue_amount": "Overdue",
    "overdue_invoice_count": "Overdue invoices", "total_open": "Total open",
    "oldest_overdue_reference": "Oldest overdue", "oldest_due_date": "Due", "oldest_days_past_due": "Days late",
    "next_reminder_template": "Next reminder", "aging_bucket": "Days past due", "open_amount": "Open",
    "overdue": "Overdue?", "invoice_count": "Invoices", "reference": "Reference", "emit_date": "Emitted",
    "due_date": "Due", "total_incl_tax": "Total incl. tax", "paid_by_payments": "Paid",
    "settled_by_credit_notes": "Credit notes", "days_past_due": "Days late", "supplier_name": "Supplier",
    "document_type": "Type", "issue_date": "Issued", "amount_due": "Amount due", "week_start": "Week from",
    "week_end": "to", "falling_due_amount": "Falling due", "undated_amount": "No due date",
    "total_amount": "Total", "document_count": "Documents", "legal_identifier": "SIRET", "total_due": "Total due",
    "due_current": "Not yet due", "next_due_date": "Next due", "period_label": "Period",
    "expected_inflows": "Inflows (net of customers' credit)", "expected_outflows": "Outflows (payables)",
    "net_flow": "Net", "credit_deducted": "Customers' credit deducted",
    "credit_balances_owed": "Credit owed to customers (in outflows)", "disputed_outflows": "Disputed bills (on hold)",
    "cumulative_net": "Cumulative net", "receivable_count": "Receivables", "payable_count": "Payables",
    "raw_table": "Raw table", "rows": "Rows", "last_loaded_at": "Last loaded", "load_id": "dlt load",
    "open_current": "Current", "open_1_30": "1-30", "open_31_60": "31-60", "open_61_90": "61-90",
    "open_90_plus": "90+", "due_1_30": "1-30", "due_31_60": "31-60", "due_61_90": "61-90", "due_90_plus": "90+",
    "row_count": "Rows", "month_end": "Month end", "overdue_share": "Overdue share (%)",
    "check": "Check", "asset": "Asset", "passed": "Passed", "severity": "Severity", "detail": "Detail",
    "portal": "Portal", "open_receivables": "Open receivables", "overdue_receivables": "Overdue",
    "dso_days": "DSO (days)", "last_sync": "Last sync (UTC)", "failing_checks": "Failing checks",
    # late-payment claims and the payment-terms table (the French legal terms beside the English ones)
    "late_invoice_count": "Late invoices", "amount_late": "Amount late", "flat_indemnity_eur": "Indemnity (40 €)",
    "interest_eur": "Interest (€)", "claim_eur": "Claim (€)", "interest_unknown_count": "Interest unknown",
    "paid_date": "Paid", "days_late": "Days late", "interest_amount": "Interest",
    "claim_excluded_reason": "Not claimed", "period_start": "From", "period_end": "To",
    "days_late_in_period": "Days", "ecb_rate_percent": "ECB rate (%)", "interest_rate_percent": "Rate applied (%)",
    "delay_bucket": "Days late (tranche de retard)", "amount_incl_tax": "Amount incl. tax (TTC)",
    "share_of_year_percent": "Share of the year (%)", "year_total_incl_tax": "Year's purchases / sales (TTC)",
    "side": "Side", "counterparty_name": "Customer / supplier", "term_days": "Term (days)",
    "cap_date": "Legal cap", "days_beyond_cap": "Days beyond cap",
    "forecast_inflows": "Expected inflows (payment history)", "forecast_cumulative_net": "Cumulative net (expected)",
    "forecast_receivable_count": "Receivables (expected)", "expected_payment_date": "Expected payment",
    "basis": "Basis", "customer_paid_count": "Customer's paid invoices",
    "expected_days_after_due": "Days after due (expected)", "is_estimate_passed": "Estimate passed",
    "measure": "Measure", "portal_days": "This portal (days)", "benchmark_days": "Observatory (days)",
    "benchmark_size": "Observatory size", "figure_year": "Figure year", "report": "Report", "source": "Source", "note": "Note",
}

TABLE_CSS = """<style>
table.iw-table { border-collapse: collapse; width: 100%; font-size: 0.9rem; }
table.iw-table th, table.iw-table td { padding: 0.25rem 0.5rem; border-bottom: 1px solid #e6e6e6; text-align: left; }
table.iw-table th { background: #f5f6f8; font-weight: 600; }
table.iw-table .num { text-align: right; white-space: nowrap; font-variant-numeric: tabular-nums; }
</style>"""
