"""The SQL each page needs, on a connection whose `marts` schema holds the marts (the readers' copy, or the
marts built as of another date by dashboard.source). Amounts stay `Decimal` from DuckDB to the screen, so a
figure shown equals the mart to the cent. No layout here: the pages (invoicing_warehouse/dashboard/screens/) only
display these.

Every figure is a mart column: these queries select, filter and sort the marts' rows and compute nothing (no sum,
no date arithmetic; tests/invoicing_warehouse/dashboard/test_figures_are_mart_columns.py holds them to it). The
one count they run is a list's own length, for "the first 100 of 345" (`listing`).
"""

from __future__ import annotations

from dataclasses import dataclass
from datetime import date
from decimal import Decimal
from typing import Any

import duckdb
import pandas as pd

from invoicing_warehouse.dashboard.formatting import currency_label

WEEKS_AHEAD = 8
# what a page shows of a long list (at 1,000,000 documents an overdue list holds tens of thousands of rows);
# the CSV download holds every row, read only when asked (full_list)
TOP_OVERDUE = 20
DISPLAY_ROWS = 100
DRILL_DOWN_CUSTOMERS = 500

# the aged balance's amount columns, bucket by bucket then the total (marts.receivables_by_customer,
# marts.payables_by_supplier)
AGED_RECEIVABLES = ("open_current", "open_1_30", "open_31_60", "open_61_90", "open_90_plus", "total_open")
AGED_PAYABLES = ("due_current", "due_1_30", "due_31_60", "due_61_90", "due_90_plus", "total_due")

# every long list a page shows the head of: name -> (select, order by), filtered by portal
_LISTS = {
    "overdue_customers": (
        """select customer_name, customer_reference, overdue_amount, overdue_invoice_count, total_open,
                  oldest_overdue_reference, oldest_due_date, oldest_days_past_due, next_reminder_template,
                  last_payment_date, email, phone, customer_id
           from marts.overdue_customers where portal_id = ?""",
        "overdue_amount desc, customer_name, customer_id",
    ),
    "drill_down_customers": (
        """select customer_id, coalesce(customer_name, customer_id) as customer_name, total_open, overdue_amount
           from marts.receivables_by_customer where portal_id = ? and total_open > 0""",
        "overdue_amount desc, total_open desc, customer_name, customer_id",
    ),
    "payables_this_week": (
        """select supplier_name, reference, document_type, approval_state, issue_date, due_date, amount_due,
                  days_past_due, supplier_document_id, supplier_id
           from marts.supplier_payables where portal_id = ? and is_due_this_week""",
        "due_date, supplier_name, reference, supplier_document_id",
    ),
    "payables_past_due": (
        """select supplier_name, reference, document_type, approval_state, issue_date, due_date, amount_due,
                  days_past_due, supplier_document_id, supplier_id
           from marts.supplier_payables where portal_id = ? and is_overdue and approval_state <> 'disputed'""",
        "due_date, supplier_name, reference, supplier_document_id",
    ),
    "payables_by_supplier": (
        """select supplier_name, legal_identifier, total_due, approved_due, awaiting_approval_due, disputed_due,
                  overdue_amount, due_current, document_count, next_due_date, oldest_due_date, supplier_id
           from marts.payables_by_supplier where portal_id = ?""",
        "total_due desc, supplier_name, supplier_id",
    ),
    # every open invoice with the date it will likely be paid (marts.expected_payments), soonest first
    "expected_payments": (
        """select reference, customer_name, due_date, open_amount, expected_payment_date, basis,
                  customer_paid_count, expected_days_after_due, is_estimate_passed, invoice_id, customer_id
           from marts.expected_payments where portal_id = ?""",
        "expected_payment_date nulls last, reference, invoice_id",
    ),
    # the aged balances: one row a customer owing money, a supplier owed money
    "aged_receivables": (
        f"""select coalesce(customer_name, customer_id) as customer_name, customer_reference,
                   {', '.join(AGED_RECEIVABLES)}, customer_id
            from marts.receivables_by_customer where portal_id = ? and open_invoice_count > 0""",
        "total_open desc, customer_name, customer_id",
    ),
    "aged_payables": (
        f"""select coalesce(supplier_name, supplier_id) as supplier_name, legal_identifier,
                   {', '.join(AGED_PAYABLES)}, supplier_id
            from marts.payables_by_supplier where portal_id = ?""",
        "total_due desc, supplier_name, supplier_id",
    ),
}


