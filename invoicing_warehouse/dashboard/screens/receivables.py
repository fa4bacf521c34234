"""Receivables: total open, overdue and DSO; aging by bucket; overdue customers with their next reminder
template; one customer's open invoices."""

from __future__ import annotations

import altair as alt
import pandas as pd
import streamlit as st

from invoicing_warehouse.dashboard import cache
from invoicing_warehouse.dashboard.formatting import days, money
from invoicing_warehouse.dashboard.page_texts import tr
from invoicing_warehouse.dashboard.queries import AGED_RECEIVABLES, TOP_OVERDUE
from invoicing_warehouse.dashboard.widgets import PageContext, heading, shown_of, table

BUCKET_COLOURS = ["#4c9a5f", "#e9c46a", "#f4a261", "#e76f51", "#b5303a"]


def _aging_chart(aging: pd.DataFrame, currency: str, language: str) -> alt.Chart:
    data = aging.assign(open_amount=aging["open_amount"].astype(float),
                        receivables=tr(language, "open receivables"))
    return (
        alt.Chart(data)
        .mark_bar()
        .encode(
            # one row per bucket (marts.receivables_aging): the bars stack the mart's amounts, summing nothing
            x=alt.X("open_amount:Q", title=currency, stack="zero"),
            y=alt.Y("receivables:N", title=None),
            color=alt.Color(
                "aging_bucket:N",
                title=tr(language, "days past due"),
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
    heading(context.tr("Receivables"), context)
    tr = context.tr
    figures = cache.receivables(context.view)
    currency = cache.currency(context.view)
    total, overdue, dso, customers = st.columns(4)
    total.metric(tr("Total open"), money(figures.total_open, context.style, currency),
                 help="marts.dso.open_receivables")
    overdue.metric(tr("Overdue"), money(figures.overdue, context.style, currency),
                   help=tr("open amount at least one day past due"))
    dso.metric(
        tr("DSO (days)"),
        days(figures.dso_days, context.style),
        help=tr("sales method, gross: open receivables incl. tax / invoices incl. tax emitted in the 90 days ending "
                "on the report date x 90 (marts.dso.dso_days)"),
    )
    customers.metric(tr("Overdue customers"), f"{figures.overdue_customer_count}",
                     help="marts.receivables_summary.overdue_customer_count")
    st.caption(tr(
        "DSO, other methods: net {net} days (open receivables less each customer's unapplied credit notes and "
        "payments up to what that customer owes, {deducted} deducted / invoices less credit notes of the 90 days "
        "x 90); count-back {count_back} days (open receivables exhausted against each month's sales going back "
        "from the report date). Credit balances owed to customers, not deducted from what others owe: {owed}.",
        net=days(figures.net_dso_days, context.style), deducted=money(figures.credit_deducted, context.style, currency),
        count_back=days(figures.count_back_dso_days, context.style),
        owed=money(figures.credit_balances_owed, context.style, currency)))
    if figures.assumed_due_count:
        # the server sent no dueDate for these: the figures above and below rest on the legal default
        st.warning(tr(
            "Assumed due dates: {count} open invoice(s), {open} open, of which {overdue} overdue, have no due date "
            "from the API; their due date is assumed to be the emit date + 30 days (French commercial code L441-10). "
            "Aging, Overdue, overdue customers and the cash outlook rest on it.",
            count=figures.assumed_due_count, open=money(figures.assumed_due_amount, context.style, currency),
            overdue=money(figures.assumed_overdue_amount, context.style, currency)), icon=":material/warning:")

    st.subheader(tr("Aging"))
    st.altair_chart(_aging_chart(figures.aging, currency, context.language), width="stretch")
    table(figures.aging, "aging", context, money=["open_amount"], currency=currency)

    view = context.view
    aged = figures.aged
    assert aged is not None and figures.aged_totals is not None  # always read by queries.receivables
    st.subheader(tr("Aged balance by customer") + shown_of(aged, context.language))
    st.caption(tr("What each customer owes by days past due (marts.receivables_by_customer); the totals below "
                  "are over every customer and equal Total open (all columns) and Overdue (1-30 to 90+)."))
    table(figures.aged_totals, "aged_receivables_totals", context, money=list(AGED_RECEIVABLES), currency=currency,
          searchable=False)
    table(aged.rows.drop(columns=["customer_id"]), "aged_receivables", context, money=list(AGED_RECEIVABLES),
          download=lambda: cache.full_list(view, "aged_receivables", (view.portal,)), total=aged.total,
          currency=currency)

    st.subheader(tr("Overdue customers (top {top} by overdue amount)", top=TOP_OVERDUE))
    table(
        figures.overdue_customers.rows.drop(columns=["email", "phone", "customer_id", "last_payment_date"]),
        "overdue_customers",
        context,
        money=["overdue_amount", "total_open"],
        currency=currency,
        download=lambda: cache.full_list(view, "overdue_customers", (view.portal,)),
        total=figures.overdue_customers.total,
    )

    st.subheader(tr("Customer drill-down"))
    choices = figures.customers
    if choices.rows.empty:
        st.info(tr("No customer owes money on this date."))
        return
    names = dict(zip(choices.rows["customer_id"], choices.rows["customer_name"], strict=True))
    amounts = dict(zip(choices.rows["customer_id"], choices.rows["total_open"], strict=True))
    customer_id = st.selectbox(
        tr("Customer (those owing money, most overdue first{shown}; type to search)",
           shown=shown_of(choices, context.language)),
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
