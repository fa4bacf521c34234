"""Payables: what falls due this week and in the next eight, what is already past due, by supplier. Every bill
received is owed, approved or not: the split by approval state is shown beside the totals."""

from __future__ import annotations

import streamlit as st

from invoicing_warehouse.dashboard import cache
from invoicing_warehouse.dashboard.formatting import money
from invoicing_warehouse.dashboard.queries import AGED_PAYABLES, WEEKS_AHEAD
from invoicing_warehouse.dashboard.widgets import PageContext, heading, shown_of, table

DOCUMENT_MONEY = ["amount_due"]
IDS = ["supplier_document_id", "supplier_id"]  # in the CSV, not on screen


def render(context: PageContext) -> None:
    """Lays out the Payables page."""
    heading(context.tr("Payables"), context)
    tr = context.tr
    figures = cache.payables(context.view, context.as_of)
    currency = cache.currency(context.view)
    this_week, next_weeks, past_due, total = st.columns(4)
    this_week.metric(tr("Due this week"), money(figures.due_this_week, context.style, currency),
                     help=tr("due from the report date to sunday (credit notes negative)"))
    next_weeks.metric(tr("Due in the next {weeks} weeks", weeks=WEEKS_AHEAD),
                      money(figures.due_next_weeks, context.style, currency),
                      help=tr("due from the report date to the end of week {weeks}", weeks=WEEKS_AHEAD))
    past_due.metric(tr("Past due"), money(figures.past_due, context.style, currency),
                    help=tr("approved or awaiting approval, due before the report date; disputed bills are on hold "
                            "and counted apart (Disputed). A bill without a due date is due 30 days after its issue "
                            "date (L441-10 I, assumed)"))
    total.metric(tr("Total to pay"), money(figures.total, context.style, currency),
                 help=tr("every bill received and not paid, approved or not; includes {undated} without a due date",
                         undated=money(figures.undated, context.style, currency)))
    approved, awaiting, disputed, _ = st.columns(4)
    approved.metric(tr("Approved"), money(figures.approved, context.style, currency),
                    help=tr("of the total to pay"))
    awaiting.metric(tr("Awaiting approval"), money(figures.awaiting_approval, context.style, currency),
                    help=tr("received, not yet approved: owed all the same (of the total to pay)"))
    disputed.metric(tr("Disputed"), money(figures.disputed, context.style, currency),
                    help=tr("owed until settled by a credit note or a refusal (of the total to pay)"))

    view = context.view
    st.subheader(tr("Due this week") + shown_of(figures.this_week, context.language))
    table(figures.this_week.rows.drop(columns=IDS), "payables_this_week", context, money=DOCUMENT_MONEY,
          download=lambda: cache.full_list(view, "payables_this_week", (view.portal,)),
          total=figures.this_week.total, currency=currency)

    st.subheader(tr("Week by week ({weeks} weeks, marts.payables_weeks)", weeks=WEEKS_AHEAD))
    st.caption(tr("The first week also holds what is past due and what has no due date, as the mart counts them."))
    table(
        figures.weeks,
        "payables_weeks",
        context,
        money=["falling_due_amount", "overdue_amount", "undated_amount", "total_amount", "awaiting_approval_amount",
               "disputed_amount"],
        currency=currency,
    )

    st.subheader(tr("By supplier") + shown_of(figures.by_supplier, context.language))
    table(figures.by_supplier.rows.drop(columns=["supplier_id"]), "payables_by_supplier", context,
          money=["total_due", "approved_due", "awaiting_approval_due", "disputed_due", "overdue_amount",
                 "due_current"],
          download=lambda: cache.full_list(view, "payables_by_supplier", (view.portal,)),
          total=figures.by_supplier.total, currency=currency)

    aged = figures.aged
    assert aged is not None and figures.aged_totals is not None  # always read by queries.payables
    st.subheader(tr("Aged balance by supplier") + shown_of(aged, context.language))
    st.caption(tr("What is owed to each supplier by days past due (marts.payables_by_supplier). Not yet due also "
                  "holds the bills without a due date ({undated}). The totals below are over every supplier and "
                  "equal Total to pay (all columns) and, 1-30 to 90+, Past due plus the disputed bills past due (on "
                  "hold: counted in Disputed, not in Past due).", undated=money(figures.undated, context.style,
                                                                                currency)))
    table(figures.aged_totals, "aged_payables_totals", context, money=list(AGED_PAYABLES), currency=currency,
          searchable=False)
    table(aged.rows.drop(columns=["supplier_id"]), "aged_payables", context, money=list(AGED_PAYABLES),
          download=lambda: cache.full_list(view, "aged_payables", (view.portal,)), total=aged.total,
          currency=currency)

    st.subheader(tr("Past due") + shown_of(figures.past_due_documents, context.language))
    table(figures.past_due_documents.rows.drop(columns=IDS), "payables_past_due", context, money=DOCUMENT_MONEY,
          download=lambda: cache.full_list(view, "payables_past_due", (view.portal,)),
          total=figures.past_due_documents.total, currency=currency)