@dataclass(frozen=True)
class Listing:
    """The head of a long list (`rows`, at most the limit asked) and how many rows the whole list has."""

    rows: pd.DataFrame
    total: int


def listing(
    connection: duckdb.DuckDBPyConnection, name: str, parameters: list[Any], limit: int | None
) -> Listing:
    """The list `name` of _LISTS in its order: its first `limit` rows (all when None) and its row count."""
    select, order = _LISTS[name]
    total = connection.execute(f"select count(*) from ({select})", parameters).fetchone()
    rows = frame(connection, f"{select} order by {order}" + ("" if limit is None else f" limit {int(limit)}"),
                 parameters)
    return Listing(rows, int(total[0]) if total else 0)


# the aged balance's totals over every row (not only those shown), as the summary marts carry them:
# name -> (mart, its row count, its sums of AGED_RECEIVABLES / AGED_PAYABLES, in that order)
_AGED_TOTALS = {
    "aged_receivables": ("receivables_summary", "aged_customer_count", [f"aged_{c}" for c in AGED_RECEIVABLES]),
    "aged_payables": ("payables_summary", "aged_supplier_count", [f"aged_{c}" for c in AGED_PAYABLES]),
}


def aged_totals(connection: duckdb.DuckDBPyConnection, name: str, portal_id: str) -> pd.DataFrame:
    """The one-row totals of the aged balance `name` over all its rows, with the row count (the summary mart's
    columns, named as the balance's own): what the page's tiles must equal. Zeros for a portal without a row."""
    mart, count, sums = _AGED_TOTALS[name]
    columns = AGED_RECEIVABLES if name == "aged_receivables" else AGED_PAYABLES
    rows = frame(connection, f"select {count} as row_count, "
                             + ", ".join(f"{total} as {column}" for total, column in zip(sums, columns, strict=True))
                             + f" from marts.{mart} where portal_id = ?", [portal_id])
    # a portal with no documents on that side has no summary row: it owes nothing
    return rows if len(rows) else pd.DataFrame([[0] + [Decimal(0)] * len(columns)], columns=list(rows.columns))


def frame(connection: duckdb.DuckDBPyConnection, sql: str, parameters: list[Any] | None = None) -> pd.DataFrame:
    """The rows of `sql` as a DataFrame, decimals kept as Decimal (DuckDB's `.df()` would make them floats)."""
    cursor = connection.execute(sql, parameters or [])
    names = [column[0] for column in cursor.description]
    return pd.DataFrame.from_records(cursor.fetchall(), columns=names)


def portals(connection: duckdb.DuckDBPyConnection) -> list[str]:
    """The portals with figures, sorted."""
    rows = connection.execute(
        "select portal_id from marts.dso union select portal_id from marts.cash_outlook order by 1"
    ).fetchall()
    return [row[0] for row in rows]


def marts_as_of(connection: duckdb.DuckDBPyConnection) -> date | None:
    """The report date the marts were built for (None when they hold no row at all)."""
    # every row of a build carries the one report date it was built for
    row = connection.execute(
        "select coalesce((select as_of_date from marts.cash_outlook limit 1), "
        "(select as_of_date from marts.dso limit 1))"
    ).fetchone()
    return row[0] if row else None


@dataclass(frozen=True)
class ReceivablesFigures:
    """What the Receivables page shows for one portal."""

    total_open: Decimal
    overdue: Decimal
    dso_days: Decimal | None
    invoiced_last_90_days: Decimal
    open_invoice_count: int
    aging: pd.DataFrame  # aging_bucket, open_amount, overdue (bool), invoice_count: the five buckets in order
    # (marts.receivables_aging)
    overdue_customers: Listing  # marts.overdue_customers, largest overdue amount first
    customers: Listing  # customer_id, customer_name, total_open, overdue_amount: the drill-down's choices
    # open invoices whose due date the server did not send (the legal default, emit date + 30 days, stands in):
    # how many, what they owe, and how much of the overdue figure rests on them (marts.receivables_summary)
    assumed_due_count: int = 0
    assumed_due_amount: Decimal = Decimal(0)
    assumed_overdue_amount: Decimal = Decimal(0)
    aged: Listing | None = None  # the aged balance by customer, largest total first
    aged_totals: pd.DataFrame | None = None  # its sums over every customer (aged_totals)
    # marts.dso's other methods beside the headline (None in a copy published before the mart carried them)
    net_dso_days: Decimal | None = None
    count_back_dso_days: Decimal | None = None
    credit_deducted: Decimal = Decimal(0)
    credit_balances_owed: Decimal = Decimal(0)
    overdue_customer_count: int = 0  # marts.receivables_summary: the rows of marts.overdue_customers


