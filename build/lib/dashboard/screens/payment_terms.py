"""Payment terms (D441-6): the table of the management report, invoices received and issued unpaid and past due
on the closing date (the report date) by days late, with their share of the fiscal year's purchases and sales;
and the invoices and bills whose terms exceed the legal caps of L441-10 I (marts.payment_terms_report,
marts.payment_terms_over_cap)."""

from __future__ import annotations

import streamlit as st

from dashboard import cache
from dashboard.widgets import PageContext, heading, shown_of, table

SIDES = {"received": "Invoices received (suppliers), unpaid and past due",
         "issued": "Invoices issued (customers), unpaid and past due"}


def render(context: PageContext) -> None:
    """Lays out the Payment terms page."""
    heading("Payment terms (D441-6)", context)
    figures = cache.payment_terms(context.view)
    rows = figures.table
    if rows.empty:
        st.info("No invoice nor bill on this date.")
        return
    start, end = rows["fiscal_year_start"].iloc[0], rows["as_of_date"].iloc[0]
    st.caption(f"Closing date {end.isoformat()}; fiscal year {start.isoformat()} to {end.isoformat()} (the twelve "
               "months ending on the report date: choose the closing date as the report date). Amounts incl. tax, "
               "what is still unpaid; share of the year's purchases or sales incl. tax, net of credit notes. "
               "Disputed bills are left out of the day columns (section (B) of the legal model).")
    for side, title in SIDES.items():
        part = rows[rows["side"] == side]
        st.subheader(title)
        table(part.drop(columns=["side", "fiscal_year_start", "as_of_date"]), f"payment_terms_{side}", context,
              money=["amount_incl_tax", "year_total_incl_tax"], download=part, searchable=False)

    over_cap = figures.over_cap
    st.subheader(f"Terms beyond the legal caps{shown_of(over_cap)}")
    st.caption("Invoices and bills of the fiscal year due later than 60 days after their date and later than 45 days "
               "end of month, in either reading (code de commerce L441-10 I). Sector caps are not applied.")
    view = context.view
    table(over_cap.rows.drop(columns=["document_id"]), "payment_terms_over_cap", context,
          money=["amount_incl_tax"], download=lambda: cache.payment_law_list(view, "over_cap"), total=over_cap.total)
