"""The SQL each page needs, on a connection whose `marts` schema holds the marts (the readers' copy, or the
marts built as of another date by dashboard.source). Amounts stay `Decimal` from DuckDB to the screen, so a
figure shown equals the mart to the cent. No layout here: the pages (invoicing_warehouse/dashboard/screens/) only
display these.
"""

from __future__ import annotations

from dataclasses import dataclass
from datetime import date, timedelta
from decimal import Decimal
from typing import Any

import duckdb
import pandas as pd

from invoicing_warehouse.dashboard.formatting import currency_label

WEEKS_AHEAD = 8
BUCKETS = ("current", "1-30", "31-60", "61-90", "90+")
# what a page shows of a long list (at 1,000,000 documents an overdue list holds tens of thousands of rows);
# the CSV download holds every row, read only when asked (full_list)
TOP_OVERDUE = 20
DISPLAY_ROWS = 100
DRILL_DOWN_CUSTOMERS = 500

# the aged balance's amount columns, bucket by bucket then the total (marts.receivables_by_customer,
# marts.payables_by_supplier)
AGED_RECEIVABLES = ("open_current", "open_1_30", "open_31_60", "open_61_90", "open_90_plus", "total_open")
AGED_PAYABLES = ("due_current", "due_1_30", "due_31_60", "due_61_90", "due_90_plus", "total_due")

# every long list a page shows the head of: name -> (select, order by), filtered by portal (and report date
# bounds for this week's payables: `? and ?`)
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
           from marts.supplier_payables where portal_id = ? and due_date between ? and ?""",
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


def aged_totals(connection: duckdb.DuckDBPyConnection, name: str, portal_id: str) -> pd.DataFrame:
    """The one-row sum of every amount column of the aged balance `name` over all its rows (not only those
    shown), with the row count: what the page's tiles must equal."""
    select, _ = _LISTS[name]
    columns = AGED_RECEIVABLES if name == "aged_receivables" else AGED_PAYABLES
    sums = ", ".join(f"coalesce(sum({column}), 0) as {column}" for column in columns)
    return frame(connection, f"select count(*) as row_count, {sums} from ({select})", [portal_id])


def week_bounds(as_of: date) -> tuple[date, date, date]:
    """(monday of `as_of`'s week, its sunday, the sunday WEEKS_AHEAD - 1 weeks later)."""
    monday = as_of.toordinal() - as_of.weekday()
    return date.fromordinal(monday), date.fromordinal(monday + 6), date.fromordinal(monday + 7 * WEEKS_AHEAD - 1)


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
    row = connection.execute(
        "select coalesce((select max(as_of_date) from marts.cash_outlook), (select max(as_of_date) from marts.dso))"
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
    overdue_customers: Listing  # marts.overdue_customers, largest overdue amount first
    customers: Listing  # customer_id, customer_name, total_open, overdue_amount: the drill-down's choices
    # open invoices whose due date the server did not send (the legal default, emit date + 30 days, stands in):
    # how many, what they owe, and how much of the overdue figure rests on them
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


def receivables(connection: duckdb.DuckDBPyConnection, portal_id: str) -> ReceivablesFigures:
    """Totals and DSO (marts.dso), aging (marts.receivables), overdue customers, customers owing money."""
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
        """select buckets.aging_bucket, coalesce(sum(receivables.open_amount), 0) as open_amount,
                  buckets.aging_bucket <> 'current' as overdue, count(receivables.invoice_id) as invoice_count
           from (select unnest(?) as aging_bucket, generate_subscripts(?, 1) as position) as buckets
           left join marts.receivables
               on receivables.aging_bucket = buckets.aging_bucket and receivables.portal_id = ?
           group by buckets.aging_bucket, buckets.position order by buckets.position""",
        [list(BUCKETS), list(BUCKETS), portal_id],
    )
    overdue_customers = listing(connection, "overdue_customers", [portal_id], TOP_OVERDUE)
    customers = listing(connection, "drill_down_customers", [portal_id], DRILL_DOWN_CUSTOMERS)
    assumed = connection.execute(
        """select count(*), coalesce(sum(open_amount), 0), coalesce(sum(open_amount) filter (where is_overdue), 0)
           from marts.receivables where portal_id = ? and is_due_date_assumed""",
        [portal_id],
    ).fetchone()
    assumed_count, assumed_amount, assumed_overdue = assumed or (0, Decimal(0), Decimal(0))
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
        net_dso, count_back_dso, credit_deducted or Decimal(0), credit_owed or Decimal(0),
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
    weeks: pd.DataFrame  # the WEEKS_AHEAD weeks of marts.payables_schedule, empty weeks included
    this_week: Listing  # the documents due this week (marts.supplier_payables)
    past_due_documents: Listing
    by_supplier: Listing  # marts.payables_by_supplier, largest amount first
    aged: Listing | None = None  # the aged balance by supplier, largest total first
    aged_totals: pd.DataFrame | None = None  # its sums over every supplier (aged_totals)


