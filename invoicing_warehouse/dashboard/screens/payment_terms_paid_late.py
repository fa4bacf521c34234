"""Paid late (D441-6 II): the alternative table of the management report, invoices received and issued paid late
during the fiscal year, in the legal model's layout and French labels (marts.payment_terms_paid_late_table)."""

from __future__ import annotations

import streamlit as st

from invoicing_warehouse.dashboard import cache
from invoicing_warehouse.dashboard.formatting import day
from invoicing_warehouse.dashboard.screens.payment_terms import model_tables
from invoicing_warehouse.dashboard.widgets import PageContext, heading


def render(context: PageContext) -> None:
    """Lays out the Paid late (D441-6 II) page."""
    tr = context.tr
    heading(tr("Paid late during the year (D441-6 II)"), context)
    rows = cache.paid_late_table(context.view)
    if rows.empty:
        st.info(tr("No invoice nor bill on this date."))
        return
    start, end = rows["fiscal_year_start"].iloc[0], rows["as_of_date"].iloc[0]
    st.caption(tr("Exercice du {start} au {end} (INVOICING_FISCAL_YEAR_START). A company may "
               "present this table instead of the one of D441-6 I: the invoices paid during the year, by days paid "
               "after their due date (\"0 jour (indicatif)\": paid on time), in number and amount TTC, as shares of "
               "the number and amount of the invoices received or issued in the year (model of the arrêté of 20 "
               "March 2017, second table). (B): bills of the year disputed on the closing date; (C): the "
               "reference terms.", start=day(start, context.language), end=day(end, context.language)))
    model_tables(rows, "d441_6_paid_late", context)