def receivables(connection: duckdb.DuckDBPyConnection, portal_id: str) -> ReceivablesFigures:
    """Totals and DSO (marts.dso), aging (marts.receivables_aging), the aged balance and the assumed due dates
    (marts.receivables_summary), overdue customers, customers owing money."""
    dso = connection.execute(
        "select open_receivables, overdue_receivables, dso_days, invoiced_last_90_days, open_invoice_count "
        "from marts.dso where portal_id = ?",
        [portal_id],
    ).fetchone()
    total_open, overdue, dso_days, invoiced, open_count = dso or (Decimal(0), Decimal(0), None, Decimal(0), 0)
    try:
        methods = connection.execute(
            "select net_dso_days, count_back_dso_days, credit_deducted, credit_balances_owed from marts.dso "
            "where portal_id = ?",
            [portal_id],
        ).fetchone()
    except duckdb.BinderException:  # a copy published before marts.dso carried the other methods
        methods = None
    net_dso, count_back_dso, credit_deducted, credit_owed = methods or (None, None, Decimal(0), Decimal(0))
    aging = frame(
        connection,
        """select aging_bucket, open_amount, is_overdue as overdue, invoice_count from marts.receivables_aging
           where portal_id = ? order by bucket_order""",
        [portal_id],
    )
    overdue_customers = listing(connection, "overdue_customers", [portal_id], TOP_OVERDUE)
    customers = listing(connection, "drill_down_customers", [portal_id], DRILL_DOWN_CUSTOMERS)
    summary = connection.execute(
        """select assumed_due_invoice_count, assumed_due_amount, assumed_overdue_amount, overdue_customer_count
           from marts.receivables_summary where portal_id = ?""",
        [portal_id],
    ).fetchone()
    # a portal without documents has no summary row: nothing assumed, nobody overdue
    assumed_count, assumed_amount, assumed_overdue, overdue_count = summary or (0, Decimal(0), Decimal(0), 0)
    return ReceivablesFigures(
        total_open,
        overdue,
        dso_days,
        invoiced,
        int(open_count),
        aging,
        overdue_customers,
        customers,
        int(assumed_count),
        assumed_amount,
        assumed_overdue,
        listing(connection, "aged_receivables", [portal_id], DISPLAY_ROWS),
        aged_totals(connection, "aged_receivables", portal_id),
        net_dso, count_back_dso, credit_deducted or Decimal(0), credit_owed or Decimal(0), int(overdue_count),
    )


def customer_invoices(connection: duckdb.DuckDBPyConnection, portal_id: str, customer_id: str) -> pd.DataFrame:
    """One customer's open invoices (marts.receivables), the most overdue first."""
    return frame(
        connection,
        """select reference, emit_date, due_date, is_due_date_assumed as due_date_assumed, total_incl_tax,
                  paid_by_payments, settled_by_credit_notes, open_amount, days_past_due, aging_bucket,
                  next_reminder_template, invoice_id
           from marts.receivables where portal_id = ? and customer_id = ?
           order by due_date nulls last, reference, invoice_id""",
        [portal_id, customer_id],
    )


@dataclass(frozen=True)
class PayablesFigures:
    """What the Payables page shows for one portal."""

    past_due: Decimal
    due_this_week: Decimal  # due from the report date to the sunday of its week
    due_next_weeks: Decimal  # due from the report date to the end of the WEEKS_AHEAD-th week
    undated: Decimal
    total: Decimal  # every owed bill: approved, awaiting approval, disputed (they add up to it)
    approved: Decimal
    awaiting_approval: Decimal
    disputed: Decimal
    weeks: pd.DataFrame  # the WEEKS_AHEAD weeks of marts.payables_weeks, empty weeks included
    this_week: Listing  # the documents due this week (marts.supplier_payables)
    past_due_documents: Listing
    by_supplier: Listing  # marts.payables_by_supplier, largest amount first
    aged: Listing | None = None  # the aged balance by supplier, largest total first
    aged_totals: pd.DataFrame | None = None  # its sums over every supplier (aged_totals)


