"""Payment terms (D441-6): the table of the management report in the legal model's own layout and French labels
(marts.payment_terms_table: rows A, B, C; columns "0 jour (indicatif)" to "Total (1 jour et plus)"), the figures
by band behind it (marts.payment_terms_report), and the invoices and bills whose terms exceed the legal caps of
L441-10 I (marts.payment_terms_over_cap). The alternative table of D441-6 II has its own page
(screens/payment_terms_paid_late.py)."""

from __future__ import annotations

import pandas as pd
import streamlit as st

from invoicing_warehouse.dashboard import cache
from invoicing_warehouse.dashboard.formatting import day
from invoicing_warehouse.dashboard.payment_law_queries import MODEL_COLUMNS
from invoicing_warehouse.dashboard.widgets import PageContext, heading, shown_of, table

SIDES = {"received": "Invoices received (suppliers), unpaid and past due",
         "issued": "Invoices issued (customers), unpaid and past due"}
# the legal model's own French labels (rows, columns, titles) stay as they are in both languages: legal terms


def model_tables(rows: pd.DataFrame, name: str, context: PageContext) -> None:
    """Each side of a D441-6 table as the legal model lays it out, under its French title (`Tableau`), with the
    downloads (CSV, CSV for French Excel, xlsx) a company pastes into its management report."""
    for side in ("received", "issued"):
        part = rows[rows["side"] == side]
        if part.empty:
            continue
        st.markdown(f"**{part['Tableau'].iloc[0]}**")
        table(part[list(MODEL_COLUMNS)], f"{name}_{side}", context, searchable=False)


def render(context: PageContext) -> None:
    """Lays out the Payment terms page."""
    tr = context.tr
    heading(tr("Payment terms (D441-6)"), context)
    figures = cache.payment_terms(context.view)
    rows = figures.table
    if rows.empty:
        st.info(tr("No invoice nor bill on this date."))
        return
    start, end = rows["fiscal_year_start"].iloc[0], rows["as_of_date"].iloc[0]
    st.caption(tr("Date de clôture {end}; exercice du {start} au {end} (the setting INVOICING_FISCAL_YEAR_START "
                  "gives the first day of the fiscal year; unset, the twelve months ending on the report date: "
                  "choose the closing date as the report date). Montants TTC (amounts incl. tax, what is still "
                  "unpaid); shares of the year's purchases or turnover incl. tax, net of credit notes, as the API "
                  "holds them (purchases the supplier module does not hold are not counted). The model of the "
                  "arrêté of 20 March 2017 (annexe 4-1): (A) the invoices by days late, \"0 jour (indicatif)\" those "
                  "not yet due; (B) disputed bills, excluded from (A); (C) the reference terms.",
                  start=day(start, context.language), end=day(end, context.language)))
    if figures.model_table is not None:
        model_tables(figures.model_table, "d441_6", context)
    st.subheader(tr("Detail by band"))
    for side, title in SIDES.items():
        part = rows[rows["side"] == side]
        st.markdown(f"**{tr(title)}**")
        table(part.drop(columns=["side", "fiscal_year_start", "as_of_date"]), f"payment_terms_{side}", context,
              money=["amount_incl_tax", "year_total_incl_tax"], download=part, searchable=False)

    over_cap = figures.over_cap
    st.subheader(tr("Terms beyond the legal caps") + shown_of(over_cap, context.language))
    st.caption(tr("Invoices and bills of the fiscal year due later than 60 days after their date and later than 45 "
                  "days end of month, in either reading (code de commerce L441-10 I); business customers only. "
                  "Periodic invoices are capped at 45 days after their date, but the API does not mark them: only "
                  "those INVOICING_PERIODIC_INVOICES names are (column cap_rule). Sector caps are not applied."))
    view = context.view
    table(over_cap.rows.drop(columns=["document_id"]), "payment_terms_over_cap", context,
          money=["amount_incl_tax"], download=lambda: cache.payment_law_list(view, "over_cap"), total=over_cap.total)
