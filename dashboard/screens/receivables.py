"""Receivables: total open, overdue and DSO; aging by bucket; overdue customers with their next reminder
template; one customer's open invoices."""

from __future__ import annotations

import altair as alt
import pandas as pd
import streamlit as st

from dashboard import cache
from dashboard.formatting import days, money
from dashboard.queries import AGED_RECEIVABLES, TOP_OVERDUE
from dashboard.widgets import PageContext, heading, shown_of, table

BUCKET_COLOURS = ["#4c9a5f", "#e9c46a", "#f4a261", "#e76f51", "#b5303a"]


def _aging_chart(aging: pd.DataFrame, currency: str) -> alt.Chart:
    data = aging.assign(open_amount=aging["open_amount"].astype(float), receivables="open receivables")
    return (
        alt.Chart(data)
        .mark_bar()
        .encode(
            x=alt.X("sum(open_amount):Q", title=currency, stack="zero"),
            y=alt.Y("receivables:N", title=None),
            color=alt.Color(
                "aging_bucket:N",
                title="days past due",
                sort=list(aging["aging_bucket"]),
                scale=alt.Scale(domain=list(aging["aging_bucket"]), range=BUCKET_COLOURS),
            ),
            order=alt.Order("position:Q"),
            tooltip=["aging_bucket", alt.Tooltip("open_amount:Q", format=",.2f"), "invoice_count"],
        )
        .transform_calculate(position=f"indexof({list(aging['aging_bucket'])}, datum.aging_bucket)")
        .properties(height=110)
    )


def render(context: PageContext) -> None:
    """Lays out the Receivables page."""
    heading("Receivables", context)
    figures = cache.receivables(context.view)
    currency = cache.currency(context.view)
    total, overdue, dso, customers = st.columns(4)
    total.metric("Total open", money(figures.total_open, context.style, currency), help="marts.dso.open_receivables")
    overdue.metric("Overdue", money(figures.overdue, context.style, currency), help="open amount at least one day past due")
    dso.metric(
        "DSO (days)",
        days(figures.dso_days, context.style),
        help="sales method, gross: open receivables incl. tax / invoices incl. tax emitted in the 90 days ending "
             "on the report date x 90 (marts.dso.dso_days)",
    )
    customers.metric("Overdue customers", f"{figures.overdue_customers.total}")
    st.caption(
        f"DSO, other methods: net {days(figures.net_dso_days, context.style)} days (open receivables less each "
        f"customer's unapplied credit notes and payments up to what that customer owes, "
        f"{money(figures.credit_deducted, context.style, currency)} deducted / invoices less credit notes of the "
        f"90 days x 90); count-back {days(figures.count_back_dso_days, context.style)} days (open receivables "
        "exhausted against each month's sales going back from the report date). Credit balances owed to "
        f"customers, not deducted from what others owe: {money(figures.credit_balances_owed, context.style, currency)}."
    )
    if figures.assumed_due_count:
        # the server sent no dueDate for these: the figures above and below rest on the legal default
        st.warning(
            f"Assumed due dates: {figures.assumed_due_count} open invoice(s), "
            f"{money(figures.assumed_due_amount, context.style, currency)} open, of which "
            f"{money(figures.assumed_overdue_amount, context.style, currency)} overdue, have no due date from the API; "
            "their due date is assumed to be the emit date + 30 days (French commercial code L441-10). "
            "Aging, Overdue, overdue customers and the cash outlook rest on it.",
            icon=":material/warning:",
        )

    st.subheader("Aging")
    st.altair_chart(_aging_chart(figures.aging, currency), width="stretch")
    table(figures.aging, "aging", context, money=["open_amount"], currency=currency)

    view = context.view
    aged = figures.aged
    assert aged is not None and figures.aged_totals is not None  # always read by queries.receivables
    st.subheader(f"Aged balance by customer{shown_of(aged)}")
    st.caption("What each customer owes by days past due (marts.receivables_by_customer); the totals below "
               "are over every customer and equal Total open (all columns) and Overdue (1-30 to 90+).")
    table(figures.aged_totals, "aged_receivables_totals", context, money=list(AGED_RECEIVABLES), currency=currency,
          searchable=False)
    table(aged.rows.drop(columns=["customer_id"]), "aged_receivables", context, money=list(AGED_RECEIVABLES),
          download=lambda: cache.full_list(view, "aged_receivables", (view.portal,)), total=aged.total,
          currency=currency)

    st.subheader(f"Overdue customers (top {TOP_OVERDUE} by overdue amount)")
    table(
        figures.overdue_customers.rows.drop(columns=["email", "phone", "customer_id", "last_payment_date"]),
        "overdue_customers",
        context,
        money=["overdue_amount", "total_open"],
        currency=currency,
        download=lambda: cache.full_list(view, "overdue_customers", (view.portal,)),
        total=figures.overdue_customers.total,
    )

    st.subheader("Customer drill-down")
    choices = figures.customers
    if choices.rows.empty:
        st.info("No customer owes money on this date.")
        return
    names = dict(zip(choices.rows["customer_id"], choices.rows["customer_name"]))
    amounts = dict(zip(choices.rows["customer_id"], choices.rows["total_open"]))
    customer_id = st.selectbox(
        f"Customer (those owing money, most overdue first{shown_of(choices)}; type to search)",
        list(names),
        format_func=lambda cid: f"{names[cid]} · {money(amounts[cid], context.style, currency)}",
        key="drill_down_customer",
    )
    invoices = cache.customer_invoices(context.view, customer_id)
    table(
        invoices.drop(columns=["invoice_id"]),
        "customer_invoices",
        context,
        money=["total_incl_tax", "paid_by_payments", "settled_by_credit_notes", "open_amount"],
        download=invoices,
        currency=currency,
    )