def payables(connection: duckdb.DuckDBPyConnection, portal_id: str) -> PayablesFigures:
    """Supplier payables (every owed bill, split by approval state: marts.payables_summary) by week
    (marts.payables_weeks), this week's documents, past-due documents and suppliers."""
    totals = connection.execute(
        # a disputed bill is on hold: counted apart (the last figure), never past due (the mart's rule)
        """select past_due, due_this_week, due_next_weeks, undated, total_due, approved, awaiting_approval, disputed
           from marts.payables_summary where portal_id = ?""",
        [portal_id],
    ).fetchone()
    weeks = frame(
        connection,
        """select week_start, week_end, falling_due_amount, overdue_amount, undated_amount, total_amount,
                  awaiting_approval_amount, disputed_amount, document_count
           from marts.payables_weeks where portal_id = ? order by week_start""",
        [portal_id],
    )
    this_week = listing(connection, "payables_this_week", [portal_id], DISPLAY_ROWS)
    past_due_documents = listing(connection, "payables_past_due", [portal_id], DISPLAY_ROWS)
    by_supplier = listing(connection, "payables_by_supplier", [portal_id], DISPLAY_ROWS)
    # a portal without supplier documents has no summary row: it owes nothing
    past_due, this_week_total, next_weeks, undated, total, approved, awaiting_approval, disputed = (
        totals or (Decimal(0),) * 8)
    return PayablesFigures(
        past_due, this_week_total, next_weeks, undated, total, approved, awaiting_approval, disputed, weeks,
        this_week, past_due_documents, by_supplier,
        listing(connection, "aged_payables", [portal_id], DISPLAY_ROWS),
        aged_totals(connection, "aged_payables", portal_id),
    )


def cash_outlook(connection: duckdb.DuckDBPyConnection, portal_id: str) -> pd.DataFrame:
    """marts.cash_outlook of one portal: past due, the eight weeks, later; by due date, and the same net
    receivables by expected payment date (forecast_*); the customers' credit deducted, the credit balances owed
    to them and the disputed bills on hold (empty in a copy published before the mart carried them)."""
    columns = """period_label, week_start, week_end, expected_inflows, forecast_inflows, expected_outflows,
                  net_flow, cumulative_net, forecast_cumulative_net, receivable_count, forecast_receivable_count,
                  payable_count"""
    newer = "open_receivables, credit_deducted, credit_balances_owed, disputed_outflows,"
    try:
        return frame(connection, f"select {columns}, {newer} period_index from marts.cash_outlook "
                                 "where portal_id = ? order by period_index", [portal_id])
    except duckdb.BinderException:  # a copy published before the cash outlook netted the customers' credit
        return frame(connection, f"select {columns}, period_index from marts.cash_outlook "
                                 "where portal_id = ? order by period_index", [portal_id])


@dataclass(frozen=True)
class ExpectedPayments:
    """The Cash outlook page's expected payments: the head of the list, and how many invoices rest on each basis
    (customer, customer+portal, portal, due date)."""

    listing: Listing
    bases: dict[str, int]


def expected_payments(connection: duckdb.DuckDBPyConnection, portal_id: str) -> ExpectedPayments:
    """marts.expected_payments of one portal: the first DISPLAY_ROWS by expected date, and the count per basis
    (marts.expected_payment_bases)."""
    bases = dict(connection.execute(
        "select basis, invoice_count from marts.expected_payment_bases where portal_id = ?", [portal_id]
    ).fetchall())
    return ExpectedPayments(listing(connection, "expected_payments", [portal_id], DISPLAY_ROWS), bases)


def payment_behaviour(connection: duckdb.DuckDBPyConnection, portal_id: str) -> dict[str, Any] | None:
    """marts.payment_behaviour's row of one portal (None when the portal has none)."""
    rows = frame(connection, "select * from marts.payment_behaviour where portal_id = ?", [portal_id])
    return None if rows.empty else rows.iloc[0].to_dict()


def currency(connection: duckdb.DuckDBPyConnection, portal_id: str) -> str:
    """The currency of one portal's figures, as marts.cash_outlook carries it (receivables and payables
    together; `EUR/USD` when they mix, which the blocking check cash_outlook_single_currency stops before
    publication); the default (euros) when the marts name none."""
    try:
        names = [name for (name,) in connection.execute(
            "select distinct currency from marts.cash_outlook where portal_id = ? and currency is not null "
            "order by currency", [portal_id]).fetchall()]
    except duckdb.BinderException:  # a copy published before marts carried a currency: euros then, by rule
        names = []
    # a label, not a figure: the currencies the mart's rows name, joined
    return currency_label("/".join(names) or None)