def payables(connection: duckdb.DuckDBPyConnection, portal_id: str, as_of: date) -> PayablesFigures:
    """Supplier payables (every owed bill, split by approval state) by week, this week's documents, past-due
    documents and suppliers."""
    monday, sunday, last_day = week_bounds(as_of)
    totals = connection.execute(
        # a disputed bill is on hold: counted apart (the last figure), never past due
        """select coalesce(sum(amount_due) filter (where is_overdue and approval_state <> 'disputed'), 0),
                  coalesce(sum(amount_due) filter (where due_date between ? and ?), 0),
                  coalesce(sum(amount_due) filter (where due_date between ? and ?), 0),
                  coalesce(sum(amount_due) filter (where due_date is null), 0),
                  coalesce(sum(amount_due), 0),
                  coalesce(sum(amount_due) filter (where approval_state = 'approved'), 0),
                  coalesce(sum(amount_due) filter (where approval_state = 'awaiting_approval'), 0),
                  coalesce(sum(amount_due) filter (where approval_state = 'disputed'), 0)
           from marts.supplier_payables where portal_id = ?""",
        [as_of, sunday, as_of, last_day, portal_id],
    ).fetchone()
    assert totals is not None  # an aggregate without group by always yields one row
    weeks = frame(
        connection,
        """select weeks.week_start, cast(weeks.week_start + interval 6 day as date) as week_end,
                  coalesce(schedule.falling_due_amount, 0) as falling_due_amount,
                  coalesce(schedule.overdue_amount, 0) as overdue_amount,
                  coalesce(schedule.undated_amount, 0) as undated_amount,
                  coalesce(schedule.total_amount, 0) as total_amount,
                  coalesce(schedule.awaiting_approval_amount, 0) as awaiting_approval_amount,
                  coalesce(schedule.disputed_amount, 0) as disputed_amount,
                  coalesce(schedule.document_count, 0) as document_count
           from (select cast(unnest(generate_series(?::date, ?::date, interval 7 day)) as date) as week_start)
               as weeks
           left join marts.payables_schedule as schedule
               on schedule.week_start = weeks.week_start and schedule.portal_id = ?
           order by weeks.week_start""",
        [monday, last_day - timedelta(days=6), portal_id],
    )
    this_week = listing(connection, "payables_this_week", [portal_id, as_of, sunday], DISPLAY_ROWS)
    past_due_documents = listing(connection, "payables_past_due", [portal_id], DISPLAY_ROWS)
    by_supplier = listing(connection, "payables_by_supplier", [portal_id], DISPLAY_ROWS)
    past_due, this_week_total, next_weeks, undated, total, approved, awaiting_approval, disputed = totals
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
    """marts.expected_payments of one portal: the first DISPLAY_ROWS by expected date, and the count per basis."""
    bases = dict(connection.execute(
        "select basis, count(*) from marts.expected_payments where portal_id = ? group by basis", [portal_id]
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
        row = connection.execute(
            "select string_agg(distinct currency, '/' order by currency) from marts.cash_outlook where portal_id = ?",
            [portal_id],
        ).fetchone()
    except duckdb.BinderException:  # a copy published before marts carried a currency: euros then, by rule
        row = None
    return currency_label(row[0] if row else None)
